"""unused-backward on modules whose kernels carry no gradient (fixture integer_modules, warpSPHCore's shape): an
autograd wrapper calls `function(*args)` under a tape, which the scan cannot follow. The integer modules keep a safe
per-module fix; the float module only gets the process-wide one; a tape the scan does follow to the integer kernel
takes the per-module fix away again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, PYTHON
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure

INTEGER_MODULES = ["particles.hashing", "particles.cells"]  # in the order the quickstart builds them
# only the call inside the `with tape:` block: the one on line 26 runs with no tape recording
UNRESOLVED = (
    "the tape at particles/autograd.py:22, whose call function(...) at particles/autograd.py:24 cannot be followed"
)

# a script that differentiates through the hashing kernel itself, on a tape the scan follows
CHECK_HASH = '''"""Records the hashing on a tape, as a gradient check of a pipeline would."""

import numpy as np
import warp as wp

from particles.hashing import hash_kernel


def check_hash():
    cells = wp.array(np.zeros((4, 2), dtype=np.int32), dtype=wp.int32)
    hashes = wp.zeros(4, dtype=wp.uint32)
    tape = wp.Tape()
    with tape:
        wp.launch(hash_kernel, dim=4, inputs=[cells, wp.uint32(64), hashes])
    return tape
'''


def unused_backward(plan):
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    return finding, [f for f in plan.fixes if f.slug == "unused-backward"]


@pytest.fixture(scope="module")
def report():
    return measure([PYTHON, "quickstart.py"], FIXTURES / "integer_modules", samples=1)


@pytest.fixture(scope="module")
def with_resolved_tape(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("resolved") / "integer_modules"
    shutil.copytree(FIXTURES / "integer_modules", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scripts").mkdir()
    (root / "scripts" / "__init__.py").write_text("")
    (root / "scripts" / "check_hash.py").write_text(CHECK_HASH)
    return root


def test_the_tracer_records_which_kernels_take_differentiable_arguments(report):
    verdicts = {k.function: k.differentiable_arguments for b in report.trace.builds for k in b.kernel_sources}
    assert verdicts == {"hash_kernel": False, "linear_index": False, "density_kernel": True}


def test_integer_modules_get_a_safe_per_module_fix_the_float_module_only_the_process_wide_one(report):
    plan = make_plan(report, FIXTURES / "integer_modules")
    finding, fixes = unused_backward(plan)
    assert finding.status == "fired"
    assert finding.facts.modules == [*INTEGER_MODULES, "particles.density"]
    assert finding.facts.gradient_free == {m: UNRESOLVED for m in INTEGER_MODULES}
    assert finding.facts.differentiated_elsewhere == {}  # no tape the scan follows reaches any of them
    assert finding.facts.may_be_differentiated == {"particles.density": UNRESOLVED}
    per_module = [f for f in fixes if f.codemod == "module_options"]
    assert [(f.args_json(), f.safety) for f in per_module] == [
        ({"file": f"particles/{m.split('.')[1]}.py", "options": {"enable_backward": False}}, SAFE)
        for m in INTEGER_MODULES
    ]
    for fix in per_module:
        assert "no argument of its kernels is differentiable" in fix.description
        assert "Warp logs a warning at backward and the gradients are unchanged" in fix.description
    (process_wide,) = [f for f in fixes if f.codemod == "config_at_entry"]
    assert process_wide.safety == CONSENT
    assert process_wide.args_json() == {"file": "quickstart.py", "name": "enable_backward", "value": False,
                                 "before_line": 5,
                                 "before_statement": "from particles import density, hash_cells, linear_cell_indices"}
    assert f"particles.density may be differentiated by {UNRESOLVED}" in process_wide.description
    assert "particles.hashing" not in process_wide.description
    (why,) = [n.reason for n in plan.not_proposed if n.slug == "unused-backward"]
    assert why.startswith("particles.density: backward stays on in the module itself")


def test_a_tape_the_scan_follows_to_the_integer_kernel_keeps_the_process_wide_rule(with_resolved_tape):
    report = measure([PYTHON, "quickstart.py"], with_resolved_tape, samples=1)
    finding, fixes = unused_backward(make_plan(report, with_resolved_tape))
    assert finding.facts.gradient_free == {"particles.cells": UNRESOLVED}
    assert finding.facts.differentiated_elsewhere == {"particles.hashing": "scripts/check_hash.py:12"}
    assert finding.facts.may_be_differentiated == {"particles.density": UNRESOLVED}
    assert [f.args_json()["file"] for f in fixes if f.codemod == "module_options"] == ["particles/cells.py"]
    (process_wide,) = [f for f in fixes if f.codemod == "config_at_entry"]
    assert process_wide.safety == CONSENT
    assert "particles.hashing is differentiated by scripts/check_hash.py:12" in process_wide.description
