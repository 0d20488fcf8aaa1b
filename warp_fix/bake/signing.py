"""An archive's origin: a signature the baking job makes with its SSH key, checked on restore.

Checksums in the manifest catch corruption and careless tampering, but the manifest travels in the same
archive: whoever can write the store can rewrite both. A signature made by the job that baked, checked
against an allowed-signers file the restoring side keeps, says who made the archive.

OpenSSH's `ssh-keygen -Y sign/verify` does the cryptography: no Python dependency, keys CI already
manages (an ed25519 deploy key, a hardware key), the allowed-signers format git uses for signed commits.
The signature covers the archive's bytes and lies beside it as `<archive>.sig`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from warp_fix.bake.errors import BakeError

NAMESPACE = "warp-fix-bake"  # a signature made for another purpose (git, files) does not verify as a bake's
SIGNATURE_SUFFIX = ".sig"


def signature_path(archive: Path) -> Path:
    return archive.with_name(archive.name + SIGNATURE_SUFFIX)


def sign(archive: Path, key: Path) -> Path:
    """Sign the archive's bytes with the private key `key`; returns the signature file beside it."""
    done = _ssh_keygen(["-Y", "sign", "-f", str(key), "-n", NAMESPACE], archive, f"sign {archive} with {key}")
    target = signature_path(archive)
    try:
        target.write_bytes(done.stdout)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def check_signature(archive: Path, allowed_signers: Path, name: str | None = None) -> str:
    """The principal that signed `archive`; BakeError when no signature, or none an allowed signer made."""
    shown = name or str(archive)
    signature = signature_path(archive)
    if not signature.is_file():
        raise BakeError(f"refused {shown}: no signature beside it ({signature.name}) and one is required")
    if not allowed_signers.is_file():
        raise BakeError(f"allowed signers file not found: {allowed_signers}")
    found = _ssh_keygen(
        ["-Y", "find-principals", "-s", str(signature), "-f", str(allowed_signers)],
        None, f"check the signature of {shown}", refusal=f"refused {shown}: its signature is by no allowed signer",
    )
    principals = found.stdout.decode(errors="replace").replace(",", " ").split()
    if not principals:
        raise BakeError(f"refused {shown}: its signature is by no allowed signer")
    principal = principals[0]
    _ssh_keygen(
        ["-Y", "verify", "-f", str(allowed_signers), "-I", principal, "-n", NAMESPACE, "-s", str(signature)],
        archive, f"check the signature of {shown}",
        refusal=f"refused {shown}: its signature does not match its bytes (tampered, or signed for another file)",
    )
    return principal


def _ssh_keygen(
    arguments: list[str], stdin: Path | None, what: str, refusal: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ssh-keygen; a non-zero exit is `refusal` when given (a signature that does not hold), else an error."""
    program = shutil.which("ssh-keygen")
    if program is None:
        raise BakeError(f"cannot {what}: ssh-keygen (OpenSSH 8.1 or later) is not on PATH")
    try:
        source = stdin.open("rb") if stdin is not None else None
        with source if source is not None else open(os.devnull, "rb") as given:
            done = subprocess.run([program, *arguments], stdin=given, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BakeError(f"cannot {what}: {exc}") from None
    if done.returncode == 0:
        return done
    if refusal is not None:
        raise BakeError(refusal)
    last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
    raise BakeError(f"cannot {what}: {last}")
