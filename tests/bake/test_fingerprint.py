"""Restore reads this machine's environment with Warp once, then remembers it under the machine's fingerprint."""

from __future__ import annotations

import subprocess
import sys

import pytest

from warp_fix.bake.environment import probe_machine
from warp_fix.bake.fingerprint import digest, fingerprint
from warp_fix.bake.restore import restore


def test_the_fingerprint_moves_with_what_warp_reads_and_nothing_else():
    base = {"HOME": "/home/u", "PATH": "/bin"}
    same = fingerprint(base)
    assert same is not None
    assert digest(fingerprint({**base, "PATH": "/usr/bin", "TERM": "xterm"})) == digest(same)
    assert digest(fingerprint({**base, "WARP_FIX_TRACE_DIR": "/tmp/x"})) == digest(same)  # warp-fix's own
    for name, value in [("WARP_CACHE_PATH", "/c"), ("CUDA_VISIBLE_DEVICES", "1"), ("XDG_CACHE_HOME", "/x")]:
        assert digest(fingerprint({**base, name: value})) != digest(same), name


def test_the_fingerprint_holds_warps_binaries_and_the_cpu_flags():
    seen = fingerprint({})
    assert seen is not None
    assert any(name.startswith("bin/") for name in seen["warp"])  # LLVM and the CUDA toolkit live there
    assert any(line.startswith(("flags", "Features", "features")) for line in seen["cpu"])


@pytest.mark.slow
def test_the_second_restore_on_a_machine_starts_no_warp(baked, tmp_path, monkeypatch):
    monkeypatch.setenv("WARP_FIX_STATE_DIR", str(tmp_path / "state"))
    first = restore(baked.archive, tmp_path / "one", merge=False)
    second = restore(baked.archive, tmp_path / "two", merge=False)
    rechecked = restore(baked.archive, tmp_path / "three", merge=False, recheck_environment=True)
    assert not first.environment_remembered
    assert second.environment_remembered
    assert not rechecked.environment_remembered
    assert second.environment_ms < first.environment_ms / 10
    assert second.root == tmp_path / "two" / baked.manifest.environment.warp_version


@pytest.mark.slow
def test_a_changed_variable_or_an_unreadable_record_starts_warp_again(tmp_path, monkeypatch):
    monkeypatch.setenv("WARP_FIX_STATE_DIR", str(tmp_path / "state"))
    first = probe_machine()
    assert probe_machine().remembered
    monkeypatch.setenv("WARP_ENABLE_BACKWARD", "0")  # any WARP_ variable: Warp may read it at init
    assert not probe_machine().remembered
    for record in (tmp_path / "state" / "machines").glob("*.json"):
        record.write_text("{not json")
    again = probe_machine()
    assert not again.remembered
    assert again.environment == first.environment
    assert probe_machine().remembered  # rewritten


@pytest.mark.slow
def test_restore_loads_neither_rich_nor_the_probe_nor_warp(baked, tmp_path):
    """`bake restore` runs in CI right before the app: its own start-up is part of a restored cold start.
    On a machine already remembered it starts no process, so it does not even import `subprocess`."""
    restore(baked.archive, tmp_path / "first", merge=False)  # remembers this machine (the suite's state dir)
    heavy = ("rich", "warp", "warp_fix.probe", "warp_fix.report", "fsspec", "subprocess")
    program = (
        "import sys; from warp_fix.cli import main; code = main(['bake', 'restore', *sys.argv[1:]]); "
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    for argv, code in [([str(baked.archive), "--cache", str(tmp_path / "c")], 0), ([str(tmp_path / "no")], 2)]:
        done = subprocess.run([sys.executable, "-c", program, *argv], capture_output=True, text=True)
        assert done.stdout.strip().splitlines()[-1] == f"{code} []"
