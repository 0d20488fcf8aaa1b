"""At exit of a run that `warp-fix bake` traces: its environment, and the AOT binaries `--arch` asked for."""

from __future__ import annotations

import atexit
import os

from . import aot, environment

BAKE_VARIABLE = "WARP_FIX_BAKE"  # "1": write the environment record at exit
ARCHS_VARIABLE = "WARP_FIX_BAKE_ARCHS"  # "86,90": also compile these CUDA archs ahead of time


def register(tracer) -> None:
    """Once Warp is imported, so this runs before Warp's own exit handlers tear the runtime down."""
    if os.environ.get(BAKE_VARIABLE) == "1":
        atexit.register(_at_exit, tracer)


def _at_exit(tracer) -> None:
    record: dict = {"environment": {}, "aot": {"artifacts": [], "errors": []}}
    try:
        record["environment"] = environment.read_environment(tracer.warp)
        archs = [int(arch) for arch in os.environ.get(ARCHS_VARIABLE, "").split(",") if arch.strip()]
        if archs:
            record["aot"] = aot.compile_archs(tracer, archs)
    except Exception as exc:
        record["aot"]["errors"].append(f"{type(exc).__name__}: {exc}")
    environment.write_record(os.environ["WARP_FIX_TRACE_DIR"], record)
