"""What unused-backward says when it keeps backward on: a module a tape recorded is differentiated; one only
launched beside a tape (an optimizer step after `tape.backward`) is kept, and not called differentiated."""

from __future__ import annotations

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms.unused_backward import UnusedBackward
from warp_fix.model import RULED_OUT

TRAIN = "train.py"


def _optimizer_beside_a_tape(recorded: list[str]):
    """train.py records a tape around `step` (module sim) and launches the optimizer's update (module
    optim.adam) after `tape.backward`; `recorded`: the modules the tape recorded in the run."""
    return case.run(
        builds=[case.build("sim"), case.build("optim.adam")],
        launches=[
            case.launch("step", "sim", site=case.site(TRAIN, 14, "train")),
            case.launch("adam_step", "optim.adam", site=case.site(TRAIN, 20, "train")),
        ],
        tapes=[case.tape(case.site(TRAIN, 12, "train"))],
        gradient_uses=[case.gradient_use(module, site=case.site(TRAIN, 14, "train")) for module in recorded],
        source=case.index(files=[TRAIN]),
    )


def test_a_module_only_launched_beside_the_tape_is_kept_and_said_so():
    finding = UnusedBackward().diagnose(_optimizer_beside_a_tape(recorded=["sim"]))
    assert finding.status == RULED_OUT
    assert finding.reason == (
        "a tape or adjoint launch of this run differentiates sim; backward kept for optim.adam, launched from "
        "train.py, which records a tape (the tape did not record it in this run; another path may)"
    )


def test_every_module_the_tape_recorded_is_called_differentiated():
    finding = UnusedBackward().diagnose(_optimizer_beside_a_tape(recorded=["sim", "optim.adam"]))
    assert finding.reason == (
        "a tape or adjoint launch of this run differentiates every module with backward on (2 modules)"
    )


def test_warp_s_own_adjoints_are_named_where_nothing_else_is_said_of_them():
    """No tape, the script's module already without adjoints, Warp's Adam with them: not "no module"."""
    inputs = case.run(
        builds=[case.build("sim", options={"enable_backward": False}), case.build("warp.optim.adam")],
        launches=[case.launch("step", "sim", site=case.site("train.py", 9)),
                  case.launch("adam_step", "warp.optim.adam", site=case.site("train.py", 12))],
        source=case.index(files=["train.py", "sim.py"]),
    )
    finding = UnusedBackward().diagnose(inputs)
    assert finding.status == RULED_OUT
    assert finding.reason == (
        "no module of the application compiles backward code; Warp's own warp.optim.adam does, left as Warp sets it"
    )
