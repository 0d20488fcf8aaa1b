"""Version rules: which Warp releases a rule applies to."""

from __future__ import annotations

import pytest

from warp_fix.warp_releases import PRECOMPILED_HEADER_OPTION, SAFE_PARALLEL_CPU_LOADS, holds, parse_release


@pytest.mark.parametrize(
    ("version", "release"),
    [("1.19.0", (1, 19)), ("1.12.1", (1, 12)), ("1.20.0.dev3", (1, 20)), ("", None), ("unknown", None)],
)
def test_parse_release(version, release):
    assert parse_release(version) == release


@pytest.mark.parametrize(
    ("version", "safe"), [("1.16.0", False), ("1.17.0", True), ("1.19.0", True), ("1.9.1", False), ("", False)]
)
def test_parallel_cpu_loads_are_safe_from_1_17(version, safe):
    assert holds(SAFE_PARALLEL_CPU_LOADS, version) is safe


@pytest.mark.parametrize(("version", "recorded"), [("1.12.1", False), ("1.13.0", True), ("1.19.0", True)])
def test_precompiled_header_option_is_recorded_from_1_13(version, recorded):
    assert holds(PRECOMPILED_HEADER_OPTION, version) is recorded
