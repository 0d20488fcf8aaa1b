"""Headless Chromium for the render tests: a page (or an SVG) as a screenshot, its DOM, and the PNG's pixels."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not on PATH (CI installs it in .ci/run)")


def chromium(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}",
    ]  # fmt: skip
    return subprocess.run([CHROMIUM, *flags, *extra, url], capture_output=True, text=True, timeout=120)


def png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the decompressed (still filtered) scanlines of a PNG, with the stdlib only."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        if data[offset + 4 : offset + 8] == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))
