"""The end of `warp-fix demo` as a newcomer reads it: apply's summary and the branch's log table, printed by the
same rich code as the command line, from a recorded ledger, then screenshotted in headless Chromium."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from tests.render.chromium import chromium, needs_chromium, png_pixels
from warp_fix.apply.commit import commit_trailers
from warp_fix.apply.ledger import DROPPED, KEPT, Entry, Ledger, Numbers, Remaining, TestSummary, save_ledger
from warp_fix.apply.loop import nothing_kept_note
from warp_fix.apply.review import BranchLog, CommitRow, attach_ledger
from warp_fix.apply.view import print_ledger, print_log
from warp_fix.compare import IMPROVED, INCONCLUSIVE, TimingDelta
from warp_fix.demo import why_nothing_was_kept
from warp_fix.metrics import COLD_MODULE, COMPILE_ELAPSED, IDENTITIES, STRUCTURE, TIMING, WARM_BUILDS, WARM_MODULE
from warp_fix.model import SAFE, Fix
from warp_fix.report import Stat

WIDTH = 100
BASE = "c" * 40
COMMAND = ["python", "-m", "terrain"]
# How apply words a band's estimate: internal words that must not reach the summary.
BAND_HOW = (
    "from 3 runs of the accepted state so far and this candidate (2 code states): spread ±1.8% around each "
    "one's median (widest 2410-2490 ms); band = half the spread"
)
# What a newcomer cannot know: commit trailer keys, apply's internal states, the probe's units of work.
JARGON = ("Warp-Fix-", "accepted state", "cold+warm sample", "reused measurement", "last measurement, reused")
# A before -> after timing not followed by what it means against the noise band.
BARE_TIMING = re.compile(r"\d (?:→|->) [\d,.]+ ms(?! \([^)]*(?:noise band|not measured side by side))")
BOX = re.compile("[\u2500-\u257f]")  # the table's lines


# --- a recorded apply run on the demo's example ----------------------------------------------------------------


def timing(metric: str, before: float, after: float, band: float) -> TimingDelta:
    return TimingDelta(metric, Stat(before, 10.0, [before]), Stat(after, 10.0, [after]), after - before, band, BAND_HOW)


def fix(fix_id: str, slug: str, title: str, file: str) -> Fix:
    return Fix(fix_id, slug, title, "", SAFE, None, files=[file])


FIXES = (
    fix("F1", "cache-discarded", "Stop clearing the kernel cache at startup", "terrain/__main__.py"),
    fix("F2", "late-module-options", "Set erosion's module options at module scope", "terrain/erosion.py"),
    fix("F3", "unique-on-stable", "Build the box filters in one shared module", "terrain/filters.py"),
)


def demo_ledger() -> Ledger:
    """Two fixes kept (one on its warm builds, one on its module identities), one dropped as inconclusive, and
    the branch measured against its base; reasons as apply records them, the dropped one quoting its timing."""
    cache = Numbers(
        IMPROVED, ["structure shrank: warm builds"], {IDENTITIES.field: (5, 5), WARM_BUILDS.field: (5, 0)},
        [timing(COLD_MODULE.label, 2450, 2430, 90), timing(COMPILE_ELAPSED.label, 2900, 2880, 95),
         timing(WARM_MODULE.label, 2400, 30, 80)],
        True, True, [], [], per_arm=1, decided_by=[WARM_MODULE.field, WARM_BUILDS.field],
    )  # fmt: skip
    # kept on its count, against the earlier runs of the code without it (reused): no timing claim
    options = Numbers(
        IMPROVED, ["structure shrank: module identities built"], {IDENTITIES.field: (5, 4), WARM_BUILDS.field: (0, 0)},
        [timing(COLD_MODULE.label, 2430, 1990, 90), timing(COMPILE_ELAPSED.label, 2880, 2400, 95)],
        True, True, [], [], per_arm=1, decided_by=[IDENTITIES.field], side_by_side=False,
    )  # fmt: skip
    noise = timing(COLD_MODULE.label, 1990, 1970, 90)
    shared = Numbers(
        INCONCLUSIVE, [f"no structural change and {noise.line()}"], {IDENTITIES.field: (4, 4)},
        [noise, timing(COMPILE_ELAPSED.label, 2400, 2390, 95)], True, True, [], [], per_arm=1,
        decided_by=[COLD_MODULE.field],
    )  # fmt: skip
    total = Numbers(
        IMPROVED, [], {IDENTITIES.field: (5, 4), WARM_BUILDS.field: (5, 0)},
        [timing(COLD_MODULE.label, 2450, 1990, 90), timing(COMPILE_ELAPSED.label, 2900, 2880, 95)],
        True, True, [], [], per_arm=1,
    )  # fmt: skip
    tests = TestSummary("python -m unittest", True, 0, 2.1)
    entries = [
        Entry(f.id, f.slug, f.title, SAFE, outcome, reason, f.files, commit, numbers, tests)
        for f, outcome, reason, commit, numbers in (
            (FIXES[0], KEPT, "; ".join(cache.reasons), "a" * 40, cache),
            (FIXES[1], KEPT, "; ".join(options.reasons), "b" * 40, options),
            (FIXES[2], DROPPED, "; ".join(["inconclusive", *shared.reasons]), None, shared),
        )
    ]
    return Ledger(
        "wf/startup", BASE, "main", COMMAND, "", "interleaved", status="complete", entries=entries, total=total,
        total_note="measured: 2 fixes kept; a fresh interleaved measurement of the branch head against the base "
        "(warp-fix log shows these figures; each commit's own figures are against its predecessor)",
        probe_calls=9, probe_seconds=41.0, test_seconds=6.3, total_seconds=55.0,
    )  # fmt: skip


def nothing_to_fix() -> Ledger:
    """The plan found no fix to try: every module is built once, which bake can take off the cold start."""
    ledger = Ledger("wf/startup", BASE, "main", COMMAND, "", "interleaved", status="complete", probe_calls=1)
    ledger.total_note = nothing_kept_note(ledger)
    ledger.remaining = Remaining(identities=2, cold_module_ms=980.0)
    return ledger


def branch_log(ledger: Ledger) -> BranchLog:
    """The kept commits as `warp-fix log` reads them back: their trailers, and the ledger beside them."""
    fixes = {f.id: f for f in FIXES}
    rows = [
        CommitRow(e.commit, e.title, e.files, commit_trailers(fixes[e.fix_id], e.numbers))
        for e in ledger.of(KEPT)
        if e.commit and e.numbers
    ]
    log = BranchLog(ledger.branch or "", BASE, "recorded by apply (main)", rows)
    attach_ledger(log, ledger)
    return log


def demo_end(ledger: Ledger, width: int = WIDTH) -> Console:
    """What the demo prints after its steps: apply's summary, then (when a fix was kept) the log table."""
    console = Console(file=io.StringIO(), record=True, width=width, color_system="truecolor", force_terminal=True)
    print_ledger(ledger, console)
    if ledger.of(KEPT):
        print_log(branch_log(ledger), console)
    return console


def screen(ledger: Ledger, width: int = WIDTH) -> str:
    return demo_end(ledger, width).export_text()


def words(text: str) -> set[str]:
    return set(BOX.sub(" ", text).split())


def reason_cells(text: str) -> list[str]:
    """The dim second line of each row's last cell in apply's table, read where nothing wraps."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    titles = {f.title for f in FIXES}
    return [row[3] for row in rows if len(row) == 4 and row[3] and row[3] not in titles]


# --- what a newcomer reads ----------------------------------------------------------------------------------------


def test_every_timing_says_whether_it_is_beyond_the_noise_band() -> None:
    """Each before -> after in milliseconds, in the table, the total and the log, is followed by how far it
    moved against its noise band, or that it stayed inside it, or that it was not measured side by side (a fix
    kept on its counts): never a bare pair that reads as a win or a loss."""
    text = screen(demo_ledger(), width=1000)  # wide: each timing on one line
    assert BARE_TIMING.findall(text) == []
    assert "cold module work 2450 → 2430 ms (inside the ±90 ms noise band: not significant)" in text
    assert "cold module work 2430 -> 1990 ms (not measured side by side)" in text  # the log's row for F2
    assert "cold module work 2430 → 1990 ms (not measured side by side)" in text  # apply's row for F2
    assert "kept for warm module work 2400 -> 30 ms (-2370 ms, beyond the ±80 ms noise band)" in text
    assert "total vs baseline: module identities built 5 -> 4, warm builds 5 -> 0; cold module work" in text


def test_each_measured_cell_gives_a_figure_once_and_only_figures_that_say_something() -> None:
    """The "kept for" line is not repeated below it, and a count that did not move ("5 → 5") or a timing not
    measured ("n/a") is left to the ledger: apply's table and the log's read the same."""
    text = screen(demo_ledger(), width=1000)
    kept_for_identities = "kept for module identities built 5 -> 4"
    assert text.count(kept_for_identities) == 2  # apply's row for F2, and the log's
    assert "module identities built 5 → 4" not in text  # not again under it
    assert "5 → 5" not in text and "5 -> 5" not in text and "n/a" not in text
    assert text.count("cold module work 2450 → 2430 ms (inside the ±90 ms noise band: not significant)") == 1


def test_no_internal_jargon() -> None:
    """Labels a newcomer knows ("warm builds", "cold module work"), not trailer keys or field names, and none of
    apply's words for its own bookkeeping."""
    text = screen(demo_ledger(), width=1000)
    for term in JARGON:
        assert term not in text
    for metric in (*STRUCTURE, *TIMING):
        assert metric.trailer is None or metric.trailer not in text
        assert "_" not in metric.field or metric.field not in text


def test_fits_the_console_without_splitting_a_word() -> None:
    """At 100 columns every line fits and every word on screen is whole: cells wrap between words."""
    text = screen(demo_ledger())
    assert max(cell_len(line) for line in text.splitlines()) <= WIDTH
    assert words(text) <= words(screen(demo_ledger(), width=1000))


def test_each_reason_is_one_short_sentence() -> None:
    """Why a fix was kept or dropped fits one line: the figures stand in the measured column beside it."""
    reasons = reason_cells(screen(demo_ledger(), width=1000))
    assert reasons == [
        "structure shrank: warm builds",
        "structure shrank: module identities built",
        "inconclusive; no structural change and cold module work inside its noise band",
    ]
    for reason in reasons:
        assert len(reason) < WIDTH and ". " not in reason


def test_nothing_to_fix_prints_no_empty_table() -> None:
    """With nothing to fix the newcomer reads why and what is left, not the headers of an empty table."""
    text = screen(nothing_to_fix())
    assert BOX.search(text) is None
    assert "no fix kept, no branch was left (wf/startup is free for a rerun): the plan had no fix to try" in text
    assert "no redundant build left: 2 module identities" in text
    assert "warp-fix log" not in text


def test_when_every_fix_is_dropped_the_demo_says_each_reason_in_brief(tmp_path: Path) -> None:
    """The demo's own lines under "no fix was kept": each fix with its reason as the table says it, not the
    measurement's full record."""
    ledger = demo_ledger()
    ledger.entries = ledger.of(DROPPED)
    json_file, _ = save_ledger(ledger, tmp_path)
    assert why_nothing_was_kept(json_file) == [
        "F3 Build the box filters in one shared module: dropped, "
        "inconclusive; no structural change and cold module work inside its noise band"
    ]


@needs_chromium
@pytest.mark.parametrize("ledger", [demo_ledger, nothing_to_fix], ids=["two-kept-one-dropped", "nothing-to-fix"])
def test_screenshot_in_headless_chromium_is_not_blank(tmp_path: Path, ledger: Callable[[], Ledger]) -> None:
    """The summary exported as SVG, as a terminal shows it, renders in Chromium to a picture with text on it."""
    svg = tmp_path / "summary.svg"
    svg.write_text(demo_end(ledger()).export_svg(title="warp-fix demo"))
    shot = tmp_path / "summary.png"
    chromium(svg.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1300,1400")
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1300, 1400)
    assert len(set(pixels)) > 32  # many distinct values: not one flat colour
