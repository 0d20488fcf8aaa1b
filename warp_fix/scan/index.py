"""The SourceIndex: what the static scan found, as JSON-serialisable dataclasses.

The diagnose and plan stages read the index (never the source) to tie a run-time
event to the line that caused it, and to tell a maintenance path from an incidental
one. Every item carries a repo-relative posix `file`, a 1-based `line`, the
`function` (Python ``__qualname__`` style) it sits in or None at module scope, and
`in_repo` (False for items from read-only library roots, which are never edited).
`docs/source-index.md` documents each field.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .serialization import from_dict

INDEX_SCHEMA_VERSION = 1


@dataclass
class Value:
    """An expression as written; `value` holds its JSON-able literal when `is_constant`."""

    source: str
    is_constant: bool
    value: Any = None


@dataclass(kw_only=True)
class Located:
    """Where an item is: file (repo-relative posix, absolute for library roots), line, enclosing function."""

    file: str
    line: int
    function: str | None = None
    in_repo: bool = True


@dataclass
class Parameter:
    """A function parameter with its default as written."""

    name: str
    default: Value | None = None
    annotation: str | None = None


@dataclass(frozen=True)
class OptionParameter:
    """A kernel option whose value is a parameter of the enclosing factory (`enable_backward=grad`,
    `module_options={"enable_backward": grad}`): each caller chooses it, by passing `parameter`."""

    option: str
    parameter: str


@dataclass(kw_only=True)
class KernelDef(Located):
    """One function Warp turns into a kernel. `line` is the `def` line; `decorator_line` the `@` line (or the
    `wp.kernel(fn, ...)` call's line when made by a call).

    module_kind: "default" (the Python module), "literal" (a named module), "unique",
    "parameter" (a name bound to a parameter of an enclosing factory) or "expression".
    made_by: "decorator" (`@wp.kernel`), "call" (`wp.kernel(fn, ...)`) or "project-decorator" (a project's own
    `@kernel` wrapping `wp.kernel`; codemods that edit `@wp.kernel` decorators cannot edit it).
    chosen_by: factory parameters read by the `if`/`match` that decides whether the kernel is made: a dispatch on
    run-time data, so only some runs build it (an optional kernel); `NAME[...]` for a registry's entry, and
    `select(...)` for a factory that the module-scope function `select` returns by an `if`/`match` on its
    parameter (the same registry, written as a function).
    picked_by, picked_by_file, picked_by_line: the function (its file and `def` line; a `KernelSelector`) that
    returns this module-scope kernel from a fixed `if`/`elif` on a configuration value: one of a closed set of
    alternatives, all defined at import, one picked per run (not a plugin: nothing adds to the set).
    """

    name: str
    python_module: str
    decorator_line: int
    decorator: str
    module_kind: str = "default"
    module_value: str | None = None
    module_parameter_default: Value | None = None
    module_options: Value | None = None
    enable_backward: Value | None = None
    at_module_scope: bool = True
    enclosing_functions: list[str] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)
    is_generic: bool = False
    generic_parameters: list[str] = field(default_factory=list)
    made_by: str = "decorator"
    chosen_by: list[str] = field(default_factory=list)
    picked_by: str | None = None
    picked_by_file: str | None = None
    picked_by_line: int | None = None
    option_parameters: list[OptionParameter] = field(default_factory=list)

    def parameter_for(self, option: str) -> str | None:
        """The factory parameter that carries `option`, if a caller chooses it."""
        return next((p.parameter for p in self.option_parameters if p.option == option), None)

    @property
    def module_from_parameter(self) -> bool:
        return self.module_kind == "parameter"


@dataclass(kw_only=True)
class KernelSelector(Located):
    """A module-scope function whose every `return` gives a module-scope kernel by name, at least one inside an
    `if`/`elif` (or `case`) whose test compares names with constants: it picks one of a closed set by configuration.
    `kernels` are the qualified names it returns (`pkg.edges.clamp_edges`), in order, duplicates removed; the
    scan links them to their `KernelDef`s (`picked_by`) when every one is a module-scope kernel of the index."""

    name: str
    kernels: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class FuncDef(Located):
    """One `@wp.func` (or `func_native` / `func_grad` / `func_replay`) definition."""

    name: str
    python_module: str
    kind: str = "func"
    decorator_line: int = 0
    module: Value | None = None
    at_module_scope: bool = True
    is_generic: bool = False


@dataclass(kw_only=True)
class FactoryFunction(Located):
    """A function that defines kernels inside it; `function` is where the factory itself sits."""

    name: str
    qualname: str  # `Solver.build`, `outer.<locals>.make`
    python_module: str
    function_path: str = ""  # enclosing function names and its own, classes left out: `outer.make`
    parameters: list[Parameter] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    returns: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)


@dataclass(kw_only=True)
class OptionCall(Located):
    """A module-options change: `set_module_options`, `get_module(..).options.update` or `[key] = v`.

    target_module is the Warp module name when known statically (the calling file's
    Python module for `set_module_options` without `module=`), else None.
    """

    kind: str
    target_module: str | None
    target_source: str | None
    options_source: str
    is_dict_literal: bool
    is_constant: bool
    values: dict[str, Any] = field(default_factory=dict)
    non_constant_keys: list[str] = field(default_factory=list)
    at_module_scope: bool = True


@dataclass(kw_only=True)
class ConfigAssignment(Located):
    """`wp.config.<key> = value`, with the project imports around it.

    first_project_import_before/after: line of the earliest import of a project module
    (in-repo or relative) before / after this assignment in the same file.
    """

    key: str
    value: Value
    at_module_scope: bool = True
    first_project_import_before: int | None = None
    first_project_import_after: int | None = None


@dataclass(kw_only=True)
class CacheOperation(Located):
    """Something that defeats cache reuse; the guard tells a maintenance path from an incidental one.

    kind: "clear_kernel_cache", "clear_lto_cache", "config.cache_kernels",
    "config.kernel_cache_dir", "env.<NAME>" (CUDA_CACHE_DISABLE, CUDA_CACHE_PATH,
    WARP_CACHE_PATH, ...), or "rmtree.kernel_cache_dir".
    """

    kind: str
    value: Value | None = None
    function_doc: str | None = None
    guards: list[str] = field(default_factory=list)
    maintenance_guard: str | None = None


@dataclass(kw_only=True)
class PreloadCall(Located):
    """`wp.force_load(...)` or `wp.load_module(...)`."""

    kind: str
    device: Value | None = None
    max_workers: Value | None = None
    block_dim: Value | None = None
    modules: Value | None = None


@dataclass(kw_only=True)
class OverloadCall(Located):
    """`wp.overload(kernel, types)` (form "call") or `@wp.overload def k(...)` (form "decorator")."""

    kernel: str
    types: str | None
    form: str = "call"


@dataclass(frozen=True)
class TypedCall:
    """`receiver.method(...)` where the scan knows what `receiver` is, by `kind`, then `attribute`:

    - "instance": an instance of exactly the class `of` (qualified: `pkg.solver.Solver`), made where the call can
      see it (`Solver(model).step()`, or `solver.step()` after the function's one binding `solver = Solver(model)`;
      a literal's builtin class); or, where `of` is a function, what it returns (`FunctionCalls.returns`);
    - "declared": a parameter the function never rebinds, annotated with the class `of`: an instance of it or of
      any subclass;
    - "self": `self` in a method of the class `of`: an instance of it or of any subclass;
    - "super": `super()` in a method of the class `of`: the method after `of` in the instance's class hierarchy;
    - "class": the class `of` itself (`Base.reset(self)`, `object.__setattr__(self, ...)`): its own lookup;
    - "argument": an unannotated parameter (the first part of `attribute`) of the function `of` (qualified):
      what every call of that function passes there (`PassedArguments`).

    `attribute`: the attributes read on the way, dotted (`self.model.grid.build()`: "model.grid"), each holding
    what the hierarchy's own methods store there or its class bodies annotate.
    """

    method: str
    kind: str
    of: str
    attribute: str = ""


@dataclass(frozen=True)
class ValueType:
    """What a value passed as an argument is, read as a receiver is (`TypedCall`'s kinds, `attribute` the path)."""

    kind: str
    of: str
    attribute: str = ""


@dataclass(frozen=True)
class Argument:
    """One argument of a call: at `position` among the positional ones, or as `keyword`; `value` when the scan can
    type it, `function` (a qualname of the call's file) when it names a function of that file (a callback),
    `methods` when it is one of these bound methods (`view.get_positions`, each as the call it makes), `warp` when
    it names a function of Warp's API (`launch` for `wp.launch`): Warp's code, which runs no project function."""

    position: int | None = None
    keyword: str | None = None
    value: ValueType | None = None
    function: str = ""
    methods: list[TypedCall] = field(default_factory=list)
    warp: str = ""


@dataclass
class PassedArguments:
    """A call, by the name `name`, of a function defined in the caller's own file, with what it passes: the walk
    types a parameter from every call of its function. `function`: the qualname the call runs, "" when the scan
    cannot tell which; `bound`: called through an attribute (`self.update(...)`: the instance is the first
    parameter); `opaque`: `*args` or `**kwargs` passed, so any parameter may get anything."""

    name: str
    line: int
    function: str = ""
    bound: bool = False
    opaque: bool = False
    arguments: list[Argument] = field(default_factory=list)


@dataclass
class ClassMember:
    """A name a class body binds. `function`: the qualname (in the class's file) of the function a call of it
    through an instance runs (a method, `step = _Tank_step`); None for anything else (a property, a value, a
    nested class): a call of that cannot be followed to one function."""

    name: str
    function: str | None = None
    # for an annotated name (`solver: Solver`, a dataclass field): the class its annotation names, which instances
    # hold there (an instance of it or of a subclass)
    declared: str | None = None


@dataclass(kw_only=True)
class ClassInfo(Located):
    """A class at module scope (or nested in such a class): its bases, qualified, and what its body binds."""

    name: str  # qualname in its file: `Solver`, `Solver.Config`
    python_module: str
    # each base's qualified name, absolute (`pkg.base.SolverBase`, `torch.nn.Module`); "" for a base that is not a
    # name the file's imports or its own classes give (a call, a parameter): its methods are unknown
    bases: list[str] = field(default_factory=list)
    members: list[ClassMember] = field(default_factory=list)

    @property
    def qualified(self) -> str:
        return f"{self.python_module}.{self.name}"


@dataclass
class ModuleName:
    """A name a module binds at its top level (also under `if`/`try`, `if TYPE_CHECKING:` included), as another
    module's `from m import name` or `m.name` reaches it: `target` is the qualified name an import binds it to
    (`Base` -> `pkg.solver.Solver` for `from .solver import Solver as Base` in `pkg/__init__.py`), a class's or a
    function's own, the imported module for a star import (`name` "*"), or "" for a name bound otherwise (assigned):
    not followed."""

    name: str
    target: str


@dataclass(kw_only=True)
class AttributeStore(Located):
    """A store to (or deletion of) an attribute: `obj.attribute = value`, `setattr(obj, "attribute", value)`.
    Only a few shapes say what the attribute then holds: the walk types `self.attribute` from them."""

    attribute: str
    owner: str | None = None  # qualified class whose method stores it on `self`; None: on another object
    # for a store on another object the scan can type (`m.solver = ...` after `m = Model()` in a builder): its class,
    # exactly (`on_exact`: made there) or with its subclasses (a parameter by its annotation)
    on: str | None = None
    on_exact: bool = False
    # qualified class the value is an instance of, itself or a subclass (a constructor call, a parameter by its
    # annotation; a literal's builtin type: `builtins.dict`, `builtins.NoneType`); None: anything else
    value: str | None = None
    exact: bool = False  # the value is made there (a constructor call, a literal): of exactly that class
    # the qualified names the value is read from, when it is one of them (`kernels.diffuse_clamped if clamp else
    # kernels.diffuse`): the kernels a launch of `self.<attribute>` can run; empty for any other value
    names: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class ValueRead(Located):
    """A project name a file reads as a value (stores, passes, returns, puts in a container), qualified
    (`pkg.kernels.gather_2d`), at its first such read in the file; a launch's kernel and a call are not such reads
    (`warp_fix.scan.collectors.values`)."""

    target: str


@dataclass
class TapeBlock:
    """The body of one `with tape:` (lines `first` to `last`) and the names it calls: what the tape records.
    `yields`: the body yields (a `@contextmanager` recording its caller's `with` block)."""

    first: int
    last: int
    callees: list[str] = field(default_factory=list)
    yields: bool = False
    methods: list[str] = field(default_factory=list)  # its file's own-class methods called on `self` (qualnames)
    typed: list[TypedCall] = field(default_factory=list)  # method calls whose receiver's class the scan knows
    # its calls the walk cannot follow ("line: text", as `FunctionCalls.dynamic`), in a function nested in the
    # tape's too (`with tape:` inside a local `def`)
    dynamic: list[str] = field(default_factory=list)

    def holds(self, line: int) -> bool:
        return self.first <= line <= self.last


@dataclass(kw_only=True)
class TapeUse(Located):
    """`wp.Tape()` (kind "tape") or `<tape>.backward(...)` (kind "backward"). `blocks`: the `with` blocks on this
    tape in the same function; empty when it records some other way (then the whole function counts)."""

    kind: str
    receiver: str | None = None
    blocks: list[TapeBlock] = field(default_factory=list)


@dataclass(kw_only=True)
class LaunchSite(Located):
    """`wp.launch(...)` / `wp.launch_tiled(...)`; block_dim None means the argument is absent."""

    kind: str
    kernel: str
    block_dim: Value | None = None
    device: Value | None = None
    adjoint: Value | None = None
    held_in: str = ""  # the kernel is `self.<held_in>`: what the class hierarchy stores there decides it
    holder: str = ""  # the qualified class whose method (written in its body or bound there) launches `self.<held_in>`


@dataclass(kw_only=True)
class FunctionCalls(Located):
    """The names one function (or a file's module scope, `function` None) calls, for following calls.

    `callees` holds the last part of each called name (`sim.step(...)` -> "step"), once each;
    `line` is the function's `def` line (the first call's line at module scope). Only repository files.
    """

    callees: list[str] = field(default_factory=list)
    # Calls the walk cannot follow by name: a function passed in as a parameter (`function(*args)`), or one
    # picked from a container (`handlers[kind](...)`); "line: text" each. Under a tape they may reach any kernel.
    dynamic: list[str] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)  # the function's: what a caller can hand a dynamic call
    # parameters of an enclosing function that it calls (`original(...)` in a closure of `def wrap(original):`):
    # what the enclosing function's callers hand it
    closure_parameters: list[str] = field(default_factory=list)
    # Functions of this file a call runs exactly, by qualname: `self.advance(...)` where the enclosing class defines
    # `advance`, `make_view(...)` where the function binds that name only by a nested `def make_view`
    methods: list[str] = field(default_factory=list)
    # A function nested in another that never leaves it as a value (not returned, stored, passed or decorated):
    # only code inside that function can call it, by name. The enclosing function's qualname; None otherwise.
    enclosed_in: str | None = None
    # A module-scope function a class of its file binds as a method by assignment (`step = _Tank_step` or
    # `step = staticmethod(_Tank_step)` in `class Tank:`): the method's qualnames (`Tank.step`), which calls
    # reach it by (`tank.step(...)`) as they reach a method defined in the class body.
    bound_as: list[str] = field(default_factory=list)
    # Method calls whose receiver's class the scan knows (`solver.step(...)` after `solver = Solver(model)`): the
    # walk follows each to the method that class's hierarchy runs, not to every function of that name.
    typed: list[TypedCall] = field(default_factory=list)
    # The classes its result is an instance of, when its return annotation or every `return` says (exactly when
    # `returns_exact`, made there); empty when that cannot be said.
    returns: list[str] = field(default_factory=list)
    returns_exact: bool = False
    signature: list[str] = field(default_factory=list)  # its positional parameters, in order (`self` first)
    passes: list[PassedArguments] = field(default_factory=list)  # its calls of functions of its own file


@dataclass(kw_only=True)
class LoopFactoryCall(Located):
    """A call in a function's `for` loop whose result the same loop launches: `kernel = make_filter(width)` then
    `wp.launch(kernel, ...)`, or `wp.launch(make_filter(width), ...)`: one kernel made per value, lazily.

    `origin` says where the loop's values come from: "constructor" (`self.X`, assigned only in its class's
    `__init__`, at `init_line`), "constant" (a literal, or a module-scope name bound to one), "parameter" (an
    argument of the function: known only per call) or "computed" (anything else, said in `origin_detail`).
    `per_call` names what the call's arguments read besides the loop variable, literals and module-scope names,
    "name (line N: source)" each: data known only when the loop runs.
    """

    callee: str  # as written: `make_filter`, `filters.make_filter`
    arguments: list[str] = field(default_factory=list)  # each as written, keywords as `name=value`
    class_name: str | None = None  # the class whose method holds the loop
    # the name the class calls that method by: `apply`, also for a module function it binds (`apply = _Bank_apply`)
    method: str | None = None
    loop_line: int = 0
    loop_target: str = ""
    loop_iter: str = ""
    origin: str = "computed"
    origin_detail: str = ""
    init_line: int | None = None
    # the values as the constructor holds them (`self.orders`) when the loop runs over a parameter of a private
    # method that every call in its class fills with that attribute; "" when the loop's own iterable is that
    constructor_values: str = ""
    per_call: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class ImportSite(Located):
    """An import; kind is "stdlib", "warp", "project" (in-repo or relative) or "third_party". `names`: what a
    `from module import ...` takes (a submodule among them is imported too)."""

    module: str
    kind: str
    at_module_scope: bool = True
    names: list[str] = field(default_factory=list)


@dataclass
class EntryPoint:
    """A way the program starts: "main_module" (__main__.py), "main_guard", or "console_script"."""

    kind: str
    file: str | None
    line: int | None = None
    name: str | None = None
    target: str | None = None
    in_repo: bool = True


@dataclass
class SourceFile:
    """A scanned file and the Python module name its kernels get by default."""

    file: str
    python_module: str
    in_repo: bool = True
    mentions_warp: bool = True  # False: skipped by the prefilter, never parsed
    # what a file of the repository the prefilter skips imports (files.imported_modules); parsed files: ImportSites
    imports: list[str] = field(default_factory=list)
    # the names its top level binds, for following a qualified name through re-exports (every repository file)
    names: list[ModuleName] = field(default_factory=list)


@dataclass
class SourceIndex:
    """Everything the scan found in one repository (plus optional read-only library roots)."""

    root: str
    library_roots: list[str] = field(default_factory=list)
    files: list[SourceFile] = field(default_factory=list)
    kernels: list[KernelDef] = field(default_factory=list)
    funcs: list[FuncDef] = field(default_factory=list)
    factories: list[FactoryFunction] = field(default_factory=list)
    option_calls: list[OptionCall] = field(default_factory=list)
    config_assignments: list[ConfigAssignment] = field(default_factory=list)
    cache_operations: list[CacheOperation] = field(default_factory=list)
    preloads: list[PreloadCall] = field(default_factory=list)
    overloads: list[OverloadCall] = field(default_factory=list)
    tapes: list[TapeUse] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    selectors: list[KernelSelector] = field(default_factory=list)
    calls: list[FunctionCalls] = field(default_factory=list)
    loop_factory_calls: list[LoopFactoryCall] = field(default_factory=list)
    imports: list[ImportSite] = field(default_factory=list)
    classes: list[ClassInfo] = field(default_factory=list)
    attribute_stores: list[AttributeStore] = field(default_factory=list)
    value_reads: list[ValueRead] = field(default_factory=list)
    entry_points: list[EntryPoint] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    schema_version: int = INDEX_SCHEMA_VERSION

    # -- queries -------------------------------------------------------------------------------

    def kernels_in(self, file: str) -> list[KernelDef]:
        return [k for k in self.kernels if k.file == file]

    def kernel_named(self, function_name: str, file: str | None = None) -> KernelDef | None:
        """The kernel with this function name (in `file` if given), preferring in-repo definitions."""
        matches = [k for k in self.kernels if k.name == function_name and (file is None or k.file == file)]
        matches.sort(key=lambda k: not k.in_repo)
        return matches[0] if matches else None

    def kernel_at(self, file: str, line: int) -> KernelDef | None:
        """The kernel whose code object starts at `file:line` (Warp's `co_firstlineno`: first decorator or def)."""
        for kernel in self.kernels:
            first = min(kernel.line, kernel.decorator_line) if kernel.made_by != "call" else kernel.line
            if kernel.file == file and first <= line <= kernel.line:
                return kernel
        return None

    def kernels_of_module(self, module_name: str) -> list[KernelDef]:
        """Kernels whose Warp module is statically `module_name` (default or a literal `module=`)."""
        return [k for k in self.kernels if _static_module(k) == module_name]

    def option_calls_for(self, module_name: str) -> list[OptionCall]:
        return [c for c in self.option_calls if c.target_module == module_name]

    def config_assignments_for(self, key: str) -> list[ConfigAssignment]:
        return [a for a in self.config_assignments if a.key == key]

    def launches_of(self, kernel_name: str) -> list[LaunchSite]:
        """Launch sites whose kernel expression ends with `kernel_name` (`k`, `mod.k`, `self.k`)."""
        return [s for s in self.launches if s.kernel.split(".")[-1] == kernel_name]

    def factory_named(self, name: str) -> FactoryFunction | None:
        """By qualname, by function path (`".".join(kernel.enclosing_functions)`), or by plain name."""
        for matches in (
            lambda f: f.qualname == name,
            lambda f: f.function_path == name,
            lambda f: f.name == name,
        ):
            found = next((f for f in self.factories if matches(f)), None)
            if found is not None:
                return found
        return None

    def imports_in(self, file: str) -> list[ImportSite]:
        return [i for i in self.imports if i.file == file]

    def python_module_of(self, file: str) -> str | None:
        return next((f.python_module for f in self.files if f.file == file), None)

    def file_of_module(self, python_module: str) -> str | None:
        return next((f.file for f in self.files if f.python_module == python_module and f.in_repo), None)

    def absolute_module(self, file: str, module: str) -> str:
        """`module` as imported in `file`: a relative import (`.solver` in app/cli.py) resolved to `app.solver`."""
        return absolute_module_name(module, self.python_module_of(file) or "", file.endswith("__init__.py"))

    # -- serialisation -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SourceIndex:
        return from_dict(cls, data)

    @classmethod
    def from_json(cls, text: str) -> SourceIndex:
        return cls.from_dict(json.loads(text))


def _static_module(kernel: KernelDef) -> str | None:
    if kernel.module_kind == "default":
        return kernel.python_module
    if kernel.module_kind == "literal":
        return kernel.module_value
    return None


def absolute_module_name(module: str, own_module: str, is_package: bool) -> str:
    """`module` as written in an import of the module `own_module` (a package's `__init__` when `is_package`):
    `.solver` in `app.cli` is `app.solver`; an absolute name is itself."""
    level = len(module) - len(module.lstrip("."))
    if not level:
        return module
    own = own_module.split(".") if own_module else []
    package = own if is_package else own[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, module[level:]] if module[level:] else base)
