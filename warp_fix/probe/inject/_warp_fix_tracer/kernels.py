"""Kernel definitions: the `wp.kernel` decorator (to know module="unique") and each kernel registered."""

from __future__ import annotations

import functools

from .recorder import USER_STACK_DEPTH


def hook_kernel_decorator(tracer, warp, ctx) -> None:
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

    tracer.replace((ctx, warp), "kernel", make)


def record_kernel_def(tracer, module, kernel) -> None:
    func = getattr(kernel, "func", None)
    code = getattr(func, "__code__", None)
    qualname = getattr(func, "__qualname__", "")
    site = None
    if code is not None:
        created = tracer.sites.site(depth=USER_STACK_DEPTH + 1) or {"file": "", "line": 0, "function": ""}
        creation = [f"{created['file']}:{created['line']}:{created['function']}"] + created["stack"]
        site = {"file": code.co_filename, "line": code.co_firstlineno, "function": func.__name__, "stack": creation}
    tracer.rec.emit(
        "kernel_def",
        key=kernel.key,
        function=getattr(func, "__name__", kernel.key),
        module=module.name,
        unique=bool(getattr(tracer.local, "unique_kernel", False)),
        at_module_scope="<locals>" not in qualname,
        generic=bool(getattr(kernel, "is_generic", False)),
        site=site,
    )
