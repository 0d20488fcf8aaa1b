"""docs/mechanisms.md and the compile model (docs/compile-model.md) stay in step with the code: their tables state
each mechanism's identity as its file does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from warp_fix.mechanisms import MECHANISMS, SLUGS

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = (DOCS / "mechanisms.md").read_text()
# | [slug](#slug) | CS id | in one line | fix | class |
ROWS = {
    slug: (cs, fix, safety)
    for slug, cs, fix, safety in re.findall(
        r"^\| \[([\w-]+)\]\(#[\w-]+\) \| ([^|]+) \| [^|]+ \| ([^|]+) \| ([^|]+) \|$", PAGE, re.MULTILINE
    )
}
SECTIONS = dict(re.findall(r"^## ([\w-]+)\n(.*?)(?=^## |\Z)", PAGE, re.MULTILINE | re.DOTALL))


def test_the_table_lists_every_mechanism_in_registry_order():
    assert list(ROWS) == list(SLUGS)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.SLUG)
def test_table_row_states_the_id_codemods_and_safety_classes(mechanism):
    cs, fix, safety = ROWS[mechanism.SLUG]
    assert cs == (mechanism.CS or "—")
    assert set(re.findall(r"`(\w+)`", fix)) == set(mechanism.CODEMODS)
    assert set(re.findall(r"safe|consent|advisory", safety)) == set(mechanism.SAFETY)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.SLUG)
def test_fix_paragraph_names_each_codemod_and_safety_class(mechanism):
    fix = SECTIONS[mechanism.SLUG].split("**Fix.**", 1)[1]
    for codemod in mechanism.CODEMODS:
        assert f"`{codemod}`" in fix, codemod
    for safety in mechanism.SAFETY:
        assert re.search(rf"\*\*{safety}\*\*", fix, re.IGNORECASE), safety


# | CS id | [slug](mechanisms.md#slug) | what happens | signal | fix | not when |
MODEL_ROWS = re.findall(
    r"^\| (CS-\d+|—) \| \[([\w-]+)\]\(mechanisms\.md#([\w-]+)\) \|",
    (DOCS / "compile-model.md").read_text(),
    re.MULTILINE,
)


def test_the_compile_models_table_gives_every_mechanism_its_id_in_registry_order():
    assert [slug for _, slug, _ in MODEL_ROWS] == list(SLUGS)
    assert all(anchor == slug for _, slug, anchor in MODEL_ROWS)
    ids = {slug: cs for cs, slug, _ in MODEL_ROWS}
    assert {m.SLUG: m.CS or "—" for m in MECHANISMS} == ids
    assert sorted(cs for cs in ids.values() if cs != "—") == sorted(f"CS-{n}" for n in range(1, 14))


def test_the_run_and_reading_table_has_one_row_per_mechanism_in_registry_order():
    """Each mechanism says which of its decisions rest on the run and which on reading."""
    part = PAGE.split("### What the run decides, and what reading may do", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([\w-]+) \| [^|]+ \| [^|]+ \|$", part, re.MULTILINE)
    assert rows[0] == "mechanism" and rows[1:] == list(SLUGS)
