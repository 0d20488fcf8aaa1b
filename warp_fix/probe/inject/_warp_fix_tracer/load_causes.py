"""Which API call made a module load: a launch, or a call that loads as a side effect.

`wp.get_suggested_block_size(kernel, device)` loads the kernel's module at the module's default block size
(256 on CUDA) to query occupancy; `force_load`/`load_module` load at the block size they are given; user code
may call `Module.load` itself. When the launches then use another block size, the module is built twice. Each
build event carries `cause`: the name of such a call, or "" for a load a launch (or Warp itself) made.
"""

from __future__ import annotations

import functools
import os
import sys

QUERY_CALLS = ("get_suggested_block_size",)


def hook_queries(tracer, warp, ctx) -> None:
    for name in QUERY_CALLS:
        tracer.replace((ctx, warp), name, lambda original, name=name: caused_by(tracer, name, original))


def caused_by(tracer, name: str, original):
    """`original`, with every load it makes recorded as caused by `name` (the outermost such call wins)."""

    @functools.wraps(original)
    def call(*args, **kwargs):
        previous = tracer.load_cause
        tracer.load_cause = previous or name
        try:
            return original(*args, **kwargs)
        finally:
            tracer.load_cause = previous

    return call


def direct_load(tracer) -> bool:
    """Module.load was called by code outside Warp: the frame above the tracer's `load` wrapper, which calls this."""
    try:
        warp_dir = os.path.dirname(os.path.abspath(tracer.warp.__file__)) + os.sep
        caller = sys._getframe(2).f_code.co_filename
        return not os.path.abspath(caller).startswith(warp_dir)
    except Exception:
        return False
