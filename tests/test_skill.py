"""The agent skill: shipped twice (repository and package) with one text, every command it names parses with
the real parser, and `warp-fix skill` prints or installs it without overwriting someone else's file."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from warp_fix import agent_skill, cli
from warp_fix.cli_parser import build_parser
from warp_fix.mechanisms import SLUGS

REPO = Path(__file__).resolve().parents[1]
SKILL = REPO / "skills" / "warp-fix" / "SKILL.md"
COMMAND = re.compile(r"(?:^ {4,}|`)(warp-fix [^`\n]*)", re.MULTILINE)  # code blocks and inline code


def named_commands() -> list[str]:
    return COMMAND.findall(SKILL.read_text())


def test_the_packaged_skill_is_the_repository_skill():
    """skills/warp-fix is a link to the packaged folder: one file under two names."""
    assert SKILL.resolve() == agent_skill.SKILL_FILE.resolve()


def test_the_skill_has_the_front_matter_agents_read():
    text = SKILL.read_text()
    front = text.split("---\n")[1]
    assert text.startswith("---\n")
    assert re.search(r"^name: warp-fix$", front, re.MULTILINE)
    assert re.search(r"^description: .*Warp.*(compiled|start)", front, re.MULTILINE)
    assert len(text.splitlines()) < 120, "keep it short: an agent reads all of it"


def test_the_skill_names_plan_apply_and_log_with_json():
    commands = " ".join(named_commands())
    for expected in ("warp-fix plan --json", "warp-fix apply --branch", "--json ledger.json", "warp-fix log"):
        assert expected in commands
    assert re.search(r"warp-fix log \S+ --json", commands)
    assert "--allow" in commands


@pytest.mark.parametrize("command", named_commands())
def test_every_command_in_the_skill_parses(command):
    argv = shlex.split(command)[1:]
    if argv == ["--help"]:
        return
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"`{command}` does not parse (exit {exc.code})")
    assert args.name in cli.COMMANDS
    assert set(getattr(args, "allow", None) or ()) <= set(SLUGS), "--allow names a mechanism that does not exist"


def test_skill_prints_the_file():
    proc = subprocess.run([sys.executable, "-m", "warp_fix", "skill"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout == SKILL.read_text()


def test_install_writes_it_once_and_never_replaces_another_file_without_force(tmp_path, capsys):
    target = tmp_path / ".claude" / "skills" / "warp-fix" / "SKILL.md"
    assert cli.main(["skill", "--install", str(tmp_path / ".claude" / "skills")]) == 0
    assert target.read_text() == SKILL.read_text()
    assert cli.main(["skill", "--install", str(tmp_path / ".claude" / "skills")]) == 0
    assert "already installed, unchanged" in capsys.readouterr().out

    target.write_text("my own notes\n")
    assert cli.main(["skill", "--install", str(tmp_path / ".claude" / "skills")]) == 2
    assert "pass --force to replace it" in capsys.readouterr().err
    assert target.read_text() == "my own notes\n"
    assert cli.main(["skill", "--install", str(tmp_path / ".claude" / "skills"), "--force"]) == 0
    assert target.read_text() == SKILL.read_text()


def test_install_defaults_to_the_project_claude_skills_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "warp_fix", "skill", "--install"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".claude" / "skills" / "warp-fix" / "SKILL.md").read_text() == SKILL.read_text()
