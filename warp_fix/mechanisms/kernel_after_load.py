"""CS-1: kernels defined after their module loaded add a full rebuild of the module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from codemods.specs import KernelsToModuleScopeArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import builds_of, expected_effect, fired, ms, ruled_out, runtime, static
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import Rebuild, Site
from warp_fix.scan.index import KernelDef
from warp_fix.scope import optional_reason
from warp_fix.wording import counted, noun


@dataclass(frozen=True)
class LateKernel:
    """A kernel that joined its module after the module's first build, and its definition in the repository."""

    module: str
    key: str  # the kernel's key in the run
    file: str | None  # where it is defined, repo-relative; None outside the repository
    line: int | None  # None when the run recorded no definition site
    function: str | None
    first_build_files: list[str]  # repository files with kernels in the module's build before it joined
    # what the scan knows of its definition (the defaults when `defined_in_repo` is False)
    defined_in_repo: bool = False
    chosen_by: list[str] = field(default_factory=list)  # the branch conditions that make it: optional
    factory: str | None = None  # the function it is made in; None at module scope
    captures: list[str] = field(default_factory=list)
    module_kind: str = ""
    alternatives: list[str] = field(default_factory=list)  # kernels the same factory makes in its place
    optional: str | None = None  # why the scope calls it optional code (a plugin, a kind's branch): never edited


@dataclass(frozen=True)
class LateKernels:
    late_kernels: list[LateKernel]


class KernelAfterLoad(Mechanism[LateKernels]):
    SLUG = "kernel-after-load"
    CS = "CS-1"
    TITLE = "kernels defined after their module's first build"
    SAFETY = (SAFE, ADVISORY)
    CODEMODS = ("kernels_to_module_scope",)

    def diagnose(self, inputs: Inputs) -> Finding[LateKernels]:
        rebuilds = inputs.rebuilds_because("kernel-added")
        if not rebuilds:
            return ruled_out(
                self.SLUG, self.TITLE, "no module was rebuilt because a kernel appeared after its first build"
            )
        evidence, late = [], []
        for rebuild in rebuilds:
            for reason in rebuild.reasons:
                if reason.kind != "kernel-added":
                    continue
                site = reason.site or _definition_site(reason.kernel, rebuild.module, inputs)
                evidence.append(runtime(f"{rebuild.module}: {reason.detail}", site, inputs))
                kernel = _scanned_definition(site, inputs)
                late.append((_late_kernel(rebuild, reason.kernel, site, kernel, inputs), kernel))
        for item, kernel in late:
            if kernel is not None:
                where = f"inside {item.factory}" if item.factory else "at module scope"
                evidence.append(static(f"kernel {kernel.name} defined {where}", kernel.file, kernel.line))
        cost = sum(r.module_ms for r in rebuilds)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(rebuilds), 'extra build')} because kernels joined a module after it loaded ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=len(rebuilds),
            all_builds=builds_of(inputs, {r.module for r in rebuilds}),
            facts=LateKernels([item for item, _ in late]),
        )

    def propose(self, finding: Finding[LateKernels], inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        factories: dict[tuple[str, str], list[str]] = {}
        optional: dict[tuple[str, str], list[LateKernel]] = {}
        for item in finding.facts.late_kernels:
            where = f"{item.file}:{item.line}"
            if item.line is None:
                yield NotProposed(finding.slug, f"late kernel {item.key}: the run recorded no definition site for it")
            elif not item.file or not item.defined_in_repo:
                yield NotProposed(finding.slug, f"late kernel at {where} is not in the repository's source")
            elif item.optional:
                yield NotProposed(finding.slug, f"kernel at {where} is left alone: {item.optional}")
            elif item.chosen_by and (stays := _why_optional_stays(item)):
                yield NotProposed(
                    finding.slug,
                    f"kernel at {where} is optional: {item.factory}() makes it only in a branch on "
                    f"{', '.join(item.chosen_by)}, so only some runs build it; moved to module scope "
                    f"every run would compile it. Left alone ({stays})",
                )
            elif item.captures:
                yield NotProposed(
                    finding.slug,
                    f"kernel at {where} captures {', '.join(item.captures)}: made per "
                    "call from runtime data, so it stays where it is",
                )
            elif item.factory is None:
                yield Fix(
                    id="",
                    slug=finding.slug,
                    title="Import late kernels before the first launch",
                    description=f"Kernel at {where} is defined at module scope but its file is imported after "
                    "its module's first build: import it earlier (advisory: import order is the author's call).",
                    safety=ADVISORY,
                    codemod=None,
                    files=[item.file],
                    lines=[where],
                    expected=expected_effect(finding),
                )
            else:
                kernels = factories.setdefault((item.file, item.factory), [])
                if item.function not in kernels:
                    kernels.append(item.function)
                    if item.chosen_by:
                        optional.setdefault((item.file, item.factory), []).append(item)
        for (file, factory), kernels in factories.items():
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Define the kernels of {factory}() at module scope",
                description=f"{', '.join(kernels)} {noun(len(kernels), 'was', 'were')} created inside "
                f"{factory}() after their module's first build; defined at module scope they join the module before "
                "it loads, so it builds once."
                + "".join(_why_optional_moves(item) for item in optional.get((file, factory), [])),
                safety=SAFE,
                codemod="kernels_to_module_scope",
                places=(KernelsToModuleScopeArgs(file=file, factory=factory, kernels=kernels),),
                files=[file],
                lines=[
                    f"{file}:{index.kernel_named(k, file).line}" for k in kernels if index.kernel_named(k, file)
                ],
                expected=expected_effect(finding),
                expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )

    EXAMPLES = (
        Example(
            "a kernel made by a factory that captures nothing joins the module after its first launch",
            case.run(
                builds=[case.build("sim"), case.build("sim", kernels=["sim.integrate", "sim.damp"])],
                rebuilds=[case.kernel_added("sim", "damp", site=case.site("sim.py", 12, "damp"))],
                source=case.index(
                    files=["sim.py"], kernels=[case.kernel("damp", "sim.py", 12, enclosing_functions=["make"])]
                ),
            ),
            FIRED,
            fixes=(("kernels_to_module_scope", SAFE),),
            places=((KernelsToModuleScopeArgs(file="sim.py", factory="make", kernels=["damp"]),),),
        ),
        Example(
            "a late kernel at module scope of a file imported late: import order is the author's call",
            case.run(
                builds=[case.build("sim"), case.build("sim")],
                rebuilds=[case.kernel_added("sim", "damp", site=case.site("sim.py", 12, "damp"))],
                source=case.index(files=["sim.py"], kernels=[case.kernel("damp", "sim.py", 12)]),
            ),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "a late kernel that captures the factory's runtime argument stays where it is",
            case.run(
                builds=[case.build("sim"), case.build("sim")],
                rebuilds=[case.kernel_added("sim", "scaled", site=case.site("sim.py", 12, "scaled"))],
                source=case.index(
                    files=["sim.py"],
                    kernels=[case.kernel("scaled", "sim.py", 12, enclosing_functions=["make"], captures=["factor"])],
                ),
            ),
            FIRED,
            fixes=(),
            declined="captures factor",
        ),
        Example(
            "a late kernel made only for the plugin kind the run asked for stays optional",
            case.run(
                builds=[case.build("sim"), case.build("sim")],
                rebuilds=[case.kernel_added("sim", "toon", site=case.site("sim.py", 12, "toon"))],
                source=case.index(
                    files=["sim.py"],
                    kernels=[case.kernel("toon", "sim.py", 12, enclosing_functions=["make"], chosen_by=["kind"])],
                ),
            ),
            FIRED,
            fixes=(),
            declined="optional code",
        ),
        Example(
            "an optional kernel that captures nothing joins a module its file's kernels built first: hoisted",
            case.run(
                builds=[
                    case.sourced(case.build("rec"), case.kernel_source("encode", "rec.py", 5)),
                    case.sourced(
                        case.build("rec"),
                        case.kernel_source("encode", "rec.py", 5),
                        case.kernel_source("Recorder__record__locals__advance", "rec.py", 20),
                    ),
                ],
                rebuilds=[
                    case.kernel_added(
                        "rec", "Recorder__record__locals__advance", site=case.site("rec.py", 20, "advance")
                    )
                ],
                source=case.index(
                    files=["rec.py"],
                    kernels=[
                        case.kernel("advance", "rec.py", 20, enclosing_functions=["record"], chosen_by=["self"])
                    ],
                ),
            ),
            FIRED,
            fixes=(("kernels_to_module_scope", SAFE),),
        ),
        Example(
            "an optional kernel that reads a local through wp.static stays where it is",
            case.run(
                builds=[
                    case.sourced(case.build("rec"), case.kernel_source("encode", "rec.py", 5)),
                    case.build("rec"),
                ],
                rebuilds=[case.kernel_added("rec", "smooth", site=case.site("rec.py", 20))],
                source=case.index(
                    files=["rec.py"],
                    kernels=[
                        case.kernel(
                            "smooth", "rec.py", 20, enclosing_functions=["record"], chosen_by=["self"],
                            captures=["width"],
                        )
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="captures width",
        ),
        Example(
            "one of the kernels a dispatch makes in each other's place stays optional, even in a module built first",
            case.run(
                builds=[
                    case.sourced(case.build("fx"), case.kernel_source("clip", "fx.py", 5)),
                    case.build("fx"),
                ],
                rebuilds=[case.kernel_added("fx", "toon", site=case.site("fx.py", 12))],
                source=case.index(
                    files=["fx.py"],
                    kernels=[
                        case.kernel("toon", "fx.py", 12, enclosing_functions=["make"], chosen_by=["kind"]),
                        case.kernel("sepia", "fx.py", 18, enclosing_functions=["make"], chosen_by=["kind"]),
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="toon is made only in a branch on kind: optional code",
        ),
        Example(
            "an optional kernel whose module was first built from another file stays: its file is a plugin's own",
            case.run(
                builds=[
                    case.sourced(case.build("shared"), case.kernel_source("core", "core.py", 5)),
                    case.build("shared"),
                ],
                rebuilds=[
                    case.kernel_added("shared", "glow", site=case.site("glow.py", 8))
                ],
                source=case.index(
                    files=["core.py", "glow.py"],
                    kernels=[
                        case.kernel(
                            "glow", "glow.py", 8, enclosing_functions=["make"], chosen_by=["enabled"],
                            module_kind="literal", module_value="shared",
                        )
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="glow is made only in a branch on enabled: optional code",
        ),
        Example(
            "a factory-made kernel renamed per dtype, its rebuild reason without a site: found by its code object",
            case.run(
                builds=[
                    case.build("cells"),
                    case.sourced(case.build("cells"), case.kernel_source("_stage__f32", "cells.py", 12)),
                ],
                rebuilds=[case.kernel_added("cells", "_stage__f32")],
                source=case.index(
                    files=["cells.py"],
                    kernels=[
                        case.kernel("_kernel", "cells.py", 13, enclosing_functions=["_make_stage"], captures=["dtype"])
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="captures dtype",
        ),
        Example(
            "a late kernel the run recorded no definition for",
            case.run(
                builds=[case.build("cells"), case.build("cells")],
                rebuilds=[case.kernel_added("cells", "_stage__f32")],
            ),
            FIRED,
            fixes=(),
            declined="no definition site",
        ),
        Example("every module built once", case.run(builds=[case.build("sim")]), RULED_OUT),
    )


def _why_optional_stays(item: LateKernel) -> str | None:
    """Why an optional late kernel is left where it is; None when moving it costs one small kernel in a module
    every run builds anyway, which is less than the rebuild of that whole module it saves the runs that choose it.

    That holds only for a kernel that captures nothing (a closure variable or a local read through `wp.static`
    would be run-time data), that is the only kernel its choice makes (plugins of a registry or the branches of a
    dispatch would all be compiled by every run), and whose own file had kernels in the module's first build
    (so that file is imported, and the module built, before the kernel joins: not a plugin file of its own).
    """
    registries = [name for name in item.chosen_by if name.endswith("[...]")]
    if registries:
        return f"each entry of {registries[0]} is a plugin of its own"
    if item.alternatives:
        return f"{item.factory}() makes {', '.join(item.alternatives)} in its place"
    if item.captures:
        return f"it captures {', '.join(item.captures)}"
    if item.module_kind not in ("default", "literal"):
        return f"its Warp module is not fixed in the source (module kind {item.module_kind})"
    if item.file not in item.first_build_files:
        return f"the run shows no build of {item.module} with kernels of {item.file} before it joined"
    return None


def _why_optional_moves(item: LateKernel) -> str:
    return (
        f" {item.function} is optional ({item.factory}() makes it only in a branch on "
        f"{', '.join(item.chosen_by)}), but it captures nothing and joins {item.module}, which every run "
        "builds before it: at module scope it adds one small kernel to that build in the runs that never launch it, "
        "instead of a rebuild of the whole module in the runs that do."
    )


def _files_built_before(rebuild: Rebuild, key: str, inputs: Inputs) -> list[str]:
    """Repository files of the kernels in the module's first build on the rebuild's device, when that build did not
    hold the late kernel yet (the module was built before the kernel joined); empty otherwise."""
    first = next(
        (
            b
            for b in inputs.report.trace.builds
            if b.module == rebuild.module and b.device == rebuild.device and b.status != "error"
        ),
        None,
    )
    if first is None or key in first.kernels:
        return []
    return list(dict.fromkeys(file for k in first.kernel_sources if (file := inputs.repo_file(k.file))))


def _scanned_definition(site: Site | None, inputs: Inputs) -> KernelDef | None:
    """The repository's definition of a late kernel: at its site's line, else by its function's name."""
    file = inputs.repo_file(site.file) if site else None
    if site is None or not file:
        return None
    return inputs.index.kernel_at(file, site.line) or inputs.index.kernel_named(site.function, file)


def _late_kernel(rebuild: Rebuild, key: str, site: Site | None, kernel: KernelDef | None, inputs: Inputs) -> LateKernel:
    """The late kernel `key` of a rebuild, with what its scanned definition (if any) says of it."""
    file = inputs.repo_file(site.file) if site else None
    found = LateKernel(
        rebuild.module, key, file, site.line if site else None, site.function if site else None,
        _files_built_before(rebuild, key, inputs),
    )
    if kernel is None:
        return found
    alternatives = [
        k.name
        for k in inputs.index.kernels
        if k is not kernel
        and k.chosen_by
        and k.file == kernel.file
        and k.enclosing_functions == kernel.enclosing_functions
    ]
    return replace(
        found,
        function=kernel.name,
        defined_in_repo=True,
        chosen_by=list(kernel.chosen_by),
        factory=kernel.enclosing_functions[-1] if kernel.enclosing_functions else None,
        captures=list(kernel.captures),
        module_kind=kernel.module_kind,
        alternatives=alternatives,
        optional=inputs.scope.static_kernel(kernel).reason if optional_reason(kernel) else None,
    )


def _definition_site(key: str, module: str, inputs: Inputs) -> Site | None:
    """Where the late kernel's function is defined, by its code object: the builds' kernel sources, else its
    creation record. Kernels a factory renames (nvalchemi's `_kernel` keyed `<stage>__f32`) have no site of
    their own in the rebuild reason."""
    trace = inputs.report.trace
    for build in trace.builds:
        if build.module == module:
            for source in build.kernel_sources:
                if source.key == key:
                    return Site(file=source.file, line=source.line, function=source.function)
    return next((d.site for d in trace.kernel_defs if d.key == key and d.site is not None), None)
