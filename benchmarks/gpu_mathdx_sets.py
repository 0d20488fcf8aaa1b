"""Per tile GEMM kernel, MathDx on and off: cold build time and steady-state kernel time (CUDA only).

Whether one module should be split into kernel sets with different MathDx switches depends on these two
numbers per kernel: a GEMM that runs much faster with cuBLASDx keeps it, one that loses nothing without it
saves its LTO link. Each configuration is built cold (a fresh kernel cache) as its own `unique` module.

    python benchmarks/gpu_mathdx_sets.py [--n 2048] [--repeats 50] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np
import warp as wp

DTYPES = {"f16": (wp.float16, np.float16), "f32": (wp.float32, np.float32)}


def gemm(dtype, tile: int, mathdx: bool):
    """A tiled C = A @ B kernel in a module of its own, with MathDx switched as asked."""

    def body(a: wp.array2d(dtype=dtype), b: wp.array2d(dtype=dtype), c: wp.array2d(dtype=dtype)):
        i, j = wp.tid()
        acc = wp.tile_zeros(shape=(tile, tile), dtype=dtype)
        for k in range(0, int(a.shape[1] / tile)):
            x = wp.tile_load(a, shape=(tile, tile), offset=(i * tile, k * tile))
            y = wp.tile_load(b, shape=(tile, tile), offset=(k * tile, j * tile))
            wp.tile_matmul(x, y, acc)
        wp.tile_store(c, acc, offset=(i * tile, j * tile))

    options = {"enable_mathdx_gemm": mathdx, "enable_backward": False}
    return wp.kernel(body, module="unique", module_options=options)


def measure(name: str, tile: int, mathdx: bool, n: int, repeats: int, block_dim: int) -> dict:
    dtype, np_dtype = DTYPES[name]
    kernel = gemm(dtype, tile, mathdx)
    rng = np.random.default_rng(1)
    a = wp.array(rng.random((n, n)).astype(np_dtype), dtype=dtype)
    b = wp.array(rng.random((n, n)).astype(np_dtype), dtype=dtype)
    c = wp.empty((n, n), dtype=dtype)
    dim = (n // tile, n // tile)
    wp.synchronize()
    start = time.perf_counter()
    wp.launch_tiled(kernel, dim=dim, inputs=[a, b, c], block_dim=block_dim)
    wp.synchronize()
    first_ms = (time.perf_counter() - start) * 1000.0
    for _ in range(3):
        wp.launch_tiled(kernel, dim=dim, inputs=[a, b, c], block_dim=block_dim)
    begin, end = wp.Event(enable_timing=True), wp.Event(enable_timing=True)
    wp.record_event(begin)
    for _ in range(repeats):
        wp.launch_tiled(kernel, dim=dim, inputs=[a, b, c], block_dim=block_dim)
    wp.record_event(end)
    wp.synchronize()
    kernel_ms = wp.get_event_elapsed_time(begin, end) / repeats
    ref = a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)
    err = float(np.abs(c.numpy().astype(np.float64) - ref).max() / np.abs(ref).max())
    return {
        "dtype": name,
        "tile": tile,
        "mathdx": mathdx,
        "first_launch_ms": round(first_ms, 1),
        "kernel_ms": round(kernel_ms, 4),
        "rel_err": err,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--tiles", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--block-dim", type=int, default=128)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    wp.config.kernel_cache_dir = tempfile.mkdtemp(prefix="mathdx-sets-")
    wp.init()
    assert wp.is_cuda_available(), "CUDA only"
    rows = []
    for tile in args.tiles:
        for name in DTYPES:
            for mathdx in (True, False):
                try:
                    row = measure(name, tile, mathdx, args.n, args.repeats, args.block_dim)
                except Exception as exc:  # a configuration MathDx or Warp rejects is a result too
                    row = {"dtype": name, "tile": tile, "mathdx": mathdx, "error": f"{type(exc).__name__}: {exc}"}
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
