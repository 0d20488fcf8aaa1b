"""CS-9: `module="unique"` on stable kernels gives each its own hash-named module and build."""

from __future__ import annotations

from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import expected_effect, fired, ms, ruled_out, runtime, static
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal


def _unique_kernel(captures: list[str], called_from: str) -> Inputs:
    """`integrate`, made with module="unique" inside `make_integrator()`, which is called at `called_from`."""
    stack = ["sim.py:6:integrate", called_from]
    return case.run(
        builds=[case.build("integrate_0a1b2c3d", kernels=["sim.integrate"])],
        kernel_defs=[case.kernel_def("integrate", "sim", unique=True, site=case.site("sim.py", 6, "integrate", stack))],
        source=case.index(
            files=["sim.py"],
            kernels=[
                case.kernel(
                    "integrate", "sim.py", 6, module_kind="unique", enclosing_functions=["make_integrator"],
                    captures=captures, at_module_scope=False,
                )
            ],
        ),
    )


class UniqueOnStable(Mechanism):
    SLUG = "unique-on-stable"
    CS = "CS-9"
    TITLE = 'stable kernels each compiled in a module of their own (module="unique")'
    SAFETY = (SAFE,)
    CODEMODS = ("kernels_to_module_scope", "drop_unique")

    def diagnose(self, inputs: Inputs) -> Finding:
        defs = [d for d in inputs.report.trace.kernel_defs if d.unique]
        if not defs:
            return ruled_out(self.SLUG, self.TITLE, 'no kernel with module="unique" was created in the run')
        stable, runtime_made = [], []
        evidence = []
        for kernel_def in _distinct(defs):
            file = inputs.repo_file(kernel_def.site.file) if kernel_def.site else None
            kernel = inputs.index.kernel_named(kernel_def.function, file) if file else None
            if kernel is None or not kernel.in_repo:
                continue
            factory = (
                inputs.index.factory_named(".".join(kernel.enclosing_functions))
                if kernel.enclosing_functions
                else None
            )
            entry = {
                "file": kernel.file,
                "kernel": kernel.name,
                "line": kernel.line,
                "factory": kernel.enclosing_functions[-1] if kernel.enclosing_functions else None,
                "python_module": kernel.python_module,
                "module_kind": kernel.module_kind,
                "captures": list(kernel.captures),
                "factory_params": [p.name for p in factory.parameters] if factory else [],
            }
            runtime_captures = [c for c in kernel.captures if c != "module"]
            entry["called_at_module_scope"] = _created_at_module_scope(defs, kernel_def.function)
            # A factory called only at import time makes a fixed set of kernels before any launch, whatever its
            # kernels capture: they can share one module. One called later (plugins, requests) cannot.
            if runtime_captures and not (entry["factory"] and entry["called_at_module_scope"]):
                runtime_made.append(entry)
                evidence.append(
                    static(
                        f"{kernel.name} captures {', '.join(runtime_captures)}: made from runtime "
                        "data, stays unique",
                        kernel.file,
                        kernel.line,
                    )
                )
            else:
                stable.append(entry)
                evidence.append(
                    static(f"{kernel.name} captures nothing from its factory: stable", kernel.file, kernel.line)
                )
        unique_modules = [b for b in inputs.user_builds() if _is_unique_build(b, {d.key for d in defs})]
        evidence += [
            runtime(f"module {b.module} built for one unique kernel", b.site, inputs) for b in unique_modules
        ]
        if not stable:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                "every unique kernel is made from runtime data (plugins, expressions)",
                evidence=evidence,
                details={"runtime_made": runtime_made},
            )
        cost = sum(b.module_ms for b in unique_modules if any(k["kernel"] in " ".join(b.kernels) for k in stable))
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(stable)} stable kernel(s) built in module(s) of their own ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=max(0, len(stable) - 1),
            details={"stable": stable, "runtime_made": runtime_made},
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
        for item in finding.details.get("runtime_made", []):
            yield NotProposed(
                finding.slug,
                f"{item['kernel']} ({item['file']}:{item['line']}) is made from runtime "
                'data: it keeps module="unique"',
            )
        to_scope: dict[tuple[str, str], dict] = {}
        renamed: dict[str, dict] = {}
        for item in finding.details.get("stable", []):
            if item["factory"] and not item["captures"]:
                entry = to_scope.setdefault((item["file"], item["factory"]), {"kernels": [], "item": item})
                entry["kernels"].append(item["kernel"])
            else:
                # Captures factory arguments (e.g. a wp.func) but every call is at import time: keep the factory,
                # give its kernels one named module (closures of one key live side by side in a module).
                name = item["factory"] if item["module_kind"] == "parameter" else item["kernel"]
                entry = renamed.setdefault(item["file"], {"names": [], "item": item})
                if name not in entry["names"]:
                    entry["names"].append(name)
        for file, entry in renamed.items():
            module = f"{entry['item']['python_module']}.stable"
            yield Fix(
                id="", slug=finding.slug, title=f"Build the stable kernels of {file} in one named module",
                description=f"{', '.join(entry['names'])} gave every stable kernel a module of its own "
                f'(module="unique"); the named module {module} builds them together.',
                safety=SAFE, codemod="drop_unique", args={"file": file, "names": entry["names"], "module": module},
                files=[file], expected=expected_effect(finding), expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )
        for (file, factory), entry in to_scope.items():
            module = f"{entry['item']['python_module']}.{factory}"
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Define the stable kernels of {factory}() at module scope in one module",
                description=f"{factory}() made {', '.join(entry['kernels'])} with module=\"unique\" although they "
                f"capture nothing from it; at module scope in the named module {module} they build once, together.",
                safety=SAFE, codemod="kernels_to_module_scope",
                args={"file": file, "factory": factory, "kernels": entry["kernels"], "module": module},
                files=[file], expected=expected_effect(finding), expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )

    EXAMPLES = (
        Example(
            'a factory called once at import time makes a module="unique" kernel that captures nothing',
            _unique_kernel(captures=[], called_from="sim.py:20:<module>"),
            FIRED,
            fixes=(("kernels_to_module_scope", SAFE),),
        ),
        Example(
            "the kernel captures the factory's argument, but the factory only runs at import time",
            _unique_kernel(captures=["op"], called_from="sim.py:20:<module>"),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "a plugin kernel made per request from runtime data keeps its module of its own",
            _unique_kernel(captures=["op"], called_from="sim.py:40:handle_request"),
            RULED_OUT,
        ),
    )


def _created_at_module_scope(defs, function: str) -> bool:
    """Every creation of this kernel came from a factory call at import time (module scope): stable inputs."""
    callers = [d.site.stack[1] for d in defs if d.function == function and d.site and len(d.site.stack) > 1]
    return bool(callers) and all(caller.endswith(":<module>") for caller in callers)


def _distinct(defs):
    seen = set()
    for d in defs:
        key = (d.site.file if d.site else None, d.function)
        if key not in seen:
            seen.add(key)
            yield d


def _is_unique_build(build, unique_keys: set[str]) -> bool:
    return bool(build.kernels) and all(k in unique_keys for k in build.kernels)
