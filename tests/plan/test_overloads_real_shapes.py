"""late-overloads on real runs: a generic kernel made inside a factory (warp-nn's Adam shape), with the finding, the
fix placed inside the factory and the fix applied for real; and two module-scope generics of one file, whose
registrations are one commit."""

from __future__ import annotations

import shlex

import pytest

from tests.apply.conftest import fixture_repo, git
from tests.conftest import FIXTURES, PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import SAFE
from warp_fix.plan import make_plan

FLOAT32_ARRAY = "wp.array(dtype=wp.float32)"


@pytest.fixture(scope="module")
def plan(measured):
    return make_plan(measured("factory_overloads"), FIXTURES / "factory_overloads")


def test_the_instance_added_after_the_first_load_is_found_in_the_factory(plan):
    found = next(f for f in plan.findings if f.slug == "late-overloads")
    assert found.status == "fired" and found.extra_builds == 1
    (generic,) = found.facts.generics
    assert generic.key == "_create_kernels__locals__momentum_step"
    assert (generic.file, generic.line, generic.factory) == ("linfit/optim.py", 14, "_create_kernels")
    assert any(e.detail == "generic kernel momentum_step defined inside _create_kernels()" for e in found.evidence)


def test_the_overload_is_registered_inside_the_factory(plan):
    (fix,) = [f for f in plan.fixes if f.slug == "late-overloads"]
    assert (fix.codemod, fix.safety) == ("register_overloads", SAFE)
    assert fix.args_json() == {
        "file": "linfit/optim.py",
        "kernel": "momentum_step",
        "factory": "_create_kernels",
        "overloads": [[FLOAT32_ARRAY] * 4],
    }
    assert "_create_kernels()" in fix.title and "_create_kernels()" in fix.description
    assert [n for n in plan.not_proposed if n.slug == "late-overloads"] == []


def apply_overloads(tmp_path, fixture: str, package: str):
    """apply, trying late-overloads only, on the fixture as a repository: (the repository, its late-overloads entry,
    kept with the same output)."""
    repo = fixture_repo(tmp_path, fixture)
    request = build_request(
        command=[PYTHON, "-m", package],
        cwd=repo,
        branch="wf/overloads",
        samples=1,
        only=["late-overloads"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = [e for e in run_apply(request).ledger.entries if e.slug == "late-overloads"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.output_detail == "identical"
    return repo, entry


def test_apply_keeps_the_overload_with_one_build_of_the_module_and_the_same_output(tmp_path):
    repo, entry = apply_overloads(tmp_path, "factory_overloads", "linfit")
    assert entry.numbers.structure["identities"] == (3, 2)
    assert git(repo, "diff", "--name-only", "main..wf/overloads") == "linfit/optim.py"
    optim = git(repo, "show", "wf/overloads:linfit/optim.py")
    registered = optim.index("    wp.overload(\n        momentum_step,")
    assert optim.index("def momentum_step(") < registered < optim.index("    return increase_step, momentum_step")


def test_apply_registers_both_generics_of_one_file_in_one_commit_and_the_module_builds_once(tmp_path):
    repo, entry = apply_overloads(tmp_path, "late_overloads", "mixedprec")
    assert entry.numbers.structure["identities"] == (6, 1)
    assert git(repo, "rev-list", "--count", "main..wf/overloads") == "1"
    blas = git(repo, "show", "wf/overloads:mixedprec/blas.py")
    assert blas.count("wp.overload(") == 6  # three instances of each kernel
