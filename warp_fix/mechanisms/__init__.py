"""Every mechanism of docs/compile-model.md, one file each: its detection, its fix proposal and its examples.

To change how a mechanism is detected or fixed, open `warp_fix/mechanisms/<slug>.py` (and the codemod in
`codemods/` if the edit itself changes). To add one, write a `Mechanism` subclass with its EXAMPLES there,
list it below in both orders and in pyproject.toml's independence contract, and give it a row and a section
in docs/mechanisms.md; tests/mechanisms and tests/test_layers.py say what is missing.
"""

from __future__ import annotations

from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms.block_dim_spread import BlockDimSpread
from warp_fix.mechanisms.cache_discarded import CacheDiscarded
from warp_fix.mechanisms.concurrent_cpu_load import ConcurrentCpuLoad
from warp_fix.mechanisms.config_after_import import ConfigAfterImport
from warp_fix.mechanisms.early_load_block_size import EarlyLoadBlockSize
from warp_fix.mechanisms.factory_in_loop import FactoryInLoop
from warp_fix.mechanisms.granular_modules import GranularModules
from warp_fix.mechanisms.kernel_after_load import KernelAfterLoad
from warp_fix.mechanisms.late_module_options import LateModuleOptions
from warp_fix.mechanisms.late_overloads import LateOverloads
from warp_fix.mechanisms.mathdx_lto import MathdxLto
from warp_fix.mechanisms.precompiled_header import PrecompiledHeader
from warp_fix.mechanisms.process_hash import ProcessHash
from warp_fix.mechanisms.serial_builds import SerialBuilds
from warp_fix.mechanisms.unique_on_stable import UniqueOnStable
from warp_fix.mechanisms.unroll_budget import UnrollBudget
from warp_fix.mechanisms.unused_backward import UnusedBackward
from warp_fix.model import Finding

# The order of docs/compile-model.md's table (the config trap after CS-3): findings and docs follow it.
MECHANISMS: tuple[Mechanism, ...] = (
    KernelAfterLoad(),
    FactoryInLoop(),
    CacheDiscarded(),
    LateModuleOptions(),
    ConfigAfterImport(),
    GranularModules(),
    BlockDimSpread(),
    LateOverloads(),
    MathdxLto(),
    ConcurrentCpuLoad(),
    UniqueOnStable(),
    UnusedBackward(),
    UnrollBudget(),
    PrecompiledHeader(),
    SerialBuilds(),
    ProcessHash(),
    EarlyLoadBlockSize(),
)
SLUGS: tuple[str, ...] = tuple(m.SLUG for m in MECHANISMS)
_BY_SLUG = {m.SLUG: m for m in MECHANISMS}

# The order plan numbers fixes in (F1, F2, ...; of two mechanisms proposing the same edit, the first keeps it):
# stop cache destruction first, then the ordering and option fixes, then the module layout. apply tries them in
# the rank their codemods declare (`EFFECT` in codemods/specs.py), not in this order.
FIX_ORDER: tuple[Mechanism, ...] = tuple(
    _BY_SLUG[slug]
    for slug in (
        "cache-discarded",
        "late-module-options",
        "config-after-import",
        "kernel-after-load",
        "factory-in-loop",
        "late-overloads",
        "concurrent-cpu-load",
        "precompiled-header",
        "unused-backward",
        "unique-on-stable",
        "granular-modules",
        "block-dim-spread",
        "serial-builds",
        "mathdx-lto",
        "unroll-budget",
        "process-hash",
        "early-load-block-size",
    )
)


def diagnose_all(inputs: Inputs) -> list[Finding]:
    """One Finding per mechanism, in table order, all asking the same Scope (`inputs.scope`)."""
    return [mechanism.diagnose(inputs) for mechanism in MECHANISMS]


__all__ = ["FIX_ORDER", "MECHANISMS", "SLUGS", "Example", "Inputs", "Mechanism", "diagnose_all"]
