"""Where no preload can be inserted, serial-builds says where the first launch is and what to do by hand."""

from __future__ import annotations

from warp_fix.mechanisms.serial_builds import ENTRY_CALL, LIBRARY_LAUNCH, SerialBuilds, _cuda_modules
from warp_fix.model import Fix


def advice(inputs) -> str:
    mechanism = SerialBuilds()
    (fix,) = [p for p in mechanism.propose(mechanism.diagnose(inputs), inputs) if isinstance(p, Fix)]
    return fix.description


def test_a_launch_inside_a_package_is_named_with_the_projects_line_that_reaches_it() -> None:
    text = advice(_cuda_modules(LIBRARY_LAUNCH, ENTRY_CALL, sim=400.0, render=300.0, io=300.0))
    assert "3 modules were built one after another (1,000 ms summed; ceiling 2.5x)" in text
    assert "in library code (step.py:8 in main, reached from app/__main__.py:12 in main)" in text
    assert 'wp.force_load(device="cuda:0", modules=[...], max_workers=3)' in text
    assert "warp-fix bake" in text


def test_a_launch_in_another_file_of_the_project_is_named_as_such() -> None:
    text = advice(_cuda_modules("sim.py", sim=400.0, render=300.0, io=300.0))
    assert "the first launch is at sim.py:8 in main, not in the entry point" in text
