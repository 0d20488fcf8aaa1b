"""The terrain app's tests, in plain unittest: they need nothing beyond the app's own dependencies.

pytest runs them too.
"""

import unittest

import numpy as np
import warp as wp

# same Warp configuration as the application's entry point
wp.config.enable_backward = False

from terrain.pipeline import build_terrain  # noqa: E402


def reference(n=48, seed=1.3, hydraulic_iters=10, thermal_iters=5):
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    x, y = i * 0.11, j * 0.13
    h = np.zeros((n, n))
    amp, freq = 1.0, 1.0
    for _ in range(5):
        h += amp * np.sin(freq * x + seed) * np.cos(freq * y - 0.5 * seed)
        amp *= 0.5
        freq *= 2.03
    for _ in range(hydraulic_iters):
        p = np.pad(h, 1, mode="edge")
        low = np.minimum.reduce([h, p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])
        h = h - 0.1 * (h - low)
    for _ in range(thermal_iters):
        d = h[1:-1] - 0.5 * (h[:-2] + h[2:])
        g = h.copy()
        g[1:-1] = np.where(d > 0.05, h[1:-1] - 0.25 * (d - 0.05), h[1:-1])
        h = g

    def box(src, r):
        acc = np.zeros_like(src)
        cnt = np.zeros_like(src)
        for di in range(-r, r + 1):
            for dj in range(-r, r + 1):
                s = np.full((n + 2 * r, n + 2 * r), np.nan)
                s[r : r + n, r : r + n] = src
                win = s[r + di : r + di + n, r + dj : r + dj + n]
                acc += np.nan_to_num(win)
                cnt += ~np.isnan(win)
        return acc / cnt

    return box(h, 1), box(h, 2)


class TerrainTest(unittest.TestCase):
    def test_matches_reference(self):
        detail, smooth = build_terrain()
        ref_detail, ref_smooth = reference()
        np.testing.assert_allclose(detail, ref_detail, atol=1e-4)
        np.testing.assert_allclose(smooth, ref_smooth, atol=1e-4)

    def test_erosion_flattens(self):
        rough, _ = build_terrain(hydraulic_iters=0, thermal_iters=0)
        eroded, _ = build_terrain(hydraulic_iters=20, thermal_iters=10)
        self.assertLess(eroded.std(), rough.std())


if __name__ == "__main__":
    unittest.main()
