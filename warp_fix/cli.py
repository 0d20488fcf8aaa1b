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


def cmd_measure(args: argparse.Namespace, console: Console) -> int:
    from warp_fix.probe import measure
    from warp_fix.render.terminal import print_report

    report = measure(
        _command(args),
        Path(args.cwd),
        samples=args.samples,
        timeout=args.timeout,
        label=args.label,
        progress=_progress(console),
    )
    if args.json:
        report.save(args.json)
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
    plan = make_plan(report, Path(args.root or report.cwd))
    print_plan(plan, console)
    if args.json:
        Path(args.json).write_text(json.dumps(dataclasses.asdict(plan), indent=1, default=str) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(plan_markdown(plan))
    return EXIT_OK


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
    measure.add_argument("--label", help="a name for this measurement")
    _add_measure_options(measure, samples=3)
    measure.set_defaults(run=cmd_measure)

    compare = sub.add_parser("compare", help="did a change help, same workload?")
    compare.add_argument("before")
    compare.add_argument("after")
    compare.add_argument("--json", help="write the comparison here")
    compare.add_argument("--allow-option", action="append", help="an option allowed to change (repeatable)")
    compare.set_defaults(run=cmd_compare)

    plan = sub.add_parser("plan", help="findings for every mechanism, and the fixes it would make")
    plan.add_argument("--json", help="write the plan (with findings) here")
    plan.add_argument("--markdown", help="write a pull-request description here")
    plan.add_argument("--from-report", help="plan from a saved report instead of measuring")
    plan.add_argument("--root", help="repository to scan (default: the measured directory)")
    _add_measure_options(plan, samples=1)
    plan.set_defaults(run=cmd_plan)
    return parser


def main(argv: list[str] | None = None) -> int:
    from warp_fix.probe import BaselineFailed, ProbeError
    from warp_fix.report import ReportError

    console = Console(stderr=False)
    errors = Console(stderr=True)
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
