"""why-rebuilt names where an option's value came from, also when no traced call sits between two builds."""

from __future__ import annotations

from warp_fix.mechanisms import _situation as case
from warp_fix.probe.why import explain_rebuilds
from warp_fix.report import OptionSource, Trace


def test_an_option_with_no_call_in_between_is_traced_to_the_builds_own_source():
    first = case.build("sim", options={"enable_backward": True})
    second = case.build("sim", options={"enable_backward": False})
    first.seq, second.seq = 1, 2
    second.hash = "c" * 64
    second.option_sources = {"enable_backward": OptionSource("config", case.site("app.py", 3))}
    (rebuild,) = explain_rebuilds(Trace(builds=[first, second]))
    (reason,) = rebuild.reasons
    assert reason.detail == "option enable_backward: True -> False (set by wp.config)"
    assert (reason.site.file, reason.site.line) == ("app.py", 3)


def test_a_default_value_is_said_to_be_warps_default():
    first = case.build("sim", options={"max_unroll": 4})
    second = case.build("sim", options={"max_unroll": 16})
    first.seq, second.seq = 1, 2
    second.hash = "c" * 64
    (rebuild,) = explain_rebuilds(Trace(builds=[first, second]))
    assert rebuild.reasons[0].detail == "option max_unroll: 4 -> 16 (Warp's default)"
    assert rebuild.reasons[0].site is None
