"""Helpers several mechanisms share: building findings and evidence, and placing fixes in the repository."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from codemods.specs import ConfigAtEntryArgs, OptionValue
from warp_fix.mechanisms._base import Inputs
from warp_fix.model import FIRED, NOT_APPLICABLE, RULED_OUT, Evidence, Finding
from warp_fix.report import Launch, ModuleBuild, OptionSource, Site, StackFrame
from warp_fix.wording import counted

WARP_BLOCK_DIM = 256  # what a CUDA launch that names no block_dim uses (the module option's default)

# --- findings and evidence -----------------------------------------------------------------------------------


def launch_block_dim(launch: Launch, build: ModuleBuild) -> int:
    """The block size a launch ran at: as asked, else 1 on the CPU and the module's default on CUDA."""
    if launch.block_dim is not None:
        return launch.block_dim
    if launch.device.startswith("cpu"):
        return 1
    return int(build.options.get("block_dim") or WARP_BLOCK_DIM)


def launch_sizes(build: ModuleBuild, launches: Iterable[Launch]) -> set[int]:
    """The block sizes the launches of `build`'s module ran at, on its kind of device."""
    kind = build.device.split(":")[0]
    return {
        launch_block_dim(lc, build) for lc in launches if lc.module == build.module and lc.device.split(":")[0] == kind
    }


def runtime(detail: str, site: Site | None, inputs: Inputs | None = None) -> Evidence:
    if site is None:
        return Evidence("runtime", detail)
    file = (inputs.repo_file(site.file) if inputs else None) or site.file
    return Evidence("runtime", detail, file, site.line)


def static(detail: str, file: str, line: int) -> Evidence:
    return Evidence("static", detail, file, line)


def fired(slug: str, title: str, reason: str, **kwargs) -> Finding:
    return Finding(slug, FIRED, title, reason, **kwargs)


def ruled_out(slug: str, title: str, reason: str, **kwargs) -> Finding:
    return Finding(slug, RULED_OUT, title, reason, **kwargs)


def not_applicable(slug: str, title: str, reason: str) -> Finding:
    return Finding(slug, NOT_APPLICABLE, title, reason)


def first_option_source(inputs: Inputs, module: str, key: str) -> OptionSource | None:
    """Where the value a module's first build used for `key` came from; None when the run did not build it."""
    build = next((b for b in inputs.report.trace.builds if b.module == module), None)
    return build.option_source(key) if build is not None else None


def option_origin(inputs: Inputs, module: str, key: str) -> str:
    """`first_option_source` for people: a call's line, or Warp's default."""
    source = first_option_source(inputs, module, key)
    if source is None:
        return "not recorded"
    if source.kind == "default":
        return "Warp's default"
    name = {"config": "wp.config", "set_module_options": "wp.set_module_options"}.get(source.kind, source.kind)
    if source.site is None:
        return name
    return f"{name} at {inputs.repo_file(source.site.file) or source.site.file}:{source.site.line}"


def builds_of(inputs: Inputs, modules: Iterable[str]) -> int:
    """How many times the run built these modules (every device and block size): a finding's `all_builds`."""
    wanted = set(modules)
    return sum(b.module in wanted and b.status != "error" for b in inputs.report.trace.builds)


def ms(value: float) -> str:
    return f"{value:,.0f} ms"


def module_names(modules: list[str], inputs: Inputs, most: int = 3) -> str:
    """The modules by name, or, past `most`, counted by the Python module that defines their kernels:
    "9 modules, from warp._src.sparse (7) and warp._src.fem.linalg (2)" reads better than nine hashed names."""
    if len(modules) <= most:
        return ", ".join(modules)
    origins: dict[str, int] = {}
    for module in modules:
        origin = inputs.scope.defined_in(inputs.final_builds[module]) if module in inputs.final_builds else None
        origins[origin or "elsewhere"] = origins.get(origin or "elsewhere", 0) + 1
    ranked = sorted(origins.items(), key=lambda item: -item[1])
    # counts say something only where a Python module defines several of them
    parts = [f"{name} ({count})" if len(origins) < len(modules) else name for name, count in ranked]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{counted(len(modules), 'module')}, from {listed}"


# --- placing fixes ---------------------------------------------------------------------------------------------


def expected_effect(finding: Finding, builds: int | None = None, cost_ms: float | None = None) -> str:
    """The Fix's `expected` line from the measured extra builds it removes and their cost (the finding's own
    unless the fix removes only some of them)."""
    builds = finding.extra_builds if builds is None else builds
    cost_ms = finding.cost_ms if cost_ms is None else cost_ms
    parts = []
    if builds:
        of_all = f" of {finding.all_builds:,}" if finding.all_builds else ""
        parts.append(f"removes {counted(builds, 'build')}{of_all}")
    if cost_ms:
        parts.append(f"~{cost_ms:,.0f} ms of measured cold module work")
    return "; ".join(parts) or "no measured cost attached (untested estimate: small)"


def entry_file(inputs: Inputs) -> str | None:
    """The file the measured command runs first (the scope's `entry`)."""
    return inputs.scope.entry


@dataclass(frozen=True)
class EntryPlacement:
    """Where the run shows a process-wide setting at the entry point must go for its target modules to see it.

    A Warp module copies `wp.config`'s creation-time options when it is created, so the setting must run before
    the entry point's top-level statement that created the first of them: the frame of the entry file at module
    scope on the stack the tracer recorded then, whatever that statement looks like (`import pkg`,
    `import pkg as p`, a `setup()` that imports the library inside)."""

    statement: StackFrame | None  # that statement; None: every target was created inside a function it calls
    reached: list[str]  # the targets created while the entry point ran (or whose creation the run did not record)
    created_before: dict[str, StackFrame]  # target -> the outermost frame creating it before the entry point ran

    def args(self, entry: str, name: str, value: OptionValue, line: int | None = None) -> ConfigAtEntryArgs:
        statement = self.statement
        return ConfigAtEntryArgs(
            file=entry, name=name, value=value, line=line,
            before_line=statement.line if statement else None,
            before_statement=statement.text or None if statement else None,
        )

    def creator(self) -> str:
        """The statement for people: "`import pkg as p` at run.py:3"."""
        if self.statement is None:
            return ""
        return f"`{self.statement.text}` at {self.statement}" if self.statement.text else str(self.statement)

    def unreachable(self) -> str:
        """Why the entry point cannot reach the modules created before it ran, in one line."""
        where = "; ".join(
            f"{module} by `{frame.text}` at {frame}" if frame.text else f"{module} at {frame}"
            for module, frame in self.created_before.items()
        )
        them = "it" if len(self.created_before) == 1 else "them"
        return f"created before the entry point ran ({where}): a setting there cannot reach {them}"


def entry_placement(inputs: Inputs, entry: str, modules: Iterable[str]) -> EntryPlacement:
    """Where the run created each of `modules`, seen from the entry file `entry` (repo-relative)."""
    statements: list[StackFrame] = []
    reached: list[str] = []
    before: dict[str, StackFrame] = {}
    for module in modules:
        stack = next((b.creation_stack for b in inputs.report.trace.builds if b.module == module and b.creation_stack),
                     ())
        in_entry = [frame for frame in stack if inputs.repo_file(frame.file) == entry]
        if stack and not in_entry:
            outermost = stack[-1]
            before[module] = replace(outermost, file=inputs.repo_file(outermost.file) or outermost.file)
            continue
        reached.append(module)
        if in_entry and in_entry[-1].at_module_scope:
            statements.append(replace(in_entry[-1], file=entry))
    first = min(statements, key=lambda frame: frame.line) if statements else None
    return EntryPlacement(first, reached, before)


def in_repo(inputs: Inputs, file: str) -> bool:
    """A repo-relative file of the project's own code that a fix may edit, as the scope says."""
    return inputs.scope.editable_file(file)


def module_scope_options(inputs: Inputs, python_module: str) -> dict:
    """The constant options a file sets for its own module at module scope (carried when kernels move)."""
    options: dict = {}
    for call in inputs.index.option_calls_for(python_module):
        if call.at_module_scope and call.is_constant and inputs.scope.in_project(call):
            options.update(call.values)
    return options
