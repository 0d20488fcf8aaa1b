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
KERNEL_COLLECTOR = "warp_fix/scan/collectors/kernels.py"
RECEIVERS = "warp_fix/scan/receivers.py"
LAUNCH_COLLECTOR = "warp_fix/scan/collectors/launches.py"

KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {}

# The file whose rule misses each pair of KNOWN_DISAGREEMENTS.
RULE_OF: dict[tuple[str, str], str] = {}

# Disagreements the generator found and that were fixed in the rule named: tests/variants/test_invariance.py runs
# each as a regression test on real runs.
FIXED: dict[tuple[str, str], str] = {
    ("calibration_script", "launch-through-helper"): DIFFERENTIATION,  # a pass-through launch helper is a launch
    ("factory_in_loop", "launch-through-helper"): LOOP_COLLECTOR,  # the same, for the loop that launches
    ("lifecycle_modules", "launch-through-helper"): GRANULAR_SITES,  # lifecycles from the load's stack
    ("plugin_dispatch", "registry-as-module-getattr"): KERNEL_COLLECTOR,  # getattr on the module is a registry
    ("plugin_transforms", "attribute-read-into-local"): KERNEL_COLLECTOR,  # `kind = self.kind` is self.kind
    # the same, for launch helpers of the entry's own function
    ("per_kernel_backward", "launches-in-two-helpers"): GRANULAR_SITES,
    # a method picking module-scope kernels by `self.kind` is a closed set of alternatives, as a function is
    ("lifecycle_alternatives", "kind-through-constructor"): KERNEL_COLLECTOR,
    # a module function a class binds as its method (`step = _Tank_step`) is reached by the method's name
    ("entry_placement", "static-method-as-function"): DIFFERENTIATION,
    ("unfollowed_tape", "static-method-as-function"): DIFFERENTIATION,
    # a loop in a module function a class binds as its method reads `self.X` fixed at construction, as a method
    # written in the class body does; the codemod edits the function's body where it is written
    ("factory_constructor_set", "static-method-as-function"): LOOP_COLLECTOR,
    ("factory_in_loop", "static-method-as-function"): LOOP_COLLECTOR,
    # `self` in a module function a class binds as its method is that class's instance: `self.solver.step()` is
    # typed through what the class stores, as in a method written in the class body
    ("typed_receivers", "static-method-as-function"): RECEIVERS,
    # `wp.launch(self.kernel, ...)` in a module function a class binds as its method runs what that class stores in
    # `self.kernel`, as in a method written in the class body (the launch records the class, not the function's name)
    ("handled_kernels", "static-method-as-function"): LAUNCH_COLLECTOR,
}


def one_per_rule() -> list[tuple[str, str]]:
    """The first known pair of each rule: what CI runs as strict xfails."""
    first: dict[str, tuple[str, str]] = {}
    for pair, rule in RULE_OF.items():
        first.setdefault(rule, pair)
    return list(first.values())
