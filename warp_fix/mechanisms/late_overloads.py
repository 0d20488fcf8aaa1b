"""CS-6: a generic kernel's new instance after the first load rebuilds the whole module."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from codemods.specs import RegisterOverloadsArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import builds_of, expected_effect, fired, ms, ruled_out, runtime, static
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import ModuleBuild, Rebuild, RebuildReason, Site, Trace
from warp_fix.wording import counted, noun


@dataclass(frozen=True, kw_only=True)
class GenericKernel:
    """A generic kernel whose new instances rebuilt its module, as the repository defines it (`file` None when it
    does not), and what registering those instances up front could remove."""

    key: str
    renamed: dict[str, str] = field(default_factory=dict)  # instance -> the name it was given after creation
    renamed_by: Site | None = None  # the function that created and renamed the instances (a library's getter)
    name: str
    file: str | None = None
    line: int | None = None
    factory: str | None = None  # the function it is made in; None at module scope
    made_by: str = ""  # decorator | call | the project's decorator
    definitions: int = 0  # defs of its name in the same function (if/else branches)
    overloads: list[list[str]] = field(default_factory=list)  # the run's instance types, as wp.overload types
    unreadable: list[str] = field(default_factory=list)  # signatures with no wp.overload spelling
    removable: dict[int, float] = field(default_factory=dict)  # rebuild's build seq -> its module ms
    forced_by: list[str] = field(default_factory=list)  # the other causes of rebuilds that happen anyway


@dataclass(frozen=True)
class LateInstances:
    generics: list[GenericKernel]


def _instances(module_build: ModuleBuild, *generics: str) -> ModuleBuild:
    """`module_build` holding these generic instances (`key[signature]`, as the tracer records them)."""
    module_build.generics = list(generics)
    return module_build


def _renamed(module_build: ModuleBuild, renamed: dict[str, str]) -> ModuleBuild:
    module_build.renamed_instances = renamed
    return module_build


def _with_new_block_size(rebuild: Rebuild, block_dim: int) -> Rebuild:
    """`rebuild` also caused by a launch at a block size the module had not been built at (CUDA)."""
    rebuild.reasons.append(RebuildReason("block-dim", f"new block_dim {block_dim} requested by a launch", None))
    return rebuild


def _factory_step(**kernel_fields: Any) -> Inputs:
    """warp-nn's shape: the generic `step` made by `_create_kernels()` gets its float64 instance after the build."""
    key = "_create_kernels__locals__step"
    return case.run(
        builds=[
            _instances(case.build("adam"), f"{key}[a1f4]"),
            _instances(
                case.sourced(case.build("adam"), case.kernel_source(key, "adam.py")), f"{key}[a1f4]", f"{key}[a1f8]"
            ),
        ],
        rebuilds=[case.new_instance("adam", f"{key}[a1f8]")],
        source=case.index(
            files=["adam.py"],
            kernels=[
                case.kernel(
                    "step", "adam.py", is_generic=True, enclosing_functions=["_create_kernels"], **kernel_fields
                )
            ],
        ),
    )


class LateOverloads(Mechanism[LateInstances]):
    SLUG = "late-overloads"
    CS = "CS-6"
    TITLE = "generic kernel instances created after the module's first build"
    SAFETY = (SAFE,)
    CODEMODS = ("register_overloads",)

    def diagnose(self, inputs: Inputs) -> Finding[LateInstances]:
        rebuilds = inputs.rebuilds_because("generic-instance")
        if not rebuilds:
            return ruled_out(self.SLUG, self.TITLE, "no module was rebuilt for a new generic instance")
        evidence, rebuilt_by = [], {}  # generic kernel key -> (its module, the rebuilds its new instances caused)
        for rebuild in rebuilds:
            for reason in rebuild.reasons:
                if reason.kind != "generic-instance":
                    continue
                evidence.append(runtime(f"{rebuild.module}: {reason.detail}", reason.site, inputs))
                if reason.kernel:
                    rebuilt_by.setdefault(reason.kernel, (rebuild.module, []))[1].append(rebuild)
        generics = [_generic(key, module, caused, inputs) for key, (module, caused) in rebuilt_by.items()]
        for generic in generics:
            if generic.file:
                where = "inside " + generic.factory + "()" if generic.factory else "at module scope"
                evidence.append(static(f"generic kernel {generic.name} defined {where}", generic.file, generic.line))
        cost = sum(r.module_ms for r in rebuilds)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(rebuilds), 'extra build')} for new generic instances ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=len(rebuilds),
            all_builds=builds_of(inputs, {r.module for r in rebuilds}),
            facts=LateInstances(generics),
        )

    def propose(self, finding: Finding[LateInstances], inputs: Inputs) -> Iterator[Proposal]:
        """One fix per file: every generic of it whose late instances alone rebuilt its module, registered in one
        commit (their rebuilds may need each other's instances)."""
        registrable = []
        elsewhere = [generic.key for generic in finding.facts.generics if not generic.file]
        if elsewhere:
            yield NotProposed(
                finding.slug,
                f"generic {noun(len(elsewhere), 'kernel')} {', '.join(elsewhere)} "
                f"{noun(len(elsewhere), 'is', 'are')} not defined in the repository: an installed package's to "
                "register",
            )
        for generic in finding.facts.generics:
            kernel, file, factory = generic.name, generic.file, generic.factory
            if not file:
                continue
            if factory and generic.made_by != "decorator":
                how = "a wp.kernel(...) call" if generic.made_by == "call" else "the project's kernel decorator"
                yield NotProposed(
                    finding.slug,
                    f"generic kernel {kernel} ({file}:{generic.line}) is made inside {factory}() by {how}: "
                    "register_overloads places its calls after a def decorated with wp.kernel",
                )
            elif factory and generic.definitions > 1:
                yield NotProposed(
                    finding.slug,
                    f"generic kernel {kernel} ({file}:{generic.line}) is defined {generic.definitions} times "
                    f"in {factory}(): the run's instances cannot be told apart by definition",
                )
            elif generic.renamed:
                instance, name = next(iter(generic.renamed.items()))
                maker = generic.renamed_by
                yield NotProposed(
                    finding.slug,
                    f"generic kernel {kernel}'s instance {instance} is renamed {name} after it is created"
                    + (f" by {maker.function}() ({maker.file}:{maker.line})" if maker else "")
                    + ": registered up front it would enter the first build under Warp's name and be renamed after "
                    "it, so the module would still build twice"
                    + (f"; calling {maker.function}() for its types at import would name it in time" if maker else ""),
                )
            elif not generic.removable:
                yield NotProposed(
                    finding.slug,
                    f"generic kernel {kernel} ({file}:{generic.line}): its new instances arrived in builds "
                    f"that happen anyway ({generic.forced_by[0]}): registering them up front removes no build",
                )
            elif generic.unreadable or not generic.overloads:
                yield NotProposed(
                    finding.slug,
                    f"generic kernel {kernel} ({file}:{generic.line}): the run's instance types "
                    f"{', '.join(generic.unreadable) or '(none)'} have no wp.overload spelling",
                )
            else:
                registrable.append(generic)
        by_file: dict[str, list[GenericKernel]] = {}
        for generic in registrable:
            by_file.setdefault(generic.file, []).append(generic)
        for generics in by_file.values():
            yield _registration(finding, generics)

    EXAMPLES = (
        Example(
            "warp.sparse's own generic kernels get a float64 instance after their first build: the package's to fix",
            case.run(
                builds=[
                    _instances(case.build("_diag_mv_kernel_55845888"), "_diag_mv_kernel[a1f4]"),
                    _instances(
                        case.sourced(
                            case.build("_diag_mv_kernel_55845888"),
                            case.kernel_source("_diag_mv_kernel", "/venv/site-packages/warp/_src/sparse.py", 90),
                        ),
                        "_diag_mv_kernel[a1f4]",
                        "_diag_mv_kernel[a1f8]",
                    ),
                ],
                rebuilds=[case.new_instance("_diag_mv_kernel_55845888", "_diag_mv_kernel[a1f8]")],
            ),
            FIRED,
            fixes=(),
            declined="generic kernel _diag_mv_kernel is not defined in the repository: an installed package's",
        ),
        Example(
            "a module-scope generic kernel launched with float32, then float64 arrays after the first build",
            case.run(
                builds=[
                    _instances(case.build("sim"), "scale[a1f4_f4]"),
                    _instances(
                        case.sourced(case.build("sim"), case.kernel_source("scale", "sim.py", 9)),
                        "scale[a1f4_f4]",
                        "scale[a1f8_f8]",
                    ),
                ],
                rebuilds=[case.new_instance("sim", "scale[a1f8_f8]")],
                source=case.index(files=["sim.py"], kernels=[case.kernel("scale", "sim.py", is_generic=True)]),
            ),
            FIRED,
            fixes=(("register_overloads", SAFE),),
        ),
        Example(
            "a library's getter creates the instance and renames it (nvalchemi's `set_fn_name`): registering it up "
            "front would not keep its name, so no fix",
            case.run(
                builds=[
                    _instances(case.build("utils"), "inv[a1f4_f4]"),
                    _renamed(
                        _instances(
                            case.sourced(case.build("utils"), case.kernel_source("inv", "utils.py", 9)),
                            "inv[a1f4_f4]",
                            "inv[a1f8_f8]",
                        ),
                        {"inv[a1f8_f8]": "inv__f64"},
                    ),
                ],
                rebuilds=[case.new_instance("utils", "inv[a1f8_f8]")],
                source=case.index(files=["utils.py"], kernels=[case.kernel("inv", "utils.py", is_generic=True)]),
            ),
            FIRED,
            fixes=(),
            declined="is renamed inv__f64 after it is created: registered up front",
        ),
        Example(
            "a generic kernel made inside a factory (warp-nn's Adam step): registered inside the factory",
            _factory_step(),
            FIRED,
            fixes=(("register_overloads", SAFE),),
        ),
        Example(
            "a generic kernel made by a wp.kernel(fn) call inside a factory: no def to place the calls after",
            _factory_step(made_by="call"),
            FIRED,
            fixes=(),
            declined="inside _create_kernels() by a wp.kernel(...) call",
        ),
        Example(
            "a float64 instance that first runs at a new CUDA block size (gpu_overloads' `accumulate`): the module "
            "builds at that size anyway, so registering it removes no build",
            case.run(
                builds=[
                    _instances(case.build("ops", device="cuda:0", block_dim=128), "lerp[a1f4]"),
                    _instances(
                        case.sourced(case.build("ops", device="cuda:0", block_dim=256),
                                     case.kernel_source("acc", "ops.py", 16)),
                        "lerp[a1f4]",
                        "acc[a1f8]",
                    ),
                ],
                rebuilds=[
                    _with_new_block_size(
                        case.new_instance("ops", "acc[a1f8]"), 256
                    )
                ],
                source=case.index(files=["ops.py"], kernels=[case.kernel("acc", "ops.py", 16, is_generic=True)]),
            ),
            FIRED,
            fixes=(),
            declined="(new block_dim 256 requested by a launch): registering them up front removes no build",
        ),
        Example(
            "a generic kernel launched with one type signature only",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("scale", "sim", dtypes=["array[float32,1]", "float32"])],
            ),
            RULED_OUT,
        ),
    )


_SCALARS = {
    "i1": "wp.int8",
    "i2": "wp.int16",
    "i4": "wp.int32",
    "i8": "wp.int64",
    "u1": "wp.uint8",
    "u2": "wp.uint16",
    "u4": "wp.uint32",
    "u8": "wp.uint64",
    "f2": "wp.float16",
    "f4": "wp.float32",
    "f8": "wp.float64",
    "b": "wp.bool",
}
# Warp's named 2-4 vectors and square matrices (`wp.vec3i`, `wp.mat33f`): the spelling authors write
_VECTOR_SUFFIX = {
    "f2": "h",
    "f4": "f",
    "f8": "d",
    "i1": "b",
    "u1": "ub",
    "i2": "s",
    "u2": "us",
    "i4": "i",
    "u4": "ui",
    "i8": "l",
    "u8": "ul",
}
_ARRAY = re.compile(r"a(?P<ndim>\d)(?P<element>.+)")
_VECTOR = re.compile(r"v(?P<length>\d+)(?P<scalar>[a-z]\d?)")
_MATRIX = re.compile(r"m(?P<rows>\d)(?P<cols>\d)(?P<scalar>[a-z]\d?)")


def _generic(key: str, module: str, rebuilds: list[Rebuild], inputs: Inputs) -> GenericKernel:
    """The generic kernel `key` found by its code object (the tracer's file:line), with the instances the run used
    and what its rebuilds say registering them could remove."""
    trace = inputs.report.trace
    sites = [(s.file, s.line) for b in trace.builds for s in b.kernel_sources if s.key == key]
    sites += [(d.site.file, d.site.line) for d in trace.kernel_defs if d.key == key and d.site is not None]
    kernel = next(
        (k for file, line in sites if (repo := inputs.repo_file(file)) and (k := inputs.index.kernel_at(repo, line))),
        None,
    )
    signatures = sorted(
        {
            g.partition("[")[2].removesuffix("]")
            for b in trace.builds
            if b.module == module
            for g in b.generics
            if g.partition("[")[0] == key
        }
    )
    overloads, unreadable = [], []
    for signature in signatures:
        types = [_type_expression(code) for code in signature.split("_")]
        if None in types:
            unreadable.append(signature)
        else:
            overloads.append(types)
    removable, forced_by = _removable(rebuilds)
    if kernel is None or not inputs.scope.in_project(kernel):
        return GenericKernel(key=key, name=key, removable=removable, forced_by=forced_by)
    renamed = {
        instance: name
        for b in trace.builds
        if b.module == module
        for instance, name in b.renamed_instances.items()
        if instance.partition("[")[0] == key
    }
    return GenericKernel(
        key=key,
        name=kernel.name,
        file=kernel.file,
        renamed=renamed,
        renamed_by=_overload_site(trace, key),
        line=kernel.line,
        factory=kernel.enclosing_functions[-1] if kernel.enclosing_functions else None,
        made_by=kernel.made_by,
        definitions=sum(
            k.file == kernel.file and k.name == kernel.name and k.enclosing_functions == kernel.enclosing_functions
            for k in inputs.index.kernels
        ),
        overloads=overloads,
        unreadable=unreadable,
        removable=removable,
        forced_by=forced_by,
    )


def _registration(finding: Finding, generics: list[GenericKernel]) -> Fix:
    """The register_overloads fix for the generics of one file (one codemod call per kernel)."""
    file = generics[0].file
    places = tuple(
        RegisterOverloadsArgs(file=file, kernel=g.name, overloads=g.overloads, factory=g.factory or None)
        for g in generics
    )
    names = [g.name for g in generics]
    factories = {g.factory for g in generics}
    factory = factories.pop() if len(factories) == 1 else None
    removable = {seq: ms for g in generics for seq, ms in g.removable.items()}  # one rebuild may need several
    removes, removes_ms = len(removable), round(sum(removable.values()), 3)
    return Fix(
        id="",
        slug=finding.slug,
        title=f"Register the {_and(names)} overloads used at run time up front"
        + (f" in {factory}()" if factory else ""),
        description=_why_register(generics),
        safety=SAFE,
        codemod="register_overloads",
        places=places,
        files=[file],
        lines=[f"{file}:{g.line}" for g in generics],
        expected=expected_effect(finding, removes, removes_ms),
        expected_builds_removed=removes,
        expected_ms=removes_ms,
    )


def _why_register(generics: list[GenericKernel]) -> str:
    """Why registering these generics (one file's) up front helps: one sentence for those at module scope, one
    for those made inside factories."""
    sentences = []
    at_module_scope = [g for g in generics if not g.factory]
    in_factories = [g for g in generics if g.factory]
    if at_module_scope:
        sentences.append(
            f"{_generic_and_signatures(at_module_scope)}; each new one after the first build rebuilt the module. "
            "Registering them at module scope builds them together."
        )
    if in_factories:
        where = _and(list(dict.fromkeys(f"{g.factory}()" for g in in_factories)))
        sentences.append(
            f"{_generic_and_signatures(in_factories, where)}, and each new one after the module's first build "
            f"rebuilt it. Registering them inside {where}, right after the kernel's definition, puts them in the "
            "first build of each factory call's module."
        )
    return " ".join(sentences)


def _generic_and_signatures(generics: list[GenericKernel], factory: str = "") -> str:
    """'axpy and residual are generic and the run used 3 and 2 type signatures'."""
    names = _and([g.name for g in generics])
    counts = _and([str(len(g.overloads)) for g in generics])
    made = f" and made inside {factory}" if factory else ""
    signatures = noun(sum(len(g.overloads) for g in generics), "type signature")
    used = f"; the run used {counts} {signatures}" if factory else f" and the run used {counts} {signatures}"
    return f"{names} {'is' if len(generics) == 1 else 'are'} generic{made}{used}"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _removable(rebuilds: list[Rebuild]) -> tuple[dict[int, float], list[str]]:
    """What registering a generic up front can remove: the rebuilds (build seq -> module ms) whose only causes are
    new generic instances; and the other causes of those that happen anyway (a new CUDA block size, a late option
    or kernel), where the instance registered up front would only enlarge the earlier builds."""
    removable: dict[int, float] = {}
    forced_by: list[str] = []
    for rebuild in rebuilds:
        others = [reason.detail for reason in rebuild.reasons if reason.kind != "generic-instance"]
        if others:
            forced_by += [detail for detail in others if detail not in forced_by]
        else:
            removable[rebuild.build_seq] = rebuild.module_ms
    return removable, forced_by


def _overload_site(trace: Trace, key: str) -> Site | None:
    """The function that created the instances with wp.overload (a library's lazy getter), if traced."""
    sites = [o.site for o in trace.overloads if o.kernel == key and o.site is not None]
    return sites[-1] if sites else None


def _type_expression(code: str) -> str | None:
    """A Warp type code of a signature as a wp.overload type: 'a1f8' -> 'wp.array(dtype=wp.float64)'."""
    if array := _ARRAY.fullmatch(code):
        element = _type_expression(array["element"])
        if element is None or element.startswith("wp.array"):
            return None
        ndim = array["ndim"]
        return f"wp.array(dtype={element})" if ndim == "1" else f"wp.array(dtype={element}, ndim={ndim})"
    if vector := _VECTOR.fullmatch(code):
        scalar, length = _SCALARS.get(vector["scalar"]), vector["length"]
        if length in "234" and vector["scalar"] in _VECTOR_SUFFIX:
            return f"wp.vec{length}{_VECTOR_SUFFIX[vector['scalar']]}"
        return scalar and f"wp.types.vector(length={length}, dtype={scalar})"
    if matrix := _MATRIX.fullmatch(code):
        scalar, rows, cols = _SCALARS.get(matrix["scalar"]), matrix["rows"], matrix["cols"]
        if rows == cols and rows in "234" and matrix["scalar"] in ("f2", "f4", "f8"):
            return f"wp.mat{rows}{cols}{_VECTOR_SUFFIX[matrix['scalar']]}"
        return scalar and f"wp.types.matrix(shape=({rows}, {cols}), dtype={scalar})"
    return _SCALARS.get(code)
