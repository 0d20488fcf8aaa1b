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


PREPARE = '''\
import warp as wp


@wp.kernel(module="solver.prepare")
def fill(x: wp.array(dtype=float), v: float):
    x[wp.tid()] = v


@wp.kernel(module="solver.prepare")
def double(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 2.0 * x[i]


def prepare(x):
    wp.launch(fill, dim=x.shape, inputs=[x, 1.5], device="cpu")
    wp.launch(double, dim=x.shape, inputs=[x], device="cpu")
'''

TILES = '''\
import warp as wp


@wp.kernel(module="unique")
def shift(x: wp.array(dtype=float), d: float):
    i = wp.tid()
    x[i] = x[i] + d
'''

MAIN = '''\
import atexit
import shutil
import tempfile

import warp as wp

from solver.prepare import prepare
from tiles import shift

wp.config.quiet = True


def _fresh_cache_dir():
    path = tempfile.mkdtemp(prefix="wp-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def main():
    wp.config.kernel_cache_dir = _fresh_cache_dir()
    wp.config.cache_kernels = False
    wp.clear_kernel_cache()
    x = wp.zeros(4, dtype=float, device="cpu")
    prepare(x)
    wp.launch(shift, dim=4, inputs=[x, 0.25], device="cpu")
    print("RESULT", x.numpy().tolist())
    backward = wp.get_module("solver.prepare").options["enable_backward"], shift.module.options["enable_backward"]
    print("OPTIONS", *backward, wp.config.cache_kernels)


if __name__ == "__main__":
    main()
'''


@pytest.mark.slow
def test_named_and_unique_module_options_and_a_cache_helper_run_the_same(tmp_path: Path, run_warp) -> None:
    (tmp_path / "solver").mkdir()
    (tmp_path / "solver" / "__init__.py").write_text("")
    (tmp_path / "solver" / "prepare.py").write_text(PREPARE)
    (tmp_path / "tiles.py").write_text(TILES)
    (tmp_path / "main.py").write_text(MAIN)
    before = run_warp(tmp_path, "main.py")
    assert "RESULT [3.25, 3.25, 3.25, 3.25]" in before and "OPTIONS True True False" in before

    lines = MAIN.splitlines()
    cache_sites = [
        number
        for number, line in enumerate(lines, 1)
        if line.lstrip().startswith(("wp.config.kernel_cache_dir", "wp.config.cache_kernels", "wp.clear_kernel_cache"))
    ]
    no_backward = {"enable_backward": False}
    plan = [
        ("module_options", {"file": "solver/prepare.py", "options": no_backward, "module": "solver.prepare"}),
        ("module_options", {"file": "tiles.py", "options": no_backward, "kernel": "shift"}),
        ("keep_cache", {"file": "main.py", "lines": cache_sites}),
    ]
    for name, args in plan:
        assert apply_codemod(name, tmp_path, args), f"{name} changed nothing"
    for name, args in plan:
        assert apply_codemod(name, tmp_path, args) == [], f"{name} is not idempotent"
    main = (tmp_path / "main.py").read_text()
    assert "_fresh_cache_dir" not in main and "tempfile" not in main and "cache_kernels = False" not in main
    assert 'wp.set_module_options({"enable_backward": False}, module="solver.prepare")\n\n\ndef prepare' in (
        tmp_path / "solver" / "prepare.py"
    ).read_text()

    after = run_warp(tmp_path, "main.py")
    assert "RESULT [3.25, 3.25, 3.25, 3.25]" in after  # what the original program prints
    assert "OPTIONS False False True" in after  # the options reached both modules before their first load


SIM = '''\
import warp as wp

wp.config.quiet = True


@wp.kernel
def advance(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 0.5


def simulate(steps):
    x = wp.zeros(3, dtype=float, device="cpu")
    for _ in range(steps):
        wp.launch(advance, dim=3, inputs=[x], device="cpu")
    print("RESULT", x.numpy().tolist(), "BACKWARD", wp.get_module(__name__).options["enable_backward"])
'''

PKG_MAIN = '''\
"""python -m pkg"""

import argparse

from .sim import simulate

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=2)
simulate(parser.parse_args().steps)
'''


@pytest.mark.slow
def test_setting_at_a_package_entry_reaches_the_modules_its_first_import_creates(tmp_path: Path, run_warp) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sim.py").write_text(SIM)
    (tmp_path / "pkg" / "__main__.py").write_text(PKG_MAIN)
    (tmp_path / "run.py").write_text('import runpy\n\nrunpy.run_module("pkg", run_name="__main__")\n')
    assert "RESULT [1.0, 1.0, 1.0] BACKWARD True" in run_warp(tmp_path, "run.py")

    args = {
        "file": "pkg/__main__.py", "name": "enable_backward", "value": False,
        "before_line": 5, "before_statement": "from .sim import simulate",
    }
    assert apply_codemod("config_at_entry", tmp_path, args)
    assert apply_codemod("config_at_entry", tmp_path, args) == []
    expected = (
        "import argparse\n\nimport warp as wp\n\n"
        "# Before the imports below: a Warp module reads wp.config when it is created.\n"
        "wp.config.enable_backward = False\n# isort: split\n\nfrom .sim import simulate  # noqa: E402"
    )
    assert expected in (tmp_path / "pkg" / "__main__.py").read_text()
    assert "RESULT [1.0, 1.0, 1.0] BACKWARD False" in run_warp(tmp_path, "run.py")
