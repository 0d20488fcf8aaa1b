"""Builds attributed to the source that defined their kernels, options with provenance, per-run caches.

Each fixture app is measured for real (one cold + warm sample); the assertions name files and lines of
the fixtures, so an attribution that went through module names instead of code objects fails here.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import FIXTURES, PYTHON
from warp_fix.probe import measure


def build_of(report, module: str):
    (build,) = [b for b in report.trace.builds if b.module == module]
    return build


def source_lines(build) -> list[tuple[str, str, int]]:
    return [(k.key, k.file, k.line) for k in build.kernel_sources]


def where(site) -> tuple[str, int]:
    return (site.file, site.line)


@pytest.fixture(scope="module")
def script_main():
    return measure([PYTHON, "app.py"], FIXTURES / "script_main", samples=1)


def test_named_module_spans_two_files_and_is_never_a_file_module(measured):
    report = measured("named_modules")
    solver = build_of(report, "solver.prepare")
    assert solver.module_kind == "named"
    assert solver.source_files == ["clothsim/constraints.py", "clothsim/prepare.py"]
    assert source_lines(solver) == [
        ("predict", "clothsim/prepare.py", 6),
        ("project_lengths", "clothsim/constraints.py", 6),
        ("update_velocity", "clothsim/constraints.py", 26),
    ]
    encode = build_of(report, "render.encode")
    assert (encode.module_kind, encode.source_files) == ("named", ["clothsim/encode.py"])


def test_config_set_before_import_is_the_source_of_the_modules_option(measured):
    report = measured("named_modules")
    for module in ("solver.prepare", "render.encode"):
        build = build_of(report, module)
        source = build.option_source("enable_backward")
        assert source.kind == "config" and where(source.site) == ("clothsim/__main__.py", 3)
        assert build.options["enable_backward"] is False and build.adjoint_kernels == 0


def test_factory_named_unique_kernels_are_traced_to_their_def_and_the_call_that_made_them(measured):
    report = measured("factory_qualname")
    boxes = sorted(
        (b for b in report.trace.builds if b.module.startswith("box_size_")), key=lambda b: b.module
    )
    assert [re.sub(r"_[0-9a-f]{8}$", "_<hash>", b.module) for b in boxes] == [
        "box_size_3_kernel_<hash>",
        "box_size_7_kernel_<hash>",
    ]
    for build, call_line in zip(boxes, (9, 10)):
        (kernel,) = build.kernel_sources
        assert (kernel.file, kernel.line, kernel.function) == ("filterbank/boxes.py", 10, kernel.qualname)
        assert kernel.module_kind == "unique" and build.module_kind == "unique"
        assert where(kernel.created) == ("filterbank/boxes.py", 21)
        assert kernel.created.stack[0] == f"filterbank/pipeline.py:{call_line}:<module>"
        source = build.option_source("max_unroll")
        assert source.kind == "module_options" and where(source.site) == ("filterbank/boxes.py", 21)
        assert build.options["max_unroll"] == int(kernel.key.split("_")[2])
        assert build.adjoint_kernels == 1


def test_project_decorator_adds_a_per_kernel_option_seen_where_it_is_applied(measured):
    report = measured("factory_qualname")
    (scale,) = build_of(report, "filterbank.ops").kernel_sources
    assert (scale.file, scale.line, scale.module_kind) == ("filterbank/ops.py", 8, "file")
    assert scale.options == {"enable_backward": False} and not scale.enable_backward and not scale.adjoint
    assert where(scale.created) == ("filterbank/decorators.py", 9)
    assert scale.created.stack[0] == "filterbank/ops.py:8:<module>"
    (rectify,) = [b for b in report.trace.builds if b.module.startswith("rectify_")]
    assert rectify.module_kind == "unique" and rectify.adjoint_kernels == 0


def test_unique_kernel_defs_carry_the_final_module_name(measured):
    report = measured("factory_qualname")
    built = {b.module for b in report.trace.builds}
    unique_defs = [d for d in report.trace.kernel_defs if d.unique]
    assert len(unique_defs) == 3 and all(d.module in built and d.module_kind == "unique" for d in unique_defs)


def test_per_kernel_backward_off_means_no_adjoint_although_the_module_option_is_on(measured):
    report = measured("per_kernel_backward")
    assert {b.module for b in report.trace.builds} >= {"imgops.color", "imgops.edges"}
    for build in report.trace.builds:
        assert build.options["enable_backward"] is True
        assert build.option_source("enable_backward").kind == "default"
        assert build.adjoint_kernels == 0
        assert all(k.options == {"enable_backward": False} and not k.enable_backward for k in build.kernel_sources)


def test_factory_parameter_value_is_traced_to_the_call_site_that_passed_it(measured):
    report = measured("factory_call_site")
    build = build_of(report, "smoothing.factory")
    (kernel,) = build.kernel_sources
    assert kernel.options == {"enable_backward": True} and kernel.adjoint and build.adjoint_kernels == 1
    assert (kernel.file, kernel.line, kernel.qualname) == ("smoothing/factory.py", 10, "make_filter.<locals>.smooth")
    assert where(kernel.created) == ("smoothing/factory.py", 10)
    assert kernel.created.stack[0] == "smoothing/filters.py:5:<module>"


def test_script_kernels_live_in_main_and_are_attributed_to_the_script(script_main):
    build = build_of(script_main, "__main__")
    assert (build.module_kind, build.source_files) == ("file", ["app.py"])
    assert source_lines(build) == [("wave_displace", "app.py", 25), ("wave_solve", "app.py", 49)]
    source = build.option_source("enable_backward")
    assert source.kind == "set_module_options" and where(source.site) == ("app.py", 8)
    assert build.adjoint_kernels == 0


def test_options_call_inside_an_installed_package_is_attributed_to_the_package(script_main):
    by_target = {c.target: c for c in script_main.trace.option_changes}
    render = by_target["warp.render.render_opengl"]
    assert render.from_library and render.caller.file.endswith("render_opengl.py")
    assert where(render.site) == ("app.py", 6)  # the user's import that ran it
    own = by_target["__main__"]
    assert not own.from_library and where(own.caller) == where(own.site) == ("app.py", 8)


def test_helper_made_temporary_cache_is_established_as_per_run(measured):
    report = measured("helper_cache_dir")
    evidence = report.cache_dir_evidence
    assert evidence.per_run and evidence.cold != evidence.warm
    assert not evidence.cold_exists_after and not evidence.warm_exists_after
    assert evidence.cold.startswith("<private>/tmp/heatgrid-")
    assert report.summary.warm_builds == 1


def test_default_cache_is_not_per_run(measured):
    evidence = measured("per_kernel_backward").cache_dir_evidence
    assert evidence.cold == evidence.warm and evidence.cold_exists_after and not evidence.per_run


LIBRARY = '''\
import warp as wp


@wp.kernel
def scale(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 2.0


def kinematics(a):
    wp.launch(scale, dim=a.shape[0], inputs=[a])


def position(a):
    kinematics(a)


def forward(a):
    position(a)


def step(a):
    forward(a)
'''
APP = '''\
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import warp as wp
import physics

a = wp.ones(4, dtype=float, device="cpu")
physics.step(a)
print(a.numpy().sum())
'''


def test_a_launch_deep_inside_a_library_still_names_the_projects_line_that_reached_it(tmp_path):
    """Four library frames deep, past the frames a site keeps: the project's call is added to the site."""
    (tmp_path / "lib" / "physics").mkdir(parents=True)
    (tmp_path / "lib" / "physics" / "__init__.py").write_text(LIBRARY)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "app.py").write_text(APP)
    report = measure([PYTHON, "app.py"], tmp_path / "app", samples=1)
    (launch,) = report.trace.launches
    assert (launch.site.function, launch.site.file.endswith("physics/__init__.py")) == ("kinematics", True)
    assert [c.function for c in launch.site.callers()] == ["position", "forward", "step", "<module>"]
    assert where(launch.site.callers()[-1]) == ("app.py", 10)


def test_a_frame_without_a_file_is_never_the_projects(tmp_path, monkeypatch):
    """`python -m` runs through `<frozen runpy>`: relative to the project's directory it would resolve inside it."""
    from warp_fix.probe.inject._warp_fix_tracer.recorder import SiteFinder

    monkeypatch.chdir(tmp_path)
    sites = SiteFinder(str(tmp_path / "warp"))
    assert not sites.is_project("<frozen runpy>") and not sites.is_project("<string>")
    assert sites.is_project(str(tmp_path / "app.py"))
