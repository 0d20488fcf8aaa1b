"""Fix proposals: for each fired Finding, the codemod and arguments that remove its cause, or why not.

Part of the plan stage: it reads Findings (and the Report/SourceIndex they were built from) and
returns `Fix` or `NotProposed` items; `plan.make_plan` orders them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from warp_fix.findings import Finding
from warp_fix.plan import ADVISORY, CONSENT, SAFE, Fix, NotProposed
from warp_fix.report import Report
from warp_fix.scan import SourceIndex

Proposal = Fix | NotProposed


def propose(finding: Finding, report: Report, index: SourceIndex) -> list[Proposal]:
    proposer = PROPOSERS.get(finding.slug)
    return list(proposer(finding, report, index)) if proposer else []


def _expected(finding: Finding, builds: int | None = None) -> str:
    builds = finding.extra_builds if builds is None else builds
    total = len(finding.details.get("all_builds", [])) or None
    parts = []
    if builds:
        parts.append(f"removes {builds} build(s)" + (f" of {total}" if total else ""))
    if finding.cost_ms:
        parts.append(f"~{finding.cost_ms:,.0f} ms of measured cold module work")
    return "; ".join(parts) or "no measured cost attached (untested estimate: small)"


def entry_file(report: Report, index: SourceIndex) -> str | None:
    """The file the measured command runs first: `python -m pkg` -> pkg/__main__.py, `python x.py` -> x.py."""
    command = report.command
    cwd = Path(report.cwd)
    candidates = []
    if "-m" in command[:-1]:
        module = command[command.index("-m") + 1]
        base = cwd / Path(*module.split("."))
        candidates += [base / "__main__.py", base.with_suffix(".py")]
    candidates += [cwd / arg for arg in command[1:] if arg.endswith(".py")]
    root = os.path.realpath(index.root)
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.isfile(real) and real.startswith(root + os.sep):
            return Path(os.path.relpath(real, root)).as_posix()
    points = [e.file for e in index.entry_points if e.in_repo and e.file]
    return points[0] if points else None


def _first_project_import(index: SourceIndex, file: str, modules: Iterable[str]) -> str | None:
    """The project module (among `modules` and their packages) that `file` imports first."""
    wanted = set(modules)
    for site in sorted(index.imports_in(file), key=lambda s: s.line):
        if not site.at_module_scope:
            continue
        if any(m == site.module or m.startswith(site.module + ".") for m in wanted):
            return site.module
    return None


def _cache(finding: Finding, report: Report, index: SourceIndex):
    sites = finding.details.get("sites", [])
    protected = sorted({m["function"] for m in finding.details.get("maintenance", []) if m.get("function")})
    by_file: dict[str, list[int]] = {}
    for site in sites:
        by_file.setdefault(site["file"], []).append(site["line"])
    for file, lines in by_file.items():
        yield Fix(
            id="",
            slug=finding.slug,
            title="Keep Warp's kernel cache between runs",
            description="Removes statements in the run path that clear or bypass Warp's kernel cache, so a "
            "second start reuses what the first compiled. Maintenance paths "
            f"({', '.join(protected) or 'none found'}) keep clearing.",
            safety=SAFE,
            codemod="keep_cache",
            args={"file": file, "lines": sorted(lines), "protected_functions": protected},
            files=[file],
            lines=[f"{file}:{line}" for line in sorted(lines)],
            expected=f"the warm start compiles {finding.extra_builds} fewer module(s); ~{finding.cost_ms:,.0f} ms "
            "of warm module work",
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )
    if not by_file:
        yield NotProposed(
            finding.slug,
            "the cache is discarded, but no statement in the repository was seen doing "
            "it in the measured run (an environment setting or library code?)",
        )


def _late_options(finding: Finding, report: Report, index: SourceIndex):
    for noop in finding.details.get("no_ops", []):
        yield NotProposed(
            finding.slug,
            f"options call at {noop['file']}:{noop['line']} targets module {noop['module']}, which "
            "holds no kernels: a no-op. Making it effective would change the kernels' numerics, so it is left "
            "for you to decide.",
        )
    seen = set()
    for call in finding.details.get("calls", []):
        where = f"{call['file']}:{call['line']}"
        if not call["file"] or not call["function"]:
            yield NotProposed(
                finding.slug, f"late options call at {where} is not inside a function of the repo"
            )
            continue
        if not call["constant"]:
            keys = ", ".join(call["non_constant_keys"]) or "its options"
            yield NotProposed(
                finding.slug,
                f"options call at {where}: {keys} depend(s) on runtime values, so it "
                "cannot move before the first build; give each option set a module of its own",
            )
            continue
        if (call["file"], call["function"]) in seen:
            continue
        seen.add((call["file"], call["function"]))
        numerics = _numerics_keys(call)
        consent = (
            f" Launches before the call ran with the old {', '.join(numerics)}; after the move every launch uses "
            "the new value, which changes numerics: consent needed." if numerics else ""
        )
        yield Fix(
            id="", slug=finding.slug, title=f"Set {call['module']} options before its first build",
            description=f"Moves the constant options call out of {call['function']}() to module scope, so module "
            f"{call['module']} is built once with its final options instead of twice." + consent,
            safety=CONSENT if numerics else SAFE, codemod="hoist_options",
            args={"file": call["file"], "function": call["function"], "line": call["line"]},
            files=[call["file"]], lines=[where], expected=_expected(finding),
            expected_builds_removed=finding.extra_builds, expected_ms=finding.cost_ms,
            allow_options=numerics or (["enable_backward"] if "enable_backward" in call["keys"] else []),
        )


def _numerics_keys(call: dict) -> list[str]:
    """Options whose change moves results (DESIGN invariant 2); enable_backward only if a tape used the module."""
    from warp_fix.compare import NUMERICS_OPTIONS

    keys = [k for k in call["keys"] if k in NUMERICS_OPTIONS and k != "enable_backward"]
    if "enable_backward" in call["keys"] and call["differentiated"]:
        keys.append("enable_backward")
    return keys


def _config_after_import(finding: Finding, report: Report, index: SourceIndex):
    entry = entry_file(report, index)
    for item in finding.details.get("ignored", []):
        if entry is None:
            yield NotProposed(
                finding.slug, f"wp.config.{item['key']} set too late, but no entry point was found"
            )
            continue
        target = _first_project_import(index, entry, item["modules"])
        args = {"file": entry, "name": item["key"], "value": item["value"]}
        if target:
            args["before_import"] = target
        if item["file"] == entry:
            args["line"] = item["line"]
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Set wp.config.{item['key']} before the modules it must reach exist",
            description=f"wp.config.{item['key']} = {item['value']!r} ran after {', '.join(item['modules'])} "
            "were created, so they silently kept the old value. Setting it right after `import warp` in the entry "
            "point makes it take effect: this changes those modules' options, hence consent.",
            safety=CONSENT,
            codemod="config_at_entry",
            args=args,
            files=[entry],
            lines=[f"{item['file']}:{item['line']}"],
            expected="makes the setting effective (compile-time effect "
            "depends on the option: untested estimate)",
            allow_options=[item["key"]],
        )


def _kernel_after_load(finding: Finding, report: Report, index: SourceIndex):
    factories: dict[tuple[str, str], list[str]] = {}
    for item in finding.details.get("late_kernels", []):
        where = f"{item.get('file')}:{item.get('line')}"
        if not item.get("file") or "factory" not in item:
            yield NotProposed(finding.slug, f"late kernel at {where} is not in the repository's source")
        elif item["captures"]:
            yield NotProposed(
                finding.slug,
                f"kernel at {where} captures {', '.join(item['captures'])}: made per "
                "call from runtime data, so it stays where it is",
            )
        elif item["factory"] is None:
            yield Fix(
                id="",
                slug=finding.slug,
                title="Import late kernels before the first launch",
                description=f"Kernel at {where} is defined at module scope but its file is imported after "
                "its module's first build: import it earlier (advisory: import order is the author's call).",
                safety=ADVISORY,
                codemod=None,
                files=[item["file"]],
                lines=[where],
                expected=_expected(finding),
            )
        else:
            kernels = factories.setdefault((item["file"], item["factory"]), [])
            if item["function"] not in kernels:
                kernels.append(item["function"])
    for (file, factory), kernels in factories.items():
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Define the kernels of {factory}() at module scope",
            description=f"{', '.join(kernels)} were created inside {factory}() after their module's first build; "
            "defined at module scope they join the module before it loads, so it builds once.",
            safety=SAFE,
            codemod="kernels_to_module_scope",
            args={"file": file, "factory": factory, "kernels": kernels},
            files=[file],
            lines=[
                f"{file}:{index.kernel_named(k, file).line}" for k in kernels if index.kernel_named(k, file)
            ],
            expected=_expected(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )


def _late_overloads(finding: Finding, report: Report, index: SourceIndex):
    for key, instances in finding.details.get("instances", {}).items():
        file, _, kernel = key.partition("::")
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Register the {kernel} overloads used at run time up front",
            description=f"{kernel} is generic and was launched with {len(instances)} type signature(s); each new "
            "one after the first build rebuilt the module. Registering them at module scope builds them together.",
            safety=SAFE,
            codemod="register_overloads",
            args={"file": file, "kernel": kernel, "overloads": instances},
            files=[file],
            expected=_expected(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )


def _concurrent_cpu_load(finding: Finding, report: Report, index: SourceIndex):
    by_file: dict[str, list[int]] = {}
    for site in finding.details.get("sites", []):
        by_file.setdefault(site["file"], []).append(site["line"])
    for file, lines in by_file.items():
        yield Fix(
            id="",
            slug=finding.slug,
            title="Load modules one at a time where the CPU can be the device",
            description="Concurrent first loads on the CPU can report success and then fail with 'Failed to find "
            "module'; max_workers=1 keeps them sequential.",
            safety=SAFE,
            codemod="cpu_max_workers",
            args={"file": file, "lines": sorted(lines)},
            files=[file],
            lines=[f"{file}:{line}" for line in lines],
            expected="correctness: no concurrent first CPU load",
        )


def _precompiled_header(finding: Finding, report: Report, index: SourceIndex):
    for item in finding.details.get("assignments", []):
        yield Fix(
            id="",
            slug=finding.slug,
            title="Restore precompiled headers",
            description=f"wp.config.use_precompiled_headers = False at {item['file']}:{item['line']} makes every "
            "CPU module (and, below CUDA toolkit 13, every CUDA module) compile Warp's headers from scratch; "
            "remove it unless a measurement justifies it.",
            safety=ADVISORY,
            codemod=None,
            files=[item["file"]],
            lines=[f"{item['file']}:{item['line']}"],
            expected="untested estimate: most of the per-module native compile time on CPU",
        )


def _unused_backward(finding: Finding, report: Report, index: SourceIndex):
    """Per module where the module is the repo's own file; process-wide (consent) only for library modules."""
    modules = finding.details.get("modules", [])
    own = {m: index.file_of_module(m) for m in modules}
    for module, file in own.items():
        if file is None or not _in_repo(index, file):
            continue
        yield Fix(
            id="", slug=finding.slug, title=f"Turn off backward code in {module}",
            description=f"No tape or adjoint launch touches {module}; the module option enable_backward=False "
            "at module scope stops generating and compiling its adjoint code (the per-kernel flag would still "
            "link adjoint GEMMs in tile modules).",
            safety=SAFE, codemod="module_options", args={"file": file, "options": {"enable_backward": False}},
            files=[file], expected=f"less generated source and native compile time in {module} (untested estimate)",
            allow_options=["enable_backward"],
        )
    library = []
    for module, file in own.items():
        if file is not None and _in_repo(index, file):
            continue
        if _kernels_in_repo(report, index, module):
            yield NotProposed(finding.slug, f"{module} is a module=\"unique\" kernel of the repository: give its "
                              'decorator module_options={"enable_backward": False} if it is never differentiated')
        else:
            library.append(module)
    if not library:
        return
    if finding.details.get("repo_uses_tape") or finding.details.get("differentiated"):
        yield Fix(
            id="", slug=finding.slug, title="Turn off backward code in library modules no tape differentiates",
            description=f"A tape is in use, so backward cannot be turned off process-wide; {', '.join(library)} "
            "belong to a library: set their enable_backward option from your code if they are never differentiated "
            "(advisory).",
            safety=ADVISORY, codemod=None, expected=_expected(finding, 0),
        )
        return
    entry = entry_file(report, index)
    if entry is None:
        yield NotProposed(finding.slug, "library modules compile unused backward code, but no entry point was found")
        return
    args = {"file": entry, "name": "enable_backward", "value": False}
    target = _first_project_import(index, entry, library)
    if target:
        args["before_import"] = target
    yield Fix(
        id="", slug=finding.slug, title="Turn off backward code nobody uses, process-wide",
        description=f"No tape or adjoint launch touches the library modules {', '.join(library)}; "
        "wp.config.enable_backward = False at the entry point, before the library imports, stops generating "
        "and compiling their adjoint code. Process-wide, hence consent.",
        safety=CONSENT, codemod="config_at_entry", args=args, files=[entry],
        expected=f"less generated source and native compile time in {len(library)} module(s) (untested estimate)",
        allow_options=["enable_backward"],
    )


def _kernels_in_repo(report: Report, index: SourceIndex, module: str) -> bool:
    keys = {k for b in report.trace.builds if b.module == module for k in b.kernels}
    names = {key.split(".")[-1].split("__locals__")[-1] for key in keys}
    return any(k.in_repo for k in index.kernels if k.name in names)


def _in_repo(index: SourceIndex, file: str) -> bool:
    return any(f.file == file and f.in_repo for f in index.files)


def _unique_on_stable(finding: Finding, report: Report, index: SourceIndex):
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
            files=[file], expected=_expected(finding), expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )
    for (file, factory), entry in to_scope.items():
        module = f"{entry['item']['python_module']}.{factory}"
        yield Fix(
            id="", slug=finding.slug, title=f"Define the stable kernels of {factory}() at module scope in one module",
            description=f"{factory}() made {', '.join(entry['kernels'])} with module=\"unique\" although they "
            f"capture nothing from it; at module scope in the named module {module} they build once, together.",
            safety=SAFE, codemod="kernels_to_module_scope",
            args={"file": file, "factory": factory, "kernels": entry["kernels"], "module": module},
            files=[file], expected=_expected(finding), expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )


def _granular(finding: Finding, report: Report, index: SourceIndex):
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
        expected=_expected(finding),
        expected_builds_removed=finding.extra_builds,
        expected_ms=finding.cost_ms,
    )


def _block_dim(finding: Finding, report: Report, index: SourceIndex):
    for file, groups in finding.details.get("groups", {}).items():
        python_module = index.python_module_of(file) or "module"
        named = {kernel: f"{python_module}_{group}" for kernel, group in groups.items()}
        options = module_scope_options(index, python_module)
        yield Fix(
            id="",
            slug=finding.slug,
            title="Give each CUDA block size its own module",
            description="The module was compiled once per block size; kernels launched at one stable block size "
            "get a module per size, and kernels whose block size is chosen at run time one of their own. The "
            f"module's own options ({options or 'none'}) go to each new module.",
            safety=SAFE,
            codemod="split_by_block_dim",
            args={"file": file, "groups": named, "options": options},
            files=[file],
            expected=_expected(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )


def module_scope_options(index: SourceIndex, python_module: str) -> dict:
    """The constant options a file sets for its own module at module scope (carried when kernels move)."""
    options: dict = {}
    for call in index.option_calls_for(python_module):
        if call.at_module_scope and call.is_constant and call.in_repo:
            options.update(call.values)
    return options


def _serial(finding: Finding, report: Report, index: SourceIndex):
    entry = entry_file(report, index)
    details = finding.details
    first = next((launch for launch in report.trace.launches if launch.site), None)
    if entry is None or first is None or first.site.file != entry:
        yield Fix(
            id="",
            slug=finding.slug,
            title="Preload independent modules in parallel",
            description=f"Ceiling {details['ceiling']}x; no first launch in the entry point to insert a "
            "preload before (advisory).",
            safety=ADVISORY,
            codemod=None,
            expected=_expected(finding, 0),
        )
        return
    modules = sorted(details["modules"])
    # At the top of the function holding the first launch (a launch inside a loop must not get it per pass).
    where = {"before_line": first.site.line} if first.site.function == "<module>" else {"function": first.site.function}
    yield Fix(
        id="",
        slug=finding.slug,
        title=f"Preload {len(modules)} independent modules in parallel",
        description=f"{len(modules)} modules were built one after another ({details['sum_ms']:,.0f} ms summed; "
        f"slowest {details['slowest']} {details['max_ms']:,.0f} ms). Ceiling: {details['ceiling']}x on compile "
        "elapsed. Each module's real block_dim is declared so the preload builds the variant used.",
        safety=CONSENT,
        codemod="preload",
        args={
            "file": entry,
            "modules": modules,
            "device": details["device"],
            "max_workers": len(modules),
            "block_dims": details["modules"],
            **where,
        },
        files=[entry],
        expected=f"compile elapsed down to at best ~{details['max_ms']:,.0f} ms "
        f"(ceiling {details['ceiling']}x; untested estimate)",
    )


def _mathdx(finding: Finding, report: Report, index: SourceIndex):
    """One consent fix per repository module built with MathDx: its module option off, measured both ways."""
    for item in finding.details.get("modules", []):
        module, options = item["module"], item["options"]
        file = index.file_of_module(module)
        if file is None or not _in_repo(index, file):
            yield NotProposed(finding.slug, f"{module} builds MathDx code but is not a file of the repository")
            continue
        if not options:
            yield NotProposed(finding.slug, f"{module}: the MathDx builders that ran were not recorded")
            continue
        outside = item["module_ms"] - item["native_ms"]
        yield Fix(
            id="", slug=finding.slug, title=f"Build {module} without MathDx",
            description=f"{module} links {item['lto_builds']} MathDx LTO build(s); "
            f"{', '.join(f'{o}=False' for o in options)} at module scope trades that build time for slower "
            "kernels (Warp's own tile code instead of cuBLASDx/cuSolverDx/cuFFTDx). apply measures the build "
            "and the steady-state kernel time both ways; keeping it needs consent.",
            safety=CONSENT, codemod="module_options",
            args={"file": file, "options": dict.fromkeys(options, False), "replace": True}, files=[file],
            expected=f"{outside:.0f} ms of the module's {item['module_ms']:.0f} ms build is outside the native "
            "compiler (mostly LTO); kernel time cost: measured by apply",
            expected_ms=outside, allow_options=list(options), measure_kernels=True,
        )


def _advisory_only(finding: Finding, report: Report, index: SourceIndex):
    yield Fix(
        id="",
        slug=finding.slug,
        title=finding.title[:1].upper() + finding.title[1:],
        description=finding.reason,
        safety=ADVISORY,
        codemod=None,
        expected="report only: measure both ways before changing it",
    )


PROPOSERS: dict[str, Callable[[Finding, Report, SourceIndex], Iterable[Proposal]]] = {
    "cache-discarded": _cache,
    "late-module-options": _late_options,
    "config-after-import": _config_after_import,
    "kernel-after-load": _kernel_after_load,
    "late-overloads": _late_overloads,
    "concurrent-cpu-load": _concurrent_cpu_load,
    "precompiled-header": _precompiled_header,
    "unused-backward": _unused_backward,
    "unique-on-stable": _unique_on_stable,
    "granular-modules": _granular,
    "block-dim-spread": _block_dim,
    "serial-builds": _serial,
    "mathdx-lto": _mathdx,
    "unroll-budget": _advisory_only,
}
