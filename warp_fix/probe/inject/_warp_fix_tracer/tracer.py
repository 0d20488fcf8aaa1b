"""The Tracer: shared state of the hooks, and their installation once Warp is imported."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
import weakref

from . import autodiff, bake, builds, caches, kernels, launches, load_causes, options
from .recorder import Recorder, SiteFinder
from .timing import KernelClock


class Tracer:
    """Installs the hooks on Warp's objects once Warp has been imported; holds what they share."""

    def __init__(self, recorder: Recorder):
        self.rec = recorder
        self.local = threading.local()
        self.sites: SiteFinder | None = None
        self.launch_count = 0
        self.launch_digest = hashlib.sha256()
        self.launch_lock = threading.Lock()
        self.gradient_uses: set[tuple[str, str]] = set()  # (kind, module) already recorded
        self.load_call_site = None  # site of a force_load/load_module running threaded loads
        self.load_cause = ""  # the API call whose loads run now (load_causes): "" for a launch's
        self.ctx = None
        self.warp = None
        self.initial_cuda_cache_disable = os.environ.get("CUDA_CACHE_DISABLE")
        self.kernel_clock = KernelClock(self) if os.environ.get("WARP_FIX_KERNEL_TIMING") == "1" else None
        # Weak, so the tracer never keeps a kernel alive (the live kernel set is part of a module's identity).
        self.kernel_origins: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # kernel -> how it was made
        self.option_sources: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> {key: source}
        self.creations: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> its creation stack
        self.config_sources: dict[str, dict] = {}  # warp.config key -> its last assignment by user code

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
            ("Module", lambda: builds.hook_module(self, ctx.Module)),
            ("build", lambda: builds.hook_native_build(self, build)),
            ("codegen", lambda: builds.hook_kernel_codegen(self, ctx.ModuleBuilder)),
            ("launch", lambda: launches.hook_launch(self, warp, ctx)),
            ("kernel", lambda: kernels.hook_kernel_decorator(self, warp, ctx)),
            ("options", lambda: options.hook_set_module_options(self, warp, ctx)),
            ("config", lambda: options.hook_config(self, warp)),
            ("cache", lambda: caches.hook_cache_clears(self, warp, build)),
            ("overload", lambda: autodiff.hook_overload(self, warp, ctx)),
            ("tape", lambda: autodiff.hook_tape(self, warp)),
            ("load_calls", lambda: builds.hook_load_calls(self, warp, ctx)),
            ("load_queries", lambda: load_causes.hook_queries(self, warp, ctx)),
            ("bake", lambda: bake.register(self)),
        )
        for name, step in steps:
            try:
                step()
            except Exception as exc:
                self.rec.error(f"install {name}", exc)

    def replace(self, owners, name: str, make):
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

    def modules_with_kernels(self) -> list:
        """User modules holding kernels (Warp's own modules are not the application's)."""
        return [
            m
            for m in getattr(self.ctx, "user_modules", {}).values()
            if getattr(m, "kernels", None) and not str(m.name).startswith("warp.")
        ]

    def caller_module(self) -> types.SimpleNamespace:
        """The Python module of the user code calling a hooked API (two frames up), as Warp would pick it.

        Returned as an object with `__name__`, which every Warp release accepts as `module=`.
        """
        finder = getattr(self.ctx, "_get_caller_module_name", None)
        name = finder(stack_level=3) if finder else sys._getframe(2).f_globals.get("__name__")
        return types.SimpleNamespace(__name__=name)

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
                main_file=self._main_file(),
                argv=list(sys.argv),  # at exit: `-m pkg` has become the module's path, a worker's id is set
                xdist_worker=self._xdist_worker(),
            )
        except Exception:
            pass

    @staticmethod
    def _xdist_worker() -> str:
        """pytest-xdist's worker id in a worker ("gw0"); "" elsewhere, also in a subprocess a test starts (which
        inherits the worker's variable but runs no pytest)."""
        return os.environ.get("PYTEST_XDIST_WORKER", "") if "xdist" in sys.modules else ""

    @staticmethod
    def _main_file() -> str:
        """The file run as __main__ (`python -m pkg` in a src/ layout or installed: its real path), "" if none.
        Python deletes a script's `__file__` once it has run, before exit hooks: its loader still has the path."""
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None) or getattr(getattr(main, "__loader__", None), "path", None)
        return os.path.abspath(path) if isinstance(path, str) else ""

    def _cuda_toolkit(self) -> str:
        """The CUDA toolkit Warp's runtime compiles with ("12.9"), or "" without an initialised CUDA runtime."""
        version = getattr(getattr(self.ctx, "runtime", None), "toolkit_version", None)
        return ".".join(str(part) for part in version) if version else ""

