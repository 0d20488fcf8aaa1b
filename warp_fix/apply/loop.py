"""The apply loop: baseline and plan in a worktree, then one measured, test-gated try per fix."""

from __future__ import annotations

import itertools
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from warp_fix.apply import budget
from warp_fix.apply.arms import ArmsResult, ProbeClock, drift_note, measure_interleaved
from warp_fix.apply.commit import commit_files, commit_message
from warp_fix.apply.errors import ApplyError, ApplyInterrupted, BaselineTestsFailed
from warp_fix.apply.evidence import comments_to_check, docstrings_to_check, gone_builds
from warp_fix.apply.gate import Gate
from warp_fix.apply.ledger import (
    DECLINED,
    DROPPED,
    KEPT,
    OFFERED,
    Baseline,
    EditNote,
    Entry,
    Ledger,
    Numbers,
    Remaining,
    TestSummary,
    save_ledger,
)
from warp_fix.apply.request import ApplyRequest
from warp_fix.apply.search import Search, changed_modules, search_order
from warp_fix.apply.signals import termination_interrupts
from warp_fix.apply.steps import ApplyStep, StepSink
from warp_fix.apply.testrun import TestRun, run_tests
from warp_fix.apply.worktree import UserRepo, Workspace
from warp_fix.bake import cold_work_removed
from warp_fix.bake.verified import Verification, last_verification
from warp_fix.compare import IMPROVED, Comparison, compare, require_option_effect
from warp_fix.metrics import COLD_MODULE, KERNEL
from warp_fix.model import NO_OPTIONS, Fix, OptionClaim, Plan
from warp_fix.output_model import OutputModel, OutputModelError, learn
from warp_fix.probe import ProbeError
from warp_fix.report import Report
from warp_fix.scope import EditPolicy
from warp_fix.wording import counted, noun

if TYPE_CHECKING:
    from codemods import CodemodResult

Planner = Callable[[Report, Path, list[str]], Plan]
Progress = Callable[[str], None]
PLANNED = "planned"  # dry-run outcome: would be tried


@dataclass
class ApplyResult:
    ledger: Ledger
    plan: Plan | None
    ledger_files: tuple[Path, Path] | None = None
    exit_code: int = 0


def default_planner(report: Report, root: Path, command: list[str]) -> Plan:
    from warp_fix import plan as plan_module

    make_plan = getattr(plan_module, "make_plan", None)
    if make_plan is None:
        raise ApplyError("the planner (warp_fix.plan.make_plan) is not available in this build")
    return make_plan(report, root, command)


def run_apply(
    request: ApplyRequest, planner: Planner | None = None, progress: Progress | None = None,
    steps: StepSink | None = None,
) -> ApplyResult:
    """Run apply (or its dry run) for `request`; raises ApplyError / ProbeError / BaselineFailed. `progress` gets
    each line as it is said; `steps` the same line with where apply stands (for a progress bar)."""
    planner = planner or default_planner
    say = progress or (lambda _text: None)
    if request.dry_run:
        return DryRun(request, planner, say).run()
    repo = UserRepo.discover(request.cwd)
    branch = request.branch or ""
    repo.check_branch_name(branch)
    for stale in repo.prune_stale_worktrees():
        say(f"removed a stale worktree left by an interrupted apply: {stale}")
    if repo.branch_exists(branch):
        raise ApplyError(repo.existing_branch_message(branch))
    relative = repo.relative_cwd(request.cwd)
    warnings = _precondition_warnings(repo, request)
    for warning in warnings:
        say(f"warning: {warning}")
    with termination_interrupts(), Workspace(repo, branch) as workspace:
        session = ApplySession(request, repo, workspace, relative, planner, say, warnings, steps)
        try:
            return session.run()
        except KeyboardInterrupt as exc:
            raise ApplyInterrupted(session.ledger, session.ledger_files) from exc


def _precondition_warnings(repo: UserRepo, request: ApplyRequest) -> list[str]:
    warnings = []
    dirty = repo.uncommitted()
    if dirty:
        warnings.append(
            f"{counted(len(dirty), 'uncommitted change')} {noun(len(dirty), 'is', 'are')} not on the new branch: it "
            f"starts from HEAD {repo.head[:10]} without {noun(len(dirty), 'it', 'them')}"
        )
    if not request.test:
        warnings.append(
            "no test command (--test or [tool.warp-fix] test): fixes are gated on "
            "launches, output and effective options only"
        )
    return warnings


def judge(
    before: Report,
    after: Report,
    allow_options: set[str],
    output_model: OutputModel | None,
    accepted_history: list[Report] | None = None,
    claim: OptionClaim = NO_OPTIONS,
) -> Comparison:
    """compare() with the output held to the baseline's model (None: --allow-nondeterministic-output).

    Every candidate answers to the original baseline's output, not to the last kept fix's, so tolerances
    cannot drift from fix to fix. `accepted_history`: every measurement of the accepted state so far, for
    the noise band. `claim`: the options the fix's edit sets, which must reach its target modules' builds.
    """
    history = [r for r in accepted_history or [] if r is not before]
    comparison = compare(
        before, after, allow_options, history, output_model=output_model, skip_output=output_model is None
    )
    return require_option_effect(comparison, before, after, claim)


class ApplySession:
    """One apply run inside its workspace; fills the ledger as it goes."""

    def __init__(
        self,
        request: ApplyRequest,
        repo: UserRepo,
        workspace: Workspace,
        relative: Path,
        planner: Planner,
        say: Progress,
        warnings: list[str],
        steps: StepSink | None = None,
    ):
        self.request = request
        self.repo = repo
        self.workspace = workspace
        self.candidate_cwd = workspace.candidate / relative
        self.accepted_cwd = workspace.accepted / relative
        self.planner = planner
        self.print_line = say
        self.steps = steps
        self.pending = 0  # fixes left to try, the one in hand included
        self.clock = ProbeClock()
        self.gate = Gate(request.allow, request.only)
        self.command = list(request.command)
        self.kept: list[tuple[Fix, Entry]] = []
        self.accepted_report: Report | None = None  # latest measurement of the accepted state
        self.ledger_files: tuple[Path, Path] | None = None
        self.output_model: OutputModel | None = None  # None: output not compared (allowed to vary)
        self.accepted_runs: list[Report] = []  # every measurement of an accepted state: the noise band's runs
        self.ledger = Ledger(
            branch=request.branch,
            base_commit=repo.head,
            base_ref=repo.head_ref,
            command=self.command,
            cwd=relative.as_posix() if str(relative) != "." else "",
            sampling_rule=budget.RULE_TEXT,
            warnings=list(warnings),
        )

    def say(self, text: str) -> None:
        self.print_line(text)
        if self.steps is not None:
            done = len(self.ledger.entries)
            self.steps(ApplyStep(text, done, done + self.pending, self.clock.calls, self.request.samples))

    def run(self) -> ApplyResult:
        start = time.perf_counter()
        plan = None
        try:
            if not self.candidate_cwd.is_dir():
                raise ApplyError(f"the working directory {self.ledger.cwd} is not in the committed tree")
            baseline = self._baseline()
            self._tests_pass_at_baseline()
            self.workspace.create_branch()  # only now: a refused baseline leaves no branch behind
            plan = self.planner(baseline, self.workspace.candidate, self.command)
            plan = self._work_through(plan)
            self._total()
            verified = last_verification(self.repo.ledger_dir(), self.command)
            self.ledger.remaining = remaining_work(self.accepted_report, verified)
            self.ledger.status = "complete"
        except KeyboardInterrupt:
            self.ledger.status = "interrupted"
            raise
        except BaseException:
            self.ledger.status = "failed"
            raise
        finally:
            files = self.ledger_files = self._finish(start)
        return ApplyResult(self.ledger, plan, files)

    def _work_through(self, plan: Plan) -> Plan:
        """Try the fixes in search order (see search.py); after a kept one, plan again from the new state.

        Fixes interact (a module option set by one changes what a later module split must carry), so the
        rest of the plan is recomputed from the kept candidate's own measurement. A fix is tried once, and
        once more only when it was dropped and a later kept fix changed its module.
        """
        search = Search.of(plan.fixes)
        while (fix := search.next()) is not None:
            self.pending = len(search.queue) + 1
            fix.id = self._entry_id(fix)
            retry_of = search.retry_of(fix)
            previous = self.accepted_report
            entry = self._consider(fix, retry_of)
            self.ledger.entries.append(entry)
            self.pending -= 1
            search.record(fix, entry.outcome == DROPPED)
            if entry.outcome == KEPT and self.accepted_report is not None:
                plan = self.planner(self.accepted_report, self.workspace.candidate, self.command)
                modules = changed_modules(previous, self.accepted_report)
                for dropped_id in search.after_kept(plan.fixes, modules, entry.files):
                    self.say(f"  {dropped_id} will be tried again: {fix.id} changed its module")
        return plan

    def _entry_id(self, fix: Fix) -> str:
        """The planner's id while it is unique in the ledger (so `--only F3` means the plan's F3), else the next."""
        used = {entry.fix_id for entry in self.ledger.entries}
        if fix.id and fix.id not in used:
            return fix.id
        return next(f"F{n}" for n in itertools.count(len(used) + 1) if f"F{n}" not in used)

    def _finish(self, start: float) -> tuple[Path, Path] | None:
        self.ledger.probe_calls = self.clock.calls
        self.ledger.probe_seconds = round(self.clock.seconds, 2)
        self.ledger.probe_calls_by_verdict = dict(self.clock.calls_by_verdict)
        self.ledger.total_seconds = round(time.perf_counter() - start, 2)
        if self.ledger.status == "complete" or self.kept:
            return save_ledger(self.ledger, self.repo.ledger_dir())
        return None

    def _baseline(self) -> Report:
        samples = budget.BASELINE_SAMPLES
        self.say(baseline_announcement(self.command, samples))
        report = self.clock.measure(self.command, self.candidate_cwd, samples, self.request.timeout, "baseline")
        self.clock.charge("baseline", 1)
        self.ledger.baseline = _baseline_numbers(report)
        self.accepted_report = report
        self.accepted_runs.append(report)
        if self.request.allow_nondeterministic_output:
            if report.output.deterministic is False:
                self.ledger.warnings.append("output is nondeterministic: output comparison skipped (allowed)")
            return report
        if report.output.text_varies:
            raise ApplyError(
                f"the program's output text differs between runs ({_difference(report)}), so apply cannot "
                "check that a fix preserves it: make it deterministic, or rerun with "
                "--allow-nondeterministic-output to skip that check"
            )
        try:
            self.output_model = learn(report.output, self.request.output_tolerance)
        except OutputModelError as exc:
            raise ApplyError(f"the baseline's output cannot be compared: {exc}") from exc
        self.ledger.output_model = self.output_model.record()
        return report

    def _tests_pass_at_baseline(self) -> None:
        if not self.request.test:
            return
        self.say(f"tests at baseline: {self.request.test}")
        result = self._run_tests()
        if not result.passed:
            raise BaselineTestsFailed(self.request.test, result.exit_code, result.tail)

    def _run_tests(self) -> TestRun:
        result = run_tests(self.request.test or "", self.candidate_cwd, self.request.timeout)
        self.ledger.test_seconds = round(self.ledger.test_seconds + result.seconds, 2)
        return result

    def _consider(self, fix: Fix, retry_of: str = "") -> Entry:
        entry = Entry(
            fix.id,
            fix.slug,
            fix.title,
            fix.safety,
            DECLINED,
            "",
            list(fix.files),
            expected=fix.expected,
            retry_of=retry_of,
        )
        reason = self.gate.decline_reason(fix)
        if reason:
            entry.reason = reason
            return entry
        self.say(f"{fix.id} {fix.title}" + (f" (again: {retry_of} was dropped before)" if retry_of else ""))
        try:
            return self._try(fix, entry)
        except BaseException:
            self.workspace.discard_candidate_edits()
            raise

    def _try(self, fix: Fix, entry: Entry) -> Entry:
        from codemods import CodemodRefused

        entry.outcome = DROPPED
        try:
            edit = run_fix_codemod(fix, self.workspace.candidate, self.request.protected)
        except CodemodRefused as exc:
            return self._drop(entry, f"codemod refused: {exc}")
        except Exception as exc:  # a codemod bug must not end the run: record it and go on
            return self._drop(entry, f"codemod failed: {type(exc).__name__}: {exc}")
        entry.files = sorted(p.resolve().relative_to(self.workspace.candidate).as_posix() for p in edit.changed)
        entry.notes = [EditNote(note.file, note.kind, note.message, note.function) for note in edit.notes]
        if not entry.files:
            return self._drop(entry, "nothing to change (the code already has this fix?)")
        if self.request.test:
            self.say(f"  tests: {self.request.test}")
            result = self._run_tests()
            tail = self._user_paths(result.tail)
            entry.tests = TestSummary(
                result.command, result.passed, result.exit_code, result.seconds, "" if result.passed else tail
            )
            if not result.passed:
                return self._drop(entry, f"tests failed (exit {result.exit_code}): {_last_line(tail)}")
        try:
            calls = self.clock.calls
            arms = self._arms(
                self.accepted_cwd,
                set(fix.allow_options),
                self.accepted_report,
                fix.measure_kernels,
                fix.option_claim,
                fix.expected_ms,
            )
        except ProbeError as exc:
            return self._drop(entry, f"could not be measured: {self._user_paths(str(exc))}")
        self._remember_accepted(arms.before)
        return self._decide(fix, entry, arms, self.clock.calls - calls)

    def _user_paths(self, text: str) -> str:
        """Output of a run in apply's private worktrees, with their paths read as the user's checkout: a
        traceback then names the file the user opens, not a temporary copy."""
        for private in (self.workspace.candidate, self.workspace.accepted):
            for spelling in {str(private), os.path.realpath(private)}:
                text = text.replace(spelling, str(self.repo.root))
        return text

    def _remember_accepted(self, report: Report) -> None:
        if all(report is not seen for seen in self.accepted_runs):
            self.accepted_runs.append(report)

    def _arms(
        self,
        accepted_cwd: Path,
        allow_options: set[str],
        reuse: Report | None,
        kernel_timing: bool = False,
        claim: OptionClaim = NO_OPTIONS,
        expected_ms: float = 0.0,
    ) -> ArmsResult:
        if kernel_timing and reuse is not None and reuse.summary and reuse.summary.kernel_ms is None:
            reuse = None  # the earlier measurement has no kernel time: both arms are measured afresh
        return measure_interleaved(
            self.command,
            accepted_cwd,
            self.candidate_cwd,
            lambda b, a: judge(b, a, allow_options, self.output_model, self.accepted_runs, claim),
            self.request.samples,
            self.clock,
            self.request.timeout,
            self.say,
            reuse,
            kernel_timing,
            expected_ms,
            self.request.seconds_per_fix,
        )

    def _decide(self, fix: Fix, entry: Entry, arms: ArmsResult, probe_calls: int) -> Entry:
        entry.numbers = Numbers.of(
            arms.comparison, arms.per_arm, arms.before.trace.launch_count, arms.stop.why, arms.side_by_side
        )
        verdict, why = budget.effective_verdict(arms.comparison, arms.per_arm)
        won = budget.kernel_time_win(arms.comparison, arms.per_arm) if fix.measure_kernels else ""
        if won:
            verdict = IMPROVED
            arms.comparison.reasons.append(won)  # the ledger's reason
            entry.numbers.notes.append(won)  # the commit body: why a start-up "inconclusive" was kept
            entry.numbers.decided_by = [KERNEL.field]
        entry.numbers.verdict = verdict
        self.clock.charge(verdict, probe_calls)
        if verdict != IMPROVED:
            return self._drop(entry, "; ".join([why, *arms.comparison.reasons]))
        if fix.measure_kernels and _kernels_slower(entry.numbers):
            return self._offer(
                fix,
                entry,
                "kernels slower beyond the noise band: {trade}; a trade of run time for start time is "
                "offered, not committed, with or without --allow",
            )
        if self.gate.offers_only(fix):
            return self._offer(fix, entry, "needs consent: {trade}; rerun with --allow " + fix.slug + " to keep it")
        entry.gone = gone_builds(arms.before, arms.after)
        candidate = self.workspace.candidate_git
        entry.to_check = [
            *docstrings_to_check(candidate, entry.files, entry.notes),
            *comments_to_check(candidate, entry.files),
        ]
        message = commit_message(fix, entry, self.request.branch or "")
        entry.commit = commit_files(self.workspace.candidate_git, entry.files, message)
        entry.outcome = KEPT
        entry.reason = "; ".join(arms.comparison.reasons)
        self.workspace.move_accepted(entry.commit)
        self.accepted_report = arms.after  # the candidate just measured is the new accepted state
        self._remember_accepted(arms.after)
        self.kept.append((fix, entry))
        self.say(f"  kept {entry.commit[:10]}: {entry.numbers.summary()}")
        return entry

    def _offer(self, fix: Fix, entry: Entry, why: str) -> Entry:
        """Measured better at startup, but it may cost kernel time: both numbers go to the user, not a commit.
        `why` may hold `{trade}`: the build and kernel-time lines."""
        self.workspace.discard_candidate_edits()
        entry.outcome = OFFERED
        numbers = entry.numbers
        trade = [t for t in (numbers.timing_of(COLD_MODULE), numbers.timing_of(KERNEL)) if t]
        entry.reason = why.replace("{trade}", "; ".join(t.record_line() for t in trade))
        self.say(f"  {entry.outcome}: {entry.brief_reason()}")
        return entry

    def _drop(self, entry: Entry, reason: str) -> Entry:
        self.workspace.discard_candidate_edits()
        entry.reason = reason
        brief = entry.brief_reason()
        self.say(f"  {entry.outcome}: {brief}" + (" (the figures are in the ledger)" if brief != reason else ""))
        return entry

    def _total(self) -> None:
        if not self.kept:
            self.ledger.total_note = nothing_kept_note(self.ledger)
            return
        if len(self.kept) == 1:
            self.ledger.total = self.kept[0][1].numbers
            runs = "the runs interleaved" if self.ledger.total.side_by_side else (
                "whose runs from earlier in this apply were reused: the counts decide, the timings make no claim"
            )
            self.ledger.total_note = (
                f"measured: the one kept fix against the code it was tried on, {runs} (warp-fix log shows these "
                "figures)"
            )
            return
        self.say("total: the branch against the original baseline")
        self.workspace.move_accepted(self.repo.head)
        allowed = {o for fix, _ in self.kept for o in fix.allow_options}
        calls = self.clock.calls
        try:
            arms = self._arms(self.accepted_cwd, allowed, reuse=None)
        except ProbeError as exc:
            self.ledger.total_note = f"the final measurement failed: {exc}"
            return
        self.clock.charge("total", self.clock.calls - calls)
        drift = drift_note(self.accepted_runs[0], arms.before, arms.comparison, code="the base")
        arms.comparison.notes += [drift] if drift else []
        self.ledger.total = Numbers.of(arms.comparison, arms.per_arm, arms.before.trace.launch_count, arms.stop.why)
        self.ledger.total_note = (
            f"measured: {len(self.kept)} fixes kept; a fresh interleaved measurement of the branch head against "
            "the base (warp-fix log shows these figures; each commit's own figures are against its predecessor)"
        ) + (f"; {drift}" if drift else "")


def remaining_work(report: Report | None, verified: Verification | None = None) -> Remaining | None:
    """Once the accepted state rebuilds no module, its cold start is what is left: say how much, for bake, and
    what the last `bake verify` of the command measured (for these identities, or that it ran other code)."""
    if report is None or report.rebuilds or report.summary is None:
        return None
    cold = cold_work_removed(report)
    baked = verified.said_for(cold.identity_set()) if verified is not None else ""
    return Remaining(cold.identities, cold.module_ms, baked) if cold.identities else None


class DryRun:
    """Probe + plan in place (measurement writes nothing into the project); no branch, no edits."""

    def __init__(self, request: ApplyRequest, planner: Planner, say: Progress):
        self.request = request
        self.planner = planner
        self.say = say

    def run(self) -> ApplyResult:
        from warp_fix.apply.request import _repo_root

        root = _repo_root(self.request.cwd) or self.request.cwd
        command = list(self.request.command)
        preconditions = self._preconditions()
        for warning in preconditions:
            self.say(f"warning: {warning}")
        clock = ProbeClock()
        samples = budget.BASELINE_SAMPLES
        self.say(baseline_announcement(command, samples))
        report = clock.measure(command, self.request.cwd, samples, self.request.timeout, "baseline")
        plan = self.planner(report, root, command)
        output_model, warnings = None, list(preconditions)
        if report.output.text_varies:
            warnings.append(
                f"the output text differs between runs ({_difference(report)}): apply would refuse "
                "without --allow-nondeterministic-output"
            )
        elif report.output.profile is not None and not self.request.allow_nondeterministic_output:
            output_model = learn(report.output, self.request.output_tolerance).record()
        gate = Gate(self.request.allow, self.request.only)
        ledger = Ledger(
            self.request.branch,
            "",
            None,
            command,
            "",
            budget.RULE_TEXT,
            status="dry-run",
            baseline=_baseline_numbers(report),
            probe_calls=clock.calls,
            probe_seconds=round(clock.seconds, 2),
            warnings=warnings,
            output_model=output_model,
        )
        for fix in search_order(plan.fixes):  # in the order apply would try them
            reason = gate.decline_reason(fix)
            if reason is None and gate.offers_only(fix):
                reason_text = f"would measure it both ways and offer it: keeping it needs --allow {fix.slug}"
            else:
                reason_text = f"would apply codemod {fix.codemod} and keep it only if measured better"
            ledger.entries.append(
                Entry(
                    fix.id,
                    fix.slug,
                    fix.title,
                    fix.safety,
                    DECLINED if reason else PLANNED,
                    reason or reason_text,
                    list(fix.files),
                    expected=fix.expected,
                )
            )
        return ApplyResult(ledger, plan)

    def _preconditions(self) -> list[str]:
        """What a real run would warn about first (uncommitted changes, no test command), or why it would refuse."""
        try:
            repo = UserRepo.discover(self.request.cwd)
        except ApplyError as exc:
            return [f"a real run would refuse: {exc}"]
        return _precondition_warnings(repo, self.request)


def run_fix_codemod(fix: Fix, root: Path, protected: tuple[str, ...] = ()) -> CodemodResult:
    """The one call into codemods: the fix's edit in the checkout at `root`, with the notes it reports; the
    runner refuses what the plan's scope refuses (installed packages, protected paths), whatever the plan says."""
    from codemods import run_codemod

    return run_codemod(fix.codemod or "", root, fix.places, EditPolicy(str(root), protected).refusal)


def baseline_announcement(command: list[str], samples: int) -> str:
    """What the user reads while the baseline runs, in words: each run is a cold start and then a warm one."""
    return (
        f"baseline: running {shlex.join(command)} {samples} times, each time from an empty kernel cache "
        "and then again with the cache it left"
    )


def _baseline_numbers(report: Report) -> Baseline | None:
    s = report.summary
    if s is None:
        return None
    return Baseline(
        cold_module_ms=s.cold_module_ms.median,
        compile_elapsed_ms=None if s.compile_elapsed_na else s.compile_elapsed_ms.median,
        compile_elapsed_na=s.compile_elapsed_na,
        identities=s.identities,
        generated_source_bytes=s.generated_source_bytes,
        warm_builds=s.warm_builds,
        samples=len(report.samples),
        output_deterministic=report.output.deterministic,
    )


def _difference(report: Report) -> str:
    profile = report.output.profile
    return profile.text_difference if profile and profile.text_difference else "first difference not recorded"


def nothing_kept_note(ledger: Ledger) -> str:
    """Why the run ends without a branch: each fix tried or declined, with the first clause of its reason."""
    left = f"no branch was left ({ledger.branch} is free for a rerun)"
    if not ledger.entries:
        return f"no fix kept, {left}: the plan had no fix to try"
    tried = "; ".join(f"{e.fix_id} {e.outcome}, {e.reason.split('; ')[0]}" for e in ledger.entries)
    return f"no fix kept, so {left}. {tried}"


def _kernels_slower(numbers: Numbers) -> bool:
    """The steady-state kernel time got worse by more than its noise band."""
    kernel = numbers.timing_of(KERNEL)
    return kernel is not None and kernel.significant and kernel.delta > 0


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
