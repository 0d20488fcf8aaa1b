"""`warp-fix bake key`: the key a CI cache should use, from a cold run or from a saved report."""

from __future__ import annotations

from pathlib import Path

from warp_fix.bake.create import manifest_of
from warp_fix.bake.environment import probe_machine
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Environment, identity_key
from warp_fix.bake.run import cold_run
from warp_fix.report import Report


def key_of_run(command: list[str], cwd: Path, timeout: float | None, archs: list[int]) -> str:
    """The key `bake` would give this command's archive (one cold run, nothing kept)."""
    with cold_run(command, cwd, timeout, archs) as (run, root):
        return manifest_of(run, root, command).key


def key_of_report(report: Report, python: str | None = None) -> str:
    """The same key from a report's identities and this machine's environment (no --arch binaries)."""
    environment = probe_machine(python).environment
    builds = [b for b in report.trace.builds if b.status != "error" and b.hash]
    if not builds:
        raise BakeError("the report records no module build: there is no key to compute")
    identities = {(b.module, b.hash): _identity(b.module, b.hash, b.block_dim, b.device, environment) for b in builds}
    return identity_key(environment, list(identities.values()))


def _identity(name: str, module_hash: str, block_dim: int | None, device: str, environment: Environment) -> dict:
    binaries = ["cpu"] if device.startswith("cpu") else sorted(environment.cuda_targets)
    return {"name": name, "hash": module_hash, "block_dim": block_dim, "binaries": binaries}
