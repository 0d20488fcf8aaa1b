"""The source index kept between runs: only changed files are read again, and a bad store is never trusted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.scan.conftest import write_repo
from warp_fix.scan import KeptIndex, SourceIndex, scan_repository
from warp_fix.scan.kept import STORE_NAME

PHYSICS = """
import warp as wp

@wp.kernel
def integrate(x: wp.array(dtype=float)):
    x[0] = x[0] + 1.0
"""
BOXES = """
import warp as wp
from app import physics

def make(width: int):
    @wp.kernel
    def box(x: wp.array(dtype=float)):
        x[0] = float(width)
    return box

def run(x):
    tape = wp.Tape()
    with tape:
        wp.launch(make(3), dim=1, inputs=[x])
    tape.backward()
"""
FILES = {
    "app/__init__.py": "",
    "app/physics.py": PHYSICS,
    "app/boxes.py": BOXES,
    "app/__main__.py": "from app import boxes\n\nif __name__ == '__main__':\n    boxes.run(None)\n",
    "README_helper.py": "print('no mention of the library')\n",
    "broken.py": "import warp\ndef oops(:\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo", FILES)


def kept_scan(root: Path, store: Path) -> tuple[SourceIndex, KeptIndex]:
    kept = KeptIndex.at(store)
    return scan_repository(root, kept=kept), kept


def test_a_second_scan_reads_no_file_and_gives_the_same_index(repo, tmp_path):
    store = tmp_path / "store.json"
    first, kept = kept_scan(repo, store)
    assert (kept.read, kept.reused) == (len(FILES), 0)
    second, kept = kept_scan(repo, store)
    assert (kept.read, kept.reused) == (0, len(FILES))
    assert second.to_json() == first.to_json() == scan_repository(repo).to_json()


def test_an_edited_file_is_read_again_and_its_new_items_replace_the_old(repo, tmp_path):
    store = tmp_path / "store.json"
    kept_scan(repo, store)
    (repo / "app/physics.py").write_text(PHYSICS.replace("integrate", "advance"))
    index, kept = kept_scan(repo, store)
    assert (kept.read, kept.reused) == (1, len(FILES) - 1)
    assert {k.name for k in index.kernels} == {"advance", "box"}
    assert index.to_json() == scan_repository(repo).to_json()


def test_a_file_moved_to_another_module_is_read_again(repo, tmp_path):
    """Same text, another place: its kernels' default module changes, so its facts cannot be reused."""
    store = tmp_path / "store.json"
    kept_scan(repo, store)
    (repo / "app/physics.py").rename(repo / "app/motion.py")
    index, kept = kept_scan(repo, store)
    assert kept.read == 1
    assert index.kernel_named("integrate").python_module == "app.motion"


def test_a_deleted_file_is_forgotten(repo, tmp_path):
    store = tmp_path / "store.json"
    kept_scan(repo, store)
    (repo / "app/physics.py").unlink()
    index, _ = kept_scan(repo, store)
    assert index.kernel_named("integrate") is None
    assert "app/physics.py" not in {f.file for f in index.files}
    assert "app/physics.py" not in store.read_text()  # not kept either: the store holds this scan's files only
    assert index.to_json() == scan_repository(repo).to_json()


def lie_in(store: Path) -> None:
    """Rename the kept kernel in the store's payload, so that trusting it would give a wrong index."""
    text = store.read_text()
    assert '"integrate"' in text
    store.write_text(text.replace('"integrate"', '"forged"'))


@pytest.mark.parametrize(
    "spoil",
    [
        lie_in,
        lambda store: store.write_text(store.read_text()[: len(store.read_text()) // 2]),  # cut short
        lambda store: store.write_bytes(b"\x00\xff not a store"),
        lambda store: store.write_text(store.read_text().replace('"version": 1', '"version": 999', 1)),
        lambda store: store.write_text(store.read_text().replace('"scanner": "', '"scanner": "other', 1)),
    ],
    ids=["forged", "truncated", "garbage", "other-version", "other-scanner"],
)
def test_a_corrupt_or_incompatible_store_is_rebuilt_not_trusted(repo, tmp_path, spoil):
    store = tmp_path / "store.json"
    kept_scan(repo, store)
    spoil(store)
    index, kept = kept_scan(repo, store)
    assert kept.rebuilt and kept.reused == 0 and kept.read == len(FILES)
    assert index.kernel_named("integrate") is not None and index.kernel_named("forged") is None
    assert index.to_json() == scan_repository(repo).to_json()
    _, kept = kept_scan(repo, store)  # and rewritten whole
    assert not kept.rebuilt and kept.reused == len(FILES)


def test_an_entry_that_does_not_fit_the_facts_is_read_again(repo, tmp_path):
    """A store that is whole but holds an entry of the wrong shape (a hand edit with a fixed checksum) costs
    that file a read, never a wrong item."""
    store = tmp_path / "store.json"
    kept_scan(repo, store)
    header, payload = store.read_text().split("\n", 1)
    entries = json.loads(payload)
    key = next(k for k, v in entries.items() if v["items"] and v["items"]["kernels"])
    entries[key] = {"items": {"kernels": [{"name": "forged"}]}}
    payload = json.dumps(entries)
    fields = json.loads(header)
    from warp_fix.scan.kept import _checksum

    fields["checksum"] = _checksum(payload)
    store.write_text(json.dumps(fields) + "\n" + payload)
    index, kept = kept_scan(repo, store)
    assert kept.read == 1
    assert index.to_json() == scan_repository(repo).to_json()


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_repository_keeps_its_index_in_its_warp_fix_folder_and_a_subfolder_keeps_none(repo):
    git(repo, "init", "-q")
    kept = KeptIndex.of_repository(repo)
    assert kept is not None and kept.path == (repo / ".git" / "warp-fix" / STORE_NAME).resolve()
    scan_repository(repo, kept=kept)
    assert kept.path.is_file()
    assert KeptIndex.of_repository(repo / "app") is None
    assert KeptIndex.of_repository(repo.parent) is None  # not a repository


def test_worktrees_of_one_repository_share_its_kept_index(repo, tmp_path):
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    scan_repository(repo, kept=KeptIndex.of_repository(repo))
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "--detach", str(other))
    kept = KeptIndex.of_repository(other)
    index = scan_repository(other, kept=kept)
    assert kept.read == 0 and kept.reused == len(FILES)
    assert index.to_json() == scan_repository(other).to_json()
