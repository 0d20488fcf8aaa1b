"""Where no preload can be inserted, serial-builds says where the first launch is and what to do by hand."""

from __future__ import annotations

from warp_fix.mechanisms import _situation as case
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


def test_modules_made_while_the_program_runs_are_not_preloaded() -> None:
    """warp.fem makes a module per integrand when the program integrates: at the start of main() none exists yet."""
    text = advice(_cuda_modules(made_in="solve", sim=400.0, render=300.0, io=300.0))
    assert "ceiling 2.5x); all of them are made while the program runs (by warp.fem, a library or a factory)" in text
    assert "after the start of main, so no preload there can name them before they exist" in text


def test_a_preload_names_only_the_modules_that_exist_and_says_which_it_left_out() -> None:
    inputs = _cuda_modules(sim=400.0, render=300.0, io=300.0)
    (io,) = [b for b in inputs.report.trace.builds if b.module == "io"]
    io.kernel_sources[0].created = case.site("app/io.py", 5, "solve")
    mechanism = SerialBuilds()
    (fix,) = mechanism.propose(mechanism.diagnose(inputs), inputs)
    assert fix.places[0].modules == ["render", "sim"] and fix.places[0].block_dims == {"sim": 256, "render": 256}
    text = fix.description
    assert "2 modules were built one after another (700 ms summed; slowest sim 400 ms). Ceiling: 1.75x" in text
    assert text.endswith("Left out: io, made while the program runs: no preload can name them before they exist.")
