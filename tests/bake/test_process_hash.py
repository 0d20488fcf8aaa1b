"""A module hash that depends on the process, through bake and verify for real on the CPU.

fixtures/salted_kernel_names names its kernels from Python's salted `hash()`: the module `shading.curves` has
another hash in every process. The bake runs under PYTHONHASHSEED=1 and records it; verify runs under 2, as
another start of the app would, and confirms under 1 before it says the hash depends on the process. A seed
the environment pins is what production runs under: bake and verify both keep it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.bake.conftest import COMMAND as TINY_COMMAND
from warp_fix.bake.archive import read_manifest
from warp_fix.cli import main

pytestmark = pytest.mark.slow

SALTED = Path(__file__).resolve().parents[2] / "fixtures" / "salted_kernel_names"
COMMAND = [sys.executable, "-m", "shading"]


def copy_of(source: Path, parent: Path) -> Path:
    project = parent / source.name
    shutil.copytree(source, project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


def bake_and_restore(command: list[str], project: Path, folder: Path) -> Path:
    """Bake `command` in `project`, restore the archive into a fresh cache and return the archive."""
    assert main(["bake", "--cwd", str(project), "--out", f"{folder}/", "--", *command]) == 0
    (archive,) = folder.glob("warp-bake-*.tar.gz")
    assert main(["bake", "restore", str(archive), "--cache", str(folder / "cache")]) == 0
    return archive


def verify(command: list[str], project: Path, cache: Path) -> int:
    return main(["bake", "verify", "--cwd", str(project), "--cache", str(cache), "--", *command])


def test_verify_says_a_salted_module_hash_depends_on_the_process(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    project = copy_of(SALTED, tmp_path)
    archive = bake_and_restore(COMMAND, project, tmp_path)
    assert read_manifest(archive).hash_seed == "1"
    capsys.readouterr()
    assert verify(COMMAND, project, tmp_path / "cache") == 1
    (miss,) = [line for line in capsys.readouterr().out.splitlines() if "shading.curves" in line]
    assert "its hash depends on the process: under PYTHONHASHSEED=1 (the bake's) it is " in miss
    assert "and loads from the cache, under 2 it is " in miss and "process-hash" in miss


def test_a_seed_pinned_in_the_environment_is_production_and_verifies_clean(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "5")
    project = copy_of(SALTED, tmp_path)
    archive = bake_and_restore(COMMAND, project, tmp_path)
    assert read_manifest(archive).hash_seed == "5"
    capsys.readouterr()
    assert verify(COMMAND, project, tmp_path / "cache") == 0
    assert "nothing compiled, 1 module from the cache" in capsys.readouterr().out


def test_an_edited_kernel_under_another_seed_is_still_a_changed_kernel(tiny_app, tmp_path, capsys, monkeypatch):
    """Same kernels, options and block_dim, another hash, other seeds: the run under the bake's seed compiles
    too, so the code changed, not the process."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    project = copy_of(tiny_app, tmp_path / "app")
    bake_and_restore(TINY_COMMAND, project, tmp_path)
    module = project / "tinyapp" / "a.py"
    module.write_text(module.read_text().replace("x[i] * s", "s * x[i]"))
    capsys.readouterr()
    assert verify(TINY_COMMAND, project, tmp_path / "cache") == 1
    out = capsys.readouterr().out
    assert "tinyapp.a" in out and "a kernel's code (or a function it calls) changed" in out
    assert "depends on the process" not in out and "tinyapp.b" not in out
