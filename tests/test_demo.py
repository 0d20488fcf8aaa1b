"""`warp-fix demo`: the bundled example ships in the package, needs nothing beyond it, and the demo tells
the real outcome and removes its temporary directory. The whole loop itself runs in `.ci/run` (minutes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from warp_fix import demo
from warp_fix.apply.ledger import Entry, Ledger
from warp_fix.config import load_config

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "composite"
SYNC = "rm -r warp_fix/demo_app && cp -r fixtures/composite warp_fix/demo_app (without __pycache__)"


def listed_files(directory: Path) -> dict[str, bytes]:
    """Files git would track under `directory` (committed or not, minus ignored ones), with their bytes."""
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "."],
        cwd=directory, capture_output=True, text=True, check=True,
    ).stdout.split()
    return {name: (directory / name).read_bytes() for name in names if (directory / name).is_file()}


def test_the_packaged_example_is_the_composite_fixture():
    assert listed_files(demo.EXAMPLE) == listed_files(FIXTURE), f"warp_fix/demo_app is stale: {SYNC}"


def test_the_example_tests_run_with_the_standard_library():
    config = load_config(demo.EXAMPLE, demo.EXAMPLE)
    assert (config.test or "").split()[:3] == ["python", "-m", "unittest"]
    assert config.command == ("python", "-m", "terrain")


def test_the_wheel_carries_the_example_and_the_skill(tmp_path):
    source = tmp_path / "source"
    for name, data in listed_files(REPO).items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(data)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), "."],
        cwd=source, check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("warp_fix-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    example = {f"warp_fix/demo_app/{name}" for name in listed_files(demo.EXAMPLE)}
    assert example <= names, sorted(example - names)
    assert "warp_fix/skill/SKILL.md" in names
    assert not [name for name in names if "__pycache__" in name]


class FakeCli:
    """Stands in for `warp-fix` inside the demo: records each call and plays apply's part."""

    def __init__(self, apply_code: int = 0, keep_fix: bool = True, entries: list[Entry] | None = None):
        self.calls: list[list[str]] = []
        self.apply_code = apply_code
        self.keep_fix = keep_fix
        self.entries = entries or []
        self.python_seen: str | None = None

    def __call__(self, argv: list[str]) -> int:
        self.calls.append(argv)
        repo = Path(argv[argv.index("--cwd") + 1])
        if argv[0] == "plan":
            self.python_seen = shutil.which("python")
        if argv[0] == "apply" and self.apply_code == 0:
            ledger = Path(argv[argv.index("--json") + 1])
            ledger.write_text(json.dumps(Ledger(demo.BRANCH, "", None, [], "", "", entries=self.entries).to_json()))
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run([*git, "branch", demo.BRANCH], cwd=repo, check=True)
            if self.keep_fix:
                subprocess.run(["git", "switch", "-q", demo.BRANCH], cwd=repo, check=True)
                subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "fix"], cwd=repo, check=True)
        return self.apply_code if argv[0] == "apply" else 0


def run(fake: FakeCli, keep: Path | None = None) -> tuple[int, list[str]]:
    lines: list[str] = []
    result = demo.run_demo(keep, fake, heading=lines.append, say=lines.append)
    return result.exit_code, lines


def demo_dirs() -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob("warp-fix-demo-*"))


def test_a_kept_fix_is_reviewed_and_the_temporary_directory_removed():
    fake = FakeCli()
    code, lines = run(fake)
    assert code == 0
    assert [call[0] for call in fake.calls] == ["plan", "apply", "log"]
    assert "1 fix kept as commits on wf/startup, each measured and tested" in lines
    assert demo_dirs() == []
    assert fake.python_seen is not None and Path(fake.python_seen).parent == Path(sys.executable).parent


def test_a_failing_apply_stops_the_demo_without_pointing_at_a_branch():
    code, lines = run(FakeCli(apply_code=1))
    assert code == 1
    assert lines[-2] == "the demo stopped: apply exited 1 (the error is above); no fix was kept"
    assert not any("log" in line for line in lines if line.startswith("step"))
    assert not any("git -C" in line for line in lines)
    assert demo_dirs() == []


def test_nothing_kept_says_why_and_fails():
    entry = Entry("F1", "cache-discarded", "Keep the kernel cache", "safe", "dropped", "tests failed")
    code, lines = run(FakeCli(keep_fix=False, entries=[entry]))
    assert code == demo.EXIT_NOTHING_KEPT
    assert "no fix was kept, so there is no branch to review:" in lines
    assert "  F1 Keep the kernel cache: dropped, tests failed" in lines
    assert demo_dirs() == []


def test_keep_leaves_the_repository_and_says_where(tmp_path):
    code, lines = run(FakeCli(), keep=tmp_path / "kept")
    repo = (tmp_path / "kept" / "terrain-app").resolve()
    assert code == 0 and (repo / ".git").is_dir()
    assert lines[-1] == f"the repository stays in {repo}: `git -C {repo} log --stat {demo.BRANCH}` shows the commits"
    with pytest.raises(demo.DemoError, match="already exists"):
        run(FakeCli(), keep=tmp_path / "kept")


def test_the_demo_s_json_says_how_it_ended_with_apply_s_ledger(tmp_path):
    entry = Entry("F1", "cache-discarded", "Keep the kernel cache", "safe", "kept", "warm builds 1 -> 0")
    kept = demo.run_demo(tmp_path / "kept", FakeCli(entries=[entry]), heading=print, say=print).to_json()
    assert kept["exit_code"] == 0 and kept["kept"] == 1 and kept["branch"] == demo.BRANCH
    assert kept["repository"] == str((tmp_path / "kept" / "terrain-app").resolve())
    assert [e["fix_id"] for e in kept["ledger"]["entries"]] == ["F1"]
    gone = demo.run_demo(None, FakeCli(apply_code=1), heading=print, say=print).to_json()
    assert gone["exit_code"] == 1 and gone["repository"] is None and gone["ledger"] is None
