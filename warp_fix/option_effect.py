"""Did an option fix take effect? The proof is in the candidate's builds, not in its timing.

Warp copies options into a module when the module is created (`wp.config`) or reads them at its build
(`set_module_options`): a setting made too late is silently ignored, the module builds exactly as before, and
any timing difference is noise. So an edit meant to change an option's effective value is proven only when a
module the run built compiled with the new value and its hash moved, or when the values its builds compiled with
changed (a module whose launches name block_dim 128 ends at 128 either way; an occupancy query that built it at
the default 256 first no longer does once the default is 128). When none did, the outcome is "no effect", with
where the setting ran relative to the modules it should have reached.

Example: `wp.config.enable_backward = False` inserted below `import sim` (which creates module `sim`) leaves
`sim` at enable_backward=True with the same hash: `option_effects(before, after, OptionClaim(("enable_backward",)))`
gives one
`OptionEffect` whose `moved` is empty, and `no_effect_reason` says "wp.config.enable_backward was set at
app.py:4, after module sim was created".
"""

from __future__ import annotations

from dataclasses import dataclass

from warp_fix.model import OptionClaim
from warp_fix.report import ModuleBuild, OptionChange, Report
from warp_fix.wording import named, noun


@dataclass(frozen=True)
class OptionEffect:
    """One option a fix meant to change, and the modules (built in both runs) whose build it changed.
    `missed`: target modules of the fix, built in both runs, whose build it did not change."""

    option: str
    moved: tuple[str, ...]  # modules that compiled with another value of the option, and another hash
    unchanged: tuple[str, ...]  # modules built in both runs with the same value
    missed: tuple[str, ...] = ()

    @property
    def took_effect(self) -> bool:
        return bool(self.moved) and not self.missed


def option_effects(before: Report, after: Report, claim: OptionClaim) -> list[OptionEffect]:
    """Per option of the claim: which modules' final builds changed its value (and their hash) between the two
    runs; every one of its targets that both runs built must be among them."""
    pairs = _paired(_final_builds(before), _final_builds(after))
    every_before, every_after = _every_build(before), _every_build(after)
    effects = []
    for option in claim.options:
        moved = tuple(
            label
            for label, old, new in pairs
            if _changed(option, old, new, every_before[old.module, old.device], every_after[new.module, new.device])
        )
        unchanged = tuple(
            label for label, old, new in pairs if _value(old, option) == _value(new, option) and label not in moved
        )
        missed = tuple(u for u in unchanged if u.split(" on ")[0] in claim.targets)
        effects.append(OptionEffect(option, moved, unchanged, missed))
    return effects


def _paired(
    first: dict[tuple[str, str], ModuleBuild], second: dict[tuple[str, str], ModuleBuild]
) -> list[tuple[str, ModuleBuild, ModuleBuild]]:
    """The builds both runs made, as `name on device` (the first run's name) with each run's build: by module
    name, and a `module="unique"` module whose name moved with its options (`f_3dedcf34` -> `f_407e816d`) by
    its kernels' functions."""
    pairs = [(f"{name} on {device}", first[name, device], second[name, device])
             for name, device in sorted(set(first) & set(second))]
    by_kernels: dict[tuple, list[ModuleBuild]] = {}
    for key in set(second) - set(first):
        by_kernels.setdefault(_kernels_of(second[key]), []).append(second[key])
    for name, device in sorted(set(first) - set(second)):
        build = first[name, device]
        candidates = by_kernels.get(_kernels_of(build), [])
        if build.module_kind == "unique" and build.kernel_sources and len(candidates) == 1:
            pairs.append((f"{name} on {device}", build, candidates[0]))
    return pairs


def _changed(option: str, old: ModuleBuild, new: ModuleBuild, olds: list[ModuleBuild], news: list[ModuleBuild]) -> bool:
    """The last build compiled with another value and another hash, or the values of all its builds differ."""
    last = _value(old, option) != _value(new, option) and old.hash != new.hash
    return last or {_value(b, option) for b in olds} != {_value(b, option) for b in news}


def _kernels_of(build: ModuleBuild) -> tuple:
    return (build.device, tuple(sorted((k.file, k.line, k.qualname) for k in build.kernel_sources)))


def no_effect_reason(effect: OptionEffect, after: Report) -> str:
    """One sentence: which option moved no module, and where the candidate set it relative to the modules."""
    setting = _last_setting(after, effect.option)
    modules = effect.missed or effect.unchanged  # the fix's own modules first: others may stay as they were
    same = f"built with the same {effect.option} and hash"
    built = f"{noun(len(modules), 'module')} {named(modules)} {same}" if modules else "no module changed"
    if setting is None:
        return f"no effect: {built}"
    where = f" at {setting.site.file}:{setting.site.line}" if setting.site else ""
    if setting.kind == "config":
        late = [m for m in setting.modules_existing if any(m == u.split(" on ")[0] for u in modules)]
        existed = f"{noun(len(late), 'module')} {named(late)} {noun(len(late), 'was', 'were')} created"
        timing = f"after {existed}" if late else "after the modules it reaches"
        return f"no effect: wp.config.{effect.option} was set{where}, {timing} (Warp copies it at creation): {built}"
    timing = "after the module's first load" if setting.target_loaded else "where the module did not read it"
    return f"no effect: {effect.option} was set on {setting.target}{where}, {timing}: {built}"


def _value(build: ModuleBuild, option: str) -> tuple:
    """The option as the build resolved it: the module's value, and for enable_backward each kernel's own (a
    per-kernel `enable_backward=False` changes what is generated without changing the module's option)."""
    per_kernel = tuple(sorted((k.key, k.enable_backward) for k in build.kernel_sources))
    return (build.options.get(option), per_kernel if option == "enable_backward" else ())


def _final_builds(report: Report) -> dict[tuple[str, str], ModuleBuild]:
    return {(b.module, b.device): b for b in report.trace.builds if b.status != "error"}


def _every_build(report: Report) -> dict[tuple[str, str], list[ModuleBuild]]:
    """Each module's builds on each device, in order: an option can change which builds a run makes (the
    block size an early load builds at) without changing the last one."""
    builds: dict[tuple[str, str], list[ModuleBuild]] = {}
    for build in report.trace.builds:
        if build.status != "error":
            builds.setdefault((build.module, build.device), []).append(build)
    return builds


def _last_setting(report: Report, option: str) -> OptionChange | None:
    return next((c for c in reversed(report.trace.option_changes) if option in c.values), None)
