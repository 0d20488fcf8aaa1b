"""Bake: the cache entries a run needs, archived with a manifest; restored, verified, shared.

Report --bake--> Manifest + trimmed cache archive (restore, verify, push/pull)

The names below load their module on first use: `bake restore` runs in CI right before the app, and
importing the probe, the report schema and fsspec for it would cost more than the restore itself.
`restore` and `verify` are imported from their modules (`warp_fix.bake.restore.restore`): a package
attribute of the same name is the submodule once it is loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from warp_fix.bake.cold_work import ColdWork, cold_work_removed
    from warp_fix.bake.create import BakeResult, bake
    from warp_fix.bake.errors import BakeError
    from warp_fix.bake.key import key_of_report, key_of_run
    from warp_fix.bake.manifest import Manifest
    from warp_fix.bake.restore import RestoreResult
    from warp_fix.bake.stores import pull, push
    from warp_fix.bake.verify import Miss, VerifyResult

_HOMES = {
    "BakeError": "errors",
    "BakeResult": "create",
    "ColdWork": "cold_work",
    "Manifest": "manifest",
    "Miss": "verify",
    "RestoreResult": "restore",
    "VerifyResult": "verify",
    "bake": "create",
    "cold_work_removed": "cold_work",
    "key_of_report": "key",
    "key_of_run": "key",
    "pull": "stores",
    "push": "stores",
}
__all__ = [  # the names of _HOMES, spelled out for linters and type checkers
    "BakeError",
    "BakeResult",
    "ColdWork",
    "Manifest",
    "Miss",
    "RestoreResult",
    "VerifyResult",
    "bake",
    "cold_work_removed",
    "key_of_report",
    "key_of_run",
    "pull",
    "push",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
