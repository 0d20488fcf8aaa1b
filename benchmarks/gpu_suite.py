"""Every GPU fixture through measure, plan and apply, on a CUDA machine; prints one table.

    bash benchmarks/gpu_suite.sh            # on the GPU machine, from the source tree

Each fixture is copied into a fresh git repository (apply needs one). Consent
mechanisms that the GPU issue asks to exercise are allowed explicitly; MathDx is
measured and planned only (its builds take minutes).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = {
    "gpu_block_dims": ("raster", True),
    "gpu_overloads": ("blend", True),
    "gpu_tile_backward": ("mlp", True),
    "gpu_serial": ("stages", True),
    "gpu_dominant": ("solver", True),
    "gpu_mathdx": ("spectra", False),
}
ALLOW = ["serial-builds", "unused-backward", "late-module-options"]


def warp_fix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warp_fix", *args], cwd=cwd, text=True, capture_output=True)


def repository(name: str, parent: Path) -> Path:
    repo = parent / name
    shutil.copytree(ROOT / "fixtures" / name, repo, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=suite", "-c", "user.email=suite@localhost"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(git + args, cwd=repo, check=True)
    return repo


def run_fixture(name: str, package: str, apply: bool, parent: Path) -> dict:
    repo = repository(name, parent)
    command = ["--", sys.executable, "-m", package]
    started = time.perf_counter()
    measured = warp_fix("measure", "--samples", "1", "--json", str(parent / f"{name}.json"), *command, cwd=repo)
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
        allow = [a for a in ALLOW if a in fired]
        applied = warp_fix("apply", "--branch", "wf/gpu", "--samples", "3", *(["--allow", *allow] if allow else []),
                           *command, cwd=repo)
        print(applied.stdout[-8000:], applied.stderr[-2000:], sep="\n", flush=True)
        ledger_file = repo / ".git" / "warp-fix" / "wf" / "gpu.json"
        if ledger_file.exists():
            ledger = json.loads(ledger_file.read_text())
            row["kept"] = [e["slug"] for e in ledger["entries"] if e["outcome"] == "kept"]
            total = ledger.get("total") or {}
            row["final"] = total
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main() -> None:
    parent = Path(tempfile.mkdtemp(prefix="warp-fix-gpu-suite-"))
    only = sys.argv[1:] or list(FIXTURES)
    rows = [run_fixture(name, *FIXTURES[name], parent) for name in only]
    print("\n| fixture | base cold module ms (n) | base compile elapsed ms | identities | LTO | fired | kept | "
          "final (vs baseline) | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        final = r.get("final") or {}
        print(f"| {r['fixture']} | {r.get('base_cold', '?')} ({r.get('n', '?')}) | {r.get('base_elapsed', '?')} | "
              f"{r.get('base_ids', '?')} | {r.get('base_lto', '?')} | {', '.join(r['fired'])} | "
              f"{', '.join(r.get('kept', [])) or '-'} | {json.dumps(final)[:300]} | {r['seconds']} |")
    (parent / "rows.json").write_text(json.dumps(rows, indent=1))
    print(f"\nrows: {parent / 'rows.json'}")


if __name__ == "__main__":
    main()
