"""The output model: which printed numbers must stay identical, which may move a little, which are timings.

A program's output is the same when its text is the same and its numbers behave as they did in the
baseline's own runs (two cold+warm pairs: four runs). Learned position by position:

- the same token in every baseline run: **exact**, it must stay identical;
- a relative spread `(high - low) / |value|` of at most SMALL_SPREAD (a sum over GPU atomics, in its last
  digits): **tolerant**, it may move `max(SAFETY x the largest deviation seen, FLOOR x |value|)` from the
  baseline's value;
- a wider spread (a timing, a clock): **ignored**, and listed with its line.

`--output-tolerance REL` replaces the learned tolerances: every number, exact ones included, may move
`REL x |value|`; a number whose baseline runs already moved further than that stays ignored. Numbers beyond
the profiled ones (probe/output.py caps them) are compared through their digest: exactly, or not at all
when they varied in the baseline.

Example: `sum 5234.1294` / `5234.1302` / `5234.1289` / `5234.1297` over four runs gives a tolerance of
10 x 0.0008 around 5234.1294; `step took 3512.20 ms` / `1.83 ms` / ... is ignored; `elements 100000` is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from warp_fix.probe.output import MAX_NUMBERS, first_text_difference
from warp_fix.report import Output, OutputLine, OutputProfile

SMALL_SPREAD = 1e-3  # relative: float rounding moves the last digits; a timing moves percents
SAFETY = 10.0  # four runs underestimate the spread of a rounding error
FLOOR = 1e-9  # relative: the least a tolerant number may move (its observed deviation can be one ulp)
SHOWN = 20  # non-exact positions kept in the ledger's compact form


@dataclass
class NumberRule:
    """A number that varied between the baseline's runs: its tolerance, or None when it is ignored."""

    index: int
    line: int
    text: str  # the line, as the first baseline run printed it
    value: float  # the first baseline run's value
    low: float
    high: float
    tolerance: float | None

    def describe(self) -> str:
        return f"line {self.line} {shown(self.text)!r}: {self.rule()}"

    def rule(self) -> str:
        if self.tolerance is None:
            return f"ignored (varied {self.spread()} between baseline runs)"
        return f"within ±{self.tolerance:.3g} of {self.value:.10g}"

    def spread(self) -> str:
        return f"{self.low:.6g} .. {self.high:.6g}"


def shown(text: str, width: int = 80) -> str:
    """A printed line as a reader would recognise it: what a terminal leaves of a line redrawn with carriage
    returns (a progress bar), cut to `width` characters."""
    segments = [segment for segment in text.split("\r") if segment.strip()]
    line = (segments[-1] if segments else text).strip()
    return line if len(line) <= width else line[: width - 1] + "…"


def describe_line(rules: list[NumberRule]) -> str:
    """The non-exact numbers of one line in one entry: 'line 3 'step 1.2 ms, eta 4 s': ignored (varied 1.1 .. 9.8,
    3 .. 40 between baseline runs)'."""
    first = rules[0]
    where = f"line {first.line} {shown(first.text)!r}"
    if len(rules) == 1:
        return f"{where}: {first.rule()}"
    if first.tolerance is None:
        spreads = ", ".join(r.spread() for r in rules)
        return f"{where}: {len(rules)} numbers ignored (varied {spreads} between baseline runs)"
    return f"{where}: {len(rules)} numbers within {', '.join(r.rule().removeprefix('within ') for r in rules)}"


@dataclass
class OutputVerdict:
    same: bool | None  # None: not compared
    detail: str  # "identical", "within learned tolerance (...)", or what differs
    rules: list[str] = field(default_factory=list)  # the non-exact numbers, described (first few)
    brief: str = ""  # the detail without its parenthesis, for a table cell or a trailer ("" when it has none)

    @property
    def headline(self) -> str:
        return self.brief or self.detail


@dataclass
class OutputModel:
    reference: Output  # the baseline's output (its first run's numbers are the reference values)
    runs: int
    exact: int
    rules: dict[int, NumberRule]  # by position: the tolerant and the ignored numbers
    rest: str  # numbers beyond the profiled ones: "none" | "exact" | "ignored"
    override: float | None  # --output-tolerance

    @property
    def tolerant(self) -> list[NumberRule]:
        return [r for r in self.rules.values() if r.tolerance is not None]

    @property
    def ignored(self) -> list[NumberRule]:
        return [r for r in self.rules.values() if r.tolerance is None]

    def summary(self) -> str:
        rule = "learned" if self.override is None else f"--output-tolerance {self.override:g}"
        text = (
            f"{self.exact + len(self.rules)} numbers over {self.runs} baseline runs: {self.exact} exact"
            + ("" if self.override is None else f" (within {self.override:g} relative)")
            + f", {len(self.tolerant)} tolerant ({rule}), {len(self.ignored)} ignored (timings)"
        )
        if self.rest != "none":
            text += f"; numbers beyond the first {MAX_NUMBERS}: {self.rest}"
        return text

    def describe(self, limit: int = SHOWN) -> list[str]:
        """One entry per line and kind (ignored first, then tolerant), at most `limit`."""
        lines: dict[tuple[bool, int], list[NumberRule]] = {}
        for rule in sorted(self.rules.values(), key=lambda r: (r.tolerance is not None, r.index)):
            lines.setdefault((rule.tolerance is not None, rule.line), []).append(rule)
        return [describe_line(rules) for rules in list(lines.values())[:limit]]

    def record(self) -> OutputModelRecord:
        """The compact form kept in the ledger: counts and the first SHOWN non-exact numbers."""
        return OutputModelRecord(
            summary=self.summary(),
            runs=self.runs,
            exact=self.exact,
            tolerant=len(self.tolerant),
            ignored=len(self.ignored),
            rest=self.rest,
            override=self.override,
            rules=[
                RuleRecord(line=r.line, text=r.text, value=r.value, tolerance=r.tolerance, rule=r.describe())
                for r in sorted(self.rules.values(), key=lambda r: r.index)[:SHOWN]
            ],
        )


@dataclass(frozen=True)
class RuleRecord:
    """One non-exact number as the ledger keeps it: where it is printed, and the rule it is held to."""

    line: int
    text: str
    value: float
    tolerance: float | None  # None: ignored (a timing)
    rule: str


@dataclass(frozen=True)
class OutputModelRecord:
    """What every candidate's output was held to, as the ledger keeps it (`OutputModel.record()`)."""

    summary: str
    runs: int
    exact: int
    tolerant: int
    ignored: int
    rest: str
    override: float | None
    rules: list[RuleRecord]

    @property
    def lenient(self) -> bool:
        """Some numbers are held to a tolerance or ignored: worth saying beside the results."""
        return bool(self.tolerant or self.ignored)

    @classmethod
    def from_json(cls, data: dict) -> OutputModelRecord:
        return cls(**{**data, "rules": [RuleRecord(**rule) for rule in data["rules"]]})


class OutputModelError(ValueError):
    """The baseline's output text itself varies: there is nothing to learn numbers against."""


def learn(output: Output, override: float | None = None) -> OutputModel:
    profile = output.profile
    if profile is None:
        raise OutputModelError("the baseline has no output profile")
    if profile.text_difference:
        raise OutputModelError(f"the output text differs between runs ({profile.text_difference})")
    tokens = profile.tokens()
    lines = _line_of(profile)
    rules: dict[int, NumberRule] = {}
    for spread in profile.spreads:
        value = float(tokens[spread.index])
        deviation = max(abs(spread.high - value), abs(spread.low - value))
        line = lines[spread.index]
        if override is not None:
            tolerance = override * abs(value) if deviation <= override * abs(value) else None
        elif value != 0 and (spread.high - spread.low) / abs(value) <= SMALL_SPREAD:
            tolerance = max(SAFETY * deviation, FLOOR * abs(value))
        else:
            tolerance = None
        rules[spread.index] = NumberRule(spread.index, line.line, line.text, value, spread.low, spread.high, tolerance)
    rest = "none" if profile.numbers_total <= len(tokens) else ("ignored" if profile.rest_varies else "exact")
    return OutputModel(output, profile.runs, len(tokens) - len(rules), rules, rest, override)


def check(model: OutputModel, after: Output) -> OutputVerdict:
    """Does `after` print what the baseline printed, within the model? The first offence is named."""
    reference = model.reference
    profile, base = after.profile, reference.profile
    if profile is None or base is None:
        same = reference.sha256 == after.sha256 and after.deterministic is not False
        return OutputVerdict(same, "identical" if same else "program output changed")
    if profile.text_difference:
        return OutputVerdict(False, f"the candidate's output text varies between runs: {profile.text_difference}")
    if profile.skeleton_sha256 != base.skeleton_sha256:
        return OutputVerdict(False, f"output text changed: {first_text_difference(reference.head, after.head)}")
    offence = _first_offence(model, base, profile)
    if offence:
        return offence
    if model.rest == "exact" and (profile.rest_varies or profile.rest_sha256 != base.rest_sha256):
        return OutputVerdict(False, f"numbers beyond the first {MAX_NUMBERS} printed changed")
    rules = model.describe(5)
    if not model.rules and model.rest != "ignored" and after.sha256 == reference.sha256 and after.deterministic:
        return OutputVerdict(True, "identical", rules)
    rule = "learned tolerance" if model.override is None else f"--output-tolerance {model.override:g}"
    example = f": e.g. line {shown(model.ignored[0].text)!r}" if model.ignored else ""
    return OutputVerdict(
        True,
        f"within {rule} ({len(model.tolerant)} numbers tolerant, {len(model.ignored)} timings ignored{example})",
        rules,
        brief=f"within {rule}",
    )


def _first_offence(model: OutputModel, base: OutputProfile, after: OutputProfile) -> OutputVerdict | None:
    spreads = {s.index: s for s in after.spreads}
    for index, (old, new) in enumerate(zip(base.tokens(), after.tokens())):
        rule = model.rules.get(index)
        if rule is not None and rule.tolerance is None:
            continue
        spread = spreads.get(index)
        if rule is None and model.override is None:
            if old == new and spread is None:
                continue
            why = "exact in every baseline run"
        else:
            value = float(old)
            tolerance = rule.tolerance if rule is not None else (model.override or 0.0) * abs(value)
            seen = [float(new)] + ([spread.low, spread.high] if spread else [])
            deviation = max(abs(v - value) for v in seen)
            if deviation <= tolerance:
                continue
            why = f"|difference| {deviation:.3g} > tolerance {tolerance:.3g}"
        before_line, after_line = _line_of(base)[index], _line_of(after)[index]
        changed = (
            f"printed number changed beyond its tolerance on line {before_line.line}: "
            f"{before_line.text!r} -> {after_line.text!r}"
        )
        return OutputVerdict(False, f"{changed} ({old} -> {new}: {why})", brief=changed)
    return None


def _line_of(profile: OutputProfile) -> list[OutputLine]:
    """The line of each profiled number, by position."""
    return [line for line in profile.lines for _ in range(line.numbers)]
