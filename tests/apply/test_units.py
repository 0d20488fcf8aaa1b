"""Unit tests without Warp runs: the sampling rule, commit messages, configuration, the gate, `log`."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from codemods.specs import HoistOptionsArgs
from tests.apply.conftest import git, init_repo
from warp_fix.apply import budget
from warp_fix.apply.commit import _check_line, commit_files, commit_message, identity_env, trailers
from warp_fix.apply.gate import Gate
from warp_fix.apply.git import Git
from warp_fix.apply.ledger import KEPT, EditNote, Entry, GoneBuild, Numbers, TestSummary, ToCheck
from warp_fix.apply.review import branch_log
from warp_fix.compare import (
    IMPROVED,
    INCONCLUSIVE,
    INVALID,
    REGRESSED,
    Comparison,
    TimingDelta,
)
from warp_fix.config import ConfigError, load_config, parse_config
from warp_fix.metrics import COLD_CPU, COLD_MODULE, COMPILE_ELAPSED, IDENTITIES, KERNEL, WARM_MODULE
from warp_fix.model import ADVISORY, CONSENT, SAFE, Fix
from warp_fix.report import Stat


def comparison(verdict=INCONCLUSIVE, structure=None, delta=0.0, band=10.0, n=1, reasons=()) -> Comparison:
    before = Stat(1000.0, 4.0, [1000.0] * n)
    after = Stat(1000.0 + delta, 4.0, [1000.0 + delta] * n)
    timing = [
        TimingDelta("cold module work", before, after, delta, band),
        TimingDelta("compile elapsed", before, after, delta, band),
    ]
    return Comparison(
        verdict,
        list(reasons),
        True,
        [],
        True,
        [],
        structure or {"identities": (4, 4), "generated_source_bytes": (900, 900)},
        timing,
        "compile elapsed",
    )


# -- the sampling rule ------------------------------------------------------------------------------


def test_structural_change_decides_after_one_sample_per_arm():
    step = budget.next_step(comparison(IMPROVED, {"identities": (4, 3)}), per_arm=1, budget=5)
    assert not step.more and step.why.startswith("decisive: structure changed")


def test_invalid_decides_after_one_sample_per_arm():
    assert not budget.next_step(comparison(INVALID), per_arm=1, budget=5).more


def test_timing_claim_takes_three_samples_then_stops_when_clear():
    assert budget.next_step(comparison(delta=-25.0), per_arm=1, budget=5).more
    assert budget.next_step(comparison(delta=-15.0), per_arm=2, budget=5).more  # 1.5x the band: not yet
    assert not budget.next_step(comparison(delta=-25.0, n=3), per_arm=3, budget=5).more
    assert not budget.next_step(comparison(delta=2.0, n=3), per_arm=3, budget=5).more  # 0.2x the band
    assert budget.next_step(comparison(delta=-12.0, n=3), per_arm=3, budget=5).more  # near the band
    assert not budget.next_step(comparison(delta=-12.0, n=5), per_arm=5, budget=5).more  # budget spent


def test_a_large_effect_is_decided_at_two_per_arm_and_kept():
    large = comparison(IMPROVED, delta=-20.0, n=2)  # 2x the band
    assert budget.next_step(large, per_arm=1, budget=5).more  # one pair shows no spread
    step = budget.next_step(large, per_arm=2, budget=5)
    assert not step.more and "at least 2x the noise band at 2 per arm" in step.why
    assert budget.effective_verdict(large, per_arm=2)[0] == IMPROVED


def test_a_fix_expected_to_move_less_than_half_the_band_stops_at_two_per_arm():
    hopeless = comparison(delta=-6.0, n=2)
    step = budget.next_step(hopeless, per_arm=2, budget=5, expected_ms=3.0)
    assert not step.more and "expected effect (~3 ms) is under half the noise band" in step.why
    assert budget.next_step(comparison(delta=-12.0, n=2), per_arm=2, budget=5, expected_ms=3.0).more  # beyond
    assert budget.next_step(hopeless, per_arm=2, budget=5, expected_ms=40.0).more  # a promise worth the runs


def test_the_time_budget_per_fix_stops_sampling():
    step = budget.next_step(comparison(delta=-12.0, n=3), per_arm=3, budget=9, seconds_left=-1.0)
    assert not step.more and "time budget per fix spent at 3 per arm" in step.why
    assert budget.next_step(comparison(delta=-12.0, n=3), per_arm=3, budget=9, seconds_left=60.0).more


def test_budget_caps_the_samples():
    step = budget.next_step(comparison(delta=-50.0), per_arm=1, budget=1)
    assert not step.more and "budget spent" in step.why


def test_timing_verdict_from_too_few_samples_is_inconclusive():
    assert budget.effective_verdict(comparison(IMPROVED, delta=-50.0), per_arm=1)[0] == INCONCLUSIVE
    assert budget.effective_verdict(comparison(REGRESSED, delta=15.0), per_arm=2)[0] == INCONCLUSIVE
    assert budget.effective_verdict(comparison(IMPROVED, delta=-50.0, n=3), per_arm=3)[0] == IMPROVED
    structural = comparison(IMPROVED, {"identities": (4, 3)})
    assert budget.effective_verdict(structural, per_arm=1)[0] == IMPROVED


def test_kernel_time_claim_takes_three_samples_even_when_structure_decides():
    decided = comparison(IMPROVED, {"identities": (4, 3)})
    assert budget.next_step(decided, per_arm=1, budget=5, kernel_claim=True).more
    assert not budget.next_step(decided, per_arm=3, budget=5, kernel_claim=True).more
    assert not budget.next_step(decided, per_arm=2, budget=2, kernel_claim=True).more  # the budget still caps
    assert not budget.next_step(comparison(INVALID), per_arm=1, budget=5, kernel_claim=True).more


# -- commit messages ----------------------------------------------------------------------------

FIX = Fix(
    "F1",
    "late-module-options",
    "Define stage kernels at module scope in one named module",
    "Kernels defined inside functions rebuild the module at every call; at module scope they are built once.",
    SAFE,
    "hoist_options",
    (HoistOptionsArgs(file="a.py", function="f"),),
    ["a.py"],
)


def numbers(verdict=IMPROVED) -> Numbers:
    c = comparison(
        verdict,
        {
            "identities": (4, 3),
            "generated_source_bytes": (900, 500),
            "warm_builds": (0, 0),
            "lto_artifacts": (0, 0),
        },
        delta=-400.0,
        n=1,
        reasons=["structure shrank"],
    )
    return Numbers.of(c, per_arm=1, launch_count=12, stop="decisive")


def test_the_counts_lead_the_headline_when_the_timing_was_not_measured_side_by_side():
    """A fix kept on its counts against reused runs: the count decided, the timing makes no claim, so it follows."""
    decided = replace(numbers(), decided_by=[COMPILE_ELAPSED.field, IDENTITIES.field])
    assert decided.headline().startswith("compile elapsed 1000 -> 600 ms (")
    reused = replace(decided, side_by_side=False)
    assert reused.headline() == (
        "module identities built 4 -> 3, compile elapsed 1000 -> 600 ms (not measured side by side)"
    )


def test_timings_against_reused_runs_say_how_many_runs_each_state_had():
    """A fix kept on its counts is run once; the previous state's timings are the baseline's earlier runs, often
    more than one. The heading says both numbers, not one "per arm" that only one arm has."""
    reused = Numbers.of(comparison(IMPROVED, {"identities": (4, 3)}, delta=-400.0, n=1), 1, 12, "decisive")
    earlier = [replace(t, before=Stat(1000.0, 4.0, [990.0, 1010.0])) for t in reused.timing]
    message = commit_message(FIX, kept(replace(reused, side_by_side=False, timing=earlier)), "wf/startup")
    prose = " ".join(message.split())  # as read, not as wrapped
    assert "Also measured, 1 run of this state against 2 runs of the previous one taken earlier in this apply" in prose
    assert "n=1 per arm" not in prose
    assert reused.summary().endswith("n=1 per arm")  # side by side, both arms have it
    assert replace(reused, side_by_side=False, timing=earlier).summary().endswith(
        "1 run against 2 earlier runs of the previous state"
    )


def kept(numbers: Numbers, tests: TestSummary | None = None, **found) -> Entry:
    """The ledger entry of a kept fix of a.py, as apply hands it to the commit."""
    return Entry("F1", FIX.slug, FIX.title, SAFE, KEPT, "", ["a.py"], numbers=numbers, tests=tests, **found)


def test_commit_message_has_subject_body_and_parseable_trailers():
    message = commit_message(FIX, kept(numbers(), TestSummary("pytest -q", True, 0, 3.2)), "wf/startup")
    subject, blank, *_ = message.splitlines()
    assert subject == FIX.title and blank == ""
    assert "built once." in message
    assert "- compile elapsed: 1000 -> 600 ms" in message
    assert "launches preserved: yes, 12 launches" in message
    assert "Tests: `pytest -q` passed (exit 0, 3.2 s)." in message
    assert all(len(line) <= 110 for line in message.splitlines())
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, text=True, capture_output=True, check=True
    ).stdout
    assert parsed.splitlines() == trailers(FIX, numbers()).splitlines()
    assert "Warp-Fix-Cold-Module-Ms: 1000 -> 600" in parsed
    assert "Warp-Fix-Identities: 4 -> 3" in parsed and "Warp-Fix-Samples: 1 per arm, interleaved" in parsed


def test_identity_falls_back_to_warp_fix_only_when_none_is_configured(tmp_path, monkeypatch):
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n"}, identity=False)
    assert identity_env(Git(repo))["GIT_AUTHOR_EMAIL"] == "warp-fix@localhost"
    (repo / "a.py").write_text("x = 2\n")
    commit_files(Git(repo), ["a.py"], commit_message(FIX, kept(numbers()), "wf/startup"))
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn") == "warp-fix <warp-fix@localhost>|warp-fix"
    git(repo, "config", "user.name", "Ada")
    git(repo, "config", "user.email", "ada@example.com")
    assert identity_env(Git(repo)) == {}


# -- configuration --------------------------------------------------------------------------------


def test_config_reads_every_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.warp-fix]\ncommand = "python -m app --fast"\ntest = "pytest -q"\nsamples = 4\n'
        'allow = ["unused-backward"]\nprotected = ["vendor/", "sim.py::step"]\ntimeout = 90\n'
    )
    (tmp_path / "pkg").mkdir()
    config = load_config(tmp_path / "pkg", stop=tmp_path)
    assert config.command == ("python", "-m", "app", "--fast") and config.test == "pytest -q"
    assert (config.samples, config.allow, config.timeout) == (4, ("unused-backward",), 90.0)
    assert config.protected == ("vendor/", "sim.py::step")


@pytest.mark.parametrize(
    "table, message",
    [
        ({"samples": 0}, "[tool.warp-fix] samples must be an integer >= 1"),
        ({"samples": "3"}, "[tool.warp-fix] samples must be an integer >= 1"),
        ({"samples": True}, "[tool.warp-fix] samples must be an integer >= 1"),
        ({"command": 3}, "[tool.warp-fix] command must be a string or a list of strings"),
        ({"command": []}, "[tool.warp-fix] command must not be empty"),
        ({"allow": "x"}, "[tool.warp-fix] allow must be a list of non-empty strings"),
        ({"protected": [""]}, "[tool.warp-fix] protected must be a list of non-empty strings"),
        ({"timeout": -1}, "[tool.warp-fix] timeout must be a number of seconds > 0"),
        ({"test": ""}, "[tool.warp-fix] test must be a non-empty string"),
        ({"sample": 3}, "[tool.warp-fix] unknown key 'sample'"),
    ],
)
def test_config_validation_names_the_key(table, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_config(table)


def test_flags_override_configuration(tmp_path):
    from warp_fix.apply import build_request

    (tmp_path / "pyproject.toml").write_text(
        '[tool.warp-fix]\ncommand = ["python", "app.py"]\nsamples = 4\ntest = "pytest"\nallow = ["a"]\n'
    )
    from_config = build_request(command=None, cwd=tmp_path, branch="b")
    assert (from_config.command, from_config.samples, from_config.test) == (("python", "app.py"), 4, "pytest")
    flags = build_request(command=["python", "other.py"], cwd=tmp_path, branch="b", samples=1, test="true", allow=["b"])
    assert (flags.command, flags.samples, flags.test, flags.allow) == (
        ("python", "other.py"),
        1,
        "true",
        frozenset({"b"}),
    )


# -- the gate -------------------------------------------------------------------------------------


def test_gate_applies_safety_classes_allow_and_only():
    gate = Gate(allow=frozenset({"unused-backward"}))
    go = HoistOptionsArgs(file="sim.py", function="go")
    safe = Fix("F1", "late-module-options", "t", "", SAFE, "hoist_options", (go,), ["sim.py"])
    assert gate.decline_reason(safe) is None
    assert gate.decline_reason(Fix("F2", "x", "t", "", CONSENT, "c", files=["a.py"])).startswith("needs consent")
    assert gate.decline_reason(Fix("F3", "unused-backward", "t", "", CONSENT, "c", files=["a.py"])) is None
    assert gate.decline_reason(Fix("F4", "x", "t", "", ADVISORY, None)).startswith("advisory")
    assert Gate(only=frozenset({"F9"})).decline_reason(safe) == "not selected by --only"


def test_trade_off_fix_without_consent_is_measured_and_offered_with_consent_kept():
    trade = Fix("F1", "mathdx-lto", "t", "", CONSENT, "module_options", files=["gemm.py"], measure_kernels=True)
    assert Gate().decline_reason(trade) is None and Gate().offers_only(trade)
    consented = Gate(allow=frozenset({"mathdx-lto"}))
    assert consented.decline_reason(trade) is None and not consented.offers_only(trade)
    assert Gate(only=frozenset({"F9"})).decline_reason(trade) == "not selected by --only"


def test_kernel_time_goes_to_the_body_and_a_trailer_with_useful_precision():
    c = comparison(IMPROVED, {"lto_artifacts": (2, 0)}, delta=-400.0, n=3)
    c.timing.append(TimingDelta(KERNEL.label, Stat(1.84, 0.01, [1.84] * 3), Stat(5.31, 0.02, [5.31] * 3), 3.47, 0.06))
    message = commit_message(FIX, kept(Numbers.of(c, per_arm=3, launch_count=40)), "wf/startup")
    assert "Warp-Fix-Kernel-Ms: 1.84 -> 5.31" in message
    said = " ".join(message.split())  # unwrapped
    assert "- steady-state kernel time: 1.84 -> 5.31 ms (+3.47 ms, beyond the ±0.06 ms noise band, n=3/3)" in said


# -- log ------------------------------------------------------------------------------------------


def test_log_lists_warp_fix_and_foreign_commits_with_deltas(tmp_path):
    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    git(repo, "checkout", "-q", "-b", "wf/startup")
    (repo / "a.py").write_text("x = 2\n")
    commit_files(Git(repo), ["a.py"], commit_message(FIX, kept(numbers()), "wf/startup"))
    (repo / "b.py").write_text("y = 2\n")
    git(repo, "commit", "-qam", "Tidy b")
    git(repo, "checkout", "-q", "main")
    log = branch_log(repo, "wf/startup")
    assert [r.subject for r in log.rows] == [FIX.title, "Tidy b"]
    assert [r.by_warp_fix for r in log.rows] == [True, False]
    assert log.rows[0].files == ["a.py"] and log.rows[0].trailers.mechanism == "late-module-options"
    assert log.totals()[IDENTITIES] == (4.0, 3.0) and log.totals()[COLD_MODULE] == (1000.0, 600.0)
    data = log.to_json()
    assert data["commits"][1]["by_warp_fix"] is False and data["base"] == git(repo, "rev-parse", "main")


def test_log_cli_prints_rows_and_json(tmp_path):
    from tests.apply.conftest import run_cli

    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "wf/s")
    (repo / "a.py").write_text("x = 2\n")
    commit_files(Git(repo), ["a.py"], commit_message(FIX, kept(numbers()), "wf/startup"))
    git(repo, "checkout", "-q", "main")
    text = run_cli("log", "wf/s", cwd=repo)
    assert text.returncode == 0 and "late-module-options" in text.stdout and "4 -> 3" in text.stdout
    totals = " ".join(text.stdout[text.stdout.index("totals over") :].split())
    assert "module identities built 4 -> 3" in totals and "Identities" not in totals  # labels, not trailer keys
    assert '"by_warp_fix": true' in run_cli("log", "wf/s", "--json", cwd=repo).stdout
    missing = run_cli("log", "nope", cwd=Path(repo))
    assert missing.returncode == 2 and "no branch nope" in missing.stderr


def test_log_after_an_apply_that_kept_nothing_says_what_it_decided_and_exits_0(tmp_path):
    """apply made no branch (it keeps a branch only for a kept fix); the documented `apply` then `log` goes on."""
    from tests.apply.conftest import run_cli
    from warp_fix.apply.ledger import DECLINED, DROPPED, Ledger, save_ledger
    from warp_fix.apply.worktree import UserRepo

    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    base = git(repo, "rev-parse", "HEAD")
    ledger = Ledger("wf/none", base, "main", ["python", "-m", "app"], ".", "rule", status="complete", entries=[
        Entry("F1", "late-module-options", "Set the options at import", "safe", DROPPED, "no effect: hash unchanged"),
        Entry("F2", "unused-backward", "Turn off backward", "consent", DECLINED, "needs consent: --allow"),
    ])
    save_ledger(ledger, UserRepo.discover(repo).ledger_dir())
    log = branch_log(repo, "wf/none")
    assert [e.fix_id for e in log.decided_without_branch] == ["F1", "F2"] and log.rows == []
    shown = run_cli("log", "wf/none", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "wf/none: apply kept no fix, so there is no branch; it decided 2 fixes" in shown.stdout
    assert "F1 dropped: Set the options at import (no effect: hash unchanged)" in " ".join(shown.stdout.split())
    as_json = run_cli("log", "wf/none", "--json", "-", cwd=repo)
    assert as_json.returncode == 0 and '"outcome": "declined"' in as_json.stdout
    missing = run_cli("log", "nope", cwd=repo)
    assert missing.returncode == 2 and "no branch nope" in missing.stderr  # no ledger either: still an error


def test_a_commits_timing_inside_its_band_reads_as_noise_in_the_log_table():
    from warp_fix.apply.review import BranchLog, CommitRow
    from warp_fix.apply.trailers import CommitTrailers
    from warp_fix.apply.view import _timing_cell

    def row(sha: str, side_by_side: bool = True) -> CommitRow:
        return CommitRow(sha, "s", [], CommitTrailers("m", "F1", "IMPROVED", 1, side_by_side=side_by_side))

    log = BranchLog("wf/s", "base", "ledger", inside_band={"abc": {COLD_MODULE.label}})
    assert _timing_cell(log, row("abc"), "3332 -> 4491", COLD_MODULE) == "3332 -> 4491 ms (inside its noise band)"
    assert _timing_cell(log, row("def"), "3332 -> 4491", COLD_MODULE) == "3332 -> 4491 ms"  # not measured so
    # the code without the fix was its earlier runs, reused (the counts decided): the timing makes no claim
    reused = _timing_cell(log, row("abc", side_by_side=False), "37651 -> 29149", COLD_MODULE)
    assert reused == "37651 -> 29149 ms (not measured side by side)"


def test_a_saved_ledger_reads_back_as_the_same_ledger(tmp_path):
    from warp_fix.apply.ledger import Baseline, Ledger, load_ledger, save_ledger

    entry = Entry("F1", FIX.slug, FIX.title, SAFE, KEPT, "structure shrank", ["a.py"], "abc123", numbers())
    entry.tests = TestSummary("pytest -q", True, 0, 3.2)
    entry.notes = [EditNote("a.py", "removed-import", "imports left unused removed: os")]
    baseline = Baseline(1000.0, None, "the warm run compiled too", 4, 900, 0, 2, True)
    ledger = Ledger("wf/s", "base", "main", ["python", "app.py"], "", "rule", "complete", [entry], baseline, numbers())
    save_ledger(ledger, tmp_path)
    assert load_ledger(tmp_path, "wf/s") == ledger
    assert load_ledger(tmp_path, "wf/other") is None


def test_the_body_leads_with_the_metric_that_decided():
    structural = commit_message(FIX, kept(numbers()), "wf/startup").splitlines()
    assert structural[2] == "Kept for module identities built: 4 -> 3; generated source bytes: 900 ->"
    assert structural[3] == "500."

    cache = comparison(IMPROVED, {"identities": (5, 5), "warm_builds": (5, 0)}, reasons=["structure shrank"])
    cache.timing.append(TimingDelta(WARM_MODULE.label, Stat(2537.0, 20.0, [2537.0]), Stat(5.0, 1.0, [5.0]), -2532, 60))
    cache.judged_on = WARM_MODULE.label
    body = commit_message(FIX, kept(Numbers.of(cache, per_arm=1, launch_count=12)), "wf/startup")
    assert body.split("\n\n")[1].startswith("Kept for warm module work: 2537 -> 5 ms (-2532 ms, beyond the ±60 ms")
    assert "warm builds: 5 -> 0." in body.split("\n\n")[1]

    preload = comparison(IMPROVED, delta=-300.0, n=3, reasons=["compile elapsed: 1000 -> 700 ms"])
    body = commit_message(FIX, kept(Numbers.of(preload, per_arm=3, launch_count=12)), "wf/startup")
    assert body.split("\n\n")[1].startswith("Kept for compile elapsed: 1000 -> 700 ms")
    assert "- cold module work: 1000 -> 700 ms" in body  # measured too, not what decided


def test_the_counts_a_fix_left_as_they_were_share_one_line_and_keep_their_trailers():
    body = commit_message(FIX, kept(numbers()), "wf/startup")
    measured = next(p for p in body.split("\n\n") if p.startswith("Also measured"))
    assert "- unchanged: LTO artifacts (0), warm builds (0)" in measured
    assert "0 -> 0" not in measured  # a reviewer reads what moved
    assert "Warp-Fix-Warm-Builds: 0 -> 0" in body and "Warp-Fix-LTO-Artifacts: 0 -> 0" in body


def test_the_body_gives_evidence_notes_what_to_check_and_how_to_roll_back():
    unused = "f(): parameter `module` is no longer used (kept: callers may still pass it)"
    stale = "its docstring describes the options it set, no longer done"
    entry = kept(
        numbers(),
        notes=[EditNote("a.py", "unused-parameter", unused), EditNote("a.py", "stale-docstring", f"f(): {stale}", "f")],
        gone=[GoneBuild("a", "cpu", 412.0, "cold", "option fast_math changed after the first load", "a.py:7 in f")],
        to_check=[ToCheck("a.py", 5, "f", "Set fast math.", stale)],
    )
    paragraphs = commit_message(FIX, entry, "wf/startup").split("\n\n")
    assert paragraphs[4:9] == [
        "Builds gone:\n- rebuild of a on cpu, 412 ms: option fast_math changed after the first\n  load (a.py:7 in f)",
        "Codemod notes:\n- a.py: f(): parameter `module` is no longer used (kept: callers may\n  still pass it)",
        'Left for you to check:\n- a.py:5 f(): "Set fast math." (its docstring describes the options it\n'
        "  set, no longer done)",
        "Tests: none configured (gated on launches, output and options only).",
        "Roll back: `git revert` this commit on wf/startup (`warp-fix log\nwf/startup` lists its sha); it "
        "changes only a.py.",
    ]


def test_docstrings_of_functions_whose_body_the_edit_changed_are_left_to_check(tmp_path):
    from warp_fix.apply.evidence import docstrings_to_check

    before = '''
        import warp as wp


        class Stage:
            def setup(self):
                """Turn on fast math for this stage."""
                wp.set_module_options({"fast_math": True})
                self.ready = True

            def run(self):
                """Untouched by the edit."""
                return self.ready
    '''
    repo = init_repo(tmp_path / "r", {"a.py": before})
    edited = (repo / "a.py").read_text().replace('        wp.set_module_options({"fast_math": True})\n', "")
    (repo / "a.py").write_text('import warp as wp\n\nwp.set_module_options({"fast_math": True})\n' + edited[18:])
    stale = "its docstring describes the options it set, no longer done"
    note = EditNote("a.py", "stale-docstring", f"setup(): {stale}", "setup")
    assert docstrings_to_check(Git(repo), ["a.py"], [note]) == [
        ToCheck("a.py", 8, "Stage.setup", "Turn on fast math for this stage.", stale)
    ]
    assert docstrings_to_check(Git(repo), ["a.py"], [])[0].why == "the edit changed its body"


def test_a_comment_right_above_the_edited_lines_is_left_to_check(tmp_path):
    from warp_fix.apply.evidence import comments_to_check

    before = """
        import warp as wp


        def main():
            # compile every run from scratch, to be safe
            wp.clear_kernel_cache()
            # unrelated: the grid
            grid = wp.zeros(8)
            return grid
    """
    repo = init_repo(tmp_path / "r", {"a.py": before})
    (repo / "a.py").write_text((repo / "a.py").read_text().replace("    wp.clear_kernel_cache()\n", ""))
    (point,) = comments_to_check(Git(repo), ["a.py"])
    assert point == ToCheck(
        "a.py", 5, "main", "compile every run from scratch, to be safe", "right above the edited lines", "comment"
    )
    assert (
        _check_line(point) == 'a.py:5 comment "compile every run from scratch, to be safe" (right above the '
        "edited lines)"
    )


def test_a_comment_elsewhere_that_names_the_edited_kernel_is_left_to_check(tmp_path):
    """Warp's Navier-Stokes perturbation example explains tiled_transpose's module="unique" two kernels up."""
    from warp_fix.apply.evidence import comments_to_check

    before = """
        import warp as wp

        # The FFT kernels share a module; tiled_transpose below uses its own.
        @wp.kernel(module="dft")
        def fft(x: wp.array(dtype=float)):
            pass


        @wp.kernel(module="unique")
        def tiled_transpose(x: wp.array(dtype=float)):
            pass  # transposes tiled_transpose's input
    """
    repo = init_repo(tmp_path / "r", {"a.py": before})
    path = repo / "a.py"
    path.write_text(path.read_text().replace('@wp.kernel(module="unique")', "@wp.kernel"))
    assert comments_to_check(Git(repo), ["a.py"]) == [
        ToCheck("a.py", 3, "", "The FFT kernels share a module; tiled_transpose below uses its own.",
                "names tiled_transpose, whose definition the edit changed", "comment"),
    ]  # fmt: skip (the kernel's own comment about itself is not listed)


# -- what the run leaves and says ---------------------------------------------------------------------


def test_a_total_inside_the_noise_band_reads_as_noise_not_as_a_regression():
    from warp_fix.apply.view import total_line

    c = comparison(IMPROVED, {"identities": (5, 3), "warm_builds": (5, 0)}, delta=613.0, band=900.0, n=3)
    line = total_line(Numbers.of(c, per_arm=3, launch_count=12))
    assert line.startswith("module identities built 5 -> 3, warm builds 5 -> 0; cold module work 1000 -> 1613 ms")
    assert "(inside the ±900 ms noise band: not significant)" in line
    slower = total_line(Numbers.of(comparison(delta=-613.0, band=100.0, n=3), per_arm=3, launch_count=12))
    assert slower.startswith("no structural change; cold module work 1000 -> 387 ms (-613 ms, beyond the ±100 ms")


def test_a_wall_clock_slowdown_the_cpu_time_does_not_show_reads_as_machine_load():
    from warp_fix.apply.view import total_line

    c = comparison(IMPROVED, {"identities": (5, 3)}, delta=613.0, band=100.0, n=2)
    flat = Stat(800.0, 4.0, [800.0, 801.0])
    c.timing.insert(1, TimingDelta(COLD_CPU.label, flat, flat, 0.0, 40.0))
    line = total_line(Numbers.of(c, per_arm=2, launch_count=12))
    assert (
        "cold module work 1000 -> 1613 ms (+613 ms, beyond the ±100 ms noise band; the builds' CPU time did not "
        "move: machine load)" in line
    )
    assert "cold module CPU time 800 -> 800 ms (inside the ±40 ms noise band: not significant)" in line


def test_a_slowdown_from_one_run_each_is_not_called_a_regression():
    from warp_fix.apply.view import total_line

    c = comparison(IMPROVED, {"identities": (5, 3)}, delta=593.0, band=525.0, n=1)
    line = total_line(Numbers.of(c, per_arm=1, launch_count=12))
    assert "(+593 ms, beyond the ±525 ms noise band, but from one run each: too few to call it a regression" in line


def test_a_run_that_keeps_nothing_leaves_no_branch_and_says_what_it_tried(tmp_path):
    from warp_fix.apply.ledger import DROPPED, Ledger
    from warp_fix.apply.loop import nothing_kept_note
    from warp_fix.apply.worktree import UserRepo, Workspace

    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    with Workspace(UserRepo.discover(repo), "wf/s") as workspace:
        workspace.create_branch()
    assert not git(repo, "branch", "--list", "wf/s")

    ledger = Ledger("wf/s", "base", "main", ["python", "app.py"], "", "rule")
    ledger.entries.append(Entry("F1", FIX.slug, FIX.title, SAFE, DROPPED, "inconclusive; no structural change"))
    assert nothing_kept_note(ledger) == (
        "no fix kept, so no branch was left (wf/s is free for a rerun). F1 dropped, inconclusive"
    )


def test_once_nothing_is_rebuilt_the_summary_points_at_bake():
    from warp_fix.apply.loop import remaining_work
    from warp_fix.mechanisms import _situation as case

    clean = case.run(builds=[case.build("sim", ms=300.0), case.build("io", ms=120.0)]).report
    remaining = remaining_work(clean)
    assert (remaining.identities, remaining.cold_module_ms) == (2, 420.0)
    assert remaining.line(["python", "-m", "sim"]) == (
        "no redundant build left: 2 module identities, 420 ms of cold module work, built once on every fresh "
        "machine; `warp-fix bake -- python -m sim` builds them once and restores them verified in CI and "
        "deployment (docs/bake.md)"
    )
    one = remaining_work(case.run(builds=[case.build("sim", ms=300.0)]).report)
    assert one.line(["python", "-m", "sim"]).startswith("no redundant build left: 1 module identity, 300 ms")
    assert "builds it once and restores it verified" in one.line(["python", "-m", "sim"])
    rebuilt = case.run(builds=[case.build("sim")], rebuilds=[case.kernel_added("sim", "late")]).report
    assert remaining_work(rebuilt) is None


def test_an_estimate_is_said_to_be_untested_once():
    """A declined advisory's row reads "untested estimate: X"; most expectations already end "(untested estimate)"."""
    entry = Entry("F2", "serial-builds", "Preload", ADVISORY, "declined", "advisory")
    entry.expected = "~40 ms of adjoint codegen"
    assert entry.estimate() == "untested estimate: ~40 ms of adjoint codegen"
    entry.expected = "compile elapsed down to at best ~5,287 ms (ceiling 3.33x; untested estimate)"
    assert entry.estimate() == entry.expected


def test_the_summary_quotes_the_last_bake_verify_of_the_same_identities():
    from warp_fix.apply.loop import remaining_work
    from warp_fix.bake.verified import Verification
    from warp_fix.mechanisms import _situation as case

    report = case.run(builds=[case.build("sim", ms=300.0)]).report
    (build,) = report.trace.builds
    measured = Verification(("python", "-m", "sim"), frozenset({("sim", build.hash, "cpu")}), 0, 640.0, "06:30")
    line = remaining_work(report, measured).line(["python", "-m", "sim"])
    assert line.endswith("(docs/bake.md); a restored bake measured it: nothing compiled, the run took 640 ms "
                         "(`warp-fix bake verify`, 06:30)")
    other = Verification(("python", "-m", "sim"), frozenset({("sim", "0" * 64, "cpu")}), 0, 640.0, "06:30")
    assert "ran other code (1 of 1 identities differ)" in remaining_work(report, other).line(["python", "-m", "sim"])
