"""Optional code, written the ways real projects write a plugin: the scope calls each one optional, and an object's
own mode flag the project's own code (`warp_fix.scope.optional_reason` on what the scan found)."""

from __future__ import annotations

import pytest

from warp_fix.scope import optional_reason

KERNEL_BODY = "    i = wp.tid()\n    a[i] = a[i] * 2.0\n"


def kernel(name: str, indent: str) -> str:
    body = "".join(indent + line + "\n" for line in KERNEL_BODY.splitlines())
    return f"{indent}@wp.kernel\n{indent}def {name}(a: wp.array(dtype=float)):\n{body}"


SHAPES = {
    "a branch on a string kind given to a factory": (
        "def make(kind):\n    if kind == 'toon':\n" + kernel("toon", "        ") + "        return toon\n"
        "    raise ValueError(kind)\n", "toon", True),
    "if/return on a parameter": (
        "def make(mode):\n    if mode:\n" + kernel("fast", "        ") + "        return fast\n"
        + kernel("slow", "    ") + "    return slow\n", "fast", True),
    "match on a parameter": (
        "def make(kind):\n    match kind:\n        case 'blur':\n" + kernel("blur", "            ")
        + "            return blur\n", "blur", True),
    "a dict registry of factories": (
        "def make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\nEFFECTS = {'fade': make_fade}\n",
        "fade", True),
    "a registry of factories written as a function: if/return on its key": (
        "def make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def make_glow():\n" + kernel("glow", "    ") + "    return glow\n\n\n"
        "def effect(key):\n    if key == 'fade':\n        return make_fade\n    if key == 'glow':\n"
        "        return make_glow\n    raise KeyError(key)\n", "fade", True),
    "a registry of factories written as a function: match on its key": (
        "def make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def make_glow():\n" + kernel("glow", "    ") + "    return glow\n\n\n"
        "def effect(key):\n    match key:\n        case 'fade':\n            return make_fade\n"
        "        case _:\n            return make_glow\n", "glow", True),
    "a registry of factories looked up among the module's own names: getattr on the module": (
        "import sys\n\n\ndef make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def effect(key):\n    return getattr(sys.modules[__name__], f'make_{key}')()\n", "fade", True),
    "a registry of factories looked up among the module's own names: globals()": (
        "def fade_factory():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def effect(key):\n    return globals()[f'{key}_factory']()\n", "fade", True),
    "factories picked by a module constant (its own code: every run picks the same)": (
        "FAST = True\n\n\ndef make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def make_glow():\n" + kernel("glow", "    ") + "    return glow\n\n\n"
        "def effect():\n    if FAST:\n        return make_fade\n    return make_glow\n", "fade", False),
    "a dict registry of plugin classes": (
        "class Blur:\n    def kernel(self):\n" + kernel("blur", "        ") + "        return blur\n\n\n"
        "TRANSFORMS = {'blur': Blur}\n", "blur", True),
    "a branch on the kind an object was given": (
        "class Filter:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def kernel(self):\n"
        "        if self.kind == 'edge':\n" + kernel("edge", "            ") + "            return edge\n",
        "edge", True),
    "match on the kind an object was given": (
        "class Filter:\n    def kernel(self):\n        match self.kind:\n            case 'edge':\n"
        + kernel("edge", "                ") + "                return edge\n", "edge", True),
    "a branch on the kind an object was given, read once into a local": (
        "class Filter:\n    def kernel(self):\n        kind = self.kind\n        if kind == 'edge':\n"
        + kernel("edge", "            ") + "            return edge\n", "edge", True),
    "a mode flag of the object read into a local (its own code)": (
        "class Recorder:\n    def record(self):\n        sync = self.sync_mode\n        if sync:\n"
        + kernel("advance", "            ") + "            return advance\n", "advance", False),
    "a mode flag of the object (its own code)": (
        "class Recorder:\n    def record(self):\n        if self.sync_mode:\n" + kernel("advance", "            ")
        + "            return advance\n", "advance", False),
    "a factory every run calls the same way (its own code)": (
        "def make():\n" + kernel("scale", "    ") + "    return scale\n", "scale", False),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_the_scope_calls_each_plugin_shape_optional(scan, shape):
    source, name, optional = SHAPES[shape]
    index = scan({"app/__init__.py": "", "app/plugins.py": "import warp as wp\n\n\n" + source})
    (found,) = [k for k in index.kernels if k.name == name]
    assert (optional_reason(found) is not None) is optional, found.chosen_by


@pytest.mark.parametrize(
    ("lookup", "label"),
    [
        ("getattr(sys.modules[__name__], f'make_{key}')", 'getattr(sys.modules[__name__], f"make_{...}")'),
        ("globals()[f'make_{key}']", 'globals()[f"make_{...}"]'),
    ],
)
def test_a_lookup_of_the_modules_own_names_is_a_registry_of_every_name_that_fits(scan, lookup, label):
    source = (
        "import sys\n\nimport warp as wp\n\n\ndef make_fade():\n" + kernel("fade", "    ") + "    return fade\n\n\n"
        "def helper():\n" + kernel("other", "    ") + "    return other\n\n\n"
        f"def effect(key):\n    return {lookup}()\n"
    )
    index = scan({"app/__init__.py": "", "app/plugins.py": source})
    kernels = {k.name: k for k in index.kernels}
    assert optional_reason(kernels["fade"]) == f"fade is an entry of the registry {label}: optional plugin code"
    assert optional_reason(kernels["other"]) is None  # `helper` does not fit `make_*`


def test_a_local_read_once_from_an_attribute_of_self_is_that_attribute(scan):
    def chosen_by(method_body: str) -> list[str]:
        source = "import warp as wp\n\n\nclass Filter:\n    def kernel(self):\n" + method_body
        index = scan({"app/__init__.py": "", "app/plugins.py": source + kernel("edge", "            ")})
        return next(k for k in index.kernels if k.name == "edge").chosen_by

    attribute = chosen_by("        if self.kind == 'edge':\n")
    assert chosen_by("        kind = self.kind\n        if kind == 'edge':\n") == attribute == ["self", "self.kind"]
    # a local bound twice may hold something else at the test
    assert chosen_by("        kind = self.kind\n        kind = 'x'\n        if kind == 'edge':\n") == []
