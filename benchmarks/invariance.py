"""Same program, same verdict: every CPU fixture under every transformation that applies to it.

    python benchmarks/invariance.py [--jsonl FILE] [--jobs N] [--fixture NAME ...] [--transformation NAME ...]
    python benchmarks/invariance.py --summarize FILE
    python benchmarks/invariance.py --jsonl FILE --apply N [--seed S]

Each fixture is measured and planned once as it is and once per applicable variant (tests/variants/, see
docs/variants.md); a variant agrees when its plan's structural verdict, mapped back to the fixture's files and
lines, is the fixture's. Records go to `--jsonl`, one per (fixture, transformation); a second invocation with the
same file runs only what is missing. Prints the invariance rate per transformation family and per mechanism (over
the variants of the fixtures on which it fired), then every disagreement and every variant whose behaviour
changed. `--jobs` runs that many fixtures side by side (each probe is single-threaded Warp compiles).

`--apply N` then runs apply for real (one sample per arm) on N seeded pairs of FILE whose verdicts agreed, on the
fixture and on its variant, and prints whether each kept, dropped, declined and offered the same fixes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.variants.catalogue import BY_NAME, TRANSFORMATIONS  # noqa: E402
from tests.variants.known import KNOWN_DISAGREEMENTS  # noqa: E402
from tests.variants.runner import (  # noqa: E402
    FIXTURES,
    Outcome,
    apply_outcomes,
    compare,
    cpu_fixtures,
    measure_and_plan,
)
from tests.variants.transform import Fixture  # noqa: E402


def run_fixture(name: str, transformations: list[str]) -> list[Outcome]:
    fixture = Fixture.load(FIXTURES / name)
    with tempfile.TemporaryDirectory(prefix="invariance-") as scratch:
        try:
            original = measure_and_plan(fixture, None, Path(scratch) / "original")
        except Exception as exc:  # a fixture that cannot be measured is reported, not a crash of the whole run
            return [Outcome(name, t, BY_NAME[t].FAMILY, skipped=f"the original failed: {exc}") for t in transformations]
        outcomes = []
        for t in transformations:
            try:
                outcomes.append(compare(original, fixture, BY_NAME[t], Path(scratch) / t))
            except Exception as exc:
                outcomes.append(Outcome(name, t, BY_NAME[t].FAMILY, behaviour_changed=f"the variant failed: {exc}"))
        return outcomes


def load(path: Path) -> list[Outcome]:
    if not path.exists():
        return []
    return [Outcome(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def rate(outcomes: list[Outcome]) -> str:
    ran = [o for o in outcomes if not o.skipped]
    agree = sum(o.agrees for o in ran)
    return f"{agree}/{len(ran)} ({100 * agree / len(ran):.1f} %)" if ran else "-"


def summarize(outcomes: list[Outcome]) -> None:
    ran = [o for o in outcomes if not o.skipped]
    fixtures = sorted({o.fixture for o in outcomes})
    print(f"{len(fixtures)} fixtures, {len(ran)} variants ran, {len(outcomes) - len(ran)} skipped")
    print(f"invariance: {rate(ran)}")
    per_fixture = defaultdict(int)
    for o in ran:
        per_fixture[o.fixture] += 1
    fewest = min(per_fixture.values(), default=0)
    print(f"variants per fixture: {fewest} at fewest ({', '.join(f for f in fixtures if per_fixture[f] == fewest)})")
    print("\nper family:")
    for family in sorted({o.family for o in ran}):
        print(f"  {family:16s} {rate([o for o in ran if o.family == family])}")
    print("\nper transformation:")
    for t in TRANSFORMATIONS:
        print(f"  {t.NAME:24s} {rate([o for o in ran if o.transformation == t.NAME])}")
    print("\nper mechanism (variants of the fixtures on which it fired):")
    for slug in sorted({m for o in ran for m in o.mechanisms}):
        print(f"  {slug:24s} {rate([o for o in ran if slug in o.mechanisms])}")
    for o in ran:
        if not o.agrees:
            print(f"\n{o.fixture} / {o.transformation}: {o.behaviour_changed or 'verdict differs'}")
            known = KNOWN_DISAGREEMENTS.get((o.fixture, o.transformation))
            if known:
                print(f"  known, not fixed yet (tests/variants/known.py): {known}")
            for line in o.differences:
                print(f"  {line}")
    skipped = [o for o in outcomes if o.skipped]
    if skipped:
        print("\nskipped:")
        for o in skipped:
            print(f"  {o.fixture} / {o.transformation}: {o.skipped}")


def same_fixes_applied(name: str, transformation: str) -> tuple[str, list[str]]:
    """apply on the fixture and on its variant: the (mechanism, safety, outcome) entries only one of them has."""
    fixture = Fixture.load(FIXTURES / name)
    variant = BY_NAME[transformation].apply(fixture)
    with tempfile.TemporaryDirectory(prefix="invariance-apply-") as scratch:
        original = apply_outcomes(fixture, None, Path(scratch) / "original")
        rewritten = apply_outcomes(fixture, variant, Path(scratch) / "variant")
    only = [f"only the original: {e}" for e in original if e not in rewritten]
    only += [f"only the variant: {e}" for e in rewritten if e not in original]
    return f"{name} / {transformation}: {len(original)} entries {list(original)}", only


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jsonl", type=Path, default=Path("invariance.jsonl"))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--fixture", action="append", default=[])
    parser.add_argument("--transformation", action="append", default=[], choices=sorted(BY_NAME))
    parser.add_argument("--summarize", action="store_true", help="print the table of --jsonl and run nothing")
    parser.add_argument("--apply", type=int, default=0, help="apply on N seeded agreeing pairs of --jsonl")
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    if args.apply:
        agreeing = sorted((o.fixture, o.transformation) for o in load(args.jsonl) if o.agrees)
        for pair in random.Random(args.seed).sample(agreeing, min(args.apply, len(agreeing))):
            said, only = same_fixes_applied(*pair)
            print(f"{said}: {'same fixes' if not only else 'DIFFERENT'}", flush=True)
            for line in only:
                print(f"  {line}")
        return
    if not args.summarize:
        done = {(o.fixture, o.transformation) for o in load(args.jsonl)}
        wanted = args.transformation or [t.NAME for t in TRANSFORMATIONS]
        todo = {name: [t for t in wanted if (name, t) not in done] for name in (args.fixture or cpu_fixtures())}
        todo = {name: ts for name, ts in todo.items() if ts}
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_fixture, name, ts): name for name, ts in todo.items()}
            for future in as_completed(futures):
                with args.jsonl.open("a") as out:
                    for outcome in future.result():
                        out.write(json.dumps(asdict(outcome)) + "\n")
                print(f"{futures[future]}: done", file=sys.stderr, flush=True)
    summarize(load(args.jsonl))


if __name__ == "__main__":
    main()
