"""The docs cannot drift: the CLI reference is the parser's, links resolve, every mechanism is documented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from warp_fix import cli
from warp_fix.cli_reference import REGENERATE, render_markdown
from warp_fix.mechanisms import SLUGS

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.DOTALL)


def links(markdown: Path) -> list[str]:
    """Relative links outside code blocks (http(s) and mailto links are not checked)."""
    text = FENCE.sub("", markdown.read_text())
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def github_anchor(heading: str) -> str:
    text = heading.strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: Path) -> set[str]:
    text = FENCE.sub("", markdown.read_text())
    return {github_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def test_cli_reference_is_generated_from_the_parser():
    expected = render_markdown(cli.build_parser())
    assert (DOCS / "cli.md").read_text() == expected, f"docs/cli.md is stale: run `{REGENERATE}`"


def test_every_doc_linked_from_the_readme_exists():
    targets = links(REPO / "README.md")
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (REPO / t.split("#")[0]).exists()]
    assert missing == []


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_links_between_docs_resolve(page):
    for target in links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path) if path else page
        assert destination.exists(), f"{page.name}: broken link {target}"
        if anchor and destination.suffix == ".md":
            assert anchor in anchors(destination), f"{page.name}: no heading for #{anchor} in {destination.name}"


def sections(markdown: Path) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", markdown.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_mechanism_has_a_section_with_example_detection_and_fix():
    documented = sections(DOCS / "mechanisms.md")
    assert list(documented) == list(SLUGS)
    for slug, body in documented.items():
        assert body.count("```python") >= 2 or "Before / after" in body, slug
        assert "**Detection.**" in body and "**Fix.**" in body, slug
        assert re.search(r"\*\*(safe|consent|advisory)\*\*", body, re.IGNORECASE), slug


def test_exit_code_table_matches_the_code():
    table = (DOCS / "exit-codes.md").read_text()
    codes = [int(c) for c in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)]
    assert codes == [cli.EXIT_OK, cli.EXIT_FAILED, cli.EXIT_USAGE, cli.EXIT_INTERRUPTED]


def test_ci_doc_has_a_workflow_and_a_pre_commit_hook_using_check():
    blocks = re.findall(r"```yaml\n(.*?)```", (DOCS / "ci.md").read_text(), re.DOTALL)
    workflow = next(b for b in blocks if "runs-on:" in b)
    hook = next(b for b in blocks if "hooks:" in b)
    assert "warp-fix check --baseline" in workflow and "warp-fix check --baseline" in hook
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(workflow)["jobs"] and yaml.safe_load(hook)["repos"]


def test_every_codemod_has_a_section_with_each_of_its_arguments():
    from codemods import REGISTRY

    text = (DOCS / "codemods.md").read_text()
    sections = dict(re.findall(r"^## `(\w+)` .*?\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL))
    assert set(sections) >= set(REGISTRY), f"undocumented codemods: {sorted(set(REGISTRY) - set(sections))}"
    for name, command in REGISTRY.items():
        for arg in command.ARGS:
            assert arg.name in sections[name], f"docs/codemods.md: {name} does not mention its argument {arg.name}"


def test_each_codemod_section_quotes_its_docstring_and_command_line():
    """The docstring ends with the `args:` list derived from the codemod's Args; the page shows both as they are."""
    from codemods import REGISTRY

    text = (DOCS / "codemods.md").read_text()
    sections = dict(re.findall(r"^## `(\w+)` .*?\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL))
    for name, command in REGISTRY.items():
        quoted = re.search(r"```text\n(.*?)\n```", sections[name], re.DOTALL)
        assert quoted and quoted.group(1) == inspect.cleandoc(command.__doc__), f"docs/codemods.md: {name}'s docstring"
        assert f"CLI: `{command.cli_usage()}`" in sections[name], f"docs/codemods.md: {name}'s command line"
