"""CS-4: many one-kernel modules with the same lifecycle each pay a whole module build."""

from __future__ import annotations

import os
from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import expected_effect, fired, module_scope_options, ms, ruled_out, runtime
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal

MIN_MODULES = 4
_IDENTITY_FREE = {"block_dim"}


def _tiny_modules(*names: str, options_in: str | None = None) -> Inputs:
    """A run that builds one module per `ops/<name>.py`, each holding one kernel `<name>`."""
    files = [f"ops/{name}.py" for name in names]
    calls = [case.option_call(options_in, 3, {"fast_math": False})] if options_in else []
    return case.run(
        builds=[case.build(f"ops.{name}", kernels=[f"ops.{name}.{name}"]) for name in names],
        source=case.index(
            files=files, kernels=[case.kernel(name, file) for name, file in zip(names, files)], option_calls=calls
        ),
    )


class GranularModules(Mechanism):
    SLUG = "granular-modules"
    CS = "CS-4"
    TITLE = "many tiny modules, each built separately"
    SAFETY = (SAFE,)
    CODEMODS = ("merge_modules",)

    def diagnose(self, inputs: Inputs) -> Finding:
        unique_keys = {d.key for d in inputs.report.trace.kernel_defs if d.unique}
        singles = {}
        for build in inputs.user_builds():
            if len(build.kernels) == 1 and not build.generics and build.kernels[0] not in unique_keys:
                singles.setdefault((build.device, _options_key(build.options)), {})[build.module] = build
        group = max(singles.values(), key=len, default={})
        if len(group) < MIN_MODULES:
            return ruled_out(
                self.SLUG, self.TITLE, f"fewer than {MIN_MODULES} one-kernel modules share a device and options"
            )
        kernels = []
        for build in group.values():
            kernel = _static_kernel(inputs, build.kernels[0])
            if kernel is not None and kernel.in_repo and kernel.module_kind in ("default", "literal"):
                kernels.append([kernel.file, kernel.name])
        builds = list(group.values())
        cost = sum(b.module_ms for b in builds) - max(b.module_ms for b in builds)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(group)} one-kernel modules with the same options, built one by one",
            evidence=[runtime(f"{b.module}: one kernel, {ms(b.module_ms)}", b.site, inputs) for b in builds],
            cost_ms=cost,
            extra_builds=len(group) - 1,
            details={"kernels": kernels, "modules": sorted(group)},
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        kernels = finding.details.get("kernels", [])
        with_options = sorted({f for f, _ in kernels if module_scope_options(index, index.python_module_of(f) or "")})
        if with_options:
            yield NotProposed(finding.slug, f"the tiny modules carry their own options ({', '.join(with_options)}): "
                              "merging them would change those options")
            return
        if len(kernels) < 2:
            yield NotProposed(finding.slug, "the tiny modules' kernels are not in the repository's source")
            return
        packages = [index.python_module_of(file) or "" for file, _ in kernels]
        common = os.path.commonprefix([p.split(".") for p in packages]) or ["app"]
        module = ".".join(common) + ".kernels"
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Build {len(kernels)} small kernels in one module",
            description=f"{len(kernels)} one-kernel modules with the same options were each built separately; one "
            f"named module {module} builds them at once.",
            safety=SAFE,
            codemod="merge_modules",
            args={"kernels": kernels, "module": module},
            files=sorted({file for file, _ in kernels}),
            expected=expected_effect(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )

    EXAMPLES = (
        Example(
            "four one-kernel files of one package, same options, each built on its own",
            _tiny_modules("add", "mul", "sub", "div"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
        ),
        Example(
            "one of the tiny modules sets its own options: merging would change them",
            _tiny_modules("add", "mul", "sub", "div", options_in="ops/div.py"),
            FIRED,
            fixes=(),
            declined="carry their own options",
        ),
        Example("three one-kernel modules are too few to matter", _tiny_modules("add", "mul", "sub"), RULED_OUT),
    )


def _options_key(options: dict) -> str:
    return repr(sorted((k, repr(v)) for k, v in options.items() if k not in _IDENTITY_FREE))


def _static_kernel(inputs: Inputs, key: str):
    name = key.split(".")[-1].split("__locals__")[-1]
    matches = [k for k in inputs.index.kernels if k.name == name]
    return matches[0] if len(matches) == 1 else None
