"""Module-layout mechanisms on the shapes real programs have, measured on real runs of the fixture apps.

Renamed factory kernels, `wp.kernel(fn, ...)` called as a function, a project's own kernel decorator, a plugin
dispatch whose kernels only some runs build, two or three modules of one lifecycle, and one whose edge stage is a
closed set of alternatives picked by configuration; and the plan's rule of one fix (one commit) per mechanism and
target module.
"""

from __future__ import annotations

import shlex

from codemods.specs import DropUniqueArgs, KernelsToModuleScopeArgs
from tests.apply.conftest import PYTHON, fixture_repo, git
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import SAFE, Fix
from warp_fix.plan import group_fixes


def fixes(plan, slug: str) -> list[Fix]:
    return [f for f in plan.fixes if f.slug == slug]


def declined(plan, slug: str) -> list[str]:
    return [n.reason for n in plan.not_proposed if n.slug == slug]


def finding(plan, slug: str):
    return next(f for f in plan.findings if f.slug == slug)


def test_project_decorator_kernel_joins_its_files_module_at_the_decorator_call(plan_of):
    plan = plan_of("factory_qualname")
    (fix,) = fixes(plan, "unique-on-stable")
    assert (fix.codemod, fix.safety) == ("call_site_argument", SAFE)
    assert fix.args_json() == {
        "file": "filterbank/ops.py", "line": 14, "callee": "kernel", "keyword": "module", "value": "filterbank.ops",
    }


def test_renamed_factory_kernels_are_the_repositorys_and_their_own_options_keep_them_apart(plan_of):
    plan = plan_of("factory_qualname")
    stable = finding(plan, "unique-on-stable").facts.stable
    assert {(k.file, k.kernel, k.made_by) for k in stable} == {
        ("filterbank/boxes.py", "box", "call"),
        ("filterbank/ops.py", "rectify", "project-decorator"),
    }
    reasons = declined(plan, "unique-on-stable")
    assert any(
        "box (filterbank/boxes.py:10, made as box_size_3_kernel, box_size_7_kernel) sets its own module_options" in r
        for r in reasons
    ), reasons


def test_renamed_kernel_made_by_a_call_is_proposed_and_two_factories_are_one_fix(plan_of):
    plan = plan_of("plugin_dispatch")
    by_codemod = {f.codemod: f for f in fixes(plan, "unique-on-stable")}
    assert set(by_codemod) == {"drop_unique", "call_site_argument"}
    assert by_codemod["drop_unique"].args_json() == {
        "file": "shading/stages.py", "names": ["make_normalize", "make_gamma"], "module": "shading.stages.stable",
    }
    assert by_codemod["call_site_argument"].args_json() == {
        "file": "shading/stages.py", "line": 34, "callee": "kernel", "keyword": "module",
        "value": "shading.stages.stable",
    }


def test_kernels_chosen_per_run_are_left_alone_with_the_reason(plan_of):
    plan = plan_of("plugin_dispatch")
    layout = ("unique-on-stable", "kernel-after-load", "granular-modules")
    moved = " ".join(str(f.args_json()) for f in plan.fixes if f.slug in layout)
    assert "shaders.py" not in moved and "effects.py" not in moved
    (by_kind,) = [r for r in declined(plan, "unique-on-stable") if r.startswith("toon ")]
    assert "optional" in by_kind and "in a branch on kind" in by_kind and "every run would compile it" in by_kind
    # a registry's effect kernel joins its loaded module late: a rebuild, yet moving it would compile every effect
    assert finding(plan, "kernel-after-load").status == "fired"
    (by_registry,) = declined(plan, "kernel-after-load")
    assert "shading/effects.py" in by_registry and "optional" in by_registry and "EFFECTS[...]" in by_registry


def test_optional_kernel_that_captures_nothing_moves_into_the_module_every_run_builds(plan_of):
    plan = plan_of("optional_shared_module")
    found = finding(plan, "kernel-after-load")
    assert found.status == "fired" and found.extra_builds == 1
    (late,) = found.facts.late_kernels
    assert (late.module, late.chosen_by, late.captures) == ("harvest.buffers", ["self"], [])
    assert late.first_build_files == ["harvest/buffers.py"]
    (fix,) = fixes(plan, "kernel-after-load")
    assert (fix.codemod, fix.safety) == ("kernels_to_module_scope", SAFE)
    assert fix.args_json() == {"file": "harvest/buffers.py", "factory": "record", "kernels": ["advance_heads"]}
    assert "advance_heads is optional" in fix.description and "one small kernel" in fix.description
    assert declined(plan, "kernel-after-load") == []


def test_three_same_lifecycle_modules_merge_and_other_lifecycles_or_options_stay(plan_of):
    plan = plan_of("lifecycle_modules")
    (fix,) = fixes(plan, "granular-modules")
    assert fix.codemod == "merge_modules"
    assert fix.args_json() == {
        "kernels": [["grading/lift.py", "lift"], ["grading/curve.py", "s_curve"], ["grading/grain.py", "grain"]],
        "module": "grading.kernels",
    }
    assert finding(plan, "granular-modules").extra_builds == 2


def test_a_closed_set_of_alternatives_joins_its_lifecycles_merge_and_plugin_options_and_tape_modules_stay(plan_of):
    """The set-up, edge and output stages merge as one fix, the edge module's four alternatives (picked by
    configuration at boundary.py:41) whole; the registry, the mode-dependent fast_math and the taped modules stay,
    each with its reason."""
    plan = plan_of("lifecycle_alternatives")
    (fix,) = fixes(plan, "granular-modules")
    assert fix.codemod == "merge_modules"
    assert fix.args_json() == {
        "kernels": [
            ["edgeflow/prepare.py", "normalize"],
            ["edgeflow/boundary.py", "clamp_edges"],
            ["edgeflow/boundary.py", "reflect_edges"],
            ["edgeflow/boundary.py", "wrap_edges"],
            ["edgeflow/boundary.py", "zero_edges"],
            ["edgeflow/output.py", "to_levels"],
        ],
        "module": "edgeflow.kernels",
    }
    assert "closed set of alternatives" in fix.description
    assert "edge_kernel() (edgeflow/boundary.py:41) picks from by configuration" in fix.description
    facts = finding(plan, "granular-modules").facts
    assert facts.modules == ["edges", "output", "setup"]
    (closed,) = facts.alternatives
    assert (closed.module, closed.file, closed.picked_by, closed.line) == ("edges", "edgeflow/boundary.py",
                                                                           "edge_kernel", 41)
    assert sorted(closed.kernels) == ["clamp_edges", "reflect_edges", "wrap_edges", "zero_edges"]
    assert finding(plan, "granular-modules").extra_builds == 2
    reasons = declined(plan, "granular-modules")
    assert any(r.startswith("edgeflow.numerics keeps its own module") and "fast_math" in r and
               "edgeflow/numerics.py:7" in r for r in reasons), reasons
    assert any(r.startswith("edgeflow.filters keeps its own module: plugin code") and "FILTERS[...]" in r
               for r in reasons), reasons
    assert any(r.startswith("edgeflow.exposure keeps its own module: differentiated") for r in reasons), reasons
    touched = {file for f in plan.fixes for file in f.files}
    assert touched.isdisjoint({"edgeflow/numerics.py", "edgeflow/filters.py", "edgeflow/exposure.py"}), touched


def test_every_fired_finding_has_a_fix_or_a_reason(plan_of):
    for name in ("factory_qualname", "plugin_dispatch", "lifecycle_modules", "lifecycle_alternatives"):
        plan = plan_of(name)
        for fired in (f for f in plan.findings if f.status == "fired"):
            assert fixes(plan, fired.slug) or declined(plan, fired.slug), (name, fired.slug)


def test_fixes_of_one_mechanism_and_target_module_are_one_fix():
    def drop(names: list[str], module: str, file: str = "app/stages.py") -> Fix:
        return Fix("", "unique-on-stable", f"Share {names}", "d", SAFE, "drop_unique",
                   places=(DropUniqueArgs(file=file, names=names, module=module),), files=[file],
                   expected_builds_removed=1)

    grouped = group_fixes(
        [drop(["make_a"], "app.stable"), drop(["make_b", "make_a"], "app.stable"), drop(["make_c"], "app.other"),
         drop(["make_d"], "app.stable", file="app/other.py")]
    )
    assert [f.args_json()["names"] for f in grouped] == [["make_a", "make_b"], ["make_c"], ["make_d"]]


def test_one_place_edits_for_one_module_are_one_fix_with_each_place():
    def move(factory: str, file: str = "app/stages.py", module: str = "app.stable") -> Fix:
        return Fix("", "unique-on-stable", f"Define the stable kernels of {factory}() at module scope in one module",
                   "d", SAFE, "kernels_to_module_scope",
                   places=(KernelsToModuleScopeArgs(file=file, factory=factory, kernels=[factory[5:]], module=module),),
                   files=[file],
                   expected_builds_removed=3)

    grouped = group_fixes([move("make_a"), move("make_b"), move("make_c", "app/more.py"), move("make_d", module="x")])
    assert len(grouped) == 2
    joined = grouped[0]
    assert [place.factory for place in joined.places] == ["make_a", "make_b", "make_c"]
    assert joined.files == ["app/more.py", "app/stages.py"] and joined.expected_builds_removed == 3
    assert joined.title == "Define the stable kernels of make_a() at module scope in one module (+2 more: make_b(), " \
        "make_c())"
    assert len(grouped[1].places) == 1  # another target module stays a fix of its own


def test_merging_two_or_three_modules_is_kept_as_one_commit(tmp_path):
    """apply for real: the three stages of one lifecycle become one module; one commit, fewer identities (up to 3
    samples per arm, so a structural win that a noisy CPU's timing contradicts is measured again)."""
    repo = fixture_repo(tmp_path, "lifecycle_modules")
    request = build_request(
        command=[PYTHON, "-m", "grading"], cwd=repo, branch="wf/layout", samples=3, only=["granular-modules"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (entry,) = [e for e in result.ledger.entries if e.slug == "granular-modules"]
    assert entry.outcome == KEPT, entry.reason
    identities_before, identities_after = entry.numbers.structure["identities"]
    assert identities_after == identities_before - 2
    assert git(repo, "rev-list", "--count", "main..wf/layout") == "1"
    changed = git(repo, "diff", "--name-only", "main..wf/layout").split()
    assert changed == ["grading/curve.py", "grading/grain.py", "grading/lift.py"]


def test_lifecycle_with_configured_alternatives_is_merged_as_one_commit(tmp_path):
    """apply for real: set-up, the four edge alternatives and output become one module in one commit (6 -> 4
    identities), the output is the same, the fixture's tests (every boundary kind, a project filter, the exposure
    gradient) pass; numerics.py (fast_math by mode), filters.py (the registry) and exposure.py (taped) untouched."""
    repo = fixture_repo(tmp_path, "lifecycle_alternatives")
    request = build_request(
        command=[PYTHON, "-m", "edgeflow"], cwd=repo, branch="wf/layout", samples=3, only=["granular-modules"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (entry,) = [e for e in result.ledger.entries if e.slug == "granular-modules"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (6, 4)
    assert entry.numbers.output_same and entry.numbers.workload_same
    assert git(repo, "rev-list", "--count", "main..wf/layout") == "1"
    changed = git(repo, "diff", "--name-only", "main..wf/layout").split()
    assert changed == ["edgeflow/boundary.py", "edgeflow/output.py", "edgeflow/prepare.py"]
    boundary = git(repo, "show", "wf/layout:edgeflow/boundary.py")
    assert boundary.count('@wp.kernel(module="edgeflow.kernels")') == 4 and 'module="edges"' not in boundary
    assert boundary.split("def edge_kernel")[1] == git(repo, "show", "main:edgeflow/boundary.py").split(
        "def edge_kernel")[1]


def test_two_factories_given_one_module_are_one_commit(tmp_path):
    """apply for real: the drop_unique fix naming both stage factories lands as one commit; the optional shader
    file is never edited."""
    repo = fixture_repo(tmp_path, "plugin_dispatch")
    request = build_request(
        command=[PYTHON, "-m", "shading"], cwd=repo, branch="wf/layout", samples=3, only=["unique-on-stable"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (grouped,) = [e for e in result.ledger.entries if e.title.startswith("Build the stable kernels of")]
    assert grouped.outcome == KEPT, grouped.reason
    assert git(repo, "show", "--name-only", "--format=", grouped.commit).split() == ["shading/stages.py"]
    diff = git(repo, "show", "--format=", grouped.commit)
    assert diff.count('-    @wp.kernel(module="unique")') == 2
    assert git(repo, "diff", "--name-only", "main..wf/layout").split() == ["shading/stages.py"]


def test_optional_kernel_moved_to_module_scope_is_kept_as_one_build(tmp_path):
    """apply for real: the async mode's late kernel moves to module scope; its module is built once, and the
    fixture's tests (both modes) pass."""
    repo = fixture_repo(tmp_path, "optional_shared_module")
    request = build_request(
        command=[PYTHON, "-m", "harvest"], cwd=repo, branch="wf/layout", samples=3, only=["kernel-after-load"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (entry,) = [e for e in result.ledger.entries if e.slug == "kernel-after-load"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (2, 1)
    assert git(repo, "diff", "--name-only", "main..wf/layout").split() == ["harvest/buffers.py"]
    moved = git(repo, "show", "wf/layout:harvest/buffers.py")
    assert moved.index("def advance_heads") < moved.index("class Recorder")


