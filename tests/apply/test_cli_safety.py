"""The command line end to end: preconditions, nondeterministic output, and Ctrl-C / SIGKILL mid-run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from codemods.specs import HoistOptionsArgs
from tests.apply.conftest import PYTHON, REPO, checkout_snapshot, git, init_repo, run_cli
from warp_fix import cli
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.errors import ApplyInterrupted
from warp_fix.model import Plan

SLOW_APP = {
    "app.py": """
        import warp as wp

        @wp.kernel
        def inc(a: wp.array(dtype=float)):
            a[wp.tid()] += 1.0

        a = wp.zeros(4, dtype=float, device="cpu")
        wp.launch(inc, dim=4, inputs=[a], device="cpu")
        print(a.numpy().sum())
    """,
}
# The text itself varies (a word, not a number: numbers that vary get a tolerance instead).
NONDETERMINISTIC_APP = {
    "app.py": "import random\nimport string\nimport warp\n"
    "print('run', ''.join(random.choices(string.ascii_letters, k=12)))\n"
}


def assert_one_line_error(proc: subprocess.CompletedProcess, code: int, text: str) -> None:
    assert proc.returncode == code, proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout
    assert text in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("warp-fix: error:")


def test_outside_a_git_repository_is_refused(tmp_path):
    (tmp_path / "app.py").write_text("print(1)\n")
    proc = run_cli("apply", "--branch", "wf/x", "--", PYTHON, "app.py", cwd=tmp_path)
    assert_one_line_error(proc, 2, "not inside a git repository")


def test_existing_branch_is_refused_with_what_to_do(tmp_path):
    repo = init_repo(tmp_path / "r", {"app.py": "print(1)\n"})
    git(repo, "branch", "wf/x")
    proc = run_cli("apply", "--branch", "wf/x", "--", PYTHON, "app.py", cwd=repo)
    assert_one_line_error(proc, 2, "branch wf/x already exists (with no commits beyond HEAD)")
    assert "git branch -D wf/x" in proc.stderr


def test_failing_baseline_exits_1_with_its_stderr(tmp_path):
    repo = init_repo(tmp_path / "r", {"app.py": "import sys\nsys.exit('the solver diverged')\n"})
    before = checkout_snapshot(repo)
    proc = run_cli("apply", "--branch", "wf/x", "--", PYTHON, "app.py", cwd=repo)
    assert_one_line_error(proc, 1, "the command failed at baseline (exit 1): the solver diverged")
    assert checkout_snapshot(repo) == before and not git(repo, "branch", "--list", "wf/x")


def test_missing_warp_is_refused(tmp_path):
    repo = init_repo(tmp_path / "r", {"app.py": "import warp\n"})
    proc = run_cli("apply", "--branch", "wf/x", "--", PYTHON, "-S", "app.py", cwd=repo)
    assert_one_line_error(proc, 2, "Warp is not importable")


def test_invalid_configuration_names_the_key(tmp_path):
    repo = init_repo(
        tmp_path / "r", {"app.py": "print(1)\n", "pyproject.toml": "[tool.warp-fix]\nsamples = 0\n"}
    )
    proc = run_cli("apply", "--branch", "wf/x", cwd=repo)
    assert_one_line_error(proc, 2, "[tool.warp-fix] samples must be an integer >= 1")


@pytest.fixture(scope="module")
def nondeterministic_repo(tmp_path_factory):
    return init_repo(tmp_path_factory.mktemp("nd") / "r", NONDETERMINISTIC_APP)


def test_nondeterministic_output_is_refused_by_default(nondeterministic_repo):
    proc = run_cli(
        "apply", "--branch", "wf/nd", "--samples", "1", "--", PYTHON, "app.py", cwd=nondeterministic_repo
    )
    assert_one_line_error(proc, 2, "--allow-nondeterministic-output")
    assert "the program's output text differs between runs (line 1: 'run " in proc.stderr
    assert not git(nondeterministic_repo, "branch", "--list", "wf/nd")


def test_nondeterministic_output_allowed_skips_the_output_check(nondeterministic_repo):
    request = build_request(
        command=[PYTHON, "app.py"],
        cwd=nondeterministic_repo,
        branch="wf/nd-ok",
        samples=1,
        allow_nondeterministic_output=True,
    )
    result = run_apply(request, planner=lambda *a: Plan(command=[]))
    assert result.ledger.status == "complete"
    assert any("output comparison skipped" in w for w in result.ledger.warnings)


def test_dry_run_prints_the_plan_and_makes_no_branch(nondeterministic_repo):
    from warp_fix.model import CONSENT, SAFE, Fix

    before = checkout_snapshot(nondeterministic_repo)
    branches = git(nondeterministic_repo, "branch", "--list")
    plan = Plan(
        command=[],
        fixes=[
            Fix(
                "F1",
                "late-module-options",
                "Hoist",
                "",
                SAFE,
                "hoist_options",
                (HoistOptionsArgs(file="app.py", function="main"),),
                ["app.py"],
            ),
            Fix("F2", "unused-backward", "No backward", "", CONSENT, "hoist_options", expected="~1 s"),
        ],
    )
    request = build_request(
        command=[PYTHON, "app.py"], cwd=nondeterministic_repo, branch=None, samples=1, dry_run=True
    )
    result = run_apply(request, planner=lambda *a: plan)
    assert [e.outcome for e in result.ledger.entries] == ["planned", "declined"]
    assert result.ledger.status == "dry-run" and result.ledger_files is None
    assert any("apply would refuse without --allow-nondeterministic-output" in w for w in result.ledger.warnings)
    assert any(w.startswith("no test command") for w in result.ledger.warnings)  # what a real run warns about
    assert checkout_snapshot(nondeterministic_repo) == before
    assert git(nondeterministic_repo, "branch", "--list") == branches


def test_dry_run_warns_about_uncommitted_changes_as_a_real_run_does(nondeterministic_repo):
    (nondeterministic_repo / "app.py").write_text((nondeterministic_repo / "app.py").read_text() + "\n# edited\n")
    request = build_request(
        command=[PYTHON, "app.py"], cwd=nondeterministic_repo, branch=None, samples=1, dry_run=True
    )
    result = run_apply(request, planner=lambda *a: Plan(command=[]))
    assert any("1 uncommitted change is not on the new branch" in w for w in result.ledger.warnings)


def start_apply(repo: Path, branch: str) -> subprocess.Popen:
    """apply as a terminal starts it: SIGINT at its default, even when this test run was started in the
    background (a shell's `cmd &` ignores SIGINT, and the ignored disposition is inherited)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [PYTHON, "-m", "warp_fix", "apply", "--branch", branch, "--samples", "1", "--", PYTHON, "app.py"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_worktrees(repo: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Until apply's worktrees exist and its baseline run has had a moment to start."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if "warp-fix-apply-" in git(repo, "worktree", "list"):
            time.sleep(1.5)
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("apply never created its worktree")


@pytest.fixture
def slow_repo(tmp_path):
    repo = init_repo(tmp_path / "r", SLOW_APP)
    (repo / "app.py").write_text((repo / "app.py").read_text() + "# local edit\n")  # a dirty tree
    return repo


def wait_for_measured_child(repo: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until a process runs inside one of apply's worktrees: the baseline measurement is under way."""
    worktrees = [line.split()[0] for line in git(repo, "worktree", "list").splitlines()[1:]]
    deadline = time.time() + timeout
    while time.time() < deadline:
        for proc_dir in Path("/proc").glob("[0-9]*"):
            with contextlib.suppress(OSError):
                if any(os.readlink(proc_dir / "cwd").startswith(w) for w in worktrees):
                    return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("apply never started measuring")


def test_ctrl_c_mid_run_leaves_the_checkout_and_removes_the_empty_branch(slow_repo):
    before = checkout_snapshot(slow_repo)
    proc = start_apply(slow_repo, "wf/int")
    wait_for_worktrees(slow_repo, proc)
    wait_for_measured_child(slow_repo, proc)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr + stdout
    assert "no fix was kept before the interrupt: no branch was left (wf/int is free again)" in stderr
    assert checkout_snapshot(slow_repo) == before
    assert "warp-fix-apply-" not in git(slow_repo, "worktree", "list")
    assert not git(slow_repo, "branch", "--list", "wf/int")  # no commit yet: the name is free again


def reap_orphans(worktrees: list[str]) -> None:
    """SIGKILL leaves the measured child running on its own: end it and remove its probe sandbox."""
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(proc_dir / "cwd")
            environ = (proc_dir / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(cwd.startswith(w) for w in worktrees):
            continue
        with contextlib.suppress(OSError):
            os.killpg(int(proc_dir.name), signal.SIGKILL)
        for item in environ:
            if item.startswith(b"WARP_CACHE_PATH="):
                shutil.rmtree(Path(item.split(b"=", 1)[1].decode()).parent, ignore_errors=True)


def test_sigkill_during_the_baseline_leaves_no_branch_and_a_rerun_prunes_and_runs(slow_repo):
    before = checkout_snapshot(slow_repo)
    proc = start_apply(slow_repo, "wf/kill")
    wait_for_worktrees(slow_repo, proc)
    stale = [line.split()[0] for line in git(slow_repo, "worktree", "list").splitlines()[1:]]
    proc.kill()
    proc.communicate(timeout=30)
    reap_orphans(stale)
    assert checkout_snapshot(slow_repo) == before
    assert not git(slow_repo, "branch", "--list", "wf/kill")  # made only once the baseline is accepted
    rerun = run_cli("apply", "--branch", "wf/kill", "--samples", "1", "--", PYTHON, "app.py", cwd=slow_repo)
    assert rerun.returncode == 0, rerun.stderr + rerun.stdout
    assert "removed a stale worktree" in rerun.stdout
    assert "warp-fix-apply-" not in git(slow_repo, "worktree", "list")
    assert not any(Path(p).exists() for p in stale)
    assert checkout_snapshot(slow_repo) == before
    # Nothing runs on SIGKILL: the probe sandbox of the killed run stays in TMPDIR, so the test removes it.
    for sandbox in Path(tempfile.gettempdir()).glob("warp-fix-*"):
        shutil.rmtree(sandbox)


def test_a_configuration_warning_is_shown_once_with_its_brackets(tmp_path, monkeypatch, capsys):
    repo = init_repo(tmp_path / "r", SLOW_APP)
    monkeypatch.setattr("warp_fix.apply.loop.default_planner", lambda report, root, command: Plan(command))
    argv = ["apply", "--branch", "wf/x", "--samples", "1", "--cwd", str(repo), "--", PYTHON, "app.py"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("no test command") == 1
    assert "no test command (--test or [tool.warp-fix] test)" in " ".join(out.split())


def test_an_interrupt_reaches_the_caller_with_the_ledger(tmp_path):
    repo = init_repo(tmp_path / "r", SLOW_APP)

    def interrupted(report, root, command):
        raise KeyboardInterrupt

    request = build_request(command=[PYTHON, "app.py"], cwd=repo, branch="wf/i", samples=1)
    with pytest.raises(ApplyInterrupted) as info:
        run_apply(request, planner=interrupted)
    assert info.value.ledger.status == "interrupted" and info.value.ledger.branch == "wf/i"
    assert info.value.ledger_files is None  # nothing kept: no ledger written
    assert not git(repo, "branch", "--list", "wf/i")
