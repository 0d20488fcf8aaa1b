"""Steady-state kernel time per module (only with WARP_FIX_KERNEL_TIMING=1)."""

from __future__ import annotations

import atexit
import contextlib
import re
import threading
import time


class KernelClock:
    """Steady-state kernel time per module, recorded only when asked for (it adds work to every launch).

    CPU launches run synchronously, so the host clock around the call is the kernel's time; a kernel's
    first launch on a device is left out because it includes loading the module. On CUDA, Warp's own
    activity timing brackets each kernel on its stream (module loads happen before it, on the host);
    kernels replayed inside captured graphs are not attributed.
    """

    def __init__(self, tracer):
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


