"""apply: rewrite the source on a new git branch, one measured, test-gated commit per kept fix.

Works in private git worktrees (the user's checkout is never touched); see docs/apply.md.
"""

from warp_fix.apply.errors import ApplyError, BaselineTestsFailed
from warp_fix.apply.loop import ApplyResult, run_apply
from warp_fix.apply.request import ApplyRequest, build_request
from warp_fix.apply.review import BranchLog, branch_log

__all__ = [
    "ApplyError",
    "ApplyRequest",
    "ApplyResult",
    "BaselineTestsFailed",
    "BranchLog",
    "branch_log",
    "build_request",
    "run_apply",
]
