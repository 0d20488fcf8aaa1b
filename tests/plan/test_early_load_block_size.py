"""A prewarm at another block size than the launches': the tracer names the call, the planner the size."""

from __future__ import annotations

from warp_fix.model import ADVISORY


def test_a_prewarm_at_an_unused_block_size_is_found(plan_of):
    plan = plan_of("early_load_block_size")
    finding = next(f for f in plan.findings if f.slug == "early-load-block-size")
    assert finding.status == "fired", finding.reason
    (load,) = finding.facts.loads
    assert (load.module, load.cause, load.block_dim, load.launch_block_dims) == (
        "prewarm.blocks", "load_module", 64, [32]
    )
    assert load.site is not None and load.site.file.endswith("prewarm/blocks.py")
    (fix,) = [f for f in plan.fixes if f.slug == "early-load-block-size"]
    assert fix.safety == ADVISORY and "block_dim=32" in fix.description
    assert fix.lines == [f"prewarm/blocks.py:{load.site.line}"]


def test_launch_loads_carry_no_cause(plan_of):
    plan = plan_of("serial_modules")
    assert next(f for f in plan.findings if f.slug == "early-load-block-size").status == "ruled-out"
