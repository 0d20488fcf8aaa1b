"""The order in which apply tries fixes, and which dropped fixes it tries again after a kept one.

Fixes interact through the modules they touch. Registering overloads on a module that is later split by
block size grows the generated source of every variant and is dropped; tried after the split, it removes
rebuilds of each part. So apply does not follow the planner's order: fixes that split a module go first,
then those that remove rebuilds without adding to a module, then those that add to a module (overloads,
merges), then those that only shrink each build, then a factory's arguments changed at one call site, then
those that only overlap builds in time; advisory fixes, which edit nothing, last. Each codemod declares its
class (`EFFECT` in codemods/specs.py; its rank is this order). Within a class the planner's order is kept.
After a kept fix the rest is planned again from the new state, and a dropped fix whose module the kept fix
changed is tried once more if the new plan still proposes it.

Example: the planner lists [register_overloads(sim.py), split_by_block_dim(sim.py)]; apply tries the
split first, then the overloads on the split modules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from codemods.specs import ARGS_TYPES
from warp_fix.model import Fix
from warp_fix.report import Report

MAX_ATTEMPTS = 2  # the first try, and one retry after a kept fix changed the fix's module


def search_rank(fix: Fix) -> float:
    """Its codemod's declared rank; a fix without a codemod (advisory) is never tried: last."""
    return ARGS_TYPES[fix.codemod].EFFECT.rank if fix.codemod else float("inf")


def search_order(fixes: list[Fix]) -> list[Fix]:
    """Splits, then rebuild removers, then additions to a module, then per-build shrinks, then elapsed."""
    return sorted(fixes, key=search_rank)


def fix_key(fix: Fix) -> str:
    """The same fix, whatever id the planner gave it this time."""
    return json.dumps([fix.slug, fix.codemod, fix.args_json()], sort_keys=True, default=str)


def module_identities(report: Report | None) -> dict[str, set[tuple[str, str]]]:
    identities: dict[str, set[tuple[str, str]]] = {}
    if report is not None:
        for build in report.trace.builds:
            if build.status != "error":
                identities.setdefault(build.module, set()).add((build.hash, build.device))
    return identities


def changed_modules(before: Report | None, after: Report | None) -> set[str]:
    """Modules built with other identities after a change (new, gone, or rebuilt differently)."""
    old, new = module_identities(before), module_identities(after)
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def python_module(path: str) -> str:
    """`pkg/sub/a.py` -> `pkg.sub.a`; `pkg/__init__.py` -> `pkg`: the module Warp names after the file."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def touches(fix: Fix, modules: set[str], files: list[str]) -> bool:
    """The fix edits one of `files`, or targets one of `modules` (by argument or by the file's module)."""
    if set(fix.files) & set(files):
        return True
    named = {place.named_module for place in fix.places if place.named_module}
    named |= {python_module(f) for f in fix.files}
    return any(m == n or n.endswith("." + m) for m in modules for n in named)


@dataclass
class Search:
    """The queue of fixes to try, in search order, with the retry bookkeeping."""

    queue: list[Fix]
    attempts: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)  # key -> id of its dropped try, until retried
    retry: dict[str, str] = field(default_factory=dict)  # key -> id of the dropped try it repeats

    @classmethod
    def of(cls, fixes: list[Fix]) -> Search:
        return cls(search_order(fixes))

    def next(self) -> Fix | None:
        """The next fix to try, or None when the search is over."""
        while self.queue:
            fix = self.queue.pop(0)
            key = fix_key(fix)
            if key not in self.attempts or key in self.retry:
                self.attempts[key] = self.attempts.get(key, 0) + 1
                return fix
        return None

    def retry_of(self, fix: Fix) -> str:
        """The id of the dropped try this one repeats ("" for a first try)."""
        return self.retry.pop(fix_key(fix), "")

    def record(self, fix: Fix, dropped: bool) -> None:
        if dropped and self.attempts.get(fix_key(fix), 0) < MAX_ATTEMPTS:
            self.dropped[fix_key(fix)] = fix.id

    def after_kept(self, planned: list[Fix], modules: set[str], files: list[str]) -> list[str]:
        """Continue with the new plan; returns the ids of dropped fixes tried again because of this kept one."""
        for fix in planned:
            key = fix_key(fix)
            if key in self.dropped and touches(fix, modules, files):
                self.retry[key] = self.dropped.pop(key)
        self.queue = search_order([f for f in planned if fix_key(f) not in self.attempts or fix_key(f) in self.retry])
        return [self.retry[fix_key(f)] for f in self.queue if fix_key(f) in self.retry]
