"""How much of `warp-fix apply` is measurement, and how much is apply itself.

Runs apply once on a small two-stage Warp app in a temporary git repository, with a hand-made
plan of two `hoist_options` fixes (one structural win, one that changes nothing), and prints:
total time, probe runs per verdict, time inside measure(), time in the project's tests, and the
overhead of apply beyond them (git worktrees, codemods, commits, judging, ledger). Target: the
overhead is < 10% of the total.

    python benchmarks/apply_overhead.py [--samples N]
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods.specs import HoistOptionsArgs
from warp_fix.apply import build_request, run_apply  # noqa: E402
from warp_fix.model import SAFE, Fix, Plan  # noqa: E402

STAGE = '''
    """{doc}"""

    import warp as wp


    @wp.kernel
    def {kernel}(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0 + 1.0


    def configure():
        wp.get_module(__name__).options.update({{"enable_backward": False}})


    def run(a):
        {before}
        wp.launch({kernel}, dim=a.shape[0], inputs=[a], device="cpu")
        {after}
'''
FILES = {
    "app/__init__.py": "",
    "app/late.py": STAGE.format(
        doc="Options after the first launch.", kernel="late_k", before="pass", after="configure()"
    ),
    "app/early.py": STAGE.format(
        doc="Options before the first launch.\n\n    Padding keeps line numbers two-digit.\n    ",
        kernel="early_k",
        before="configure()",
        after="pass",
    ),
    "app/__main__.py": """
        import warp as wp

        from app import early, late

        a = wp.ones(64, dtype=float, device="cpu")
        late.run(a)
        early.run(a)
        print("sum", float(a.numpy().sum()))
    """,
    "tests/test_app.py": """
        import warp as wp

        from app import early, late


        def test_runs():
            a = wp.ones(4, dtype=float, device="cpu")
            late.run(a)
            early.run(a)
            assert a.numpy().sum() > 4
    """,
}
PLAN = Plan(
    command=[],
    fixes=[
        Fix(
            "F1",
            "late-module-options",
            "Set the late stage's options before its first build",
            "",
            SAFE,
            "hoist_options",
            (HoistOptionsArgs(file="app/late.py", function="configure"),),
            ["app/late.py"],
            allow_options=["enable_backward"],
        ),
        Fix(
            "F2",
            "late-module-options",
            "Set the early stage's options at import",
            "",
            SAFE,
            "hoist_options",
            (HoistOptionsArgs(file="app/early.py", function="configure"),),
            ["app/early.py"],
            allow_options=["enable_backward"],
        ),
    ],
)


def make_repo(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "app"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3, help="per-arm sample budget (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warp-fix-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        request = build_request(
            command=[sys.executable, "-m", "app"],
            cwd=repo,
            branch="wf/bench",
            samples=args.samples,
            test=f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests",
        )
        start = time.perf_counter()
        ledger = run_apply(
            request, planner=lambda *a: PLAN, progress=lambda line: print(line, flush=True)
        ).ledger
        total = time.perf_counter() - start
    overhead = total - ledger.probe_seconds - ledger.test_seconds
    print()
    print(f"total apply time            {total:8.1f} s")
    print(f"inside measure()            {ledger.probe_seconds:8.1f} s  ({ledger.probe_calls} probe runs)")
    print(f"project tests               {ledger.test_seconds:8.1f} s")
    print(
        f"apply overhead (the rest)   {overhead:8.1f} s  = {100 * overhead / total:.1f}% of total (< 10%?)"
    )
    print(
        f"overhead incl. tests        {total - ledger.probe_seconds:8.1f} s  = "
        f"{100 * (total - ledger.probe_seconds) / total:.1f}% of total"
    )
    print(
        "probe runs per verdict      "
        + ", ".join(f"{k}: {v}" for k, v in ledger.probe_calls_by_verdict.items())
    )
    for entry in ledger.entries:
        numbers = f" ({entry.numbers.summary()})" if entry.numbers else ""
        print(f"  {entry.fix_id} {entry.outcome}: {entry.reason[:100]}{numbers}")


if __name__ == "__main__":
    main()
