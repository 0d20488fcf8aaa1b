"""Property test over generated Warp modules: every codemod keeps the file compiling, keeps the set of
`def` names (kernel names never change) and is idempotent."""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codemods import transform_source

IMPORTS = {"wp": "import warp as wp", "warp": "import warp", "warp_lang": "import warp as warp_lang"}


@st.composite
def warp_programs(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict]]]:
    """A Python source with N kernels (some made by factories), options calls and loads, plus the
    codemod invocations that apply to it."""
    alias = draw(st.sampled_from(sorted(IMPORTS)))
    w = alias
    lines = ['"""Generated."""', "", "import numpy as np", IMPORTS[alias], "", "SCALE = 2.0", ""]
    top = [f"k{i}" for i in range(draw(st.integers(1, 4)))]
    uniques = []
    for name in top:
        style = draw(st.sampled_from(["bare", "unique", "backward"]))
        decorator = {
            "bare": f"@{w}.kernel",
            "unique": f'@{w}.kernel(module="unique")',
            "backward": f"@{w}.kernel(enable_backward=False)",
        }[style]
        if style == "unique":
            uniques.append(name)
        if draw(st.booleans()):
            lines += ["", f"# kernel {name}"]
        else:
            lines += [""]
        lines += [
            "",
            decorator,
            f"def {name}(x: {w}.array(dtype=float)):",
            "    i = " + f"{w}.tid()",
            "    x[i] = x[i] * SCALE  # scale",
            "",
        ]
    factories = [f"make_f{j}" for j in range(draw(st.integers(0, 2)))]
    for j, factory in enumerate(factories):
        lines += [
            "",
            "",
            f'def {factory}(module="unique"):',
            f"    @{w}.kernel(module=module)",
            f"    def f{j}(x: {w}.array(dtype=float)):",
            f'        """Kernel {j}."""',
            f"        x[{w}.tid()] = SCALE",
            "",
            f"    return f{j}",
        ]
    bank = draw(st.booleans())
    if bank:
        lines += [
            "",
            "",
            "def make_g(width):",
            f"    def g(x: {w}.array(dtype=float)):",
            f"        x[{w}.tid()] = float(width)",
            "",
            f'    return {w}.kernel(g, module="unique")',
            "",
            "",
            "class Bank:",
            "    def __init__(self, widths):",
            "        self.widths = widths",
            "",
            "    def run(self, x):",
            "        for w in self.widths:",
            f"            {w}.launch(make_g(w), dim=1, inputs=[x])",
        ]
    has_setup = draw(st.booleans())
    if has_setup:
        options = draw(st.sampled_from(['{"fast_math": True}', "{'max_unroll': 4, 'mode': 'release'}"]))
        lines += ["", "", "def setup():", f"    {w}.set_module_options({options})"]
        if draw(st.booleans()):
            lines += ["    print('ready')"]
    clear = draw(st.booleans())
    lines += ["", "", "def main():"]
    if clear:
        lines += [f"    {w}.clear_kernel_cache()"]
    lines += [f'    {w}.load_module(device="cpu", max_workers=4)', "    return np.zeros(3)", ""]
    source = "\n".join(lines)

    ops: list[tuple[str, dict]] = [("cpu_max_workers", {})]
    if uniques:
        ops.append(("drop_unique", {"names": uniques, "module": "shared"}))
    ops.append(("merge_modules", {"kernels": top, "module": "merged"}))
    groups = {k: draw(st.sampled_from(["g64", "g256"])) for k in top}
    ops.append(
        (
            "split_by_block_dim",
            {"groups": groups, "options": draw(st.sampled_from([{}, {"fast_math": True}]))},
        )
    )
    ops.append(("register_overloads", {"kernel": top[0], "overloads": [["wp.array(dtype=wp.float32)"]]}))
    for j, factory in enumerate(factories):
        ops.append(("kernels_to_module_scope", {"factory": factory, "kernels": [f"f{j}"], "module": "fac"}))
        ops.append(("drop_unique", {"names": [factory], "module": "fac"}))
    if bank:
        line = source.splitlines().index(f"            {w}.launch(make_g(w), dim=1, inputs=[x])") + 1
        ops.append(("factory_set", {"class_name": "Bank", "method": "run", "line": line, "callee": "make_g",
                                    "attribute": "_g_kernels", "module": "bank", "factory_file": "",
                                    "factory": "make_g"}))
    if has_setup:
        ops.append(("hoist_options", {"function": "setup"}))
    if clear:
        line = source.splitlines().index(f"    {w}.clear_kernel_cache()") + 1
        ops.append(("keep_cache", {"lines": [line], "protected_functions": ["rebuild"]}))
    return source, ops


def def_names(source: str) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(warp_programs())
def test_each_codemod_compiles_keeps_names_and_is_idempotent(
    program: tuple[str, list[tuple[str, dict]]],
) -> None:
    source, ops = program
    compile(source, "<generated>", "exec")
    names = def_names(source)
    for name, args in ops:
        out = transform_source(name, source, args)
        compile(out, f"<{name}>", "exec")
        assert def_names(out) == names, name
        assert transform_source(name, out, args) == out, f"{name} is not idempotent"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(warp_programs())
def test_a_whole_plan_applies_in_sequence(program: tuple[str, list[tuple[str, dict]]]) -> None:
    source, ops = program
    names = def_names(source)
    # keep_cache and factory_set name lines of the original file: apply them first (keep_cache's lines come after
    # the class factory_set edits), as a planner would order them
    ops = sorted(ops, key=lambda op: {"keep_cache": 0, "factory_set": 1}.get(op[0], 2))
    for name, args in ops:
        if name == "merge_modules":
            continue  # conflicts with split_by_block_dim by design (both assign the kernels' module)
        source = transform_source(name, source, args)
    compile(source, "<plan>", "exec")
    assert def_names(source) == names
