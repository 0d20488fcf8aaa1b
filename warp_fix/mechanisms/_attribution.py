"""Which repository source a build came from, and where an option value it compiled with was set.

Attribution goes through each kernel's code object (the tracer's `kernel_sources`), never through module
names: a module named by a string spans files, a `module="unique"` kernel is named `<key>_<8 hex>`, and a
script's module is `__main__`. A fix must edit the place that decides, so both answers name files and lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codemods.specs import ModuleOptionsArgs
from warp_fix.mechanisms._base import Inputs
from warp_fix.report import KernelSource, ModuleBuild, Site
from warp_fix.scan import KernelDef

LIBRARY = "library"  # no kernel of the build is defined in the repository


@dataclass(frozen=True)
class Location:
    """A line of a file, repo-relative when inside the repository; printed `file:line`."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    @classmethod
    def of(cls, site: Site, inputs: Inputs) -> Location:
        return cls(inputs.repo_file(site.file) or site.file, site.line)


@dataclass
class ModuleSource:
    """The repository source of a build: its kind (file / named / unique / mixed / library) and kernels."""

    kind: str
    files: list[str] = field(default_factory=list)  # repo-relative, in the order Warp registered the kernels
    kernels: list[KernelSource] = field(default_factory=list)  # those defined in the repository


def module_source(build: ModuleBuild, inputs: Inputs) -> ModuleSource | None:
    """From the recorded kernel sources; None for a report that predates them."""
    if not build.kernel_sources:
        return None
    kernels = [k for k in build.kernel_sources if inputs.repo_file(k.file)]
    if not kernels:
        return ModuleSource(LIBRARY)
    files = list(dict.fromkeys(inputs.repo_file(k.file) or k.file for k in kernels))
    kinds = {k.module_kind for k in build.kernel_sources}
    return ModuleSource(kinds.pop() if len(kinds) == 1 else "mixed", files, kernels)


@dataclass(frozen=True)
class OptionsTarget:
    """Where the `module_options` codemod sets a module's options: the file's own module (`__main__` too), a
    string-named module (`module=`), or a unique kernel (`kernel=`, its `module_options=`)."""

    file: str
    module: str | None = None
    kernel: str | None = None

    def place(self, options: dict[str, Any], replace: bool | None = None) -> ModuleOptionsArgs:
        """The codemod's place: this target (`file`, and `module` or `kernel` when set) and the `options` to set."""
        return ModuleOptionsArgs(file=self.file, module=self.module, kernel=self.kernel, options=options,
                                 replace=replace)


@dataclass(frozen=True)
class NoTarget:
    """A module whose options have no one place to be set, and why."""

    reason: str


def module_options_target(module: str, source: ModuleSource, inputs: Inputs) -> OptionsTarget | NoTarget:
    """The `module_options` codemod's target for a module, by its shape."""
    if source.kind == "file":
        return OptionsTarget(source.files[0])
    if source.kind == "named":
        return OptionsTarget(source.files[0], module=module)
    if source.kind == "unique":
        kernel = unique_kernel_name(source, inputs)
        if kernel is None:
            return NoTarget('its module="unique" kernel has no definition the scan knows')
        return OptionsTarget(source.files[0], kernel=kernel)
    return NoTarget(f"its kernels come from modules of different kinds ({', '.join(source.files)})")


def unique_kernel_name(source: ModuleSource, inputs: Inputs) -> str | None:
    """The function name the unique kernel is declared with (a factory may rename `__qualname__`)."""
    kernel = source.kernels[0]
    file = inputs.repo_file(kernel.file)
    defined = (k for k in inputs.index.kernels if k.file == file and kernel.line in (k.line, k.decorator_line))
    static = next(defined, None)
    if static is not None:
        return static.name
    # `wp.kernel(fn, module="unique")` called as a function: the plain def at the kernel's line
    function = next((c.function for c in inputs.index.calls if c.file == file and c.line == kernel.line), None)
    return function.split(".")[-1] if function else None


@dataclass(frozen=True)
class Provenance:
    """Where the value of one option a build compiled with came from.

    kind: "decorator" (a literal in `@wp.kernel(...)`), "factory-parameter" (a factory's `parameter`, in the
    kernel's decorator or its `module_options`; `call_site` is the call that passed it), "module_options",
    "set_module_options", "options.update", "config" or "default" (Warp's own default).
    """

    key: str
    kind: str
    site: Location | None = None
    call_site: Location | None = None  # the factory call that chose the value
    callee: str | None = None  # the factory's name, as `make_filter`
    parameter: str | None = None  # the factory's parameter a caller passes (`enable_backward`, `grad`)

    def describe(self) -> str:
        if self.kind == "default":
            return f"{self.key}=True by Warp's default"
        if self.kind == "factory-parameter":
            return f"{self.key} is a parameter of {self.callee}() ({self.site}), passed at {self.call_site}"
        where = {"decorator": "the kernel decorator", "config": "wp.config"}.get(self.kind, self.kind)
        return f"{self.key} is set by {where}" + (f" at {self.site}" if self.site else "")


def option_provenance(build: ModuleBuild, key: str, inputs: Inputs, value: object = True) -> Provenance:
    """Where `key` got `value`: a kernel's own option overrides the module's (Warp 1.19), so a kernel declaring
    that value decides first; else the module's source."""
    for kernel in build.kernel_sources:
        if kernel.options.get(key, not value) != value:
            continue
        file = inputs.repo_file(kernel.file) or kernel.file
        static = next(
            (k for k in inputs.index.kernels if k.file == file and kernel.line in (k.line, k.decorator_line)), None
        )
        passed = _passed_by_caller(static, kernel, key, inputs)
        if passed is not None:
            return passed
        line = static.decorator_line if static is not None else kernel.line
        return Provenance(key, "decorator", Location(file, line))
    source = build.option_source(key)
    site = Location.of(source.site, inputs) if source.site else None
    if source.kind == "module_options" and site is not None:
        # `wp.kernel(fn, module="unique", module_options={key: parameter})` in a factory: the caller chooses
        static = next((k for k in inputs.index.kernels if (k.file, k.decorator_line) == (site.file, site.line)), None)
        passed = _passed_by_caller(static, build.kernel_sources[0], key, inputs) if build.kernel_sources else None
        if passed is not None:
            return passed
    return Provenance(key, source.kind, site)


def _passed_by_caller(static: KernelDef | None, kernel: KernelSource, key: str, inputs: Inputs) -> Provenance | None:
    """The factory parameter a kernel's option comes from, with the call that passed it; None when the value is
    the factory's own."""
    parameter = static.parameter_for(key) if static is not None else None
    if static is None or parameter is None or not static.enclosing_functions:
        return None
    return Provenance(key, "factory-parameter", Location(static.file, static.decorator_line),
                      _outer_call(kernel.created, inputs), static.enclosing_functions[-1], parameter)


def _outer_call(created: Site | None, inputs: Inputs) -> Location | None:
    """The first outer frame of a kernel's creation: the call into the factory (`filters.py:5`)."""
    callers = created.callers() if created is not None else ()
    return Location.of(callers[0], inputs) if callers else None
