"""A baked cache you can trust: archives from the fixture app's real bake, tampered, each refused in one line
with nothing written; the guard fails on code the manifest does not name and does not change the cache it guards.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tracemalloc
from pathlib import Path

import pytest

from tests.bake.conftest import COMMAND, repack, tree
from warp_fix.bake.errors import BakeError
from warp_fix.cli import main

pytestmark = pytest.mark.slow


def restore(archive, cache, *extra) -> int:
    return main(["bake", "restore", str(archive), "--cache", str(cache), *extra])


def one_line_error(capsys) -> str:
    error = capsys.readouterr().err.strip()
    assert error.startswith("warp-fix: error:") and len(error.splitlines()) == 1, error
    return error


def module_b(manifest: dict) -> dict:
    return next(m for m in manifest["modules"] if m["name"] == "tinyapp.b")


def files_of_b(baked) -> dict[str, bytes]:
    with tarfile.open(baked.archive) as tar:
        return {
            m.name.split("/")[-1]: tar.extractfile(m).read() for m in tar.getmembers() if "wp_tinyapp.b_" in m.name
        }


def listed(path: str, data: bytes, kind: str) -> dict:
    return {"path": path, "kind": kind, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def smuggle(baked, tmp_path, where: str, directory: str = "wp_tinyapp.evil_1234567") -> Path:
    """The genuine manifest (same key) plus a real binary and .meta under a directory it names for no identity."""
    extra = {f"{directory}/{name.replace('wp_tinyapp.b_', 'wp_tinyapp.evil_')}": data for name, data in files_of_b(
        baked).items()}

    def edit(manifest):
        entries = [listed(path, data, "lto" if where == "lto" else "meta") for path, data in extra.items()]
        if where == "lto":
            manifest["lto"] += entries
        else:
            manifest["modules"][0]["files"] += entries

    return repack(baked.archive, tmp_path / "smuggled.tar.gz", edit_manifest=edit,
                  add={f"cache/{path}": data for path, data in extra.items()})


# 1. closed manifests


@pytest.mark.parametrize("where", ["lto", "module"])
def test_a_binary_for_an_identity_the_manifest_does_not_name_is_refused(baked, tmp_path, capsys, where):
    """Listed as an LTO file or as a file of another module: the key is the same, --expect-key passes it."""
    archive = smuggle(baked, tmp_path, where)
    assert restore(archive, tmp_path / "cache", "--expect-key", baked.manifest.key) == 2
    assert "wp_tinyapp.evil_1234567" in one_line_error(capsys)
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (".warp-fix-bake/0123.json", "warp-fix's own record"),
        ("lto/x.lto/inner", "as a file and as a folder"),
    ],
    ids=["own-record", "file-and-folder"],
)
def test_paths_a_closed_manifest_may_not_name_are_refused(baked, tmp_path, capsys, path, message):
    data = b"x" * 8
    extra = {path: data, "lto/x.lto": data} if "inner" in path else {path: data}
    archive = repack(
        baked.archive, tmp_path / "edited.tar.gz",
        edit_manifest=lambda m: m["lto"].extend(listed(p, d, "lto") for p, d in extra.items()),
        add={f"cache/{p}": d for p, d in extra.items()},
    )
    assert restore(archive, tmp_path / "cache") == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "cache").exists()


def test_verify_fails_when_the_run_loads_a_module_the_manifest_does_not_name(baked, tiny_app, tmp_path, capsys,
                                                                              monkeypatch):
    """The cache holds tinyapp.b; a manifest without it must not pass the run that loads it."""
    monkeypatch.chdir(tiny_app)
    assert restore(baked.archive, tmp_path / "cache") == 0
    narrowed = baked.manifest.to_json()
    narrowed["modules"] = [m for m in narrowed["modules"] if m["name"] != "tinyapp.b"]
    (tmp_path / "manifest.json").write_text(json.dumps(narrowed))
    verify = ["bake", "verify", "--cache", str(tmp_path / "cache"), "--manifest", str(tmp_path / "manifest.json")]
    assert main([*verify, "--", *COMMAND]) == 1
    out = capsys.readouterr().out
    assert "1 module loaded from" in out and "tinyapp.b" in out and "no manifest names it" in out


# 5. one line, never a traceback; all or nothing


def test_a_manifest_field_of_the_wrong_type_is_one_line(baked, tmp_path, capsys):
    wrong = lambda m: m["modules"][0].update(options=[])  # noqa: E731 (a list where a mapping belongs)
    archive = repack(baked.archive, tmp_path / "typed.tar.gz", edit_manifest=wrong)
    assert restore(archive, tmp_path / "cache") == 2
    assert "not a warp-fix bake manifest" in one_line_error(capsys)


def test_a_cache_under_a_file_is_one_line(baked, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert restore(baked.archive, tmp_path / "file" / "cache") == 2
    assert "cannot write the cache" in one_line_error(capsys)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_cache_is_one_line_and_stays_empty(baked, tmp_path, capsys):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache").chmod(0o555)
    try:
        assert restore(baked.archive, tmp_path / "cache") == 2
        assert "cannot write the cache" in one_line_error(capsys)
        assert not any((tmp_path / "cache").iterdir())
    finally:
        (tmp_path / "cache").chmod(0o755)


def test_a_module_directory_that_links_elsewhere_is_refused(baked, tmp_path, capsys):
    """restore --merge would write through the link, outside the cache: refused, the link's target untouched."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "cache" / baked.manifest.environment.warp_version
    root.mkdir(parents=True)
    (root / baked.manifest.modules[0].directory).symlink_to(elsewhere)
    assert restore(baked.archive, tmp_path / "cache", "--merge") == 2
    assert "is a link or a file" in one_line_error(capsys)
    assert not any(elsewhere.iterdir()) and sorted(p.name for p in root.iterdir()) == [
        baked.manifest.modules[0].directory]


def test_concurrent_merge_restores_take_turns(baked, tmp_path):
    """Six restores at once into one empty cache: each exits 0 and the cache is what one restore makes."""
    command = [sys.executable, "-m", "warp_fix", "bake", "restore", str(baked.archive), "--merge"]
    alone = tmp_path / "alone"
    subprocess.run([*command, "--cache", str(alone)], check=True, capture_output=True)
    racing = [
        subprocess.Popen([*command, "--cache", str(tmp_path / "cache")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(6)
    ]
    results = [(p.wait(), p.stderr.read().decode()) for p in racing]
    assert all(code == 0 for code, _ in results), results
    assert tree(tmp_path / "cache") == tree(alone)


def test_a_full_disk_while_staging_leaves_nothing(baked, tmp_path, monkeypatch):
    """ENOSPC injected into the staging write (a real full disk cannot be made here): one line, nothing left."""
    from warp_fix.bake import restore as restoring
    from warp_fix.bake.archive import ArchiveReader

    def fill(self, into: Path) -> None:
        (into / "partial").write_bytes(b"x")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ArchiveReader, "extract", fill)
    root = tmp_path / "cache" / "1.19.0"
    with pytest.raises(BakeError, match="No space left on device; nothing was restored"):
        restoring._place(ArchiveReader(baked.archive), root, baked.manifest, baked.manifest, set())
    assert not any((tmp_path / "cache").iterdir())


def test_a_failure_while_moving_into_a_merged_cache_undoes_every_move(baked, tmp_path, monkeypatch):
    from warp_fix.bake import restore as restoring
    from warp_fix.bake.archive import ArchiveReader

    root = tmp_path / "cache" / "1.19.0"
    (root / "wp_other_1234567").mkdir(parents=True)
    (root / baked.manifest.modules[1].directory).mkdir()  # one directory moves whole, the other file by file
    before = tree(root)
    renames = []
    real_rename = os.rename

    def rename_then_fail(source, target):
        renames.append(target)
        if len(renames) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_rename(source, target)

    monkeypatch.setattr(restoring.os, "rename", rename_then_fail)
    with pytest.raises(BakeError, match="nothing was restored"):
        restoring._place(ArchiveReader(baked.archive), root, baked.manifest, baked.manifest, set())
    monkeypatch.setattr(restoring.os, "rename", real_rename)
    assert tree(root) == before and sorted(p.name for p in root.iterdir()) == sorted(
        ["wp_other_1234567", baked.manifest.modules[1].directory])


def test_a_report_that_is_not_json_text_is_one_line(tmp_path, capsys):
    (tmp_path / "report.json").write_bytes(bytes(range(256)))
    assert main(["bake", "key", "--from-report", str(tmp_path / "report.json")]) == 2
    assert "not a JSON text" in one_line_error(capsys)


def test_out_through_dot_dot_is_resolved_as_the_shell_would(baked, tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 0
    url = (store / baked.archive.name).as_uri()
    assert main(["bake", "pull", url, "--out", str(tmp_path / "missing" / "..")]) == 0
    assert (tmp_path / baked.archive.name).read_bytes() == baked.archive.read_bytes()


# 3. atomic stores


def test_an_interrupted_push_keeps_the_good_archive(baked, tmp_path, capsys, monkeypatch):
    from fsspec.implementations.local import LocalFileSystem

    store = tmp_path / "store"
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 0
    real_put = LocalFileSystem.put_file

    def half_then_fail(self, local, remote, **kwargs):
        Path(self._strip_protocol(remote)).write_bytes(Path(local).read_bytes()[:100])
        raise OSError(errno.ECONNRESET, "connection reset")

    monkeypatch.setattr(LocalFileSystem, "put_file", half_then_fail)
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 2
    one_line_error(capsys)
    monkeypatch.setattr(LocalFileSystem, "put_file", real_put)
    assert sorted(p.name for p in store.iterdir()) == [baked.archive.name, baked.archive.name + ".sha256"]
    assert (store / baked.archive.name).read_bytes() == baked.archive.read_bytes()


def test_pull_refuses_an_archive_that_is_not_the_one_pushed_and_names_the_url(baked, tmp_path, capsys):
    """Another valid archive under the same name (a raced or swapped push): its bytes miss the pushed digest."""
    store = tmp_path / "store"
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 0
    repack(baked.archive, store / baked.archive.name, edit_manifest=lambda m: m.update(command=["other"]))
    url = (store / baked.archive.name).as_uri()
    assert main(["bake", "pull", url, "--out", str(tmp_path / "got") + "/"]) == 2
    error = one_line_error(capsys)
    assert url in error and "digest" in error and ".warp-bake-pull-" not in error
    assert not (tmp_path / "got").exists() or not any((tmp_path / "got").iterdir())


def test_a_corrupt_pull_names_the_url_not_a_temp_file(baked, tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["bake", "push", str(baked.archive), store.as_uri()]) == 0
    data = baked.archive.read_bytes()[:-200]
    (store / baked.archive.name).write_bytes(data)
    (store / (baked.archive.name + ".sha256")).write_text(hashlib.sha256(data).hexdigest() + "\n")
    url = (store / baked.archive.name).as_uri()
    assert main(["bake", "pull", url, "--out", str(tmp_path)]) == 2
    error = one_line_error(capsys)
    assert url in error and ".warp-bake-pull-" not in error


def test_concurrent_pushes_never_leave_a_spliced_archive_that_pulls(baked, tmp_path, capsys):
    """Twenty pushes of two archives of one name at once: a pull gets one of them whole, or refuses."""
    from concurrent.futures import ThreadPoolExecutor

    other = repack(baked.archive, tmp_path / "other" / baked.archive.name,
                   edit_manifest=lambda m: m.update(command=["x" * 5000]))
    store = tmp_path / "store"
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda i: main(["bake", "push", str((baked.archive, other)[i % 2]), store.as_uri()]),
                              range(20)))
    assert codes == [0] * 20
    got = tmp_path / "got"
    code = main(["bake", "pull", (store / baked.archive.name).as_uri(), "--out", str(got) + "/"])
    if code == 0:
        assert (got / baked.archive.name).read_bytes() in (baked.archive.read_bytes(), other.read_bytes())
    assert not [p for p in store.iterdir() if p.name.endswith(".partial")]


# 4. size limits


def _declared_small_but_large(baked, destination: Path, size: int) -> Path:
    """A member whose tar header says `size` bytes of zeros where the manifest says the real file's size."""
    return repack(baked.archive, destination, edit_file=lambda data: bytes(size))


def test_a_member_larger_than_its_manifest_says_is_refused_before_it_is_read(baked, tmp_path, capsys):
    archive = _declared_small_but_large(baked, tmp_path / "big.tar.gz", 64 << 20)
    assert archive.stat().st_size < 1 << 20  # zeros: the archive stays small
    tracemalloc.start()
    try:
        assert restore(archive, tmp_path / "cache") == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "67,108,864 bytes in the archive" in one_line_error(capsys)
    assert peak < 16 << 20  # the 64 MiB member was never read into memory
    assert not (tmp_path / "cache").exists()


def test_a_valid_large_member_is_streamed_not_held(baked, tmp_path, capsys):
    big = bytes(64 << 20)
    archive = repack(baked.archive, tmp_path / "lto.tar.gz",
                     edit_manifest=lambda m: m["lto"].append(listed("lto/big.lto", big, "lto")),
                     add={"cache/lto/big.lto": big})
    tracemalloc.start()
    try:
        assert restore(archive, tmp_path / "cache", "--max-bytes", "1G") == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    assert (tmp_path / "cache" / "1.19.0" / "lto" / "big.lto").stat().st_size == 64 << 20


def test_entries_over_the_limit_are_refused_until_the_user_raises_it(baked, tmp_path, capsys):
    declared = sum(f.size for f in baked.manifest.files)
    assert restore(baked.archive, tmp_path / "cache", "--max-bytes", str(declared - 1)) == 2
    assert "--max-bytes raises it" in one_line_error(capsys)
    assert not (tmp_path / "cache").exists()
    assert restore(baked.archive, tmp_path / "cache", "--max-bytes", str(declared)) == 0


# 6. permissions


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_restored_and_pulled_files_get_the_modes_warp_gives_its_own(baked, tmp_path, capsys, umask):
    old = os.umask(umask)
    try:
        assert restore(baked.archive, tmp_path / "cache") == 0
        assert main(["bake", "push", str(baked.archive), (tmp_path / "store").as_uri()]) == 0
        assert main(["bake", "pull", (tmp_path / "store" / baked.archive.name).as_uri(), "--out", str(tmp_path)]) == 0
    finally:
        os.umask(old)
    root = tmp_path / "cache" / "1.19.0"
    folders = {p.stat().st_mode & 0o777 for p in [root, *root.rglob("*")] if p.is_dir()}
    files = {p.stat().st_mode & 0o777 for p in root.rglob("*") if p.is_file()}
    assert folders == {0o777 & ~umask} and files == {0o666 & ~umask}
    assert (tmp_path / baked.archive.name).stat().st_mode & 0o777 == 0o666 & ~umask


# 7. the guard does not change what it guards


def test_a_failed_verify_does_not_compile_into_the_cache_the_next_one_reads(baked, tiny_app, tmp_path, capsys,
                                                                            monkeypatch):
    monkeypatch.chdir(tiny_app)
    monkeypatch.setenv("WARP_CACHE_PATH", str(tmp_path / "cache"))
    assert main(["bake", "restore", str(baked.archive)]) == 0
    before = tree(tmp_path / "cache")
    monkeypatch.setenv("TINYAPP_EXTRA", "1")
    assert main(["check", "--no-compile", "--", *COMMAND]) == 1
    assert tree(tmp_path / "cache") == before
    assert main(["bake", "verify", "--", *COMMAND]) == 1
    assert "kernel added: extra" in capsys.readouterr().out


# 8. warp-fix's own records


def test_restore_never_replaces_a_different_record(baked, tmp_path, capsys):
    assert restore(baked.archive, tmp_path / "cache") == 0
    record = tmp_path / "cache" / "1.19.0" / ".warp-fix-bake" / f"{baked.manifest.key}.json"
    record.write_text(record.read_text().replace('"command"', '"command" ', 1))
    before = tree(tmp_path / "cache")
    assert restore(baked.archive, tmp_path / "cache", "--merge") == 2
    assert "different record" in one_line_error(capsys)
    assert tree(tmp_path / "cache") == before


def test_verify_archive_checks_the_whole_archive(baked, tiny_app, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tiny_app)
    archive = tmp_path / "truncated.tar.gz"
    archive.write_bytes(baked.archive.read_bytes()[:-300])
    assert main(["bake", "verify", "--archive", str(archive), "--", *COMMAND]) == 2
    error = one_line_error(capsys)
    assert "truncated or corrupt" in error or "lacks" in error


def test_restoring_the_same_archive_again_needs_no_merge(baked, tmp_path, capsys):
    """A container's second start: the cache holds what this archive placed (and what the app added since)."""
    assert restore(baked.archive, tmp_path / "cache") == 0
    (tmp_path / "cache" / "1.19.0" / "wp_added_1234567").mkdir()
    before = tree(tmp_path / "cache")
    assert restore(baked.archive, tmp_path / "cache") == 0
    assert f"0 files written, {len(baked.manifest.files)} already there" in capsys.readouterr().out
    assert tree(tmp_path / "cache") == before


# 9. origin: a signature


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed")
    folder = tmp_path_factory.mktemp("keys")
    for name in ("ci", "intruder"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(folder / name)],
                       check=True)
    (folder / "allowed_signers").write_text(f"ci@bake {(folder / 'ci.pub').read_text()}")
    return folder


def test_a_signed_archive_restores_and_every_forgery_is_refused(baked, tmp_path, capsys, signer):
    from warp_fix.bake.signing import sign, signature_path

    allowed = str(signer / "allowed_signers")
    archive = tmp_path / baked.archive.name
    shutil.copy(baked.archive, archive)
    assert restore(archive, tmp_path / "unsigned", "--require-signature", allowed) == 2
    assert "no signature beside it" in one_line_error(capsys)
    sign(archive, signer / "ci")
    assert restore(archive, tmp_path / "cache", "--require-signature", allowed) == 0
    capsys.readouterr()

    forged = repack(archive, tmp_path / "forged" / archive.name,
                    edit_manifest=lambda m: m.update(command=["forged"]))  # checksums all consistent
    shutil.copy(signature_path(archive), signature_path(forged))
    assert restore(forged, tmp_path / "forged-cache", "--require-signature", allowed) == 2
    assert "does not match its bytes" in one_line_error(capsys)

    sign(forged, signer / "intruder")
    assert restore(forged, tmp_path / "forged-cache", "--require-signature", allowed) == 2
    assert "by no allowed signer" in one_line_error(capsys)
    assert not (tmp_path / "forged-cache").exists() and not (tmp_path / "unsigned").exists()


def test_the_signature_travels_through_the_store(baked, tmp_path, capsys, signer):
    from warp_fix.bake.signing import sign

    archive = tmp_path / "here" / baked.archive.name
    archive.parent.mkdir()
    shutil.copy(baked.archive, archive)
    sign(archive, signer / "ci")
    assert main(["bake", "push", str(archive), (tmp_path / "store").as_uri()]) == 0
    url = (tmp_path / "store" / archive.name).as_uri()
    assert main(["bake", "pull", url, "--out", str(tmp_path / "got") + "/"]) == 0
    pulled = tmp_path / "got" / archive.name
    assert restore(pulled, tmp_path / "cache", "--require-signature", str(signer / "allowed_signers")) == 0
