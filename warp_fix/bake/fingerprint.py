"""What decides this machine's Warp environment, read without starting Warp (standard library only).

Reading the environment with Warp costs one Warp start (about 0.6 s idle, 1.5 s under load): as long as
the warm run of a small app, which is what `bake restore` must stay close to. Everything that start
reads is decided by files and settings a few stat calls see: the interpreter, Warp's installed files
(its version, its LLVM and its CUDA toolkit live there), the CPU's model and ISA flags (the CPU key under
`-march=native`), the NVIDIA driver and the GPUs it exposes, and the environment variables Warp and CUDA
read. `bake` remembers the environment read with Warp under a digest of these; a change to any of them
is a new digest, so Warp is started again.

Runs in-process for this interpreter, and as a script (`python fingerprint.py`) for another one.
On a system without `/proc/cpuinfo` (not Linux) it returns None: nothing is remembered there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Mapping

CPU_INFO = "/proc/cpuinfo"
NVIDIA_DRIVER = "/proc/driver/nvidia"
ENV_PREFIXES = ("WARP_", "CUDA_", "NVIDIA_")
ENV_NAMES = ("HOME", "XDG_CACHE_HOME", "LD_LIBRARY_PATH")  # where the default cache is; which libcuda loads
CPU_FIELDS = ("model name", "flags", "features", "cpu part", "cpu implementer")


def fingerprint(environ: Mapping[str, str] | None = None) -> dict | None:
    """The inputs of the environment Warp would report here under `environ` (default: this process's), or
    None where they cannot all be read."""
    environ = os.environ if environ is None else environ
    cpu = _cpu()
    warp_files = _warp_files()
    if cpu is None or warp_files is None:
        return None
    return {
        "python": [sys.version, sys.executable, sys.prefix, _stat(os.path.realpath(sys.executable))],
        "platform": [os.uname().sysname, os.uname().machine],  # platform.system() and .machine(), unimported
        "warp": warp_files,
        "cpu": cpu,
        "nvidia": _nvidia(),
        "env": {name: value for name, value in sorted(environ.items()) if _counts(name)},
    }


def digest(record: dict) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def _counts(name: str) -> bool:
    return (name.startswith(ENV_PREFIXES) and not name.startswith("WARP_FIX_")) or name in ENV_NAMES


def _cpu() -> list[str] | None:
    """The first processor's model and ISA flags: what LLVM's host detection sees."""
    try:
        with open(CPU_INFO) as handle:
            text = handle.read()
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    lines = [line for line in first.splitlines() if line.split(":", 1)[0].strip().lower() in CPU_FIELDS]
    return [" ".join(line.split()) for line in lines]


def _warp_files() -> dict[str, list[int]] | None:
    """Size, mtime and inode of Warp's package files that carry its version, build, LLVM and CUDA toolkit."""
    spec = importlib.util.find_spec("warp")
    if spec is None or not spec.origin:
        return None
    root = os.path.dirname(spec.origin)
    names = ["__init__.py", os.path.join("_src", "config.py"), "config.py"]
    binaries = os.path.join(root, "bin")
    if os.path.isdir(binaries):
        names += [os.path.join("bin", name) for name in sorted(os.listdir(binaries))]
    files = {name: _stat(os.path.join(root, name)) for name in names}
    return {name: stat for name, stat in files.items() if stat}


def _nvidia() -> dict[str, str]:
    """The driver's version text, each GPU's information file, and the device nodes a container was given."""
    found: dict[str, str] = {"devices": " ".join(sorted(n for n in _listdir("/dev") if n.startswith("nvidia")))}
    found["version"] = _read(os.path.join(NVIDIA_DRIVER, "version"))
    gpus = os.path.join(NVIDIA_DRIVER, "gpus")
    for bus in sorted(_listdir(gpus)):
        found[f"gpu {bus}"] = _read(os.path.join(gpus, bus, "information"))
    return found


def _stat(path: str) -> list[int]:
    try:
        info = os.stat(path)
    except OSError:
        return []
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


if __name__ == "__main__":
    sys.stdout.write(json.dumps(fingerprint()) + "\n")
