"""What each codemod takes and what it is, without libcst: the typed arguments of one place of its edit, and
the traits plan and apply read (its effect on modules, which sets apply's search rank, and how places join).

Mechanisms, plan, model and apply import this module and never the codemods themselves (pyproject.toml's
contract names it as the one exception); a codemod names its Args class (`ARGS_TYPE`) and
tests/codemods/test_registry.py checks that the two agree.

A codemod's Args is the one declaration of its arguments: each field says what it means (`argument(help)`),
and the command's `ARGS` (what `__init__` validates and `python -m libcst.tool codemod` parses), the `args:`
list of its docstring and docs/codemods.md are derived from the fields (`command_args`, `describe`).

The JSON of a place is what plan --json shows, keys in field order, an optional field left None unwritten::

    HoistOptionsArgs(file="sim.py", function="setup", line=12).to_json()
    # {"file": "sim.py", "function": "setup", "line": 12}
"""

from __future__ import annotations

import enum
import json
import textwrap
import types
import typing
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


@dataclass(frozen=True)
class Arg:
    """One argument of a codemod command: its key in the `args` dict, how the CLI parses it, and what it means.

    Derived from the codemod's Args (`CodemodArgs.command_args`); declared by hand only for the few a command
    takes that no field holds (`CodemodArgs.COMMAND_ONLY`).
    """

    name: str
    kind: str  # "str" | "int" | "strs" (list of str) | "json" (any JSON value, given as JSON on the CLI)
    help: str
    required: bool = False
    default: Any = None


def argument(help: str, *, default: Any = MISSING, default_factory: Any = MISSING, cli_kind: str | None = None) -> Any:
    """A field of a codemod's Args with what it means: `help` is its line in the docs and the CLI's help.
    `cli_kind` overrides the kind its type gives the command (see `Arg.kind`) where the command takes the field
    in another form than the JSON (merge_modules: the JSON pairs kernels with files, one file's command names
    them)."""
    return field(default=default, default_factory=default_factory, metadata={"help": help, "cli_kind": cli_kind})


#: fields that say where a place is, not what the command does there: `by_file` turns them into the files the
#: command runs on, so they are no arguments of the command
LOCATION_FIELDS = ("file", "sites")


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
    #: arguments the command takes that no field holds: `by_file` makes them from the fields
    COMMAND_ONLY: ClassVar[tuple[Arg, ...]] = ()

    @classmethod
    def command_args(cls) -> tuple[Arg, ...]:
        """The command's arguments for one file: every field but the location, in field order (required when
        the field has no default; its default, or its default factory's value, otherwise), then `COMMAND_ONLY`."""
        hints = typing.get_type_hints(cls)
        derived = tuple(
            Arg(f.name, f.metadata["cli_kind"] or _cli_kind(hints[f.name]), f.metadata["help"], _required(f),
                _default(f))
            for f in fields(cls)
            if f.name not in LOCATION_FIELDS
        )
        return derived + cls.COMMAND_ONLY

    @classmethod
    def describe(cls) -> str:
        """The `args:` list of the codemod's docstring and docs: each field with its type and meaning, then the
        arguments only the command takes."""
        lines = ["args:"]
        for f in fields(cls):
            lines += _item(f"{f.name} ({_shown_type(f)})", f.metadata["help"])
        if cls.COMMAND_ONLY:
            lines.append("args of the command alone (one file's, made by `by_file`):")
            for a in cls.COMMAND_ONLY:
                lines += _item(f"{a.name} ({a.kind}{'' if a.required else ', optional'})", a.help)
        return "\n".join(lines)

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


def _default(f: Any) -> Any:
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None if f.default is MISSING else f.default


def _cli_kind(annotation: Any) -> str:
    """The kind of CLI argument a field's type asks for: str and int as such, a list of str as several values,
    anything else as JSON."""
    options = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(options) == 1:
        annotation = options[0]
    if annotation in (str, int):
        return annotation.__name__
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return "strs"
    return "json"


#: the names of this module's type aliases, as a reader of the docs knows their values
_SHOWN_ALIASES = {"Options": "dict", "OptionValue": "JSON value"}


def _shown_type(f: Any) -> str:
    """`str`, `list[str], optional`, `str, default "module"`: the field's type as written, and its default."""
    written = str(f.type).removesuffix(" | None")
    written = _SHOWN_ALIASES.get(written, written)
    if _required(f):
        return written
    default = _default(f)
    return f"{written}, optional" if default is None else f"{written}, default {json.dumps(default)}"


def _item(head: str, help: str) -> list[str]:
    return textwrap.wrap(f"{head}: {help}", width=108, initial_indent="  ", subsequent_indent="    ")


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

    file: str = argument("path of the file that owns the module (relative to the repo root).")
    function: str = argument("name of the `def` holding the call (methods and nested defs too).")
    module: str | None = argument(
        'Warp module name; the module-scope statement becomes `wp.get_module("<module>").options.update({...})`. '
        "Default: keep the call as written (`wp.set_module_options` targets this file's Python module, as it did "
        "in the function).",
        default=None,
    )
    line: int | None = argument("hoist only the call starting on this line (default: all in the body).", default=None)


@dataclass(frozen=True, kw_only=True)
class ConfigAtEntryArgs(CodemodArgs):
    """Set `wp.config.<name> = value` in the entry point, above the statement that created its targets (moving a
    late one at `line`)."""

    CODEMOD = "config_at_entry"
    EFFECT = Effect.SHRINKS_EACH_BUILD
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str = argument("the entry-point file (relative to the repo root).")
    name: str = argument('the `wp.config` attribute, e.g. "enable_backward".')
    value: OptionValue = argument("the value to assign, e.g. false.")
    before_line: int | None = argument(
        "line of the entry point's top-level statement the run showed creating the target modules (an import, an "
        "aliased import, a call); the setting goes above that statement (see Placement).",
        default=None,
    )
    before_statement: str | None = argument(
        'that line\'s source as the run read it, e.g. "import pkg as p": the statement is found by it where an '
        "earlier edit moved it; one that matches no statement is refused.",
        default=None,
    )
    line: int | None = argument("line of a late `wp.config.<name> = ...` assignment to move.", default=None)

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

    file: str = argument("the file (relative to the repo root).")
    factory: str = argument("name of the factory `def`.")
    kernels: list[str] = argument("names of the kernel `def`s in the factory (not in its nested defs/classes).")
    module: str | None = argument(
        'named Warp module replacing `module="unique"` / a `module=` parameter.', default=None
    )

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

    file: str = argument("the file (relative to the repo root).")
    names: list[str] = argument("kernel and/or factory function names.")
    module: str = argument(
        "the named Warp module to use instead; \"\" for the kernel's own file's module: the keyword is removed, so "
        "a script's kernel joins `__main__`, the name its module has when run."
    )


@dataclass(frozen=True, kw_only=True)
class SplitByBlockDimArgs(CodemodArgs):
    """Give each kernel of `groups` the module of its group, carrying the old module's `options`."""

    CODEMOD = "split_by_block_dim"
    EFFECT = Effect.SPLITS_A_MODULE
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str = argument("the file (relative to the repo root).")
    groups: dict[str, str] = argument(
        'kernel function name -> group (named Warp module), e.g. {"integrate": "sim_bd256", "reduce": "sim_bd64"}.'
    )
    options: Options = argument(
        'literal options of the old module to carry to each group, e.g. {"fast_math": true}.', default_factory=dict
    )


@dataclass(frozen=True, kw_only=True)
class SplitByOptionsArgs(CodemodArgs):
    """Move `kernels` into a new named `module` built with `options`."""

    CODEMOD = "split_by_options"
    EFFECT = Effect.SPLITS_A_MODULE
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str = argument("the file (relative to the repo root).")
    kernels: list[str] = argument("kernel function names in that file.")
    module: str = argument("the new named Warp module.")
    options: Options = argument('its options, e.g. {"enable_mathdx_gemm": false, "enable_backward": false}.')


@dataclass(frozen=True, kw_only=True)
class MergeModulesArgs(CodemodArgs):
    """Give `kernels`, (file, kernel name) pairs across files, one named `module`."""

    CODEMOD = "merge_modules"
    EFFECT = Effect.MERGES_MODULES
    JOINS_LIST = "kernels"
    ONE_PLACE_PER_CALL = False

    kernels: list[tuple[str, str]] = argument(
        '(file, kernel name) pairs, e.g. [["pkg/a.py", "k1"], ["pkg/b.py", "k2"]]; in the JSON also kernel names '
        "of one `file` given beside them. The command, run on one file, takes that file's kernel names.",
        cli_kind="strs",
    )
    module: str = argument("the shared named Warp module.")

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

    file: str = argument("the file (relative to the repo root).")
    kernel: str = argument("name of the generic kernel (module-level unless `factory` is given).")
    overloads: list[list[str] | dict[str, str | list[str]]] = argument(
        "one entry per instance; each is either a list of type expressions (one per kernel parameter, written "
        'with `wp.`; rewritten to the file\'s alias), e.g. ["wp.array(dtype=wp.float32)", "wp.float32"], or a '
        'dict {"types": <list or {param: type}>, "name": "<variable name>"} (name optional; default '
        "`<kernel>_<type identifiers>`, a matrix or vector type with no named spelling read as `mat31`, `vec5`; "
        "not with `factory`)."
    )
    factory: str | None = argument("name of the function whose body defines the kernel.", default=None)


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

    COMMAND_ONLY = (
        Arg("lines", "json", "1-based lines of the statements to remove, as in the unmodified file.", required=True),
    )

    sites: tuple[FileLine, ...] = argument(
        'the statements to remove; in the JSON, `file` and `lines` (one file\'s), or `sites` ([{"file": str, '
        '"line": int}, ...]) across files.'
    )
    protected_functions: list[str] = argument(
        "maintenance functions that must keep clearing.", default_factory=list
    )
    helpers: list[str] | None = argument(
        "functions, possibly imported, that make a per-run cache directory (`wp.config.kernel_cache_dir = "
        "helper()`); same-file helpers are recognised anyway.",
        default=None,
    )

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

    file: str = argument("the entry-point file (relative to the repo root).")
    modules: list[str] = argument("Warp module names to preload (never empty: `modules=None` loads all).")
    device: str = argument('device to build for, e.g. "cuda:0".')
    max_workers: int | None = argument("worker threads; default len(modules).", default=None)
    block_dims: dict[str, int] | None = argument(
        "module name -> the one block_dim it is launched at.", default=None
    )
    before_line: int | None = argument(
        "line of the first launch; the statements go right before it.", default=None
    )
    function: str | None = argument(
        "function whose body starts with the statements (when no line).", default=None
    )


@dataclass(frozen=True, kw_only=True)
class CpuMaxWorkersArgs(CodemodArgs):
    """Build one module at a time in the CPU loads at `lines` (every one of the file's, if not given)."""

    CODEMOD = "cpu_max_workers"
    EFFECT = Effect.OVERLAPS_BUILDS
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    file: str = argument("the file (relative to the repo root).")
    lines: list[int] | None = argument(
        "lines where the calls start; default: every such call in the file except those whose `device` is a "
        "literal CUDA device.",
        default=None,
    )


@dataclass(frozen=True, kw_only=True)
class ModuleOptionsArgs(CodemodArgs):
    """Set the literal `options` of the file's module (the string-named `module`, or `kernel`'s unique one);
    `replace` changes a conflicting value in place instead of refusing."""

    CODEMOD = "module_options"
    EFFECT = Effect.SHRINKS_EACH_BUILD
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = True  # one edit per module; the modules of one file are one commit

    file: str = argument(
        "the file (relative to the repo root): the one that owns the module, that defines the named module's "
        "kernels, or that defines the unique kernel."
    )
    module: str | None = argument('the string-named Warp module, e.g. "solver.prepare".', default=None)
    kernel: str | None = argument(
        'the function name of a `module="unique"` kernel (its def, or the function passed to '
        "`wp.kernel(fn, ...)`).",
        default=None,
    )
    options: Options = argument(
        'literal options, e.g. {"enable_backward": false} or {"enable_mathdx_gemm": false}.'
    )
    replace: bool | None = argument(
        "change a key that is already set to another value, in place (e.g. `enable_mathdx_gemm` forced on); "
        "without it such a conflict is refused.",
        default=None,
    )

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

    file: str = argument("the file holding the call (relative to the repo root).")
    line: int = argument("a 1-based line the call spans (its first line, or the line of the keyword).")
    callee: str = argument("the called name as written (`make_filter`, `filters.make_filter`) or its last part.")
    keyword: str = argument('the keyword argument to change, e.g. "enable_backward".')
    value: OptionValue = argument("the new literal value, e.g. false.")

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, kw_only=True)
class FactorySetArgs(CodemodArgs):
    """Make `class_name`'s kernels of `factory` before its first launch, in the one named `module`.

    In `file`, the `callee(...)` call on `line` (inside the `for` loop of `method` that launches what it makes)
    becomes `self.<attribute>[<loop variable>]`, a dict `class_name.__init__` builds over the loop's values with
    `module=<module>`; in `factory_file`, `factory` gains the keyword `parameter` (default "unique", so its other
    callers keep a module per kernel) and passes it to the `wp.kernel` that made `module="unique"`. `values`: what
    `__init__` iterates when the loop's own iterable is a parameter standing for it.
    """

    CODEMOD = "factory_set"
    EFFECT = Effect.MERGES_MODULES
    JOINS_LIST = None
    ONE_PLACE_PER_CALL = False

    COMMAND_ONLY = (
        Arg(
            "edit", "str", 'what this file gets: "loop" (the class), "factory", or "both" (one file holds both).',
            default="both",
        ),
    )

    file: str = argument("the file of the class (relative to the repo root).")
    class_name: str = argument("the class whose method's `for` loop launches the kernels.")
    method: str = argument("the method holding the loop.")
    line: int = argument("a line the factory call spans (in that loop).")
    callee: str = argument("the called name as written (`make_filter`, `filters.make_filter`).")
    attribute: str = argument("the name of the dict the constructor builds (`_filter_kernels`).")
    module: str = argument("the named Warp module the class's kernels share.")
    factory_file: str = argument("the file defining the factory (relative to the repo root).")
    factory: str = argument("the factory function.")
    parameter: str = argument("the factory's keyword parameter for the module.", default="module")
    values: str = argument(
        "the loop's values as `__init__` holds them (`self.orders`), when the loop runs over a parameter of its "
        "method that every call fills with them; empty: the loop's own iterable.",
        default="",
    )

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
