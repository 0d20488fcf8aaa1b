"""The codemods' Python API: the registry, and running a command on files or on one source text."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext

from ._base import Arg, CodemodRefused, Example, Note, Refusal, WarpCodemod
from ._partial import reduce_source
from .call_site_argument import CallSiteArgument
from .config_at_entry import ConfigAtEntry
from .cpu_max_workers import CpuMaxWorkers
from .drop_unique import DropUnique
from .factory_set import FactorySet
from .hoist_options import HoistOptions
from .keep_cache import KeepCache
from .kernels_to_module_scope import KernelsToModuleScope
from .merge_modules import MergeModules
from .module_options import ModuleOptions
from .preload import Preload
from .register_overloads import RegisterOverloads
from .specs import GENERATED_MARKER, CodemodArgs, places_from_json
from .split_by_block_dim import SplitByBlockDim
from .split_by_options import SplitByOptions

REGISTRY: dict[str, type[WarpCodemod]] = {
    cls.NAME: cls
    for cls in (
        HoistOptions,
        ConfigAtEntry,
        KernelsToModuleScope,
        DropUnique,
        SplitByBlockDim,
        SplitByOptions,
        MergeModules,
        RegisterOverloads,
        KeepCache,
        Preload,
        CpuMaxWorkers,
        ModuleOptions,
        CallSiteArgument,
        FactorySet,
    )
}


def _command(name: str) -> type[WarpCodemod]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise CodemodRefused(f"unknown codemod {name!r}; known: {sorted(REGISTRY)}") from None


def _run(cls: type[WarpCodemod], source: str, kwargs: dict[str, Any], filename: str | None) -> tuple[str, list[Note]]:
    """Run on the reduced module of a large file when that round-trips exactly; else on the whole file."""
    reduced = reduce_source(source, cls.focus(kwargs))
    if reduced is not None:
        try:
            text, notes = _transform(cls, reduced.text, kwargs, filename, reduced.elided_text)
            restored = reduced.restore(text)
        except CodemodRefused:
            restored = None  # refuse (or not) on the whole file, so the message names real code
        if restored is not None:
            return restored, notes
    return _transform(cls, source, kwargs, filename)


def _transform(
    cls: type[WarpCodemod], source: str, kwargs: dict[str, Any], filename: str | None, elided_text: str = ""
) -> tuple[str, list[Note]]:
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise CodemodRefused(f"{cls.NAME}: {filename or 'source'} does not parse: {exc.message}") from None
    command = cls(CodemodContext(filename=filename), **kwargs)
    command.elided_text = elided_text
    return command.code_of(command.transform_module(tree)), command.notes


def transform_source(name: str, source: str, args: Mapping[str, Any]) -> str:
    """Pure: the source text after codemod `name` with `args` (its JSON; the file it names is `source`)."""
    return transform_source_with_notes(name, source, args)[0]


def transform_source_with_notes(name: str, source: str, args: Mapping[str, Any]) -> tuple[str, list[Note]]:
    """`transform_source`, and the notes the codemod reports (leftovers for the commit body)."""
    cls = _command(name)
    notes: list[Note] = []
    for place in places_from_json(name, {"file": "", **args}):
        for kwargs in place.by_file().values():
            source, more = _run(cls, source, kwargs, None)
            notes += more
    return source, notes


@dataclass
class CodemodResult:
    """What `run_codemod` did: the files it changed, and what it reports for the commit body."""

    changed: list[pathlib.Path] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # each with `file` set, relative to the root


def run_codemod(
    name: str,
    root: pathlib.Path,
    args: Mapping[str, Any] | Sequence[CodemodArgs],
    refuse: Callable[[str], str | None] | None = None,
) -> CodemodResult:
    """Apply codemod `name` at its places, in files under repo `root` (file paths relative to root).

    A file carrying the generated-code marker (`GENERATED_MARKER`, as libcst's own tool) is refused, and so is
    any file `refuse` (given a repo-relative path) names a reason for: the caller's scope (warp-fix passes its
    plan's: installed packages, in-repo virtualenvs, protected paths).

    `args` are the places (a planned Fix's), or their JSON: one place, or `{"each": [place, ...]}`. Several
    places make the same edit at each (one factory, one call site each) as one change: the calls run in order,
    each on the text the previous one left, and nothing is written unless all of them succeed. `changed` is
    empty if nothing was left to change (idempotent). Raises CodemodRefused; when it does, no file has been
    written.
    """
    cls = _command(name)
    places = places_from_json(name, args) if isinstance(args, Mapping) else tuple(args)
    if not places:
        raise CodemodRefused(f"{name}: no place to edit")
    root = pathlib.Path(root).resolve()
    original: dict[pathlib.Path, str] = {}
    edited: dict[pathlib.Path, str] = {}
    notes: list[Note] = []
    for place in places:
        if not isinstance(place, cls.ARGS_TYPE):
            raise CodemodRefused(f"{name}: a place of {place.CODEMOD} is not one of {name}")
        for rel, kwargs in place.by_file().items():
            path = (root / rel).resolve()
            if not path.is_relative_to(root):
                raise CodemodRefused(f"{name}: {rel} is outside the repository {root}")
            if not path.is_file():
                raise CodemodRefused(f"{name}: no such file {rel}")
            why = refuse(rel) if refuse is not None else None
            if why is not None:
                raise CodemodRefused(f"{name}: {rel} is not edited: {why}")
            source = edited.get(path) or original.setdefault(path, path.read_text(encoding="utf-8"))
            if GENERATED_MARKER in source:
                raise CodemodRefused(f"{name}: {rel} is a generated file (it carries {GENERATED_MARKER})")
            new, file_notes = _run(cls, source, kwargs, str(path))
            notes += [replace(n, file=rel) for n in file_notes]
            edited[path] = new
    results = [(path, new) for path, new in edited.items() if new != original[path]]
    for path, new in results:
        compile(new, str(path), "exec")
    for path, new in results:
        path.write_text(new, encoding="utf-8")
    return CodemodResult([path for path, _ in results], notes)


def apply_codemod(
    name: str,
    root: pathlib.Path,
    args: Mapping[str, Any] | Sequence[CodemodArgs],
    refuse: Callable[[str], str | None] | None = None,
) -> list[pathlib.Path]:
    """`run_codemod(...).changed`: the files changed (empty if nothing to change)."""
    return run_codemod(name, root, args, refuse).changed


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
