"""Small Report + SourceIndex builders, so a mechanism's EXAMPLES read like the situation they describe.

Only the facts an example is about are given; everything else gets a neutral default (a CPU run, 100 ms per
build, a clean warm run). Paths are repo-relative under ROOT, which is joined and compared, never opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from warp_fix.mechanisms._base import Inputs
from warp_fix.report import (
    SCHEMA_VERSION,
    CacheDirEvidence,
    CacheOp,
    GradientUse,
    KernelDef,
    KernelSource,
    Launch,
    LoadCall,
    LtoBuild,
    ModuleBuild,
    OptionChange,
    OptionSource,
    Output,
    Rebuild,
    RebuildReason,
    Report,
    Site,
    StackFrame,
    Stat,
    Summary,
    TapeUse,
    Trace,
)
from warp_fix.scan import index as static
from warp_fix.scan.index import SourceFile, SourceIndex

ROOT = "/example-repo"


def site(file: str, line: int, function: str = "<module>", stack: Sequence[str] = ()) -> Site:
    return Site(file=file, line=line, function=function, stack=tuple(stack))


def frame(file: str, line: int, text: str = "", function: str = "<module>") -> StackFrame:
    """A frame of a module's creation stack: a file's top-level statement unless `function` says otherwise."""
    return StackFrame(file=file, line=line, function=function, text=text)


def build(
    module: str,
    *,
    device: str = "cpu",
    block_dim: int | None = None,
    ms: float = 100.0,
    native_ms: float = 50.0,
    kernels: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    lto_kinds: Sequence[str] = (),
    option_sources: dict[str, OptionSource] | None = None,
    seq: int = 0,
    created_by: Sequence[StackFrame] = (),
) -> ModuleBuild:
    """One compiled module load; its kernels default to one kernel named after the module. `created_by`: the
    creation stack, innermost first (the decorator's line, then the imports down from the entry point)."""
    built = ModuleBuild(
        seq=seq, t_ms=0.0, module=module, hash=f"{module}@{block_dim}", device=device,
        block_dim=block_dim, status="compiled", module_ms=ms, native_ms=native_ms,
        options={"enable_backward": True, **(options or {})},
        kernels=list(kernels) if kernels is not None else [f"{module}.kernel"], generics=[],
        cache_dir=None, site=None, lto_builds=len(lto_kinds), lto_kinds=list(lto_kinds),
        creation_stack=tuple(created_by),
    )
    built.option_sources = dict(option_sources or {})
    return built


def launch(
    function: str,
    module: str,
    *,
    device: str = "cpu",
    block_dim: int | None = None,
    dtypes: Sequence[str] = (),
    adjoint: bool = False,
    site: Site | None = None,
) -> Launch:
    return Launch(
        seq=0, kernel=f"{module}.{function}", function=function, module=module, dim=[8], dtypes=list(dtypes),
        device=device, block_dim=block_dim, adjoint=adjoint, tiled=False, site=site,
    )


def kernel_source(
    function: str,
    file: str,
    line: int = 10,
    *,
    kind: str = "file",
    options: dict[str, Any] | None = None,
    adjoint: bool = True,
    created: Site | None = None,
    differentiable_arguments: bool = True,
) -> KernelSource:
    """A kernel of a build as the tracer attributes it: by its function's file and line; `differentiable_arguments`
    False for a kernel of integer/bool arguments only."""
    return KernelSource(
        key=function, file=file, line=line, function=function, qualname=function, module_kind=kind,
        options=dict(options or {}), enable_backward=adjoint, adjoint=adjoint, created=created,
        differentiable_arguments=differentiable_arguments,
    )


def sourced(module_build: ModuleBuild, *sources: KernelSource) -> ModuleBuild:
    """`module_build` with the kernel sources the tracer records (kinds, files and adjoint count follow)."""
    module_build.kernel_sources = list(sources)
    module_build.kernels = [k.key for k in sources]
    module_build.source_files = sorted({k.file for k in sources})
    kinds = {k.module_kind for k in sources}
    module_build.module_kind = kinds.pop() if len(kinds) == 1 else "mixed"
    module_build.adjoint_kernels = sum(k.adjoint for k in sources)
    return module_build


def rebuild(
    module: str,
    kind: str,
    detail: str,
    *,
    site: Site | None = None,
    ms: float = 100.0,
    kernel: str = "",
    set_by: str = "",
    lto_symbol: str = "",
) -> Rebuild:
    """A second build of `module`, explained by one reason of `kind` (kernel-added, option, ...) with the typed
    fields why-rebuilt gives it (`kernel` added or generic, option `set_by`, MathDx `lto_symbol` relinked)."""
    reason = RebuildReason(kind, detail, site, kernel=kernel, set_by=set_by, lto_symbol=lto_symbol)
    return Rebuild(
        module=module, device="cpu", from_hash="aaaaaaa", to_hash="bbbbbbb", build_seq=0, module_ms=ms,
        reasons=[reason],
    )


def kernel_added(module: str, kernel: str, *, site: Site | None = None) -> Rebuild:
    """`module` built again because `kernel` joined it after its first build (`site`: where it is defined)."""
    detail = f"kernel '{kernel}' added after the previous build"
    return rebuild(module, "kernel-added", detail, site=site, kernel=kernel)


def new_instance(module: str, instance: str) -> Rebuild:
    """`module` built again for a new instance (`key[signature]`) of its generic kernel `key`."""
    detail = f"new generic instance {instance} by a launch"
    return rebuild(module, "generic-instance", detail, kernel=instance.partition("[")[0])


def option_change(
    target: str,
    values: dict[str, Any],
    *,
    kind: str = "set_module_options",
    loaded: bool = True,
    has_kernels: bool = True,
    modules_existing: Sequence[str] = (),
    site: Site | None = None,
    library_caller: Site | None = None,
    seq: int = 0,
) -> OptionChange:
    """`library_caller`: the call was made inside an installed package, at that line (`site` led there)."""
    return OptionChange(
        seq=seq, t_ms=0.0, kind=kind, target=target, values=values, old_values={}, target_loaded=loaded,
        target_has_kernels=has_kernels, modules_existing=list(modules_existing), site=site,
        caller=library_caller or site, from_library=library_caller is not None,
    )


def cache_op(kind: str, value: Any = None, *, site: Site | None = None) -> CacheOp:
    return CacheOp(seq=0, kind=kind, value=value, site=site)


def kernel_def(function: str, module: str, *, unique: bool = False, site: Site | None = None) -> KernelDef:
    """A kernel the run created: at module scope, or inside the function `site` names."""
    return KernelDef(
        seq=0, key=f"{module}.{function}", function=function, module=module, unique=unique,
        at_module_scope=site is None, generic=False, site=site,
    )


def load_call(devices: Sequence[str], max_workers: int | None, *, site: Site | None = None) -> LoadCall:
    return LoadCall(
        seq=0, function="force_load", devices=list(devices), modules=None, block_dim=None, max_workers=max_workers,
        site=site,
    )


def lto(module: str, kernel: str, kind: str = "dot", *, ms: float = 2000.0) -> LtoBuild:
    """A MathDx LTO build that `kernel`'s code generation asked for while `module` loaded."""
    return LtoBuild(seq=0, kind=kind, module=module, ms=ms, site=None, symbol=f"{kind}_{kernel}", kernel=kernel)


def tape(site: Site | None = None) -> TapeUse:
    return TapeUse(seq=0, kind="tape", site=site)


def gradient_use(module: str, kind: str = "recorded", site: Site | None = None) -> GradientUse:
    """A tape recorded a kernel of `module` ("recorded"), or its adjoint ran ("adjoint")."""
    return GradientUse(seq=0, kind=kind, module=module, kernel=f"{module}.kernel", site=site)


def index(*, files: Sequence[str] = (), library_files: Sequence[str] = (), **items: Any) -> SourceIndex:
    """A SourceIndex of ROOT: `files` of the repository, `library_files` of an installed library, and items."""
    sources = [SourceFile(f, python_module(f)) for f in files]
    sources += [SourceFile(f, python_module(f), in_repo=False) for f in library_files]
    return SourceIndex(root=ROOT, files=sources, **items)


def kernel(name: str, file: str, line: int = 10, **fields: Any) -> static.KernelDef:
    """A `@wp.kernel` of the repository at module scope of `file`, unless `fields` say otherwise."""
    fields = {"decorator_line": line - 1, "decorator": "wp.kernel", **fields}
    return static.KernelDef(file=file, line=line, name=name, python_module=python_module(file), **fields)


def option_call(
    file: str, line: int, values: dict[str, Any], *, function: str | None = None, runtime_keys: Sequence[str] = ()
) -> static.OptionCall:
    """`wp.set_module_options(values)` in `file` (inside `function` if given); `runtime_keys` are not literals."""
    return static.OptionCall(
        file=file, line=line, function=function, kind="set_module_options", target_module=python_module(file),
        target_source=None, options_source=repr(values), is_dict_literal=True, is_constant=not runtime_keys,
        values=values, non_constant_keys=list(runtime_keys), at_module_scope=function is None,
    )


def python_module(file: str) -> str:
    """`pkg/sim.py` -> `pkg.sim`, `pkg/__init__.py` -> `pkg`."""
    parts = file.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stat(value: float) -> Stat:
    return Stat(median=value, mad=0.0, values=[value])


def run(
    *,
    builds: Sequence[ModuleBuild] = (),
    launches: Sequence[Launch] = (),
    rebuilds: Sequence[Rebuild] = (),
    option_changes: Sequence[OptionChange] = (),
    cache_ops: Sequence[CacheOp] = (),
    kernel_defs: Sequence[KernelDef] = (),
    load_calls: Sequence[LoadCall] = (),
    tapes: Sequence[TapeUse] = (),
    gradient_uses: Sequence[GradientUse] = (),
    lto_builds: Sequence[LtoBuild] = (),
    cuda_toolkit: str = "",
    source: SourceIndex | None = None,
    command: Sequence[str] = ("python", "-m", "app"),
    cache_dirs: CacheDirEvidence | None = None,
    warp_version: str = "1.19.0",
    **summary: Any,
) -> Inputs:
    """The Inputs of one measured run; `summary` overrides Summary fields (floats become one-sample Stats)."""
    cold = sum(b.module_ms for b in builds)
    fields: dict[str, Any] = {
        "cold_module_ms": stat(cold), "native_compile_ms": stat(sum(b.native_ms for b in builds)),
        "cold_wall_ms": stat(cold + 1000.0), "warm_wall_ms": stat(1000.0), "compile_elapsed_ms": stat(cold),
        "warm_module_ms": stat(0.0), "identities": len(builds), "modules": len({b.module for b in builds}),
        "generated_source_bytes": 10_000, "lto_artifacts": sum(b.lto_builds for b in builds), "warm_builds": 0,
    }
    fields.update({k: stat(v) if isinstance(v, float) else v for k, v in summary.items()})
    trace = Trace(
        builds=list(builds), launches=list(launches), launch_count=len(launches),
        option_changes=list(option_changes), cache_ops=list(cache_ops), kernel_defs=list(kernel_defs),
        tapes=list(tapes), gradient_uses=list(gradient_uses), load_calls=list(load_calls), cuda_toolkit=cuda_toolkit,
        lto_builds=list(lto_builds),
    )
    report = Report(
        schema_version=SCHEMA_VERSION, command=list(command), cwd=ROOT, label=None, warp_version=warp_version,
        backend="cpu" if all(b.device == "cpu" for b in builds) else "cuda", samples=[], summary=Summary(**fields),
        trace=trace, warm_trace=Trace(), rebuilds=list(rebuilds),
        output=Output(sha256="", head="", bytes=0, exit_code=0, deterministic=None), cache_dir_evidence=cache_dirs,
    )
    return Inputs(report, source if source is not None else index())
