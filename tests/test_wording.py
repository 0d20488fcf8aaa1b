"""Counts read as a person says them: one build, two builds, never "build(s)"."""

from warp_fix.wording import counted, named, noun


def test_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "extra build") for n in (0, 1, 2)] == ["0 extra builds", "1 extra build", "2 extra builds"]
    assert counted(1, "fix", "fixes") == "1 fix" and counted(3, "fix", "fixes") == "3 fixes"
    assert counted(1200, "module") == "1,200 modules"


def test_a_verb_or_phrase_agrees_with_its_count():
    assert f"1 module {noun(1, 'compiles', 'compile')}" == "1 module compiles"
    assert f"2 modules {noun(2, 'compiles', 'compile')}" == "2 modules compile"
    assert noun(1, "a module of its own", "modules of their own") == "a module of its own"


def test_a_long_list_of_names_shows_a_few_and_counts_the_rest():
    assert named(["a", "b"]) == "a, b"
    assert named(["a", "b", "c"]) == "a, b, c"
    assert named(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert named([f"k{i}" for i in range(8)], limit=6) == "k0, k1, k2, k3, k4, k5 and 2 more"


def test_no_message_of_the_package_counts_with_a_parenthesised_plural():
    import re
    from pathlib import Path

    plural_in_parentheses = re.compile(r"\b[a-z]+\((?:e?s)\)[ ,.;:)'\"]")  # "build(s) ", not "f(s)]"
    package = Path(__file__).resolve().parents[1] / "warp_fix"
    found = [
        f"{path.name}:{number}"
        for path in package.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if plural_in_parentheses.search(line) and ('f"' in line or "f'" in line)
    ]
    assert found == []
