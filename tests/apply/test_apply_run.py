"""One real apply run on a four-stage Warp pipeline, shared by the tests below.

F1 is kept (structure shrinks), F2 breaks the project's tests, F3 changes a kernel's effective
options (INVALID), F4 changes nothing measurable (INCONCLUSIVE); F5-F6 are declined without a run, F7 (a protected file)
refused by the codemod runner's scope.
"""

from __future__ import annotations

import json
import shlex

import pytest

from codemods.specs import HoistOptionsArgs
from tests.apply.conftest import PIPELINE, PYTHON, checkout_snapshot, git, init_repo
from warp_fix.apply import branch_log, build_request, run_apply
from warp_fix.apply.ledger import DECLINED, DROPPED, KEPT
from warp_fix.apply.steps import ApplyStep
from warp_fix.compare import INCONCLUSIVE, INVALID, REGRESSED
from warp_fix.metrics import COLD_MODULE, SOURCE_BYTES
from warp_fix.model import ADVISORY, CONSENT, SAFE, Fix, Plan

BRANCH = "wf/startup"


def hoist(fix_id: str, file: str, function: str, title: str, **extra) -> Fix:
    return Fix(
        id=fix_id,
        slug=extra.pop("slug", "late-module-options"),
        title=title,
        description=f"The options set in {function}() decide the module's first build only if they are "
        "in place before it; at module scope they are.",
        safety=extra.pop("safety", SAFE),
        codemod="hoist_options",
        places=(HoistOptionsArgs(file=file, function=function),),
        files=[file],
        allow_options=["enable_backward"],
        **extra,
    )


PLAN = Plan(
    command=[],
    fixes=[
        hoist(
            "F1",
            "pipeline/forward.py",
            "forward_only",
            "Set the forward stage's options before its first build",
        ),
        hoist("F2", "pipeline/settings.py", "configure", "Set the settings module's options at import"),
        hoist("F3", "pipeline/fast.py", "go_fast", "Set the fast stage's options before its first build"),
        hoist("F4", "pipeline/early.py", "prepare", "Set the early stage's options at import"),
        hoist(
            "F5",
            "pipeline/early.py",
            "prepare",
            "Turn off backward process-wide",
            slug="unused-backward",
            safety=CONSENT,
            expected="~40 ms of adjoint codegen",
        ),
        Fix("F6", "unroll-budget", "Lower max_unroll", "", ADVISORY, None, expected="~5% of native compile"),
        hoist("F7", "pipeline/vendor.py", "setup", "Set the vendored module's options at import"),
    ],
)


@pytest.fixture(scope="module")
def applied(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("user") / "pipeline", PIPELINE)
    (repo / "scratch.txt").write_text("uncommitted work\n")  # must survive untouched
    before = checkout_snapshot(repo)
    messages: list[str] = []
    request = build_request(
        command=[PYTHON, "-m", "pipeline"],
        cwd=repo,
        branch=BRANCH,
        samples=3,  # a structural win that one timing sample contradicts gets more samples
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider --tb=native tests",  # absolute paths
    )
    steps: list[ApplyStep] = []
    result = run_apply(request, planner=lambda report, root, command: PLAN, progress=messages.append,
                       steps=steps.append)
    # the progress bar follows every line printed from the baseline on (the warnings come before it)
    assert [step.text for step in steps] == [m for m in messages if not m.startswith("warning: ")]
    return repo, before, result, messages, steps


def entry(result, fix_id):
    return next(e for e in result.ledger.entries if e.fix_id == fix_id)


def test_users_checkout_is_byte_identical_and_worktrees_are_gone(applied):
    repo, before, *_ = applied
    assert checkout_snapshot(repo) == before
    assert len(git(repo, "worktree", "list", "--porcelain").split("\n\n")) == 1


def test_kept_fix_is_one_commit_with_trailers_and_fewer_source_bytes(applied):
    repo, _, result, *_ = applied
    kept = entry(result, "F1")
    assert kept.outcome == KEPT, kept.reason
    assert git(repo, "rev-list", "--count", f"main..{BRANCH}") == "1"
    assert 1 <= kept.numbers.per_arm <= 3  # within the --samples budget
    message = git(repo, "log", "-1", "--format=%B", BRANCH)
    assert message.startswith("Set the forward stage's options before its first build\n")
    for trailer in (
        "Mechanism: late-module-options",
        "Cold-Module-Ms: ",
        "Compile-Elapsed-Ms: ",
        "Identities: ",
        # one sample settles structure; a timing that contradicts it on a noisy machine takes more
        f"Samples: {kept.numbers.per_arm} per arm",
    ):
        assert "Warp-Fix-" + trailer in message
    assert "launches preserved: yes" in message and "program output preserved: yes" in message
    assert "passed (exit 0" in message
    before, after = kept.numbers.structure["generated_source_bytes"]
    assert after < before
    assert kept.numbers.output_same is True and kept.numbers.workload_same is True
    assert git(repo, "log", "-1", "--format=%an <%ae>", BRANCH) == "Ada Tester <ada@example.com>"
    assert git(repo, "diff", "--name-only", f"main..{BRANCH}") == "pipeline/forward.py"


def test_fix_breaking_the_tests_is_dropped(applied):
    repo, _, result, *_ = applied
    dropped = entry(result, "F2")
    assert dropped.outcome == DROPPED and dropped.reason.startswith("tests failed (exit 1)")
    assert dropped.numbers is None and not dropped.tests.passed
    # the traceback names the user's files, not apply's private worktree
    assert f'File "{repo}/tests/test_settings.py"' in dropped.tests.tail and "warp-fix-" not in dropped.tests.tail


def test_fix_changing_effective_options_is_invalid(applied):
    dropped = entry(applied[2], "F3")
    assert dropped.outcome == DROPPED and dropped.numbers.verdict == INVALID
    assert "effective option fast_math of kernel shift: False -> True" in dropped.reason


def test_fix_without_measurable_gain_is_dropped_with_its_numbers(applied):
    dropped = entry(applied[2], "F4")
    # nothing changes, so timing decides: INCONCLUSIVE, or REGRESSED when a loaded machine's noise leaves the band
    assert dropped.outcome == DROPPED and dropped.numbers.verdict in (INCONCLUSIVE, REGRESSED)
    assert dropped.numbers.structure["identities"][0] == dropped.numbers.structure["identities"][1]
    # a timing claim: fresh interleaved pairs until the rule decides (2 only for a difference of 2+ bands)
    timing = dropped.numbers.timing_of(COLD_MODULE)
    assert dropped.numbers.per_arm in (2, 3)
    assert len(timing.before.values) == len(timing.after.values) == dropped.numbers.per_arm


def test_consent_advisory_and_protected_are_declined_with_estimates(applied):
    result = applied[2]
    assert entry(result, "F5").outcome == DECLINED and "--allow unused-backward" in entry(result, "F5").reason
    assert entry(result, "F6").reason.startswith("advisory")
    # a protected path is the plan's scope (a real plan never proposes F7); a plan that does is refused by the
    # codemod runner, which obeys the same scope, before any file is written or any run is made
    refused = entry(result, "F7")
    assert refused.outcome == DROPPED and refused.numbers is None
    assert "pipeline/vendor.py is not edited: protected by [tool.warp-fix] protected" in refused.reason
    markdown = result.ledger_files[1].read_text()
    assert "untested estimate: ~40 ms of adjoint codegen" in markdown


def test_ledger_is_saved_under_the_git_dir_with_total(applied):
    repo, _, result, *_ = applied
    json_path, md_path = result.ledger_files
    assert json_path == repo / ".git" / "warp-fix" / "wf" / "startup.json" and md_path.exists()
    data = json.loads(json_path.read_text())
    assert data["status"] == "complete" and data["total"]["structure"]["generated_source_bytes"]
    # baseline, then one candidate sample per decisive fix (the accepted state's measurement is reused;
    # F1 takes more only if its timing contradicted its structure), and three fresh pairs for F4 whose
    # verdict rests on timing: INCONCLUSIVE, or REGRESSED when a loaded machine's noise leaves the band
    calls = data["probe_calls_by_verdict"]
    assert (calls["baseline"], calls["INVALID"]) == (1, 1) and calls["IMPROVED"] >= 1
    assert calls.get("INCONCLUSIVE", 0) + calls.get("REGRESSED", 0) in (4, 6)  # 2 or 3 pairs: the sequential rule


def test_warnings_mention_uncommitted_changes(applied):
    assert any("uncommitted change" in m for m in applied[3])


def test_log_reads_the_branch_back(applied):
    repo = applied[0]
    log = branch_log(repo, BRANCH)
    assert log.base == git(repo, "rev-parse", "main") and len(log.ours) == 1 and not log.foreign
    assert log.ours[0].files == ["pipeline/forward.py"]
    assert SOURCE_BYTES in log.totals()


def test_rerun_with_the_same_branch_says_what_to_do(applied):
    from warp_fix.apply import ApplyError

    repo = applied[0]
    request = build_request(command=[PYTHON, "-m", "pipeline"], cwd=repo, branch=BRANCH)
    with pytest.raises(ApplyError, match=r"branch wf/startup already exists \(with 1 commit.*git branch -D"):
        run_apply(request, planner=lambda *a: PLAN)


def test_the_progress_bar_counts_fixes_and_probe_runs_as_apply_goes(applied):
    """What `warp-fix apply` shows under its lines: the fix in hand of those planned, the runs taken so far."""
    _, _, result, _, steps = applied
    assert steps[0].text.startswith("baseline:") and steps[0].position() == "0 probe runs · at most 3 per arm"
    runs = [step.runs for step in steps]
    assert runs == sorted(runs) and runs[-1] == result.ledger.probe_calls
    tried = [step for step in steps if step.fixes_planned]
    assert [step.fixes_done for step in tried] == sorted(step.fixes_done for step in tried)
    assert all(step.fixes_done <= step.fixes_planned for step in tried)
    assert tried[-1].fixes_planned == len(result.ledger.entries)  # declined fixes are counted, said or not


def test_the_progress_lines_speak_of_runs_and_code_not_of_apply_s_internals(applied):
    """What scrolls by while apply works: "run 2 with the fix", not "accepted state" or "cold+warm sample"."""
    from tests.render.test_terminal_screenshot import JARGON

    _, _, _, messages, _ = applied
    assert any(m.startswith("baseline: running ") for m in messages)
    assert [m for m in messages if any(word in m for word in JARGON)] == []
