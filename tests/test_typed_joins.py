"""What crosses a stage is a type: no field of the data types that join the stages holds `dict[str, Any]`, a bare
`dict`, or `Any` (the walk follows every dataclass they reach, each mechanism's facts and each codemod's Args)."""

from __future__ import annotations

import dataclasses
import typing

from codemods.specs import ARGS_TYPES
from warp_fix.apply.ledger import Ledger
from warp_fix.bake.manifest import Manifest
from warp_fix.check import CheckResult
from warp_fix.compare import Comparison
from warp_fix.mechanisms import MECHANISMS
from warp_fix.model import Plan
from warp_fix.report import Report


def facts_types() -> list[type]:
    found = []
    for mechanism in MECHANISMS:
        for base in getattr(type(mechanism), "__orig_bases__", ()):
            found += [arg for arg in typing.get_args(base) if dataclasses.is_dataclass(arg)]
    return found


ROOTS = [Report, Plan, Ledger, Comparison, CheckResult, Manifest, *facts_types(), *ARGS_TYPES.values()]


def untyped_fields() -> list[str]:
    seen: set[type] = set()
    found: list[str] = []
    todo = list(ROOTS)
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            hint = hints[f.name]
            found += [f"{cls.__module__}.{cls.__name__}.{f.name}: {problem}" for problem in _problems(hint)]
            todo += [t for t in _types_in(hint) if dataclasses.is_dataclass(t) and t not in seen]
    return found


def _types_in(hint) -> list:
    args = typing.get_args(hint)
    return [hint, *(t for arg in args for t in _types_in(arg))]


def _problems(hint) -> list[str]:
    problems = []
    for part in _types_in(hint):
        if part is typing.Any:
            problems.append("Any")
        elif part is dict:
            problems.append("a bare dict")
        elif typing.get_origin(part) is dict and typing.get_args(part)[1:] == (typing.Any,):
            problems.append(f"{part}")
    return sorted(set(problems))


def test_the_types_that_cross_a_stage_hold_no_untyped_mapping_or_any():
    assert untyped_fields() == []


def test_the_walk_reaches_the_joins():
    assert len(facts_types()) == len(MECHANISMS)

