"""Each transformation on its examples, its preconditions on the fixtures, and the verdict it is judged by.

Fast: nothing here starts a Warp program. tests/variants/test_invariance.py runs variants for real.
"""

from __future__ import annotations

import pytest

from codemods.specs import MergeModulesArgs
from tests.variants.catalogue import BY_NAME, TRANSFORMATIONS
from tests.variants.runner import FIXTURES, Behaviour, cpu_fixtures
from tests.variants.transform import Example, Fixture, LineMap, Skip, Variant
from tests.variants.verdict import FixVerdict, LeftAlone, Verdict
from warp_fix.model import SAFE, Fix, NotProposed, Plan

EXAMPLES = [(t, example) for t in TRANSFORMATIONS for example in t.EXAMPLES]
MIN_VARIANTS_PER_FIXTURE = 5


@pytest.mark.parametrize(("transformation", "example"), EXAMPLES, ids=lambda v: getattr(v, "NAME", ""))
def test_each_example_rewrites_as_shown_and_still_compiles(transformation, example: Example):
    after = transformation.rewrite_example(example)
    assert after == example.after
    compile(after, example.path, "exec")
    if example.added:
        assert set(example.added) <= set(transformation.apply(example.fixture).files)


@pytest.mark.parametrize("transformation", TRANSFORMATIONS, ids=lambda t: t.NAME)
def test_each_transformation_says_what_it_does_and_shows_it(transformation):
    assert transformation.NAME and transformation.FAMILY and transformation.DESCRIPTION
    assert any(e.before != e.after or e.added for e in transformation.EXAMPLES)


@pytest.mark.parametrize("app", cpu_fixtures())
def test_every_fixture_has_five_variants_that_still_compile(app):
    fixture = Fixture.load(FIXTURES / app)
    variants = [v for t in TRANSFORMATIONS if isinstance(v := t.apply(fixture), Variant)]
    assert len(variants) >= MIN_VARIANTS_PER_FIXTURE, [t.apply(fixture) for t in TRANSFORMATIONS]
    for variant in variants:
        assert variant.files != fixture.sources, variant.transformation
        for path, text in variant.files.items():
            if path.endswith(".py"):
                compile(text, path, "exec")


def test_a_transformation_says_why_it_skips_a_fixture():
    script = Fixture.load(FIXTURES / "script_main")
    skips = {t.NAME: result.reason for t in TRANSFORMATIONS if isinstance(result := t.apply(script), Skip)}
    assert "sys.path" in skips["in-repo-venv"]
    assert skips["positional-launch"] == "no wp.launch passes dim by keyword"


def test_a_line_map_follows_a_moved_import_and_marks_written_lines():
    original = "import numpy\nimport warp\nfrom app import sim\n\nsim.run()\n"
    variant = "import numpy\nfrom app import sim\nimport warp\n\n\ndef helper():\n    pass\nsim.run()\n"
    lines = LineMap.between(original, variant)
    assert [lines.original(n) for n in range(1, 9)] == [1, 3, 2, 4, None, None, None, 5]


def test_a_line_map_follows_a_line_that_lost_its_comment():
    original = "import warp as wp\n\n# before the import\nwp.config.mode = 'debug'  # set early\nx = '#'\n"
    variant = "import warp as wp\nwp.config.mode = 'debug'\nx = '#'\n"
    assert LineMap.between(original, variant).lines == {1: 1, 2: 4, 3: 5}


def test_a_variant_place_reads_in_the_original_files_lines():
    fixture = Fixture.of_text({"app/sim.py": "import warp\nx = 1\n"}, "app")
    variant = Variant(
        fixture, "t", {"app/sim.py": "import warp\n\nx = 1\n"}, {"app/sim.py": "app/sim.py"},
        {"app/sim.py": LineMap.between("import warp\nx = 1\n", "import warp\n\nx = 1\n")},
    )  # fmt: skip
    assert variant.original_place("app/sim.py", 3) == ("app/sim.py", 2)
    assert variant.original_place("app/sim.py", 2) == ("app/sim.py", "?2")
    assert variant.original_place(".venv/app/sim.py", 1) == (".venv/app/sim.py", 1)


def test_a_verdict_reads_a_moved_file_wherever_the_arguments_name_it():
    variant = BY_NAME["src-layout"].apply(Fixture.load(FIXTURES / "dominant_module"))
    merge = MergeModulesArgs(kernels=[("src/acoustics/dft.py", "dft_power")], module="acoustics.kernels")
    fix = Fix(
        "F1", "granular-modules", "Merge", "", SAFE, "merge_modules", places=(merge,), lines=["src/acoustics/dft.py:9"]
    )
    (found,) = Verdict.of(Plan(["python"], fixes=[fix]), variant.original_place).fixes
    assert found.lines == ("acoustics/dft.py:9",)
    assert '"acoustics/dft.py"' in found.args and "src/" not in found.args
    said = "backward kept, launched from src/acoustics/analysis.py, which records a tape (src/acoustics/dft.py:9)"
    plan = Plan(["python"], not_proposed=[NotProposed("unused-backward", said, "ruled-out")])
    (left,) = Verdict.of(plan, variant.original_place).left_alone
    assert (
        left.reason == "backward kept, launched from acoustics/analysis.py, which records a tape (acoustics/dft.py:9)"
    )


def _plan(safety=SAFE, line: int = 12, reason: str = "set at app/sim.py:7 after 1,234 ms") -> Plan:
    fix = Fix(
        "F1", "late-module-options", "Hoist", "", safety, None, files=["app/sim.py"], lines=[f"app/sim.py:{line}"]
    )
    return Plan(["python"], fixes=[fix], not_proposed=[NotProposed("cache-discarded", reason, "ruled-out")])


def test_verdicts_agree_on_the_same_decisions_measured_differently():
    assert Verdict.of(_plan()).differences(Verdict.of(_plan(reason="set at app/sim.py:7 after 987 ms"))) == []


def test_verdicts_differ_on_a_safety_a_line_or_a_reasons_place():
    original = Verdict.of(_plan())
    assert original.differences(Verdict.of(_plan(safety="consent")))
    assert original.differences(Verdict.of(_plan(line=13)))
    assert original.differences(Verdict.of(_plan(reason="set at app/sim.py:8 after 1,234 ms")))


def test_a_verdict_reads_variant_places_in_original_coordinates():
    shifted = Verdict.of(_plan(line=14, reason="set at app/sim.py:9 after 5 ms"), lambda p, n: (p, n and n - 2))
    assert Verdict.of(_plan()).differences(shifted) == []
    assert shifted.fixes == (FixVerdict("late-module-options", None, "safe", (), "{}", ("app/sim.py:12",)),)
    assert shifted.left_alone == (LeftAlone("cache-discarded", "ruled-out", "set at app/sim.py:7 after # ms"),)


def test_the_catalogue_covers_the_families():
    families = {t.FAMILY for t in TRANSFORMATIONS}
    assert {"imports", "call structure", "layout", "naming", "formatting"} <= families
    assert len({t.NAME for t in TRANSFORMATIONS}) == len(TRANSFORMATIONS)


def test_a_verdict_reads_a_renamed_registry_by_its_original_name():
    fixture = Fixture.load(FIXTURES / "plugin_dispatch")
    variant = BY_NAME["registry-as-function"].apply(fixture)
    assert variant.names == {"_select_effects(...)": "EFFECTS[...]"}
    said = "vignette is an entry of the registry _select_effects(...): optional plugin code"
    plan = Plan(["python"], not_proposed=[NotProposed("kernel-after-load", said)])
    (left,) = Verdict.of(plan, variant.original_place, variant.names).left_alone
    assert left.reason == "vignette is an entry of the registry EFFECTS[...]: optional plugin code"


def test_a_mechanism_that_does_not_apply_keeps_its_status_only():
    def plan(reason: str) -> Plan:
        return Plan(["python"], not_proposed=[NotProposed("serial-builds", reason, "not-applicable")])

    slowest_a, slowest_b = plan("CPU run (slowest app.a)"), plan("CPU run (slowest app.b)")
    assert Verdict.of(slowest_a).differences(Verdict.of(slowest_b)) == []


def test_a_verdict_reads_renamed_kernels_in_fixes_targets_and_reasons():
    fixture = Fixture.of_text(
        {"app/ops.py": "import warp as wp\n\n\n@wp.kernel\ndef blur(a: wp.array(dtype=float)):\n    pass\n"}
    )
    variant = BY_NAME["renamed-kernels"].apply(fixture)
    assert variant.names == {"renamed_blur": "blur"}
    merge = MergeModulesArgs(kernels=[("app/ops.py", "renamed_blur")], module="app.shared")
    fix = Fix(
        "F1", "unique-on-stable", "Share", "", SAFE, "merge_modules", places=(merge,), targets=["renamed_blur_0123abcd"]
    )
    said = "renamed_blur_0123abcd is launched once"
    plan = Plan(["python"], fixes=[fix], not_proposed=[NotProposed("kernel-after-load", said)])
    verdict = Verdict.of(plan, variant.original_place, variant.names)
    assert verdict.fixes[0].targets == ("blur_*",) and '"blur"' in verdict.fixes[0].args
    assert verdict.left_alone[0].reason == "blur_* is launched once"


def test_a_verdict_reads_a_private_sub_packages_module_by_its_public_name():
    variant = BY_NAME["private-sub-package"].apply(Fixture.load(FIXTURES / "dominant_module"))
    assert variant.names == {"acoustics._src.": "acoustics."}
    merge = MergeModulesArgs(kernels=[("acoustics/_src/dft.py", "dft_power")], module="acoustics._src.kernels")
    fix = Fix(
        "F1", "granular-modules", "Merge", "", SAFE, "merge_modules", places=(merge,), targets=["acoustics._src.dft"]
    )
    (found,) = Verdict.of(Plan(["python"], fixes=[fix]), variant.original_place, variant.names).fixes
    assert found.targets == ("acoustics.dft",)
    assert '"acoustics/dft.py"' in found.args and '"acoustics.kernels"' in found.args and "_src" not in found.args


def test_the_behaviour_check_reads_a_renamed_module_back():
    launches = (("dft_power", "acoustics._src.dft", (8,), ("float32",)),)
    behaviour = Behaviour("output", launches).read_back({"acoustics._src.": "acoustics."})
    assert behaviour.launches == (("dft_power", "acoustics.dft", (8,), ("float32",)),)


def test_a_verdict_reads_a_function_moved_into_a_class_by_its_own_name():
    variant = BY_NAME["function-as-static-method"].apply(Fixture.load(FIXTURES / "factory_in_loop"))
    assert variant.names["_Denoise.denoise"] == "denoise"
    said = "make_filter() keeps its default: banding/adaptive.py:11 (_Denoise.denoise) also calls it"
    plan = Plan(["python"], not_proposed=[NotProposed("factory-in-loop", said)])
    (left,) = Verdict.of(plan, variant.original_place, variant.names).left_alone
    assert "(denoise)" in left.reason
