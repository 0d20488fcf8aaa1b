"""kernels_to_module_scope on kernel defs nested in the factory's if/try/with/match blocks (lazy singletons)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codemods import CodemodRefused, apply_codemod, transform_source

REPO = Path(__file__).resolve().parents[2]
NAME = "kernels_to_module_scope"
ARGS = {"factory": "make", "kernels": ["k"]}

HEAD = "import warp as wp\n\n\n"
KERNEL = "@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
MOVED = HEAD + KERNEL + "\n\n"


def indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(True))


MOVES = {
    "if": (
        "def make():\n    if True:\n" + indent(KERNEL, 8) + "        print('made')\n    return k\n",
        "def make():\n    if True:\n        print('made')\n    return k\n",
    ),
    "emptied if body gets pass": (
        "def make(f):\n    if f:\n" + indent(KERNEL, 8) + "    else:\n        print(1)\n    return k\n",
        "def make(f):\n    if f:\n        pass\n    else:\n        print(1)\n    return k\n",
    ),
    "elif": (
        "def make(f):\n    if f:\n        pass\n    elif f > 1:\n" + indent(KERNEL, 8) + "    return k\n",
        "def make(f):\n    if f:\n        pass\n    elif f > 1:\n        pass\n    return k\n",
    ),
    "else": (
        "def make(f):\n    if f:\n        return None\n    else:\n        x = 1\n"
        + indent(KERNEL, 8)
        + "    return k\n",
        "def make(f):\n    if f:\n        return None\n    else:\n        x = 1\n    return k\n",
    ),
    "with": (
        "def make():\n    with open('f') as f:\n" + indent(KERNEL, 8) + "        f.read()\n    return k\n",
        "def make():\n    with open('f') as f:\n        f.read()\n    return k\n",
    ),
    "try body": (
        "def make():\n    try:\n" + indent(KERNEL, 8) + "    except ImportError:\n        raise\n    return k\n",
        "def make():\n    try:\n        pass\n    except ImportError:\n        raise\n    return k\n",
    ),
    "except handler and finally": (
        "def make():\n    try:\n        pass\n    except ValueError:\n"
        + indent(KERNEL, 8)
        + "    finally:\n        print(2)\n    return k\n",
        "def make():\n    try:\n        pass\n    except ValueError:\n        pass\n    finally:\n        print(2)\n"
        "    return k\n",
    ),
    "try else": (
        "def make():\n    try:\n        pass\n    except ValueError:\n        pass\n    else:\n"
        + indent(KERNEL, 8)
        + "    return k\n",
        "def make():\n    try:\n        pass\n    except ValueError:\n        pass\n    else:\n        pass\n"
        "    return k\n",
    ),
    "nested if in with": (
        "def make(f):\n    with open(f):\n        if f:\n\n"
        + indent(KERNEL, 12)
        + "\n            y = k\n    return y\n",
        "def make(f):\n    with open(f):\n        if f:\n            y = k\n    return y\n",
    ),
    "match case": (
        "def make(x):\n    match x:\n        case 1:\n" + indent(KERNEL, 12) + "    return k\n",
        "def make(x):\n    match x:\n        case 1:\n            pass\n    return k\n",
    ),
    "global declaration of the kernel's name": (
        "def make():\n    global k\n    if True:\n" + indent(KERNEL, 8) + "    return k\n",
        "def make():\n    global k\n    if True:\n        pass\n    return k\n",
    ),
}


@pytest.mark.parametrize(("before", "after"), MOVES.values(), ids=MOVES.keys())
def test_nested_kernel_moves_to_module_scope(before: str, after: str) -> None:
    out = transform_source(NAME, HEAD + before, ARGS)
    assert out == MOVED + after
    compile(out, "<after>", "exec")
    assert transform_source(NAME, out, ARGS) == out  # idempotent


def test_nested_kernel_with_module_parameter_gets_the_named_module() -> None:
    before = HEAD + (
        "_cache = {}\n\n\ndef make(module='unique'):\n    if module not in _cache:\n\n"
        "        @wp.kernel(module=module)\n        def k(x: wp.array(dtype=float)):\n            x[0] = 1.0\n\n"
        "        _cache[module] = k\n    return _cache[module]\n"
    )
    with pytest.raises(CodemodRefused, match="give `module`"):
        transform_source(NAME, before, ARGS)
    out = transform_source(NAME, before, {**ARGS, "module": "sim"})
    assert out == HEAD + (
        "_cache = {}\n\n\n"
        "@wp.kernel(module='sim')\ndef k(x: wp.array(dtype=float)):\n    x[0] = 1.0\n\n\n"  # the file's quotes
        "def make(module='unique'):\n    if module not in _cache:\n        _cache[module] = k\n"
        "    return _cache[module]\n"
    )


REFUSED = {
    "for loop": ("def make():\n    for i in range(3):\n" + indent(KERNEL, 8) + "    return k\n", "inside a `for` loop"),
    "while loop": (
        "def make():\n    while True:\n" + indent(KERNEL, 8) + "        break\n    return k\n",
        "`while` loop",
    ),
    "if inside a loop": (
        "def make():\n    for i in range(3):\n        if i:\n" + indent(KERNEL, 12) + "    return k\n",
        "inside a `for` loop",
    ),
    "loop else": (
        "def make():\n    while False:\n        pass\n    else:\n" + indent(KERNEL, 8) + "    return k\n",
        "`while` loop",
    ),
    "captures a factory local": (
        "def make(s):\n    if s:\n        @wp.kernel\n        def k(x: wp.array(dtype=float)):\n            x[0] = s\n"
        "    return k\n",
        "captures 's'",
    ),
    "defined in both branches": (
        "def make(f):\n    if f:\n" + indent(KERNEL, 8) + "    else:\n" + indent(KERNEL, 8) + "    return k\n",
        "defines 'k' 2 times",
    ),
    "factory assigns the name in a handler": (
        "def make():\n    try:\n" + indent(KERNEL, 8) + "    except Exception:\n        k = None\n    return k\n",
        "make() also assigns 'k'",
    ),
    "factory rebinds the name": (
        "def make():\n    if True:\n" + indent(KERNEL, 8) + "    k = wrap(k)\n    return k\n",
        "make() also assigns 'k'",
    ),
    "module-level assignment": (
        "k = None\n\n\ndef make():\n    if k is None:\n" + indent(KERNEL, 8) + "    return k\n",
        "module scope already binds 'k'",
    ),
    "module-level import": (
        "from lib import k\n\n\ndef make():\n    if True:\n" + indent(KERNEL, 8) + "    return k\n",
        "module scope already binds 'k'",
    ),
    "module-level def": (
        "def k():\n    pass\n\n\ndef make():\n    if True:\n" + indent(KERNEL, 8) + "    return k\n",
        "module scope already defines 'k'",
    ),
    "another function's global": (
        "def other():\n    global k\n    k = 3\n\n\ndef make():\n    if True:\n" + indent(KERNEL, 8) + "    return k\n",
        "module scope already binds 'k'",
    ),
    "nonlocal in a nested function": (
        "def make():\n    if True:\n" + indent(KERNEL, 8) + "\n    def g():\n        nonlocal k\n\n    return k\n",
        "declares 'k' nonlocal",
    ),
    "only in a nested def": (
        "def make():\n    def helper():\n" + indent(KERNEL, 8) + "        return k\n\n    return helper()\n",
        "no kernel def 'k' in make()",
    ),
}


@pytest.mark.parametrize(("before", "reason"), REFUSED.values(), ids=REFUSED.keys())
def test_nested_kernel_refusals(before: str, reason: str) -> None:
    with pytest.raises(CodemodRefused) as info:
        transform_source(NAME, HEAD + before, ARGS)
    assert reason in str(info.value)


def test_comments_move_with_the_kernel_and_blank_lines_do_not_stay() -> None:
    before = HEAD + (
        "def make():\n    with open('f') as f:  # header\n\n        # the kernel\n"
        + indent(KERNEL, 8)
        + "\n        f.read()\n    return k\n"
    )
    out = transform_source(NAME, before, ARGS)
    assert out == HEAD + "# the kernel\n" + KERNEL + (
        "\n\ndef make():\n    with open('f') as f:  # header\n        f.read()\n    return k\n"
    )


def test_enclosing_function_binding_the_name_is_refused() -> None:
    before = HEAD + (
        "def outer():\n    k = 1\n\n    def make():\n        if True:\n"
        + indent(KERNEL, 12)
        + "        return k\n\n    return make\n"
    )
    with pytest.raises(CodemodRefused, match="an enclosing function also assigns 'k'"):
        transform_source(NAME, before, ARGS)


@pytest.mark.parametrize(
    ("fixture", "file", "factory", "kernel"),
    [
        ("kernel_after_load", "particles/sim.py", "drag_kernel", "apply_drag"),
        ("composite", "terrain/erosion.py", "thermal_kernel", "thermal_step"),
    ],
)
def test_fixture_lazy_singletons(tmp_path: Path, fixture: str, file: str, factory: str, kernel: str) -> None:
    root = tmp_path / fixture
    shutil.copytree(REPO / "fixtures" / fixture, root)
    path = root / file
    original = path.read_text()
    args = {"file": file, "factory": factory, "kernels": [kernel]}
    assert apply_codemod(NAME, root, args) == [path.resolve()]
    text = path.read_text()
    compile(text, file, "exec")
    lines = text.splitlines()
    assert any(ln.startswith(f"def {kernel}(") for ln in lines)  # at module scope
    assert f"    def {kernel}(" not in text
    body = text[text.index(f"def {factory}():") :]
    assert f"        _{'drag_kernel' if kernel == 'apply_drag' else 'thermal'} = {kernel}\n" in body
    # everything but the moved def is unchanged
    removed = [ln for ln in original.splitlines() if ln not in lines]
    assert removed and all(ln.startswith("        ") or not ln.strip() for ln in removed)
    assert apply_codemod(NAME, root, args) == []  # idempotent


def test_a_name_defined_after_the_factory_is_refused_whatever_its_letters() -> None:
    before = HEAD + (
        "def make():\n    if True:\n        @wp.kernel\n        def k(x: wp.array(dtype=vecé)):\n"
        "            x[0] = 1.0\n    return k\n\n\nvecé = float\n"
    )
    with pytest.raises(CodemodRefused, match="needs 'vecé' at definition time"):
        transform_source(NAME, before, ARGS)


def test_a_longer_name_containing_the_kernel_name_binds_nothing() -> None:
    before = HEAD + "kk = None\n\n\ndef make():\n    if True:\n" + indent(KERNEL, 8) + "    return k\n"
    out = transform_source(NAME, before, ARGS)
    assert out == HEAD + "kk = None\n\n\n" + KERNEL + "\n\ndef make():\n    if True:\n        pass\n    return k\n"


TWO_FACTORIES = HEAD + (
    "def make_a():\n    @wp.kernel\n    def a(x: wp.array(dtype=float)):\n        x[0] = 1.0\n\n    return a\n\n\n"
    "def make_b():\n    @wp.kernel\n    def b(x: wp.array(dtype=float)):\n        x[0] = 2.0\n\n    return b\n"
)


def test_each_place_is_edited_in_one_change(tmp_path: Path) -> None:
    """A fix joined from two factories of one module runs the codemod once per factory and writes once."""
    (tmp_path / "sim.py").write_text(TWO_FACTORIES)
    places = [{"file": "sim.py", "factory": f"make_{k}", "kernels": [k]} for k in "ab"]
    assert apply_codemod(NAME, tmp_path, {"each": places}) == [(tmp_path / "sim.py").resolve()]
    text = (tmp_path / "sim.py").read_text()
    assert "\ndef a(" in text and "\ndef b(" in text and "    def " not in text
    assert apply_codemod(NAME, tmp_path, {"each": places}) == []  # idempotent


def test_a_refused_place_leaves_every_file_unchanged(tmp_path: Path) -> None:
    (tmp_path / "sim.py").write_text(TWO_FACTORIES)
    places = [{"file": "sim.py", "factory": "make_a", "kernels": ["a"]}, {"file": "sim.py", "factory": "make_z",
                                                                         "kernels": ["z"]}]
    with pytest.raises(CodemodRefused):
        apply_codemod(NAME, tmp_path, {"each": places})
    assert (tmp_path / "sim.py").read_text() == TWO_FACTORIES
