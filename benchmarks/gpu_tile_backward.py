"""Backward off on forward-only tile modules: the module option against the per-kernel flag, on CUDA.

    PYTHONPATH=. python3 benchmarks/gpu_tile_backward.py      # on the GPU machine, from the source tree

Measures the gpu_tile_backward fixture three ways (as written; `@wp.kernel(enable_backward=False)` on
each tile kernel; `enable_backward=False` as the module option, written by the module_options codemod)
and prints LTO artifacts, MathDx builds per module and cold module time. The per-kernel flag is
expected to keep linking the adjoint GEMMs; the module option is not.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from codemods import apply_codemod
from warp_fix.probe import measure

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "gpu_tile_backward"
FILES = ("mlp/encoder.py", "mlp/decoder.py")


def per_kernel_flag(repo: Path) -> None:
    for name in FILES:
        path = repo / name
        path.write_text(re.sub(r"^@wp\.kernel$", "@wp.kernel(enable_backward=False)", path.read_text(), flags=re.M))


def module_option(repo: Path) -> None:
    for name in FILES:
        apply_codemod("module_options", repo, {"file": name, "options": {"enable_backward": False}})


VARIANTS = {"as written": None, "per-kernel flag": per_kernel_flag, "module option": module_option}


def main() -> None:
    parent = Path(tempfile.mkdtemp(prefix="warp-fix-tile-"))
    rows = []
    for label, edit in VARIANTS.items():
        repo = parent / label.replace(" ", "_")
        shutil.copytree(FIXTURE, repo, ignore=shutil.ignore_patterns("__pycache__"))
        if edit:
            edit(repo)
        report = measure([sys.executable, "-m", "mlp"], repo, samples=1)
        lto = {b.module: b.lto_builds for b in report.trace.builds if b.lto_builds}
        row = {
            "variant": label,
            "lto_artifacts": report.summary.lto_artifacts,
            "mathdx_builds": lto,
            "cold_module_ms": round(report.summary.cold_module_ms.median),
            "output": report.output.sha256[:12],
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| variant | LTO artifacts | MathDx builds per module | cold module ms | output |")
    print("|---|---|---|---|---|")
    for r in rows:
        cells = (r["variant"], r["lto_artifacts"], r["mathdx_builds"], r["cold_module_ms"], r["output"])
        print("| " + " | ".join(str(c) for c in cells) + " |")


if __name__ == "__main__":
    main()
