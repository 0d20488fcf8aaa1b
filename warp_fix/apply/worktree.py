"""The user's repository seen read-only, and the private worktrees apply edits and measures in.

Two worktrees live under one temp directory outside the user's tree: `candidate` (on the new
branch, where codemods edit and commits land) and `accepted` (detached at the last accepted commit,
the other arm of every interleaved measurement). An `owner.json` next to them names the process, so a
later run can tell a stale pair left by a killed process from a live one and remove it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from warp_fix.apply.errors import ApplyError
from warp_fix.apply.git import Git, GitError
from warp_fix.apply.signals import shielded_from_interrupts
from warp_fix.wording import counted

OWNER_FILE = "owner.json"
TEMP_PREFIX = "warp-fix-apply-"


@dataclass(frozen=True)
class UserRepo:
    """The repository the user ran apply in. Only read from, plus `git worktree`/`git branch`."""

    root: Path
    common_dir: Path  # the shared .git directory (also when the user is in a worktree)
    head: str
    head_ref: str | None  # the branch the user is on; None when detached

    @classmethod
    def discover(cls, cwd: Path) -> UserRepo:
        git = Git(cwd)
        if not git.ok("rev-parse", "--is-inside-work-tree"):
            raise ApplyError(f"not inside a git repository: {cwd} (apply commits its fixes on a git branch)")
        if not git.ok("rev-parse", "--verify", "-q", "HEAD"):
            raise ApplyError("the repository has no commit yet: commit your code first")
        root = Path(git.run("rev-parse", "--show-toplevel")).resolve()
        ref = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False) or None
        return cls(root, git.path("rev-parse", "--git-common-dir"), git.run("rev-parse", "HEAD"), ref)

    @property
    def git(self) -> Git:
        return Git(self.root)

    def branch_exists(self, branch: str) -> bool:
        return self.git.ok("rev-parse", "--verify", "-q", f"refs/heads/{branch}")

    def check_branch_name(self, branch: str) -> None:
        if not self.git.ok("check-ref-format", "--branch", branch):
            raise ApplyError(f"{branch!r} is not a valid branch name")

    def uncommitted(self) -> list[str]:
        """Tracked or untracked changes that the new branch will not contain."""
        return [line for line in self.git.run("status", "--porcelain").splitlines() if line.strip()]

    def relative_cwd(self, cwd: Path) -> Path:
        resolved = Path(cwd).resolve()
        if not resolved.is_relative_to(self.root):
            raise ApplyError(f"the working directory {cwd} is outside the repository {self.root}")
        return resolved.relative_to(self.root)

    def existing_branch_message(self, branch: str) -> str:
        tip = self.git.run("rev-parse", f"refs/heads/{branch}")
        ahead = self.git.run("rev-list", "--count", f"HEAD..{tip}")
        what = "with no commits beyond HEAD" if ahead == "0" else f"with {counted(int(ahead), 'commit')} not on HEAD"
        return (
            f"branch {branch} already exists ({what}): review it with `warp-fix log {branch}`, "
            f"delete it with `git branch -D {branch}`, or pick another --branch"
        )

    def prune_stale_worktrees(self) -> list[Path]:
        """Remove worktrees left by an apply process that no longer runs (e.g. after SIGKILL)."""
        removed = []
        for path in self._worktree_paths():
            owner = _read_owner(path.parent)
            if owner is None or _alive(owner.get("pid")):
                continue
            with contextlib.suppress(GitError):
                self.git.run("worktree", "remove", "--force", str(path))
            shutil.rmtree(path.parent, ignore_errors=True)
            removed.append(path)
        self.git.run("worktree", "prune", check=False)
        return removed

    def _worktree_paths(self) -> list[Path]:
        listing = self.git.run("worktree", "list", "--porcelain")
        return [Path(line.split(" ", 1)[1]) for line in listing.splitlines() if line.startswith("worktree ")]

    def ledger_dir(self) -> Path:
        return self.common_dir / "warp-fix"


class Workspace:
    """Candidate + accepted worktrees, the candidate later on a new branch; removed on exit, whatever ends the run.

    Both start detached, so a run refused at baseline (its output varies, its tests fail) never creates
    the branch; `create_branch` makes it once the baseline is accepted. On a normal exit or an exception
    the worktrees are removed and pruned. A branch with no commit beyond where it started is deleted too,
    however the run ended (nothing kept, interrupted, failed): an empty branch helps no reviewer, and would
    block a rerun with the same name.
    """

    def __init__(self, repo: UserRepo, branch: str):
        self.repo = repo
        self.branch = branch
        self.base = repo.head
        self.temp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)).resolve()
        self.candidate = self.temp / "candidate"
        self.accepted = self.temp / "accepted"
        self.branch_created = False

    def __enter__(self) -> Workspace:
        (self.temp / OWNER_FILE).write_text(
            json.dumps({"pid": os.getpid(), "branch": self.branch, "repo": str(self.repo.root)})
        )
        try:
            self.repo.git.run("worktree", "add", "-q", "--detach", str(self.candidate), self.base)
            self.repo.git.run("worktree", "add", "-q", "--detach", str(self.accepted), self.base)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        with shielded_from_interrupts():
            self._remove()

    def _remove(self) -> None:
        git = self.repo.git
        for tree in (self.accepted, self.candidate):
            if tree.exists():
                git.run("worktree", "remove", "--force", str(tree), check=False)
        shutil.rmtree(self.temp, ignore_errors=True)
        git.run("worktree", "prune", check=False)
        if self.branch_created and self.branch_is_empty():
            git.run("branch", "-q", "-D", self.branch, check=False)

    def create_branch(self) -> None:
        """Put the candidate worktree on the new branch (at the base: nothing is committed yet)."""
        self.candidate_git.run("checkout", "-q", "-b", self.branch)
        self.branch_created = True

    @property
    def candidate_git(self) -> Git:
        return Git(self.candidate)

    def branch_is_empty(self) -> bool:
        tip = self.repo.git.run("rev-parse", "-q", "--verify", f"refs/heads/{self.branch}", check=False)
        return tip in ("", self.base)

    def move_accepted(self, commit: str) -> None:
        """Point the accepted arm at `commit` (the last kept fix, or the base for the total)."""
        Git(self.accepted).run("checkout", "-q", "--detach", commit)

    def discard_candidate_edits(self) -> None:
        git = self.candidate_git
        git.run("reset", "-q", "--hard", "HEAD")
        git.run("clean", "-fdq")

    def head(self) -> str:
        return self.candidate_git.run("rev-parse", "HEAD")


def _read_owner(directory: Path) -> dict | None:
    if not directory.name.startswith(TEMP_PREFIX):
        return None
    try:
        return json.loads((directory / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return {"pid": None}  # our layout without a readable owner: treat as stale


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
