"""Which files are scanned, robustness, library roots, serialisation, and a scan of real Warp code."""

from __future__ import annotations

import os
from pathlib import Path

import warp

from warp_fix.scan import SourceIndex, scan_repository

KERNEL = "import warp as wp\n\n@wp.kernel\ndef k(a: float):\n    pass\n"


def test_an_unparsable_file_becomes_a_warning_and_the_rest_is_scanned(scan):
    index = scan({"broken.py": "import warp\ndef oops(:\n", "good.py": KERNEL})
    assert [k.file for k in index.kernels] == ["good.py"]
    assert len(index.warnings) == 1 and index.warnings[0].startswith("broken.py: skipped, unparsable")


def test_files_that_never_mention_warp_are_not_parsed(scan):
    index = scan({"plain.py": "def oops(:\n", "good.py": KERNEL})
    assert index.warnings == []  # the broken file was never parsed
    assert {(f.file, f.mentions_warp) for f in index.files} == {("plain.py", False), ("good.py", True)}


def test_virtualenvs_builds_and_vcs_folders_are_skipped(scan):
    skipped = [".venv", "venv", "build", "node_modules", "__pycache__", ".git", "lib/site-packages"]
    index = scan({f"{folder}/k.py": KERNEL for folder in skipped} | {"src/k.py": KERNEL})
    assert [k.file for k in index.kernels] == ["src/k.py"]


def test_environments_are_skipped_by_what_makes_them_one_and_vendored_copies_by_name(scan):
    # `python -m venv env` and a conda environment under any name; a vendored copy of a library
    files = {"env/pyvenv.cfg": "home = /usr/bin\n", "env/lib/k.py": KERNEL, "envs/sim/conda-meta/history": "",
             "envs/sim/lib/k.py": KERNEL, "third_party/lib/k.py": KERNEL, "app/vendor/lib/k.py": KERNEL}
    index = scan(files | {"app/k.py": KERNEL, "envs/k.py": KERNEL})
    assert [k.file for k in index.kernels] == ["app/k.py", "envs/k.py"]


def test_python_module_names_follow_the_package_structure(scan):
    index = scan(
        {
            "pkg/__init__.py": "import warp\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/mod.py": KERNEL,
            "scripts/run.py": KERNEL,
        }
    )
    assert index.python_module_of("pkg/sub/mod.py") == "pkg.sub.mod"
    assert index.python_module_of("pkg/__init__.py") == "pkg"
    assert index.python_module_of("scripts/run.py") == "run"
    assert index.file_of_module("pkg.sub.mod") == "pkg/sub/mod.py"


def test_a_folder_without_init_inside_a_package_is_a_namespace_package_of_it(scan):
    """PEP 420: `pkg/_src` has no `__init__.py`, yet `from pkg._src.solver import kernels` imports it, and Warp
    names the module `pkg._src.solver.kernels`; a folder without one above every package is no package."""
    index = scan(
        {
            "pkg/__init__.py": "from ._src.solver import kernels\n",
            "pkg/_src/solver/__init__.py": "",
            "pkg/_src/solver/kernels.py": KERNEL,
            "pkg/_src/tools/mesh.py": KERNEL,
            "apps/demo/__init__.py": "",
            "apps/demo/run.py": KERNEL,
        }
    )
    assert index.python_module_of("pkg/_src/solver/kernels.py") == "pkg._src.solver.kernels"
    assert index.python_module_of("pkg/_src/tools/mesh.py") == "pkg._src.tools.mesh"
    assert index.python_module_of("apps/demo/run.py") == "demo.run"


def test_a_library_climbs_through_its_namespace_folders_to_its_outermost_package(tmp_path: Path):
    from warp_fix.scan.files import python_module_name

    site = tmp_path / "lib" / "site-packages"
    for folder in ("newton", "newton/_src/core"):
        (site / folder).mkdir(parents=True)
        (site / folder / "__init__.py").write_text("")
    (site / "newton/_src/core/x.py").write_text("")
    assert python_module_name(site / "newton/_src/core/x.py", site, bounded=False) == "newton._src.core.x"


def test_library_roots_are_context_only(tmp_path: Path, write_files):
    repo = write_files(tmp_path / "repo", {"app.py": KERNEL})
    library = write_files(tmp_path / "site" / "lib", {"__init__.py": "", "kernels.py": KERNEL})
    index = scan_repository(repo, library_roots=[library])
    mine, theirs = sorted(index.kernels, key=lambda k: not k.in_repo)
    assert (mine.file, mine.in_repo) == ("app.py", True)
    assert not theirs.in_repo and theirs.file == (library / "kernels.py").as_posix()
    assert theirs.python_module == "lib.kernels"
    assert index.kernel_named("k") is mine  # in-repo definitions win


def test_the_index_round_trips_through_json(scan):
    index = scan(
        {
            "a.py": KERNEL + "wp.set_module_options({'mode': 'debug'})\nwp.launch(k, dim=1, block_dim=64)\n",
            "b.py": "import warp as wp\n\ndef f(m='unique'):\n    @wp.kernel(module=m)\n    def g(): pass\n",
        }
    )
    again = SourceIndex.from_json(index.to_json())
    assert again == index
    assert again.kernel_named("g").module_parameter_default.value == "unique"


def test_scanning_warps_own_examples_finds_many_kernels():
    examples = Path(os.path.dirname(warp.__file__)) / "examples"
    index = scan_repository(examples)
    assert len(index.kernels) > 100
    assert len(index.launches) > 100
    assert len(index.entry_points) > 50
    assert index.warnings == []
    assert any(k.captures for k in index.kernels)  # the tile examples build kernels in factories
    assert SourceIndex.from_json(index.to_json()) == index
