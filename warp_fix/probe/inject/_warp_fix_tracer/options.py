"""Hooks on option changes: `set_module_options`, `get_module(...).options` updates, `warp.config`."""

from __future__ import annotations

import functools
import sys
import types

from .recorder import plain

CREATION_TIME_OPTIONS = (
    "enable_backward",
    "max_unroll",
    "lineinfo",
    "deterministic",
    "deterministic_max_records",
    "compile_time_trace",
)


def _module_state(module) -> tuple[bool, bool]:
    loaded = bool(getattr(module, "execs", None))
    has_kernels = bool(getattr(module, "kernels", None)) or bool(getattr(module, "_live_kernels", None))
    return loaded, has_kernels


def record_option_change(tracer, kind: str, module, values: dict, site, caller=None) -> None:
    """`caller` is the frame that made the call, which may be inside an installed package while `site` is
    the user's line that led there (an `import warp.render` runs warp.render's own set_module_options)."""
    old = {k: plain(module.options.get(k)) for k in values} if module is not None else {}
    loaded, has_kernels = _module_state(module) if module is not None else (False, False)
    caller = caller or site
    if module is not None:
        sources = tracer.option_sources.setdefault(module, {})
        for key in values:
            sources[key] = {"kind": kind, "site": caller}
    tracer.rec.emit(
        "option_change",
        t_ms=round(tracer.rec.now_ms(), 3),
        kind=kind,
        target=getattr(module, "name", "?"),
        values={k: plain(v) for k, v in values.items()},
        old_values=old,
        target_loaded=loaded,
        target_has_kernels=has_kernels,
        modules_existing=[m.name for m in tracer.modules_with_kernels()],
        site=site,
        caller=caller,
        from_library=bool(caller) and tracer.sites.is_library(caller["file"]),
    )


def hook_set_module_options(tracer, warp, ctx) -> None:
    def make(original):
        @functools.wraps(original)
        def set_module_options(options, module=None):
            # Warp finds the target from its caller's frame: resolve it here, where the caller is the
            # user's code, and pass it on explicitly so the hook does not retarget the call.
            if module is None:
                module = tracer.caller_module()
            try:
                target = module if isinstance(module, ctx.Module) else None
                if target is None:
                    name = module if isinstance(module, str) else getattr(module, "__name__", None)
                    target = ctx.get_module(name) if name else None
                if target is not None and isinstance(options, dict):
                    caller = tracer.sites.caller(1)
                    record_option_change(
                        tracer, "set_module_options", target, options, tracer.sites.site(), caller
                    )
            except Exception as exc:
                tracer.rec.error("set_module_options", exc)
            tracer.local.in_set_options = True
            try:
                return original(options, module)
            finally:
                tracer.local.in_set_options = False

        return set_module_options

    tracer.replace((ctx, warp), "set_module_options", make)


def hook_config(tracer, warp) -> None:
    config = warp.config

    class TracedConfig(types.ModuleType):
        def __setattr__(self, name, value):
            try:
                _record_config(tracer, name, value)
            except Exception as exc:
                tracer.rec.error("config", exc)
            super().__setattr__(name, value)

    config.__class__ = TracedConfig


def _record_config(tracer, name: str, value) -> None:
    if not tracer.sites.is_user(sys._getframe(2).f_code.co_filename):
        return  # Warp's own bookkeeping, not the user's
    site = tracer.sites.site()
    tracer.config_sources[name] = {"kind": "config", "site": site}
    if name == "cache_kernels" and value is False or name == "kernel_cache_dir":
        tracer.rec.emit("cache_op", kind=name, value=plain(value), site=site)
    modules = tracer.modules_with_kernels()
    if not modules and name not in CREATION_TIME_OPTIONS:
        return
    old = getattr(tracer.warp.config, name, None)
    if name in CREATION_TIME_OPTIONS:
        stale = [m.name for m in modules if m.options.get(name) != value]
    else:
        stale = [m.name for m in modules]
    tracer.rec.emit(
        "option_change",
        t_ms=round(tracer.rec.now_ms(), 3),
        kind="config",
        target="warp.config",
        values={name: plain(value)},
        old_values={name: plain(old)},
        target_loaded=any(getattr(m, "execs", None) for m in modules),
        target_has_kernels=bool(modules),
        modules_existing=stale,
        site=site,
        caller=site,
        from_library=tracer.sites.is_library(site["file"]),
    )


class TracedOptions(dict):
    """A module's options dict that reports updates made by user code."""

    def __init__(self, data, tracer, module):
        super().__init__(data)
        self._tracer = tracer
        self._module = module

    def __reduce__(self):
        return (dict, (dict(self),))

    def _report(self, values: dict) -> None:
        tracer = self._tracer
        try:
            if getattr(tracer.local, "in_set_options", False):
                return
            caller = sys._getframe(2).f_code.co_filename
            if tracer.sites is None or not tracer.sites.is_user(caller):
                return
            record_option_change(tracer, "options.update", self._module, values, tracer.sites.site())
        except Exception as exc:
            tracer.rec.error("options.update", exc)

    def update(self, *args, **kwargs):
        values = dict(*args, **kwargs)
        self._report(values)
        super().update(values)

    def __setitem__(self, key, value):
        self._report({key: value})
        super().__setitem__(key, value)
