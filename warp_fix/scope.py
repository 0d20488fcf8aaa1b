"""Scope: whose code each file, module and kernel of a run is, and the highest safety a fix may have there.

Computed once per plan from the report, the source index and the project's configuration, and carried on the
mechanisms' inputs. A mechanism asks it ("is this kernel optional?", "may this file be edited?") and never
re-derives ownership; plan lowers every fix to the ceiling of what it edits and of the modules it means to
change; apply's codemod runner refuses the same files for the same reasons.

The verdicts (`warp_fix.ownership.Owner`) and their ceilings:

    project      its files may be edited: safe
    optional     a plugin, a registry entry, one of a set a run picks: no edit, at most a line in the plan
    maintenance  a guarded rebuild path or a path `[tool.warp-fix] protected` names: never edited
    installed    an installed or vendored package wherever it sits: never edited; a process-wide setting at the
                 user's entry point may change its modules, with consent
    warp         Warp's own modules: as an installed package
    generated    a file carrying the generated-code marker, code compiled from a string: never edited
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from codemods.specs import GENERATED_MARKER
from warp_fix.model import Safety
from warp_fix.ownership import PACKAGE_FOLDERS, Owner, Verdict, place_of
from warp_fix.report import KernelSource, ModuleBuild, OptionChange, Report
from warp_fix.scan.index import CacheOperation, KernelDef, Located, SourceIndex
from warp_fix.scan.parsed import says_maintenance

# The highest class of a fix that edits code of this owner (None: no edit at all).
EDIT_CEILING: dict[Owner, Safety | None] = {
    Owner.PROJECT: Safety.SAFE,
    Owner.OPTIONAL: None,
    Owner.MAINTENANCE: None,
    Owner.INSTALLED: None,
    Owner.WARP: None,
    Owner.GENERATED: None,
}
# The highest class of a fix (made in the project's code) that changes the builds of a module of this owner:
# a process-wide setting at the entry point reaches an installed package's modules only with the user's consent.
TARGET_CEILING: dict[Owner, Safety | None] = {
    Owner.PROJECT: Safety.SAFE,
    Owner.OPTIONAL: None,
    Owner.MAINTENANCE: None,
    Owner.INSTALLED: Safety.CONSENT,
    Owner.WARP: Safety.CONSENT,
    Owner.GENERATED: Safety.SAFE,  # wp.map's kernels, made by the project's own calls
}


@dataclass(frozen=True)
class EditPolicy:
    """May a repository file be edited: the part of the scope apply's codemod runner needs (no run, no index)."""

    root: str
    protected: tuple[str, ...] = ()  # "path/glob" or "path::function", from `[tool.warp-fix] protected`

    def verdict(self, file: str, functions: Iterable[str] = ()) -> Verdict:
        """The verdict for editing repo-relative `file` (in `functions`, when the edit names them)."""
        place = place_of(file, self.root)
        if not place.is_project:
            return place
        hit = self.protected_hit(file, functions)
        if hit is not None:
            return Verdict(Owner.MAINTENANCE, f"protected by [tool.warp-fix] protected = {hit!r}", place.path)
        if _carries_marker(os.path.join(self.root, file)):
            return Verdict(Owner.GENERATED, f"a generated file (it carries {GENERATED_MARKER})", place.path)
        return place

    def refusal(self, file: str) -> str | None:
        """Why the runner must not edit `file`, in a phrase; None when it may (the codemods' `refuse` hook)."""
        verdict = self.verdict(file)
        return None if EDIT_CEILING[verdict.owner] is not None else verdict.reason

    def protected_hit(self, file: str, functions: Iterable[str] = ()) -> str | None:
        """The first protected entry matched by this repo-relative file (and the function names of the edit)."""
        names = set(functions)
        for entry in self.protected:
            pattern, _, function = entry.partition("::")
            if _path_matches(file, pattern) and (not function or function in names):
                return entry
        return None


@dataclass
class Scope:
    """The verdicts of one plan; see the module docstring for what each allows."""

    report: Report
    index: SourceIndex
    protected: tuple[str, ...] = ()
    _files: dict[str, Verdict] = field(default_factory=dict, repr=False)

    @cached_property
    def policy(self) -> EditPolicy:
        return EditPolicy(self.index.root, self.protected)

    # -- files ----------------------------------------------------------------------------------------

    def file(self, file: str) -> Verdict:
        """Where a file the run names (relative to the measured cwd, or absolute) lies, and whose it is."""
        verdict = self._files.get(file)
        if verdict is None:
            verdict = self._files[file] = place_of(file, self.index.root, self.report.cwd)
        return verdict

    def project_file(self, file: str) -> str | None:
        """The repo-relative path of a file of the project's own code; None for any other (installed packages
        in an in-repo virtualenv included, and code compiled from a string)."""
        verdict = self.file(file)
        return verdict.path if verdict.is_project else None

    def editable(self, file: str, functions: Iterable[str] = ()) -> Verdict:
        """The verdict for editing a repo-relative file: the place, then protected paths and the generated marker."""
        return self.policy.verdict(file, functions)

    def editable_file(self, file: str) -> bool:
        """A repo-relative file of the project's own code that the scan read and a fix may edit."""
        scanned = any(f.file == file and f.in_repo for f in self.index.files)
        return scanned and EDIT_CEILING[self.editable(file).owner] is not None

    def in_project(self, item: Located) -> bool:
        """An item of the index (a tape, a launch, an options call, a kernel) read from the project's own code,
        not from a library root the scan read for context: what the project itself does."""
        return item.in_repo and place_of(item.file, self.index.root).is_project

    @cached_property
    def entry(self) -> str | None:
        """The project file the measured command runs first, where a process-wide setting goes: the one the run
        executed as __main__ when it is the project's (a src/ layout's or an installed package's `python -m pkg`
        included), else from the command: `python -m pkg` -> pkg/__main__.py, `python x.py` -> x.py, `app-run`
        -> the file of the console script's function."""
        command = self.report.command
        cwd = Path(self.report.cwd)
        candidates = [Path(self.report.trace.main_file)] if self.report.trace.main_file else []
        if "-m" in command[:-1]:
            base = cwd / Path(*command[command.index("-m") + 1].split("."))
            candidates += [base / "__main__.py", base.with_suffix(".py")]
        candidates += [cwd / arg for arg in command[1:] if arg.endswith(".py")]
        for path in candidates:
            verdict = self.file(str(path))
            if verdict.is_project and verdict.path is not None and os.path.isfile(path):
                return verdict.path
        name = Path(command[0]).name if command else ""
        points = self.index.entry_points
        scripts = [e.file for e in points if e.kind == "console_script" and e.file and e.name == name]
        found = scripts + [e.file for e in points if e.in_repo and e.file]
        return found[0] if found else None

    def defined_in(self, build: ModuleBuild) -> str | None:
        """The dotted Python module of the build's first kernel: its `__module__` as the run recorded it (whatever
        the folders say); in older reports, the project's as the scan names its file (`src/pkg/sim.py` is
        `pkg.sim`), or from its path in an installed package (under site-packages, Warp's `warp/_src`, or a
        `pip install --target` folder: from the build's top-level package)."""
        if not build.kernel_sources:
            return None
        first = build.kernel_sources[0]
        file = first.file
        if file.startswith("<"):  # exec'd source: wp.map's kernels (array arithmetic), or the project's own exec
            return "wp.map" if build.module.startswith("map_") else "code compiled from a string"
        if first.python_module and first.python_module != "__main__":
            return first.python_module
        relative = self.project_file(file)
        scanned = self.index.python_module_of(relative) if relative is not None else None
        if scanned is not None:
            return scanned
        if relative is None:
            parts = Path(file).parts
            marks = [i + 1 for i, part in enumerate(parts) if part in PACKAGE_FOLDERS]
            marks = marks or [i for i, part in enumerate(parts[:-1]) if part == "warp" and parts[i + 1] == "_src"]
            marks = marks or [i for i, part in enumerate(parts[:-1]) if part == build.module.split(".")[0]]
            if not marks:
                return None
            relative = "/".join(parts[marks[-1]:])
        return relative.removesuffix(".py").replace("/", ".").removesuffix(".__init__")

    def made_by_project(self, change: OptionChange) -> bool:
        """An options call or config assignment of the project's own code: not made by an installed package (the
        tracer's word, from the call's frame) nor from a file outside the project's code however it was
        installed (a package on PYTHONPATH is no site-packages; a virtualenv inside the repository is no project)."""
        made_at = change.caller or change.site
        return not change.from_library and made_at is not None and self.project_file(made_at.file) is not None

    def maintenance(self, operation: CacheOperation, ran: bool) -> Verdict | None:
        """A cache clear someone asked for: behind a guard (`if args.rebuild:`), or in a function named for
        maintenance (`rebuild_cache`), or documented so when the run did not enter it. A statement the measured
        run executed is judged by its guard and its function's name only: a helper run at every start whose
        docstring says it "keeps $HOME clean" is no maintenance path. None: not a maintenance path."""
        if operation.maintenance_guard:
            return Verdict(Owner.MAINTENANCE, f"a guarded maintenance path (if {operation.maintenance_guard})",
                           operation.file)
        if says_maintenance(operation.function):
            return Verdict(Owner.MAINTENANCE, f"a maintenance function ({operation.function})", operation.file)
        if not ran and says_maintenance(operation.function_doc):
            return Verdict(Owner.MAINTENANCE, f"documented as maintenance ({operation.function}), not run",
                           operation.file)
        return None

    # -- kernels and modules --------------------------------------------------------------------------

    def kernel(self, source: KernelSource) -> Verdict:
        """A kernel the run built: its file's verdict, or optional when the project makes it only on some runs."""
        place = self.file(source.file)
        if not place.is_project or place.path is None:
            return place
        static = self.index.kernel_at(place.path, source.line)
        why = optional_reason(static) if static is not None else None
        if why is not None:
            return Verdict(Owner.OPTIONAL, why, place.path)
        return place

    def static_kernel(self, kernel: KernelDef) -> Verdict:
        """A kernel of the index: optional, or its file's verdict."""
        why = optional_reason(kernel)
        if why is not None:
            return Verdict(Owner.OPTIONAL, why, kernel.file)
        if not kernel.in_repo:
            return place_of(kernel.file, self.index.root)
        return self.editable(kernel.file, [kernel.name])

    def module(self, build: ModuleBuild) -> Verdict:
        """A module the run built: Warp's own, optional when it holds an optional kernel, installed when no kernel
        of it is the project's, else the project's."""
        if build.module.startswith("warp.") or build.module == "warp":
            return Verdict(Owner.WARP, "Warp's own module")
        verdicts = [self.kernel(source) for source in build.kernel_sources]
        optional = next((v for v in verdicts if v.owner is Owner.OPTIONAL), None)
        if optional is not None:
            return optional
        if verdicts and not any(v.is_project for v in verdicts):
            # Warp's own code under a module name of another package (warp.fem's generated kernels) is an
            # installed package's code to every mechanism: only `warp.*` modules are Warp's own
            outside = min(verdicts, key=lambda v: _OUTSIDE_ORDER.index(v.owner))
            return Verdict(Owner.INSTALLED, outside.reason) if outside.owner is Owner.WARP else outside
        return Verdict(Owner.PROJECT, "the project's own code")

    def optional_kernels(self, build: ModuleBuild) -> list[tuple[KernelDef, str]]:
        """The build's kernels the project makes only on some runs, each with why."""
        found = []
        for source in build.kernel_sources:
            path = self.project_file(source.file)
            static = self.index.kernel_at(path, source.line) if path else None
            why = optional_reason(static) if static is not None else None
            if static is not None and why is not None:
                found.append((static, why))
        return found

    @cached_property
    def modules(self) -> dict[str, Verdict]:
        """Each built module's verdict, from its last build."""
        return {build.module: self.module(build) for build in self.report.trace.builds}

    def module_named(self, name: str) -> Verdict:
        return self.modules.get(name) or (
            Verdict(Owner.WARP, "Warp's own module") if name.startswith("warp.") else
            Verdict(Owner.PROJECT, "the project's own code")
        )

    # -- ceilings -------------------------------------------------------------------------------------

    def ceiling(self, files: Iterable[str], functions: Iterable[str], targets: Iterable[str]) -> Ceiling:
        """The highest class a fix editing `files` (in `functions`) to change the builds of `targets` may have."""
        names = list(functions)
        for file in files:
            verdict = self.editable(file, names)
            if EDIT_CEILING[verdict.owner] is None:
                return Ceiling(None, verdict, file)
        highest = Safety.SAFE
        limiting: Verdict | None = None
        for module in targets:
            verdict = self.module_named(module)
            cap = TARGET_CEILING[verdict.owner]
            if cap is None:
                return Ceiling(None, verdict, module)
            if cap.rank < highest.rank:
                highest, limiting = cap, verdict
        return Ceiling(highest, limiting)


@dataclass(frozen=True)
class Ceiling:
    """The highest class a fix may have (None: no edit), and the verdict that set it, on `what` (a file or a
    module)."""

    safety: Safety | None
    verdict: Verdict | None = None
    what: str = ""


_OUTSIDE_ORDER = (Owner.WARP, Owner.INSTALLED, Owner.GENERATED, Owner.MAINTENANCE, Owner.OPTIONAL, Owner.PROJECT)


def optional_reason(kernel: KernelDef) -> str | None:
    """Why the project makes this kernel only on some runs (a plugin, a registry entry, a branch on a kind the
    run is given), or None. A branch on the object's own mode flag (`if self.sync_mode:`) is the module's own
    code: every run of that class may take either side."""
    # a dict's `EFFECTS[...]`, a selector's `effect(...)`, or a lookup by a name made at run time (`{...}`)
    registries = [name for name in kernel.chosen_by if name.endswith(("[...]", "(...)")) or "{...}" in name]
    if registries:
        return f"{kernel.name} is an entry of the registry {registries[0]}: optional plugin code"
    chosen = [name for name in kernel.chosen_by if name != "self"]
    if chosen:
        return f"{kernel.name} is made only in a branch on {', '.join(chosen)}: optional code"
    return None


def _carries_marker(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return GENERATED_MARKER in handle.read()
    except OSError:
        return False


def _path_matches(path: str, pattern: str) -> bool:
    path = path.replace("\\", "/").removeprefix("./")
    pattern = pattern.replace("\\", "/").removeprefix("./").rstrip("/")
    return fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/")


__all__ = ["EDIT_CEILING", "TARGET_CEILING", "Ceiling", "EditPolicy", "Owner", "Scope", "Verdict", "optional_reason"]
