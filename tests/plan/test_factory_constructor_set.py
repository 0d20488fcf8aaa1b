"""factory-in-loop when the loop runs over a parameter that stands for a collection fixed at construction (fixture
factory_constructor_set): `Reactor.__init__` validates its reaction orders against the documented closed set
`kinetics.rates.ORDERS` and stores them on `self.orders`; `step()` hands them to the private helper `_react(conc,
orders, dt)`, whose loop makes `make_rate(order)` (module="unique") lazily and launches it. Every call of the helper
passes `self.orders`, so the values are known when the tank is built: the set is made in the constructor, in one
module, the factory still checking its own arguments."""

from __future__ import annotations

import shlex

from codemods.specs import FactorySetArgs
from tests.apply.conftest import PYTHON, fixture_repo, git
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import FIRED, SAFE

SLUG = "factory-in-loop"


def test_a_loop_over_a_helper_parameter_filled_with_the_constructors_orders_is_proposed(plan_of):
    plan = plan_of("factory_constructor_set")
    finding = next(f for f in plan.findings if f.slug == SLUG)
    assert finding.status == FIRED
    (tank,) = finding.facts.loop_sets
    assert (tank.function, tank.loop_iter, tank.origin, tank.constructor_values) == (
        "Reactor._react", "orders", "constructor", "self.orders",
    )
    assert tank.origin_detail == (
        "orders is self.orders at every call of _react() (1 call in Reactor); self.orders is set in Reactor.__init__"
    )
    assert (len(tank.modules), tank.builds) == (2, 2)
    (fix,) = [f for f in plan.fixes if f.slug == SLUG]
    assert (fix.codemod, fix.safety, fix.expected_builds_removed) == ("factory_set", SAFE, 1)
    assert fix.places == (
        FactorySetArgs(
            file="kinetics/reactor.py", class_name="Reactor", method="_react", line=29, callee="make_rate",
            attribute="_rate_kernels", module="kinetics.reactor.Reactor", factory_file="kinetics/rates.py",
            factory="make_rate", values="self.orders",
        ),
    )
    assert "one react kernel per value of self.orders" in fix.description
    assert [n.reason for n in plan.not_proposed if n.slug == SLUG] == []


def test_apply_makes_the_set_in_the_constructor_one_build(tmp_path):
    """apply for real: one commit; the two order kernels' modules become one (2 -> 1 builds), same launches and
    output; the tests (an unsupported order refused by the constructor and by the factory) pass."""
    repo = fixture_repo(tmp_path, "factory_constructor_set")
    request = build_request(
        command=[PYTHON, "-m", "kinetics"], cwd=repo, branch="wf/factory", samples=2, only=[SLUG],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (2, 1)
    assert entry.numbers.output_same and entry.numbers.workload_same
    assert git(repo, "diff", "--name-only", "main..wf/factory").split() == ["kinetics/rates.py", "kinetics/reactor.py"]
    reactor = git(repo, "show", "wf/factory:kinetics/reactor.py")
    made = (  # right after the orders are checked and stored, before any launch
        "        self.orders = tuple(orders)\n"
        "        self._rate_kernels = {\n"
        '            order: make_rate(order, module="kinetics.reactor.Reactor") for order in self.orders\n'
        "        }\n"
    )
    assert made in reactor
    assert "react = self._rate_kernels[order]" in reactor
    rates = git(repo, "show", "wf/factory:kinetics/rates.py")
    assert 'def make_rate(order: int, module: str = "unique"):' in rates
    assert "raise ValueError" in rates  # the factory still checks its own arguments
