"""Hooks on `clear_kernel_cache` / `clear_lto_cache`: calls that throw a compile cache away."""

from __future__ import annotations

import functools


def hook_cache_clears(tracer, warp, build) -> None:
    for name in ("clear_kernel_cache", "clear_lto_cache"):
        tracer.replace(
            (build, warp, tracer.ctx), name, lambda original, name=name: _cache_clear(tracer, name, original)
        )


def _cache_clear(tracer, name, original):
    @functools.wraps(original)
    def clear(*args, **kwargs):
        try:
            tracer.rec.emit("cache_op", kind=name, value=None, site=tracer.sites.site())
        except Exception as exc:
            tracer.rec.error(name, exc)
        return original(*args, **kwargs)

    return clear
