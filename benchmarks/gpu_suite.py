"""Every GPU fixture through measure, plan and apply, on a CUDA machine; prints one table.

    bash benchmarks/gpu_suite.sh            # on the GPU machine, from the source tree

Each fixture is copied into a fresh git repository (apply needs one). Consent
mechanisms that the GPU issue asks to exercise are allowed explicitly, except
MathDx on `gpu_mathdx`: apply measures it both ways (build and steady-state
kernel time) and offers it, which is what the table shows; on `gpu_mathdx_split`
it is allowed, to show which kernel's move is kept. `WARP_FIX_SUITE_OUT=DIR` also writes
the reports, plans, ledgers and rows there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = {  # name: (package, run apply, measure kernel time)
    "gpu_block_dims": ("raster", True, False),
    "gpu_overloads": ("blend", True, False),
    "gpu_tile_backward": ("mlp", True, False),
    "gpu_serial": ("stages", True, False),
    "gpu_dominant": ("solver", True, False),
    "gpu_mathdx": ("spectra", True, True),
    "gpu_mathdx_split": ("gemms", True, True),
    "gpu_lto_clear": ("tiles", True, False),
    "gpu_occupancy_query": ("occupancy", True, False),
}
ALLOW = ["serial-builds", "unused-backward", "late-module-options"]
# The tile fixture's cold build takes about a minute a run: apply tries only the mechanism the GPU issue
# asks about, so that one device call (10 minutes) holds its measure, plan and apply.
ONLY = {"gpu_tile_backward": ["unused-backward"], "gpu_lto_clear": ["cache-discarded"]}
# The MathDx split is the consent fix this fixture exists for: allowed, so the table shows what is kept (the f32
# move) and what is only offered (MathDx off for the f16 GEMM). A move is a mixed structure change (one more
# module, one LTO build fewer): timing decides, on three samples per arm; its apply took 6.5 minutes on the H200.
FIXTURE_ALLOW = {"gpu_mathdx_split": ["mathdx-lto"]}


def warp_fix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warp_fix", *args], cwd=cwd, text=True, capture_output=True)


def repository(name: str, parent: Path) -> Path:
    repo = parent / name
    shutil.copytree(ROOT / "fixtures" / name, repo, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=suite", "-c", "user.email=suite@localhost"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(git + args, cwd=repo, check=True)
    return repo


def run_fixture(name: str, package: str, apply: bool, kernel_time: bool, parent: Path) -> dict:
    repo = repository(name, parent)
    command = ["--", sys.executable, "-m", package]
    started = time.perf_counter()
    timing = ["--kernel-time"] if kernel_time else []
    measured = warp_fix(
        "measure", "--samples", "1", *timing, "--json", str(parent / f"{name}.json"), *command, cwd=repo
    )
    print(measured.stdout[-6000:], measured.stderr[-2000:], sep="\n", flush=True)
    planned = warp_fix("plan", "--from-report", str(parent / f"{name}.json"), "--json",
                       str(parent / f"{name}.plan.json"), cwd=repo)
    print(planned.stdout[-6000:], planned.stderr[-2000:], sep="\n", flush=True)
    row = {"fixture": name, "seconds": 0.0}
    report = json.loads((parent / f"{name}.json").read_text()) if measured.returncode == 0 else None
    if report:
        s = report["summary"]
        row.update(base_cold=s["cold_module_ms"]["median"], base_elapsed=s["compile_elapsed_ms"]["median"],
                   base_ids=s["identities"], base_lto=s["lto_artifacts"], n=len(s["cold_module_ms"]["values"]))
    fired = []
    if (parent / f"{name}.plan.json").exists():
        plan = json.loads((parent / f"{name}.plan.json").read_text())
        fired = [f["slug"] for f in plan["findings"] if f["status"] == "fired"]
    row["fired"] = fired
    if apply and report:
        allow = [a for a in ALLOW if a in fired] + FIXTURE_ALLOW.get(name, [])
        only = ["--only", *ONLY[name]] if name in ONLY else []
        allowed = ["--allow", *allow] if allow else []
        applied = warp_fix("apply", "--branch", "wf/gpu", "--samples", "3", *allowed, *only, *command, cwd=repo)
        print(applied.stdout[-8000:], applied.stderr[-2000:], sep="\n", flush=True)
        ledger_file = repo / ".git" / "warp-fix" / "wf" / "gpu.json"
        if ledger_file.exists():
            ledger = json.loads(ledger_file.read_text())
            row["kept"] = [e["slug"] for e in ledger["entries"] if e["outcome"] == "kept"]
            row["offered"] = [f"{e['slug']}: {e['reason']}" for e in ledger["entries"] if e["outcome"] == "offered"]
            keep(ledger_file, f"{name}.ledger.json")
            total = ledger.get("total") or {}
            row["final"] = total
    row["seconds"] = round(time.perf_counter() - started, 1)
    for suffix in (".json", ".plan.json"):
        keep(parent / f"{name}{suffix}", f"{name}{suffix}")
    return row


def keep(path: Path, name: str) -> None:
    """Copy a result file to $WARP_FIX_SUITE_OUT, when set."""
    out = os.environ.get("WARP_FIX_SUITE_OUT")
    if out and path.exists():
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(out) / name)


def main() -> None:
    parent = Path(tempfile.mkdtemp(prefix="warp-fix-gpu-suite-"))
    only = sys.argv[1:] or list(FIXTURES)
    rows = [run_fixture(name, *FIXTURES[name], parent) for name in only]
    print("\n| fixture | base cold module ms (n) | base compile elapsed ms | identities | LTO | fired | kept | "
          "offered | final (vs baseline) | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        final = r.get("final") or {}
        print(f"| {r['fixture']} | {r.get('base_cold', '?')} ({r.get('n', '?')}) | {r.get('base_elapsed', '?')} | "
              f"{r.get('base_ids', '?')} | {r.get('base_lto', '?')} | {', '.join(r['fired'])} | "
              f"{', '.join(r.get('kept', [])) or '-'} | {'; '.join(r.get('offered', [])) or '-'} | "
              f"{json.dumps(final)[:300]} | {r['seconds']} |")
    (parent / "rows.json").write_text(json.dumps(rows, indent=1))
    keep(parent / "rows.json", "rows.json")
    print(f"\nrows: {parent / 'rows.json'}")


if __name__ == "__main__":
    main()
