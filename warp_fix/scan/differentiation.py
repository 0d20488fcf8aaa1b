"""Which kernels any code of the repository can differentiate, whatever command was measured.

A measured batch command may never record a tape, while a calibration script next to it differentiates the
same kernels: turning their backward code off per module would break that script. The walk starts at every
`wp.Tape()`, `.backward(...)` on a tape, or `wp.launch(..., adjoint=True)`: from a tape, at what its `with`
blocks launch and call (the whole function when it is recorded otherwise: a tape handed to a helper; the callers
of a `@contextmanager` whose `with tape:` block yields), follows
the repository's calls: through the receiver's class where the code says it (`solver.step()` after `solver =
Solver(model)` runs Solver's `step`; a callback parameter runs what every call hands it: `warp_fix.scan.hierarchy`),
else by name (conservatively: `sim.step()` on an untyped `sim` reaches every function named `step`, except a
function nested in another that never leaves it as a value, which only code inside that function can name), and
collects the kernels launched on the way. A launch whose kernel it cannot name, or a call it cannot follow (a
function passed in as a parameter from somewhere the scan cannot see, one picked from a container,
`getattr(obj, name)()`), is kept as unresolved, per tape: what such a call runs is unknown, but it can only be
code of a file that the program holding the tape imports, so each unresolved tape carries those files (the import
closure of the calls' files and, for a call through a parameter, of the files that call its function) and may
reach only modules launched there.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace

from .hierarchy import ClassHierarchy
from .index import FunctionCalls, LaunchSite, SourceIndex, TypedCall, absolute_module_name

Scope = tuple[str, str | None]  # (file, function qualname); None is the file's module scope


@dataclass(frozen=True)
class UnfollowedCall:
    """A call under a tape the walk cannot follow by name, or a launch of a kernel it cannot name."""

    file: str
    line: int
    text: str  # as written: `getattr(model, method)(...)`, `loss(...)`, `wp.launch(kernel, ...)`
    runs: str = ""  # the expression that is called or launched: `getattr(model, method)`, `loss`, `kernel`
    launch: bool = False  # a launch of a kernel the scan cannot name (it runs that kernel, no other code)

    def __str__(self) -> str:
        return f"{self.text} at {self.file}:{self.line}"

    def deciding_names(self) -> set[str]:
        """The names that decide which code runs (one that is a parameter: the caller decides): the callee as
        written, but only the object of a `getattr(obj, name)` (the name picks one of its methods) and only the
        container of `table[key]` (the key picks among what it holds)."""
        try:
            node = ast.parse(self.runs or self.text, mode="eval").body
        except SyntaxError:
            return set()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args:
            node = node.args[0]
        while isinstance(node, ast.Subscript):
            node = node.value
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


@dataclass
class UnresolvedTape:
    """A tape (or adjoint launch) whose walk met calls it could not follow. What they run is unknown, but it is
    code of a file the program holding the tape imports: `files`, the import closure of the calls' files and, for
    a call whose callee comes from a parameter, of the files that call its function (a callback comes from a
    caller)."""

    site: str  # "file:line" of the tape or adjoint launch
    calls: list[UnfollowedCall] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    kind: str = "tape"  # or "adjoint launch"

    def may_reach(self, files: Iterable[str]) -> bool:
        """Code of one of `files` (where a module's kernels are defined or launched) can run under this tape."""
        return any(file in self.files for file in files)

    def describe(self) -> str:
        """One line for a plan: which tape, and which of its calls could not be followed."""
        calls = ", ".join(str(call) for call in self.calls)
        what = "call" if len(self.calls) == 1 else "calls"
        return f"the {self.kind} at {self.site}, whose {what} {calls} cannot be followed"


@dataclass(frozen=True)
class NameHop:
    """A call on the way from a tape to a kernel that the walk followed by name alone to several functions (`step`
    reaches every function named `step`): the kernel is reached only if that call runs the one that launches it."""

    caller: Scope
    callee: str
    candidates: int  # functions of that name the call was followed to
    reached: Scope  # the one on the way to the kernel

    def condition(self) -> str:
        """The plan's wording of what must hold for the tape to run the kernel: the call, followed by name to how
        many functions, must run one of those that lead on to it (`reached`, the one the walk went through, is an
        example, not the only one)."""
        caller = f"{self.caller[1]} ({self.caller[0]})" if self.caller[1] else self.caller[0]
        return (
            f"if its call of `{self.callee}` in {caller} runs one of the functions named `{self.callee}` that lead "
            f"there (it is followed by name to all {self.candidates}; {self.reached[1]} ({self.reached[0]}) is one "
            "that does)"
        )


@dataclass
class Differentiation:
    """Kernel function names reached from a tape or an adjoint launch, each with the site that reaches it."""

    kernels: dict[str, str] = field(default_factory=dict)  # kernel name -> "file:line" of the tape / adjoint launch
    # kernel name -> the first call on the way from its tape that was followed by name to several functions; a kernel
    # reached through calls that each name one function only is not here
    by_name: dict[str, NameHop] = field(default_factory=dict)
    # "file:line" of launches under a tape whose kernel is unknown, and of calls there that cannot be followed
    unresolved: list[str] = field(default_factory=list)
    unresolved_tapes: list[UnresolvedTape] = field(default_factory=list)  # the same, per tape, with their reach
    scopes: set[Scope] = field(default_factory=set)  # every function reached
    blocks_of: set[Scope] = field(default_factory=set)  # tapes' own functions, of which only `with` blocks count

    def reaches(self, file: str) -> bool:
        """Some code of `file` runs under a tape (or is the tape's own function)."""
        return any(scope_file == file for scope_file, _ in self.scopes | self.blocks_of)

    def unresolved_reaching(self, files: Iterable[str]) -> UnresolvedTape | None:
        """The first tape whose unfollowed calls may run code of `files`."""
        wanted = list(files)
        return next((tape for tape in self.unresolved_tapes if tape.may_reach(wanted)), None)


def differentiated_kernels(index: SourceIndex, answered: Collection[tuple[str, str]] = ()) -> Differentiation:
    """Follow the repository's calls from each tape and adjoint launch to the kernels they launch. `answered`:
    (file, function name) of tapes the measured run itself recorded: what they record is the run's to say (its
    gradient uses), not a walk by name's, so they are not followed here."""
    by_name = _NamedFunctions(index)
    hierarchy = ClassHierarchy(index)
    records = {(c.file, c.function): c for c in index.calls}
    following = _Following(by_name, hierarchy, records)
    callers: dict[str, list[Scope]] = {}
    for calls in index.calls:
        for callee in [*calls.callees, *(method.split(".")[-1] for method in calls.methods),
                       *(call.method for call in calls.typed)]:
            callers.setdefault(callee, []).append((calls.file, calls.function))
    dynamic = {scope: record.dynamic for scope, record in records.items()}
    parameters = {scope: set(record.parameters) for scope, record in records.items()}
    launches: dict[Scope, list[LaunchSite]] = {}
    for launch in index.launches:
        if launch.in_repo:
            launches.setdefault((launch.file, launch.function), []).append(launch)
    known = {k.name for k in index.kernels}
    found = Differentiation()
    imports = _ImportGraph(index)
    handled = _HandledKernels(index)
    unparsed = {f.file for f in index.files if f.in_repo and not f.mentions_warp}
    answered = set(answered)
    seeds = [(t.file, t.function, f"{t.file}:{t.line}", t.blocks, "tape") for t in index.tapes
             if t.in_repo and (t.file, (t.function or "").split(".")[-1]) not in answered]
    seeds += [(s.file, s.function, f"{s.file}:{s.line}", [], "adjoint launch")
              for s in index.launches if s.in_repo and _adjoint(s)]
    for file, function, origin, blocks, kind in seeds:
        unfollowed: dict[UnfollowedCall, Scope] = {}  # each call the walk cannot follow, and the scope holding it
        pending = [(file, function)]
        hops: dict[Scope, NameHop | None] = {}  # each scope's first call followed by name on its way from the tape
        if blocks:  # only what its `with` blocks launch and call is recorded
            tape = (file, function)
            pending = []
            for block in blocks:
                for reached, by_one in following.calls(tape, block.callees, block.typed, block.methods):
                    hops.setdefault(reached, by_one)
                    pending.append(reached)
            if function is not None and any(block.yields for block in blocks):
                # a context manager recording while its caller's `with` block runs: the callers count whole
                pending += callers.get(function.split(".")[-1], [])
            for launch in launches.get((file, function), []):
                if any(block.holds(launch.line) for block in blocks):
                    _reach(launch, known, hierarchy.kernels_held, origin, found, unfollowed)
            if (file, function) not in found.blocks_of:
                # only what its blocks call runs under the tape
                calls = dict.fromkeys(call for block in blocks for call in block.dynamic)
                handed, unknown = following.dynamic(tape, list(calls))
                pending += handed
                unfollowed.update(dict.fromkeys(unknown, tape))
            found.blocks_of.add((file, function))
        queue = deque(pending)  # breadth first: each scope's hop is on a shortest way from the tape
        while queue:
            scope = queue.popleft()
            if scope in found.scopes:
                continue
            found.scopes.add(scope)
            hop = hops.get(scope)
            for launch in launches.get(scope, []):
                _reach(launch, known, hierarchy.kernels_held, origin, found, unfollowed, hop)
            record = records.get(scope)
            if record is not None:
                for reached, by_one in following.calls(scope, record.callees, record.typed, record.methods):
                    if reached not in found.scopes:  # a scope already walked would be popped and passed over
                        hops.setdefault(reached, hop or by_one)
                        queue.append(reached)
            handed, unknown = following.dynamic(scope, dynamic.get(scope, []))
            queue.extend(reached for reached in handed if reached not in found.scopes)
            for reached in handed:
                hops.setdefault(reached, hop)
            unfollowed.update(dict.fromkeys(unknown, scope))
        if unfollowed:
            found.unresolved += [f"{call.file}:{call.line}" for call in unfollowed]
            holders = set(unfollowed.values())
            # calls through a parameter run what the function's callers hand it: the callers that import it, and
            # files the scan never parsed (their calls are unknown) that import it
            handed = {holder for call, holder in unfollowed.items()
                      if call.deciding_names() & parameters.get(holder, set())}
            in_functions = {holder[0] for holder in handed if holder[1] is not None}
            named = {caller[0] for holder in handed if holder[1] is not None
                     for name in _names_of(holder[1]) for caller in callers.get(name, [])}
            supplying = (named | unparsed) & imports.importers(in_functions) if in_functions else set()
            reach = imports.closure({holder[0] for holder in holders} | supplying)
            if all(call.launch for call in unfollowed):  # only kernels run: those the program handles as values
                reach = handled.files(reach)
            found.unresolved_tapes.append(UnresolvedTape(origin, list(unfollowed), reach, kind))
    found.unresolved = list(dict.fromkeys(found.unresolved))  # two tapes of one function reach the same launches
    return found


def _reach(
    launch: LaunchSite,
    known: set[str],
    held: Callable[[LaunchSite], list[str] | None],
    origin: str,
    found: Differentiation,
    unfollowed: dict[UnfollowedCall, Scope],
    hop: NameHop | None = None,
) -> None:
    """A launch under a tape: its kernel is differentiated (named, or held in an attribute whose stores name it:
    `held`), or, when the scan cannot say which, it is unfollowed. `hop`: the call followed by name on the way."""
    name = launch.kernel.split(".")[-1]
    names = [name] if name in known else held(launch) or []
    for name in names:
        if name not in found.kernels and hop is not None:
            found.by_name[name] = hop
        found.kernels.setdefault(name, origin)
    if not names:
        call = UnfollowedCall(launch.file, launch.line, f"wp.{launch.kind}({launch.kernel}, ...)", launch.kernel,
                              launch=True)
        unfollowed[call] = (launch.file, launch.function)


def _dynamic(file: str, calls: list[str]) -> list[UnfollowedCall]:
    """The scan's "line: text" records of calls it cannot follow by name."""
    return [UnfollowedCall(file, int(line), text, text.removesuffix("(...)"))
            for line, text in (call.split(": ", 1) for call in calls)]


class _Following:
    """Where one function's calls lead, each function reached with the call on the way that was followed by name to
    several functions (None for a call that names its function: through the receiver's class, the caller's own
    class, or a name only one function has)."""

    def __init__(
        self, by_name: _NamedFunctions, hierarchy: ClassHierarchy, records: dict[Scope, FunctionCalls]
    ) -> None:
        self.by_name = by_name
        self.hierarchy = hierarchy
        self.records = records

    def calls(
        self, caller: Scope, callees: list[str], typed: list[TypedCall], methods: list[str]
    ) -> Iterator[tuple[Scope, NameHop | None]]:
        for callee in callees:
            yield from self._named(caller, callee, self.by_name(callee, caller))
        for call in typed:  # `solver.step()`: what the receiver's class runs, else by name
            runs = self.hierarchy.runs(call)
            yield from self._named(caller, call.method, self.by_name(call.method, caller)) if runs is None else (
                (reached, None) for reached in runs)
        for method in methods:  # `self.advance()`: the class's own method, and what subclasses put in its place
            yield (caller[0], method), None
            overriding = self.hierarchy.overrides(caller[0], method)
            name = method.split(".")[-1]
            yield from self._named(caller, name, self.by_name(name, caller)) if overriding is None else (
                (reached, None) for reached in overriding)

    def dynamic(self, caller: Scope, calls: list[str]) -> tuple[list[Scope], list[UnfollowedCall]]:
        """The scan's records of calls it cannot follow by name: those through a parameter (of the function, or of
        one it is nested in) that every call of that function fills with functions of its file (callbacks) or
        Warp's API lead there; the others stay unfollowed. Warp's launch handed on launches a kernel the scan
        cannot name (an unfollowed launch)."""
        handed: list[Scope] = []
        unknown: list[UnfollowedCall] = []
        for call in _dynamic(caller[0], calls):
            owner = self._parameter_owner(caller, call.runs)
            runs = None if owner is None else self.hierarchy.handed(caller[0], owner, call.runs)
            if owner is None or runs is None:
                unknown.append(call)
                continue
            handed += runs
            if self.hierarchy.hands_launch(caller[0], owner, call.runs):
                unknown.append(replace(call, launch=True))
        return handed, unknown

    def _parameter_owner(self, caller: Scope, name: str) -> str | None:
        """The function whose parameter `name` is, as `caller` calls it: its own, or for a closure's call of an
        enclosing function's parameter, the nearest enclosing function that has it."""
        record = self.records.get(caller)
        if caller[1] is None or record is None:
            return None
        if name in record.parameters:
            return caller[1]
        if name not in record.closure_parameters:
            return None
        parts = caller[1].split(".<locals>.")
        for cut in range(len(parts) - 1, 0, -1):
            outer = ".<locals>.".join(parts[:cut])
            around = self.records.get((caller[0], outer))
            if around is not None and name in around.parameters:
                return outer
        return None

    @staticmethod
    def _named(caller: Scope, callee: str, reached: list[Scope]) -> Iterator[tuple[Scope, NameHop | None]]:
        for scope in reached:
            yield scope, NameHop(caller, callee, len(reached), scope) if len(reached) > 1 else None


class _NamedFunctions:
    """The functions a call by name can reach: every function of the repository by that name (conservatively),
    except a nested one that never leaves its enclosing function, which only code inside that function can name
    (a test's local `def step():` is not every `solver.step(...)` of the repository)."""

    def __init__(self, index: SourceIndex) -> None:
        self.anywhere: dict[str, list[Scope]] = {}
        self.enclosed: dict[tuple[str, str], list[tuple[Scope, str]]] = {}  # (file, name) -> (scope, enclosing)
        for calls in index.calls:
            if calls.function is None:
                continue
            scope = (calls.file, calls.function)
            # a method bound by assignment in a class body (`step = _Tank_step`) is called by the method's name
            for name in dict.fromkeys(n for q in [calls.function, *calls.bound_as] for n in _names_of(q)):
                if calls.enclosed_in is None:
                    self.anywhere.setdefault(name, []).append(scope)
                else:
                    self.enclosed.setdefault((calls.file, name), []).append((scope, calls.enclosed_in))

    def __call__(self, name: str, caller: Scope) -> list[Scope]:
        file, function = caller
        inside = [
            scope
            for scope, outer in self.enclosed.get((file, name), ())
            if function is not None and (function == outer or function.startswith(f"{outer}.<locals>."))
        ]
        return [*self.anywhere.get(name, ()), *inside]


def _names_of(qualname: str) -> list[str]:
    """The names a call can reach a function by: `step` for `Sim.step`, also `Sim` for `Sim.__init__`."""
    parts = qualname.split(".")
    names = [parts[-1]]
    if parts[-1] in ("__init__", "__call__") and len(parts) > 1:
        names.append(parts[-2])
    return names


class _HandledKernels:
    """The kernels a launch whose kernel the scan cannot name may launch: those the program handles as values
    (`ValueRead`: stored, passed, put in a table, through re-exports too, or a module read as a value: its own and
    those it re-exports; `getattr` chains through its sub-modules are not followed),
    and those not bound by a `@wp.kernel` at module scope (a factory's, a class body's, `wp.kernel(fn)`'s, a
    project decorator's), which only reach a launch as values. A kernel only ever launched or called by its name
    is not one of them."""

    def __init__(self, index: SourceIndex) -> None:
        self.modules = {f.python_module for f in index.files}
        self.names: dict[str, dict[str, list[str]]] = {}
        for file in index.files:
            for bound in file.names:
                if bound.target:
                    self.names.setdefault(file.python_module, {}).setdefault(bound.name, []).append(bound.target)
        read = {final for value in index.value_reads for final in self._resolved(value.target)}
        handed_modules = read & self.modules  # and with them what they bind (`getattr(pkg, name)`: a re-export)
        read |= {final for module in handed_modules for name in self.names.get(module, {})
                 for final in self._resolved(f"{module}.{name}")}
        self.kernels = [k for k in index.kernels if k.in_repo and (
            not k.at_module_scope or k.made_by != "decorator" or k.python_module in handed_modules
            or f"{k.python_module}.{k.name}" in read)]

    def files(self, within: set[str]) -> set[str]:
        """The files (of `within`) defining such kernels: the modules an unknown launch there may differentiate."""
        return {k.file for k in self.kernels if k.file in within}

    def _resolved(self, target: str, depth: int = 8) -> set[str]:
        """What a read name finally stands for: `pkg.step` re-exported by `pkg/__init__.py` from `pkg.kernels` is
        `pkg.kernels.step` (and itself, in case the scan misreads the re-export)."""
        found = {target}
        parts = target.split(".")
        module = next((".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)
                       if ".".join(parts[:end]) in self.modules), None)
        if module is None or depth <= 0:
            return found
        name, rest = parts[len(module.split("."))], parts[len(module.split(".")) + 1:]
        bound = self.names.get(module, {})
        for through in [*bound.get(name, []), *(f"{star}.{name}" for star in bound.get("*", []))]:
            if through != target:
                found |= self._resolved(".".join([through, *rest]), depth - 1)
        return found


def _adjoint(launch: LaunchSite) -> bool:
    """`adjoint=True`, or an expression that may be true at run time."""
    return launch.adjoint is not None and (not launch.adjoint.is_constant or bool(launch.adjoint.value))


class _ImportGraph:
    """The repository's own imports, file to file: which code a program that runs a file can run."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self.files_of = {f.python_module: f.file for f in index.files if f.in_repo}
        self.modules_of = {f.file: f.python_module for f in index.files}
        self.imported: dict[str, list[str]] = {}  # file -> modules it imports, `pkg.name` for `from pkg import name`
        for site in index.imports:
            if site.kind == "project":
                imported = [site.module, *(f"{site.module.rstrip('.')}.{name}" for name in site.names)]
                self.imported.setdefault(site.file, []).extend(imported)
        for source in index.files:
            self.imported.setdefault(source.file, []).extend(source.imports)  # files the prefilter skipped
        self._edges: dict[str, list[str]] = {}
        self._importers: dict[str, list[str]] | None = None

    def imports_of(self, file: str) -> list[str]:
        """The repository files `file` imports directly (the packages of each module included), once per file."""
        if file not in self._edges:
            found = []
            for written in self.imported.get(file, []):
                own = self.modules_of.get(file, "")
                parts = absolute_module_name(written, own, file.endswith("__init__.py")).split(".")
                modules = (".".join(parts[:n]) for n in range(1, len(parts) + 1))  # its packages first
                found += [self.files_of[m] for m in modules if m in self.files_of]
            self._edges[file] = found
        return self._edges[file]

    def closure(self, files: Iterable[str]) -> set[str]:
        """`files` and every repository file they import, directly or not (a package's `__init__` included)."""
        return _walk(files, self.imports_of)

    def importers(self, files: Iterable[str]) -> set[str]:
        """`files` and every repository file that imports one of them, directly or not."""
        if self._importers is None:
            self._importers = {}
            for source in list(self.imported):
                for target in self.imports_of(source):
                    self._importers.setdefault(target, []).append(source)
        importers = self._importers
        return _walk(files, lambda file: importers.get(file, []))


def _walk(start: Iterable[str], step: Callable[[str], list[str]]) -> set[str]:
    """`start` and every file `step` leads to from it, directly or not."""
    seen: set[str] = set()
    pending = list(start)
    while pending:
        file = pending.pop()
        if file not in seen:
            seen.add(file)
            pending += step(file)
    return seen
