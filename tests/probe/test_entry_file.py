"""The entry point a process-wide fix goes to: the file the run really executed as __main__, found by the tracer,
and a console script found by its name in pyproject.toml."""

from __future__ import annotations

import dataclasses
import sys

from tests.scan.conftest import write_repo
from warp_fix.mechanisms import Inputs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._common import entry_file
from warp_fix.probe import measure
from warp_fix.scan import scan_repository

APP = {
    "src/app/__init__.py": "",
    "src/app/sim.py": (
        "import warp as wp\n\n\n@wp.kernel\ndef fill(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"
    ),
    "src/app/__main__.py": (
        "import warp as wp\n\nfrom app.sim import fill\n\na = wp.zeros(4, dtype=float, device='cpu')\n"
        "wp.launch(fill, dim=4, inputs=[a], device='cpu')\nprint(a.numpy().sum())\n"
    ),
    # another way in, which a guess from the repository alone would take first
    "src/admin/__main__.py": "import warp as wp\n\nwp.init()\n",
}


def test_python_m_of_a_src_layout_package_is_its_main_module(tmp_path, monkeypatch):
    root = write_repo(tmp_path / "repo", APP)
    monkeypatch.setenv("PYTHONPATH", str(root / "src"))  # as an editable install would make it importable
    report = measure([sys.executable, "-m", "app"], root, samples=1)
    assert report.trace.main_file == str(root / "src" / "app" / "__main__.py")
    assert entry_file(Inputs(report, scan_repository(root))) == "src/app/__main__.py"


def test_a_console_script_is_the_file_of_its_function(tmp_path):
    files = {**APP, "pyproject.toml": '[project]\nname = "app"\n[project.scripts]\napp-run = "app.cli:main"\n',
             "src/app/cli.py": "def main():\n    import app.__main__  # noqa: F401\n"}
    root = write_repo(tmp_path / "repo", files)
    report = case.run(command=["/venv/bin/app-run", "--steps", "2"]).report
    report = dataclasses.replace(report, cwd=str(root))
    assert entry_file(Inputs(report, scan_repository(root))) == "src/app/cli.py"


SCRIPT = {
    "fft_app.py": (
        "import warp as wp\n\n\n@wp.kernel\ndef double(a: wp.array2d(dtype=float)):\n"
        "    i, j = wp.tid()\n    t = wp.tile_load(a, shape=(1, 16), offset=(i, 0))\n"
        "    wp.tile_store(a, t * 2.0, offset=(i, 0))\n\n\n"
        "a = wp.ones((4, 16), dtype=float, device='cpu')\n"
        "wp.launch_tiled(double, dim=[4], inputs=[a], block_dim=64, device='cpu')\nprint(a.numpy().sum())\n"
    ),
}


def test_a_script_is_its_own_main_file_and_a_tiled_launch_keeps_the_block_dim_it_asked_for(tmp_path):
    """Python deletes a script's `__file__` before exit hooks run; the tracer still names the script. On the CPU
    Warp runs a tiled launch at block_dim 1, but the launch is recorded at the 64 it asked for (what CUDA builds)."""
    root = write_repo(tmp_path / "repo", SCRIPT)
    report = measure([sys.executable, "fft_app.py"], root, samples=1)
    assert report.trace.main_file == str(root / "fft_app.py")
    assert entry_file(Inputs(report, scan_repository(root))) == "fft_app.py"
    [launch] = report.trace.launches
    assert (launch.module, launch.block_dim, launch.tiled) == ("__main__", 64, True)
