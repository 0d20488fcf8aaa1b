"""A test suite as the baked command: fixtures/suite_project under `pytest -n 2` (two xdist workers and an
example run in a subprocess), baked, restored and verified for real on the CPU."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.bake.conftest import repack
from warp_fix.bake import bake
from warp_fix.bake.archive import read_manifest
from warp_fix.bake.restore import restore
from warp_fix.bake.verify import verify
from warp_fix.cli import main

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "suite_project"
COMMAND = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "tests"]
MODULES = {"flock.boids", "flock.grid", "flock.decay", "flock.energy"}


def copy_of_suite(parent: Path) -> Path:
    project = parent / "suite_project"
    shutil.copytree(SUITE, project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


def edit_helper(project: Path) -> None:
    """The same clamp written the other way round: flock.common feeds flock.boids and flock.grid only."""
    common = project / "flock" / "common.py"
    common.write_text(common.read_text().replace("wp.min(wp.max(x, -1.0), 1.0)", "wp.max(wp.min(x, 1.0), -1.0)"))


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return copy_of_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def baked(suite, tmp_path_factory):
    return bake(COMMAND, suite, str(tmp_path_factory.mktemp("archive")) + "/", [], None)


@pytest.mark.slow
def test_the_archive_holds_every_module_any_process_built_once(baked):
    """flock.energy is built only by the example's subprocess; each worker builds its test files' modules."""
    names = [m.name for m in baked.manifest.modules]
    assert sorted(names) == sorted(MODULES)


@pytest.mark.slow
def test_verify_names_the_process_that_compiled_each_module(baked, tmp_path):
    project = copy_of_suite(tmp_path)
    restore(baked.archive, tmp_path / "cache", merge=False)
    edit_helper(project)
    result = verify(COMMAND, project, None, tmp_path / "cache", None)
    assert result.exit_code == 1
    assert {m.module for m in result.misses} == {"flock.boids", "flock.grid"}
    processes = {m.process.split(" (pid")[0] for m in result.misses}
    assert "flock/example.py" in processes  # the subprocess builds flock.boids too
    assert any(p.startswith("pytest-xdist worker gw") for p in processes)
    assert all("a kernel's code (or a function it calls) changed" in m.reasons[0] for m in result.misses)


@pytest.mark.slow
def test_an_incremental_bake_after_a_one_file_change_builds_only_the_modules_that_file_feeds(baked, tmp_path):
    project = copy_of_suite(tmp_path)
    edit_helper(project)
    result = bake(COMMAND, project, str(tmp_path / "out") + "/", [], None, previous=baked.archive)
    change = result.incremental
    assert {b.module for b in change.built} == {"flock.boids", "flock.grid"}
    assert all("a kernel's code (or a function it calls) changed" in b.reasons[0] for b in change.built)
    before = {(m.name, m.hash): m for m in baked.manifest.modules}
    carried = [m for m in result.manifest.modules if (m.name, m.hash) in before]
    assert {m.name for m in carried} == {"flock.decay", "flock.energy"}
    assert all(m.files == before[(m.name, m.hash)].files for m in carried)  # byte for byte (sha256)
    assert set(change.carried) == {(m.name, m.hash) for m in carried}
    assert {d.module for d in change.dropped} == {"flock.boids", "flock.grid"}  # their old hashes


@pytest.mark.slow
def test_an_incremental_bake_drops_what_no_process_loaded_and_says_how_much(baked, suite, tmp_path, capsys):
    narrower = [*COMMAND[:-1], "-k", "not example and not decay", "tests"]  # flock.decay, flock.energy unused
    code = main(["bake", "--from", str(baked.archive), "--out", f"{tmp_path}/", "--cwd", str(suite), "--", *narrower])
    assert code == 0
    out = capsys.readouterr().out
    energy, decay = (
        next(m for m in baked.manifest.modules if m.name == name) for name in ("flock.energy", "flock.decay")
    )
    dropped = sum(f.size for m in (energy, decay) for f in m.files)
    assert f"2 carried over, 0 built, 2 dropped ({dropped / 1024:,.1f} KiB no process loaded)" in out
    assert f"dropped flock.energy {energy.hash[:7]} ({sum(f.size for f in energy.files):,} bytes)" in out
    (archive,) = tmp_path.glob("warp-bake-*.tar.gz")
    assert {m.name for m in read_manifest(archive).modules} == {"flock.boids", "flock.grid"}


def test_an_incremental_bake_from_a_missing_or_broken_archive_is_one_line_and_runs_nothing(tmp_path, capsys):
    (tmp_path / "junk.tar.gz").write_text("not an archive")
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    for previous in ("missing.tar.gz", "junk.tar.gz"):
        assert main(["bake", "--from", str(tmp_path / previous), "--cwd", str(tmp_path), "--", *command]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"warp-fix: error: archive not found: {tmp_path / 'missing.tar.gz'}"
    assert err[1].startswith(f"warp-fix: error: {tmp_path / 'junk.tar.gz'} is not a readable gzip'd tar archive")
    assert len(err) == 2 and not marker.exists()


@pytest.mark.slow
def test_a_restore_under_another_cpu_key_names_the_field_and_places_only_what_applies(baked, tmp_path, capsys):
    """The suite's archive as a runner with another CPU would see it (its CPU key edited): refused whole without
    --partial; with it, every entry is left out with the field that differs, the cache untouched, exit 0."""
    other_cpu = "1.19.0-Linux-x86_64-deadbeef"
    forged = repack(baked.archive, tmp_path / "other.tar.gz", lambda m: m["environment"].update(cpu_key=other_cpu))
    cache = tmp_path / "cache"
    assert main(["bake", "restore", str(forged), "--cache", str(cache)]) == 2
    assert f"CPU key: archive {other_cpu}, here " in capsys.readouterr().err
    assert main(["bake", "restore", str(forged), "--cache", str(cache), "--partial"]) == 0
    out = capsys.readouterr().out
    assert f"differs here: CPU key: archive {other_cpu}, here {baked.manifest.environment.cpu_key}" in out
    assert "left out 4 entries that do not apply here:" in out
    assert "restored 0 module identities" in out and not cache.exists()
    assert main(["bake", "restore", str(baked.archive), "--cache", str(cache), "--partial"]) == 0
    out = capsys.readouterr().out
    assert "restored 4 module identities" in out and "differs here" not in out
