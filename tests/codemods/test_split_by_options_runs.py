"""split_by_options applied for real to the MathDx fixture on the CPU (MathDx is CUDA-only; the tile GEMMs
still run): the f32 GEMM moves to a module of its own with MathDx off, the program prints the same and the
fixture's tests pass. On the H200, tests/gpu/test_gpu_mathdx_split.py measures what the move saves."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codemods import apply_codemod
from tests.conftest import FIXTURES

SPLIT = {
    "file": "gemms/kernels.py",
    "kernels": ["gemm32"],
    "module": "gemms.kernels_without_mathdx",
    "options": {"enable_mathdx_gemm": False, "enable_backward": False},
}
SHOW_MODULES = (
    "import warp as wp; from gemms.kernels import gemm16, gemm32; "
    "print(gemm16.module.name, gemm32.module.name, gemm32.module.options['enable_mathdx_gemm'])"
)


def run(repo: Path, warp_cache: Path, *args: str) -> str:
    env = {
        **os.environ, "FIXTURE_DEVICE": "cpu", "GEMMS_N": "128", "GEMMS_REPEATS": "2",
        "WARP_CACHE_PATH": str(warp_cache), "CUDA_VISIBLE_DEVICES": "",
    }
    done = subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return "\n".join(line for line in done.stdout.splitlines() if not line.lstrip().startswith(("Module ", "Warp ")))


@pytest.mark.slow
def test_the_f32_gemm_moves_out_and_the_program_prints_the_same(tmp_path: Path, warp_cache: Path) -> None:
    repo = tmp_path / "gemms"
    shutil.copytree(FIXTURES / "gpu_mathdx_split", repo, ignore=shutil.ignore_patterns("__pycache__"))
    before = run(repo, warp_cache, "-m", "gemms")
    assert run(repo, warp_cache, "-c", SHOW_MODULES).endswith("gemms.kernels gemms.kernels True")

    assert apply_codemod("split_by_options", repo, SPLIT) == [(repo / "gemms/kernels.py").resolve()]

    assert run(repo, warp_cache, "-m", "gemms") == before
    moved = run(repo, warp_cache, "-c", SHOW_MODULES)
    assert moved.endswith("gemms.kernels gemms.kernels_without_mathdx False")
    run(repo, warp_cache, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert apply_codemod("split_by_options", repo, SPLIT) == []  # idempotent
