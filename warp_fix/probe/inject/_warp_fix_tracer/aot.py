"""`warp-fix bake --arch`: CUDA binaries for archs the baking machine lacks, from the run's own modules.

Runs at exit of a traced run (standard library and Warp only), so the modules hold exactly the
kernels and generic instances the run had. Each module is compiled through `wp.compile_aot_module`
at every block_dim it loaded with on CUDA (the module's default block_dim when it only ran on the
CPU), as CUBIN for the arch and as PTX for the arch Warp's PTX fallback looks up, into the module
directory a later run looks in. Every file is then checked against Warp's own name function.
"""

from __future__ import annotations

import os

from .recorder import plain


def compile_archs(tracer, archs: list[int]) -> dict:
    """Compile every loaded module for `archs`; returns {"artifacts": [...], "errors": [...]}."""
    warp = tracer.warp
    runtime = getattr(tracer.ctx, "runtime", None)
    supported = set(getattr(runtime, "nvrtc_supported_archs", None) or ())
    if not supported:
        return {"artifacts": [], "errors": ["Warp's NVRTC is not available in this interpreter: no CUDA toolchain"]}
    unsupported = [arch for arch in archs if arch not in supported]
    if unsupported:
        listed = ", ".join(str(a) for a in sorted(supported))
        return {"artifacts": [], "errors": [f"NVRTC cannot compile sm_{unsupported[0]} (it supports {listed})"]}
    artifacts, errors = [], []
    for module in tracer.modules_with_kernels():
        for block_dim in _cuda_block_dims(module):
            for arch in archs:
                for use_ptx in (False, True):
                    try:
                        artifacts.append(_compile_one(warp, module, block_dim, arch, use_ptx, runtime))
                    except Exception as exc:  # reported to warp-fix, which refuses the bake
                        kind = "PTX" if use_ptx else "CUBIN"
                        errors.append(f"{module.name} sm_{arch} {kind}: {type(exc).__name__}: {exc}")
    return {"artifacts": artifacts, "errors": errors}


def _cuda_block_dims(module) -> list[int]:
    """The block_dims the run loaded the module with on CUDA; else its default (a CPU-only run)."""
    execs = getattr(module, "execs", {})
    if not execs:
        return []  # never loaded in this run: not part of what it needs
    cuda = sorted({block_dim for (context, block_dim) in execs if context is not None and block_dim is not None})
    return cuda or [int(module.options["block_dim"])]


def _ptx_arch(arch: int, runtime) -> int:
    """The arch of the PTX a device of `arch` looks up: min(arch, the PTX target arch), as Warp decides."""
    target = getattr(runtime, "default_ptx_arch", None) or 75
    return min(arch, target)


def _compile_one(warp, module, block_dim: int, arch: int, use_ptx: bool, runtime) -> dict:
    output_arch = _ptx_arch(arch, runtime) if use_ptx else arch
    identifier = module.get_module_identifier(block_dim)
    module_dir = os.path.join(warp.config.kernel_cache_dir, identifier)
    saved = module.options["block_dim"]
    dict.__setitem__(module.options, "block_dim", block_dim)  # compile_aot_module builds the default block_dim
    module.mark_modified()
    try:
        paths = warp.compile_aot_module(module, arch=output_arch, module_dir=module_dir, use_ptx=use_ptx)
    finally:
        dict.__setitem__(module.options, "block_dim", saved)
        module.mark_modified()
    expected = module._get_compile_output_name(None, output_arch=output_arch, use_ptx=use_ptx, block_dim=block_dim)
    written = [os.path.basename(str(path)) for path in paths]
    if expected not in written or not os.path.exists(os.path.join(module_dir, expected)):
        raise RuntimeError(f"Warp looks up {expected}, the compile wrote {', '.join(written) or 'nothing'}")
    resolved = module.resolved_options.get(block_dim) or module.resolve_options(warp.config, block_dim)
    return {
        "module": module.name,
        "hash": module.get_module_hash(block_dim).hex(),
        "block_dim": block_dim,
        "arch": output_arch,
        "output": "ptx" if use_ptx else "cubin",
        "directory": identifier,
        "file": expected,
        "options": {key: plain(value) for key, value in resolved.items()},
        "kernels": sorted(key for key, kernel in module.kernels.items() if not kernel.is_generic),
    }
