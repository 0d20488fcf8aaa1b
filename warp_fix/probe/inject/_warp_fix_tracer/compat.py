"""Reading Warp's objects the same way on every supported release.

Warp 1.11 and 1.12 gave `Module` a `__getattr__` that looks a missing name up as `_<name>` through
`hasattr`, which calls `__getattr__` again: any missing attribute recursed until RecursionError,
which `getattr(obj, name, default)` and `hasattr` do not catch. Names that older or newer releases
lack (`resolved_options` before 1.13, `_get_live_kernels` before 1.11) are read here instead.
"""

from __future__ import annotations

import inspect

_MISSING = object()


def existing_attr(obj, name: str, default=None):
    """`obj.name` if the object or its class defines it, else `default`; never runs a `__getattr__` hook."""
    if inspect.getattr_static(obj, name, _MISSING) is _MISSING:
        return default
    return getattr(obj, name, default)
