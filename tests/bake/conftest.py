"""A tiny two-module Warp app, baked once per session (each Warp run on the CPU takes seconds)."""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
from pathlib import Path

import pytest

from warp_fix.bake import bake

MODULE_A = """
import os

import warp as wp


@wp.kernel
def scale(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = x[i] * s


if os.environ.get("TINYAPP_EXTRA"):

    @wp.kernel
    def extra(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0
"""
MODULE_B = """
import warp as wp


@wp.kernel
def shift(x: wp.array(dtype=float), d: float):
    i = wp.tid()
    x[i] = x[i] + d
"""
MAIN = """
import warp as wp

wp.config.enable_backward = False
from tinyapp import a, b  # noqa: E402

x = wp.ones(8, dtype=float, device="cpu")
wp.launch(a.scale, dim=8, inputs=[x, 2.0], device="cpu")
wp.launch(b.shift, dim=8, inputs=[x, 1.0], device="cpu")
print(x.numpy().sum())
"""
COMMAND = ["python", "-m", "tinyapp"]


def write_app(root: Path) -> Path:
    package = root / "tinyapp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(textwrap.dedent(MODULE_A))
    (package / "b.py").write_text(textwrap.dedent(MODULE_B))
    (package / "__main__.py").write_text(textwrap.dedent(MAIN))
    return root


@pytest.fixture(scope="session")
def tiny_app(tmp_path_factory) -> Path:
    return write_app(tmp_path_factory.mktemp("app"))


@pytest.fixture(scope="session")
def baked(tiny_app, tmp_path_factory):
    return bake(COMMAND, tiny_app, tmp_path_factory.mktemp("archive"), [], None)


def repack(archive: Path, destination: Path, edit_manifest=None, edit_file=None, add=None) -> Path:
    """A copy of `archive` with its manifest JSON and/or one file's bytes changed, and members `add` appended
    ({name: bytes}): what tampering looks like."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as source, tarfile.open(destination, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read()
            if member.name == "manifest.json" and edit_manifest:
                manifest = json.loads(data)
                edit_manifest(manifest)
                data = json.dumps(manifest).encode()
            elif member.name.startswith("cache/") and edit_file and member.name.endswith(".meta"):
                data = edit_file(data)
                edit_file = None
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))
        for name, data in (add or {}).items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            target.addfile(info, io.BytesIO(data))
    return destination


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
