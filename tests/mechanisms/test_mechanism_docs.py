"""docs/mechanisms.md stays in step with the code: its table states each mechanism's identity as its file does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from warp_fix.mechanisms import MECHANISMS, SLUGS

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "mechanisms.md").read_text()
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
