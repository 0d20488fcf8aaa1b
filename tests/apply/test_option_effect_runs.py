"""Real runs: a process-wide option set below the import that creates its module is ignored by Warp; apply's
judge calls that NO EFFECT, with where the setting ran, instead of an inconclusive timing."""

from __future__ import annotations

from tests.conftest import write_app
from warp_fix.apply.loop import judge
from warp_fix.compare import NO_EFFECT
from warp_fix.model import OptionClaim
from warp_fix.probe import measure

BACKWARD_IN_SIM = OptionClaim(("enable_backward",), ("sim",))  # what the fix says it sets, and where

SIM = """
import warp as wp


@wp.kernel
def relax(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 0.5 + 1.0


def run():
    x = wp.zeros(16, dtype=float, device="cpu")
    wp.launch(relax, dim=16, inputs=[x], device="cpu")
    print("x0", x.numpy()[0])
"""

BASELINE = """
import sim

sim.run()
"""

TOO_LATE = """
import sim
import warp as wp

wp.config.enable_backward = False
sim.run()
"""

IN_TIME = """
import warp as wp

wp.config.enable_backward = False
import sim  # noqa: E402

sim.run()
"""


def run_of(tmp_path, name, app):
    directory = tmp_path / name
    directory.mkdir()
    write_app(directory, SIM, "sim.py")
    return measure(write_app(directory, app), directory, samples=1)


def test_a_setting_below_the_import_that_created_the_module_has_no_effect_and_says_where(tmp_path):
    before, after = run_of(tmp_path, "before", BASELINE), run_of(tmp_path, "after", TOO_LATE)
    comparison = judge(before, after, {"enable_backward"}, None, [], BACKWARD_IN_SIM)
    assert comparison.verdict == NO_EFFECT
    (reason,) = comparison.reasons
    assert reason.startswith("no effect: wp.config.enable_backward was set at app.py:5, after module sim")
    assert "sim on cpu built with the same enable_backward and hash" in reason


def test_a_setting_above_that_import_is_proven_by_the_modules_new_hash(tmp_path):
    before, after = run_of(tmp_path, "before", BASELINE), run_of(tmp_path, "after", IN_TIME)
    comparison = judge(before, after, {"enable_backward"}, None, [], BACKWARD_IN_SIM)
    assert comparison.verdict != NO_EFFECT
    assert "structure shrank" in " ".join(comparison.reasons)
    # per kernel, not a share of the run: it moves however large the rest of the run's source is
    assert comparison.structure["adjoint_kernels"] == (1, 0)
