"""What `bake verify` measured, kept in the repository's warp-fix folder for apply's summary to quote.

A restored start that compiles nothing is what bake promises; once one is measured for a command, apply says
so beside the cold work it leaves, for the same module identities only (a bake of other code is said to be one).
Outside a git repository nothing is kept.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.cold_work import Identity

RECORDS = "bake-verified.jsonl"  # in <git common dir>/warp-fix, beside apply's ledgers


@dataclass(frozen=True)
class Verification:
    """One `bake verify` run: the command, the builds it found (identities) and how many of them compiled."""

    command: tuple[str, ...]
    identities: frozenset[Identity]
    compiled: int
    wall_ms: float
    at: str  # local time, minutes
    keys: tuple[str, ...] = ()  # the manifests compared against

    def to_json(self) -> dict[str, object]:
        return {
            "command": list(self.command),
            "identities": sorted(list(i) for i in self.identities),
            "compiled": self.compiled,
            "wall_ms": self.wall_ms,
            "at": self.at,
            "keys": list(self.keys),
        }

    @staticmethod
    def from_json(data: dict) -> Verification:
        return Verification(
            command=tuple(data["command"]),
            identities=frozenset((str(m), str(h), str(d)) for m, h, d in data["identities"]),
            compiled=int(data["compiled"]),
            wall_ms=float(data["wall_ms"]),
            at=str(data["at"]),
            keys=tuple(data.get("keys", ())),
        )

    def said_for(self, needed: frozenset[Identity]) -> str:
        """What this verification says of a state that builds `needed`: measured for it, or for other code."""
        key = f", key {self.keys[0][:12]}" if self.keys else ""
        if needed <= self.identities:
            compiled = "nothing compiled" if not self.compiled else f"{self.compiled} compiled"
            return (f"a restored bake measured it: {compiled}, the run took {self.wall_ms:,.0f} ms "
                    f"(`warp-fix bake verify`, {self.at}{key})")
        differ = len(needed - self.identities)
        return (f"the last `warp-fix bake verify` ({self.at}{key}) ran other code ({differ} of {len(needed)} "
                "identities differ): bake again once this branch is merged")


def remember(cwd: Path, verification: Verification) -> None:
    """Append to the repository's records; nothing where `cwd` is not in a git repository or it is read-only."""
    folder = _records_folder(cwd)
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / RECORDS).open("a") as handle:
            handle.write(json.dumps(verification.to_json()) + "\n")
    except OSError:
        pass


def last_verification(folder: Path, command: list[str]) -> Verification | None:
    """The newest record for `command` in `folder` (a repository's warp-fix folder); None when there is none."""
    try:
        lines = (folder / RECORDS).read_text().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = Verification.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        if list(record.command) == list(command):
            return record
    return None


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M")


def _records_folder(cwd: Path) -> Path | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--git-common-dir"], cwd=cwd, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return (Path(cwd) / done.stdout.strip()).resolve() / "warp-fix"
