"""A tiny `git` runner bound to one directory: every git call of apply goes through here."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path


class GitError(RuntimeError):
    """A git command failed; the message carries git's own stderr."""


class Git:
    """Runs git in `cwd`. Apply never points one at the user's working tree for writes."""

    def __init__(self, cwd: Path):
        self.cwd = Path(cwd)

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None, check: bool = True
    ) -> str:
        full_env = {**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0"}
        proc = subprocess.run(
            ["git", *args],
            cwd=self.cwd,
            env=full_env,
            input=stdin,
            text=True,
            capture_output=True,
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout.strip() if proc.returncode == 0 else ""

    def ok(self, *args: str) -> bool:
        return (
            subprocess.run(
                ["git", *args], cwd=self.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            ).returncode
            == 0
        )

    def path(self, *args: str) -> Path:
        """A path printed by git (e.g. rev-parse --git-common-dir), made absolute."""
        return (self.cwd / self.run(*args)).resolve()
