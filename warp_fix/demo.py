"""`warp-fix demo`: the whole loop on a bundled example, in a throwaway git repository.

The example is the `composite` fixture (several mechanisms at once). It is copied
into a temporary directory, committed, planned, applied on a branch, and the
branch is reviewed; nothing outside the temporary directory is touched.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "composite"
BRANCH = "wf/startup"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


class DemoError(Exception):
    """The demo cannot run here (one line)."""


def prepare_example(destination: Path) -> Path:
    """Copy the example into `destination` as a fresh git repository with one commit."""
    if not (EXAMPLE / "pyproject.toml").is_file():
        raise DemoError(f"the bundled example is missing ({EXAMPLE}): run the demo from a source checkout")
    repo = destination / "terrain-app"
    shutil.copytree(EXAMPLE, repo, ignore=IGNORED)
    env_args = ["-c", "user.name=warp-fix demo", "-c", "user.email=demo@warp-fix.invalid"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], [*env_args, "commit", "-q", "-m", "Terrain app"]):
        subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)
    return repo


def run_demo(keep: Path | None, run_cli: Callable[[list[str]], int], say: Callable[[str], None]) -> int:
    """Plan, apply and log on a copy of the example; returns the apply exit code."""
    parent = Path(tempfile.mkdtemp(prefix="warp-fix-demo-")) if keep is None else keep
    parent.mkdir(parents=True, exist_ok=True)
    repo = prepare_example(parent)
    say(f"example app copied to {repo} (a fresh git repository)")
    command = ["--", "python", "-m", "terrain"]
    say("step 1/3: plan")
    run_cli(["plan", "--cwd", str(repo), *command])
    say(f"step 2/3: apply on branch {BRANCH} (tests: python -m pytest -q tests)")
    code = run_cli(["apply", "--branch", BRANCH, "--samples", "1", "--cwd", str(repo), *command])
    say("step 3/3: log")
    run_cli(["log", BRANCH, "--cwd", str(repo)])
    say(f"the branch {BRANCH} is in {repo}: `git -C {repo} log --stat {BRANCH}` shows the commits")
    return code
