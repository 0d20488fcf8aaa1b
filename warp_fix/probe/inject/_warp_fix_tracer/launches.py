"""Hooks on `launch` and `launch_tiled`: every launch's structure, digested; detail up to a cap."""

from __future__ import annotations

import functools
import json

from .autodiff import note_gradient_use
from .recorder import type_name

LAUNCH_DETAIL_CAP = 2000


def hook_launch(tracer, warp, ctx) -> None:
    def make_launch(original):
        @functools.wraps(original)
        def launch(kernel, dim, inputs=(), outputs=(), *args, **kwargs):
            device = None
            try:
                device = _launch_device(tracer, args, kwargs)
                _record_launch(tracer, kernel, dim, inputs, outputs, device, args, kwargs)
            except Exception as exc:
                tracer.rec.error("launch", exc)
            if tracer.kernel_clock is None or device is None:
                return original(kernel, dim, inputs, outputs, *args, **kwargs)
            return tracer.kernel_clock.timed(
                kernel, device, lambda: original(kernel, dim, inputs, outputs, *args, **kwargs)
            )

        return launch

    tracer.replace((ctx, warp), "launch", make_launch)

    def make_tiled(original):
        @functools.wraps(original)
        def launch_tiled(*args, **kwargs):
            # the block_dim asked for: on the CPU, Warp passes 1 on to `launch` whatever the call says
            tracer.local.tiled, tracer.local.tiled_block_dim = True, kwargs.get("block_dim")
            try:
                return original(*args, **kwargs)
            finally:
                tracer.local.tiled = False

        return launch_tiled

    tracer.replace((ctx, warp), "launch_tiled", make_tiled)


def _launch_device(tracer, args, kwargs):
    device = kwargs.get("device", args[4] if len(args) > 4 else None)
    if device is None and hasattr(tracer.warp, "get_device"):
        device = tracer.warp.get_device()
    return device


def _record_launch(tracer, kernel, dim, inputs, outputs, device, args, kwargs) -> None:
    adjoint = bool(kwargs.get("adjoint", args[6] if len(args) > 6 else False))
    if adjoint:
        note_gradient_use(tracer, "adjoint", kernel)
    block_dim = kwargs.get("block_dim", args[10] if len(args) > 10 else None)
    if getattr(tracer.local, "tiled", False) and tracer.local.tiled_block_dim is not None:
        block_dim = tracer.local.tiled_block_dim
    block_dim = None if block_dim is None else int(block_dim)
    dims = [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]
    dtypes = [_arg_type(value) for value in list(inputs) + list(outputs)]
    structure = json.dumps([dims, dtypes, str(device), block_dim, adjoint])
    with tracer.launch_lock:
        tracer.launch_count += 1
        count = tracer.launch_count
        tracer.launch_digest.update(structure.encode())
    if count > LAUNCH_DETAIL_CAP:
        return
    module = getattr(getattr(kernel, "module", None), "name", "")
    func = getattr(kernel, "func", None)
    tracer.rec.emit(
        "launch",
        kernel=getattr(kernel, "key", repr(kernel)),
        function=getattr(func, "__name__", ""),
        module=module,
        dim=dims,
        dtypes=dtypes,
        device=str(device),
        block_dim=block_dim,
        adjoint=adjoint,
        tiled=bool(getattr(tracer.local, "tiled", False)),
        site=tracer.sites.site(),
    )


def _arg_type(value) -> str:
    dtype = getattr(value, "dtype", None)
    ndim = getattr(value, "ndim", None)
    if dtype is not None and ndim is not None:
        return f"{type(value).__name__}[{type_name(dtype)},{ndim}]"
    return type_name(type(value))
