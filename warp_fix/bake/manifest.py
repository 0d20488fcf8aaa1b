"""The manifest of a bake archive: what each cache entry is, what it was built for, and its checksums.

Frozen dataclasses with to_json/from_json; the key is a hash of the sorted identity content, so two
bakes of the same identities in the same environment share it (a CI cache keys on it).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

MANIFEST_FORMAT = 1
MANIFEST_NAME = "manifest.json"
KEY_LENGTH = 24  # hex characters of the key shown and used in archive names


_SHA256 = re.compile(r"[0-9a-f]{64}")


class ManifestError(ValueError):
    """A manifest that cannot be read as this format; the message is one line."""


def _text(value: Any) -> str:
    """A field that must be a string: a number or a list where a path or name belongs is a forged manifest."""
    if not isinstance(value, str):
        raise TypeError(f"{value!r} where a string belongs")
    return value


@dataclass(frozen=True)
class Environment:
    """What cached artifacts depend on beyond the module hash (which Warp's cache lookup never checks)."""

    warp_version: str
    warp_build: str  # git commit of a source build; "" for a release
    cpu_key: str  # wp.get_cpu_kernel_cache_key(): Warp version, OS, CPU arch, LLVM and ISA features
    cuda_toolkit: str  # the NVRTC Warp compiles with; "" without a CUDA device
    cuda_driver: str
    gpu_archs: tuple[int, ...]
    cuda_targets: tuple[str, ...]  # the binary each GPU looks up: "sm90.cubin", "sm75.ptx"
    python: str
    platform: str

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "gpu_archs": list(self.gpu_archs), "cuda_targets": list(self.cuda_targets)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Environment:
        return Environment(
            warp_version=str(data["warp_version"]),
            warp_build=str(data.get("warp_build", "")),
            cpu_key=str(data.get("cpu_key", "")),
            cuda_toolkit=str(data.get("cuda_toolkit", "")),
            cuda_driver=str(data.get("cuda_driver", "")),
            gpu_archs=tuple(int(a) for a in data.get("gpu_archs", ())),
            cuda_targets=tuple(str(t) for t in data.get("cuda_targets", ())),
            python=str(data.get("python", "")),
            platform=str(data.get("platform", "")),
        )


@dataclass(frozen=True)
class ArtifactFile:
    """One file of the archive, by its path under the versioned cache root (`wp_mod_abc1234/x.o`, `lto/..`)."""

    path: str
    kind: str  # "meta" | "cpu-object" | "ptx" | "cubin" | "lto"
    size: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @staticmethod
    def from_json(data: dict[str, Any]) -> ArtifactFile:
        size, sha256 = data["size"], data["sha256"]
        if type(size) is not int or size < 0:
            raise ValueError(f"size of {data['path']!r} is {size!r}, not a byte count")
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise ValueError(f"sha256 of {data['path']!r} is {sha256!r}, not 64 hex digits")
        return ArtifactFile(_text(data["path"]), _text(data["kind"]), size, sha256)


@dataclass(frozen=True)
class Target:
    """A binary of a module identity: the CPU object, or CUDA PTX/CUBIN for one arch; from the run or AOT."""

    device: str  # "cpu" | "cuda"
    arch: int | None
    output: str  # "cpu-object" | "ptx" | "cubin"
    origin: str  # "run": the baking run built it | "aot": compiled ahead of time for --arch
    arch_suffix: str = ""  # "a" | "f" with warp.config.cuda_arch_suffix

    @property
    def binary(self) -> str:
        """How Warp's file name ends for it, as a machine's environment lists what it looks up: `sm86.cubin`."""
        return "cpu" if self.device == "cpu" else f"sm{self.arch}{self.arch_suffix}.{self.output}"

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Target:
        arch = data.get("arch")
        return Target(
            str(data["device"]),
            None if arch is None else int(arch),
            str(data["output"]),
            str(data["origin"]),
            str(data.get("arch_suffix", "")),
        )


@dataclass(frozen=True)
class ModuleOption:
    """A resolved module option; the value is kept as its JSON text so the dataclass stays frozen and typed."""

    name: str
    value_json: str

    @property
    def value(self) -> Any:
        return json.loads(self.value_json)


@dataclass(frozen=True)
class ModuleEntry:
    """One module identity the run needs: name, FULL hash, block_dim, options, kernels and its files."""

    name: str
    hash: str
    block_dim: int | None
    directory: str  # the cache directory Warp names it by: wp_<name>_<hash[:7]>
    options: tuple[ModuleOption, ...]
    kernels: tuple[str, ...]
    generics: tuple[str, ...]  # "kernel[arg types]" generic instances present
    targets: tuple[Target, ...]
    files: tuple[ArtifactFile, ...]

    def option(self, name: str) -> Any:
        return next((o.value for o in self.options if o.name == name), None)

    def identity(self) -> dict[str, Any]:
        """What the key covers: the identity and its binaries, not the files' bytes."""
        return {
            "name": self.name,
            "hash": self.hash,
            "block_dim": self.block_dim,
            "binaries": sorted({t.binary for t in self.targets}),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "hash": self.hash,
            "block_dim": self.block_dim,
            "directory": self.directory,
            "options": {o.name: o.value for o in self.options},
            "kernels": list(self.kernels),
            "generics": list(self.generics),
            "targets": [t.to_json() for t in self.targets],
            "files": [f.to_json() for f in self.files],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ModuleEntry:
        block_dim = data.get("block_dim")
        return ModuleEntry(
            name=_text(data["name"]),
            hash=_text(data["hash"]),
            block_dim=None if block_dim is None else int(block_dim),
            directory=_text(data["directory"]),
            options=options_from_mapping(data.get("options", {})),
            kernels=tuple(str(k) for k in data.get("kernels", ())),
            generics=tuple(str(g) for g in data.get("generics", ())),
            targets=tuple(Target.from_json(t) for t in data["targets"]),
            files=tuple(ArtifactFile.from_json(f) for f in data["files"]),
        )


def options_from_mapping(options: dict[str, Any]) -> tuple[ModuleOption, ...]:
    return tuple(ModuleOption(str(name), json.dumps(value, sort_keys=True)) for name, value in sorted(options.items()))


@dataclass(frozen=True)
class Manifest:
    format: int
    environment: Environment
    modules: tuple[ModuleEntry, ...]
    lto: tuple[ArtifactFile, ...]  # MathDx LTO artifacts under `lto/`
    command: tuple[str, ...]  # what was baked (provenance; not part of the key)
    # the PYTHONHASHSEED the bake ran under (provenance; not part of the key); "" unknown, and then not written,
    # so that an older archive's manifest reads back to the same text (restore compares its record byte for byte)
    hash_seed: str = ""

    @property
    def files(self) -> tuple[ArtifactFile, ...]:
        return tuple(f for m in self.modules for f in m.files) + self.lto

    @property
    def key(self) -> str:
        return identity_key(self.environment, [m.identity() for m in self.modules])

    def has_device(self, device: str) -> bool:
        return any(t.device == device for m in self.modules for t in m.targets)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "key": self.key,
            "command": list(self.command),
            **({"hash_seed": self.hash_seed} if self.hash_seed else {}),
            "environment": self.environment.to_json(),
            "modules": [m.to_json() for m in self.modules],
            "lto": [f.to_json() for f in self.lto],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n"

    @staticmethod
    def from_json(data: dict[str, Any]) -> Manifest:
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise ManifestError(f"manifest format {found!r}, this warp-fix reads {MANIFEST_FORMAT}")
        try:
            return Manifest(
                format=MANIFEST_FORMAT,
                environment=Environment.from_json(data["environment"]),
                modules=tuple(ModuleEntry.from_json(m) for m in data["modules"]),
                lto=tuple(ArtifactFile.from_json(f) for f in data.get("lto", ())),
                command=tuple(str(c) for c in data.get("command", ())),
                hash_seed=_text(data.get("hash_seed", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ManifestError(f"not a warp-fix bake manifest ({type(exc).__name__}: {exc})") from None

    @staticmethod
    def loads(text: str | bytes) -> Manifest:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ManifestError(f"the manifest is not JSON ({exc})") from None
        return Manifest.from_json(data)


def identity_key(environment: Environment, identities: list[dict[str, Any]]) -> str:
    """sha256 over the sorted environment and identities: equal for two bakes that need the same cache.

    File bytes are not in it (the manifest's checksums guard them), so a report's identities give the same key.
    """
    content = {
        "format": MANIFEST_FORMAT,
        "environment": environment.to_json(),
        "identities": sorted(identities, key=lambda i: json.dumps(i, sort_keys=True)),
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:KEY_LENGTH]
