"""The Report: what one `measure` saw, as versioned, JSON-serialisable dataclasses.

Every later stage (compare, diagnose, plan, apply, render) reads a Report and
nothing else from the probe. `docs/report-schema.md` documents each field; bump
SCHEMA_VERSION whenever a field changes meaning or disappears.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codemods.specs import Options, OptionValue

SCHEMA_VERSION = 2

# A list of numbers that json.dumps(indent=1) spread over one line each (JSON strings hold no raw newline,
# so only real lists match): written on one line, `seq` lists and timing values stay small and readable.
_NUMBER_LIST = re.compile(r"\[\n[\s\d.,eE+-]*\]")
READABLE_VERSIONS = (1, 2)  # 2 groups launches that differ only in `seq`; version 1 files still load


@dataclass(frozen=True)
class Site:
    """A place in user code: the first stack frame outside Warp and warp-fix."""

    file: str
    line: int
    function: str
    # a few outer user frames, "file:line:function"; when the site and those are all a library's, then the first
    # frame of the project (the measured command's directory) further out
    stack: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"

    def callers(self) -> tuple[Site, ...]:
        """The outer frames of `stack`, innermost first, read from the "file:line:function" the tracer writes."""
        frames = (frame.rsplit(":", 2) for frame in self.stack)
        return tuple(Site(file, int(line), function) for file, line, function in frames)


@dataclass(frozen=True)
class StackFrame:
    """One user frame of a stack, with its source line as the run read it (a frame at module scope is a file's
    top-level statement: `function` is "<module>")."""

    file: str
    line: int
    function: str
    text: str = ""

    @property
    def at_module_scope(self) -> bool:
        return self.function == "<module>"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class KernelSource:
    """One kernel of a build, attributed by its Python function (code object), never by module names."""

    key: str
    file: str  # the function's co_filename (relative inside the project)
    line: int  # co_firstlineno: the first decorator or the `def`
    function: str
    qualname: str  # carries `<locals>` for closures and whatever a factory set
    module_kind: str  # "file" (Python module's own name, incl. __main__) | "named" (a module= string) | "unique"
    options: Options  # the kernel's own options (`@wp.kernel(enable_backward=False)`, ...)
    enable_backward: bool  # effective: the module's resolved options overridden by the kernel's own
    adjoint: bool  # Warp generates adjoint code for it
    created: Site | None = None  # where the kernel object was made: decorator, wp.kernel(fn) call, factory
    python_module: str = ""  # its function's `__module__` as the run had it ("" in older reports)
    # False only when no argument of it (as Warp compiled it) can hold a gradient: integer/bool values and arrays of
    # them; older reports lack it, which means not known, hence differentiable
    differentiable_arguments: bool = True


@dataclass
class OptionSource:
    """Where a module option's value came from (an option with no source is Warp's default)."""

    kind: str  # "set_module_options" | "options.update" | "module_options" | "config"
    site: Site | None  # the call, decorator or assignment; inside a package when a package made it


@dataclass
class LtoBuild:
    """One MathDx LTO build (`build_lto_*` call) in the run, whatever the cache holds at exit."""

    seq: int
    kind: str  # dot | solver | fft
    module: str  # the module whose load ran it
    ms: float
    site: Site | None
    symbol: str = ""  # Warp's LTO symbol (`dot_<M>_<N>_<K>_...`): the same symbol is the same artifact
    compiled: bool | None = None  # False: from Warp's LTO cache; None: not known
    kernel: str = ""  # key of the kernel whose code generation asked for it; "" when not known


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
    options: Options
    kernels: list[str]
    generics: list[str]  # "kernel_key[arg types]" of generic instances present
    cache_dir: str | None
    site: Site | None
    thread: str = "MainThread"
    lto_builds: int = 0
    lto_kinds: list[str] = field(default_factory=list)  # MathDx builders that ran: dot | solver | fft
    kernel_sources: list[KernelSource] = field(default_factory=list)  # every live kernel, by its source
    source_files: list[str] = field(default_factory=list)  # files defining its kernels
    module_kind: str = ""  # the kernels' common module_kind, "mixed", or "" when not recorded
    adjoint_kernels: int | None = None  # kernels Warp generates adjoint code for; None: not recorded
    option_sources: dict[str, OptionSource] = field(default_factory=dict)  # option key -> set by; else default
    # "kernel_key[arg types]" -> the instance's own key, for generic instances code renamed (a library naming its
    # specialisations): the key is part of the module's identity, so a rename after a build rebuilds it
    renamed_instances: dict[str, str] = field(default_factory=dict)
    # the API call that made this load when it was not a launch: "get_suggested_block_size", "force_load",
    # "load_module", "Module.load" (user code calling it); "" for a launch's load (or Warp's own)
    cause: str = ""
    # CPU time of the loading thread during the build (Warp compiles on it): machine load stretches module_ms,
    # not this. None: not recorded (older reports, log-parsed builds).
    module_cpu_ms: float | None = None
    # the user frames on the stack when Warp created the module (it copied wp.config's creation-time options then),
    # innermost first: the construct that made it, then the imports or calls down from the entry script's
    # top-level statement. Empty: not recorded (older reports, modules made before the tracer's hooks).
    creation_stack: tuple[StackFrame, ...] = ()

    def option_source(self, key: str) -> OptionSource:
        return self.option_sources.get(key, OptionSource("default", None))


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
    block_dim: int | None  # as the call asked (launch_tiled's too, which Warp makes 1 on the CPU); None: not given
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
    values: Options
    old_values: Options
    target_loaded: bool  # the target (or, for config, any module) had loaded already
    target_has_kernels: bool
    modules_existing: list[str]  # modules with kernels that existed at the time
    site: Site | None  # the user's line that led to the call
    caller: Site | None = None  # the frame that made the call (inside a package for library calls)
    from_library: bool = False  # made by an installed package (site-packages, Warp's own modules)


@dataclass
class CacheOp:
    """Something that throws away or bypasses a compile cache."""

    seq: int
    kind: str  # clear_kernel_cache | clear_lto_cache | cache_kernels | kernel_cache_dir | CUDA_CACHE_DISABLE
    value: OptionValue
    site: Site | None


@dataclass
class KernelDef:
    """A kernel object created in the run."""

    seq: int
    key: str
    function: str
    module: str  # final name (a unique module's `<key>_<8 hex>`)
    unique: bool
    at_module_scope: bool
    generic: bool
    site: Site | None  # where it is defined (code object); `stack` holds where it was created and by whom
    qualname: str = ""
    module_kind: str = ""  # "file" | "named" | "unique"
    options: Options = field(default_factory=dict)  # the kernel's own options
    created: Site | None = None  # where it was created: decorator, wp.kernel(fn) call or factory, outer frames


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
class GradientUse:
    """Runtime evidence that a module is differentiated: a tape recorded one of its kernels ("recorded") or ran
    its adjoint ("adjoint"), wherever the launch came from (a helper file, an installed library)."""

    seq: int
    kind: str  # "recorded" | "adjoint"
    module: str
    kernel: str
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
    gradient_uses: list[GradientUse] = field(default_factory=list)  # first per (kind, module); older reports: none
    load_calls: list[LoadCall] = field(default_factory=list)
    tracer_errors: list[str] = field(default_factory=list)
    complete: bool = True  # False when the process ended before the tracer's exit hook ran
    cuda_toolkit: str = ""  # "12.9": the toolkit Warp's CUDA runtime compiles with; "" without CUDA
    kernel_times: list[KernelTime] = field(default_factory=list)  # only with kernel timing on
    lto_builds: list[LtoBuild] = field(default_factory=list)
    main_file: str = ""  # the file Python ran as __main__ (absolute); "" for `python -c` or an unknown end


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
    lto_builds: int = 0  # MathDx LTO builds the cold run compiled (events, not the artifacts left at exit)
    # Kernels compiled with adjoint code, over the module identities the cold run built: a backward-off edit moves
    # it however large the rest of the run is (None in older reports: not compared)
    adjoint_kernels: int | None = None
    cold_module_cpu_ms: float | None = None  # CPU time of the cold run's builds (None: not recorded)


@dataclass
class NumberSpread:
    """A printed number whose value differed between runs: its lowest and highest value."""

    index: int  # position among the profiled numbers of the output
    low: float
    high: float


@dataclass
class OutputLine:
    """An output line that holds profiled numbers, kept to show them in context."""

    line: int  # 1-based, among the program's own lines (Warp's log lines are not counted)
    numbers: int  # how many profiled numbers lie on it
    text: str  # its first 160 characters ("" beyond the first 2,000 such lines)


@dataclass
class OutputProfile:
    """The output as text with numbers taken out, and the numbers by position, over one or more runs.

    Numbers are compared with a learned tolerance instead of byte for byte (see warp_fix/output_model.py);
    the text skeleton must match exactly. Bounded: positions are kept for the first MAX_NUMBERS numbers,
    later ones only as a digest of their raw tokens.
    """

    skeleton_sha256: str  # the whole output with every number replaced by a placeholder
    text_difference: str  # "" when every run printed the same skeleton; else the first differing line
    numbers: str  # the first run's number tokens, space-separated, in order
    lines: list[OutputLine]
    rest_sha256: str  # the raw tokens of the numbers beyond the profiled ones (compared exactly)
    rest_varies: bool  # the numbers beyond the profiled ones differed between runs
    numbers_total: int
    runs: int
    spreads: list[NumberSpread] = field(default_factory=list)  # positions whose token differed between runs

    def tokens(self) -> list[str]:
        return self.numbers.split()


@dataclass
class Output:
    sha256: str
    head: str  # first 64 KiB, normalised
    bytes: int
    exit_code: int | None
    deterministic: bool | None  # every good run printed the same bytes; None with no good sample
    profile: OutputProfile | None = None  # over every good run; None in reports from before profiles

    @property
    def text_varies(self) -> bool:
        """The text itself (not only its numbers) differed between runs: nothing can be compared."""
        if self.profile is None:
            return self.deterministic is False
        return bool(self.profile.text_difference)


# How a reason's detail names the code that set an option (OptionSource.kind -> what the user wrote).
SET_BY_NAMES = {
    "set_module_options": "wp.set_module_options",
    "options.update": "get_module(...).options",
    "module_options": "@wp.kernel module_options",
    "config": "wp.config",
}


@dataclass
class RebuildReason:
    """One cause of a rebuild: `detail` is the sentence for people; the fields after `site` are what code reads."""

    kind: str  # kernel-added | kernel-removed | option | block-dim | generic-instance | cache-cleared | unloaded
    # | unknown
    detail: str
    site: Site | None
    kernel: str = ""  # kernel-added/-removed: the kernel's key; generic-instance/instance-renamed: the generic's key
    set_by: str = ""  # option: the OptionSource kind that set the new value ("config", ...), or "default"
    lto_symbol: str = ""  # cache-cleared: the MathDx LTO symbol linked again ("" when the module itself rebuilt)

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> RebuildReason:
        """A reason of any report: those written before the typed fields get them from the detail they wrote."""
        typed = ("kernel", "set_by", "lto_symbol")
        legacy = {} if any(key in item for key in typed) else _legacy_reason_fields(item["kind"], item["detail"])
        return cls(**{**item, **legacy, "site": _site(item.get("site"))})


# The details reports wrote before RebuildReason had typed fields (read back only for those reports).
_LEGACY_KERNEL = re.compile(r"^kernel '(?P<key>[^']+)'|generic instance (?P<generic>[^\s\[]+)\[")
_LEGACY_SET_BY = re.compile(r"\((?:set by (?P<name>[^)]+)|(?P<default>Warp's default))\)$")
_LEGACY_LTO = re.compile(r"^MathDx LTO (?P<symbol>\S+) compiled again")


def _legacy_reason_fields(kind: str, detail: str) -> dict[str, str]:
    if kind in ("kernel-added", "kernel-removed", "generic-instance", "instance-renamed"):
        match = _LEGACY_KERNEL.search(detail)
        return {"kernel": (match["key"] or match["generic"]) if match else ""}
    if kind == "option" and (match := _LEGACY_SET_BY.search(detail)):
        kinds = {name: kind for kind, name in SET_BY_NAMES.items()}
        return {"set_by": "default" if match["default"] else kinds.get(match["name"], match["name"])}
    if kind == "cache-cleared" and (match := _LEGACY_LTO.match(detail)):
        return {"lto_symbol": match["symbol"]}
    return {}


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
class CacheDirEvidence:
    """The kernel cache directory each run used, and whether it outlived the process (per-run cache)."""

    cold: str | None  # kernel_cache_dir of the cold run's builds (sandbox paths as `<private>/...`)
    warm: str | None
    cold_exists_after: bool  # still on disk once the cold process exited
    warm_exists_after: bool
    per_run: bool  # the next run cannot reuse it: the runs used different directories, or it vanished


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
    lto_builds: int = 0  # MathDx LTO builds the cold run compiled (from the first good sample)
    adjoint_kernels: int | None = None  # see Sample.adjoint_kernels
    cold_module_cpu_ms: Stat | None = None  # see Sample.cold_module_cpu_ms


@dataclass(frozen=True)
class HashDrift:
    """A module the warm run built under another hash than the cold run, with no change in between: its
    identity depends on the process (the warm run starts under another PYTHONHASHSEED), so no cache is reused.
    `generated_line` is the first line of the generated source that differs (cold, then warm text); `site` the
    Python line Warp's codegen comment names above it, or the kernel's own definition."""

    module: str
    device: str
    block_dim: int | None
    cold_hash: str
    warm_hash: str
    generated_line: int  # 1-based, in the cold run's generated source; 0 when no source was found
    cold_text: str
    warm_text: str
    kernel: str  # the kernel whose generated code holds that line ("" when outside every kernel)
    site: Site | None


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
    cache_dir_evidence: CacheDirEvidence | None = None  # from the first good sample
    hash_drifts: list[HashDrift] = field(default_factory=list)  # from the first good sample

    # The names other tools rely on sit at the top level of the JSON.
    @property
    def builds(self) -> list[ModuleBuild]:
        return self.trace.builds

    @property
    def launches(self) -> list[Launch]:
        return self.trace.launches

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["schema_version"] = SCHEMA_VERSION  # the layout written is always this version's
        for name in ("trace", "warm_trace"):
            data[name]["launches"] = grouped_launches(data[name]["launches"])
        trace = data["trace"]
        for name in ("builds", "launches", "option_changes", "cache_ops", "kernel_defs"):
            data[name] = trace[name]
        return data

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=1, default=str)
        Path(path).write_text(_NUMBER_LIST.sub(lambda m: re.sub(r"\s+", "", m.group(0)), text) + "\n")


class ReportError(ValueError):
    """A report file that cannot be read as this schema."""


def load_report(path: str | Path) -> Report:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"cannot read report {path}: {exc}") from exc
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in READABLE_VERSIONS:
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise ReportError(f"{path}: report schema_version {version!r}, this warp-fix reads {readable}")
    try:
        return report_from_json(data)
    except (KeyError, TypeError) as exc:
        raise ReportError(f"{path}: not a warp-fix report ({exc})") from exc


def _site(data: dict | None) -> Site | None:
    if not data:
        return None
    return Site(data["file"], data["line"], data["function"], tuple(data.get("stack", ())))


def with_site(cls, item: dict):
    return cls(**{**item, "site": _site(item.get("site"))})


def grouped_launches(launches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Launches that differ only in `seq` become one record whose `seq` lists them all.

    A loop that launches 4 kernels 1,000 times is 4 records and 4,000 numbers instead of 4,000 records
    with a site and a stack each: that detail was most of a report's size.
    """
    groups: dict[str, dict[str, Any]] = {}
    for launch in launches:
        shape = {key: value for key, value in launch.items() if key != "seq"}
        group = groups.setdefault(json.dumps(shape, sort_keys=True, default=str), {"seq": [], **shape})
        group["seq"].append(launch["seq"])
    return list(groups.values())


def _launches(records: list[dict[str, Any]]) -> list[Launch]:
    """Launches in run order from grouped records (schema 2) or one record per launch (schema 1)."""
    launches = [
        with_site(Launch, {**record, "seq": seq})
        for record in records
        for seq in (record["seq"] if isinstance(record["seq"], list) else [record["seq"]])
    ]
    return sorted(launches, key=lambda launch: launch.seq)


def kernel_def_from_json(item: dict) -> KernelDef:
    return KernelDef(**{**item, "site": _site(item.get("site")), "created": _site(item.get("created"))})


def option_change_from_json(item: dict) -> OptionChange:
    return OptionChange(**{**item, "site": _site(item.get("site")), "caller": _site(item.get("caller"))})


def module_build_from_json(item: dict) -> ModuleBuild:
    return ModuleBuild(
        **{
            **item,
            "site": _site(item.get("site")),
            "kernel_sources": [
                KernelSource(**{**k, "created": _site(k.get("created"))}) for k in item.get("kernel_sources", [])
            ],
            "option_sources": {
                key: OptionSource(source["kind"], _site(source.get("site")))
                for key, source in item.get("option_sources", {}).items()
            },
            "creation_stack": tuple(StackFrame(**frame) for frame in item.get("creation_stack", ())),
        }
    )


def trace_from_json(data: dict) -> Trace:
    return Trace(
        warp_version=data.get("warp_version", ""),
        tracer_mode=data.get("tracer_mode", "objects"),
        builds=[module_build_from_json(b) for b in data.get("builds", [])],
        launches=_launches(data.get("launches", [])),
        launch_count=data.get("launch_count", 0),
        launch_digest=data.get("launch_digest", ""),
        option_changes=[option_change_from_json(x) for x in data.get("option_changes", [])],
        cache_ops=[with_site(CacheOp, x) for x in data.get("cache_ops", [])],
        kernel_defs=[kernel_def_from_json(x) for x in data.get("kernel_defs", [])],
        overloads=[with_site(OverloadCall, x) for x in data.get("overloads", [])],
        tapes=[with_site(TapeUse, x) for x in data.get("tapes", [])],
        gradient_uses=[with_site(GradientUse, x) for x in data.get("gradient_uses", [])],
        load_calls=[with_site(LoadCall, x) for x in data.get("load_calls", [])],
        tracer_errors=list(data.get("tracer_errors", [])),
        complete=data.get("complete", True),
        cuda_toolkit=data.get("cuda_toolkit", ""),
        kernel_times=[KernelTime(**x) for x in data.get("kernel_times", [])],
        lto_builds=[with_site(LtoBuild, x) for x in data.get("lto_builds", [])],
        main_file=data.get("main_file", ""),
    )


STAT_FIELDS = {f.name for f in dataclasses.fields(Stat)}


def _summary(data: dict | None) -> Summary | None:
    if data is None:
        return None
    stats = {k: Stat(**v) for k, v in data.items() if isinstance(v, dict) and set(v) == STAT_FIELDS}
    plain = {k: v for k, v in data.items() if k not in stats}
    return Summary(**stats, **plain)


def _output(data: dict) -> Output:
    profile = data.get("profile")
    if profile is not None:
        profile = OutputProfile(
            **{
                **profile,
                "lines": [OutputLine(**x) for x in profile["lines"]],
                "spreads": [NumberSpread(**x) for x in profile.get("spreads", [])],
            }
        )
    return Output(**{**data, "profile": profile})


def report_from_json(data: dict) -> Report:
    rebuilds = [
        Rebuild(**{**r, "reasons": [RebuildReason.from_json(x) for x in r["reasons"]]})
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
        output=_output(data["output"]),
        warnings=list(data.get("warnings", [])),
        cache_dir_evidence=CacheDirEvidence(**evidence) if (evidence := data.get("cache_dir_evidence")) else None,
        hash_drifts=[
            HashDrift(**{**d, "site": _site(d.get("site"))})
            for d in data.get("hash_drifts", [])
        ],
    )
