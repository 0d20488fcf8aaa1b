"""Large files are edited through a reduced module (codemods/_partial.py); the result must be the same."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

import codemods._partial as partial
import codemods.api
from codemods import REGISTRY, CodemodRefused, transform_source
from tests.codemods.test_codemod_examples import EXAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from codemod_speed import generate  # noqa: E402


def outcome(name: str, source: str, args: dict) -> str:
    """The new source, or the refusal message."""
    try:
        return transform_source(name, source, args)
    except CodemodRefused as refused:
        return f"refused: {refused}"


def both_ways(monkeypatch, name: str, source: str, args: dict) -> tuple[str, str]:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 10**9)
    whole = outcome(name, source, args)
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    return whole, outcome(name, source, args)


def reduced_runs(monkeypatch, name: str, source: str, args: dict) -> list[int]:
    """Sizes of the sources the codemod parsed: one smaller than `source` when the reduced module sufficed."""
    sizes: list[int] = []
    run = codemods.api._transform

    def spy(cls, text, *rest):  # noqa: ANN001, ANN202
        sizes.append(len(text))
        return run(cls, text, *rest)

    monkeypatch.setattr(codemods.api, "_transform", spy)
    transform_source(name, source, args)
    return sizes


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_every_example_gives_the_same_result_through_the_reduced_module(monkeypatch, name, example) -> None:
    whole, reduced = both_ways(monkeypatch, name, example.before, example.args)
    assert reduced == whole


@functools.cache
def benchmark_file() -> tuple[str, dict[str, dict]]:
    return generate(5000)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_benchmark_file_gives_the_same_result_first_and_again(monkeypatch, name) -> None:
    source, args = benchmark_file()
    whole, reduced = both_ways(monkeypatch, name, source, args[name])
    assert not whole.startswith("refused")
    assert reduced == whole
    assert outcome(name, whole, args[name]) == whole  # the re-run, through the reduced module too


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_benchmark_file_is_edited_through_the_reduced_module_alone(monkeypatch, name) -> None:
    source, args = benchmark_file()
    sizes = reduced_runs(monkeypatch, name, source, args[name])
    assert len(sizes) == 1 and sizes[0] < len(source) / 2
    again = transform_source(name, source, args[name])
    sizes = reduced_runs(monkeypatch, name, again, args[name])
    assert len(sizes) == 1 and sizes[0] < len(again) / 2


def padded(text: str, kernels: int = 20) -> str:
    """`text` followed by kernels the codemods under test are not aimed at (its lines stay put)."""
    kernel = (
        "\n\n@wp.kernel\ndef pad{i}(\n    x: wp.array(dtype=float),  # input\n    y: wp.array(dtype=float),\n):\n"
        '    """Doc."""\n    # a comment\n    y[wp.tid()] = x[wp.tid()]\n      # deeper comment after the body\n'
    )
    return text + "".join(kernel.format(i=i) for i in range(kernels))


HEAD = "import warp as wp\n\n\n"
TRICKY = {
    "a definition-time name bound after the factory": (
        "kernels_to_module_scope",
        HEAD + "def make():\n    @wp.kernel\n    def k(x: wp.array(dtype=Vec)):\n        x[0] = 1.0\n\n"
        "    return k\n\n\nVec = float\n",
        {"factory": "make", "kernels": ["k"]},
    ),
    "a load call through an imported alias": (
        "cpu_max_workers",
        "import warp as wp\nfrom warp import force_load as fl\n\n\n"
        'def run():\n    fl(device="cpu", modules=[], max_workers=4)\n',
        {},
    ),
    "a guarded import ends the import header": (
        "split_by_block_dim",
        "import warp as wp\n\ntry:\n    import scipy\nexcept ImportError:\n    scipy = None\n\n\n"
        "@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    pass\n",
        {"groups": {"k": "g"}, "options": {"fast_math": True}},
    ),
    "Warp imported inside a function body only": (
        "split_by_block_dim",
        "from warp import kernel\n\n\ndef helper():\n    import warp as w2\n\n    return w2\n\n\n"
        "@kernel\ndef k(x: float):\n    pass\n",
        {"groups": {"k": "g"}, "options": {"fast_math": True}},
    ),
    "a default overload name already bound": (
        "register_overloads",
        HEAD + "@wp.kernel\ndef k(x: wp.array(dtype=Any)):\n    pass\n\n\nk_float32 = 3\n",
        {"kernel": "k", "overloads": [["wp.array(dtype=wp.float32)"]]},
    ),
    "an import still used by code the codemod is not aimed at": (
        "keep_cache",
        "import atexit\nimport shutil\n\nimport warp as wp\n\n\ndef main():\n"
        "    atexit.register(shutil.rmtree, wp.config.kernel_cache_dir)\n\n\n"
        "def copy(a, b):\n    shutil.copy(a, b)\n",
        {"lines": [8]},
    ),
    "a named kernel's signature names the module": (
        "merge_modules",
        HEAD + "@wp.kernel\ndef k(x: wp.array(dtype=float), module: int = ops):\n    pass\n\n\n"
        "@wp.kernel\nasync def j(x: float): pass\n",
        {"kernels": ["k", "j"], "module": "ops"},
    ),
    "a module-scope launch before a named module's last kernel": (
        "module_options",
        HEAD + '@wp.kernel(module="prep")\ndef a(x: float):\n    pass\n\n\nwp.launch(a, dim=1, inputs=[1.0])\n\n\n'
        '@wp.kernel(module="prep")\ndef b(x: float):\n    pass\n',
        {"options": {"enable_backward": False}, "module": "prep"},
    ),
    "a unique kernel made by a wp.kernel call in a factory": (
        "module_options",
        HEAD + 'def make(f):\n    return wp.kernel(f, module="unique")\n',
        {"options": {"enable_backward": False}, "kernel": "f"},
    ),
    "a call site spanning lines": (
        "call_site_argument",
        HEAD + "def run(n):\n    return make_filter(\n        n,\n        enable_backward=True,\n    )\n",
        {"line": 7, "callee": "make_filter", "keyword": "enable_backward", "value": False},
    ),
    "a per-run cache directory made by a helper": (
        "keep_cache",
        "import tempfile\n\nimport warp as wp\n\n\ndef fresh():\n    return tempfile.mkdtemp()\n\n\n"
        "def main():\n    wp.config.kernel_cache_dir = fresh()\n",
        {"lines": [11]},
    ),
    "a factory default and a kernel decorator": (
        "drop_unique",
        HEAD + "def make(module='unique'):\n    @wp.kernel(module=module)\n    def k(x: float):\n        pass\n\n"
        "    return k\n\n\n@wp.kernel(module='unique')\ndef j(\n    x: float,\n):  # j\n    # body\n    pass\n",
        {"names": ["make", "j"], "module": "ops"},
    ),
}


@pytest.mark.parametrize(("name", "source", "args"), TRICKY.values(), ids=TRICKY.keys())
def test_what_the_reduced_module_leaves_out_never_changes_the_outcome(monkeypatch, name, source, args) -> None:
    whole, reduced = both_ways(monkeypatch, name, padded(source), args)
    assert reduced == whole


def test_elided_statements_and_bodies_come_back_byte_for_byte(monkeypatch) -> None:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    source = (
        "import warp as wp\n\n\ndef a():\n    return 1\n\n\nX = (\n    1,\n    2,\n)\n\n\n"
        "@wp.kernel\ndef k(\n    x: float,\n):\n    y = x  # kept aside\n\n    # comment\n    y = 2\n"
    )
    for defs in partial.DefReading:
        reduced = partial.reduce_source(source, partial.Focus(frozenset({"k"}), defs=defs))
        assert reduced is not None
        assert "def a" not in reduced.text and "X =" not in reduced.text
        assert ("y = x" in reduced.text) == (defs is partial.DefReading.WHOLE)
        assert ("x: float" in reduced.text) == (defs is not partial.DefReading.DECORATORS)
        assert reduced.text.count("\n") == source.count("\n")  # line numbers of kept statements do not move
        assert reduced.restore(reduced.text) == source


def test_a_placeholder_that_does_not_come_back_exactly_is_a_failed_restore(monkeypatch) -> None:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    reduced = partial.reduce_source("import warp\n\n\ndef a():\n    return 1\n", partial.Focus(frozenset()))
    assert reduced is not None
    assert reduced.restore(reduced.text.replace("__warp_fix_elided_0__", "__warp_fix_elided_0__ + 1")) is None
    assert reduced.restore(reduced.text + reduced.text.split("\n\n\n")[1]) is None  # duplicated
    assert reduced.restore("import warp\n") is None  # dropped


def test_a_source_that_already_holds_a_placeholder_name_is_not_reduced(monkeypatch) -> None:
    monkeypatch.setattr(partial, "PARTIAL_FROM_LINES", 0)
    source = "import warp\n\n\ndef a():\n    return __warp_fix_elided_0__\n"
    assert partial.reduce_source(source, partial.Focus(frozenset())) is None
