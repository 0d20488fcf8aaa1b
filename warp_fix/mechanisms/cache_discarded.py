"""CS-2: the kernel cache is thrown away, so every start is a cold start."""

from __future__ import annotations

import re
from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ms, ruled_out, runtime, static
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.scan.index import CacheOperation

MAINTENANCE_WORDS = re.compile(r"rebuild|maint|clean|purge|reset|invalidate|wipe", re.IGNORECASE)


class CacheDiscarded(Mechanism):
    SLUG = "cache-discarded"
    CS = "CS-2"
    TITLE = "compiled kernels thrown away, so every start compiles again"
    SAFETY = (SAFE,)
    CODEMODS = ("keep_cache",)

    def diagnose(self, inputs: Inputs) -> Finding:
        report = inputs.report
        summary = report.summary
        executed = {}
        evidence = []
        for op in report.trace.cache_ops:
            if op.kind == "kernel_cache_dir" and not _temporary(op.value):
                continue
            evidence.append(runtime(f"{op.kind}({'' if op.value is None else op.value}) ran", op.site, inputs))
            if op.site is not None:
                file = inputs.repo_file(op.site.file)
                if file:
                    executed[(file, op.site.line)] = op.kind
        incidental, maintenance = [], []
        for operation in inputs.index.cache_operations:
            if not operation.in_repo:
                continue
            if (operation.file, operation.line) in executed and not is_maintenance(operation):
                incidental.append(operation)
            elif is_maintenance(operation) or (operation.file, operation.line) not in executed:
                maintenance.append(operation)
                evidence.append(
                    static(
                        f"{operation.kind} kept: maintenance path, not in the measured run",
                        operation.file,
                        operation.line,
                    )
                )
        warm = summary.warm_builds if summary else 0
        if not warm and not incidental:
            return ruled_out(
                self.SLUG, self.TITLE, "the warm run compiled nothing: the cache is reused", evidence=evidence
            )
        cost = summary.warm_module_ms.median if summary else 0.0
        reason = (
            f"the warm run still compiled {warm} module(s) ({ms(cost)})"
            if warm
            else f"{len(incidental)} cache-destroying statement(s) ran"
        )
        return fired(
            self.SLUG,
            self.TITLE,
            reason,
            evidence=evidence,
            cost_ms=cost,
            extra_builds=warm,
            details={
                "sites": [
                    {"file": o.file, "line": o.line, "kind": o.kind, "function": o.function} for o in incidental
                ],
                "maintenance": [{"file": o.file, "line": o.line, "function": o.function} for o in maintenance],
            },
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
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
                expected=f"the warm start compiles {finding.extra_builds} fewer module(s); "
                f"~{finding.cost_ms:,.0f} ms of warm module work",
                expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )
        if not by_file:
            yield NotProposed(
                finding.slug,
                "the cache is discarded, but no statement in the repository was seen doing "
                "it in the measured run (an environment setting or library code?)",
            )

    EXAMPLES = (
        Example(
            "a clear at start ran; the clear in a rebuild() maintenance function did not",
            case.run(
                builds=[case.build("app")],
                cache_ops=[case.cache_op("clear_kernel_cache", site=case.site("app.py", 5))],
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["app.py"],
                    cache_operations=[
                        CacheOperation(file="app.py", line=5, kind="clear_kernel_cache"),
                        CacheOperation(file="app.py", line=9, function="rebuild", kind="clear_kernel_cache"),
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
        ),
        Example(
            "the warm run compiles, but no statement of the repository discards the cache",
            case.run(builds=[case.build("app")], warm_builds=1, warm_module_ms=100.0),
            FIRED,
            fixes=(),
            declined="no statement in the repository",
        ),
        Example(
            "the warm run compiles nothing and the only clear is a maintenance path",
            case.run(
                builds=[case.build("app")],
                source=case.index(
                    files=["app.py"],
                    cache_operations=[
                        CacheOperation(file="app.py", line=9, function="rebuild", kind="clear_kernel_cache")
                    ],
                ),
            ),
            RULED_OUT,
        ),
    )


def is_maintenance(operation) -> bool:
    """A clear that someone asked for (a --rebuild flag, a documented maintenance function)."""
    if operation.maintenance_guard:
        return True
    texts = [operation.function or "", operation.function_doc or ""]
    return any(MAINTENANCE_WORDS.search(text) for text in texts)


def _temporary(path) -> bool:
    return isinstance(path, str) and ("<private>" in path or "/tmp" in path or "Temp" in path)
