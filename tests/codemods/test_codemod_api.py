"""The Python API (apply_codemod / transform_source), the CLI, and how people really import Warp."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods import REGISTRY, CodemodRefused, Note, apply_codemod, run_codemod, transform_source

REPO = Path(__file__).resolve().parents[2]

SIM = '''\
"""A small simulation module."""

import warp as wp  # the GPU kernels

# time step
DT = 0.01


@wp.kernel(module="unique")
def integrate(x: wp.array(dtype=float), v: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + v[i] * DT  # explicit Euler


def configure():
    wp.set_module_options({"fast_math": False})
'''


def test_registry_has_every_fix_family() -> None:
    assert sorted(REGISTRY) == sorted(
        [
            "hoist_options",
            "config_at_entry",
            "kernels_to_module_scope",
            "drop_unique",
            "split_by_block_dim",
            "split_by_options",
            "merge_modules",
            "module_options",
            "register_overloads",
            "keep_cache",
            "preload",
            "cpu_max_workers",
            "call_site_argument",
            "factory_set",
        ]
    )


def test_apply_changes_files_once_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    sim = tmp_path / "pkg" / "sim.py"
    sim.write_text(SIM)
    args = {"file": "pkg/sim.py", "names": ["integrate"], "module": "sim"}
    assert apply_codemod("drop_unique", tmp_path, args) == [sim.resolve()]
    assert sim.read_text() == SIM.replace('module="unique"', 'module="sim"')
    assert apply_codemod("drop_unique", tmp_path, args) == []


def test_run_codemod_reports_leftovers_with_their_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    factory = (
        "import warp as wp\n\n\ndef make(module='unique'):\n"
        "    @wp.kernel(module=module)\n    def k(x: float):\n        pass\n\n    return k\n"
    )
    (tmp_path / "pkg" / "sim.py").write_text(factory)
    args = {"file": "pkg/sim.py", "factory": "make", "kernels": ["k"], "module": "sim"}
    result = run_codemod("kernels_to_module_scope", tmp_path, args)
    assert result.changed == [(tmp_path / "pkg" / "sim.py").resolve()]
    message = "make(): parameter `module` is no longer used (kept: callers may still pass it)"
    assert result.notes == [Note("unused-parameter", message, "pkg/sim.py")]
    assert run_codemod("kernels_to_module_scope", tmp_path, args).changed == []


def test_edits_leave_everything_else_byte_identical() -> None:
    out = transform_source("hoist_options", SIM, {"function": "configure"})
    assert out == SIM.replace(
        "# time step",
        'wp.set_module_options({"fast_math": False})\n\n# time step',
    ).replace(
        '    wp.set_module_options({"fast_math": False})\n',
        "    pass  # Its module options are set at module scope now, before the module's first load.\n",
    )


def test_refusal_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SIM)
    (tmp_path / "b.py").write_text("import warp as wp\n")
    args = {"kernels": [["a.py", "integrate"], ["b.py", "missing"]], "module": "m"}
    with pytest.raises(CodemodRefused, match="no kernel def named 'missing'"):
        apply_codemod("merge_modules", tmp_path, args)
    assert (tmp_path / "a.py").read_text() == SIM


def test_merge_modules_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import warp as wp\n\n\n@wp.kernel\ndef ka(x: float):\n    pass\n")
    (tmp_path / "b.py").write_text(
        "from warp import kernel\n\n\n@kernel(module='unique')\ndef kb(x: float):\n    pass\n"
    )
    args = {"kernels": [["a.py", "ka"], ["b.py", "kb"]], "module": "shared"}
    changed = apply_codemod("merge_modules", tmp_path, args)
    assert sorted(p.name for p in changed) == ["a.py", "b.py"]
    assert '@wp.kernel(module="shared")' in (tmp_path / "a.py").read_text()
    assert "@kernel(module='shared')" in (tmp_path / "b.py").read_text()  # each file keeps its own quotes
    assert apply_codemod("merge_modules", tmp_path, args) == []


def test_keep_cache_by_sites(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import warp as wp\n\nwp.config.cache_kernels = False\nwp.init()\n")
    args = {"sites": [{"file": "app.py", "line": 3}], "protected_functions": []}
    assert apply_codemod("keep_cache", tmp_path, args)
    assert (tmp_path / "app.py").read_text() == "import warp as wp\n\nwp.init()\n"
    assert apply_codemod("keep_cache", tmp_path, args) == []


def test_files_outside_the_repo_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CodemodRefused, match="outside the repository"):
        apply_codemod("drop_unique", tmp_path, {"file": "../x.py", "names": ["k"], "module": "m"})


def test_a_generated_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """libcst's own marker (`generated_code_marker` in .libcst.codemod.yaml): a generated file is never edited."""
    (tmp_path / "sim.py").write_text("# @generated by make_kernels.py: do not edit\n" + SIM)
    with pytest.raises(CodemodRefused, match="sim.py is a generated file"):
        apply_codemod("drop_unique", tmp_path, {"file": "sim.py", "names": ["integrate"], "module": "sim"})
    assert (tmp_path / "sim.py").read_text().endswith(SIM)


def test_the_callers_scope_refuses_a_file_before_any_file_is_written(tmp_path: Path) -> None:
    """warp-fix passes its plan's scope: an installed package in the repository's .venv is never edited, even by a
    place a plan names, and the edit of the project's own file in the same call is not written either."""
    (tmp_path / "a.py").write_text("import warp as wp\n\n\n@wp.kernel\ndef ka(x: float):\n    pass\n")
    lib = tmp_path / ".venv" / "lib" / "kernels.py"
    lib.parent.mkdir(parents=True)
    lib.write_text("from warp import kernel\n\n\n@kernel(module='unique')\ndef kb(x: float):\n    pass\n")
    args = {"kernels": [["a.py", "ka"], [".venv/lib/kernels.py", "kb"]], "module": "shared"}
    refuse = {".venv/lib/kernels.py": "an installed package"}.get
    with pytest.raises(CodemodRefused, match=r"\.venv/lib/kernels\.py is not edited: an installed package"):
        apply_codemod("merge_modules", tmp_path, args, refuse)
    assert "module=" not in (tmp_path / "a.py").read_text() and "'unique'" in lib.read_text()


def test_unknown_codemod_and_argument() -> None:
    with pytest.raises(CodemodRefused, match="unknown codemod"):
        transform_source("nope", "", {})
    with pytest.raises(CodemodRefused, match="unknown argument"):
        transform_source("drop_unique", "", {"names": ["k"], "module": "m", "modul": "x"})


@pytest.mark.parametrize(
    ("header", "kernel", "alias"),
    [
        ("import warp as wp", "wp.kernel", "wp"),
        ("import warp", "warp.kernel", "warp"),
        ("import warp as warp_lang", "warp_lang.kernel", "warp_lang"),
        ("import warp as wp\nfrom warp import kernel", "kernel", "wp"),
    ],
)
def test_import_styles(header: str, kernel: str, alias: str) -> None:
    source = f"{header}\n\n\n@{kernel}\ndef k(x: float):\n    pass\n"
    out = transform_source(
        "split_by_block_dim", source, {"groups": {"k": "g"}, "options": {"mode": "release"}}
    )
    assert f'@{kernel}(module="g")' in out
    assert f'{alias}.get_module("g").options.update({{"mode": "release"}})' in out
    assert out.count("import warp") == header.count("import warp")


def test_missing_warp_import_is_added_once() -> None:
    source = "from warp import kernel\n\n\n@kernel\ndef k(x: float):\n    pass\n"
    out = transform_source(
        "split_by_block_dim", source, {"groups": {"k": "g"}, "options": {"mode": "release"}}
    )
    assert out.count("import warp as wp\n") == 1
    assert (
        transform_source("split_by_block_dim", out, {"groups": {"k": "g"}, "options": {"mode": "release"}})
        == out
    )


def test_cli_runs_a_codemod(tmp_path: Path) -> None:
    target = tmp_path / "ops.py"
    target.write_text('import warp as wp\n\n\n@wp.kernel(module="unique")\ndef k(x: float):\n    pass\n')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "drop_unique.DropUnique",
            str(target),
            "--names",
            "k",
            "--module",
            "ops",
            "--no-format",
            "--hide-progress",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert '@wp.kernel(module="ops")' in target.read_text()


def test_cli_parses_int_and_json_arguments_from_the_args_fields(tmp_path: Path) -> None:
    """`--line` (an int field) and `--value` (a JSON value field): both derived from CallSiteArgumentArgs."""
    target = tmp_path / "app.py"
    target.write_text("from filters import make_filter\n\nk = make_filter(3, enable_backward=True)\n")
    flags = ["--line", "3", "--callee", "make_filter", "--keyword", "enable_backward", "--value", "false"]
    result = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "call_site_argument.CallSiteArgument", str(target), *flags,
         "--no-format", "--hide-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert target.read_text().endswith("k = make_filter(3, enable_backward=False)\n")


def test_factory_set_edits_the_class_and_the_factory_in_their_own_files(tmp_path: Path) -> None:
    """One place, two files: the class's loop and constructor, and the factory's new keyword; run twice, no change."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "filters.py").write_text(
        "import warp as wp\n\n\ndef make_filter(width: int):\n    def box(x: wp.array(dtype=float)):\n"
        "        x[wp.tid()] *= float(width)\n\n    return wp.kernel(box, module=\"unique\")\n"
    )
    (tmp_path / "app" / "bank.py").write_text(
        "import warp as wp\n\nfrom app.filters import make_filter\n\n\nclass Bank:\n    def __init__(self, widths):\n"
        "        if widths:\n            self.widths=tuple(widths)\n        self.n = 0\n\n    def run(self, x):\n"
        "        for w in self.widths:\n            wp.launch(make_filter(w), dim=1, inputs=[x])\n"
    )
    args = {
        "file": "app/bank.py", "class_name": "Bank", "method": "run", "line": 14, "callee": "make_filter",
        "attribute": "_filter_kernels", "module": "app.bank.Bank", "factory_file": "app/filters.py",
        "factory": "make_filter",
    }
    changed = apply_codemod("factory_set", tmp_path, args)
    assert sorted(p.name for p in changed) == ["bank.py", "filters.py"]
    bank = (tmp_path / "app" / "bank.py").read_text()
    assert bank.splitlines()[7:13] == [  # after the `if` that assigns the loop's values, wrapped past 88 columns
        "        if widths:",
        "            self.widths=tuple(widths)",
        "        self._filter_kernels = {",
        '            w: make_filter(w, module="app.bank.Bank") for w in self.widths',
        "        }",
        "        self.n = 0",
    ]
    assert "wp.launch(self._filter_kernels[w], dim=1, inputs=[x])" in bank
    filters = (tmp_path / "app" / "filters.py").read_text()
    assert 'def make_filter(width: int, module: str = "unique"):' in filters and "module=module)" in filters
    assert apply_codemod("factory_set", tmp_path, args) == []
