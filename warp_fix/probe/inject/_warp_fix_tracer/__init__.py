"""The in-process tracer: wraps Warp's own objects and writes what they did as JSON lines.

This package runs inside the measured interpreter, which may not have warp-fix
installed, so it uses the standard library only. It must never change whether
or how the application runs: every hook calls the original first-class, and
any failure of the tracer itself is recorded, never raised.

Events go to ``$WARP_FIX_TRACE_DIR/trace-<pid>.jsonl``, one JSON object per line,
written as they happen (builds are rare and must survive a crash). Launches are
detailed up to LAUNCH_DETAIL_CAP and folded into a running digest after that.
With ``WARP_FIX_KERNEL_TIMING=1`` the steady-state time of the kernels themselves
is recorded per module too (see KernelClock).

One module per group of hooks: builds (module loads, native and LTO builders, explicit
loads), kernels (definitions), launches, options (module options and `warp.config`),
caches, autodiff (overloads, tapes), timing; `recorder` writes events and finds sites.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import os
import sys
import time

from .options import CREATION_TIME_OPTIONS
from .recorder import Recorder
from .tracer import Tracer

__all__ = ["CREATION_TIME_OPTIONS", "install"]  # warp-fix's diagnosis reads the tracer's own option list


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
