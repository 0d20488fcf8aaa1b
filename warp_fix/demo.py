"""`warp-fix demo`: the whole loop on a bundled example, in a throwaway git repository.

The example (`warp_fix/demo_app`, also the `composite` fixture through a link: several mechanisms at once) ships
inside the package, so the demo works from a plain `pip install`; its tests use `unittest`, so it
needs nothing the package does not install. It is copied into a temporary directory, committed,
planned, applied on a branch and the branch reviewed; the directory is removed at the end unless
`--keep DIR` names where to leave it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from warp_fix.apply.ledger import Ledger, read_ledger
from warp_fix.config import load_config
from warp_fix.environ import prepended
from warp_fix.wording import counted

EXAMPLE = Path(__file__).resolve().with_name("demo_app")
BRANCH = "wf/startup"
BASE = "main"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
EXIT_NOTHING_KEPT = 1
LEDGER_FILE = "ledger.json"  # apply's --json, beside the repository

Say = Callable[[str], None]


class DemoError(Exception):
    """The demo cannot run here (one line)."""


def prepare_example(destination: Path) -> Path:
    """Copy the example into `destination` as a fresh git repository with one commit."""
    if not (EXAMPLE / "pyproject.toml").is_file():
        raise DemoError(f"the bundled example is missing ({EXAMPLE}): reinstall warp-fix")
    repo = destination / "terrain-app"
    if repo.exists():
        raise DemoError(f"{repo} already exists: pass another --keep directory or remove it")
    shutil.copytree(EXAMPLE, repo, ignore=IGNORED)
    identity = ["-c", "user.name=warp-fix demo", "-c", "user.email=demo@warp-fix.invalid"]
    for command in (["init", "-q", "-b", BASE], ["add", "-A"], [*identity, "commit", "-q", "-m", "Terrain app"]):
        subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)
    return repo


def kept_commits(repo: Path) -> int:
    proc = subprocess.run(
        ["git", "rev-list", "--count", f"{BASE}..refs/heads/{BRANCH}"], cwd=repo, capture_output=True, text=True
    )
    return int(proc.stdout) if proc.returncode == 0 else 0


def why_nothing_was_kept(ledger_file: Path) -> list[str]:
    """One line per fix apply considered, from its ledger, with its reason in brief (empty when apply wrote none)."""
    ledger = read_ledger(ledger_file)
    if ledger is None:
        return []
    if not ledger.entries:
        return ["the plan had no fix to try"]
    return [f"{e.fix_id} {e.title}: {e.outcome}, {e.brief_reason()}" for e in ledger.entries]


@dataclass(frozen=True)
class DemoResult:
    """How the demo ended: its exit code, the repository if it was kept, and apply's ledger if apply wrote one."""

    exit_code: int
    repository: Path | None  # None once the temporary copy is removed
    kept: int  # commits on the branch
    ledger: Ledger | None

    def to_json(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "repository": str(self.repository) if self.repository else None,
            "branch": BRANCH,
            "kept": self.kept,
            "ledger": self.ledger.to_json() if self.ledger else None,
        }


def run_demo(keep: Path | None, run_cli: Callable[[list[str]], int], heading: Say, say: Say) -> DemoResult:
    """Plan, apply and log on a copy of the example; exit code 0 only when apply kept at least one fix."""
    parent = Path(tempfile.mkdtemp(prefix="warp-fix-demo-")) if keep is None else keep.resolve()
    try:
        parent.mkdir(parents=True, exist_ok=True)
        code, repo = _walk_through(parent, run_cli, heading, say)
        kept = kept_commits(repo)
        if keep is None:
            say("the example repository was temporary and is now removed; `warp-fix demo --keep DIR` keeps it")
        elif kept:
            say(f"the repository stays in {repo}: `git -C {repo} log --stat {BRANCH}` shows the commits")
        return DemoResult(code, None if keep is None else repo, kept, read_ledger(parent / LEDGER_FILE))
    finally:
        if keep is None:
            shutil.rmtree(parent, ignore_errors=True)


def _walk_through(parent: Path, run_cli: Callable[[list[str]], int], heading: Say, say: Say) -> tuple[int, Path]:
    repo = prepare_example(parent)
    config = load_config(repo, repo)
    command = ["--", *(config.command or ())]
    say(f"example app copied to {repo} (a fresh git repository); its tests: {config.test}")
    ledger_file = parent / LEDGER_FILE
    # The example runs `python ...`: make that the interpreter warp-fix runs in, also when no venv is active.
    with prepended("PATH", os.path.dirname(sys.executable)):
        heading("step 1/3: plan")
        code = run_cli(["plan", "--cwd", str(repo), *command])
        if code:
            say(f"the demo stopped: plan exited {code} (the error is above)")
            return code, repo
        heading(f"step 2/3: apply on branch {BRANCH}")
        code = run_cli(
            ["apply", "--branch", BRANCH, "--samples", "1", "--json", str(ledger_file), "--cwd", str(repo), *command]
        )
    if code:
        say(f"the demo stopped: apply exited {code} (the error is above); no fix was kept")
        return code, repo
    kept = kept_commits(repo)
    if not kept:
        say("no fix was kept, so there is no branch to review:")
        for line in why_nothing_was_kept(ledger_file):
            say(f"  {line}")
        return EXIT_NOTHING_KEPT, repo
    heading("step 3/3: log")
    run_cli(["log", BRANCH, "--cwd", str(repo)])
    say(f"{counted(kept, 'fix', 'fixes')} kept as commits on {BRANCH}, each measured and tested")
    return 0, repo
