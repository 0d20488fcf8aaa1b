"""Pure functions: manifest round trip, the key, refusal fields, arch parsing (recorded data, no Warp run)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from warp_fix.bake.environment import applicable, refusals
from warp_fix.bake.manifest import (
    MANIFEST_FORMAT,
    ArtifactFile,
    Environment,
    Manifest,
    ManifestError,
    ModuleEntry,
    Target,
    options_from_mapping,
)
from warp_fix.cli_parser import cuda_arch, with_default_bake_action

CPU_ENV = Environment("1.19.0", "", "1.19.0-Linux-x86_64-0eee9287", "", "", (), (), "3.11.7", "Linux-x86_64")
H200_ENV = dataclasses.replace(
    CPU_ENV, cuda_toolkit="12.9", cuda_driver="12.9", gpu_archs=(90,), cuda_targets=("sm90.ptx",)
)


def entry(name: str, module_hash: str, *targets: Target) -> ModuleEntry:
    return ModuleEntry(
        name=name,
        hash=module_hash,
        block_dim=1,
        directory=f"wp_{name}_{module_hash[:7]}",
        options=options_from_mapping({"fast_math": False, "block_dim": 1}),
        kernels=("k",),
        generics=(),
        targets=targets or (Target("cpu", None, "cpu-object", "run"),),
        files=(ArtifactFile(f"wp_{name}_{module_hash[:7]}/x.meta", "meta", 3, "ab" * 32),),
    )


def manifest(*modules: ModuleEntry, environment: Environment = CPU_ENV) -> Manifest:
    return Manifest(MANIFEST_FORMAT, environment, modules, (), ("python", "-m", "app"))


def test_manifest_round_trips_through_json():
    original = manifest(entry("a", "1" * 64), entry("b", "2" * 64, Target("cuda", 86, "cubin", "aot")))
    assert Manifest.loads(original.dumps()) == original


def test_key_ignores_order_and_provenance_but_not_environment_or_identity():
    a, b = entry("a", "1" * 64), entry("b", "2" * 64)
    assert manifest(a, b).key == manifest(b, a).key
    assert manifest(a, b).key == dataclasses.replace(manifest(a, b), command=("other",)).key
    assert manifest(a, b).key != manifest(a, entry("b", "3" * 64)).key
    assert manifest(a, b).key != manifest(a, b, environment=dataclasses.replace(CPU_ENV, python="3.12.1")).key


def test_the_bake_seed_is_provenance_kept_through_json_and_out_of_the_key():
    baked = dataclasses.replace(manifest(entry("a", "1" * 64)), hash_seed="1")
    assert Manifest.loads(baked.dumps()).hash_seed == "1"
    assert baked.key == dataclasses.replace(baked, hash_seed="2").key


def test_a_manifest_written_before_the_seed_was_recorded_loads_with_it_unknown_and_writes_back_the_same():
    """Restore compares the record it left in a cache byte for byte: an older archive's must not change."""
    older = manifest(entry("a", "1" * 64)).to_json()
    assert "hash_seed" not in older
    assert Manifest.from_json(older).hash_seed == ""
    assert Manifest.from_json(older).to_json() == older


def test_refusal_names_warp_version_and_cpu_key():
    here = dataclasses.replace(CPU_ENV, warp_version="1.20.0", cpu_key="1.20.0-Linux-x86_64-12345678")
    problems = refusals(manifest(entry("a", "1" * 64)), here)
    assert problems == [
        "Warp version: archive 1.19.0, here 1.20.0",
        "CPU key: archive 1.19.0-Linux-x86_64-0eee9287, here 1.20.0-Linux-x86_64-12345678",
    ]


def test_refusal_names_an_arch_the_archive_lacks():
    baked = manifest(entry("a", "1" * 64, Target("cuda", 86, "cubin", "run")), environment=H200_ENV)
    assert refusals(baked, H200_ENV) == ["arch: this machine looks up sm90.ptx, archive has sm86.cubin"]
    with_ptx = manifest(entry("a", "1" * 64, Target("cuda", 90, "ptx", "run")), environment=H200_ENV)
    assert refusals(with_ptx, H200_ENV) == []


def test_a_cpu_archive_restores_on_a_gpu_machine_with_the_same_cpu_key():
    assert refusals(manifest(entry("a", "1" * 64)), H200_ENV) == []


def test_under_another_cpu_key_and_gpu_only_the_entries_whose_binaries_are_right_here_apply():
    """A fleet archive (CPU objects, sm90 PTX) restored on a machine with another CPU and an sm86 GPU."""
    cpu = entry("cpu_only", "1" * 64)
    sm86 = entry("gpu_86", "2" * 64, Target("cuda", 86, "cubin", "aot"))
    sm90 = entry("gpu_90", "3" * 64, Target("cuda", 90, "ptx", "run"))
    here = dataclasses.replace(H200_ENV, cpu_key="1.19.0-Linux-x86_64-12345678", cuda_targets=("sm86.cubin",))
    part = applicable(manifest(cpu, sm86, sm90, environment=H200_ENV), here)
    assert part.manifest.modules == (sm86,)
    assert part.skipped == (
        ("cpu_only", "1" * 64, "CPU key: archive 1.19.0-Linux-x86_64-0eee9287, here 1.19.0-Linux-x86_64-12345678"),
        ("gpu_90", "3" * 64, "arch: this machine looks up sm86.cubin, entry has sm90.ptx"),
    )
    assert part.manifest.key != manifest(cpu, sm86, sm90, environment=H200_ENV).key


def test_across_a_warp_version_nothing_applies_and_each_entry_says_why():
    here = dataclasses.replace(CPU_ENV, warp_version="1.20.0")
    part = applicable(manifest(entry("a", "1" * 64), entry("b", "2" * 64)), here)
    assert part.manifest.modules == ()
    assert [why for _, _, why in part.skipped] == ["Warp version: archive 1.19.0, here 1.20.0"] * 2


def test_a_manifest_of_another_format_is_refused():
    with pytest.raises(ManifestError, match="format 99"):
        Manifest.loads('{"format": 99}')


def test_arch_values():
    assert cuda_arch("86") == [86]
    assert cuda_arch("sm_90,sm86") == [90, 86]
    with pytest.raises(argparse.ArgumentTypeError):
        cuda_arch("ampere")


def test_bake_without_an_action_means_create():
    assert with_default_bake_action(["bake", "--", "python", "x.py"]) == ["bake", "create", "--", "python", "x.py"]
    assert with_default_bake_action(["bake", "restore", "a.tar.gz"]) == ["bake", "restore", "a.tar.gz"]
    assert with_default_bake_action(["measure", "--", "x"]) == ["measure", "--", "x"]
