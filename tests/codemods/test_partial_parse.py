"""Large files are edited through a reduced module (codemods/_partial.py); the result must be the same."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import codemods._partial as partial
from codemods import REGISTRY, CodemodRefused, transform_source
from tests.codemods.test_codemod_examples import EXAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from codemod_speed import generate  # noqa: E402


def both_ways(monkeypatch, name: str, source: str, args: dict) -> tuple[str, str]:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 10**9)
    whole = transform_source(name, source, args)
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    return whole, transform_source(name, source, args)


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_every_example_gives_the_same_result_through_the_reduced_module(monkeypatch, name, example) -> None:
    whole, reduced = both_ways(monkeypatch, name, example.before, example.args)
    assert reduced == whole


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_large_generated_file_gives_the_same_result(monkeypatch, name) -> None:
    source, args = generate(1500)
    if name not in args:
        pytest.skip(f"the generator has no arguments for {name}")
    try:
        whole, reduced = both_ways(monkeypatch, name, source, args[name])
    except CodemodRefused as refused:
        pytest.fail(f"refused: {refused}")
    assert reduced == whole


def test_elided_statements_come_back_byte_for_byte(monkeypatch) -> None:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    source = "import warp as wp\n\n\ndef a():\n    return 1\n\n\nX = (\n    1,\n    2,\n)\n"
    text, originals = partial.reduce_source(source, set(), set())
    assert "def a" not in text and "X =" not in text
    assert text.count("\n") == source.count("\n")  # line numbers of kept statements do not move
    assert partial.restore(text, originals) == source
