"""The fallback parser reads the module-load lines of Warp releases the tracer cannot hook."""

from warp_fix.probe.logparse import builds_from_log


def test_reads_a_default_level_line():
    (build,) = builds_from_log(["Module sim 942edbe load on device 'cpu' took 4024.32 ms  (compiled)"])
    assert (build.module, build.hash, build.device, build.status) == ("sim", "942edbe", "cpu", "compiled")
    assert build.module_ms == 4024.32
    assert build.block_dim is None


def test_reads_block_dim_at_debug_level():
    (build,) = builds_from_log(
        ["Module sim 942edbe load on device 'cuda:0' took 12.00 ms (block_dim=128) (cached)"]
    )
    assert build.block_dim == 128
    assert build.status == "cached"


def test_reads_older_lines_without_hash():
    (build,) = builds_from_log(["Module warp.utils load on device 'cpu' took 3.50 ms (cached)"])
    assert build.module == "warp.utils"
    assert build.hash == ""


def test_ignores_other_lines():
    assert builds_from_log(["energy 1.0", "Warp 1.19.0 initialized:"]) == []
