"""Time each warp-fix codemod on a generated 5,000-line Warp file against the 1 s target.

python benchmarks/codemod_speed.py [--lines 5000] [--repeat 3] [--only NAME ...]

Columns: median and min wall time of `transform_source` on the generated file ("first run"), and the
median on the codemod's own output ("re-run": the idempotent no-op a planner hits when it applies a
plan twice). The machine's load average is printed before and after, since other processes share it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import libcst as cst

from codemods import REGISTRY, transform_source

TARGET_S = 1.0


def generate(lines: int) -> tuple[str, dict[str, dict]]:
    """A Warp module of about `lines` lines, and arguments for every codemod that apply to it."""
    out = [
        '"""Generated benchmark module."""',
        "",
        "import tempfile",
        "",
        "import warp as wp",
        "",
        "SCALE = 2.0",
        "",
    ]
    i = 0
    while len(out) < lines - 40:
        out += [
            "",
            "",
            '@wp.kernel(module="unique")' if i % 3 == 0 else "@wp.kernel",
            f"def k{i}(x: wp.array(dtype=float), y: wp.array(dtype=float)):",
            f'    """Kernel {i}."""',
            "    i = wp.tid()  # thread",
            "    a = x[i] * SCALE",
            "    if a > 1.0:",
            "        a = a - 1.0",
            "    y[i] = a + wp.sin(x[i])",
            "",
        ]
        i += 1
    out += [
        "",
        "",
        'def make_f(module="unique"):',
        "    @wp.kernel(module=module)",
        "    def f(x: wp.array(dtype=float)):",
        "        x[wp.tid()] = SCALE",
        "",
        "    return f",
        "",
        "",
        "def make_g(width):",
        "    def g(x: wp.array(dtype=float)):",
        "        x[wp.tid()] = float(width)",
        "",
        '    return wp.kernel(g, module="unique")',
        "",
        "",
        "class Bank:",
        "    def __init__(self, widths):",
        "        self.widths = widths",
        "",
        "    def run(self, x):",
        "        for w in self.widths:",
        "            wp.launch(make_g(w), dim=1, inputs=[x])",
        "",
        "",
        "def setup():",
        '    wp.set_module_options({"fast_math": True})',
        "",
        "",
        "def main():",
        "    wp.config.enable_backward = False",
        "    wp.config.kernel_cache_dir = tempfile.mkdtemp()",
        '    f = make_f(module="unique")',
        '    wp.load_module(device="cpu", max_workers=4)',
        "    wp.launch(k0, dim=1, inputs=[None, None])",
        "",
    ]
    source = "\n".join(out)
    src_lines = source.splitlines()
    config_line = src_lines.index("    wp.config.enable_backward = False") + 1
    cache_line = src_lines.index("    wp.config.kernel_cache_dir = tempfile.mkdtemp()") + 1
    launch_line = src_lines.index("    wp.launch(k0, dim=1, inputs=[None, None])") + 1
    factory_line = src_lines.index('    f = make_f(module="unique")') + 1
    loop_line = src_lines.index("            wp.launch(make_g(w), dim=1, inputs=[x])") + 1
    kernels = [f"k{j}" for j in range(i)]
    args = {
        "hoist_options": {"function": "setup"},
        "config_at_entry": {"name": "enable_backward", "value": False, "line": config_line},
        "kernels_to_module_scope": {"factory": "make_f", "kernels": ["f"], "module": "fac"},
        "drop_unique": {"names": [k for j, k in enumerate(kernels) if j % 3 == 0], "module": "shared"},
        "split_by_block_dim": {
            "groups": {k: f"g{j % 2}" for j, k in enumerate(kernels)},
            "options": {"fast_math": True},
        },
        "split_by_options": {
            "kernels": [k for j, k in enumerate(kernels) if j % 3 == 1],
            "module": "no_mathdx",
            "options": {"enable_mathdx_gemm": False},
        },
        "merge_modules": {"kernels": kernels, "module": "all"},
        "register_overloads": {"kernel": "k1", "overloads": [["wp.array(dtype=wp.float32)"] * 2]},
        "keep_cache": {"lines": [cache_line]},
        "preload": {"modules": ["g0", "g1"], "device": "cuda:0", "before_line": launch_line},
        "cpu_max_workers": {},
        "module_options": {"options": {"enable_backward": False}},
        "call_site_argument": {"line": factory_line, "callee": "make_f", "keyword": "module", "value": "fac"},
        "factory_set": {
            "class_name": "Bank", "method": "run", "line": loop_line, "callee": "make_g", "attribute": "_g_kernels",
            "module": "bank", "factory_file": "", "factory": "make_g",
        },
    }
    return source, args


def _median_time(repeat: int, fn, *args) -> tuple[float, float, object]:  # noqa: ANN001
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), result


def _load() -> str:
    return "load average (1/5/15 min): " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", default=None, help="codemod names to time (default: all)")
    options = parser.parse_args()
    source, args = generate(options.lines)
    print(f"input: {len(source.splitlines())} lines, {len(source)} bytes; target {TARGET_S:.1f} s per codemod")
    print(_load())
    parse_median, parse_min, _ = _median_time(options.repeat, cst.parse_module, source)
    print(f"reference: libcst.parse_module alone {parse_median:.3f} s median, {parse_min:.3f} s min")
    print(f"{'codemod':<26}{'median s':>10}{'min s':>9}{'x target':>10}{'re-run s':>10}  changed  idempotent")
    worst = 0.0
    for name in options.only or REGISTRY:
        if name not in args:
            print(f"{name:<26}  (no benchmark arguments)")
            continue
        median, low, out = _median_time(options.repeat, transform_source, name, source, args[name])
        rerun, _, again = _median_time(options.repeat, transform_source, name, out, args[name])
        worst = max(worst, median)
        timing = f"{median:>10.3f}{low:>9.3f}{median / TARGET_S:>10.2f}{rerun:>10.3f}"
        print(f"{name:<26}{timing}  {str(out != source):<7}  {again == out}", flush=True)
    print(_load())
    print(f"slowest median {worst:.3f} s: {'within' if worst < TARGET_S else 'OVER'} the {TARGET_S:.1f} s target")


if __name__ == "__main__":
    main()
