"""The Report: what one `measure` saw, as versioned, JSON-serialisable dataclasses.

Every later stage (compare, diagnose, plan, apply, render) reads a Report and
nothing else from the probe. `docs/report-schema.md` documents each field; bump
SCHEMA_VERSION whenever a field changes meaning or disappears.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Site:
    """A place in user code: the first stack frame outside Warp and warp-fix."""

    file: str
    line: int
    function: str
    stack: tuple[str, ...] = ()  # a few outer user frames, "file:line:function"

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclass
class ModuleBuild:
    """One load of a module variant that was not already in memory (compiled, cached or error)."""

    seq: int  # order among all traced events of the process
    t_ms: float  # since the tracer started
    module: str
    hash: str
    device: str
    block_dim: int | None
    status: str  # "compiled" | "cached" | "error"
    module_ms: float
    native_ms: float
    options: dict[str, Any]
    kernels: list[str]
    generics: list[str]  # "kernel_key[arg types]" of generic instances present
    cache_dir: str | None
    site: Site | None
    thread: str = "MainThread"
    lto_builds: int = 0
    lto_kinds: list[str] = field(default_factory=list)  # MathDx builders that ran: dot | solver | fft


@dataclass
class Launch:
    """One kernel launch; the structure (dim, dtypes, device, block_dim, adjoint) is the workload."""

    seq: int
    kernel: str
    function: str
    module: str
    dim: list[int]
    dtypes: list[str]
    device: str
    block_dim: int | None
    adjoint: bool
    tiled: bool
    site: Site | None

    def structure(self) -> tuple:
        return (tuple(self.dim), tuple(self.dtypes), self.device, self.block_dim, self.adjoint)


@dataclass
class OptionChange:
    """A module option or `warp.config` assignment made by user code."""

    seq: int
    t_ms: float
    kind: str  # "set_module_options" | "options.update" | "config"
    target: str  # module name, or "warp.config"
    values: dict[str, Any]
    old_values: dict[str, Any]
    target_loaded: bool  # the target (or, for config, any module) had loaded already
    target_has_kernels: bool
    modules_existing: list[str]  # modules with kernels that existed at the time
    site: Site | None


@dataclass
class CacheOp:
    """Something that throws away or bypasses a compile cache."""

    seq: int
    kind: str  # clear_kernel_cache | clear_lto_cache | cache_kernels | kernel_cache_dir | CUDA_CACHE_DISABLE
    value: Any
    site: Site | None


@dataclass
class KernelDef:
    seq: int
    key: str
    function: str
    module: str
    unique: bool
    at_module_scope: bool
    generic: bool
    site: Site | None


@dataclass
class OverloadCall:
    seq: int
    kernel: str
    arg_types: list[str]
    site: Site | None


@dataclass
class TapeUse:
    seq: int
    kind: str  # "tape" | "backward"
    site: Site | None


@dataclass
class LoadCall:
    seq: int
    function: str  # force_load | load_module
    devices: list[str]
    modules: list[str] | None
    block_dim: int | None
    max_workers: int | None
    site: Site | None


@dataclass
class KernelTime:
    """Steady-state time of one module's kernels in a run (recorded only with kernel timing on)."""

    module: str
    ms: float
    launches: int


@dataclass
class Trace:
    """Everything the tracer recorded in one process."""

    warp_version: str = ""
    tracer_mode: str = "objects"  # "objects" (hooks) or "log" (fallback parser)
    builds: list[ModuleBuild] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    launch_count: int = 0  # may exceed len(launches): detail is capped, the digest is not
    launch_digest: str = ""  # sha256 over every launch's structure, in order
    option_changes: list[OptionChange] = field(default_factory=list)
    cache_ops: list[CacheOp] = field(default_factory=list)
    kernel_defs: list[KernelDef] = field(default_factory=list)
    overloads: list[OverloadCall] = field(default_factory=list)
    tapes: list[TapeUse] = field(default_factory=list)
    load_calls: list[LoadCall] = field(default_factory=list)
    tracer_errors: list[str] = field(default_factory=list)
    complete: bool = True  # False when the process ended before the tracer's exit hook ran
    cuda_toolkit: str = ""  # "12.9": the toolkit Warp's CUDA runtime compiles with; "" without CUDA
    kernel_times: list[KernelTime] = field(default_factory=list)  # only with kernel timing on


@dataclass
class Stat:
    median: float
    mad: float
    values: list[float]


@dataclass
class Sample:
    """One cold run and the warm run that followed it on the cache it filled."""

    index: int
    ok: bool
    error: str | None
    cold_wall_ms: float
    warm_wall_ms: float
    cold_module_ms: float
    warm_module_ms: float
    native_compile_ms: float
    cold_exit: int | None
    warm_exit: int | None
    stdout_sha256: str
    identities: int
    generated_source_bytes: int
    lto_artifacts: int
    warm_builds: int
    kernel_ms: float | None = None  # steady-state kernel time of the warm run (kernel timing on)
    # How often each kernel key is spelled in the generated source (as `<key>_<hash>` names): a renamed key
    # changes the source size by its length difference times this, without changing what is compiled.
    # Empty: not counted (log-parsed builds, older reports).
    kernel_key_uses: dict[str, int] = field(default_factory=dict)


@dataclass
class Output:
    sha256: str
    head: str  # first 64 KiB, normalised
    bytes: int
    exit_code: int | None
    deterministic: bool | None  # None with a single good sample


@dataclass
class RebuildReason:
    kind: str  # kernel-added | kernel-removed | option | block-dim | generic-instance | unloaded | unknown
    detail: str
    site: Site | None


@dataclass
class Rebuild:
    """An extra build of a module already built on the same device, explained."""

    module: str
    device: str
    from_hash: str
    to_hash: str
    build_seq: int
    module_ms: float
    reasons: list[RebuildReason]

    def line(self) -> str:
        why = "; ".join(r.detail + (f" ({r.site})" if r.site else "") for r in self.reasons)
        return f"{self.module} {self.from_hash[:7]} -> {self.to_hash[:7]}: {why}"


@dataclass
class Summary:
    cold_module_ms: Stat
    native_compile_ms: Stat
    cold_wall_ms: Stat
    warm_wall_ms: Stat
    compile_elapsed_ms: Stat
    warm_module_ms: Stat
    identities: int
    modules: int
    generated_source_bytes: int
    lto_artifacts: int
    warm_builds: int
    kernel_ms: Stat | None = None  # steady-state kernel time over the warm runs (kernel timing on)
    kernel_key_uses: dict[str, int] = field(default_factory=dict)  # see Sample.kernel_key_uses
    # Why compile elapsed (cold wall - warm wall) means nothing here, e.g. the warm run compiled too; "" when
    # it is meaningful. With a reason, compile_elapsed_ms holds no values.
    compile_elapsed_na: str = ""


@dataclass
class Report:
    schema_version: int
    command: list[str]
    cwd: str
    label: str | None
    warp_version: str
    backend: str  # "cpu" | "cuda" | "mixed": the devices builds ran on
    samples: list[Sample]
    summary: Summary | None  # None when no sample succeeded
    trace: Trace  # the first good cold run (structure is deterministic)
    warm_trace: Trace  # the warm run that followed it
    rebuilds: list[Rebuild]
    output: Output
    warnings: list[str] = field(default_factory=list)

    # The names other tools rely on sit at the top level of the JSON.
    @property
    def builds(self) -> list[ModuleBuild]:
        return self.trace.builds

    @property
    def launches(self) -> list[Launch]:
        return self.trace.launches

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        trace = data["trace"]
        for name in ("builds", "launches", "option_changes", "cache_ops", "kernel_defs"):
            data[name] = trace[name]
        return data

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1, default=str) + "\n")


class ReportError(ValueError):
    """A report file that cannot be read as this schema."""


def load_report(path: str | Path) -> Report:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"cannot read report {path}: {exc}") from exc
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise ReportError(f"{path}: report schema_version {version!r}, this warp-fix reads {SCHEMA_VERSION}")
    try:
        return report_from_json(data)
    except (KeyError, TypeError) as exc:
        raise ReportError(f"{path}: not a warp-fix report ({exc})") from exc


def _site(data: dict | None) -> Site | None:
    if not data:
        return None
    return Site(data["file"], data["line"], data["function"], tuple(data.get("stack", ())))


def _with_site(cls, item: dict):
    return cls(**{**item, "site": _site(item.get("site"))})


def trace_from_json(data: dict) -> Trace:
    return Trace(
        warp_version=data.get("warp_version", ""),
        tracer_mode=data.get("tracer_mode", "objects"),
        builds=[_with_site(ModuleBuild, b) for b in data.get("builds", [])],
        launches=[_with_site(Launch, x) for x in data.get("launches", [])],
        launch_count=data.get("launch_count", 0),
        launch_digest=data.get("launch_digest", ""),
        option_changes=[_with_site(OptionChange, x) for x in data.get("option_changes", [])],
        cache_ops=[_with_site(CacheOp, x) for x in data.get("cache_ops", [])],
        kernel_defs=[_with_site(KernelDef, x) for x in data.get("kernel_defs", [])],
        overloads=[_with_site(OverloadCall, x) for x in data.get("overloads", [])],
        tapes=[_with_site(TapeUse, x) for x in data.get("tapes", [])],
        load_calls=[_with_site(LoadCall, x) for x in data.get("load_calls", [])],
        tracer_errors=list(data.get("tracer_errors", [])),
        complete=data.get("complete", True),
        cuda_toolkit=data.get("cuda_toolkit", ""),
        kernel_times=[KernelTime(**x) for x in data.get("kernel_times", [])],
    )


STAT_FIELDS = {f.name for f in dataclasses.fields(Stat)}


def _summary(data: dict | None) -> Summary | None:
    if data is None:
        return None
    stats = {k: Stat(**v) for k, v in data.items() if isinstance(v, dict) and set(v) == STAT_FIELDS}
    plain = {k: v for k, v in data.items() if k not in stats}
    return Summary(**stats, **plain)


def report_from_json(data: dict) -> Report:
    rebuilds = [
        Rebuild(**{**r, "reasons": [_with_site(RebuildReason, x) for x in r["reasons"]]})
        for r in data.get("rebuilds", [])
    ]
    return Report(
        schema_version=data["schema_version"],
        command=list(data["command"]),
        cwd=data["cwd"],
        label=data.get("label"),
        warp_version=data["warp_version"],
        backend=data.get("backend", "cpu"),
        samples=[Sample(**s) for s in data["samples"]],
        summary=_summary(data.get("summary")),
        trace=trace_from_json(data["trace"]),
        warm_trace=trace_from_json(data.get("warm_trace", {})),
        rebuilds=rebuilds,
        output=Output(**data["output"]),
        warnings=list(data.get("warnings", [])),
    )
