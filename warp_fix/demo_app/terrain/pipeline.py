import warp as wp

from terrain import erosion, filters
from terrain.erosion import DEVICE


def build_terrain(n=48, seed=1.3, hydraulic_iters=10, thermal_iters=5):
    a = wp.zeros((n, n), dtype=float, device=DEVICE)
    b = wp.zeros((n, n), dtype=float, device=DEVICE)
    wp.launch(erosion.generate, dim=(n, n), inputs=[a, seed], device=DEVICE)

    erosion.configure_erosion()
    for _ in range(hydraulic_iters):
        wp.launch(erosion.hydraulic_step, dim=(n, n), inputs=[a, 0.1, b], device=DEVICE)
        a, b = b, a
    for _ in range(thermal_iters):
        wp.launch(erosion.thermal_kernel(), dim=(n, n), inputs=[a, 0.05, b], device=DEVICE)
        a, b = b, a

    wp.launch(filters.SMOOTH_SMALL, dim=(n, n), inputs=[a, b], device=DEVICE)
    detail = b.numpy().copy()
    wp.launch(filters.SMOOTH_LARGE, dim=(n, n), inputs=[a, b], device=DEVICE)
    return detail, b.numpy()
