"""The structural verdict of a plan: what it decided, in the original fixture's coordinates, compared as data.

Which mechanisms fire; which fixes, with which codemod, safety, target modules and places; what is left alone
and why. Paths and lines of a variant's plan are mapped back through the variant's line maps. Prose is not
compared, with one exception: the reason a mechanism leaves something alone is the verdict itself, so it is
compared with its file:line places and renamed names mapped, and its measured numbers (and unique modules' hash
suffixes) blanked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from warp_fix.model import NOT_APPLICABLE, Plan

# (path, line) of a variant -> (path, line) of the original; the identity for the original's own plan.
PlaceMap = Callable[[str, "int | None"], "tuple[str, int | None | str]"]

_PLACE = re.compile(r"(?P<path>[\w./-]+\.py)(:(?P<line>\d+))?")
_UNIQUE_SUFFIX = re.compile(r"\b(?P<key>\w+?)_[0-9a-f]{8}\b")
_NUMBER = re.compile(r"\d[\d,]*(\.\d+)?")
_LINE_KEYS = ("line", "before_line")


def same_place(path: str, line: int | None) -> tuple[str, int | None | str]:
    return path, line


def unique_module(name: str) -> str:
    """`sum_kernel_f099199d` -> `sum_kernel_*`: a unique module's hash moves with any edit of its source."""
    return _UNIQUE_SUFFIX.sub(r"\g<key>_*", name)


def renamed(text: str, names: Mapping[str, str]) -> str:
    """`text` with every name a transformation gave read back as the original's (`pkg._src.x` -> `pkg.x`)."""
    for variant_name, original_name in names.items():
        text = text.replace(variant_name, original_name)
    return text


def _mapped_args(value: object, place: PlaceMap, names: Mapping[str, str]) -> object:
    """A codemod's JSON arguments with every file and line in original coordinates (a string that is a variant's
    file, wherever it sits, as `[["src/pkg/a.py", "kernel"], ...]`, names the original file; a module a
    transformation renamed reads by its original name)."""
    if isinstance(value, list | tuple):
        return [_mapped_args(item, place, names) for item in value]
    if isinstance(value, str):
        return renamed(place(value, None)[0], names)
    if not isinstance(value, dict):
        return value
    out = {key: _mapped_args(item, place, names) for key, item in value.items()}
    path = value.get("file")
    if isinstance(path, str):
        out["file"] = place(path, None)[0]
        for key in _LINE_KEYS:
            if isinstance(value.get(key), int):
                out[key] = place(path, value[key])[1]
        if isinstance(value.get("lines"), list):
            out["lines"] = [place(path, line)[1] for line in value["lines"]]
    return out


def _mapped_text(text: str, place: PlaceMap, names: Mapping[str, str]) -> str:
    text = renamed(text, names)

    def one(match: re.Match[str]) -> str:
        if match["line"] is None:
            return place(match["path"], None)[0]
        path, line = place(match["path"], int(match["line"]))
        return f"{path}:{line}"

    marked = _PLACE.sub(lambda m: f"\0{one(m)}\0", text)
    parts = marked.split("\0")  # odd parts are places: their line numbers are compared, the rest's are not
    return "".join(p if i % 2 else _NUMBER.sub("#", unique_module(p)) for i, p in enumerate(parts))


@dataclass(frozen=True)
class FixVerdict:
    slug: str
    codemod: str | None
    safety: str
    targets: tuple[str, ...]
    args: str  # the codemod's arguments as canonical JSON, in original coordinates
    lines: tuple[str, ...]


@dataclass(frozen=True)
class LeftAlone:
    slug: str
    status: str
    reason: str


@dataclass(frozen=True)
class Verdict:
    findings: tuple[tuple[str, str], ...]  # (mechanism, status)
    fixes: tuple[FixVerdict, ...]
    left_alone: tuple[LeftAlone, ...]

    @classmethod
    def of(cls, plan: Plan, place: PlaceMap = same_place, names: Mapping[str, str] | None = None) -> Verdict:
        """The plan's verdict, its places read through `place` and the names a transformation gave (in reasons,
        fixes' targets and arguments) through `names`. A mechanism that does not apply to the run keeps its status
        only: its reason describes the platform, with measured figures (the slowest module) that differ between two
        runs of one program."""
        names = names or {}
        fixes = tuple(
            FixVerdict(
                fix.slug,
                fix.codemod,
                str(fix.safety),
                tuple(sorted(unique_module(renamed(t, names or {})) for t in fix.targets)),
                unique_module(json.dumps(_mapped_args(fix.args_json(), place, names or {}), sort_keys=True)),
                tuple(":".join(map(str, place(*_split(line)))) for line in fix.lines),
            )
            for fix in plan.fixes
        )
        left = tuple(
            LeftAlone(n.slug, n.status, "" if n.status == NOT_APPLICABLE else _mapped_text(n.reason, place, names))
            for n in plan.not_proposed
        )
        return cls(tuple((f.slug, f.status) for f in plan.findings), fixes, left)

    def differences(self, other: Verdict) -> list[str]:
        """One line per thing `other` (a variant's) decides differently: empty when the verdicts agree."""
        found: list[str] = []
        for (slug, status), (_, theirs) in zip(self.findings, other.findings):
            if status != theirs:
                found.append(f"{slug}: {status} -> {theirs}")
        for label, mine, their in (("fix", self.fixes, other.fixes), ("left alone", self.left_alone, other.left_alone)):
            found += [f"{label} only in the original: {item}" for item in mine if item not in their]
            found += [f"{label} only in the variant: {item}" for item in their if item not in mine]
        return found

    def mechanisms(self) -> set[str]:
        """The mechanisms this verdict concerns: those that fired."""
        return {slug for slug, status in self.findings if status == "fired"}


def _split(place: str) -> tuple[str, int | None]:
    path, _, line = place.rpartition(":")
    return (path, int(line)) if line.isdigit() else (place, None)
