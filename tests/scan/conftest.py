"""Helpers: write a tiny repository of inline sources and scan it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from warp_fix.scan import SourceIndex, scan_repository


def write_repo(root: Path, files: dict[str, str]) -> Path:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def scan(tmp_path: Path) -> Callable[..., SourceIndex]:
    """`scan({"app/x.py": "..."})` writes the files under a fresh repo root and returns its index."""

    def run(files: dict[str, str], **kwargs) -> SourceIndex:
        return scan_repository(write_repo(tmp_path / "repo", files), **kwargs)

    return run


@pytest.fixture
def write_files() -> Callable[[Path, dict[str, str]], Path]:
    """`write_files(root, {"a.py": "..."})` for tests that need more than one root."""
    return write_repo
