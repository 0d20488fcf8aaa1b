"""The argparse parser of `warp-fix`, on its own so that cli.py (which runs commands) and cli_reference.py
(which documents them and makes completion scripts) both read it without importing each other."""

from __future__ import annotations

import argparse

from warp_fix import __version__

MEASURE_SAMPLES = 3  # timings need a median and a MAD
PLAN_SAMPLES = 1  # plan reads structure, which one cold+warm pair settles
CHECK_SAMPLES = 1  # check compares structure unless --timing
SKILLS_DIR = ".claude/skills"  # where `skill --install` puts warp-fix/SKILL.md by default


class CommandAfterDashes(argparse.HelpFormatter):
    """Usage shows the measured command as `-- COMMAND ...` where argparse prints a bare `...`."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if action.nargs == argparse.REMAINDER:
            return "-- COMMAND ..."
        return super()._format_args(action, default_metavar)


def _command_argument(parser: argparse.ArgumentParser, configured: bool) -> None:
    default = "; default: [tool.warp-fix] command" if configured else ""
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="COMMAND",
        help=f"the command, after -- (run as argv, no shell{default})",
    )


def _add_run_options(parser: argparse.ArgumentParser, samples: int, samples_help: str) -> None:
    parser.add_argument("--samples", type=int, default=samples, help=f"{samples_help} (default {samples})")
    parser.add_argument("--cwd", default=".", help="directory to run the command in (default: the current one)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per run")


def _add_measure_commands(sub) -> None:
    measure = sub.add_parser("measure", help="what Warp built, and why", formatter_class=CommandAfterDashes)
    measure.add_argument("--json", metavar="FILE", help="write the report here (- for standard output)")
    measure.add_argument("--html", metavar="FILE", help="write a self-contained HTML page here")
    measure.add_argument("--label", help="a name for this measurement")
    measure.add_argument(
        "--kernel-time",
        action="store_true",
        help="also record each module's steady-state kernel time (adds work to every launch)",
    )
    _add_run_options(measure, MEASURE_SAMPLES, "cold+warm pairs to run: timings are medians over them")
    _command_argument(measure, configured=False)

    compare = sub.add_parser("compare", help="did a change help, same workload?")
    compare.add_argument("before", help="the baseline report (from measure --json)")
    compare.add_argument("after", help="the report of the changed code")
    compare.add_argument("--json", metavar="FILE", help="write the comparison here (- for standard output)")
    compare.add_argument("--allow-option", action="append", help="an option allowed to change (repeatable)")


def _add_apply_commands(sub) -> None:
    apply = sub.add_parser(
        "apply", help="fix the source on a new git branch, one measured commit per fix",
        formatter_class=CommandAfterDashes,
    )
    apply.add_argument(
        "--branch", help="the new branch for the commits; it must not exist yet (required, except with --dry-run)"
    )
    apply.add_argument("--test", help='the project\'s test command, run through the shell, e.g. "pytest -q"')
    apply.add_argument(
        "--samples", type=int, default=None,
        help="most interleaved samples per arm (default: [tool.warp-fix] samples, else 3)",
    )
    apply.add_argument(
        "--time-per-fix", type=float, default=None, metavar="SECONDS",
        help="stop sampling a timing-decided fix once it has used this long (default: no limit; --samples still holds)",
    )
    apply.add_argument("--allow", nargs="+", metavar="SLUG", help="consent-class mechanisms to apply")
    apply.add_argument("--only", nargs="+", metavar="FIX", help="only these fix ids (F1) or mechanism slugs")
    apply.add_argument("--dry-run", action="store_true", help="probe and plan; print what would be done")
    apply.add_argument("--json", metavar="FILE", help="also write the ledger (JSON) here (- for standard output)")
    apply.add_argument("--allow-nondeterministic-output", action="store_true",
                       help="accept a program whose output varies between runs (output is then not compared)")
    apply.add_argument("--output-tolerance", type=float, metavar="REL",
                       help="printed numbers may differ by this relative amount (replaces the learned tolerances)")
    apply.add_argument("--cwd", default=".", help="directory to run the command in (default: the current one)")
    apply.add_argument("--timeout", type=float, default=None, help="seconds allowed per run")
    _command_argument(apply, configured=True)

    log = sub.add_parser("log", help="review a branch made by apply, with measured deltas")
    log.add_argument("branch", nargs="?", help="the branch (default: the current one)")
    log.add_argument("--base", help="where the branch started (default: recorded by apply)")
    log.add_argument(
        "--json", nargs="?", const="-", metavar="FILE",
        help="write the log as JSON here (- or no FILE: standard output)",
    )
    log.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page here")
    log.add_argument("--cwd", default=".", help="a directory inside the repository (default: the current one)")


def _add_plan_command(sub) -> None:
    plan = sub.add_parser(
        "plan", help="findings for every mechanism, and the fixes it would make", formatter_class=CommandAfterDashes
    )
    plan.add_argument("--json", metavar="FILE", help="write the plan (with findings) here (- for standard output)")
    plan.add_argument("--markdown", metavar="FILE", help="write a pull-request description here")
    plan.add_argument("--html", metavar="FILE", help="write a self-contained HTML page here")
    plan.add_argument("--from-report", metavar="FILE", help="plan from a saved report instead of measuring")
    plan.add_argument("--root", help="repository to scan (default: the measured directory)")
    _add_run_options(plan, PLAN_SAMPLES, "cold+warm pairs to run: structure, which plan reads, needs one")
    _command_argument(plan, configured=False)


def _add_other_commands(sub) -> None:
    demo = sub.add_parser("demo", help="the whole loop on a bundled example app, in a temporary git repository")
    demo.add_argument(
        "--keep", metavar="DIR", help="leave the example repository in DIR (default: a temporary directory, removed)"
    )
    demo.add_argument(
        "--json", metavar="FILE", help="write how it ended and apply's ledger here (- for standard output)"
    )

    check = sub.add_parser(
        "check", help="CI guard: fail when cold-start work grew against a committed baseline",
        formatter_class=CommandAfterDashes,
    )
    check.add_argument("--baseline", metavar="FILE", help="the committed baseline report")
    check.add_argument(
        "--no-compile", action="store_true",
        help="instead: run on the real (restored) kernel cache and fail if anything compiled (as `bake verify`)",
    )
    check.add_argument("--timing", action="store_true", help="also fail when cold module work grew beyond noise")
    check.add_argument("--update", action="store_true", help="measure and rewrite the baseline (exit 0)")
    check.add_argument("--json", metavar="FILE", help="write the check result here (- for standard output)")
    _add_run_options(check, CHECK_SAMPLES, "cold+warm pairs to run: structure is deterministic")
    _command_argument(check, configured=True)

    completion = sub.add_parser("completion", help="print a shell completion script generated from this parser")
    completion.add_argument("shell", choices=("bash", "zsh"), help="e.g. source <(warp-fix completion bash)")
    completion.add_argument("--json", metavar="FILE", help="also write the script as JSON here (- for standard output)")

    skill = sub.add_parser("skill", help="print the agent skill that teaches a coding agent to use warp-fix")
    skill.add_argument(
        "--install", nargs="?", const=SKILLS_DIR, metavar="DIR",
        help=f"write it to DIR/warp-fix/SKILL.md instead (DIR default: {SKILLS_DIR})",
    )
    skill.add_argument("--force", action="store_true", help="with --install: replace a different SKILL.md")
    skill.add_argument(
        "--json", metavar="FILE", help="also write the skill, or where --install put it, here (- for standard output)"
    )


BAKE_ACTIONS = ("create", "key", "restore", "run", "verify", "push", "pull")


def cuda_arch(text: str) -> list[int]:
    """`86`, `sm_86`, `sm86` or a comma-separated list of them."""
    archs = []
    for part in text.split(","):
        digits = part.strip().lower().removeprefix("sm_").removeprefix("sm")
        if not digits.isdigit():
            raise argparse.ArgumentTypeError(f"not a CUDA arch: {part!r} (write 86 or sm_86)")
        archs.append(int(digits))
    return archs


def byte_count(text: str) -> int:
    """`5000000`, `512M`, `4G` (binary multiples)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    digits, unit = text.strip().upper().removesuffix("B").removesuffix("I"), ""
    if digits[-1:].isalpha():
        digits, unit = digits[:-1], digits[-1]
    if unit not in units or not digits.isdigit() or int(digits) == 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (write 512M, 4G or a byte count)")
    return int(digits) * units[unit]


def with_default_bake_action(argv: list[str]) -> list[str]:
    """`warp-fix bake -- COMMAND` (no action named) means `warp-fix bake create -- COMMAND`."""
    if argv[:1] == ["bake"] and (len(argv) == 1 or argv[1] not in (*BAKE_ACTIONS, "-h", "--help")):
        return ["bake", "create", *argv[1:]]
    return argv


def _add_bake_command(sub) -> None:
    bake = sub.add_parser(
        "bake", help="archive exactly the cache entries a run needs; restore, verify and share them",
        description="`warp-fix bake -- COMMAND` is short for `warp-fix bake create -- COMMAND`.",
    )
    actions = bake.add_subparsers(dest="bake_action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create", help="run cold in a private cache and archive what it built, with its manifest",
        formatter_class=CommandAfterDashes,
    )
    create.add_argument(
        "--out", metavar="PATH", help="the archive file, or a directory for it: DIR/ or an existing one, created "
        "when missing (default: here)",
    )
    create.add_argument(
        "--from", dest="previous", metavar="ARCHIVE", help="start from this earlier archive (the main branch's last): "
        "entries the run still loads carry over, only misses are built (each with why), the rest is dropped",
    )
    create.add_argument(
        "--sign", metavar="KEY", help="sign the archive with this SSH private key (ssh-keygen -Y sign): ARCHIVE.sig",
    )
    _add_arch_option(create)
    _add_bake_run_options(create)

    key = actions.add_parser(
        "key", help="print the key a CI cache should use: environment + module identities",
        formatter_class=CommandAfterDashes,
    )
    key.add_argument("--from-report", metavar="FILE", help="take the identities from a saved report (no run)")
    _add_arch_option(key)
    _add_bake_run_options(key)

    restore = actions.add_parser("restore", help="verify an archive, then place its entries where runs look")
    _add_restore_options(restore)
    run = actions.add_parser(
        "run", help="restore, then start the command (in this process when it is this Python): a baked start in one "
        "step", usage="warp-fix bake run [options] ARCHIVE -- COMMAND",
    )
    _add_restore_options(run)
    run.add_argument(  # parse_arguments splits it off at `--`: argparse's remainder would take the options too
        "command", nargs="*", metavar="-- COMMAND", help="the command, after -- (run as argv, no shell)"
    )

    verify = actions.add_parser(
        "verify", help="CI guard: run on the restored cache and fail if anything compiled, saying why",
        formatter_class=CommandAfterDashes,
    )
    verify.add_argument("--cache", metavar="DIR", help="the cache, as WARP_CACHE_PATH (default: the run's own)")
    source = verify.add_mutually_exclusive_group()
    source.add_argument("--manifest", metavar="FILE", help="the manifest to compare with (manifest.json)")
    source.add_argument("--archive", metavar="FILE", help="take the manifest from this archive (checked whole)")
    _add_bake_run_options(verify)

    push = actions.add_parser("push", help="verify an archive and upload it to a store (fsspec URL)")
    push.add_argument("archive", help="the archive made by bake")
    push.add_argument("url", help="a folder URL (file://, s3://, gs://, memory://...) or a .tar.gz URL")

    pull = actions.add_parser("pull", help="download an archive from a store and verify it")
    pull.add_argument("url", help="the archive's URL")
    pull.add_argument(
        "--out", metavar="PATH", default=".", help="the file, or a directory for it: DIR/ or an existing one, created "
        "when missing (default: the current directory)",
    )
    for action in (create, key, restore, run, verify, push, pull):
        action.add_argument("--json", metavar="FILE", help="also write the result as JSON here (- for standard output)")


def _add_restore_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive", help="the archive made by bake")
    parser.add_argument("--cache", metavar="DIR", help="the cache, as WARP_CACHE_PATH (default: WARP_CACHE_PATH, "
                        "else Warp's default)")
    parser.add_argument("--merge", action="store_true", help="add to a cache that already holds entries")
    parser.add_argument(
        "--partial", action="store_true", help="where this machine's environment differs, place the entries that "
        "still apply and name each field and entry left out (exit 0), instead of refusing the archive",
    )
    parser.add_argument("--expect-key", metavar="KEY", help="refuse an archive whose key differs")
    parser.add_argument("--python", metavar="EXE", help="the interpreter the runs use (default: this one)")
    parser.add_argument(
        "--max-bytes", type=byte_count, metavar="N",
        help="refuse an archive whose manifest declares more entry bytes (default: 2G; K, M, G suffixes)",
    )
    parser.add_argument(
        "--require-signature", metavar="ALLOWED_SIGNERS",
        help="refuse an archive without an ARCHIVE.sig made by a key of this allowed-signers file (ssh-keygen -Y)",
    )
    parser.add_argument(
        "--recheck-environment", action="store_true",
        help="start Warp to read this machine's environment even if a restore here already read it under the "
        "same fingerprint (interpreter, Warp files, CPU flags, NVIDIA driver, WARP_/CUDA_ variables)",
    )


def _add_arch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arch", type=cuda_arch, action="append", metavar="SM",
        help="also compile CUDA binaries for this arch ahead of time (86, sm_90; repeatable or comma-separated)",
    )


def _add_bake_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cwd", default=".", help="directory to run the command in (default: the current one)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed for the run")
    _command_argument(parser, configured=True)


COMMAND_GROUPS = (  # the commands each adder makes, in the order `warp-fix --help` lists them
    (("measure", "compare"), _add_measure_commands),
    (("apply", "log"), _add_apply_commands),
    (("plan",), _add_plan_command),
    (("demo", "check", "completion", "skill"), _add_other_commands),
    (("bake",), _add_bake_command),
)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """`bake run ARCHIVE [options] -- COMMAND` has its command split off at `--` first: argparse's remainder
    after a positional would take the options after ARCHIVE as the command."""
    argv = with_default_bake_action(argv)
    command = None
    if argv[:2] == ["bake", "run"] and "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    if command is not None:
        args.command = command
    return args


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command` (a command's name), only its group: what one run parses.

    `bake restore` runs in CI right before the app, and building every command's options costs it ~8 ms.
    """
    parser = argparse.ArgumentParser(prog="warp-fix", description="Make Warp applications start fast.")
    parser.add_argument("--version", action="version", version=f"warp-fix {__version__}")
    sub = parser.add_subparsers(dest="name", required=True, metavar="COMMAND")
    known = any(command in names for names, _ in COMMAND_GROUPS)
    for names, add in COMMAND_GROUPS:
        if not known or command in names:
            add(sub)
    return parser
