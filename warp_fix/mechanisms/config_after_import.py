"""The trap: `wp.config.X = V` after the modules that should see it were created is silently ignored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from codemods.specs import ConfigAtEntryArgs, OptionValue
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    entry_file,
    entry_placement,
    fired,
    option_origin,
    ruled_out,
    runtime,
)
from warp_fix.model import CONSENT, FIRED, RULED_OUT, Finding, Fix, NotProposed, Proposal
from warp_fix.probe.inject._warp_fix_tracer import CREATION_TIME_OPTIONS  # the tracer's own list
from warp_fix.scan.index import EntryPoint
from warp_fix.scope import Owner
from warp_fix.wording import noun


@dataclass(frozen=True)
class IgnoredSetting:
    """One `wp.config.<key> = value` made after project modules that copy it at creation existed."""

    key: str
    value: OptionValue
    modules: list[str]  # the project modules that kept the old value
    file: str | None
    line: int | None
    function: str | None
    origins: dict[str, str]  # module -> where the value it kept came from, for people


@dataclass(frozen=True)
class LateConfig:
    ignored: list[IgnoredSetting]


class ConfigAfterImport(Mechanism[LateConfig]):
    SLUG = "config-after-import"
    CS = None
    TITLE = "a wp.config setting made after the modules it should reach were created (silently ignored)"
    SAFETY = (CONSENT,)
    CODEMODS = ("config_at_entry",)

    def diagnose(self, inputs: Inputs) -> Finding[LateConfig]:
        ignored = []
        evidence = []
        project = _project_modules(inputs)
        for change in inputs.report.trace.option_changes:
            if change.kind != "config":
                continue
            for key, value in change.values.items():
                stale = [m for m in change.modules_existing if project(m)]
                if key in CREATION_TIME_OPTIONS and stale:
                    evidence.append(
                        runtime(
                            f"wp.config.{key} = {value!r} after {', '.join(stale)} existed", change.site, inputs
                        )
                    )
                    ignored.append(
                        IgnoredSetting(
                            key=key,
                            value=value,
                            modules=stale,
                            file=inputs.repo_file(change.site.file) if change.site else None,
                            line=change.site.line if change.site else None,
                            function=change.site.function if change.site else None,
                            origins={m: option_origin(inputs, m, key) for m in stale},
                        )
                    )
        if not ignored:
            return ruled_out(
                self.SLUG, self.TITLE, "every wp.config option was set before the modules it reaches were created"
            )
        keys = sorted({item.key for item in ignored})
        return fired(
            self.SLUG,
            self.TITLE,
            f"wp.config.{', '.join(keys)} set too late: the existing modules ignore it",
            evidence=evidence,
            facts=LateConfig(ignored),
        )

    def propose(self, finding: Finding[LateConfig], inputs: Inputs) -> Iterator[Proposal]:
        """The setting moves above the entry point's top-level statement the run shows creating the modules."""
        entry = entry_file(inputs)
        for item in finding.facts.ignored:
            if entry is None:
                yield NotProposed(
                    finding.slug, f"wp.config.{item.key} set too late, but no entry point was found"
                )
                continue
            placement = entry_placement(inputs, entry, item.modules)
            if placement.created_before:
                before = placement.created_before
                yield NotProposed(finding.slug, f"wp.config.{item.key} set too late; {', '.join(before)} "
                                  f"{noun(len(before), 'was', 'were')} {placement.unreachable()}")
            if not placement.reached:
                continue
            modules = placement.reached
            where = (
                f"above {placement.creator()}, the statement that created {noun(len(modules), 'it', 'them')} in the "
                "run,"
                if placement.statement else
                f"right after the entry point's `import warp` ({entry}), before the functions that created "
                f"{noun(len(modules), 'it', 'them')} run"
            )
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Set wp.config.{item.key} before the modules it must reach exist",
                description=f"wp.config.{item.key} = {item.value!r} at {item.file}:{item.line} ran after "
                f"{', '.join(modules)} {noun(len(modules), 'was', 'were')} created, so "
                f"{noun(len(modules), 'it', 'they')} silently kept the old value ("
                + "; ".join(f"{m}: {item.origins[m]}" for m in modules)
                + f"). Setting it {where} makes it take effect: this changes those modules' options, hence consent.",
                safety=CONSENT,
                codemod="config_at_entry",
                places=(placement.args(entry, item.key, item.value, line=item.line if item.file == entry else None),),
                files=[entry],
                lines=[f"{item.file}:{item.line}"],
                expected="makes the setting effective (compile-time effect "
                "depends on the option: untested estimate)",
                allow_options=[item.key],
                targets=list(modules),
            )

    EXAMPLES = (
        Example(
            "wp.config.enable_backward set in main() after the solver module was created: above the import that did",
            case.run(
                builds=[case.build("sim.solver", created_by=[
                    case.frame("sim/solver.py", 8, "@wp.kernel"), case.frame("app/__main__.py", 2, "import sim.solver"),
                ])],
                option_changes=[
                    case.option_change(
                        "warp.config", {"enable_backward": False}, kind="config", modules_existing=["sim.solver"],
                        site=case.site("app/__main__.py", 6, "main"),
                    )
                ],
                source=case.index(
                    files=["app/__main__.py", "sim/solver.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
            places=(
                (ConfigAtEntryArgs(file="app/__main__.py", name="enable_backward", value=False, line=6, before_line=2,
                                   before_statement="import sim.solver"),),
            ),
        ),
        Example(
            "set too late for modules the package's __init__ created before `python -m app` ran its __main__",
            case.run(
                builds=[case.build("app.solver", created_by=[
                    case.frame("app/solver.py", 8, "@wp.kernel"),
                    case.frame("app/__init__.py", 1, "from . import solver"),
                ])],
                option_changes=[
                    case.option_change(
                        "warp.config", {"enable_backward": False}, kind="config", modules_existing=["app.solver"],
                        site=case.site("app/__main__.py", 4),
                    )
                ],
                source=case.index(
                    files=["app/__init__.py", "app/__main__.py", "app/solver.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(),
            declined="app.solver was created before the entry point ran (app.solver by `from . import solver` at "
            "app/__init__.py:1)",
        ),
        Example(
            "set too late, but the program has no entry point in the repository to move it to",
            case.run(
                builds=[case.build("sim.solver")],
                option_changes=[
                    case.option_change(
                        "warp.config", {"max_unroll": 4}, kind="config", modules_existing=["sim.solver"],
                        site=case.site("lib.py", 6, "configure"),
                    )
                ],
                command=["python", "-c", "import lib"],
            ),
            FIRED,
            fixes=(),
            declined="no entry point was found",
        ),
        Example(
            "set after an installed library's kernels were created, before any module of the project",
            case.run(
                builds=[case.build("sim.solver")],
                kernel_defs=[
                    case.kernel_def("integrate", "sim.solver", site=case.site("sim/solver.py", 8)),
                    case.kernel_def("spmv", "fluidlib.ops", site=case.site("/venv/fluidlib/ops.py", 20)),
                ],
                option_changes=[
                    case.option_change(
                        "warp.config", {"enable_backward": False}, kind="config", modules_existing=["fluidlib.ops"],
                        site=case.site("app/__main__.py", 3),
                    )
                ],
                source=case.index(files=["app/__main__.py", "sim/solver.py"]),
            ),
            RULED_OUT,
        ),
        Example(
            "wp.config.enable_backward set before any module existed",
            case.run(
                builds=[case.build("sim.solver")],
                option_changes=[
                    case.option_change("warp.config", {"enable_backward": False}, kind="config", loaded=False)
                ],
            ),
            RULED_OUT,
        ),
    )


def _project_modules(inputs: Inputs) -> Callable[[str], bool]:
    """Whether a Warp module holds kernels of the project (its files are in the repository).

    An installed library imported before the setting (Warp's own modules included) is not the project's to
    reorder: the entry-point fix goes before the first project import, so those modules would be flagged
    again after it was kept. A module whose files the run did not record counts as the project's.
    """
    trace = inputs.report.trace
    files: dict[str, set[str]] = {}
    for kernel in trace.kernel_defs:
        if kernel.site is not None:
            files.setdefault(kernel.module, set()).add(kernel.site.file)
    for build in trace.builds:
        files.setdefault(build.module, set()).update(build.source_files)

    def of_project(module: str) -> bool:
        if inputs.scope.module_named(module).owner is Owner.WARP:
            return False
        known = files.get(module)
        return not known or any(inputs.repo_file(file) for file in known)

    return of_project
