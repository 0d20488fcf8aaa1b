"""Real Warp runs on the CPU: bake -> restore -> verify compiles nothing; bad input is refused, nothing written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.bake.conftest import COMMAND, repack, tree
from warp_fix.bake.archive import read_manifest
from warp_fix.bake.verified import last_verification
from warp_fix.cli import main

pytestmark = pytest.mark.slow


def restore(archive, cache, *extra) -> int:
    return main(["bake", "restore", str(archive), "--cache", str(cache), *extra])


def test_bake_holds_exactly_the_built_entries(baked):
    manifest = baked.manifest
    assert sorted(m.name for m in manifest.modules) == ["tinyapp.a", "tinyapp.b"]
    assert all(len(m.hash) == 64 for m in manifest.modules)
    assert {f.kind for f in manifest.files} == {"meta", "cpu-object"}
    assert read_manifest(baked.archive) == manifest
    assert baked.archive.name == f"warp-bake-{manifest.key}.tar.gz"
    assert baked.archive_bytes <= 1.1 * baked.entry_bytes


def test_restore_then_verify_compiles_nothing(baked, tiny_app, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    assert restore(baked.archive, tmp_path / "cache") == 0
    assert main(["bake", "verify", "--cache", str(tmp_path / "cache"), "--", *COMMAND]) == 0
    assert "nothing compiled, 2 modules from the cache" in capsys.readouterr().out


def test_verify_names_a_kernel_added_after_baking(baked, tiny_app, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    assert restore(baked.archive, tmp_path / "cache") == 0
    monkeypatch.setenv("TINYAPP_EXTRA", "1")
    assert main(["bake", "verify", "--cache", str(tmp_path / "cache"), "--", *COMMAND]) == 1
    out = capsys.readouterr().out
    assert "tinyapp.a" in out and "kernel added: extra" in out and "tinyapp.b" not in out


def test_verify_in_a_git_repository_is_kept_for_apply_to_quote(baked, tiny_app, tmp_path, monkeypatch):
    """apply's summary quotes the last `bake verify` of its command: verify keeps it beside the ledgers."""
    repo = tmp_path / "repo"
    shutil.copytree(tiny_app, repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    assert restore(baked.archive, tmp_path / "cache") == 0
    assert main(["bake", "verify", "--cache", str(tmp_path / "cache"), "--", *COMMAND]) == 0
    record = last_verification(repo / ".git" / "warp-fix", COMMAND)
    assert record.compiled == 0 and record.keys == (baked.manifest.key,)
    assert {(m.name, m.hash) for m in baked.manifest.modules} == {(m, h) for m, h, _ in record.identities}


def test_every_bake_action_writes_its_result_as_json(baked, tiny_app, tmp_path, capsys, monkeypatch):
    """`--json -`: standard output carries the JSON alone, the lines go to standard error; `--json FILE` too."""
    monkeypatch.chdir(tiny_app)
    assert restore(baked.archive, tmp_path / "cache", "--json", "-") == 0
    out, err = capsys.readouterr()
    placed = json.loads(out)
    assert placed["key"] == baked.manifest.key and placed["written"] == len(baked.manifest.files)
    assert "restored" in err
    monkeypatch.setenv("TINYAPP_EXTRA", "1")
    verify = ["bake", "verify", "--cache", str(tmp_path / "cache"), "--json", str(tmp_path / "verify.json")]
    assert main([*verify, "--", *COMMAND]) == 1
    result = json.loads((tmp_path / "verify.json").read_text())
    (miss,) = result["misses"]
    assert miss["module"] == "tinyapp.a" and any("kernel added: extra" in r for r in miss["reasons"])


def test_a_json_file_that_cannot_be_written_is_one_line(baked, tmp_path, capsys):
    """Said in one line, exit 2, before anything is restored: the cache stays as it was."""
    out = str(tmp_path / "missing" / "restore.json")
    assert restore(baked.archive, tmp_path / "cache", "--json", out) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"warp-fix: error: cannot write --json {out}") and len(error.splitlines()) == 1
    assert not (tmp_path / "cache").exists()


def test_check_no_compile_is_verify_on_the_cache_the_run_uses(baked, tiny_app, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    monkeypatch.setenv("WARP_CACHE_PATH", str(tmp_path / "cache"))
    assert main(["bake", "restore", str(baked.archive)]) == 0
    assert main(["check", "--no-compile", "--", *COMMAND]) == 0
    assert "nothing compiled, 2 modules from the cache" in capsys.readouterr().out
    monkeypatch.setenv("TINYAPP_EXTRA", "1")
    assert main(["check", "--no-compile", "--", *COMMAND]) == 1
    assert "kernel added: extra" in capsys.readouterr().out


def test_check_needs_a_baseline_or_no_compile(tiny_app, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    assert main(["check", "--", *COMMAND]) == 2
    assert "--baseline FILE" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m["environment"].update(warp_version="1.18.0"), "Warp version: archive 1.18.0, here 1.19"),
        (lambda m: m["environment"].update(cpu_key="1.19.0-Linux-x86_64-deadbeef"), "CPU key: archive 1.19.0-Linux"),
        (lambda m: m["modules"][0]["files"][0].update(sha256="0" * 64), "checksum mismatch"),
    ],
    ids=["warp-version", "cpu-key", "manifest-checksum"],
)
def test_an_edited_manifest_is_refused_and_nothing_written(baked, tmp_path, capsys, edit, message):
    archive = repack(baked.archive, tmp_path / "edited.tar.gz", edit_manifest=edit)
    assert restore(archive, tmp_path / "cache") == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "cache").exists()


def test_a_tampered_file_is_refused(baked, tmp_path, capsys):
    flip_last_byte = lambda data: data[:-1] + bytes([data[-1] ^ 1])  # noqa: E731 (same size: the sha256 must catch it)
    archive = repack(baked.archive, tmp_path / "tampered.tar.gz", edit_file=flip_last_byte)
    assert restore(archive, tmp_path / "cache") == 2
    assert "checksum mismatch" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_a_truncated_archive_is_refused(baked, tmp_path, capsys):
    archive = tmp_path / "truncated.tar.gz"
    archive.write_bytes(baked.archive.read_bytes()[: baked.archive_bytes // 2])
    assert restore(archive, tmp_path / "cache") == 2
    error = capsys.readouterr().err.strip()
    assert "truncated or corrupt" in error or "lacks" in error
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert not (tmp_path / "cache").exists()


def test_a_non_empty_cache_needs_merge(baked, tmp_path, capsys):
    other = tmp_path / "cache" / "1.19.0" / "wp_other_1234567"
    other.mkdir(parents=True)
    (other / "wp_other_1234567.meta").write_text("{}")
    before = tree(tmp_path / "cache")
    assert restore(baked.archive, tmp_path / "cache") == 2
    assert "pass --merge" in capsys.readouterr().err
    assert tree(tmp_path / "cache") == before
    assert restore(baked.archive, tmp_path / "cache", "--merge") == 0
    after = tree(tmp_path / "cache")
    assert after["1.19.0/wp_other_1234567/wp_other_1234567.meta"] == b"{}"
    assert len(after) == len(before) + len(baked.manifest.files) + 1  # + the kept manifest
    assert restore(baked.archive, tmp_path / "cache", "--merge") == 0  # identical files: kept, not rewritten


def test_push_and_pull_through_fsspec(baked, tmp_path, capsys):
    assert main(["bake", "push", str(baked.archive), "memory://bakes/ci"]) == 0
    assert main(["bake", "pull", f"memory://bakes/ci/{baked.archive.name}", "--out", str(tmp_path)]) == 0
    assert (tmp_path / baked.archive.name).read_bytes() == baked.archive.read_bytes()
    store = tmp_path / "store"
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 0
    assert (store / baked.archive.name).is_file()


def test_a_corrupt_pull_leaves_nothing(baked, tmp_path, capsys):
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "bad.tar.gz").write_bytes(baked.archive.read_bytes()[:100])
    assert main(["bake", "pull", (tmp_path / "store" / "bad.tar.gz").as_uri(), "--out", str(tmp_path / "got")]) == 2
    assert not (tmp_path / "got").exists() or not any((tmp_path / "got").iterdir())


def test_key_from_the_run_matches_the_archive(baked, tiny_app, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    assert main(["bake", "key", "--", *COMMAND]) == 0
    assert capsys.readouterr().out.strip() == baked.manifest.key


def test_arch_bakes_cuda_binaries_named_as_warp_looks_them_up(tiny_app, tmp_path, capsys, monkeypatch):
    """Without a GPU: Warp's bundled NVRTC compiles sm_86; Warp's own name function must find every file."""
    monkeypatch.chdir(tiny_app)
    assert main(["bake", "--arch", "86", "--out", str(tmp_path), "--", *COMMAND]) == 0
    archive = next(tmp_path.glob("warp-bake-*.tar.gz"))
    manifest = read_manifest(archive)
    aot = [(m, t) for m in manifest.modules for t in m.targets if t.origin == "aot"]
    assert {t.binary for _, t in aot} == {"sm86.cubin", "sm75.ptx"}
    assert restore(archive, tmp_path / "cache") == 0
    checks = "; ".join(
        f"assert os.path.exists(os.path.join(root, wp.get_module({m.name!r}).get_module_identifier({m.block_dim}), "
        f"wp.get_module({m.name!r})._get_compile_output_name(None, output_arch={t.arch}, "
        f"use_ptx={t.output == 'ptx'}, block_dim={m.block_dim})))"
        for m, t in aot
    )
    script = (
        "import os, runpy, sys; import warp as wp; root = sys.argv[1]; "
        "runpy.run_module('tinyapp', run_name='__main__'); " + checks
    )
    root = str(tmp_path / "cache" / manifest.environment.warp_version)
    done = subprocess.run([sys.executable, "-c", script, root], cwd=tiny_app, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_bake_of_a_failing_command_is_one_line(tmp_path, capsys):
    shutil.copy(__file__, tmp_path / "x.py")
    assert main(["bake", "--cwd", str(tmp_path), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("warp-fix: error:") and len(error.splitlines()) == 1


def test_key_from_a_report_matches_the_archive(baked, tiny_app, tmp_path, capsys):
    from warp_fix.probe import measure

    measure(COMMAND, tiny_app, samples=1).save(tmp_path / "report.json")
    assert main(["bake", "key", "--from-report", str(tmp_path / "report.json")]) == 0
    assert capsys.readouterr().out.strip() == baked.manifest.key
    assert main(["bake", "key", "--arch", "86", "--from-report", str(tmp_path / "report.json")]) == 2
