"""granular-modules groups by what the run loads inside one call of the entry's method (fixture lifecycle_helpers):
`Simulator.step()` runs `_force()`, `_advance()` and `_close()`, and each launches kernels of its own small module.
The forcing, the channel-end kernel (one of two module-scope alternatives `wall_kernel(ends)` picks when the
simulator is built) and the totals are one lifecycle, whichever helper launches them; the fluxes module, whose
fast_math follows the mode, keeps its own: four modules become two."""

from __future__ import annotations

import shlex

from tests.apply.conftest import fixture_repo, git
from tests.conftest import PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT

MERGED = [
    ["shallow/forcing.py", "apply_forcing"],
    ["shallow/walls.py", "open_at_ends"],
    ["shallow/walls.py", "reflect_at_walls"],
    ["shallow/diagnostics.py", "totals"],
]


def granular(plan):
    finding = next(f for f in plan.findings if f.slug == "granular-modules")
    fixes = [f for f in plan.fixes if f.slug == "granular-modules"]
    return finding, fixes, [n.reason for n in plan.not_proposed if n.slug == "granular-modules"]


def test_modules_first_built_inside_one_step_merge_whatever_helper_launches_them(plan_of):
    finding, (fix,), kept_apart = granular(plan_of("lifecycle_helpers"))
    assert finding.status == "fired"
    assert finding.facts.modules == ["shallow.diagnostics", "shallow.forcing", "shallow.walls"]
    assert finding.facts.first_built_in == "one call of step (shallow/simulator.py)"
    assert "first built inside one call of step (shallow/simulator.py)" in finding.reason
    assert finding.extra_builds == 2
    assert (fix.codemod, fix.args_json()) == ("merge_modules", {"kernels": MERGED, "module": "shallow.kernels"})
    (closed,) = finding.facts.alternatives
    assert (closed.module, closed.picked_by, closed.file, closed.line) == (
        "shallow.walls", "wall_kernel", "shallow/walls.py", 24,
    )
    assert "wall_kernel() (shallow/walls.py:24) picks from by configuration: they join whole" in fix.description
    assert kept_apart == [
        "shallow.fluxes keeps its own module: its file sets its own module options (fast_math) at shallow/fluxes.py:8"
    ]


def test_apply_builds_the_step_in_two_modules(tmp_path):
    """apply for real: one commit, identities 4 -> 2, the output and the tests (both channel ends) unchanged;
    fluxes.py (fast_math by mode) and the simulator untouched."""
    repo = fixture_repo(tmp_path, "lifecycle_helpers")
    request = build_request(
        command=[PYTHON, "-m", "shallow"], cwd=repo, branch="wf/layout", samples=3, only=["granular-modules"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = [e for e in run_apply(request).ledger.entries if e.slug == "granular-modules"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (4, 2)
    assert entry.numbers.output_same and entry.numbers.workload_same
    assert git(repo, "rev-list", "--count", "main..wf/layout") == "1"
    changed = git(repo, "diff", "--name-only", "main..wf/layout").split()
    assert changed == ["shallow/diagnostics.py", "shallow/forcing.py", "shallow/walls.py"]
    walls = git(repo, "show", "wf/layout:shallow/walls.py")
    assert walls.count('@wp.kernel(module="shallow.kernels")') == 2
    assert walls.split("def wall_kernel")[1] == git(repo, "show", "main:shallow/walls.py").split("def wall_kernel")[1]
