"""Fixtures for the codemod tests: one Warp kernel cache per test session (a fresh compile costs ~4 s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def warp_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warp-cache")


@pytest.fixture
def run_warp(warp_cache: Path):
    """run_warp(directory, script) -> stdout of `python script` on the CPU with the session cache."""

    def run(directory: Path, script: str) -> str:
        env = {**os.environ, "WARP_CACHE_PATH": str(warp_cache), "CUDA_VISIBLE_DEVICES": ""}
        result = subprocess.run(
            [sys.executable, script], cwd=directory, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    return run
