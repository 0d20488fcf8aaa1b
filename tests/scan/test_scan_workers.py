"""A tree larger than one batch is scanned by worker processes, and its index is the one a single process gives."""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from warp_fix.scan import scanner
from warp_fix.scan.parsed import FileInfo
from warp_fix.scan.scanner import BatchWorkers, ParseJob, _Batch, scan_repository

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of three files, so the fixtures' tree is many batches, as a large library's is."""
    monkeypatch.setattr(scanner, "BATCH_FILES", 3)


def test_workers_give_the_index_of_one_process(small_batches: None) -> None:
    alone = scan_repository(FIXTURES, workers=1)
    spread = scan_repository(FIXTURES, workers=2)
    assert len(alone.kernels) > 50  # the tree really holds many batches of Warp code
    assert dataclasses.asdict(spread) == dataclasses.asdict(alone)


def test_a_tree_of_one_batch_starts_no_pool() -> None:
    workers = BatchWorkers(2)
    workers.submit([ParseJob("import warp as wp\n", FileInfo("a.py", "a", True))])
    assert workers._pool is None
    workers.close()


def test_a_batch_whose_worker_died_is_scanned_here() -> None:
    batch = _Batch([ParseJob("import warp as wp\nwp.launch(k, dim=1)\n", FileInfo("a.py", "a", True))])
    batch.future = Future()
    batch.future.set_exception(BrokenProcessPool("a worker was killed"))
    [outcome] = batch.outcomes()
    assert outcome.parsed and outcome.items is not None and len(outcome.items.launches) == 1


def test_an_unparsable_file_is_a_warning_from_a_worker_too(small_batches: None, tmp_path: Path) -> None:
    for index in range(7):
        (tmp_path / f"m{index}.py").write_text("import warp as wp\n" + ("def broken(:\n" if index == 5 else ""))
    index = scan_repository(tmp_path, workers=2)
    assert index.warnings == ["m5.py: skipped, unparsable (SyntaxError line 2)"]
