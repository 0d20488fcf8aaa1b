"""What a kernel cache's artifacts depend on, read from Warp itself (standard library only).

Runs in two places with the same code: inside a traced run, when `warp-fix bake` asks for it
(`WARP_FIX_BAKE=1`), and as a script (`python environment.py`), which `bake restore` and `bake key`
use to read the environment a later run will have, without writing into any cache.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile

BAKE_FILE_PREFIX = "bake-"  # `$WARP_FIX_TRACE_DIR/bake-<pid>.json`: kept apart from the trace's `trace-*.jsonl`


def read_environment(warp) -> dict:
    """Warp version, CPU key, CUDA toolkit/driver and the file each GPU would look up, Python, platform."""
    ctx = getattr(getattr(warp, "_src", None), "context", None) or getattr(warp, "context", None)
    runtime = getattr(ctx, "runtime", None)
    cuda_devices = _cuda_devices(warp)
    return {
        "warp_version": str(getattr(warp.config, "version", "") or getattr(warp, "__version__", "")),
        "warp_build": _warp_build(warp),
        "cpu_key": _cpu_key(warp),
        "cuda_toolkit": _version(getattr(runtime, "toolkit_version", None)) if cuda_devices else "",
        "cuda_driver": _version(getattr(runtime, "driver_version", None)) if cuda_devices else "",
        "gpu_archs": sorted({int(device.arch) for device in cuda_devices}),
        "cuda_targets": sorted({_cuda_target(device) for device in cuda_devices}),
        "python": platform.python_version(),
        "platform": f"{platform.system()}-{platform.machine()}",
    }


def user_cache_dir(warp) -> str:
    """Where a run of this interpreter keeps its kernels (WARP_CACHE_PATH, else Warp's default), as init would."""
    version = str(warp.config.version)
    base = os.environ.get("WARP_CACHE_PATH")
    if base:
        return os.path.join(os.path.realpath(base), version)
    from warp._src.thirdparty import appdirs  # the function Warp's own init_kernel_cache calls

    return appdirs.user_cache_dir(appname="warp", appauthor="NVIDIA", version=version)


def _cuda_devices(warp) -> list:
    try:
        return list(warp.get_cuda_devices()) if warp.is_cuda_available() else []
    except Exception:
        return []


def _cuda_target(device) -> str:
    """The binary suffix Warp looks up for this device: `sm86.cubin`, `sm75.ptx` (arch, arch suffix, format)."""
    arch = device.get_cuda_compile_arch()
    suffix = device._get_cuda_arch_suffix(arch) if hasattr(device, "_get_cuda_arch_suffix") else ""
    return f"sm{arch}{suffix}.{device.get_cuda_output_format()}"


def _cpu_key(warp) -> str:
    try:
        return str(warp.get_cpu_kernel_cache_key()) if hasattr(warp, "get_cpu_kernel_cache_key") else ""
    except Exception:
        return ""


def _warp_build(warp) -> str:
    """The git commit of a Warp built from source ("" for a release wheel, which its version names)."""
    return str(getattr(warp.config, "_git_commit_hash", None) or "")


def _version(value) -> str:
    if value is None:
        return ""
    return ".".join(str(part) for part in value) if isinstance(value, (tuple, list)) else str(value)


def write_record(directory: str, record: dict) -> None:
    path = os.path.join(directory, f"{BAKE_FILE_PREFIX}{os.getpid()}.json")
    with open(path, "w") as handle:
        json.dump(record, handle)


def main() -> None:
    """Print this interpreter's environment and the cache dir its runs would use; init Warp in a scratch cache."""
    scratch = tempfile.mkdtemp(prefix="warp-fix-env-")
    try:
        import warp

        user_dir = user_cache_dir(warp)
        warp.config.log_level = getattr(warp, "LOG_WARNING", 30)  # no greeting on stdout
        warp.config.kernel_cache_dir = scratch  # init creates its cache dir: never the user's
        warp.init()
        record = {"environment": read_environment(warp), "kernel_cache_dir": user_dir}
        sys.stdout.write("\n" + json.dumps(record) + "\n")  # the last line, whatever a library printed before
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
