"""Disagreements the generator found and that are not fixed yet: (fixture, transformation) -> why.

Each one is a real difference of verdict on a variant that does what its fixture does; the reason says which
rule misses the shape. tests/variants/test_invariance.py runs the first pair of each file in RULE_OF as a strict
xfail (one per rule keeps CI short), so the day a rule is fixed the test says to remove its entries;
benchmarks/invariance.py marks every one in its list (they still count against the rate).
"""

from __future__ import annotations

# The file whose rule misses each class of shape, by the mechanism the disagreement is in.
DIFFERENTIATION = "warp_fix/scan/differentiation.py"
LOOP_COLLECTOR = "warp_fix/scan/collectors/loops.py"
GRANULAR_SITES = "warp_fix/mechanisms/granular_modules.py"

KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    ("calibration_script", "launch-through-helper"): (
        "unused-backward: scripts/calibrate.py launches its loss kernel under the tape through its own "
        "`_launch(*args, **kwargs)` helper; the repository's differentiation walk (warp_fix/scan/differentiation.py) "
        "counts the helper's `wp.launch(*args, **kwargs)` as a launch of an unknown kernel, so every module may be "
        "differentiated and beams.report's per-module fix (safe) folds into the entry-point one (consent)"
    ),
    ("factory_module_options", "launch-through-helper"): (
        "unused-backward: ripple/fit.py's tape calls its file's `_launch` helper; the differentiation walk follows "
        "calls by name (warp_fix/scan/differentiation.py), so it also reaches ripple/display.py's own `_launch` and "
        "counts display.py's blur as differentiated: make_blur's call-site fix (enable_backward=False) is withheld"
    ),
    ("factory_in_loop", "launch-through-helper"): (
        "factory-in-loop: the scan finds a factory's kernel launched in its loop by a `wp.launch` call in the loop "
        "body (warp_fix/scan/collectors/loops.py); a launch through the project's own `_launch` wrapper is not one "
        "to it, so the loop is not found and the mechanism is ruled out (the scan reads a project's own kernel "
        "decorator as `wp.kernel`, but no project function as `wp.launch`)"
    ),
    ("tape_rollout", "launch-through-helper"): (
        "unused-backward: the same as calibration_script: walker/train.py's tape launches through its `_launch` "
        "helper, whose `wp.launch(*args, **kwargs)` the differentiation walk cannot resolve to a kernel, so "
        "walker.optim's per-module fix is withheld"
    ),
    ("unused_backward", "launch-through-helper"): (
        "unused-backward: the same as calibration_script: springs/calibrate.py's tape reaches the `_launch` helpers "
        "(followed by name), whose `wp.launch(*args, **kwargs)` the differentiation walk cannot resolve to a "
        "kernel, so springs.chain's per-module fix is withheld"
    ),
    ("lifecycle_modules", "launch-through-helper"): (
        "granular-modules: modules count as built at the same point of the run when the builds' sites share file "
        "and function (warp_fix/mechanisms/granular_modules.py); the site is the first frame outside Warp, here "
        "every launch's `_launch` helper, so export()'s to_bytes joins grade()'s three modules in the merge"
    ),
    ("named_modules", "launch-through-helper"): (
        "granular-modules: the same as lifecycle_modules: solver.prepare and render.encode, built at two points of "
        "the run, share the `_launch` helper's site, so the mechanism fires and merges them"
    ),
}

RULE_OF: dict[tuple[str, str], str] = {
    ("calibration_script", "launch-through-helper"): DIFFERENTIATION,
    ("factory_module_options", "launch-through-helper"): DIFFERENTIATION,
    ("tape_rollout", "launch-through-helper"): DIFFERENTIATION,
    ("unused_backward", "launch-through-helper"): DIFFERENTIATION,
    ("factory_in_loop", "launch-through-helper"): LOOP_COLLECTOR,
    ("lifecycle_modules", "launch-through-helper"): GRANULAR_SITES,
    ("named_modules", "launch-through-helper"): GRANULAR_SITES,
}


def one_per_rule() -> list[tuple[str, str]]:
    """The first known pair of each rule: what CI runs as strict xfails."""
    first: dict[str, tuple[str, str]] = {}
    for pair, rule in RULE_OF.items():
        first.setdefault(rule, pair)
    return list(first.values())
