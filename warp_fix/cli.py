"""Command line: parse arguments, call one function per command, render. Nothing else lives here."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from warp_fix import __version__

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


def _progress(console: Console):
    return lambda text: console.print(f"[dim]{text}[/]", highlight=False)


def _sample_bar(console: Console, samples: int):
    """A rich progress bar over the cold+warm samples (measure reports "sample i/n" as it starts each)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("measuring"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True)
    task = bar.add_task("samples", total=samples)

    def advance(text: str) -> None:
        done = int(text.split()[-1].split("/")[0]) - 1 if text.startswith("sample ") else 0
        bar.update(task, completed=done)

    return bar, advance


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
    if args.json:
        report.save(args.json)
    if args.html:
        from warp_fix.render.html import render_report_html

        Path(args.html).write_text(render_report_html(report))
    print_report(report, console)
    return EXIT_OK if report.summary is not None else EXIT_FAILED


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from dataclasses import asdict

    from warp_fix.compare import compare
    from warp_fix.render.terminal import print_comparison
    from warp_fix.report import load_report

    result = compare(load_report(args.before), load_report(args.after), set(args.allow_option or ()))
    if args.json:
        Path(args.json).write_text(json.dumps(asdict(result), indent=1, default=str) + "\n")
    print_comparison(result, console)
    return result.exit_code


def cmd_plan(args: argparse.Namespace, console: Console) -> int:
    import dataclasses

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
            progress=_progress(console),
        )
    root = Path(args.root or report.cwd)
    if not root.is_dir():
        raise UsageError(f"the repository to scan does not exist: {root} (pass --root)")
    plan = make_plan(report, root)
    print_plan(plan, console)
    if args.json:
        Path(args.json).write_text(json.dumps(dataclasses.asdict(plan), indent=1, default=str) + "\n")
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
            output_tolerance=args.output_tolerance,
        )
        result = run_apply(request, progress=_progress(console))
    except (ApplyError, GitError) as exc:
        raise UsageError(str(exc)) from None
    print_ledger(result.ledger, console, result.ledger_files)
    if args.json and result.ledger is not None:
        Path(args.json).write_text(json.dumps(result.ledger.to_json(), indent=1, default=str) + "\n")
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
        console.print_json(json.dumps(log.to_json()))
    else:
        print_log(log, console)
    return EXIT_OK


def add_apply_commands(sub) -> None:
    apply = sub.add_parser("apply", help="fix the source on a new git branch, one measured commit per fix")
    apply.add_argument("--branch", help="the new branch for the commits (must not exist)")
    apply.add_argument("--test", help='the project\'s test command, run through the shell, e.g. "pytest -q"')
    apply.add_argument("--samples", type=int, default=None, help="most interleaved samples per arm (default 3)")
    apply.add_argument("--allow", nargs="+", metavar="SLUG", help="consent-class mechanisms to apply")
    apply.add_argument("--only", nargs="+", metavar="FIX", help="only these fix ids (F1) or mechanism slugs")
    apply.add_argument("--dry-run", action="store_true", help="probe and plan; print what would be done")
    apply.add_argument("--json", help="also write the ledger (JSON) here")
    apply.add_argument("--allow-nondeterministic-output", action="store_true",
                       help="accept a program whose output varies between runs (output is then not compared)")
    apply.add_argument("--output-tolerance", type=float, metavar="REL",
                       help="printed numbers may differ by this relative amount (replaces the learned tolerances)")
    apply.add_argument("--cwd", default=".", help="directory to run the command in")
    apply.add_argument("--timeout", type=float, default=None, help="seconds allowed per run")
    apply.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND... (default: [tool.warp-fix] command)")
    apply.set_defaults(run=cmd_apply)

    log = sub.add_parser("log", help="review a branch made by apply, with measured deltas")
    log.add_argument("branch", nargs="?", help="the branch (default: the current one)")
    log.add_argument("--base", help="where the branch started (default: recorded by apply)")
    log.add_argument("--json", action="store_true", help="print JSON")
    log.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page here")
    log.add_argument("--cwd", default=".", help="a directory inside the repository")
    log.set_defaults(run=cmd_log)


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.demo import DemoError, run_demo

    try:
        return run_demo(Path(args.dir) if args.dir else None, main, lambda text: console.rule(text))
    except DemoError as exc:
        raise UsageError(str(exc)) from None


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
    if not args.update and not Path(args.baseline).is_file():
        raise UsageError(
            f"baseline {args.baseline} does not exist: create it with "
            f"`warp-fix check --baseline {args.baseline} --update -- COMMAND...` and commit it"
        )
    baseline = None if args.update else load_report(args.baseline)
    current = measure(
        command, Path(args.cwd), samples=args.samples, timeout=args.timeout or defaults.timeout,
        progress=_progress(console),
    )
    if baseline is None:
        current.save(args.baseline)
        console.print(f"warp-fix check: baseline written to {args.baseline}", markup=False, highlight=False)
        return EXIT_OK
    result = check_reports(baseline, current, timing=args.timing)
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n")
    for line in result_lines(result, args.baseline):
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


def cmd_completion(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.cli_reference import completion_script

    sys.stdout.write(completion_script(build_parser(), args.shell))
    return EXIT_OK


def add_check_commands(sub) -> None:
    check = sub.add_parser("check", help="CI guard: fail when cold-start work grew against a committed baseline")
    check.add_argument("--baseline", required=True, metavar="FILE", help="the committed baseline report")
    check.add_argument("--timing", action="store_true", help="also fail when cold module work grew beyond noise")
    check.add_argument("--update", action="store_true", help="measure and rewrite the baseline (exit 0)")
    check.add_argument("--samples", type=int, default=1, help="cold+warm pairs (structure is deterministic)")
    check.add_argument("--json", metavar="FILE", help="write the check result here")
    check.add_argument("--cwd", default=".", help="directory to run the command in")
    check.add_argument("--timeout", type=float, default=None, help="seconds allowed per run")
    check.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND... (default: [tool.warp-fix] command)")
    check.set_defaults(run=cmd_check)

    completion = sub.add_parser("completion", help="print a shell completion script generated from this parser")
    completion.add_argument("shell", choices=("bash", "zsh"), help="e.g. source <(warp-fix completion bash)")
    completion.set_defaults(run=cmd_completion)


def _add_measure_options(parser: argparse.ArgumentParser, samples: int) -> None:
    parser.add_argument("--samples", type=int, default=samples, help="cold+warm pairs to run")
    parser.add_argument("--cwd", default=".", help="directory to run the command in")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per run")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="warp-fix", description="Make Warp applications start fast.")
    parser.add_argument("--version", action="version", version=f"warp-fix {__version__}")
    sub = parser.add_subparsers(dest="name", required=True, metavar="COMMAND")

    measure = sub.add_parser("measure", help="what Warp built, and why")
    measure.add_argument("--json", help="write the report here")
    measure.add_argument("--html", metavar="FILE", help="write a self-contained HTML page here")
    measure.add_argument("--label", help="a name for this measurement")
    measure.add_argument(
        "--kernel-time",
        action="store_true",
        help="also record each module's steady-state kernel time (adds work to every launch)",
    )
    _add_measure_options(measure, samples=3)
    measure.set_defaults(run=cmd_measure)

    compare = sub.add_parser("compare", help="did a change help, same workload?")
    compare.add_argument("before", help="the baseline report (from measure --json)")
    compare.add_argument("after", help="the report of the changed code")
    compare.add_argument("--json", help="write the comparison here")
    compare.add_argument("--allow-option", action="append", help="an option allowed to change (repeatable)")
    compare.set_defaults(run=cmd_compare)
    add_apply_commands(sub)

    plan = sub.add_parser("plan", help="findings for every mechanism, and the fixes it would make")
    plan.add_argument("--json", help="write the plan (with findings) here")
    plan.add_argument("--markdown", help="write a pull-request description here")
    plan.add_argument("--html", metavar="FILE", help="write a self-contained HTML page here")
    plan.add_argument("--from-report", help="plan from a saved report instead of measuring")
    plan.add_argument("--root", help="repository to scan (default: the measured directory)")
    _add_measure_options(plan, samples=1)
    plan.set_defaults(run=cmd_plan)

    demo = sub.add_parser("demo", help="the whole loop on a bundled example app, in a temporary git repository")
    demo.add_argument("--dir", help="where to put the example repository (default: a new temporary directory)")
    demo.set_defaults(run=cmd_demo)
    add_check_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from warp_fix.probe import BaselineFailed, ProbeError
    from warp_fix.report import ReportError

    # Tables need room: a pipe or CI log gets 140 columns instead of rich's default 80.
    console = Console(stderr=False) if sys.stdout.isatty() else Console(width=140)
    errors = Console(stderr=True, soft_wrap=True)  # one-line errors stay one line
    args = build_parser().parse_args(argv)
    if getattr(args, "samples", 1) is not None and getattr(args, "samples", 1) < 1:
        errors.print("warp-fix: error: --samples must be at least 1")
        return EXIT_USAGE
    try:
        return args.run(args, console)
    except BaselineFailed as exc:
        errors.print(exc.stderr_tail.rstrip()[-2000:], markup=False, highlight=False)
        errors.print(f"warp-fix: error: {exc}", markup=False)
        return EXIT_FAILED
    except (ProbeError, ReportError, UsageError) as exc:
        errors.print(f"warp-fix: error: {exc}", markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        errors.print("warp-fix: interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
