"""The in-process tracer: wraps Warp's own objects and writes what they did as JSON lines.

This file runs inside the measured interpreter, which may not have warp-fix
installed, so it uses the standard library only. It must never change whether
or how the application runs: every hook calls the original first-class, and
any failure of the tracer itself is recorded, never raised.

Events go to ``$WARP_FIX_TRACE_DIR/trace-<pid>.jsonl``, one JSON object per line,
written as they happen (builds are rare and must survive a crash). Launches are
detailed up to LAUNCH_DETAIL_CAP and folded into a running digest after that.
With ``WARP_FIX_KERNEL_TIMING=1`` the steady-state time of the kernels themselves
is recorded per module too (see KernelClock).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.abc
import importlib.util
import json
import os
import re
import sys
import threading
import time
import types

LAUNCH_DETAIL_CAP = 2000
USER_STACK_DEPTH = 4
CREATION_TIME_OPTIONS = (
    "enable_backward",
    "max_unroll",
    "lineinfo",
    "deterministic",
    "deterministic_max_records",
    "compile_time_trace",
)
CACHE_CONFIG_KEYS = ("cache_kernels", "kernel_cache_dir")

_HERE = os.path.dirname(os.path.abspath(__file__))


class Recorder:
    """Numbers events, stamps them with time, and appends them to this process's trace file."""

    def __init__(self, directory: str, t0: float):
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = t0
        self._file = open(os.path.join(directory, f"trace-{os.getpid()}.jsonl"), "a", buffering=1)  # noqa: SIM115

    def now_ms(self) -> float:
        return (time.time() - self._t0) * 1000.0

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def emit(self, event: str, **fields) -> None:
        fields.setdefault("seq", self.next_seq())
        fields["type"] = event
        fields["pid"] = os.getpid()
        line = json.dumps(fields, default=_jsonable)
        with self._lock:
            self._file.write(line + "\n")

    def error(self, where: str, exc: BaseException) -> None:
        with contextlib.suppress(Exception):
            self.emit("tracer_error", message=f"{where}: {type(exc).__name__}: {exc}")


def _jsonable(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)


def _plain(value):
    """A JSON-friendly copy of an option value (enums and objects become their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


class SiteFinder:
    """Finds the first stack frame that belongs to user code (not Warp, not warp-fix)."""

    def __init__(self, warp_dir: str):
        self._skip = (warp_dir + os.sep, _HERE + os.sep)
        self._stdlib = os.path.dirname(functools.__file__) + os.sep
        self._cache: dict[str, bool] = {}

    def _is_user(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            in_stdlib = path.startswith(self._stdlib) and "-packages" + os.sep not in path
            known = not (
                filename.startswith("<")
                or in_stdlib
                or path.startswith(self._skip)
                or os.sep + "warp_fix" + os.sep in path
            )
            self._cache[filename] = known
        return known

    def site(self, depth: int = USER_STACK_DEPTH):
        frame = sys._getframe(1)
        while frame is not None and not self._is_user(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return None
        first = frame
        stack = []
        outer = frame.f_back
        while outer is not None and len(stack) < depth - 1:
            if self._is_user(outer.f_code.co_filename):
                stack.append(f"{outer.f_code.co_filename}:{outer.f_lineno}:{outer.f_code.co_name}")
            outer = outer.f_back
        return {
            "file": first.f_code.co_filename,
            "line": first.f_lineno,
            "function": first.f_code.co_name,
            "stack": stack,
        }


class Tracer:
    """Installs the hooks on Warp's objects once Warp has been imported."""

    def __init__(self, recorder: Recorder):
        self.rec = recorder
        self.local = threading.local()
        self.sites: SiteFinder | None = None
        self.launch_count = 0
        self.launch_digest = hashlib.sha256()
        self.launch_lock = threading.Lock()
        self.load_call_site = None  # site of a force_load/load_module running threaded loads
        self.ctx = None
        self.warp = None
        self.initial_cuda_cache_disable = os.environ.get("CUDA_CACHE_DISABLE")
        self.kernel_clock = KernelClock(self) if os.environ.get("WARP_FIX_KERNEL_TIMING") == "1" else None

    # -- installation ---------------------------------------------------------------------------

    def on_warp_imported(self, warp) -> None:
        self.warp = warp
        self.sites = SiteFinder(os.path.dirname(os.path.abspath(warp.__file__)))
        version = getattr(getattr(warp, "config", None), "version", "") or getattr(warp, "__version__", "")
        ctx = getattr(getattr(warp, "_src", None), "context", None) or getattr(warp, "context", None)
        build = getattr(getattr(warp, "_src", None), "build", None) or getattr(warp, "build", None)
        self.ctx = ctx
        mode = "objects" if ctx is not None and hasattr(getattr(ctx, "Module", None), "load") else "log"
        self.rec.emit("warp_import", warp_version=version, tracer_mode=mode)
        if self.initial_cuda_cache_disable is not None:
            self.rec.emit(
                "cache_op", kind="CUDA_CACHE_DISABLE", value=self.initial_cuda_cache_disable, site=None
            )
        if mode == "log":
            return
        steps = (
            ("Module", lambda: self._hook_module(ctx.Module)),
            ("build", lambda: self._hook_build(build)),
            ("launch", lambda: self._hook_launch(warp, ctx)),
            ("kernel", lambda: self._hook_kernel_decorator(warp, ctx)),
            ("options", lambda: self._hook_set_module_options(warp, ctx)),
            ("config", lambda: self._hook_config(warp)),
            ("cache", lambda: self._hook_cache_clears(warp, build)),
            ("overload", lambda: self._hook_overload(warp, ctx)),
            ("tape", lambda: self._hook_tape(warp)),
            ("load_calls", lambda: self._hook_load_calls(warp, ctx)),
        )
        for name, step in steps:
            try:
                step()
            except Exception as exc:
                self.rec.error(f"install {name}", exc)

    @staticmethod
    def _replace(owners, name: str, make):
        """Replace attribute `name` on every owner that has the same original object."""
        original = None
        for owner in owners:
            if owner is not None and hasattr(owner, name):
                original = getattr(owner, name)
                break
        if original is None:
            return None
        wrapped = make(original)
        for owner in owners:
            if owner is not None and getattr(owner, name, None) is original:
                setattr(owner, name, wrapped)
        return wrapped

    # -- module builds ----------------------------------------------------------------------------

    def _hook_module(self, Module) -> None:
        tracer = self

        original_load = Module.load
        original_compile = getattr(Module, "_compile", None)  # absent in older releases
        original_init = Module.__init__
        original_register = Module.register_kernel

        @functools.wraps(original_load)
        def load(module, device=None, *args, **kwargs):
            before = dict(getattr(module, "execs", {}))
            depth = getattr(tracer.local, "load_depth", 0)
            if depth == 0:
                tracer.local.compiled = None
                tracer.local.native_ms = 0.0
                tracer.local.lto = 0
                tracer.local.lto_kinds = set()
            tracer.local.load_depth = depth + 1
            start_wall = tracer.rec.now_ms()
            start = time.perf_counter()
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
                    elapsed = (time.perf_counter() - start) * 1000.0
                    try:
                        tracer._record_load(
                            module, device, args, kwargs, before, result, status, start_wall, elapsed
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
                if isinstance(getattr(module, "options", None), dict):
                    module.options = TracedOptions(module.options, tracer, module)
            except Exception as exc:
                tracer.rec.error("Module.__init__", exc)

        @functools.wraps(original_register)
        def register_kernel(module, kernel):
            result = original_register(module, kernel)
            try:
                tracer._record_kernel_def(module, kernel)
            except Exception as exc:
                tracer.rec.error("register_kernel", exc)
            return result

        Module.load = load
        if original_compile is not None:
            Module._compile = functools.wraps(original_compile)(_compile)
        Module.__init__ = __init__
        Module.register_kernel = register_kernel
        for existing in list(getattr(self.ctx, "user_modules", {}).values()):
            if isinstance(existing.options, dict) and not isinstance(existing.options, TracedOptions):
                existing.options = TracedOptions(existing.options, self, existing)

    def _record_load(self, module, device, args, kwargs, before, result, status, start_wall, elapsed) -> None:
        if status is None:
            if result is None:
                return
            if any(value is result for value in before.values()):
                return  # already in memory: no build happened
            compiled = getattr(self.local, "compiled", None)
            if compiled is None:  # no _compile hook (older Warp): the native compiler ran or it did not
                compiled = getattr(self.local, "native_ms", 0.0) > 0
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
        resolved = getattr(module, "resolved_options", {})
        if isinstance(resolved, dict) and block_dim in resolved:
            options = {k: _plain(v) for k, v in resolved[block_dim].items()}
        elif isinstance(getattr(module, "options", None), dict):  # older releases: the module's own options
            options = {k: _plain(v) for k, v in module.options.items()}
        kernels, generics = [], []
        if hasattr(module, "_get_live_kernels"):
            live = module._get_live_kernels()
        else:  # older releases keep only the latest kernel per key
            live = list(getattr(module, "kernels", {}).values())
        for kernel in live:
            parent = getattr(kernel, "generic_parent", None)
            if parent is not None:
                generics.append(f"{parent.key}[{getattr(kernel, 'sig', '')}]")
            elif not getattr(kernel, "is_generic", False):
                kernels.append(kernel.key)
            for instance in getattr(kernel, "overloads", {}).values():
                generics.append(f"{kernel.key}[{getattr(instance, 'sig', '')}]")
        device_name = str(getattr(result, "device", None) or device)
        site = self.sites.site() or self.load_call_site
        self.rec.emit(
            "build",
            t_ms=round(start_wall, 3),
            module=module.name,
            hash=module_hash.hex() if isinstance(module_hash, bytes) else str(module_hash),
            device=device_name,
            block_dim=block_dim,
            status=status,
            module_ms=round(elapsed, 3),
            native_ms=round(getattr(self.local, "native_ms", 0.0), 3),
            options=options,
            kernels=sorted(set(kernels)),
            generics=sorted(set(generics)),
            cache_dir=str(getattr(self.warp.config, "kernel_cache_dir", None)),
            site=site,
            thread=threading.current_thread().name,
            lto_builds=getattr(self.local, "lto", 0),
            lto_kinds=sorted(getattr(self.local, "lto_kinds", ())),
        )

    def _record_kernel_def(self, module, kernel) -> None:
        func = getattr(kernel, "func", None)
        code = getattr(func, "__code__", None)
        qualname = getattr(func, "__qualname__", "")
        site = None
        if code is not None:
            created = self.sites.site(depth=USER_STACK_DEPTH + 1) or {"file": "", "line": 0, "function": ""}
            creation = [f"{created['file']}:{created['line']}:{created['function']}"] + created["stack"]
            site = {"file": code.co_filename, "line": code.co_firstlineno, "function": func.__name__, "stack": creation}
        self.rec.emit(
            "kernel_def",
            key=kernel.key,
            function=getattr(func, "__name__", kernel.key),
            module=module.name,
            unique=bool(getattr(self.local, "unique_kernel", False)),
            at_module_scope="<locals>" not in qualname,
            generic=bool(getattr(kernel, "is_generic", False)),
            site=site,
        )

    # -- native compiler ----------------------------------------------------------------------

    def _hook_build(self, build) -> None:
        if build is None:
            return
        for name in ("build_cpu", "build_cuda"):
            if hasattr(build, name):
                setattr(build, name, self._timed_native(getattr(build, name)))
        for name in dir(build):
            if name.startswith("build_lto"):
                setattr(build, name, self._counted_lto(getattr(build, name)))

    def _timed_native(self, original):
        tracer = self

        @functools.wraps(original)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                tracer.local.native_ms = (
                    getattr(tracer.local, "native_ms", 0.0) + (time.perf_counter() - start) * 1000.0
                )

        return timed

    def _counted_lto(self, original):
        tracer = self

        kind = getattr(original, "__name__", "build_lto").removeprefix("build_lto_")  # dot | solver | fft

        @functools.wraps(original)
        def counted(*args, **kwargs):
            tracer.local.lto = getattr(tracer.local, "lto", 0) + 1
            kinds = getattr(tracer.local, "lto_kinds", None)
            if kinds is None:
                kinds = tracer.local.lto_kinds = set()
            kinds.add(kind)
            return original(*args, **kwargs)

        return counted

    # -- launches ----------------------------------------------------------------------------------

    def _hook_launch(self, warp, ctx) -> None:
        tracer = self

        def make_launch(original):
            @functools.wraps(original)
            def launch(kernel, dim, inputs=(), outputs=(), *args, **kwargs):
                device = None
                try:
                    device = tracer._launch_device(args, kwargs)
                    tracer._record_launch(kernel, dim, inputs, outputs, device, args, kwargs)
                except Exception as exc:
                    tracer.rec.error("launch", exc)
                if tracer.kernel_clock is None or device is None:
                    return original(kernel, dim, inputs, outputs, *args, **kwargs)
                return tracer.kernel_clock.timed(
                    kernel, device, lambda: original(kernel, dim, inputs, outputs, *args, **kwargs)
                )

            return launch

        self._replace((ctx, warp), "launch", make_launch)

        def make_tiled(original):
            @functools.wraps(original)
            def launch_tiled(*args, **kwargs):
                tracer.local.tiled = True
                try:
                    return original(*args, **kwargs)
                finally:
                    tracer.local.tiled = False

            return launch_tiled

        self._replace((ctx, warp), "launch_tiled", make_tiled)

    def _launch_device(self, args, kwargs):
        device = kwargs.get("device", args[4] if len(args) > 4 else None)
        if device is None and hasattr(self.warp, "get_device"):
            device = self.warp.get_device()
        return device

    def _record_launch(self, kernel, dim, inputs, outputs, device, args, kwargs) -> None:
        adjoint = bool(kwargs.get("adjoint", args[6] if len(args) > 6 else False))
        block_dim = kwargs.get("block_dim", args[10] if len(args) > 10 else None)
        dims = [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]
        dtypes = [_arg_type(value) for value in list(inputs) + list(outputs)]
        structure = json.dumps([dims, dtypes, str(device), block_dim, adjoint])
        with self.launch_lock:
            self.launch_count += 1
            count = self.launch_count
            self.launch_digest.update(structure.encode())
        if count > LAUNCH_DETAIL_CAP:
            return
        module = getattr(getattr(kernel, "module", None), "name", "")
        func = getattr(kernel, "func", None)
        self.rec.emit(
            "launch",
            kernel=getattr(kernel, "key", repr(kernel)),
            function=getattr(func, "__name__", ""),
            module=module,
            dim=dims,
            dtypes=dtypes,
            device=str(device),
            block_dim=block_dim,
            adjoint=adjoint,
            tiled=bool(getattr(self.local, "tiled", False)),
            site=self.sites.site(),
        )

    # -- kernel decorator (to know module="unique") -------------------------------------------------

    def _hook_kernel_decorator(self, warp, ctx) -> None:
        tracer = self

        def make(original):
            def flagged(unique, call):
                previous = getattr(tracer.local, "unique_kernel", False)
                tracer.local.unique_kernel = unique
                try:
                    return call()
                finally:
                    tracer.local.unique_kernel = previous

            @functools.wraps(original)
            def kernel(f=None, **kwargs):
                unique = kwargs.get("module") == "unique"
                if f is None:
                    decorator = original(**kwargs)

                    @functools.wraps(decorator)
                    def apply(func):
                        return flagged(unique, lambda: decorator(func))

                    return apply
                return flagged(unique, lambda: original(f, **kwargs))

            return kernel

        self._replace((ctx, warp), "kernel", make)

    # -- option changes -----------------------------------------------------------------------------

    def _module_state(self, module) -> tuple[bool, bool]:
        loaded = bool(getattr(module, "execs", None))
        has_kernels = bool(getattr(module, "kernels", None)) or bool(getattr(module, "_live_kernels", None))
        return loaded, has_kernels

    def _modules_with_kernels(self) -> list:
        """User modules holding kernels (Warp's own modules are not the application's)."""
        return [
            m
            for m in getattr(self.ctx, "user_modules", {}).values()
            if getattr(m, "kernels", None) and not str(m.name).startswith("warp.")
        ]

    def record_option_change(self, kind: str, module, values: dict, site) -> None:
        old = {k: _plain(module.options.get(k)) for k in values} if module is not None else {}
        loaded, has_kernels = self._module_state(module) if module is not None else (False, False)
        self.rec.emit(
            "option_change",
            t_ms=round(self.rec.now_ms(), 3),
            kind=kind,
            target=getattr(module, "name", "?"),
            values={k: _plain(v) for k, v in values.items()},
            old_values=old,
            target_loaded=loaded,
            target_has_kernels=has_kernels,
            modules_existing=[m.name for m in self._modules_with_kernels()],
            site=site,
        )

    def caller_module(self) -> types.SimpleNamespace:
        """The Python module of the user code calling a hooked API (two frames up), as Warp would pick it.

        Returned as an object with `__name__`, which every Warp release accepts as `module=`.
        """
        finder = getattr(self.ctx, "_get_caller_module_name", None)
        name = finder(stack_level=3) if finder else sys._getframe(2).f_globals.get("__name__")
        return types.SimpleNamespace(__name__=name)

    def _hook_set_module_options(self, warp, ctx) -> None:
        tracer = self

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
                        tracer.record_option_change(
                            "set_module_options", target, options, tracer.sites.site()
                        )
                except Exception as exc:
                    tracer.rec.error("set_module_options", exc)
                tracer.local.in_set_options = True
                try:
                    return original(options, module)
                finally:
                    tracer.local.in_set_options = False

            return set_module_options

        self._replace((ctx, warp), "set_module_options", make)

    # -- warp.config ----------------------------------------------------------------------------------

    def _hook_config(self, warp) -> None:
        config = warp.config
        tracer = self

        class TracedConfig(types.ModuleType):
            def __setattr__(self, name, value):
                try:
                    tracer._record_config(name, value)
                except Exception as exc:
                    tracer.rec.error("config", exc)
                super().__setattr__(name, value)

        config.__class__ = TracedConfig

    def _record_config(self, name: str, value) -> None:
        if not self.sites._is_user(sys._getframe(2).f_code.co_filename):
            return  # Warp's own bookkeeping, not the user's
        site = self.sites.site()
        if name == "cache_kernels" and value is False or name == "kernel_cache_dir":
            self.rec.emit("cache_op", kind=name, value=_plain(value), site=site)
        modules = self._modules_with_kernels()
        if not modules and name not in CREATION_TIME_OPTIONS:
            return
        old = getattr(self.warp.config, name, None)
        if name in CREATION_TIME_OPTIONS:
            stale = [m.name for m in modules if m.options.get(name) != value]
        else:
            stale = [m.name for m in modules]
        self.rec.emit(
            "option_change",
            t_ms=round(self.rec.now_ms(), 3),
            kind="config",
            target="warp.config",
            values={name: _plain(value)},
            old_values={name: _plain(old)},
            target_loaded=any(getattr(m, "execs", None) for m in modules),
            target_has_kernels=bool(modules),
            modules_existing=stale,
            site=site,
        )

    # -- caches --------------------------------------------------------------------------------------

    def _hook_cache_clears(self, warp, build) -> None:
        for name in ("clear_kernel_cache", "clear_lto_cache"):
            self._replace(
                (build, warp, self.ctx), name, lambda original, name=name: self._cache_clear(name, original)
            )

    def _cache_clear(self, name, original):
        tracer = self

        @functools.wraps(original)
        def clear(*args, **kwargs):
            try:
                tracer.rec.emit("cache_op", kind=name, value=None, site=tracer.sites.site())
            except Exception as exc:
                tracer.rec.error(name, exc)
            return original(*args, **kwargs)

        return clear

    # -- overloads, tapes, explicit loads -------------------------------------------------------------

    def _hook_overload(self, warp, ctx) -> None:
        tracer = self

        def make(original):
            @functools.wraps(original)
            def overload(kernel, arg_types=None):
                try:
                    types_ = arg_types.values() if isinstance(arg_types, dict) else (arg_types or [])
                    tracer.rec.emit(
                        "overload",
                        kernel=getattr(kernel, "key", getattr(kernel, "__name__", repr(kernel))),
                        arg_types=[_type_name(t) for t in types_],
                        site=tracer.sites.site(),
                    )
                except Exception as exc:
                    tracer.rec.error("overload", exc)
                return original(kernel, arg_types)

            return overload

        self._replace((ctx, warp), "overload", make)

    def _hook_tape(self, warp) -> None:
        Tape = warp.Tape
        tracer = self
        original_init, original_backward = Tape.__init__, Tape.backward

        @functools.wraps(original_init)
        def __init__(tape, *args, **kwargs):
            try:
                tracer.rec.emit("tape", kind="tape", site=tracer.sites.site())
            except Exception as exc:
                tracer.rec.error("Tape", exc)
            original_init(tape, *args, **kwargs)

        @functools.wraps(original_backward)
        def backward(tape, *args, **kwargs):
            try:
                tracer.rec.emit("tape", kind="backward", site=tracer.sites.site())
            except Exception as exc:
                tracer.rec.error("Tape.backward", exc)
            return original_backward(tape, *args, **kwargs)

        Tape.__init__ = __init__
        Tape.backward = backward

    def _hook_load_calls(self, warp, ctx) -> None:
        for name in ("force_load", "load_module"):
            self._replace((ctx, warp), name, lambda original, name=name: self._load_call(name, original))

    def _load_call(self, name, original):
        tracer = self

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
            try:
                return original(*args, **kwargs)
            finally:
                tracer.load_call_site = previous

        return call

    # -- end of process ---------------------------------------------------------------------------------

    def finish(self) -> None:
        try:
            final = os.environ.get("CUDA_CACHE_DISABLE")
            if final is not None and final != self.initial_cuda_cache_disable:
                self.rec.emit("cache_op", kind="CUDA_CACHE_DISABLE", value=final, site=None)
            if self.kernel_clock is not None:
                self.kernel_clock.emit()
            self.rec.emit(
                "end",
                launch_count=self.launch_count,
                launch_digest=self.launch_digest.hexdigest(),
                cuda_toolkit=self._cuda_toolkit(),
            )
        except Exception:
            pass


    def _cuda_toolkit(self) -> str:
        """The CUDA toolkit Warp's runtime compiles with ("12.9"), or "" without an initialised CUDA runtime."""
        version = getattr(getattr(self.ctx, "runtime", None), "toolkit_version", None)
        return ".".join(str(part) for part in version) if version else ""


class KernelClock:
    """Steady-state kernel time per module, recorded only when asked for (it adds work to every launch).

    CPU launches run synchronously, so the host clock around the call is the kernel's time; a kernel's
    first launch on a device is left out because it includes loading the module. On CUDA, Warp's own
    activity timing brackets each kernel on its stream (module loads happen before it, on the host);
    kernels replayed inside captured graphs are not attributed.
    """

    def __init__(self, tracer: Tracer):
        self.tracer = tracer
        self.lock = threading.Lock()
        self.host: dict[str, list] = {}  # module -> [ms, launches]
        self.seen: set = set()
        self.cuda_modules: dict[str, str] = {}  # mangled kernel name -> module
        self.cuda_keys: dict[str, str] = {}  # kernel key -> module (a variant's mangled name has its own hash)
        self.cuda_started = False
        self.emitted = False

    def timed(self, kernel, device, call):
        module = getattr(getattr(kernel, "module", None), "name", "")
        try:
            is_cuda = bool(getattr(self.tracer.warp.get_device(device), "is_cuda", False))
        except Exception:
            return call()
        if is_cuda:
            self._start_cuda()
            result = call()
            self.cuda_keys[getattr(kernel, "key", "")] = module
            with contextlib.suppress(Exception):
                self.cuda_modules[kernel.get_mangled_name()] = module
            return result
        key = (id(kernel), str(device))
        first = key not in self.seen
        self.seen.add(key)
        start = time.perf_counter()
        result = call()
        if not first:
            elapsed = (time.perf_counter() - start) * 1000.0
            with self.lock:
                entry = self.host.setdefault(module, [0.0, 0])
                entry[0] += elapsed
                entry[1] += 1
        return result

    def _start_cuda(self) -> None:
        if self.cuda_started or getattr(getattr(self.tracer.ctx, "runtime", None), "core", None) is None:
            return
        self.cuda_started = True
        try:
            self.tracer.warp.timing_begin(cuda_filter=self.tracer.warp.TIMING_KERNEL, synchronize=False)
            atexit.register(self.emit)  # registered after Warp's own exit hooks, so it runs before them
        except Exception as exc:
            self.tracer.rec.error("kernel timing", exc)

    def _cuda_times(self) -> dict[str, list]:
        times: dict[str, list] = {}
        if not self.cuda_started:
            return times
        for result in self.tracer.warp.timing_end(synchronize=True):
            entry = times.setdefault(self._module_of(result.name), [0.0, 0])
            entry[0] += float(result.elapsed)
            entry[1] += 1
        return times

    def _module_of(self, name: str) -> str:
        """Warp names a timed kernel "forward kernel <key>_<8 hex of the variant's hash>"."""
        for prefix in ("forward kernel ", "backward kernel "):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        name = name.rsplit("_cuda_kernel_", 1)[0]
        if name in self.cuda_modules:
            return self.cuda_modules[name]
        return self.cuda_keys.get(re.sub(r"_[0-9a-f]{8}$", "", name), "")

    def emit(self) -> None:
        if self.emitted:
            return
        self.emitted = True
        times = {module: list(entry) for module, entry in self.host.items()}
        try:
            for module, (ms, launches) in self._cuda_times().items():
                entry = times.setdefault(module, [0.0, 0])
                entry[0] += ms
                entry[1] += launches
        except Exception as exc:
            self.tracer.rec.error("kernel timing", exc)
        modules = {m: {"ms": round(ms, 4), "launches": n} for m, (ms, n) in sorted(times.items())}
        self.tracer.rec.emit("kernel_time", modules=modules)


class TracedOptions(dict):
    """A module's options dict that reports updates made by user code."""

    def __init__(self, data, tracer: Tracer, module):
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
            if tracer.sites is None or not tracer.sites._is_user(caller):
                return
            tracer.record_option_change("options.update", self._module, values, tracer.sites.site())
        except Exception as exc:
            tracer.rec.error("options.update", exc)

    def update(self, *args, **kwargs):
        values = dict(*args, **kwargs)
        self._report(values)
        super().update(values)

    def __setitem__(self, key, value):
        self._report({key: value})
        super().__setitem__(key, value)


def _type_name(t) -> str:
    return getattr(t, "__name__", None) or repr(t)


def _arg_type(value) -> str:
    dtype = getattr(value, "dtype", None)
    ndim = getattr(value, "ndim", None)
    if dtype is not None and ndim is not None:
        return f"{type(value).__name__}[{_type_name(dtype)},{ndim}]"
    return _type_name(type(value))


class _WarpImportHook(importlib.abc.MetaPathFinder):
    """Lets the real finders locate `warp`, then runs the tracer right after Warp's __init__."""

    def __init__(self, tracer: Tracer):
        self.tracer = tracer

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "warp":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original_exec = loader.exec_module
        tracer = self.tracer

        def exec_module(module):
            original_exec(module)
            try:
                tracer.on_warp_imported(module)
            except Exception as exc:
                tracer.rec.error("warp import", exc)

        loader.exec_module = exec_module
        return spec


def install() -> None:
    directory = os.environ.get("WARP_FIX_TRACE_DIR")
    if not directory or not os.path.isdir(directory):
        return
    t0 = float(os.environ.get("WARP_FIX_T0", time.time()))
    recorder = Recorder(directory, t0)
    tracer = Tracer(recorder)
    recorder.emit("start", executable=sys.executable, argv=sys.argv, t_ms=round(recorder.now_ms(), 3))
    if "warp" in sys.modules:
        tracer.on_warp_imported(sys.modules["warp"])
    else:
        sys.meta_path.insert(0, _WarpImportHook(tracer))
    atexit.register(tracer.finish)
