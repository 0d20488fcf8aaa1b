"""Pure functions: which paths a closed manifest may name, typed fields, and --max-bytes (no Warp run)."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from tests.bake.test_manifest import CPU_ENV, entry
from warp_fix.bake.layout import layout_fault
from warp_fix.bake.manifest import MANIFEST_FORMAT, ArtifactFile, Manifest, ManifestError, options_from_mapping
from warp_fix.cli_parser import byte_count

A = entry("app.a", "a" * 64)
B = entry("app.b", "b" * 64)


def manifest(*modules, lto=()) -> Manifest:
    return Manifest(MANIFEST_FORMAT, CPU_ENV, tuple(modules), tuple(lto), ("python", "-m", "app"))


def with_files(module, *paths: str):
    return dataclasses.replace(module, files=tuple(ArtifactFile(p, "meta", 1, "ab" * 32) for p in paths))


def lto(path: str) -> ArtifactFile:
    return ArtifactFile(path, "lto", 1, "cd" * 32)


def test_a_bake_s_own_layout_is_closed():
    stripped = dataclasses.replace(
        A, directory="wp_app.a", options=options_from_mapping({"strip_hash": True}), files=(lto("wp_app.a/x.o"),)
    )
    assert layout_fault(manifest(A, B, lto=[lto("lto/gemm_1.lto"), lto("lto/sub/x.lto")])) is None
    assert layout_fault(manifest(stripped)) is None


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (manifest(with_files(A, "wp_app.b_bbbbbbb/x.meta"), B), "lies outside its directory wp_app.a_aaaaaaa"),
        (manifest(with_files(A, "wp_app.a_aaaaaaa/sub/x.meta")), "lies outside its directory"),
        (manifest(dataclasses.replace(A, directory="wp_app.evil_1234567")), "claims directory wp_app.evil_1234567"),
        (manifest(A, lto=[lto("wp_app.evil_1234567/x.o")]), "outside lto/"),
        (manifest(A, lto=[lto("lto")]), "outside lto/"),
        (manifest(A, lto=[lto(".warp-fix-bake/k.json")]), "warp-fix's own record"),
        (manifest(A, lto=[lto("lto/../wp_x/y.o")]), "outside the cache"),
        (manifest(A, lto=[lto("/etc/passwd")]), "outside the cache"),
        (manifest(A, lto=[lto("lto/./x.lto")]), "outside the cache"),
        (manifest(A, lto=[lto("lto\\..\\x")]), "outside the cache"),
        (manifest(A, lto=[lto("lto/x"), lto("lto/x")]), "lists lto/x twice"),
        (manifest(A, lto=[lto("lto/x"), lto("lto/x/y")]), "lto/x as a file and as a folder"),
    ],
)
def test_every_other_path_is_a_fault(bad, said):
    assert said in layout_fault(bad)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda m: m["modules"][0].update(options=[]), "AttributeError"),
        (lambda m: m["modules"][0]["files"][0].update(size="3"), "not a byte count"),
        (lambda m: m["modules"][0]["files"][0].update(size=True), "not a byte count"),
        (lambda m: m["modules"][0]["files"][0].update(size=-1), "not a byte count"),
        (lambda m: m["modules"][0]["files"][0].update(sha256="XYZ"), "not 64 hex digits"),
        (lambda m: m["modules"][0]["files"][0].update(path=["a"]), "where a string belongs"),
        (lambda m: m["modules"][0].update(name=5), "where a string belongs"),
        (lambda m: m.update(modules={"a": 1}), "not a warp-fix bake manifest"),
    ],
)
def test_a_field_of_the_wrong_type_is_a_manifest_error(edit, said):
    data = json.loads(manifest(A).dumps())
    edit(data)
    with pytest.raises(ManifestError, match=said):
        Manifest.loads(json.dumps(data))


def test_max_bytes_reads_sizes_with_binary_suffixes():
    assert [byte_count(t) for t in ("5000", "1K", "512M", "2G", "2GiB", "1t")] == [5000, 1024, 512 << 20, 2 << 30,
                                                                                    2 << 30, 1 << 40]
    for bad in ("", "0", "-1", "1.5G", "G", "12Q"):
        with pytest.raises(argparse.ArgumentTypeError):
            byte_count(bad)
