"""An option fix is proven by its builds: a module compiled with the new value and another hash. A setting that
ran too late moves no module, and the reason says where it ran relative to the modules."""

from __future__ import annotations

from dataclasses import replace

from warp_fix.mechanisms import _situation as case
from warp_fix.model import OptionClaim
from warp_fix.option_effect import no_effect_reason, option_effects

BACKWARD = OptionClaim(("enable_backward",))


def backward(build, on: bool, hash_: str):
    return replace(build, options={**build.options, "enable_backward": on}, hash=hash_)


SIM = case.build("sim")
LATE_CONFIG = case.option_change(
    "warp.config", {"enable_backward": False}, kind="config", modules_existing=["sim"], site=case.site("app.py", 4)
)


def test_a_module_built_with_the_new_value_and_another_hash_is_the_proof():
    before = case.run(builds=[backward(SIM, True, "aaaa")]).report
    after = case.run(builds=[backward(SIM, False, "bbbb")]).report
    (effect,) = option_effects(before, after, BACKWARD)
    assert effect.took_effect and effect.moved == ("sim on cpu",)


def test_a_config_set_after_the_module_was_created_moves_nothing_and_says_where():
    before = case.run(builds=[backward(SIM, True, "aaaa")]).report
    after = case.run(builds=[backward(SIM, True, "aaaa")], option_changes=[LATE_CONFIG]).report
    (effect,) = option_effects(before, after, BACKWARD)
    assert not effect.took_effect
    assert no_effect_reason(effect, after) == (
        "no effect: wp.config.enable_backward was set at app.py:4, after module sim was created "
        "(Warp copies it at creation): module sim on cpu built with the same enable_backward and hash"
    )


def test_a_module_option_set_after_the_first_load_says_so():
    late = case.option_change("sim", {"enable_backward": False}, loaded=True, site=case.site("sim.py", 30))
    before = case.run(builds=[SIM]).report
    after = case.run(builds=[SIM], option_changes=[late]).report
    (effect,) = option_effects(before, after, BACKWARD)
    assert no_effect_reason(effect, after).startswith(
        "no effect: enable_backward was set on sim at sim.py:30, after the module's first load"
    )


def test_every_target_module_must_move_not_just_some_module():
    """The fix meant `sim` and `render`: `sim` moved, `render` (created before the setting ran) did not."""
    render = case.build("render")
    before = case.run(builds=[backward(SIM, True, "aaaa"), backward(render, True, "cccc")]).report
    after = case.run(builds=[backward(SIM, False, "bbbb"), backward(render, True, "cccc")]).report
    (some,) = option_effects(before, after, BACKWARD)
    assert some.took_effect
    (both,) = option_effects(before, after, OptionClaim(("enable_backward",), ("sim", "render")))
    assert not both.took_effect and both.missed == ("render on cpu",)
    reason = "no effect: module render on cpu built with the same enable_backward and hash"
    assert no_effect_reason(both, after) == reason


def test_a_unique_module_renamed_by_its_new_options_is_followed_by_its_kernel():
    """Warp names a `module="unique"` module after its options too: `f_3dedcf34` with backward on is
    `f_407e816d` with it off. The same kernel function, on the same device, is the same module."""
    blur = case.kernel_source("blur", "ripple/stencils.py", 9, kind="unique")
    on = case.sourced(backward(case.build("blur_3dedcf34"), True, "aaaa"), blur)
    off = case.sourced(backward(case.build("blur_407e816d"), False, "bbbb"), blur)
    (effect,) = option_effects(case.run(builds=[on]).report, case.run(builds=[off]).report,
                               OptionClaim(("enable_backward",), ("blur_3dedcf34",)))
    assert effect.took_effect and effect.moved == ("blur_3dedcf34 on cpu",)


def test_a_default_block_size_that_removes_an_early_build_took_effect_though_the_last_build_is_the_same():
    """The launches name block_dim 128, so the last build is the same in both runs; an occupancy query first built
    the module at the default 256, and once the module's default is 128 that build is gone."""
    at = {d: replace(SIM, block_dim=d, options={**SIM.options, "block_dim": d}, hash=f"h{d}") for d in (128, 256)}
    before = case.run(builds=[at[256], at[128]]).report
    after = case.run(builds=[at[128]]).report
    (effect,) = option_effects(before, after, OptionClaim(("block_dim",), ("sim",)))
    assert effect.took_effect and effect.moved == ("sim on cpu",)
    (same,) = option_effects(after, after, OptionClaim(("block_dim",), ("sim",)))
    assert not same.took_effect and same.missed == ("sim on cpu",)
