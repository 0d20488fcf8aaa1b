"""An occupancy query before the launches, on CUDA: needs a GPU (skipped with the reason elsewhere)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, PYTHON
from tests.gpu.test_gpu_fixtures import _cuda_available

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device")]


def test_the_occupancy_query_builds_the_module_at_the_default_block_size():
    from warp_fix.plan import make_plan
    from warp_fix.probe import measure

    report = measure([PYTHON, "-m", "occupancy"], FIXTURES / "gpu_occupancy_query", samples=1)
    builds = [b for b in report.trace.builds if b.module == "occupancy.step"]
    assert sorted((b.block_dim, b.cause) for b in builds) == [(128, ""), (256, "get_suggested_block_size")]
    plan = make_plan(report, FIXTURES / "gpu_occupancy_query")
    finding = next(f for f in plan.findings if f.slug == "early-load-block-size")
    assert finding.status == "fired", finding.reason
    (load,) = finding.facts.loads
    assert (load.block_dim, load.launch_block_dims) == (256, [128])
