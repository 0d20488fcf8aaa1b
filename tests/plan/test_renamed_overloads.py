"""late-overloads when a library renames the instances it creates (nvalchemi-toolkit-ops' `set_fn_name` shape).

The getter creates the float32 instance after the module's first build and renames it `double__float32`; the key
is part of the module's identity. Registering the instance up front would enter the first build under Warp's name
and be renamed after it, so the module would still build twice: no fix is proposed, and the reason says what
would work. Both halves run for real.
"""

from __future__ import annotations

import shutil

import pytest

from codemods import apply_codemod
from tests.conftest import FIXTURES, PYTHON
from warp_fix.plan import make_plan
from warp_fix.probe import measure

ARRAY = "wp.array(dtype=wp.float32)"


@pytest.fixture(scope="module")
def report(measured):
    return measured("renamed_overloads")


def test_the_rename_is_recorded_and_the_late_instance_fires(report):
    (first, second) = [b for b in report.trace.builds if b.module == "phasor.ops"]
    assert first.renamed_instances == {} and second.renamed_instances == {"double[a1f4_a1f4]": "double__float32"}
    plan = make_plan(report, FIXTURES / "renamed_overloads")
    assert next(f for f in plan.findings if f.slug == "late-overloads").status == "fired"


def test_no_overload_is_registered_and_the_reason_names_the_getter(report):
    plan = make_plan(report, FIXTURES / "renamed_overloads")
    assert [f for f in plan.fixes if f.slug == "late-overloads"] == []
    (reason,) = [n.reason for n in plan.not_proposed if n.slug == "late-overloads"]
    assert "instance double[a1f4_a1f4] is renamed double__float32 after it is created by double_kernel()" in reason
    assert "would still build twice" in reason and "calling double_kernel() for its types at import" in reason


def test_registered_up_front_the_rename_still_rebuilds_the_module(tmp_path):
    app = tmp_path / "renamed_overloads"
    shutil.copytree(FIXTURES / "renamed_overloads", app, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    args = {"file": "phasor/ops.py", "kernel": "double", "overloads": [[ARRAY, ARRAY]]}
    assert apply_codemod("register_overloads", app, args)
    after = measure([PYTHON, "-m", "phasor"], app, samples=1)
    assert len([b for b in after.trace.builds if b.module == "phasor.ops"]) == 2
    reasons = [r for rebuild in after.rebuilds for r in rebuild.reasons]
    assert [r.kind for r in reasons] == ["instance-renamed"]
    assert reasons[0].detail == "generic instance double[a1f4_a1f4] renamed double -> double__float32 after the " \
        "previous build"
