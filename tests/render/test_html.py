"""The HTML pages: structure (parsed), a real render in headless Chromium, and `measure --html` end to end."""

from __future__ import annotations

import os
import subprocess
from html.parser import HTMLParser

import pytest

from tests.conftest import PYTHON, REPO, TWO_STAGE, write_app
from tests.render.chromium import chromium, needs_chromium, png_pixels
from warp_fix.apply.ledger import Numbers
from warp_fix.apply.review import BranchLog, CommitRow
from warp_fix.apply.trailers import Change, CommitTrailers
from warp_fix.compare import IMPROVED, TimingDelta
from warp_fix.metrics import COLD_MODULE, IDENTITIES
from warp_fix.model import Finding, Fix, Plan
from warp_fix.render.html import render_log_html, render_report_html
from warp_fix.report import (
    SCHEMA_VERSION,
    ModuleBuild,
    Output,
    Rebuild,
    RebuildReason,
    Report,
    Sample,
    Site,
    Stat,
    Summary,
    Trace,
)

IDS = ("timeline", "module-costs", "findings", "plan")


# --- data built by hand ---------------------------------------------------------------------------------------


def build(seq: int, t_ms: float, module: str, hash_: str, ms: float, status: str = "compiled") -> ModuleBuild:
    return ModuleBuild(
        seq, t_ms, module, hash_, "cpu", 1, status, ms, ms * 0.9, {}, ["k"], [], None, Site("app.py", seq, "main")
    )


def stat(value: float) -> Stat:
    return Stat(value, 0.0, [value])


def make_report() -> Report:
    builds = [
        build(1, 100.0, "__main__", "aaaaaaa1", 400.0),
        build(2, 600.0, "<gen>_module", "bbbbbbb2", 50.0, status="cached"),
        build(3, 700.0, "__main__", "ccccccc3", 380.0),
    ]
    reason = RebuildReason("kernel-added", "kernel 'shift' added after the previous build", Site("app.py", 17, "main"))
    rebuild = Rebuild("__main__", "cpu", "aaaaaaa1", "ccccccc3", 3, 380.0, [reason])
    summary = Summary(stat(830), stat(750), stat(2000), stat(1200), stat(800), stat(0), 3, 2, 4096, 0, 0)
    sample = Sample(0, True, None, 2000, 1200, 830, 0, 750, 0, 0, "x", 3, 4096, 0, 0)
    return Report(
        SCHEMA_VERSION,
        ["python", "app.py"],
        "/tmp/app",
        None,
        "1.19.0",
        "cpu",
        [sample],
        summary,
        Trace(warp_version="1.19.0", builds=builds, launch_count=2),
        Trace(),
        [rebuild],
        Output("x", "", 0, 0, None),
    )


def make_plan() -> Plan:
    findings = [
        Finding("kernel-after-load", "fired", "kernel defined after its module loaded", "shift at app.py:14"),
        Finding("cache-discarded", "ruled-out", "kernel cache thrown away", "no clear_kernel_cache call"),
    ]
    fix = Fix(
        "F1", "kernel-after-load", "Define shift before the first launch", "Move it up.", "safe", "move_kernel",
        files=["app.py"], lines=["app.py:14"], expected="removes 1 of 3 builds; ~380 ms",
    )  # fmt: skip
    return Plan(["python", "app.py"], fixes=[fix], findings=findings, checked=["kernel-after-load", "cache-discarded"])


def make_log() -> BranchLog:
    ours = CommitTrailers(
        "kernel-after-load", "F1", "IMPROVED", 1, {COLD_MODULE: Change(830, 450), IDENTITIES: Change(3, 2)}
    )
    rows = [
        CommitRow("a" * 40, "Define shift before the first launch", ["app.py"], ours),
        CommitRow("b" * 40, "Unrelated <edit>", ["README.md"], None),
    ]
    return BranchLog("wf/startup", "c" * 40, "recorded by apply (main)", rows)


def measured_log() -> BranchLog:
    """make_log() with apply's own ledger: the total it measured (inside the noise band) and what F1 was kept for."""
    log = make_log()
    timing = TimingDelta(COLD_MODULE.label, Stat(830.0, 20.0, [830.0]), Stat(800.0, 20.0, [800.0]), -30.0, 120.0)
    log.ledger_total = Numbers(
        IMPROVED, [], {IDENTITIES.field: (3, 2), "lto_artifacts": (0, 0)}, [timing], True, True, [], [], per_arm=1
    )
    log.ledger_commits = ["a" * 40]
    log.headlines = {"a" * 40: "module identities built 3 -> 2"}
    return log


# --- parsing --------------------------------------------------------------------------------------------------


class Page(HTMLParser):
    """Start tags with their attributes, the text of each <title>, and all text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.titles: list[str] = []
        self.text: list[str] = []
        self._in_title = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_title:
            self.titles.append(data)

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.tags if "id" in attrs}

    def with_class(self, name: str) -> list[dict[str, str]]:
        return [attrs for _, attrs in self.tags if name in attrs.get("class", "").split()]


def test_report_page_has_one_bar_per_build_and_marks_the_rebuild_with_its_reason():
    page = Page(render_report_html(make_report()))
    assert {"summary", "timeline", "module-costs", "rebuilds"} <= page.ids()
    builds = page.with_class("build")
    assert [b["data-seq"] for b in builds] == ["1", "2", "3"]
    assert [b["data-seq"] for b in page.with_class("rebuild")] == ["3"]
    assert len(page.with_class("rebuild-mark")) == 2  # the bar and the legend swatch
    assert any("rebuilt" in t and "kernel 'shift' added" in t and "app.py:17" in t for t in page.titles)
    assert len(page.with_class("module-cost")) == 2


def test_report_page_header_shows_command_version_and_medians():
    text = " ".join(Page(render_report_html(make_report())).text)
    assert "python app.py" in text and "Warp 1.19.0" in text
    assert "830 ms" in text and "cold module work (median)" in text


def test_text_is_escaped_and_nothing_is_fetched():
    html = render_report_html(make_report(), make_plan())
    page = Page(html)
    assert "gen" not in {tag for tag, _ in page.tags}
    assert any("<gen>_module" in t for t in page.text)
    assert "&lt;gen&gt;" in html
    assert "http://" not in html and "https://" not in html


def test_plan_page_lists_every_finding_and_the_fixes():
    page = Page(render_report_html(make_report(), make_plan()))
    assert set(IDS) <= page.ids()
    text = " ".join(page.text)
    assert "kernel defined after its module loaded" in text and "ruled-out" in text
    assert "F1" in text and "removes 1 of 3 builds" in text and "app.py:14" in text


def test_log_page_has_before_and_after_bars_per_warp_fix_commit():
    html = render_log_html(make_log())
    page = Page(html)
    assert "commits" in page.ids()
    assert len(page.with_class("commit")) == 2
    assert len(page.with_class("before")) == len(page.with_class("after")) == 1
    text = " ".join(page.text)
    assert "before 830 ms" in text and "after 450 ms" in text and "identities 3 → 2" in text
    assert "Unrelated <edit>" in text and "not made by warp-fix" in text
    assert "cold module work 830 → 450 ms" in text and "module identities built 3 → 2" in text  # labels, with units
    assert "Cold-Module-Ms" not in html and "Identities" not in html  # not the trailer keys
    assert "http://" not in html and "https://" not in html


def test_report_without_builds_or_summary_still_renders():
    report = make_report()
    report.trace.builds.clear()
    report.rebuilds.clear()
    report.summary = None
    page = Page(render_report_html(report))
    assert {"timeline", "module-costs"} <= page.ids()
    assert "No sample succeeded" in " ".join(page.text)


# --- a real render ----------------------------------------------------------------------------------------------


@needs_chromium
def test_page_renders_in_headless_chromium(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_report_html(make_report(), make_plan()))
    shot = tmp_path / "shot.png"
    chromium(page.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600")
    assert shot.exists() and shot.stat().st_size > 10_000
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 1600)
    assert len(set(pixels)) > 32  # many distinct values: not one flat colour
    dom = chromium(page.as_uri(), tmp_path / "profile", "--dump-dom").stdout
    for element_id in IDS:
        assert f'id="{element_id}"' in dom
    assert dom.count('class="build ') == 3


@needs_chromium
def test_log_page_reads_right_in_headless_chromium(tmp_path):
    """What a newcomer sees: labels (not trailer keys), each measured timing against its noise band, what each
    commit was kept for, and no card for a count that was 0 before and after."""
    page = tmp_path / "log.html"
    page.write_text(render_log_html(measured_log()))
    shot = tmp_path / "log.png"
    chromium(page.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,700")
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 700) and len(set(pixels)) > 32
    dom = chromium(page.as_uri(), tmp_path / "profile", "--dump-dom").stdout
    assert "cold module work" in dom and "Cold-Module-Ms" not in dom
    assert "inside the ±120 ms noise band: not significant" in dom
    assert "kept for module identities built 3 → 2" in dom
    assert "LTO artifacts" not in dom  # 0 → 0 says nothing
    assert "measured by apply: branch head against its base, interleaved, n=1 per arm" in dom


# --- the command line -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_measure_html_writes_a_page_with_one_bar_per_build(tmp_path):
    command = write_app(tmp_path, TWO_STAGE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [PYTHON, "-m", "warp_fix", "measure", "--html", "out.html", "--samples", "1", "--", *command],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = Page((tmp_path / "out.html").read_text())
    assert len(page.with_class("build")) == 2
    (rebuild,) = page.with_class("rebuild")
    assert rebuild["data-seq"] == page.with_class("build")[1]["data-seq"]
    assert any("shift" in t and "rebuilt" in t for t in page.titles)
