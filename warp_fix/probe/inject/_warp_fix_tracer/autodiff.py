"""Hooks on `wp.overload` and `wp.Tape`: generic instances registered, and who uses gradients."""

from __future__ import annotations

import functools

from .recorder import type_name


def hook_overload(tracer, warp, ctx) -> None:
    def make(original):
        @functools.wraps(original)
        def overload(kernel, arg_types=None):
            try:
                types_ = arg_types.values() if isinstance(arg_types, dict) else (arg_types or [])
                tracer.rec.emit(
                    "overload",
                    kernel=getattr(kernel, "key", getattr(kernel, "__name__", repr(kernel))),
                    arg_types=[type_name(t) for t in types_],
                    site=tracer.sites.site(),
                )
            except Exception as exc:
                tracer.rec.error("overload", exc)
            return original(kernel, arg_types)

        return overload

    tracer.replace((ctx, warp), "overload", make)


def hook_tape(tracer, warp) -> None:
    Tape = warp.Tape
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
    original_record = getattr(Tape, "record_launch", None)
    if original_record is None:
        return

    @functools.wraps(original_record)
    def record_launch(tape, kernel, *args, **kwargs):
        try:
            note_gradient_use(tracer, "recorded", kernel)
        except Exception as exc:
            tracer.rec.error("Tape.record_launch", exc)
        return original_record(tape, kernel, *args, **kwargs)

    Tape.record_launch = record_launch


def note_gradient_use(tracer, kind: str, kernel) -> None:
    """The first time a module's kernel is recorded by a tape ("recorded") or launched as its adjoint ("adjoint"),
    whatever launched it: runtime evidence that the module is differentiated. Not subject to the launch detail cap,
    so a training loop's backward pass, thousands of launches in, is still seen."""
    module = getattr(getattr(kernel, "module", None), "name", "")
    key = (kind, module)
    if not module or key in tracer.gradient_uses:
        return
    tracer.gradient_uses.add(key)
    tracer.rec.emit(
        "gradient_use", kind=kind, module=module, kernel=getattr(kernel, "key", ""), site=tracer.sites.site()
    )
