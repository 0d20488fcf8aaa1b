"""The tracer reads Warp's objects without tripping Warp 1.11-1.12's recursive `Module.__getattr__`."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "warp_fix" / "probe" / "inject"))
from _warp_fix_tracer.compat import existing_attr  # noqa: E402


class ModuleOf112:
    """Warp 1.12's Module lookup of a missing name, as its code reads: `hasattr(self, "_" + name)` again."""

    def __init__(self):
        self.options = {"block_dim": 1}

    def __getattr__(self, name):
        if hasattr(self, f"_{name}"):
            return getattr(self, f"_{name}")
        raise AttributeError(name)

    def _get_live_kernels(self):
        return ["k"]


def test_a_missing_name_recursed_with_getattr():
    with pytest.raises(RecursionError):
        getattr(ModuleOf112(), "resolved_options", {})


def test_existing_attr_reads_what_exists_and_defaults_the_rest():
    module = ModuleOf112()
    assert existing_attr(module, "resolved_options", {}) == {}
    assert existing_attr(module, "options") == {"block_dim": 1}
    assert existing_attr(module, "_get_live_kernels")() == ["k"]
    assert existing_attr(module, "get_live_kernels") is None
