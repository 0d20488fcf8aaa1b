"""Kernel definitions: where each kernel's function is defined, where it was created, and how.

The `wp.kernel` hook knows the arguments (module="unique", module_options=, per-kernel options);
`register_kernel` sees every kernel object, also those a library makes with `wp.Kernel(...)` directly.
Sources come from the function's code object, never from module names, which may be strings
("solver.prepare"), hash names (`<key>_<8 hex>`) or `__main__`.
"""

from __future__ import annotations

import functools
import re

from .recorder import USER_STACK_DEPTH, plain


def hook_kernel_decorator(tracer, warp, ctx) -> None:
    def make(original):
        def creating(kwargs, call):
            previous = getattr(tracer.local, "creation", None)
            creation = tracer.local.creation = {"unique": kwargs.get("module") == "unique", "pending": []}
            try:
                kernel = call()
            finally:
                tracer.local.creation = previous
            try:
                _created(tracer, kernel, kwargs, creation["pending"])
            except Exception as exc:
                tracer.rec.error("kernel", exc)
            return kernel

        @functools.wraps(original)
        def kernel(f=None, **kwargs):
            if f is None:
                decorator = original(**kwargs)

                @functools.wraps(decorator)
                def apply(func):
                    return creating(kwargs, lambda: decorator(func))

                return apply
            return creating(kwargs, lambda: original(f, **kwargs))

        return kernel

    tracer.replace((ctx, warp), "kernel", make)


def _created(tracer, kernel, kwargs: dict, pending: list) -> None:
    """After `wp.kernel` returned: a unique module has its final name now, and module_options were applied."""
    module = getattr(kernel, "module", None)
    for event in pending:  # held back until the unique module was renamed `<key>_<8 hex>`
        event["module"] = getattr(module, "name", event["module"])
        tracer.rec.emit("kernel_def", **event)
    module_options = kwargs.get("module_options")
    if module is not None and isinstance(module_options, dict) and module_options:
        origin = tracer.kernel_origins.get(kernel, {})
        sources = tracer.option_sources.setdefault(module, {})
        for key in module_options:
            sources[key] = {"kind": "module_options", "site": origin.get("created")}


def record_kernel_def(tracer, module, kernel) -> None:
    func = getattr(kernel, "func", None)
    code = getattr(func, "__code__", None)
    qualname = getattr(func, "__qualname__", "")
    creation = getattr(tracer.local, "creation", None)
    unique = bool(creation and creation["unique"])
    created = tracer.sites.site(depth=USER_STACK_DEPTH + 1)
    site = None
    if code is not None:
        frame = created or {"file": "", "line": 0, "function": "", "stack": []}
        stack = [f"{frame['file']}:{frame['line']}:{frame['function']}"] + frame["stack"]
        site = {"file": code.co_filename, "line": code.co_firstlineno, "function": func.__name__, "stack": stack}
    tracer.kernel_origins[kernel] = {"unique": unique, "created": created}
    event = {
        "key": kernel.key,
        "function": getattr(func, "__name__", kernel.key),
        "qualname": qualname,
        "module": module.name,
        "module_kind": "unique" if unique else _named_kind(tracer, module.name, func),
        "unique": unique,
        "at_module_scope": "<locals>" not in qualname,
        "generic": bool(getattr(kernel, "is_generic", False)),
        "options": plain(dict(getattr(kernel, "options", None) or {})),
        "site": site,
        "created": created,
    }
    if creation is not None and unique:
        creation["pending"].append(event)
    else:
        tracer.rec.emit("kernel_def", **event)


def _named_kind(tracer, module_name: str, func) -> str:
    """"file" when Warp named the module after the function's Python module (`__main__` included)."""
    python_module = getattr(func, "__module__", None)
    registry = getattr(getattr(tracer.warp, "_src", None), "module_registry", None)
    if registry is not None and hasattr(registry, "resolve_module_name") and python_module:
        # Warp 1.19 maps some Python modules to another Warp module name (its own `warp._src.*` files)
        python_module = registry.resolve_module_name(python_module, getattr(func, "__qualname__", None))
    return "file" if module_name == python_module else "named"


def module_kind(tracer, module_name: str, kernel) -> str:
    """How the module of a live kernel was named: "file", "named" or "unique"."""
    origin = tracer.kernel_origins.get(kernel)
    if origin is not None and origin["unique"]:
        return "unique"
    if re.fullmatch(re.escape(str(kernel.key)) + r"_[0-9a-f]{8}", module_name):
        return "unique"  # made without the decorator hook (a library calling wp.Kernel itself)
    return _named_kind(tracer, module_name, getattr(kernel, "func", None))


def kernel_source(tracer, module_name: str, kernel, module_options: dict) -> dict:
    """One kernel of a build: its defining source, naming kind, own options and what Warp compiles it with."""
    func = getattr(kernel, "func", None)
    code = getattr(func, "__code__", None)
    own = dict(getattr(kernel, "options", None) or {})
    effective = {**module_options, **own}  # Warp 1.19: `self.options | kernel.options` in build_kernel
    enable_backward = bool(effective.get("enable_backward", True))
    origin = tracer.kernel_origins.get(kernel) or {}
    return {
        "key": kernel.key,
        "file": getattr(code, "co_filename", ""),
        "line": getattr(code, "co_firstlineno", 0),
        "function": getattr(func, "__name__", kernel.key),
        "qualname": getattr(func, "__qualname__", ""),
        "python_module": str(getattr(func, "__module__", "") or ""),  # the module object's own name, not a path's
        "module_kind": module_kind(tracer, module_name, kernel),
        "options": plain(own),
        "enable_backward": enable_backward,
        # codegen emits the adjoint when enable_backward is on and the entry point uses Warp's ABI
        "adjoint": enable_backward and effective.get("entry_point_abi", "warp") == "warp",
        "created": origin.get("created"),
        "differentiable_arguments": differentiable_arguments(tracer.warp, kernel),
    }


def differentiable_arguments(warp, kernel) -> bool:
    """Whether any argument of the kernel, as Warp compiled it (`adj.args`), can hold a gradient.

    Tape.backward passes gradients only through arrays' `.grad` (and structs of arrays), and Warp's native adjoints
    of integer and bool values accumulate nothing, so a kernel of integer/bool scalars, vectors, matrices and arrays
    cannot move a gradient. Anything else counts as differentiable: floats, generic or unreadable types, and uint64,
    the type of Mesh/Volume/BVH/HashGrid ids, whose own arrays a query's adjoint may reach.
    """
    try:
        types = warp._src.types
        return any(_may_carry_gradient(types, arg.type) for arg in kernel.adj.args)
    except Exception:
        return True


def _may_carry_gradient(types, annotation) -> bool:
    dtype = annotation.dtype if types.is_array(annotation) else annotation  # any array kind and dimension
    if types.type_is_struct(dtype):
        return any(_may_carry_gradient(types, field.type) for field in dtype.vars.values())
    if types.type_is_composite(dtype):  # vectors and matrices of integers (wp.vec3i) carry none either
        dtype = types.type_scalar_type(dtype)
    if dtype is bool or dtype is types.bool:
        return False
    return not types.type_is_int(dtype) or dtype is types.uint64
