"""CS-10: adjoint code generated for modules no tape ever differentiates."""

from __future__ import annotations

from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    entry_file,
    expected_effect,
    fired,
    first_project_import,
    in_repo,
    ruled_out,
    runtime,
    static,
)
from warp_fix.model import ADVISORY, CONSENT, FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import Report
from warp_fix.scan.index import EntryPoint, SourceIndex, TapeUse


class UnusedBackward(Mechanism):
    SLUG = "unused-backward"
    CS = "CS-10"
    TITLE = "backward (adjoint) code compiled but never used"
    SAFETY = (SAFE, CONSENT, ADVISORY)
    CODEMODS = ("module_options", "config_at_entry")

    def diagnose(self, inputs: Inputs) -> Finding:
        trace = inputs.report.trace
        differentiated = {launch.module for launch in trace.launches if launch.adjoint}
        tape_files = {t.file for t in inputs.index.tapes if t.in_repo}
        tape_files |= {inputs.repo_file(t.site.file) for t in trace.tapes if t.site}
        launched_from = {}
        for launch in trace.launches:
            if launch.site:
                launched_from.setdefault(launch.module, set()).add(inputs.repo_file(launch.site.file))
        unused, kept = [], []
        final = {build.module: build for build in inputs.user_builds()}  # the options it ended up with
        for build in final.values():
            if not build.options.get("enable_backward"):
                continue
            near_tape = launched_from.get(build.module, set()) & tape_files
            if build.module in differentiated or near_tape:
                kept.append(build.module)
            elif build.module not in unused:
                unused.append(build.module)
        evidence = [runtime(f"{m}: differentiated by a tape, backward kept", None) for m in sorted(set(kept))]
        evidence += [static("wp.Tape used here", t.file, t.line) for t in inputs.index.tapes if t.in_repo]
        if not unused:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                "every module with backward enabled is differentiated (or none has it)",
                evidence=evidence,
            )
        cost = sum(final[m].module_ms for m in unused)
        evidence += [runtime(f"{m}: backward enabled, no adjoint launch, no tape", None) for m in unused]
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(unused)} module(s) compile backward code nobody uses",
            evidence=evidence,
            cost_ms=cost,
            details={
                "modules": unused,
                "differentiated": sorted(set(kept)),
                "repo_uses_tape": bool(tape_files - {None}),
            },
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
        """Per module where the module is the repo's own file; process-wide (consent) only for library modules."""
        report, index = inputs.report, inputs.index
        modules = finding.details.get("modules", [])
        own = {m: index.file_of_module(m) for m in modules}
        for module, file in own.items():
            if file is None or not in_repo(index, file):
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
            if file is not None and in_repo(index, file):
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
                safety=ADVISORY, codemod=None, expected=expected_effect(finding, 0),
            )
            return
        entry = entry_file(report, index)
        if entry is None:
            yield NotProposed(
                finding.slug, "library modules compile unused backward code, but no entry point was found"
            )
            return
        args = {"file": entry, "name": "enable_backward", "value": False}
        target = first_project_import(index, entry, library)
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

    EXAMPLES = (
        Example(
            "a module of the repository compiles backward code; nothing differentiates it",
            case.run(
                builds=[case.build("sim")], launches=[case.launch("step", "sim")], source=case.index(files=["sim.py"])
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "an installed library's module compiles unused backward code: set it process-wide at the entry point",
            case.run(
                builds=[case.build("fluidlib.ops")],
                source=case.index(
                    files=["app/__main__.py"],
                    library_files=["fluidlib/ops.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
        ),
        Example(
            "the library's module is unused by tapes, but the repository uses a tape elsewhere: advice only",
            case.run(
                builds=[case.build("fluidlib.ops")],
                source=case.index(
                    files=["app/__main__.py"],
                    library_files=["fluidlib/ops.py"],
                    tapes=[TapeUse(file="app/train.py", line=12, kind="tape")],
                ),
            ),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "the module is launched from the file that records a tape",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("step", "sim", site=case.site("train.py", 14, "train"))],
                tapes=[case.tape(case.site("train.py", 12, "train"))],
            ),
            RULED_OUT,
        ),
        Example(
            "the only module with backward code is differentiated by an adjoint launch",
            case.run(builds=[case.build("sim")], launches=[case.launch("step", "sim", adjoint=True)]),
            RULED_OUT,
        ),
    )


def _kernels_in_repo(report: Report, index: SourceIndex, module: str) -> bool:
    keys = {k for b in report.trace.builds if b.module == module for k in b.kernels}
    names = {key.split(".")[-1].split("__locals__")[-1] for key in keys}
    return any(k.in_repo for k in index.kernels if k.name in names)
