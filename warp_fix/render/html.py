"""Self-contained HTML pages (inline CSS and SVG, nothing fetched at view time) of a Report, a Plan and a log."""

from __future__ import annotations

import math
from collections import defaultdict
from html import escape
from typing import TYPE_CHECKING

from warp_fix.metrics import COLD_MODULE, IDENTITIES, Metric
from warp_fix.render.plan_view import answer, built_nothing, declined
from warp_fix.wording import counted

if TYPE_CHECKING:  # kept out of the import path of `measure`
    from warp_fix.apply.review import BranchLog, CommitRow
    from warp_fix.model import Plan
    from warp_fix.report import ModuleBuild, Rebuild, Report, Stat

WIDTH = 1160  # SVG user units; the page scales the drawings to its width
LABEL_W = 300  # room for the row labels left of the bars
ROW_H = 22
BAR_H = 14
AXIS_H = 28
STATUS_COLOURS = {"compiled": "#e8743b", "cached": "#2e9e5b", "error": "#d23a3a"}
FINDING_COLOURS = {"fired": "#d23a3a", "ruled-out": "#2e9e5b", "not-applicable": "#8a8f98"}

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d232b; background: #f5f6f8;
       margin: 0; padding: 24px 32px; }
main { max-width: 1200px; margin: 0 auto; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 0 0 10px; }
section, header { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: 16px 20px;
                  margin-bottom: 18px; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; background: #eef0f3; padding: 1px 4px;
       border-radius: 3px; word-break: break-all; }
.muted { color: #68707c; } .warn { color: #9a5b00; }
dl.stats { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px 20px; margin: 12px 0 0; }
dl.stats div { background: #f7f8fa; border-radius: 6px; padding: 6px 10px; }
dl.stats dt { font-size: 12px; color: #68707c; } dl.stats dd { margin: 0; font-size: 16px; font-weight: 600; }
svg { display: block; width: 100%; height: auto; font: 12px system-ui, sans-serif; }
svg .label { fill: #1d232b; } svg .value { fill: #3b424c; font-size: 11px; } svg .tick { fill: #68707c; }
svg .grid { stroke: #e6e9ed; } svg .rebuild-mark { stroke: #1d232b; stroke-width: 1.5; }
.legend { display: flex; flex-wrap: wrap; gap: 16px; margin: 8px 0 0; font-size: 13px; }
.swatch { display: inline-block; width: 14px; height: 12px; border-radius: 2px; vertical-align: -1px;
          margin-right: 5px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid #e6e9ed; }
th { background: #f7f8fa; font-weight: 600; }
.status { font-weight: 600; white-space: nowrap; }
ul.reasons { margin: 8px 0 0; padding-left: 20px; }
"""

HATCH = (
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    '<rect width="3" height="6" fill="#fff" fill-opacity="0.45"/></pattern></defs>'
)


# --- entry points -------------------------------------------------------------------------------------------


def render_report_html(report: Report, plan: Plan | None = None) -> str:
    """The page for `measure` (and, given the plan, for `plan`): summary, timeline, costs, findings, fixes."""
    sections = [summary_header(report, "plan" if plan else "measure"), timeline(report), module_costs(report)]
    if plan is not None:
        sections += ([] if built_nothing(plan) else [findings_table(plan)]) + [plan_table(plan)]
    return page(f"warp-fix {'plan' if plan else 'measure'}: {' '.join(report.command)}", sections)


def render_log_html(log: BranchLog) -> str:
    """The page for `log`: one before/after pair of bars per commit, from the commit trailers."""
    return page(f"warp-fix log: {log.branch}", [log_header(log), commits_chart(log)])


def page(title: str, sections: list[str]) -> str:
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body><main>\n{body}\n</main></body></html>\n"
    )


# --- report sections ----------------------------------------------------------------------------------------


def summary_header(report: Report, command_name: str) -> str:
    warnings = "".join(f'<p class="warn">warning: {escape(w)}</p>' for w in report.warnings)
    head = (
        f'<header id="summary"><h1>warp-fix {command_name}</h1>'
        f"<div><code>{escape(' '.join(report.command))}</code></div>"
        f'<div class="muted">Warp {escape(report.warp_version or "?")} · backend {escape(report.backend)} · '
        f"{counted(len(report.samples), 'sample')} · label {escape(report.label or '-')}</div>{warnings}"
    )
    summary = report.summary
    if summary is None:
        return head + '<p class="warn">No sample succeeded: nothing measured.</p></header>'
    elapsed = f"n/a ({summary.compile_elapsed_na})" if summary.compile_elapsed_na else _stat(summary.compile_elapsed_ms)
    stats = [
        ("cold module work (median)", _stat(summary.cold_module_ms)),
        ("native compile (median)", _stat(summary.native_compile_ms)),
        ("cold wall (median)", _stat(summary.cold_wall_ms)),
        ("warm wall (median)", _stat(summary.warm_wall_ms)),
        ("compile elapsed, cold − warm", elapsed),
        ("identities built / modules", f"{summary.identities} / {summary.modules}"),
        ("rebuilds / warm builds", f"{len(report.rebuilds)} / {summary.warm_builds}"),
        ("launches", f"{report.trace.launch_count:,}"),
    ]
    cells = "".join(f"<div><dt>{escape(name)}</dt><dd>{escape(value)}</dd></div>" for name, value in stats)
    return f'{head}<dl class="stats">{cells}</dl></header>'


def timeline(report: Report) -> str:
    """One bar per build on a time axis; rebuilds outlined and hatched, their reasons in the tooltip."""
    builds = sorted(report.trace.builds, key=lambda b: (b.t_ms, b.seq))
    if not builds:
        return '<section id="timeline"><h2>Module builds over time</h2><p>No module was built.</p></section>'
    rebuilds = {r.build_seq: r for r in report.rebuilds}
    end = max(b.t_ms + b.module_ms for b in builds) or 1.0
    scale = (WIDTH - LABEL_W - 80) / end  # room right of the last bar for its value
    height = AXIS_H + ROW_H * len(builds)
    rows = [_build_row(b, i, scale, rebuilds.get(b.seq)) for i, b in enumerate(builds)]
    svg = (
        f'<svg viewBox="0 0 {WIDTH} {height}" role="img" aria-label="module builds over time">{HATCH}'
        f"{_time_axis(end, scale, height)}{''.join(rows)}</svg>"
    )
    return (
        f'<section id="timeline"><h2>Module builds over time ({len(builds)})</h2>'
        f'<div class="muted">x: ms since the tracer started (first good cold run); bar width: module build time'
        f"</div>{svg}{_legend(bool(rebuilds))}{_rebuild_list(report.rebuilds)}</section>"
    )


def module_costs(report: Report) -> str:
    """Summed build time per module, slowest first."""
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for build in report.trace.builds:
        totals[build.module] += build.module_ms
        counts[build.module] += 1
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    if not ranked:
        return '<section id="module-costs"><h2>Cost per module</h2><p>No module was built.</p></section>'
    scale = (WIDTH - LABEL_W - 140) / (ranked[0][1] or 1.0)
    rows = []
    for i, (module, ms) in enumerate(ranked):
        y = i * ROW_H
        note = f"{_ms(ms)} · {counted(counts[module], 'build')}"
        rows.append(
            f'<g class="module-cost"><title>{escape(module)}: {note}</title>'
            f'<text class="label" x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{escape(_clip(module))}</text>'
            f'<rect x="{LABEL_W}" y="{y + 4}" width="{max(ms * scale, 2):.1f}" height="{BAR_H}" rx="2" '
            f'fill="#4a78c2"/><text class="value" x="{LABEL_W + max(ms * scale, 2) + 6:.1f}" y="{y + 15}">'
            f"{note}</text></g>"
        )
    svg = f'<svg viewBox="0 0 {WIDTH} {ROW_H * len(ranked) + 6}" role="img">{"".join(rows)}</svg>'
    return f'<section id="module-costs"><h2>Cost per module (summed build time)</h2>{svg}</section>'


def findings_table(plan: Plan) -> str:
    rows = "".join(
        f"<tr><td>{escape(f.title)}<div class='muted'><code>{escape(f.slug)}</code></div></td>"
        f'<td class="status" style="color:{FINDING_COLOURS.get(f.status, "#1d232b")}">{escape(f.status)}</td>'
        f"<td>{escape(f.reason)}</td></tr>"
        for f in plan.findings
    )
    return (
        f'<section id="findings"><h2>Findings: every mechanism checked ({len(plan.findings)})</h2>'
        f"<table><thead><tr><th>mechanism</th><th>status</th><th>reason</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def plan_table(plan: Plan) -> str:
    warnings = "".join(f'<p class="warn">warning: {escape(w)}</p>' for w in plan.warnings)
    if not plan.fixes:
        body = f"<p>{escape(answer(plan))}</p>"
    else:
        rows = "".join(
            f"<tr><td><b>{escape(fix.id)}</b></td><td>{escape(fix.safety)}</td>"
            f"<td>{escape(fix.title)}<div class='muted'>{escape(fix.description)}</div></td>"
            f"<td>{escape(fix.expected)}</td><td>{'<br>'.join(escape(x) for x in fix.lines or fix.files)}</td></tr>"
            for fix in plan.fixes
        )
        body = (
            "<table><thead><tr><th>fix</th><th>safety</th><th>what</th><th>expected</th><th>changes</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
        )
    reasons = "".join(f"<li><code>{escape(n.slug)}</code>: {escape(n.reason)}</li>" for n in declined(plan))
    if reasons:
        body += f"<h3>Not proposed</h3><ul>{reasons}</ul>"
    return f'<section id="plan"><h2>Plan ({counted(len(plan.fixes), "fix", "fixes")})</h2>{warnings}{body}</section>'


# --- log sections -------------------------------------------------------------------------------------------


def log_header(log: BranchLog) -> str:
    """The branch's totals as cards, each timing with where it stands against its noise band."""
    cards = []
    for metric, (before, after) in log.shown_totals().items():
        said = log.total_significance(metric)
        note = f'<div class="muted">{escape(said)}</div>' if said else ""
        cards.append(
            f"<div><dt>{escape(metric.label)}</dt><dd>{_value(metric, before)} → {_value(metric, after)}"
            f"{' ' + metric.unit if metric.unit else ''}</dd>{note}</div>"
        )
    return (
        f'<header id="summary"><h1>warp-fix log: {escape(log.branch)}</h1>'
        f'<div class="muted">{counted(len(log.rows), "commit")} since <code>{escape(log.base[:12])}</code>, '
        f"{escape(log.base_source)} · {len(log.ours)} made by warp-fix · totals {escape(log.totals_source())}</div>"
        f'<dl class="stats">{"".join(cards)}</dl></header>'
    )


def commits_chart(log: BranchLog) -> str:
    """Per commit: cold module ms before (grey) and after (blue), with the identities change."""
    pairs = [row.change(COLD_MODULE) for row in log.rows]
    top = max((max(p) for p in pairs if p), default=0.0) or 1.0
    scale = (WIDTH - LABEL_W - 200) / top
    rows = [
        _commit_rows(row, pair, i, scale, log.headlines.get(row.sha, ""))
        for i, (row, pair) in enumerate(zip(log.rows, pairs))
    ]
    height = 3 * ROW_H * len(log.rows) + 6
    svg = f'<svg viewBox="0 0 {WIDTH} {height}" role="img">{"".join(rows)}</svg>' if log.rows else ""
    legend = (
        '<div class="legend"><span><i class="swatch" style="background:#b7bdc6"></i>before the commit</span>'
        '<span><i class="swatch" style="background:#4a78c2"></i>after (cold module ms, median)</span></div>'
    )
    return (
        f'<section id="commits"><h2>Commits: cold module work before → after</h2>'
        f"{svg or '<p>No commits.</p>'}{legend}</section>"
    )


# --- pieces -------------------------------------------------------------------------------------------------


def _build_row(build: ModuleBuild, index: int, scale: float, rebuild: Rebuild | None) -> str:
    y = AXIS_H + index * ROW_H
    x = LABEL_W + build.t_ms * scale
    width = max(build.module_ms * scale, 2.0)
    tip = f"{build.module} [{build.hash[:7]}] on {build.device}, block_dim {build.block_dim}: {build.status}, "
    tip += f"{_ms(build.module_ms)} at {_ms(build.t_ms)}" + (f"; triggered at {build.site}" if build.site else "")
    if rebuild:
        tip += f"\nrebuilt ({rebuild.from_hash[:7]} → {rebuild.to_hash[:7]}): " + _reasons(rebuild)
    colour = STATUS_COLOURS.get(build.status, "#8a8f98")
    box = f'x="{x:.1f}" y="{y + 4}" width="{width:.1f}" height="{BAR_H}"'
    bar = f'<rect {box} rx="2" fill="{colour}"/>'
    if rebuild:
        bar += f'<rect class="rebuild-mark" {box} fill="url(#hatch)"/>'
    label = f"{_clip(build.module, 34)} · bd {build.block_dim if build.block_dim is not None else '-'}"
    return (
        f'<g class="build {escape(build.status)}{" rebuild" if rebuild else ""}" data-seq="{build.seq}">'
        f"<title>{escape(tip)}</title>"
        f'<text class="label" x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>{bar}'
        f'<text class="value" x="{x + width + 6:.1f}" y="{y + 15}">{_ms(build.module_ms)}</text></g>'
    )


def _time_axis(end: float, scale: float, height: int) -> str:
    step = _nice_step(end)
    ticks = []
    for i in range(int(end / step) + 1):
        x = LABEL_W + i * step * scale
        ticks.append(
            f'<line class="grid" x1="{x:.1f}" y1="{AXIS_H - 6}" x2="{x:.1f}" y2="{height}"/>'
            f'<text class="tick" x="{x:.1f}" y="{AXIS_H - 10}" text-anchor="middle">{i * step:,.0f} ms</text>'
        )
    return "".join(ticks)


def _legend(with_rebuilds: bool) -> str:
    items = [
        f'<span><i class="swatch" style="background:{colour}"></i>{status}</span>'
        for status, colour in STATUS_COLOURS.items()
    ]
    if with_rebuilds:
        items.append(
            '<span><svg width="16" height="12" style="display:inline;width:16px;vertical-align:-1px;margin-right:5px">'
            f'{HATCH.replace("hatch", "hatch-legend")}<rect x="1" y="1" width="14" height="10" fill="#e8743b"/>'
            '<rect class="rebuild-mark" x="1" y="1" width="14" height="10" fill="url(#hatch-legend)"/></svg>'
            "rebuild of a module already built (hover for why)</span>"
        )
    return f'<div class="legend">{"".join(items)}</div>'


def _rebuild_list(rebuilds: list[Rebuild]) -> str:
    if not rebuilds:
        return '<p class="muted">No module was built more than once.</p>'
    items = "".join(
        f"<li><b>{escape(r.module)}</b> {escape(r.from_hash[:7])} → {escape(r.to_hash[:7])} "
        f"({_ms(r.module_ms)}): {escape(_reasons(r))}</li>"
        for r in rebuilds
    )
    return f'<ul class="reasons" id="rebuilds">{items}</ul>'


def _commit_rows(row: CommitRow, pair: tuple[float, float] | None, index: int, scale: float, headline: str) -> str:
    y = 3 * ROW_H * index
    subject = row.subject if len(row.subject) <= 44 else row.subject[:43] + "…"
    identities = row.text(IDENTITIES).replace("->", "→")
    mechanism = row.trailers.mechanism if row.trailers else ""
    detail = " · ".join(x for x in (row.sha[:8], mechanism) if x)
    kept_for = f"kept for {headline}" if headline else identities and f"identities {identities}"
    label = (
        f'<text class="label" x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{escape(subject)}</text>'
        f'<text class="value" x="{LABEL_W - 8}" y="{y + 33}" text-anchor="end">{escape(detail)}</text>'
        f'<text class="value" x="{LABEL_W}" y="{y + 55}">{escape(kept_for.replace("->", "→"))}</text>'
    )
    tip = f"{row.sha[:10]} {row.subject}\n{', '.join(row.files)}"
    if pair is None:
        why = "not made by warp-fix" if not row.by_warp_fix else "no cold module timing in its trailers"
        label += f'<text class="value" x="{LABEL_W}" y="{y + 15}">{why}</text>'
    else:
        tip += f"\ncold module work {pair[0]:,.0f} → {pair[1]:,.0f} ms"
        if row.trailers is not None and not row.trailers.side_by_side:
            tip += " (not measured side by side)"
        label += _before_after_bars(pair, y, scale)
    return f'<g class="commit" data-sha="{escape(row.sha)}"><title>{escape(tip)}</title>{label}</g>'


def _before_after_bars(pair: tuple[float, float], y: int, scale: float) -> str:
    bars = []
    for offset, ms, colour, name in ((0, pair[0], "#b7bdc6", "before"), (ROW_H - 4, pair[1], "#4a78c2", "after")):
        width = max(ms * scale, 2.0)
        bars.append(
            f'<rect class="{name}" x="{LABEL_W}" y="{y + 4 + offset}" width="{width:.1f}" height="{BAR_H}" rx="2" '
            f'fill="{colour}"/><text class="value" x="{LABEL_W + width + 6:.1f}" y="{y + 15 + offset}">'
            f"{name} {_ms(ms)}</text>"
        )
    return "".join(bars)


def _reasons(rebuild: Rebuild) -> str:
    return "; ".join(r.detail + (f" ({r.site})" if r.site else "") for r in rebuild.reasons) or "reason unknown"


def _nice_step(span: float) -> float:
    """A 1/2/5 x 10^k tick step giving at most about eight ticks."""
    raw = span / 8
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _value(metric: Metric, value: float) -> str:
    """Thousands separated; kernel times (under 100 ms) to three significant digits."""
    return metric.format(value) if metric.timing and abs(value) < 100 else f"{value:,.0f}"


def _stat(stat: Stat) -> str:
    return f"{_ms(stat.median)} ± {stat.mad:,.0f} (n={len(stat.values)})"


def _ms(ms: float) -> str:
    return f"{ms:,.1f} ms" if abs(ms) < 10 else f"{ms:,.0f} ms"


def _clip(text: str, limit: int = 42) -> str:
    """Shorten in the middle: generated module names differ at the end."""
    keep = (limit - 1) // 2
    return text if len(text) <= limit else f"{text[:keep]}…{text[-keep:]}"
