"""Cache operations, and how guards tell maintenance paths from incidental clears."""

from __future__ import annotations


def test_a_guarded_maintenance_clear_records_its_guard_and_docstring(scan):
    index = scan(
        {
            "cli.py": """
                import warp as wp

                def run(args):
                    \"\"\"Run the simulation; --rebuild starts from an empty cache.

                    More text.
                    \"\"\"
                    if args.rebuild:
                        wp.clear_kernel_cache()
                    wp.clear_lto_cache()
            """
        }
    )
    guarded, incidental = index.cache_operations
    assert (guarded.kind, guarded.line, guarded.function) == ("clear_kernel_cache", 9, "run")
    assert guarded.guards == ["args.rebuild"] and guarded.maintenance_guard == "args.rebuild"
    assert guarded.function_doc == "Run the simulation; --rebuild starts from an empty cache."
    assert incidental.kind == "clear_lto_cache" and incidental.guards == []
    assert incidental.maintenance_guard is None


def test_else_branches_and_non_maintenance_guards(scan):
    index = scan(
        {
            "c.py": """
                import warp as wp
                if fast:
                    pass
                else:
                    wp.clear_kernel_cache()
                if __name__ == "__main__":
                    wp.clear_kernel_cache()
            """
        }
    )
    in_else, in_main = index.cache_operations
    assert in_else.guards == ["not (fast)"] and in_else.maintenance_guard is None
    assert in_main.guards == ['__name__ == "__main__"'] and in_main.maintenance_guard is None


def test_cache_defeating_settings_and_environment(scan):
    index = scan(
        {
            "env.py": """
                import os
                import shutil
                import tempfile
                import warp as wp

                os.environ["CUDA_CACHE_DISABLE"] = "1"
                os.environ.setdefault("WARP_CACHE_PATH", tempfile.mkdtemp())
                os.putenv("CUDA_CACHE_PATH", "/tmp/x")
                os.environ["UNRELATED"] = "1"
                wp.config.cache_kernels = False
                wp.config.kernel_cache_dir = tempfile.mkdtemp()
                shutil.rmtree(wp.config.kernel_cache_dir)
            """
        }
    )
    kinds = [(op.kind, op.value.source if op.value else None) for op in index.cache_operations]
    assert kinds == [
        ("env.CUDA_CACHE_DISABLE", '"1"'),
        ("env.WARP_CACHE_PATH", "tempfile.mkdtemp()"),
        ("env.CUDA_CACHE_PATH", '"/tmp/x"'),
        ("config.cache_kernels", "False"),
        ("config.kernel_cache_dir", "tempfile.mkdtemp()"),
        ("rmtree.kernel_cache_dir", "wp.config.kernel_cache_dir"),
    ]
    assert index.cache_operations[3].value.is_constant and index.cache_operations[3].value.value is False


def test_one_vocabulary_names_maintenance_paths():
    from warp_fix.scan.parsed import maintenance_guard, says_maintenance

    assert all(map(says_maintenance, ["rebuild_cache", "maintain", "Wipe the cache.", "clear_all", "fresh_start"]))
    assert not any(map(says_maintenance, ["run", "use_private_kernel_cache", None]))
    assert maintenance_guard(["not (fast)", "args.cold"]) == "args.cold"  # a command-line flag asked for it
