"""What a mechanism is: its identity, `diagnose` and `propose` side by side, and the examples that test it.

The shape of a Fixit rule: one class per mechanism tells its whole story, and the test suite collects its
EXAMPLES (tests/mechanisms/test_examples.py) the way Fixit collects a rule's VALID/INVALID cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Generic

from codemods.specs import CodemodArgs
from warp_fix.model import FactsT, Finding, Proposal
from warp_fix.report import ModuleBuild, Rebuild, Report
from warp_fix.scan.index import SourceIndex
from warp_fix.scope import Owner, Scope


@dataclass
class Inputs:
    """What every mechanism reads: the runtime report, the static index, joined on repo-relative sites, and the
    one `Scope` that says whose code each file, module and kernel is (mechanisms ask it; none re-derives it)."""

    report: Report
    index: SourceIndex
    scope: Scope = field(default=None)  # type: ignore[assignment]  # built from report and index when not given

    def __post_init__(self) -> None:
        if self.scope is None:
            self.scope = Scope(self.report, self.index)

    @property
    def on_cpu_only(self) -> bool:
        return all(b.device.startswith("cpu") for b in self.report.trace.builds)

    @cached_property
    def _run_python_modules(self) -> dict[str, str]:
        """Repo-relative file -> `__name__` of the Python module the run made of it (from its kernels' functions)."""
        names: dict[str, str] = {}
        for build in self.report.trace.builds:
            for kernel in build.kernel_sources:
                file = self.repo_file(kernel.file)
                if file and kernel.python_module and kernel.python_module != "__main__":
                    names.setdefault(file, kernel.python_module)
        return names

    def python_module_of(self, file: str) -> str | None:
        """A repo file's dotted module name: the one the run gave the module object where it imported the file
        (`pkg._src.solver.kernels` under a namespace folder), else the scan's, derived from the folders."""
        return self._run_python_modules.get(file) or self.index.python_module_of(file)

    def repo_file(self, file: str) -> str | None:
        """A report path (relative to the measured cwd, or absolute) as a repo-relative path when it is the
        project's own code (the scope's verdict): not an installed package, even inside the repository's
        virtualenv, and not code compiled from a string (`<string>`: the kernels `wp.map` generates)."""
        return self.scope.project_file(file)

    def rebuilds_because(self, kind: str) -> list[Rebuild]:
        return [r for r in self.report.rebuilds if any(reason.kind == kind for reason in r.reasons)]

    def user_builds(self) -> list[ModuleBuild]:
        return [b for b in self.report.trace.builds if not self._warps_own(b) and b.status != "error"]

    def warp_builds(self) -> list[ModuleBuild]:
        """Warp's own modules (warp.optim.adam, warp.sparse): never a fix's target, but worth naming."""
        return [b for b in self.report.trace.builds if self._warps_own(b) and b.status != "error"]

    @cached_property
    def final_builds(self) -> dict[str, ModuleBuild]:
        """The last build of each user module: the options it ended up with (read by diagnose and propose)."""
        return {build.module: build for build in self.user_builds()}

    def _warps_own(self, build: ModuleBuild) -> bool:
        return self.scope.module_named(build.module).owner is Owner.WARP


@dataclass(frozen=True)
class Example:
    """A situation (a small Report + SourceIndex) and what the mechanism must make of it.

    `fixes` lists the (codemod, safety) of every Fix proposed, in order; `places`, what each of those fixes
    edits (its typed codemod arguments); `declined` is a phrase one of the NotProposed reasons must contain;
    `reason`, a phrase the finding's own reason must contain. Each is checked only when given.
    """

    title: str
    inputs: Inputs
    status: str
    fixes: tuple[tuple[str | None, str], ...] | None = None
    declined: str | None = None
    places: tuple[tuple[CodemodArgs, ...], ...] | None = None
    reason: str | None = None


class Mechanism(Generic[FactsT]):
    """One reason for extra compiles (a row of docs/compile-model.md's table): detection and fix in one place.

    Generic over its facts: a frozen dataclass in its own file, which `diagnose` fills and `propose` reads, so
    propose never recomputes what diagnose found nor reads it back out of a dict or a sentence.
    """

    SLUG: ClassVar[str]  # stable name used by plan, `apply --allow/--only` and commit trailers
    CS: ClassVar[str | None]  # the id in docs/compile-model.md's table ("CS-5"); None for the config trap
    TITLE: ClassVar[str]  # plain language, the Finding's title
    SAFETY: ClassVar[tuple[str, ...]]  # the safety classes its fixes can have (docs/mechanisms.md says when)
    CODEMODS: ClassVar[tuple[str, ...]]  # names in codemods.REGISTRY its fixes use
    EXAMPLES: ClassVar[tuple[Example, ...]]

    def diagnose(self, inputs: Inputs) -> Finding[FactsT]:
        """Fired, ruled out or not applicable, with the evidence and the facts `propose` needs."""
        raise NotImplementedError

    def propose(self, finding: Finding[FactsT], inputs: Inputs) -> Iterable[Proposal]:
        """For a fired finding (its `facts` are set): the fixes that remove its cause, or why none is proposed."""
        raise NotImplementedError
