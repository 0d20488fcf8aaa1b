"""Which kernels any code of the repository can differentiate, whatever command was measured.

A measured batch command may never record a tape, while a calibration script next to it differentiates the
same kernels: turning their backward code off per module would break that script. The walk starts at every
`wp.Tape()`, `.backward(...)` on a tape, or `wp.launch(..., adjoint=True)`: from a tape, at what its `with`
blocks launch and call (the whole function when it is recorded otherwise: a tape handed to a helper; the callers
of a `@contextmanager` whose `with tape:` block yields), follows
the repository's calls by name (conservatively: `sim.step()` reaches every function named `step`), and
collects the kernels launched on the way. A launch whose kernel it cannot name, or a call it cannot follow by
name (a function passed in as a parameter, one picked from a container), is kept as unresolved: the caller
then treats every module as possibly differentiated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .index import LaunchSite, SourceIndex

Scope = tuple[str, str | None]  # (file, function qualname); None is the file's module scope


@dataclass
class Differentiation:
    """Kernel function names reached from a tape or an adjoint launch, each with the site that reaches it."""

    kernels: dict[str, str] = field(default_factory=dict)  # kernel name -> "file:line" of the tape / adjoint launch
    # "file:line" of launches under a tape whose kernel is unknown, and of calls there that cannot be followed
    unresolved: list[str] = field(default_factory=list)
    unresolved_files: set[str] = field(default_factory=set)  # the files of those launches and calls
    scopes: set[Scope] = field(default_factory=set)  # every function reached
    blocks_of: set[Scope] = field(default_factory=set)  # tapes' own functions, of which only `with` blocks count

    def reaches(self, file: str) -> bool:
        """Some code of `file` runs under a tape (or is the tape's own function)."""
        return any(scope_file == file for scope_file, _ in self.scopes | self.blocks_of)


def differentiated_kernels(index: SourceIndex) -> Differentiation:
    """Follow the repository's calls from each tape and adjoint launch to the kernels they launch."""
    by_name: dict[str, list[Scope]] = {}
    for calls in index.calls:
        if calls.function is not None:
            for name in _names_of(calls.function):
                by_name.setdefault(name, []).append((calls.file, calls.function))
    callees = {(c.file, c.function): c.callees for c in index.calls}
    callers: dict[str, list[Scope]] = {}
    for calls in index.calls:
        for callee in calls.callees:
            callers.setdefault(callee, []).append((calls.file, calls.function))
    dynamic = {(c.file, c.function): c.dynamic for c in index.calls}
    launches: dict[Scope, list[LaunchSite]] = {}
    for launch in index.launches:
        if launch.in_repo:
            launches.setdefault((launch.file, launch.function), []).append(launch)
    known = {k.name for k in index.kernels}
    found = Differentiation()
    seeds = [(t.file, t.function, f"{t.file}:{t.line}", t.blocks) for t in index.tapes if t.in_repo]
    seeds += [(s.file, s.function, f"{s.file}:{s.line}", []) for s in index.launches if s.in_repo and _adjoint(s)]
    for file, function, origin, blocks in seeds:
        pending = [(file, function)]
        if blocks:  # only what its `with` blocks launch and call is recorded
            pending = [scope for block in blocks for callee in block.callees for scope in by_name.get(callee, [])]
            if function is not None and any(block.yields for block in blocks):
                # a context manager recording while its caller's `with` block runs: the callers count whole
                pending += callers.get(function.split(".")[-1], [])
            for launch in launches.get((file, function), []):
                if any(block.holds(launch.line) for block in blocks):
                    _reach(launch, known, origin, found)
            if (file, function) not in found.blocks_of and dynamic.get((file, function)):
                found.unresolved += [f"{file}:{call.split(':')[0]}" for call in dynamic[(file, function)]]
                found.unresolved_files.add(file)
            found.blocks_of.add((file, function))
        while pending:
            scope = pending.pop()
            if scope in found.scopes:
                continue
            found.scopes.add(scope)
            for launch in launches.get(scope, []):
                _reach(launch, known, origin, found)
            for callee in callees.get(scope, []):  # a scope already walked would be popped and passed over
                pending += [reached for reached in by_name.get(callee, ()) if reached not in found.scopes]
            found.unresolved += [f"{scope[0]}:{call.split(':')[0]}" for call in dynamic.get(scope, [])]
            if dynamic.get(scope):
                found.unresolved_files.add(scope[0])
    found.unresolved = list(dict.fromkeys(found.unresolved))  # two tapes of one function reach the same launches
    return found


def _reach(launch: LaunchSite, known: set[str], origin: str, found: Differentiation) -> None:
    """A launch under a tape: its kernel is differentiated, or, when the scan cannot name it, anything may be."""
    name = launch.kernel.split(".")[-1]
    if name in known:
        found.kernels.setdefault(name, origin)
    else:
        found.unresolved.append(f"{launch.file}:{launch.line}")
        found.unresolved_files.add(launch.file)


def _names_of(qualname: str) -> list[str]:
    """The names a call can reach a function by: `step` for `Sim.step`, also `Sim` for `Sim.__init__`."""
    parts = qualname.split(".")
    names = [parts[-1]]
    if parts[-1] in ("__init__", "__call__") and len(parts) > 1:
        names.append(parts[-2])
    return names


def _adjoint(launch: LaunchSite) -> bool:
    """`adjoint=True`, or an expression that may be true at run time."""
    return launch.adjoint is not None and (not launch.adjoint.is_constant or bool(launch.adjoint.value))
