"""The command line's contract: exit codes (docs/exit-codes.md), one-line errors, shell completion."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_check import make_report
from warp_fix import cli
from warp_fix.cli_parser import parse_arguments
from warp_fix.cli_reference import subcommands
from warp_fix.mechanisms import SLUGS

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[1]


def warp_fix(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "warp_fix", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def assert_usage_error(proc: subprocess.CompletedProcess, text: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert text in proc.stderr


def test_missing_report_file_exits_2_in_one_line(tmp_path):
    proc = warp_fix("compare", str(tmp_path / "missing.json"), str(tmp_path / "other.json"))
    assert_usage_error(proc, "cannot read report")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_no_command_exits_2():
    assert_usage_error(warp_fix("measure"), "no command given")


def test_unknown_subcommand_and_bad_samples_exit_2(tmp_path):
    assert_usage_error(warp_fix("optimise"), "invalid choice")
    assert_usage_error(warp_fix("measure", "--samples", "0", "--", PYTHON, "-c", "pass"), "--samples")


def test_compare_exits_1_on_regression_and_0_otherwise(tmp_path):
    make_report().save(tmp_path / "before.json")
    make_report(identities=3).save(tmp_path / "worse.json")
    assert cli.main(["compare", str(tmp_path / "before.json"), str(tmp_path / "before.json")]) == 0
    assert cli.main(["compare", str(tmp_path / "before.json"), str(tmp_path / "worse.json")]) == 1


def test_interrupt_exits_130(tmp_path, monkeypatch):
    def interrupted(args, console):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "compare", interrupted)
    assert cli.main(["compare", "a.json", "b.json"]) == 130


def test_version_exits_0():
    proc = warp_fix("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("warp-fix ")


def test_check_falls_back_to_the_configured_command(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.warp-fix]\ncommand = "python -m app"\n')
    make_report().save(tmp_path / "wf.json")
    seen = {}

    def fake_measure(command, cwd, **kwargs):
        seen["command"] = command
        return make_report(identities=3)

    monkeypatch.setattr("warp_fix.probe.measure", fake_measure)
    code = cli.main(["check", "--baseline", str(tmp_path / "wf.json"), "--cwd", str(tmp_path)])
    assert code == 1 and seen["command"] == ["python", "-m", "app"]
    assert "grew: compiled module identities: 2 -> 3" in capsys.readouterr().out


def test_check_with_an_invalid_config_names_the_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warp-fix]\nsamples = 0\n")
    assert_usage_error(warp_fix("check", "--baseline", "wf.json", cwd=tmp_path), "samples must be an integer")


def test_check_without_any_command_exits_2(tmp_path, capsys):
    assert cli.main(["check", "--baseline", "wf.json", "--cwd", str(tmp_path)]) == 2
    assert "no command given" in capsys.readouterr().err


def completion(shell: str) -> str:
    proc = warp_fix("completion", shell)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def complete_bash(script: str, *words: str) -> list[str]:
    """What bash offers after `words` (the last one is being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    call = f'COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _warp_fix; printf "%s\\n" "${{COMPREPLY[@]}}"'
    program = f"{script}\n{call}"
    return subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True).stdout.split()


def test_bash_completion_is_valid_and_lists_every_subcommand():
    script = completion("bash")
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    names = [c.name for c in subcommands(cli.build_parser())]
    assert {"measure", "compare", "plan", "apply", "log", "demo", "check", "completion", "skill"} <= set(names)
    assert complete_bash(script, "warp-fix", "") == names
    assert complete_bash(script, "warp-fix", "check", "--ba") == ["--baseline"]
    assert complete_bash(script, "warp-fix", "completion", "") == ["bash", "zsh"]
    assert complete_bash(script, "warp-fix", "measure", "--", "python", "--j") == []  # the user's command


def test_a_run_builds_only_its_commands_parser_which_parses_as_the_whole_one():
    """`bake restore` runs right before a CI job's app: it builds bake's options, not every command's."""
    argv = ["bake", "restore", "a.tar.gz", "--cache", "c", "--merge"]
    assert [c.name for c in subcommands(cli.build_parser("bake"))] == ["bake"]
    assert vars(cli.build_parser("bake").parse_args(argv)) == vars(cli.build_parser().parse_args(argv))
    assert [c.name for c in subcommands(cli.build_parser("apply"))] == ["apply", "log"]
    every = [c.name for c in subcommands(cli.build_parser())]
    assert [c.name for c in subcommands(cli.build_parser("--help"))] == every  # not a command: all of them


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_parses_and_registers(tmp_path):
    script = tmp_path / "warp-fix.zsh"
    script.write_text(completion("zsh"))
    subprocess.run(["zsh", "-n", str(script)], check=True)
    program = f"autoload -U compinit; compinit -u -d {tmp_path}/zcompdump; source {script}; print $_comps[warp-fix]"
    shown = subprocess.run(["zsh", "-fc", program], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "_warp_fix"


def test_zsh_completion_describes_every_subcommand():
    script = completion("zsh")
    assert script.startswith("#compdef warp-fix")
    for command in subcommands(cli.build_parser()):
        assert f"'{command.name}:" in script and f"        {command.name})" in script
    assert "'--baseline[the committed baseline report]:FILE:_files'" in script


def test_plan_from_a_report_whose_project_is_gone_exits_2(tmp_path, capsys):
    report = make_report()
    report.cwd = str(tmp_path / "moved-away")
    report.save(tmp_path / "r.json")
    assert cli.main(["plan", "--from-report", str(tmp_path / "r.json")]) == 2
    assert "the repository to scan does not exist" in capsys.readouterr().err


def test_plan_with_a_broken_config_table_names_the_key_in_one_line(tmp_path, capsys):
    """The table's protected paths join the plan's scope, so a broken table stops the plan as bad input."""
    report = make_report()
    report.cwd = str(tmp_path)
    report.save(tmp_path / "r.json")
    (tmp_path / "pyproject.toml").write_text('[tool.warp-fix]\nprotected = "vendor"\n')
    assert cli.main(["plan", "--from-report", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "protected" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_every_subcommand_has_a_handler():
    assert {c.name for c in subcommands(cli.build_parser())} == set(cli.COMMANDS) | set(cli.PLAIN_COMMANDS)


def test_cli_reference_does_not_import_the_cli():
    program = "import sys, warp_fix.cli_reference; print('warp_fix.cli' in sys.modules)"
    shown = subprocess.run([PYTHON, "-c", program], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "False"


@pytest.mark.parametrize(("command", "default"), [("measure", 3), ("plan", 1), ("check", 1)])
def test_help_shows_the_samples_default_and_the_command_after_dashes(command, default):
    parser = next(c.parser for c in subcommands(cli.build_parser()) if c.name == command)
    text = " ".join(parser.format_help().split())
    assert f"(default {default})" in text
    usage = parser.format_usage()
    assert "-- COMMAND ..." in usage
    assert all(line.strip() not in ("...", "COMMAND...") for line in usage.splitlines())


def options_of(parser: argparse.ArgumentParser, path: str = "warp-fix"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options_of(sub, f"{path} {name}")
        elif action.option_strings:
            yield path, action


def test_every_option_with_a_default_says_it_in_help_and_apply_says_branch_is_required():
    unsaid = [
        f"{path} {action.option_strings[0]}"
        for path, action in options_of(cli.build_parser())
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in (action.help or "")
    ]
    assert unsaid == []
    apply_options = [a for path, a in options_of(cli.build_parser()) if path == "warp-fix apply"]
    branch = next(a for a in apply_options if "--branch" in a.option_strings)
    assert "required, except with --dry-run" in branch.help


def test_a_script_that_does_not_exist_is_bad_input_said_once(tmp_path):
    proc = warp_fix("measure", "--samples", "1", "--", PYTHON, "nonexistent.py", cwd=tmp_path)
    assert_usage_error(proc, "the command cannot start")
    assert (proc.stdout + proc.stderr).count("can't open file") == 1
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_command_that_fails_shows_its_error_once_and_exits_1(tmp_path):
    (tmp_path / "app.py").write_text(
        "import sys\nprint('context line', file=sys.stderr)\nsys.exit('the solver diverged')\n"
    )
    proc = warp_fix("measure", "--samples", "1", "--", PYTHON, "app.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("the solver diverged") == 1
    assert "context line" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("warp-fix: error: the command failed at baseline")


def test_a_test_command_that_cannot_start_is_not_blamed_on_the_tests(monkeypatch, capsys, tmp_path):
    from warp_fix.apply import BaselineTestsFailed
    from warp_fix.apply.testrun import run_tests

    missing = run_tests(f"{PYTHON} -m no_such_test_runner -q tests", tmp_path)
    assert missing.exit_code == 1

    def apply(args, console):
        raise BaselineTestsFailed(missing.command, missing.exit_code, missing.tail)

    monkeypatch.setitem(cli.COMMANDS, "apply", apply)
    assert cli.main(["apply", "--branch", "wf/x"]) == 2
    err = capsys.readouterr().err
    assert "the test command" in err and "cannot start" in err and "No module named no_such_test_runner" in err
    assert "the tests fail before any change" not in err


def test_tests_that_fail_are_still_reported_as_failing_tests(monkeypatch, capsys, tmp_path):
    from warp_fix.apply import BaselineTestsFailed
    from warp_fix.apply.testrun import run_tests

    (tmp_path / "check.py").write_text("import missing_dependency_of_the_project\n")
    failing = run_tests(f"{PYTHON} check.py", tmp_path)

    def apply(args, console):
        raise BaselineTestsFailed(failing.command, failing.exit_code, failing.tail)

    monkeypatch.setitem(cli.COMMANDS, "apply", apply)
    assert cli.main(["apply", "--branch", "wf/x"]) == 1
    assert "the tests fail before any change" in capsys.readouterr().err


def test_interrupt_after_kept_fixes_says_what_is_left_and_how_to_review_it(monkeypatch, capsys, tmp_path):
    from warp_fix.apply.errors import ApplyInterrupted
    from warp_fix.apply.ledger import KEPT, Entry, Ledger

    ledger = Ledger(branch="wf/startup", base_commit="abc", base_ref="main", command=["python", "app.py"], cwd="",
                    sampling_rule="")
    ledger.entries.append(Entry("F1", "cache-discarded", "Keep the kernel cache", "safe", KEPT, "", ["app.py"]))
    files = (tmp_path / "wf" / "startup.json", tmp_path / "wf" / "startup.md")

    def apply(args, console):
        raise ApplyInterrupted(ledger, files)

    monkeypatch.setitem(cli.COMMANDS, "apply", apply)
    assert cli.main(["apply", "--branch", "wf/startup"]) == 130
    err = capsys.readouterr().err
    assert "branch wf/startup was kept with 1 measured commit" in err
    assert str(files[1]) in err
    assert "warp-fix log wf/startup" in err and "git branch -D wf/startup" in err


def test_the_measure_header_quotes_the_command_as_a_shell_would():
    from io import StringIO

    from rich.console import Console

    from warp_fix.render.terminal import print_report

    report = make_report()
    report.command = ["python", "-c", "import warp; print(1)"]
    report.warnings = ["set [tool.warp-fix] test"]
    out = StringIO()
    print_report(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "python -c 'import warp; print(1)'" in text
    assert "set [tool.warp-fix] test" in text


def test_the_ledger_view_keeps_square_brackets_from_data():
    from io import StringIO

    from rich.console import Console

    from warp_fix.apply.ledger import DROPPED, Entry, Ledger
    from warp_fix.apply.view import print_ledger

    ledger = Ledger(branch="wf/x", base_commit="abc", base_ref="main", command=["python", "app.py"], cwd="",
                    sampling_rule="", warnings=["no test command (--test or [tool.warp-fix] test)"])
    ledger.entries.append(Entry("F1", "unique-on-stable", "Share [module] of array[float32]", "safe", DROPPED,
                                "launch dtypes array[vec3f,1] changed", ["app.py"]))
    out = StringIO()
    print_ledger(ledger, Console(file=out, width=200))
    text = out.getvalue()
    for shown in ("[tool.warp-fix] test", "Share [module] of array[float32]", "array[vec3f,1]"):
        assert shown in text


def test_a_run_that_builds_no_module_says_so_instead_of_the_findings(tmp_path):
    """Warp's CUDA-only examples exit early on the CPU: the plan must not read as a clean bill of health (a table
    of fifteen "ruled-out" rows, one saying the cache is reused)."""
    (tmp_path / "app.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n\n"
        "print('This example only runs on CUDA devices.')\n"
    )
    proc = warp_fix("plan", "--samples", "1", "--", PYTHON, "app.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = next(line for line in proc.stdout.splitlines() if line.startswith("warning:"))
    assert first == (
        "warning: the run built no Warp module (its output begins: 'This example only runs on CUDA devices.'): "
        "there was nothing to diagnose"
    )
    assert "Findings" not in proc.stdout
    assert proc.stdout.strip().endswith(f"Nothing to fix: none of the {len(SLUGS)} mechanisms had a build to look at.")


def test_json_dash_puts_the_json_alone_on_standard_output(tmp_path):
    make_report().save(tmp_path / "before.json")
    proc = warp_fix("compare", str(tmp_path / "before.json"), str(tmp_path / "before.json"), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "INCONCLUSIVE"
    assert "INCONCLUSIVE" in proc.stderr  # the human view moved to standard error
    assert not (tmp_path / "-").exists() and not Path("-").exists()


def test_a_json_file_in_a_missing_directory_is_refused_before_anything_runs(tmp_path):
    for argv in (["apply", "--json", "nowhere/ledger.json", "--", "python", "-c", "pass"],
                 ["demo", "--json", "nowhere/demo.json"], ["bake", "key", "--json", "nowhere/key.json"]):
        proc = warp_fix(*argv, cwd=tmp_path)
        assert_usage_error(proc, "cannot write --json nowhere/")
        assert "its directory does not exist" in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs Linux's /sys, where no one creates files")
def test_a_json_file_in_a_directory_nobody_can_write_is_refused_before_anything_runs(tmp_path):
    proc = warp_fix("apply", "--json", "/sys/kernel/ledger.json", "--", "python", "-c", "pass", cwd=tmp_path)
    assert_usage_error(proc, "its directory is not writable")
    assert list(tmp_path.iterdir()) == []


def test_under_demo_json_dash_each_step_s_screen_goes_to_standard_error(capsys):
    """`demo --json -` runs plan, apply and log through this: their tables must not mix into the JSON."""
    assert cli._steps_to_stderr(["skill"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("---\nname: warp-fix")


def test_every_command_and_bake_action_takes_json():
    def options(parser: argparse.ArgumentParser) -> set[str]:
        return {flag for action in parser._actions for flag in action.option_strings}

    commands = subcommands(cli.build_parser())
    bake = next(c.parser for c in commands if c.name == "bake")
    leaves = [c for c in commands if c.name != "bake"] + subcommands(bake)
    assert len(leaves) >= 14
    assert [c.name for c in leaves if "--json" not in options(c.parser)] == []


def test_json_dash_takes_standard_output_from_the_text_commands(capsys):
    assert cli.main(["completion", "bash", "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["shell"] == "bash" and "complete" in err and "complete" in json.loads(out)["script"]
    assert cli.main(["skill", "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["skill"] == err


def test_bake_run_takes_its_options_after_the_archive_and_the_command_after_the_dashes():
    """argparse's remainder after a positional would take `--cache c` for the command: it is split off first."""
    args = parse_arguments(["bake", "run", "a.tar.gz", "--cache", "c", "--", "python", "-m", "app", "--cache", "x"])
    assert (args.archive, args.cache, args.command) == ("a.tar.gz", "c", ["python", "-m", "app", "--cache", "x"])
    assert parse_arguments(["bake", "run", "a.tar.gz"]).command == []  # refused later, with the restore untouched


def test_bake_run_keeps_standard_output_for_the_command(capsys, tmp_path):
    assert cli.main(["bake", "run", str(tmp_path / "a.tar.gz"), "--json", "-", "--", "python", "-m", "app"]) == 2
    err = capsys.readouterr().err
    assert err == "warp-fix: error: bake run: standard output is the command's own: write --json to a file\n"
