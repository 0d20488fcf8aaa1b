"""Bake: the cache entries a run needs, archived with a manifest; restored, verified, shared.

Report --bake--> Manifest + trimmed cache archive (restore, verify, push/pull)
"""

from warp_fix.bake.cold_work import ColdWork, cold_work_removed
from warp_fix.bake.create import BakeResult, bake
from warp_fix.bake.errors import BakeError
from warp_fix.bake.key import key_of_report, key_of_run
from warp_fix.bake.manifest import Manifest
from warp_fix.bake.restore import RestoreResult, restore
from warp_fix.bake.stores import pull, push
from warp_fix.bake.verify import Miss, VerifyResult, verify

__all__ = [
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
    "restore",
    "verify",
]
