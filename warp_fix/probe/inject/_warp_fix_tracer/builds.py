"""Hooks on module loads and compiles, the native and MathDx LTO builders, and explicit loads."""

from __future__ import annotations

import contextlib
import functools
import threading
import time

from .compat import existing_attr
from .kernels import kernel_source, record_kernel_def
from .load_causes import direct_load
from .options import CREATION_TIME_OPTIONS, TracedOptions
from .recorder import plain


def hook_module(tracer, Module) -> None:
    original_load = Module.load
    original_compile = getattr(Module, "_compile", None)  # absent in older releases
    original_init = Module.__init__
    original_register = Module.register_kernel

    @functools.wraps(original_load)
    def load(module, device=None, *args, **kwargs):
        before = dict(getattr(module, "execs", {}))
        depth = getattr(tracer.local, "load_depth", 0)
        cause = tracer.load_cause or ("Module.load" if depth == 0 and direct_load(tracer) else "")
        if depth == 0:
            tracer.local.compiled = None
            tracer.local.native_ms = 0.0
            tracer.local.lto = 0
            tracer.local.lto_kinds = set()
            tracer.local.loading = module
        tracer.local.load_depth = depth + 1
        start_wall = tracer.rec.now_ms()
        start = time.perf_counter()
        start_cpu = time.thread_time()  # this thread's CPU: what machine load does not inflate
        status = None
        result = None
        try:
            result = original_load(module, device, *args, **kwargs)
            return result
        except BaseException:
            status = "error"
            raise
        finally:
            tracer.local.load_depth = depth
            if depth == 0:
                tracer.local.loading = None
                elapsed = (time.perf_counter() - start) * 1000.0
                cpu = (time.thread_time() - start_cpu) * 1000.0
                try:
                    _record_load(
                        tracer, module, device, args, kwargs, before, result, status, start_wall, elapsed, cpu, cause
                    )
                except Exception as exc:
                    tracer.rec.error("Module.load", exc)

    def _compile(module, *args, **kwargs):
        result = original_compile(module, *args, **kwargs)
        with contextlib.suppress(Exception):
            tracer.local.compiled = bool(result) or bool(getattr(tracer.local, "compiled", False))
        return result

    @functools.wraps(original_init)
    def __init__(module, *args, **kwargs):
        original_init(module, *args, **kwargs)
        try:
            tracer.creations[module] = tracer.sites.creation_stack()  # it copies wp.config's options now
            created_from_config = {k: v for k, v in list(tracer.config_sources.items()) if k in CREATION_TIME_OPTIONS}
            if created_from_config:  # copied from warp.config when the module is created
                tracer.option_sources[module] = created_from_config
            if isinstance(getattr(module, "options", None), dict):
                module.options = TracedOptions(module.options, tracer, module)
        except Exception as exc:
            tracer.rec.error("Module.__init__", exc)

    @functools.wraps(original_register)
    def register_kernel(module, kernel):
        result = original_register(module, kernel)
        try:
            record_kernel_def(tracer, module, kernel)
        except Exception as exc:
            tracer.rec.error("register_kernel", exc)
        return result

    Module.load = load
    if original_compile is not None:
        Module._compile = functools.wraps(original_compile)(_compile)
    Module.__init__ = __init__
    Module.register_kernel = register_kernel
    for existing in list(getattr(tracer.ctx, "user_modules", {}).values()):
        if isinstance(existing.options, dict) and not isinstance(existing.options, TracedOptions):
            existing.options = TracedOptions(existing.options, tracer, existing)


def _record_load(
    tracer, module, device, args, kwargs, before, result, status, start_wall, elapsed, cpu, cause=""
) -> None:
    local = tracer.local
    if status is None:
        if result is None:
            return
        if any(value is result for value in before.values()):
            return  # already in memory: no build happened
        compiled = getattr(local, "compiled", None)
        if compiled is None:  # no _compile hook (older Warp): the native compiler ran or it did not
            compiled = getattr(local, "native_ms", 0.0) > 0
        status = "compiled" if compiled else "cached"
    block_dim = getattr(result, "block_dim", None)
    if block_dim is None:
        block_dim = kwargs.get("block_dim", args[0] if args else None)
        if block_dim is None:
            block_dim = module.options.get("block_dim")
    module_hash = getattr(result, "module_hash", None)
    if module_hash is None:
        try:
            module_hash = module.get_module_hash(block_dim)
        except Exception:
            module_hash = b""
    options = {}
    resolved = existing_attr(module, "resolved_options", {})
    if isinstance(resolved, dict) and block_dim in resolved:
        options = {k: plain(v) for k, v in resolved[block_dim].items()}
    elif isinstance(getattr(module, "options", None), dict):  # older releases: the module's own options
        options = {k: plain(v) for k, v in module.options.items()}
    kernels, generics, sources = [], [], []
    renamed: dict[str, str] = {}  # "generic_key[sig]" -> the instance's own key, where code renamed it
    live_kernels = existing_attr(module, "_get_live_kernels")  # absent before 1.11
    # older releases keep only the latest kernel per key
    live = live_kernels() if live_kernels is not None else list(getattr(module, "kernels", {}).values())
    for kernel in live:
        parent = getattr(kernel, "generic_parent", None)
        if parent is not None:
            generics.append(f"{parent.key}[{getattr(kernel, 'sig', '')}]")
            if getattr(kernel, "key", parent.key) != parent.key:
                renamed[generics[-1]] = kernel.key
        else:
            sources.append(kernel_source(tracer, module.name, kernel, options))
            if not getattr(kernel, "is_generic", False):
                kernels.append(kernel.key)
        for instance in getattr(kernel, "overloads", {}).values():
            generics.append(f"{kernel.key}[{getattr(instance, 'sig', '')}]")
            if getattr(instance, "key", kernel.key) != kernel.key:
                renamed[generics[-1]] = instance.key
    sources.sort(key=lambda k: (k["key"], k["file"], k["line"]))
    kinds = {k["module_kind"] for k in sources}
    device_name = str(getattr(result, "device", None) or device)
    site = tracer.sites.site() or tracer.load_call_site
    tracer.rec.emit(
        "build",
        t_ms=round(start_wall, 3),
        module=module.name,
        hash=module_hash.hex() if isinstance(module_hash, bytes) else str(module_hash),
        device=device_name,
        block_dim=block_dim,
        status=status,
        module_ms=round(elapsed, 3),
        module_cpu_ms=round(cpu, 3),
        native_ms=round(getattr(local, "native_ms", 0.0), 3),
        options=options,
        kernels=sorted(set(kernels)),
        generics=sorted(set(generics)),
        renamed_instances=dict(sorted(renamed.items())),
        cache_dir=str(getattr(tracer.warp.config, "kernel_cache_dir", None)),
        site=site,
        thread=threading.current_thread().name,
        lto_builds=getattr(local, "lto", 0),
        lto_kinds=sorted(getattr(local, "lto_kinds", ())),
        kernel_sources=sources,
        source_files=sorted({k["file"] for k in sources if k["file"]}),
        module_kind=kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else ""),
        adjoint_kernels=sum(1 for k in sources if k["adjoint"]),
        option_sources=_option_sources(tracer, module, options),
        cause=cause,
        creation_stack=tracer.creations.get(module, []),
    )


def _option_sources(tracer, module, options: dict) -> dict:
    """Where each option value set by user code came from; an option missing here is Warp's default.

    Module options set on the module (set_module_options, options.update, module_options=, or copied
    from warp.config at creation) win over warp.config keys Warp reads only when it resolves options.
    """
    resolved_from_config = {
        k: v for k, v in list(tracer.config_sources.items()) if k in options and k not in CREATION_TIME_OPTIONS
    }
    return {**resolved_from_config, **tracer.option_sources.get(module, {})}


def hook_kernel_codegen(tracer, ModuleBuilder) -> None:
    """Which kernel's code generation runs: a MathDx LTO build is asked for by one kernel of the module."""
    original = ModuleBuilder.build_kernel

    @functools.wraps(original)
    def build_kernel(builder, kernel, *args, **kwargs):
        outer = getattr(tracer.local, "codegen_kernel", "")
        tracer.local.codegen_kernel = str(getattr(kernel, "key", ""))
        try:
            return original(builder, kernel, *args, **kwargs)
        finally:
            tracer.local.codegen_kernel = outer

    ModuleBuilder.build_kernel = build_kernel


def hook_native_build(tracer, build) -> None:
    if build is None:
        return
    for name in ("build_cpu", "build_cuda"):
        if hasattr(build, name):
            setattr(build, name, _timed_native(tracer, getattr(build, name)))
    for name in dir(build):
        if name.startswith("build_lto"):
            setattr(build, name, _counted_lto(tracer, getattr(build, name)))
    if hasattr(build, "_build_lto_base"):  # called by name from build_lto_*: sees the symbol and a real compile
        build._build_lto_base = _lto_base(tracer, build._build_lto_base)


def _timed_native(tracer, original):
    @functools.wraps(original)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            tracer.local.native_ms = getattr(tracer.local, "native_ms", 0.0) + (time.perf_counter() - start) * 1000.0

    return timed


def _counted_lto(tracer, original):
    kind = getattr(original, "__name__", "build_lto").removeprefix("build_lto_")  # dot | solver | fft

    @functools.wraps(original)
    def counted(*args, **kwargs):
        tracer.local.lto = getattr(tracer.local, "lto", 0) + 1
        kinds = getattr(tracer.local, "lto_kinds", None)
        if kinds is None:
            kinds = tracer.local.lto_kinds = set()
        kinds.add(kind)
        tracer.local.lto_symbol, tracer.local.lto_compiled = "", None
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _record_lto(tracer, kind, (time.perf_counter() - start) * 1000.0)

    return counted


def _lto_base(tracer, original):
    @functools.wraps(original)
    def base(lto_symbol, compile_func, *args, **kwargs):
        def compile_now(*compile_args, **compile_kwargs):
            tracer.local.lto_compiled = True
            return compile_func(*compile_args, **compile_kwargs)

        tracer.local.lto_symbol = str(lto_symbol)
        if getattr(tracer.local, "lto_compiled", None) is None:
            tracer.local.lto_compiled = False
        return original(lto_symbol, compile_now, *args, **kwargs)

    return base


def _record_lto(tracer, kind: str, ms: float) -> None:
    """Each MathDx LTO build is an event: the cache may hold fewer artifacts at exit than were built.

    `compiled` is False for a hit in Warp's LTO cache on disk and None when the builder returned
    before reaching it (its in-memory copy for the module) or this Warp has no `_build_lto_base`.
    """
    try:
        module = getattr(tracer.local, "loading", None)
        tracer.rec.emit(
            "lto_build",
            kind=kind,
            module=getattr(module, "name", ""),
            ms=round(ms, 3),
            site=tracer.sites.site() or tracer.load_call_site,
            symbol=getattr(tracer.local, "lto_symbol", ""),
            compiled=getattr(tracer.local, "lto_compiled", None),
            kernel=getattr(tracer.local, "codegen_kernel", ""),
        )
    except Exception as exc:
        tracer.rec.error("build_lto", exc)


def hook_load_calls(tracer, warp, ctx) -> None:
    for name in ("force_load", "load_module"):
        tracer.replace((ctx, warp), name, lambda original, name=name: _load_call(tracer, name, original))


def _load_call(tracer, name, original):
    @functools.wraps(original)
    def call(*args, **kwargs):
        if name == "load_module" and not args and kwargs.get("module") is None:
            kwargs["module"] = tracer.caller_module().__name__
        site = None
        try:
            site = tracer.sites.site()
            device = kwargs.get("device", args[0] if args else None)
            devices = [str(d) for d in device] if isinstance(device, (list, tuple)) else [str(device)]
            modules = kwargs.get("modules", kwargs.get("module", args[1] if len(args) > 1 else None))
            if modules is not None and not isinstance(modules, (list, tuple)):
                modules = [modules]
            tracer.rec.emit(
                "load_call",
                function=name,
                devices=devices,
                modules=None if modules is None else [str(getattr(m, "name", m)) for m in modules],
                block_dim=kwargs.get("block_dim"),
                max_workers=kwargs.get("max_workers"),
                site=site,
            )
        except Exception as exc:
            tracer.rec.error(name, exc)
        previous, tracer.load_call_site = tracer.load_call_site, site
        previous_cause, tracer.load_cause = tracer.load_cause, tracer.load_cause or name
        try:
            return original(*args, **kwargs)
        finally:
            tracer.load_call_site = previous
            tracer.load_cause = previous_cause

    return call
