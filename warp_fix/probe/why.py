"""Explains every extra build of a module in one line, from the difference between two identities.

Like JAX's `explain_cache_misses`: a module built more than once on a device is
compared with its previous build (the same block_dim when there was one), and
each difference is traced to the event and source line that caused it.
"""

from __future__ import annotations

from warp_fix.report import SET_BY_NAMES, LtoBuild, ModuleBuild, Rebuild, RebuildReason, Trace
from warp_fix.wording import counted

# Options Warp folds into the identity that only describe the load, not a change.
_IGNORED_OPTIONS = frozenset({"block_dim"})


def explain_rebuilds(trace: Trace) -> list[Rebuild]:
    rebuilds = []
    seen: dict[tuple[str, str], list[ModuleBuild]] = {}
    for build in trace.builds:
        if build.status == "error":
            continue
        history = seen.setdefault((build.module, build.device), [])
        if history:
            previous = _previous(history, build)
            rebuilds.append(
                Rebuild(
                    module=build.module,
                    device=build.device,
                    from_hash=previous.hash,
                    to_hash=build.hash,
                    build_seq=build.seq,
                    module_ms=build.module_ms,
                    reasons=_reasons(trace, previous, build, history),
                )
            )
        history.append(build)
    return _with_lto_relinks(trace, rebuilds)


def _with_lto_relinks(trace: Trace, rebuilds: list[Rebuild]) -> list[Rebuild]:
    """A MathDx LTO symbol compiled again after an in-run `clear_lto_cache()` threw its first link away.

    Warp links each symbol once per cache, so a second compile of the same symbol in one run is the
    clear's doing; it is named on the build that paid for it (a new entry when that build is no rebuild).
    """
    by_seq = {r.build_seq: r for r in rebuilds}
    relink_only: set[int] = set()  # builds that are no rebuild: their entry costs what the relinks took
    first_compiled: dict[str, LtoBuild] = {}
    for event in trace.lto_builds:
        if not (event.compiled and event.symbol):
            continue
        earlier = first_compiled.setdefault(event.symbol, event)
        clears = [
            op for op in trace.cache_ops if earlier.seq < op.seq < event.seq and op.kind == "clear_lto_cache"
        ]
        build = next((b for b in trace.builds if b.seq > event.seq and b.module == event.module), None)
        if earlier is event or not clears or build is None:
            continue
        reason = RebuildReason(
            "cache-cleared",
            f"MathDx LTO {event.symbol} compiled again ({event.ms:.0f} ms): clear_lto_cache() in the run "
            "threw away its first link",
            clears[-1].site,
            lto_symbol=event.symbol,
        )
        rebuild = by_seq.get(build.seq)
        if rebuild is None:
            rebuild = Rebuild(build.module, build.device, build.hash, build.hash, build.seq, 0.0, [])
            by_seq[build.seq] = rebuild
            rebuilds.append(rebuild)
            relink_only.add(build.seq)
        if build.seq in relink_only:
            rebuild.module_ms = round(rebuild.module_ms + event.ms, 3)
        rebuild.reasons.append(reason)
    return sorted(rebuilds, key=lambda r: r.build_seq)


def _previous(history: list[ModuleBuild], build: ModuleBuild) -> ModuleBuild:
    same_block = [b for b in history if b.block_dim == build.block_dim]
    return (same_block or history)[-1]


def _reasons(trace: Trace, previous: ModuleBuild, build: ModuleBuild, history) -> list[RebuildReason]:
    reasons: list[RebuildReason] = []
    if build.block_dim not in {b.block_dim for b in history}:
        reasons.append(
            RebuildReason("block-dim", f"new block_dim {build.block_dim} requested by a launch", build.site)
        )
    reasons += _kernel_changes(trace, previous, build)
    reasons += _option_changes(trace, previous, build)
    reasons += _generic_changes(trace, previous, build)
    reasons += _renamed_instances(previous, build)
    if not reasons:
        reasons.append(_unexplained(trace, previous, build))
    return reasons


def _kernel_changes(trace: Trace, previous: ModuleBuild, build: ModuleBuild) -> list[RebuildReason]:
    reasons = []
    defs = {d.key: d for d in trace.kernel_defs}
    for key in sorted(set(build.kernels) - set(previous.kernels)):
        kernel_def = defs.get(key)
        where = (
            ""
            if kernel_def is None
            else (" at module scope" if kernel_def.at_module_scope else " inside a function")
        )
        detail = f"kernel '{key}' added after the previous build (defined{where})"
        reasons.append(RebuildReason("kernel-added", detail, kernel_def.site if kernel_def else None, kernel=key))
    for key in sorted(set(previous.kernels) - set(build.kernels)):
        reasons.append(RebuildReason("kernel-removed", f"kernel '{key}' no longer alive", None, kernel=key))
    return reasons


def _option_changes(trace: Trace, previous: ModuleBuild, build: ModuleBuild) -> list[RebuildReason]:
    reasons = []
    for key in sorted(set(previous.options) | set(build.options)):
        if key in _IGNORED_OPTIONS:
            continue
        old, new = previous.options.get(key), build.options.get(key)
        if old == new:
            continue
        change = _last_change(trace, key, build.module, previous.seq, build.seq)
        detail = f"option {key}: {old!r} -> {new!r}"
        if change is not None:
            detail += f" (set by {SET_BY_NAMES.get(change.kind, change.kind)})"
            reasons.append(RebuildReason("option", detail, change.site, set_by=change.kind))
            continue
        source = build.option_source(key)  # no call in between: the value's origin as the build recorded it
        if source.kind == "default":
            detail += " (Warp's default)"
        else:
            detail += f" (set by {SET_BY_NAMES.get(source.kind, source.kind)})"
        reasons.append(RebuildReason("option", detail, source.site, set_by=source.kind))
    return reasons


def _last_change(trace: Trace, key: str, module: str, after: int, before: int):
    candidates = [
        c
        for c in trace.option_changes
        if after < c.seq < before and key in c.values and (c.target in (module, "warp.config"))
    ]
    return candidates[-1] if candidates else None


def _generic_changes(trace: Trace, previous: ModuleBuild, build: ModuleBuild) -> list[RebuildReason]:
    reasons = []
    for instance in sorted(set(build.generics) - set(previous.generics)):
        detail = f"new generic instance {instance} by a launch"
        reasons.append(RebuildReason("generic-instance", detail, build.site, kernel=instance.partition("[")[0]))
    return reasons


def _renamed_instances(previous: ModuleBuild, build: ModuleBuild) -> list[RebuildReason]:
    """Instances present in both builds whose key changed in between (e.g. a library's `fn.key = name`)."""
    reasons = []
    for instance in sorted(set(previous.generics) & set(build.generics)):
        old = previous.renamed_instances.get(instance, instance.split("[")[0])
        new = build.renamed_instances.get(instance, instance.split("[")[0])
        if old != new:
            detail = f"generic instance {instance} renamed {old} -> {new} after the previous build"
            reasons.append(RebuildReason("instance-renamed", detail, build.site, kernel=instance.partition("[")[0]))
    return reasons


def _unexplained(trace: Trace, previous: ModuleBuild, build: ModuleBuild) -> RebuildReason:
    clears = [
        op for op in trace.cache_ops if previous.seq < op.seq < build.seq and op.kind.startswith("clear")
    ]
    if clears:
        op = clears[-1]
        if previous.hash == build.hash and build.status == "compiled":
            relinked = f", {counted(build.lto_builds, 'MathDx LTO build')} again" if build.lto_builds else ""
            detail = f"same identity compiled again{relinked}: {op.kind}() in the run emptied the cache"
            return RebuildReason("cache-cleared", detail, op.site)
        return RebuildReason("unloaded", f"module unloaded by {op.kind}() and built again", op.site)
    if previous.hash == build.hash:
        return RebuildReason(
            "unloaded", "same identity loaded again after the module was unloaded", build.site
        )
    return RebuildReason("unknown", "identity changed for a reason the trace does not show", build.site)
