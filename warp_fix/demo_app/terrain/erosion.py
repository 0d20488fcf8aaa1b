"""Heightfield generation and erosion."""

import warp as wp

DEVICE = "cpu"


@wp.kernel
def generate(height: wp.array2d(dtype=float), seed: float):
    i, j = wp.tid()
    x = float(i) * 0.11
    y = float(j) * 0.13
    h = float(0.0)
    amp = float(1.0)
    freq = float(1.0)
    for _octave in range(5):
        h += amp * wp.sin(freq * x + seed) * wp.cos(freq * y - 0.5 * seed)
        amp *= 0.5
        freq *= 2.03
    height[i, j] = h


@wp.kernel
def hydraulic_step(src: wp.array2d(dtype=float), rate: float, dst: wp.array2d(dtype=float)):
    # material flows toward the lowest 4-neighbour
    i, j = wp.tid()
    n = src.shape[0]
    m = src.shape[1]
    h = src[i, j]
    lowest = h
    for k in range(4):
        di = wp.where(k == 0, -1, wp.where(k == 1, 1, 0))
        dj = wp.where(k == 2, -1, wp.where(k == 3, 1, 0))
        ii = wp.clamp(i + di, 0, n - 1)
        jj = wp.clamp(j + dj, 0, m - 1)
        lowest = wp.min(lowest, src[ii, jj])
    dst[i, j] = h - rate * (h - lowest)


def configure_erosion():
    """Let the neighbour loops unroll fully."""
    wp.set_module_options({"max_unroll": 32})


_thermal = None


def thermal_kernel():
    """Thermal weathering is optional; its kernel is built on first use."""
    global _thermal
    if _thermal is None:

        @wp.kernel
        def thermal_step(src: wp.array2d(dtype=float), talus: float, dst: wp.array2d(dtype=float)):
            i, j = wp.tid()
            n = src.shape[0]
            h = src[i, j]
            if i > 0 and i < n - 1:
                d = h - 0.5 * (src[i - 1, j] + src[i + 1, j])
                if d > talus:
                    h -= 0.25 * (d - talus)
            dst[i, j] = h

        _thermal = thermal_step
    return _thermal
