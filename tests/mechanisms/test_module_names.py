"""A fix's description names few modules by name and many by where their kernels come from."""

from __future__ import annotations

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._common import module_names
from warp_fix.scan.index import SourceFile, SourceIndex

SPARSE = "/venv/lib/python3.11/site-packages/warp/_src/sparse.py"
LINEAR = "/venv/lib/python3.11/site-packages/warp/_src/optim/linear.py"


def _run(modules: dict[str, str]):
    return case.run(
        builds=[case.sourced(case.build(name), case.kernel_source(name, file)) for name, file in modules.items()]
    )


def test_up_to_three_modules_are_named() -> None:
    inputs = _run({"_bsr_axpy_afd50a07": SPARSE, "_diag_mv_55845888": LINEAR})
    assert module_names(["_bsr_axpy_afd50a07", "_diag_mv_55845888"], inputs) == (
        "_bsr_axpy_afd50a07, _diag_mv_55845888"
    )


def test_more_are_counted_by_the_python_module_that_defines_them() -> None:
    modules = {f"_bsr_{i}_0000000{i}": SPARSE for i in range(3)} | {"_diag_mv_55845888": LINEAR, "sim": "sim.py"}
    inputs = _run(modules)
    assert module_names(list(modules), inputs) == (
        "5 modules, from warp._src.sparse (3), warp._src.optim.linear (1) and sim (1)"
    )


def test_kernels_compiled_from_a_string_are_counted_as_wp_map_not_as_a_file() -> None:
    """Array arithmetic (`a / b`) makes `map_div`, whose kernel Warp compiles from a string (`<string>`)."""
    modules = {f"_bsr_{i}_0000000{i}": SPARSE for i in range(3)} | {"map_div": "<string>"}
    assert module_names(list(modules), _run(modules)) == "4 modules, from warp._src.sparse (3) and wp.map (1)"


def test_warp_run_from_a_folder_on_pythonpath_is_still_named() -> None:
    """No site-packages in the path (Warp unpacked beside the project): its `warp/_src` still names the module."""
    modules = {f"_bsr_{i}_0000000{i}": "/tmp/site/warp/_src/sparse.py" for i in range(4)}
    assert module_names(list(modules), _run(modules)) == "4 modules, from warp._src.sparse (4)"


def test_a_package_on_pythonpath_is_named_from_its_top_level_package() -> None:
    """`pip install --target /tmp/site newton` (a container's layout): no site-packages in the path, and the
    build's own name says where the package starts; it was "from elsewhere" before. One module each: no counts."""
    modules = {
        f"newton._src.{name}": f"/tmp/site/newton/_src/{name.replace('.', '/')}.py"
        for name in ("solvers.solver", "sim.articulation", "viewer.kernels", "solvers.xpbd.kernels")
    }
    assert module_names(list(modules), _run(modules)) == (
        "4 modules, from newton._src.solvers.solver, newton._src.sim.articulation, newton._src.viewer.kernels and "
        "newton._src.solvers.xpbd.kernels"
    )


def test_a_project_module_is_named_as_the_scan_names_its_file_not_by_its_path() -> None:
    """A `src/` layout: `src/banding/filters.py` is the Python module `banding.filters` (src is on sys.path, and
    has no `__init__.py`), not `src.banding.filters`."""
    modules = {f"make_{i}_0000000{i}": "src/banding/filters.py" for i in range(4)}
    inputs = case.run(
        builds=[case.sourced(case.build(m), case.kernel_source(m, f)) for m, f in modules.items()],
        source=SourceIndex(root=case.ROOT, files=[SourceFile("src/banding/filters.py", "banding.filters")]),
    )
    assert module_names(list(modules), inputs) == "4 modules, from banding.filters (4)"
