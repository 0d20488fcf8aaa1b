"""factory-in-loop on a real run of fixtures/factory_in_loop: a filter bank makes one factory kernel per width
inside its launch loop, a module="unique" module each; beside it a differentiated module and a second caller of
the factory whose widths are run-time data."""

from __future__ import annotations

import shlex

from codemods.specs import FactorySetArgs
from tests.apply.conftest import PYTHON, fixture_repo, git
from tests.conftest import write_app
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import FIRED, SAFE
from warp_fix.probe import measure

SLUG = "factory-in-loop"


def test_the_bank_s_loop_is_proposed_with_its_place_and_reason(plan_of):
    plan = plan_of("factory_in_loop")
    finding = next(f for f in plan.findings if f.slug == SLUG)
    assert finding.status == FIRED
    bank = next(s for s in finding.facts.loop_sets if s.class_name == "FilterBank")
    assert (bank.file, bank.line, bank.origin, bank.per_call) == ("banding/bank.py", 21, "constructor", [])
    assert (len(bank.modules), bank.builds) == (4, 4)
    (fix,) = [f for f in plan.fixes if f.slug == SLUG]
    assert (fix.codemod, fix.safety, fix.expected_builds_removed) == ("factory_set", SAFE, 3)
    assert fix.places == (
        FactorySetArgs(
            file="banding/bank.py", class_name="FilterBank", method="apply", line=21, callee="make_filter",
            attribute="_filter_kernels", module="banding.bank.FilterBank", factory_file="banding/filters.py",
            factory="make_filter",
        ),
    )
    assert fix.lines == ["banding/bank.py:21", "banding/filters.py:6"]
    assert "self.widths is set in FilterBank.__init__" in fix.description
    assert "A shared module alone would not help" in fix.description


def test_per_call_widths_are_not_proposed_and_the_factory_default_stays_with_the_reasons(plan_of):
    plan = plan_of("factory_in_loop")
    reasons = [n.reason for n in plan.not_proposed if n.slug == SLUG]
    (adaptive,) = [r for r in reasons if r.startswith("make_filter(width) at banding/adaptive.py:18")]
    assert "depends on data known only per call" in adaptive and "width = 2 * int(noise * 40.0) + 11" in adaptive
    assert "keeps a module per kernel" in adaptive
    (default,) = [r for r in reasons if r.startswith("make_filter() (banding/filters.py:6) keeps module=\"unique\"")]
    assert "banding/adaptive.py" in default and "tests/test_app.py" in default
    # nothing else proposes an edit of the differentiated module or of the run-time caller
    edited = {file for fix in plan.fixes for file in fix.files}
    assert "banding/calibrate.py" not in edited and "banding/adaptive.py" not in edited


def test_apply_keeps_the_set_made_in_the_constructor_one_module_for_the_bank(tmp_path):
    """apply for real: one commit; the bank's four modules become one (identities 7 -> 4 with calibrate and the two
    adaptive widths), same launches and output; the tests, which call the factory with its default, pass."""
    repo = fixture_repo(tmp_path, "factory_in_loop")
    request = build_request(
        command=[PYTHON, "-m", "banding"], cwd=repo, branch="wf/factory", samples=2, only=[SLUG],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (entry,) = [e for e in result.ledger.entries if e.slug == SLUG]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (7, 4)
    assert git(repo, "rev-list", "--count", "main..wf/factory") == "1"
    assert git(repo, "diff", "--name-only", "main..wf/factory").split() == ["banding/bank.py", "banding/filters.py"]
    bank = git(repo, "show", "wf/factory:banding/bank.py")
    assert 'make_filter(width, module="banding.bank.FilterBank") for width in self.widths' in bank
    assert "kernel = self._filter_kernels[width]" in bank
    assert bank.index("self._filter_kernels = {") < bank.index("def apply")
    filters = git(repo, "show", "wf/factory:banding/filters.py")
    assert 'def make_filter(width: int, module: str = "unique"):' in filters
    assert "module=module)" in filters
    body = git(repo, "log", "-1", "--format=%B", "wf/factory")
    assert "Warp-Fix-Identities: 7 -> 4" in body and "Warp-Fix-Output: identical" in body


BANK = """
import numpy as np
import warp as wp


def make_filter(width, module="unique"):
    def box(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * float(width)

    return wp.kernel(box, enable_backward=False, module=module)


x = wp.array(np.ones(8, dtype=np.float32), dtype=float, device="cpu")
y = wp.empty_like(x)
WIDTHS = (3, 5, 9, 17)
if "{how}" == "made-first":
    kernels = {{w: make_filter(w, module="bank") for w in WIDTHS}}
for w in WIDTHS:
    kernel = kernels[w] if "{how}" == "made-first" else make_filter(w, module="{module}")
    wp.launch(kernel, dim=8, inputs=[x, y], device="cpu")
    print(w, float(y.numpy().sum()))
"""


def test_a_shared_module_alone_builds_once_per_value_the_set_made_first_builds_once(tmp_path):
    """Why factory_set makes the set before the first launch: passing one module name in the loop alone leaves a
    build per value (each kernel joins the module after its previous load); made first, the module builds once."""
    builds, outputs = {}, set()
    for how, module in (("unique", "unique"), ("shared-in-loop", "bank"), ("made-first", "bank")):
        directory = tmp_path / how
        directory.mkdir()
        report = measure(write_app(directory, BANK.format(how=how, module=module)), directory, samples=1)
        builds[how] = [b.module.split("_")[0] if b.module != "bank" else "bank" for b in report.trace.builds]
        assert "17 136.0" in report.output.head
        outputs.add(report.output.sha256)
    assert builds == {"unique": ["make"] * 4, "shared-in-loop": ["bank"] * 4, "made-first": ["bank"]}
    assert len(outputs) == 1
