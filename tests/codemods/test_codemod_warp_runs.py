"""Codemods applied to a realistic Warp program, which then still compiles and runs on the CPU with the
output the original prints (a real Warp build: one program, run once after the rewrite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import apply_codemod

APP = '''\
"""A small Warp app written the way people write them."""

from typing import Any

import numpy as np
import warp as wp

wp.config.quiet = True


@wp.kernel
def scale(x: wp.array(dtype=Any), s: Any):
    i = wp.tid()
    x[i] = x[i] * s


@wp.kernel
def add_one(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


def make_integrate(module="unique"):
    # explicit Euler step
    @wp.kernel(module=module)
    def integrate(x: wp.array(dtype=float), v: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + v[i] * DT

    return integrate


DT = 0.5


def setup():
    wp.set_module_options({"enable_backward": False})


def main():
    wp.config.verify_fp = False
    setup()
    integrate = make_integrate()
    wp.load_module(device="cpu", max_workers=2)
    x = wp.array(np.arange(4, dtype=np.float32), device="cpu")
    v = wp.array(np.ones(4, dtype=np.float32), device="cpu")
    wp.launch(integrate, dim=4, inputs=[x, v], device="cpu")
    wp.launch(add_one, dim=4, inputs=[x], device="cpu")
    wp.launch(scale, dim=4, inputs=[x, wp.float32(2.0)], device="cpu")
    y = wp.array(np.arange(3, dtype=np.float64), device="cpu")
    wp.launch(scale, dim=3, inputs=[y, wp.float64(3.0)], device="cpu")
    print("RESULT", x.numpy().tolist(), y.numpy().tolist())


if __name__ == "__main__":
    main()
'''

PLAN = [  # line numbers refer to the file as each step sees it
    ("config_at_entry", {"file": "app.py", "name": "verify_fp", "value": False, "line": 41}),
    (
        "kernels_to_module_scope",
        {"file": "app.py", "factory": "make_integrate", "kernels": ["integrate"], "module": "app_sim"},
    ),
    ("drop_unique", {"file": "app.py", "names": ["make_integrate"], "module": "app_sim"}),
    ("hoist_options", {"file": "app.py", "function": "setup"}),
    (
        "register_overloads",
        {
            "file": "app.py",
            "kernel": "scale",
            "overloads": [
                ["wp.array(dtype=wp.float32)", "wp.float32"],
                ["wp.array(dtype=wp.float64)", "wp.float64"],
            ],
        },
    ),
    (
        "split_by_block_dim",
        {
            "file": "app.py",
            "groups": {"add_one": "app_ops", "scale": "app_ops"},
            "options": {"enable_backward": False},
        },
    ),
    ("cpu_max_workers", {"file": "app.py"}),
]


@pytest.mark.slow
def test_rewritten_app_compiles_and_runs_the_same(tmp_path: Path, run_warp) -> None:
    (tmp_path / "app.py").write_text(APP)

    for name, args in PLAN:
        assert apply_codemod(name, tmp_path, args), f"{name} changed nothing"
    rewritten = (tmp_path / "app.py").read_text()
    for name, args in PLAN:  # the whole plan is idempotent
        assert apply_codemod(name, tmp_path, args) == [], name

    assert "    @wp.kernel" not in rewritten  # integrate now lives at module scope
    assert "app_sim" in rewritten and "scale_float32 = wp.overload" in rewritten
    assert "max_workers=1" in rewritten
    print(rewritten)
    after = run_warp(tmp_path, "app.py")
    assert "RESULT [3.0, 5.0, 7.0, 9.0] [0.0, 3.0, 6.0]" in after  # what the original program prints
