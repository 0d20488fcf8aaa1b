import warp as wp

wp.config.enable_backward = False  # generation only, no gradients

from terrain.pipeline import build_terrain  # noqa: E402


def main():
    wp.clear_kernel_cache()  # avoid stale kernels after editing erosion code
    detail, smooth = build_terrain()
    print(f"height range {detail.min():.4f} {detail.max():.4f}")
    print(f"smooth mean {smooth.mean():.5f} std {smooth.std():.5f}")


if __name__ == "__main__":
    main()
