"""Command line: parse arguments, call one function per command, render. Nothing else lives here."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from warp_fix.cli_parser import build_parser, parse_arguments

if TYPE_CHECKING:
    from rich.console import Console

    from warp_fix.probe import SampleStarted

EXIT_OK = 0
EXIT_FAILED = 1  # regression, invalid comparison, command failing at baseline
EXIT_USAGE = 2  # bad input: usage, missing files, not a git repo...
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input from the user: one line, exit 2."""


def _command(args: argparse.Namespace) -> list[str]:
    command = list(args.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("no command given: put it after --, e.g. warp-fix measure -- python -m app")
    return command


def write_json(destination: str, data: object) -> None:
    """`--json FILE`, or `--json -` for standard output (the human view then goes to standard error)."""
    text = json.dumps(data, indent=1, default=str) + "\n"
    if destination == "-":
        sys.stdout.write(text)
    else:
        Path(destination).write_text(text)


def _progress(console: Console):
    from rich.markup import escape

    return lambda text: console.print(f"[dim]{escape(text)}[/]", highlight=False)


def _sample_lines(console: Console):
    """Each sample measure starts, as a dim line."""
    from rich.markup import escape

    def show(event: SampleStarted) -> None:
        console.print(f"[dim]{escape(event.line())}[/]", highlight=False)

    return show


def _sample_bar(console: Console, samples: int):
    """A rich progress bar over the cold+warm samples, advanced by the SampleStarted events of measure."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("measuring"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True)
    task = bar.add_task("samples", total=samples)

    def advance(event: SampleStarted) -> None:
        bar.update(task, completed=event.index - 1)

    return bar, advance


def _apply_bar(console: Console):
    """A rich progress bar under apply's lines: the fixes tried of those planned, the probe runs taken out of the
    per-arm budget, and the time spent."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from warp_fix.apply.steps import ApplyStep

    bar = Progress(TextColumn("applying"), BarColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                   console=console, transient=True)
    task = bar.add_task("baseline", total=None)

    def step(event: ApplyStep) -> None:
        bar.update(task, description=event.position(), completed=event.fixes_done,
                   total=event.fixes_planned or None)

    return bar, step


def cmd_measure(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.probe import measure
    from warp_fix.render.terminal import print_report

    bar, advance = _sample_bar(console, args.samples)
    with bar:
        report = measure(
            _command(args),
            Path(args.cwd),
            samples=args.samples,
            timeout=args.timeout,
            label=args.label,
            progress=advance,
            kernel_timing=args.kernel_time,
        )
    print_report(report, console)
    if args.json == "-":
        write_json("-", report.to_json())
    elif args.json:
        report.save(args.json)
        console.print(f"report: {args.json} ({Path(args.json).stat().st_size / 1024:,.0f} KiB)", markup=False)
    if args.html:
        from warp_fix.render.html import render_report_html

        Path(args.html).write_text(render_report_html(report))
    return EXIT_OK if report.summary is not None else EXIT_FAILED


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from dataclasses import asdict

    from warp_fix.compare import compare
    from warp_fix.render.terminal import print_comparison
    from warp_fix.report import load_report

    result = compare(load_report(args.before), load_report(args.after), set(args.allow_option or ()))
    if args.json:
        write_json(args.json, asdict(result))
    print_comparison(result, console)
    return result.exit_code


def cmd_plan(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.plan import make_plan
    from warp_fix.render.plan_view import plan_markdown, print_plan
    from warp_fix.report import load_report

    if args.from_report:
        report = load_report(args.from_report)
    else:
        from warp_fix.probe import measure

        report = measure(
            _command(args),
            Path(args.cwd),
            samples=args.samples,
            timeout=args.timeout,
            progress=_sample_lines(console),
        )
    root = Path(args.root or report.cwd)
    if not root.is_dir():
        raise UsageError(f"the repository to scan does not exist: {root} (pass --root)")
    from warp_fix.config import ConfigError

    try:
        plan = make_plan(report, root)
    except ConfigError as exc:  # [tool.warp-fix] protected joins the plan's scope: a broken table is bad input
        raise UsageError(str(exc)) from None
    print_plan(plan, console)
    if args.json:
        write_json(args.json, plan.to_json())
    if args.markdown:
        Path(args.markdown).write_text(plan_markdown(plan))
    if args.html:
        from warp_fix.render.html import render_report_html

        Path(args.html).write_text(render_report_html(report, plan))
    return EXIT_OK


def cmd_apply(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.apply import ApplyError, build_request, run_apply
    from warp_fix.apply.git import GitError
    from warp_fix.apply.view import print_ledger

    command = list(args.command or [])
    try:
        request = build_request(
            command=command[1:] if command[:1] == ["--"] else command,
            cwd=args.cwd, branch=args.branch, test=args.test, samples=args.samples, allow=args.allow,
            only=args.only, timeout=args.timeout, dry_run=args.dry_run,
            allow_nondeterministic_output=args.allow_nondeterministic_output,
            output_tolerance=args.output_tolerance, seconds_per_fix=args.time_per_fix,
        )
        said: list[str] = []  # what progress showed, so that the summary does not repeat its warnings
        show = _progress(console)
        bar, step = _apply_bar(console)
        with bar:
            result = run_apply(request, progress=lambda text: (said.append(text), show(text)), steps=step)
    except (ApplyError, GitError) as exc:
        raise UsageError(str(exc)) from None
    print_ledger(result.ledger, console, result.ledger_files, shown=said)
    if args.json and result.ledger is not None:
        write_json(args.json, result.ledger.to_json())
    return result.exit_code


def cmd_log(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.apply import ApplyError, branch_log
    from warp_fix.apply.view import print_log

    try:
        log = branch_log(Path(args.cwd), args.branch, args.base)
    except ApplyError as exc:
        raise UsageError(str(exc)) from None
    if args.html:
        from warp_fix.render.html import render_log_html

        Path(args.html).write_text(render_log_html(log))
    if args.json:
        write_json(args.json, log.to_json())
    if args.json != "-":
        print_log(log, console)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from rich.markup import escape

    from warp_fix.demo import DemoError, run_demo

    try:
        result = run_demo(
            Path(args.keep) if args.keep else None,
            _steps_to_stderr if args.json == "-" else main,
            heading=lambda text: console.rule(escape(text)),
            say=lambda text: console.print(text, markup=False, highlight=False),
        )
    except DemoError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        write_json(args.json, result.to_json())
    return result.exit_code


def _steps_to_stderr(argv: list[str]) -> int:
    """A demo step under `demo --json -`: its screen goes to standard error, which leaves the JSON alone."""
    from contextlib import redirect_stdout

    with redirect_stdout(sys.stderr):
        return main(argv)


def cmd_skill(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.agent_skill import SkillError, install_skill, skill_text

    if args.install is None:
        text = skill_text()
        _text_out(args).write(text)
        data = {"skill": text}
    else:
        try:
            path, what = install_skill(Path(args.install), force=args.force)
        except SkillError as exc:
            raise UsageError(str(exc)) from None
        console.print(f"{what}: {path}", markup=False, highlight=False)
        data = {"path": str(path), "result": what}
    if args.json:
        write_json(args.json, data)
    return EXIT_OK


def _text_out(args: argparse.Namespace):
    """Where a command's text goes: standard output, or standard error when `--json -` takes standard output."""
    return sys.stderr if args.json == "-" else sys.stdout


def cmd_check(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.check import check_reports, project_defaults, result_lines
    from warp_fix.config import ConfigError
    from warp_fix.probe import measure
    from warp_fix.report import load_report

    try:
        defaults = project_defaults(Path(args.cwd))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    command = _command_or_configured(args, defaults.command)
    if args.no_compile:
        return _check_nothing_compiles(command, Path(args.cwd), args.timeout or defaults.timeout, console)
    if args.baseline is None:
        raise UsageError("check needs --baseline FILE (structure against a committed report) or --no-compile")
    if not args.update and not Path(args.baseline).is_file():
        raise UsageError(
            f"baseline {args.baseline} does not exist: create it with "
            f"`warp-fix check --baseline {args.baseline} --update -- COMMAND...` and commit it"
        )
    baseline = None if args.update else load_report(args.baseline)
    current = measure(
        command, Path(args.cwd), samples=args.samples, timeout=args.timeout or defaults.timeout,
        progress=_sample_lines(console),
    )
    if baseline is None:
        current.save(args.baseline)
        console.print(f"warp-fix check: baseline written to {args.baseline}", markup=False, highlight=False)
        return EXIT_OK
    result = check_reports(baseline, current, timing=args.timing)
    if args.json:
        write_json(args.json, result.to_json())
    for line in result_lines(result, args.baseline):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return result.exit_code


def _check_nothing_compiles(command: list[str], cwd: Path, timeout: float | None, console: Console) -> int:
    """`check --no-compile`: `bake verify` on the cache the run really uses, against what restore left there."""
    from warp_fix.bake import BakeError
    from warp_fix.bake.verify import verify
    from warp_fix.bake.view import verify_lines

    try:
        result = verify(command, cwd, timeout, None, None)
    except BakeError as exc:
        raise UsageError(str(exc)) from None
    for line in verify_lines(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return result.exit_code


def _command_or_configured(args: argparse.Namespace, configured: tuple[str, ...] | None) -> list[str]:
    """The command after --, else `[tool.warp-fix] command`, else a usage error."""
    given = [word for word in args.command or [] if word != "--"]
    if not given and configured:
        return list(configured)
    if not given:
        raise UsageError("no command given: put it after --, or set command in [tool.warp-fix] of pyproject.toml")
    return _command(args)


def run_bake(args: argparse.Namespace) -> int:
    """Bake actions print plain lines, without rich: `bake restore` runs in CI right before the app starts,
    and its own start-up is part of what a restored cold start costs. `--json -` puts the JSON alone on
    standard output and the lines on standard error."""
    try:
        lines, code, data = BAKE_ACTIONS[args.bake_action](args)
        if args.json:
            _write_bake_json(args.json, data)
    except Exception as exc:
        if not _bad_input(exc):
            raise
        print(f"warp-fix: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("warp-fix: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    starts = args.bake_action == "run"
    if lines:
        print("\n".join(lines), file=sys.stderr if starts or args.json == "-" else sys.stdout)
    return _start_restored(args) if starts else code


def _start_restored(args: argparse.Namespace) -> int:
    """Outside run_bake's error handling: the command's own errors and exit code are its own."""
    import os

    from warp_fix.bake.start import start

    if args.cache:
        os.environ["WARP_CACHE_PATH"] = os.path.abspath(args.cache)  # where the restore put the entries
    return start(args.command)


def _write_bake_json(destination: str, data: object) -> None:
    try:
        write_json(destination, data)
    except OSError as exc:
        raise UsageError(f"cannot write --json {destination}: {exc.strerror or exc}") from None


def _bad_input(exc: Exception) -> bool:
    """One line and exit 2 (a traceback otherwise); the probe is imported only when it can be the source."""
    from warp_fix.bake.errors import BakeError

    if isinstance(exc, (BakeError, UsageError)):
        return True
    from warp_fix.probe import ProbeError
    from warp_fix.report import ReportError

    return isinstance(exc, (ProbeError, ReportError))


def _bake_command(args: argparse.Namespace) -> list[str]:
    from warp_fix.check import project_defaults
    from warp_fix.config import ConfigError

    try:
        return _command_or_configured(args, project_defaults(Path(args.cwd)).command)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _archs(args: argparse.Namespace) -> list[int]:
    return sorted({arch for group in args.arch or () for arch in group})


BakeOutput = tuple[list[str], int, dict[str, object]]  # the lines, the exit code, the --json object


def bake_create(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake import bake
    from warp_fix.bake.view import bake_lines

    command = _bake_command(args)
    result = bake(
        command, Path(args.cwd), args.out, _archs(args), args.timeout, _path(args.sign), _path(args.previous)
    )
    return bake_lines(result), EXIT_OK, result.to_json()


def bake_key(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake import key_of_report, key_of_run
    from warp_fix.report import load_report

    if args.from_report:
        if args.arch:
            raise UsageError("--arch needs a bake run: a report holds no ahead-of-time binaries (drop --from-report)")
        try:
            report = load_report(args.from_report)
        except UnicodeDecodeError as exc:  # bytes that are not text fail before the report's own checks
            raise UsageError(f"cannot read report {args.from_report}: not a JSON text ({exc.reason})") from None
        key = key_of_report(report)
    else:
        key = key_of_run(_bake_command(args), Path(args.cwd), args.timeout, _archs(args))
    return [key], EXIT_OK, {"key": key}


def bake_restore(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake.restore import restore
    from warp_fix.bake.view import restore_lines

    result = restore(
        Path(args.archive), _path(args.cache), args.merge, args.python, args.expect_key, args.recheck_environment,
        args.max_bytes, _path(args.require_signature), args.partial,
    )
    return restore_lines(result), EXIT_OK, result.to_json()


def bake_run(args: argparse.Namespace) -> BakeOutput:
    """The restore; the command starts once its lines are printed (run_bake), if it can start at all."""
    from warp_fix.bake.start import startable

    if args.json == "-":
        raise UsageError("bake run: standard output is the command's own: write --json to a file")
    startable(args.command)
    return bake_restore(args)


def bake_verify(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake.manifest_files import load_manifest
    from warp_fix.bake.verify import verify
    from warp_fix.bake.view import verify_lines

    manifest = load_manifest(_path(args.manifest), _path(args.archive))
    result = verify(_bake_command(args), Path(args.cwd), args.timeout, _path(args.cache), manifest)
    return verify_lines(result), result.exit_code, result.to_json()


def bake_push(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake import push

    where, manifest = push(Path(args.archive), args.url)
    line = f"pushed {args.archive} to {where} (key {manifest.key})"
    return [line], EXIT_OK, {"archive": args.archive, "url": where, "key": manifest.key}


def bake_pull(args: argparse.Namespace) -> BakeOutput:
    from warp_fix.bake import pull

    path, manifest = pull(args.url, args.out)
    line = f"pulled {args.url} to {path} (key {manifest.key}; every checksum verified)"
    return [line], EXIT_OK, {"archive": str(path), "url": args.url, "key": manifest.key}


BAKE_ACTIONS = {
    "create": bake_create,
    "key": bake_key,
    "restore": bake_restore,
    "run": bake_run,
    "verify": bake_verify,
    "push": bake_push,
    "pull": bake_pull,
}


def cmd_completion(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.cli_reference import completion_script

    script = completion_script(build_parser(), args.shell)
    _text_out(args).write(script)
    if args.json:
        write_json(args.json, {"shell": args.shell, "script": script})
    return EXIT_OK


PLAIN_COMMANDS = {"bake": run_bake}  # no rich console: plain lines
COMMANDS = {
    "measure": cmd_measure,
    "compare": cmd_compare,
    "apply": cmd_apply,
    "log": cmd_log,
    "plan": cmd_plan,
    "demo": cmd_demo,
    "check": cmd_check,
    "completion": cmd_completion,
    "skill": cmd_skill,
}


def _can_create_in(folder: Path) -> bool:
    """Tried, not asked: os.access says yes to root even on a read-only file system."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    destination = getattr(args, "json", None)
    if destination and destination != "-":
        # said before a run of minutes, not after it
        folder = Path(destination).resolve().parent
        problem = "does not exist" if not folder.is_dir() else "" if _can_create_in(folder) else "is not writable"
        if problem:
            print(f"warp-fix: error: cannot write --json {destination}: its directory {problem}", file=sys.stderr)
            return EXIT_USAGE
    if args.name in PLAIN_COMMANDS:
        return PLAIN_COMMANDS[args.name](args)
    from rich.console import Console

    from warp_fix.probe import BaselineFailed, ProbeError
    from warp_fix.report import ReportError

    # Tables need room: a pipe or CI log gets 140 columns instead of rich's default 80.
    errors = Console(stderr=True, soft_wrap=True)  # one-line errors stay one line
    if getattr(args, "json", None) == "-":  # standard output carries the JSON alone
        console = Console(stderr=True)
    else:
        console = Console(stderr=False) if sys.stdout.isatty() else Console(width=140)
    if getattr(args, "samples", 1) is not None and getattr(args, "samples", 1) < 1:
        errors.print("warp-fix: error: --samples must be at least 1", markup=False)
        return EXIT_USAGE
    try:
        return COMMANDS[args.name](args, console)
    except BaselineFailed as exc:
        return _baseline_failed(exc, errors)
    except (ProbeError, ReportError, UsageError) as exc:
        errors.print(f"warp-fix: error: {exc}", markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        from warp_fix.apply.errors import ApplyInterrupted
        from warp_fix.apply.view import interrupted_lines

        lines = interrupted_lines(exc.ledger, exc.ledger_files) if isinstance(exc, ApplyInterrupted) else []
        errors.print("\n".join(["warp-fix: interrupted", *lines]), markup=False, highlight=False)
        return EXIT_INTERRUPTED


def _baseline_failed(exc, errors: Console) -> int:
    """A command that never started is bad input (exit 2); one that ran and failed is a "no" (exit 1).

    Either way the error line is printed once: the output tail above it stops short of the line the
    error message already quotes.
    """
    from warp_fix.apply.errors import BaselineTestsFailed
    from warp_fix.cannot_start import cannot_start

    reason = cannot_start(exc.exit_code, exc.stderr_tail)
    if reason is not None:
        if isinstance(exc, BaselineTestsFailed):
            what, advice = f"the test command `{exc.command}`", ": install what it runs, or pass another --test"
        else:
            what, advice = "the command", ""
        errors.print(f"warp-fix: error: {what} cannot start ({reason}){advice}", markup=False, highlight=False)
        return EXIT_USAGE
    tail = exc.stderr_tail.rstrip()[-2000:].splitlines()
    if tail and tail[-1].strip() and tail[-1].strip() in str(exc):
        tail = tail[:-1]
    if tail:
        errors.print("\n".join(tail), markup=False, highlight=False)
    errors.print(f"warp-fix: error: {exc}", markup=False, highlight=False)
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
