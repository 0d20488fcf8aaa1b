"""Module-options calls and `wp.config` assignments."""

from __future__ import annotations


def test_set_module_options_targets_the_calling_module(scan):
    index = scan(
        {
            "app/__init__.py": "",
            "app/sim.py": """
                import warp as wp

                wp.set_module_options({"enable_backward": False, "max_unroll": 4})

                def configure(fast):
                    wp.set_module_options({"fast_math": fast, "mode": "release"})
            """,
        }
    )
    constant, runtime = index.option_calls_for("app.sim")
    assert (constant.kind, constant.line, constant.function, constant.at_module_scope) == (
        "set_module_options",
        3,
        None,
        True,
    )
    assert constant.is_constant and constant.values == {"enable_backward": False, "max_unroll": 4}
    assert runtime.function == "configure" and not runtime.is_constant
    assert runtime.non_constant_keys == ["fast_math"] and runtime.values == {"mode": "release"}


def test_set_module_options_with_an_explicit_module(scan):
    index = scan(
        {
            "a.py": """
                import warp as wp
                opts = {"fast_math": True}
                wp.set_module_options(opts, module="physics")
                wp.set_module_options({"mode": "debug"}, __name__)
            """
        }
    )
    by_name, by_dunder = index.option_calls
    assert by_name.target_module == "physics" and by_name.target_source == '"physics"'
    assert not by_name.is_dict_literal and not by_name.is_constant and by_name.options_source == "opts"
    assert by_dunder.target_module == "a"


def test_get_module_options_updates_and_item_assignments(scan):
    index = scan(
        {
            "m.py": """
                import warp as wp

                wp.get_module("physics").options.update({"block_dim": 128})
                render = wp.get_module("render")
                render.options["fast_math"] = True
                render.options.update(dict(mode="debug", **extra))
                config.options.update({"unrelated": 1})
            """
        }
    )
    update, item, spread = index.option_calls
    assert (update.kind, update.target_module) == ("options.update", "physics")
    assert update.values == {"block_dim": 128}
    assert (item.kind, item.target_module, item.values) == ("options.setitem", "render", {"fast_math": True})
    assert item.options_source == 'render.options["fast_math"] = True'
    assert spread.values == {"mode": "debug"} and spread.non_constant_keys == ["**extra"]
    assert len(index.option_calls) == 3  # `config.options` is not a Warp module


def test_config_assignments_know_the_project_imports_around_them(scan):
    index = scan(
        {
            "mylib/__init__.py": "",
            "run.py": """
                import os
                import numpy as np
                import warp as wp
                wp.config.mode = "debug"
                import mylib
                wp.config.enable_backward = False
                setattr(wp.config, "verbose", os.environ.get("V") == "1")

                def main():
                    wp.config.max_unroll += 1
            """,
        }
    )
    mode, backward, verbose, unroll = index.config_assignments
    assert (mode.key, mode.value.value, mode.line) == ("mode", "debug", 4)
    assert (mode.first_project_import_before, mode.first_project_import_after) == (None, 5)
    assert (backward.first_project_import_before, backward.first_project_import_after) == (5, None)
    assert verbose.key == "verbose" and not verbose.value.is_constant
    assert unroll.function == "main" and not unroll.at_module_scope and not unroll.value.is_constant
    assert [i.kind for i in index.imports_in("run.py")] == ["stdlib", "third_party", "warp", "project"]
