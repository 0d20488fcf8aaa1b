"""The data types that pass between stages: Findings (diagnose), Fixes and the Plan (plan).

They sit in a module that imports no stage, so probe, scan, mechanisms, plan, apply and render can all use
them without importing each other. The other stage types live in modules of the same kind: `Report` in
`warp_fix/report.py`, `SourceIndex` in `warp_fix/scan/index.py`, `Ledger` in `warp_fix/apply/ledger.py`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, Generic, TypeVar

from codemods.specs import CodemodArgs, places_to_json

# --- Findings: the diagnosis of one mechanism ----------------------------------------------------------------

FIRED = "fired"
RULED_OUT = "ruled-out"
NOT_APPLICABLE = "not-applicable"


@dataclass
class Evidence:
    """One fact behind a finding: a runtime event or a static site."""

    kind: str  # "runtime" | "static"
    detail: str
    file: str | None = None
    line: int | None = None


FactsT = TypeVar("FactsT")


@dataclass
class Finding(Generic[FactsT]):
    """What one mechanism found. Renderers read the common fields; `facts` is the mechanism's own frozen
    dataclass (defined in its file), which its `propose` reads and plan --json serialises."""

    slug: str
    status: str  # FIRED | RULED_OUT | NOT_APPLICABLE
    title: str  # plain language, e.g. "options set after the module's first build"
    reason: str  # one line: why fired / what ruled it out
    evidence: list[Evidence] = field(default_factory=list)
    cost_ms: float = 0.0  # measured cold module work of the extra builds it causes
    extra_builds: int = 0
    all_builds: int = 0  # builds of the modules it concerns, the extra ones included: "removes 1 build(s) of 2"
    facts: FactsT | None = None  # set on every fired finding


# --- Fixes and the Plan ------------------------------------------------------------------------------------

class Safety(str, Enum):
    """How far apply may go with a fix, as ruff's applicability: `safe` by default, `consent` only with
    `--allow <mechanism>`, `advisory` never. A str, so plan JSON and ledgers keep writing the word."""

    ADVISORY = "advisory"
    CONSENT = "consent"
    SAFE = "safe"

    @property
    def rank(self) -> int:
        return _SAFETY_ORDER.index(self)

    def at_most(self, ceiling: Safety) -> Safety:
        """This class, lowered to `ceiling` where it is higher."""
        return self if self.rank <= ceiling.rank else ceiling

    def __str__(self) -> str:
        return self.value


_SAFETY_ORDER = (Safety.ADVISORY, Safety.CONSENT, Safety.SAFE)
SAFE = Safety.SAFE
CONSENT = Safety.CONSENT
ADVISORY = Safety.ADVISORY


@dataclass(frozen=True)
class OptionClaim:
    """What an options fix says its edit does: sets `options`, in the builds of `targets` (its own modules; empty:
    some module of the run)."""

    options: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()


NO_OPTIONS = OptionClaim()  # an edit that sets no option: proven by structure or timing


@dataclass
class Fix:
    id: str  # "F1", "F2", ... in plan order
    slug: str  # mechanism slug (warp_fix.mechanisms.SLUGS)
    title: str  # plain-language commit subject (a joined fix's names its other places)
    description: str
    safety: Safety
    codemod: str | None  # name in codemods.REGISTRY; None for advisory-only fixes
    # where the codemod edits: one place, or one per fix joined from several (one call each, in order)
    places: tuple[CodemodArgs, ...] = ()
    files: list[str] = field(default_factory=list)  # repo-relative paths it edits
    lines: list[str] = field(default_factory=list)  # "path:line" it changes
    expected: str = ""  # e.g. "removes 3 of 4 builds; ~520 ms of measured cold module work"
    expected_builds_removed: int = 0
    expected_ms: float = 0.0
    allow_options: list[str] = field(default_factory=list)  # options it may change by design
    # modules an options fix means to change: each must build with the new value and another hash
    targets: list[str] = field(default_factory=list)
    # Trades build time for kernel time: apply measures steady-state kernel time on both arms and, without
    # consent, offers the fix with both numbers instead of declining it unmeasured.
    measure_kernels: bool = False

    def __post_init__(self) -> None:
        wrong = [place.CODEMOD for place in self.places if self.codemod != place.CODEMOD]
        if wrong:
            raise ValueError(f"{self.id or self.slug}: places of {wrong} in a fix by {self.codemod}")

    @property
    def option_claim(self) -> OptionClaim:
        """The options whose effective value the fix's edit sets, in its target modules: apply requires their
        builds to show each."""
        options = sorted({option for place in self.places for option in place.options_set})
        return OptionClaim(tuple(options), tuple(self.targets))

    def args_json(self) -> dict[str, Any]:
        """The places as plan --json shows them: one place's arguments, or `{"each": [...]}`."""
        return places_to_json(self.places)

    def to_json(self) -> dict[str, Any]:
        """The fields in order, the places as `args` (see `args_json`)."""
        data: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "places":
                data["args"] = self.args_json()
            else:
                data[f.name] = getattr(self, f.name)
        return data


@dataclass
class NotProposed:
    """Why a mechanism proposes no fix (or not for some of its items). `status` is its finding's: a ruled-out or
    not-applicable mechanism has nothing to fix, which the findings table already says."""

    slug: str
    reason: str
    status: str = FIRED


Proposal = Fix | NotProposed


@dataclass
class Plan:
    command: list[str]
    fixes: list[Fix] = field(default_factory=list)
    not_proposed: list[NotProposed] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # mechanisms looked at (for the clean case)
    findings: list[Finding] = field(default_factory=list)  # the Findings the fixes answer
    warnings: list[str] = field(default_factory=list)  # e.g. files the scan could not parse
    built_nothing: bool = False  # the run built no Warp module: every finding is empty, not clean

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "fixes": [fix.to_json() for fix in self.fixes]}
