"""warp-fix codemods: libcst commands that apply one planned fix each, from explicit arguments.

The planner decides *what* to change; a codemod only does *how*, and raises `CodemodRefused` when its
preconditions do not hold. Every command is runnable standalone::

    python -m libcst.tool codemod hoist_options.HoistOptions sim.py --function setup

and from Python through `apply_codemod` / `transform_source` (see docs/codemods.md for each `args`).
What each takes and is (its typed Args and traits) lives in `codemods.specs`, which imports no libcst; the
API below loads libcst and every command on first use, so importing the specs alone stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import (
        REGISTRY,
        Arg,
        CodemodRefused,
        CodemodResult,
        Example,
        Note,
        Refusal,
        WarpCodemod,
        apply_codemod,
        run_codemod,
        transform_source,
        transform_source_with_notes,
    )

__all__ = [
    "REGISTRY",
    "Arg",
    "CodemodRefused",
    "CodemodResult",
    "Example",
    "Note",
    "Refusal",
    "WarpCodemod",
    "apply_codemod",
    "run_codemod",
    "transform_source",
    "transform_source_with_notes",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
