"""What each codemod takes and what it is, without libcst: the typed arguments of one place of its edit, and
the traits plan and apply read (its effect on modules, which sets apply's search rank, and how places join).

Mechanisms, plan, model and apply import this module and never the codemods themselves (pyproject.toml's
contract names it as the one exception); a codemod names its Args class (`ARGS_TYPE`) and
tests/codemods/test_registry.py checks that the two agree.

The JSON of a place is what plan --json shows, keys in field order, an optional field left None unwritten::

    HoistOptionsArgs(file="sim.py", function="setup", line=12).to_json()
    # {"file": "sim.py", "function": "setup", "line": 12}
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

_Args = TypeVar("_Args", bound="CodemodArgs")


# A Warp option's value as Warp holds it (`enable_backward` True, `block_dim` 256, `mode` "release",
# `optimization_level` None), and options: Warp's own mapping from name to value, typed by what it holds.
OptionValue = bool | int | float | str | None
Options = dict[str, OptionValue]


class CodemodRefused(Exception):
    """A codemod's preconditions do not hold; the message says which one, in one line."""


class Effect(enum.Enum):
    """What a fix does to modules. apply tries fixes by `rank` (warp_fix/apply/search.py says why this order)."""

    SPLITS_A_MODULE = (0, "splits a module")
    REMOVES_REBUILDS = (1, "removes rebuilds")
    ADDS_TO_A_MODULE = (2, "removes rebuilds, adds to a module")
    MERGES_MODULES = (3, "merges modules")
    SHRINKS_EACH_BUILD = (4, "shrinks each build")
    CHANGES_ONE_CALL = (5, "changes the modules one call site asks a factory for")
    OVERLAPS_BUILDS = (6, "overlaps builds in time")

    def __init__(self, rank: int, label: str) -> None:
        self.rank = rank
        self.label = label


# A file that says it is generated (libcst's own marker, `generated_code_marker` in .libcst.codemod.yaml) is never
# edited: the runner refuses it, and warp-fix's scope calls it generated.
GENERATED_MARKER = "@generated"


@dataclass(frozen=True, kw_only=True)
class CodemodArgs:
    """One place of a codemod's edit: subclasses' fields are the keys of its JSON, in the order written.

    Traits, declared by every subclass (the registry test requires them):
      CODEMOD: the codemod's name in codemods.REGISTRY.
      EFFECT: what the edit does to modules; its rank orders apply's search.
      JOINS_LIST: the list field in which a mechanism's fixes that differ only there join into one fix.
      ONE_PLACE_PER_CALL: the codemod edits one place per call, so a mechanism's fixes for one target module
        (`joins_on`) become one fix of several places, each named in its title by `where`.
    """

    CODEMOD: ClassVar[str]
    EFFECT: ClassVar[Effect]
    JOINS_LIST: ClassVar[str | None]
    ONE_PLACE_PER_CALL: ClassVar[bool]

    def to_json(self) -> dict[str, Any]:
        """The JSON plan shows and the codemod's Python API takes; optional fields left None are not written."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not _unset(self, f.name)}

    @classmethod
    def from_json(cls: type[_Args], data: Mapping[str, Any]) -> _Args:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise CodemodRefused(f"{cls.CODEMOD}: unknown argument(s) {unknown}; expected {sorted(known)}")
        missing = [f.name for f in fields(cls) if _required(f) and f.name not in data]
        if missing:
            raise CodemodRefused(f"{cls.CODEMOD}: missing required argument {missing[0]!r}")
        return cls(**data)

    def by_file(self) -> dict[str, dict[str, Any]]:
        """The codemod command's arguments for each repository-relative file the place edits."""
        kwargs = self.to_json()
        return {str(kwargs.pop("file")): kwargs}

    @property
    def named_module(self) -> str | None:
        """The Warp module the place names by argument (its `module` field), if any."""
        return getattr(self, "module", None)

    @property
    def function_names(self) -> list[str]:
        """The functions and kernels the place names (a protected `path::function` matches them)."""
        names: list[str] = []
        for key in ("function", "functions", "kernel", "kernels"):
            value = getattr(self, key, None)
            names += [value] if isinstance(value, str) else [str(v) for v in value or ()]
        return names

    @property
    def options_set(self) -> tuple[str, ...]:
        """The Warp options whose effective value the edit sets: a build must show each, with another hash, or
        the edit had no effect. None by default: an edit that moves *when* options are set, or the module layout,
        is proven by structure."""
        return ()

    def joins_on(self) -> str:
        """The target a mechanism's one-place fixes must share to join: the named module, else the file."""
        return self.named_module or str(getattr(self, "file", ""))

    def where(self) -> str:
        """The place as a reader finds it, in a joined fix's title (codemods that edit one place per call)."""
        raise NotImplementedError(f"{self.CODEMOD} edits no single place per call")


def _required(f: Any) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def _unset(args: CodemodArgs, name: str) -> bool:
    """An optional field left None: the codemod's default applies, and the JSON leaves the key out."""
    f = next(f for f in fields(args) if f.name == name)
    return getattr(args, name) is None and not _required(f)


@dataclass(frozen=True)
class FileLine:
    """A line of a repository-relative file."""

    file: str
    line: int


# --- one Args class per codemod, in the order of codemods.REGISTRY -------------------------------------------


@dataclass(frozen=True, kw_only=True)
class HoistOptionsArgs(CodemodArgs):
    """Move the options call of `function` (only the one starting on `line`, if given) to module scope."""

    CODEMOD = "hoist_options"
    EFFECT = Effect.REMOVES_REBUILDS
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    function: str
    module: str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class ConfigAtEntryArgs(CodemodArgs):
    """Set `wp.config.<name> = value` in the entry point, before `before_import` (moving a late one at `line`)."""

    CODEMOD = "config_at_entry"
    EFFECT = Effect.SHRINKS_EACH_BUILD
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    name: str
    value: OptionValue
    before_import: str | None = None
    line: int | None = None

    @property
    def options_set(self) -> tuple[str, ...]:
        return (self.name,)


@dataclass(frozen=True, kw_only=True)
class KernelsToModuleScopeArgs(CodemodArgs):
    """Move `kernels` out of `factory` to module scope (into the named `module`, if given)."""

    CODEMOD = "kernels_to_module_scope"
    EFFECT = Effect.REMOVES_REBUILDS
    JOINS_LIST = "kernels"
    ONE_PLACE_PER_CALL = True

    file: str
    factory: str
    kernels: list[str]
    module: str | None = None

    def where(self) -> str:
        return f"{self.factory}()"


@dataclass(frozen=True, kw_only=True)
class DropUniqueArgs(CodemodArgs):
    """Give the kernels and factories `names` the named `module` instead of module="unique"; `module=""` is the
    file's own module (the keyword goes: a script's module is `__main__` in its run, not its file's name)."""

    CODEMOD = "drop_unique"
    EFFECT = Effect.MERGES_MODULES
    JOINS_LIST = "names"
    ONE_PLACE_PER_CALL = False

    file: str
    names: list[str]
    module: str


@dataclass(frozen=True, kw_only=True)
class SplitByBlockDimArgs(CodemodArgs):
    """Give each kernel of `groups` the module of its group, carrying the old module's `options`."""

    CODEMOD = "split_by_block_dim"
    EFFECT = Effect.SPLITS_A_MODULE
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    groups: dict[str, str]
    options: Options = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class SplitByOptionsArgs(CodemodArgs):
    """Move `kernels` into a new named `module` built with `options`."""

    CODEMOD = "split_by_options"
    EFFECT = Effect.SPLITS_A_MODULE
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    kernels: list[str]
    module: str
    options: Options


@dataclass(frozen=True, kw_only=True)
class MergeModulesArgs(CodemodArgs):
    """Give `kernels`, (file, kernel name) pairs across files, one named `module`."""

    CODEMOD = "merge_modules"
    EFFECT = Effect.MERGES_MODULES
    JOINS_LIST = "kernels"
    ONE_PLACE_PER_CALL = False

    kernels: list[tuple[str, str]]
    module: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MergeModulesArgs:
        """Also reads kernels named in one `file`: `{"file": "ops.py", "kernels": ["add", "mul"], ...}`."""
        if "file" not in data:
            return super().from_json(data)
        kernels = [(data["file"], k) if isinstance(k, str) else k for k in data.get("kernels") or []]
        return super().from_json({**{k: v for k, v in data.items() if k != "file"}, "kernels": kernels})

    def by_file(self) -> dict[str, dict[str, Any]]:
        by_file: dict[str, dict[str, Any]] = {}
        for item in self.kernels:
            if not (isinstance(item, (list, tuple)) and len(item) == 2):
                raise CodemodRefused(f"merge_modules: kernels must be names or [file, name] pairs, got {item!r}")
            by_file.setdefault(str(item[0]), {"kernels": [], "module": self.module})["kernels"].append(item[1])
        return by_file

    @property
    def function_names(self) -> list[str]:
        return [str(name) for _, name in self.kernels]


@dataclass(frozen=True, kw_only=True)
class RegisterOverloadsArgs(CodemodArgs):
    """Register the `overloads` of the generic `kernel` (inside `factory`, if it defines the kernel)."""

    CODEMOD = "register_overloads"
    EFFECT = Effect.ADDS_TO_A_MODULE
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    kernel: str
    # one instance each: its type expressions, or {"types": [...], "name": ...} for a named one
    overloads: list[list[str] | dict[str, str | list[str]]]
    factory: str | None = None


@dataclass(frozen=True, kw_only=True)
class KeepCacheArgs(CodemodArgs):
    """Remove the cache-destroying statements at `sites`; `protected_functions` keep clearing.

    Its JSON names one file's lines (`{"file": ..., "lines": [...]}`), or the sites of several files
    (`{"sites": [{"file": ..., "line": ...}, ...]}`).
    """

    CODEMOD = "keep_cache"
    EFFECT = Effect.REMOVES_REBUILDS
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    sites: tuple[FileLine, ...]
    protected_functions: list[str] = field(default_factory=list)
    helpers: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        sites = data.pop("sites")
        files = sorted({site.file for site in sites})
        where: dict[str, Any] = (
            {"file": files[0], "lines": [site.line for site in sites]}
            if len(files) == 1
            else {"sites": [{"file": site.file, "line": site.line} for site in sites]}
        )
        return {**where, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KeepCacheArgs:
        rest = {k: v for k, v in data.items() if k not in ("file", "lines", "sites")}
        if "sites" in data:
            for site in data["sites"]:
                if not (isinstance(site, Mapping) and "file" in site and "line" in site):
                    raise CodemodRefused(f"keep_cache: a site must be {{'file': ..., 'line': ...}}, got {site!r}")
            sites = tuple(FileLine(str(s["file"]), int(s["line"])) for s in data["sites"])
        elif "file" in data and "lines" in data:
            sites = tuple(FileLine(str(data["file"]), int(line)) for line in data["lines"])
        else:
            raise CodemodRefused("keep_cache: give 'file' and 'lines', or 'sites'")
        return super().from_json({**rest, "sites": sites})

    def by_file(self) -> dict[str, dict[str, Any]]:
        by_file: dict[str, dict[str, Any]] = {}
        for site in self.sites:
            kwargs = {"lines": [], "protected_functions": self.protected_functions, "helpers": self.helpers or []}
            by_file.setdefault(site.file, kwargs)["lines"].append(site.line)
        return by_file


@dataclass(frozen=True, kw_only=True)
class PreloadArgs(CodemodArgs):
    """Preload `modules` on `device` in parallel, before the first launch (`before_line`) or atop `function`."""

    CODEMOD = "preload"
    EFFECT = Effect.OVERLAPS_BUILDS
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    modules: list[str]
    device: str
    max_workers: int | None = None
    block_dims: dict[str, int] | None = None
    before_line: int | None = None
    function: str | None = None


@dataclass(frozen=True, kw_only=True)
class CpuMaxWorkersArgs(CodemodArgs):
    """Build one module at a time in the CPU loads at `lines` (every one of the file's, if not given)."""

    CODEMOD = "cpu_max_workers"
    EFFECT = Effect.OVERLAPS_BUILDS
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    lines: list[int] | None = None


@dataclass(frozen=True, kw_only=True)
class ModuleOptionsArgs(CodemodArgs):
    """Set the literal `options` of the file's module (the string-named `module`, or `kernel`'s unique one);
    `replace` changes a conflicting value in place instead of refusing."""

    CODEMOD = "module_options"
    EFFECT = Effect.SHRINKS_EACH_BUILD
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = True  # one edit per module; the modules of one file are one commit

    file: str
    module: str | None = None
    kernel: str | None = None
    options: Options
    replace: bool | None = None

    @property
    def options_set(self) -> tuple[str, ...]:
        return tuple(self.options)

    def joins_on(self) -> str:
        """The file: backward off in four modules of one file (after a block-size split, say) reads as one edit."""
        return self.file

    def where(self) -> str:
        return self.module or (f"{self.kernel}()" if self.kernel else f"{self.file}'s module")


@dataclass(frozen=True, kw_only=True)
class CallSiteArgumentArgs(CodemodArgs):
    """Pass `keyword=value` in the call to `callee` that spans `line`."""

    CODEMOD = "call_site_argument"
    EFFECT = Effect.CHANGES_ONE_CALL
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = True

    file: str
    line: int
    callee: str
    keyword: str
    value: OptionValue

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, kw_only=True)
class FactorySetArgs(CodemodArgs):
    """Make `class_name`'s kernels of `factory` before its first launch, in the one named `module`.

    In `file`, the `callee(...)` call on `line` (inside the `for` loop of `method` that launches what it makes)
    becomes `self.<attribute>[<loop variable>]`, a dict `class_name.__init__` builds over the loop's values with
    `module=<module>`; in `factory_file`, `factory` gains the keyword `parameter` (default "unique", so its other
    callers keep a module per kernel) and passes it to the `wp.kernel` that made `module="unique"`.
    """

    CODEMOD = "factory_set"
    EFFECT = Effect.MERGES_MODULES
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str
    class_name: str
    method: str
    line: int
    callee: str
    attribute: str
    module: str
    factory_file: str
    factory: str
    parameter: str = "module"

    def by_file(self) -> dict[str, dict[str, Any]]:
        """Every argument for each file, and which `edit` is made there: the loop's class, the factory, or both."""
        kwargs = self.to_json()
        kwargs.pop("file")
        if self.factory_file == self.file:
            return {self.file: kwargs}
        return {self.file: {**kwargs, "edit": "loop"}, self.factory_file: {**kwargs, "edit": "factory"}}

    @property
    def function_names(self) -> list[str]:
        return [self.method, self.factory]


ARGS_TYPES: dict[str, type[CodemodArgs]] = {
    cls.CODEMOD: cls
    for cls in (
        HoistOptionsArgs,
        ConfigAtEntryArgs,
        KernelsToModuleScopeArgs,
        DropUniqueArgs,
        SplitByBlockDimArgs,
        SplitByOptionsArgs,
        MergeModulesArgs,
        RegisterOverloadsArgs,
        KeepCacheArgs,
        PreloadArgs,
        CpuMaxWorkersArgs,
        ModuleOptionsArgs,
        CallSiteArgumentArgs,
        FactorySetArgs,
    )
}


def places_from_json(codemod: str, data: Mapping[str, Any]) -> tuple[CodemodArgs, ...]:
    """A codemod's places from the JSON plan shows: one place, or `{"each": [place, ...]}`."""
    try:
        args_type = ARGS_TYPES[codemod]
    except KeyError:
        raise CodemodRefused(f"unknown codemod {codemod!r}; known: {sorted(ARGS_TYPES)}") from None
    return tuple(args_type.from_json(place) for place in data.get("each") or [data])


def places_to_json(places: tuple[CodemodArgs, ...]) -> dict[str, Any]:
    """The inverse of `places_from_json`: `{}` for none, one place's JSON, or `{"each": [...]}`."""
    if len(places) == 1:
        return places[0].to_json()
    return {"each": [place.to_json() for place in places]} if places else {}
