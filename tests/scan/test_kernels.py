"""Kernels, Warp functions and kernel factories."""

from __future__ import annotations

import pytest


def test_a_module_scope_kernel_records_where_it_is_and_its_module(scan):
    index = scan(
        {
            "app/__init__.py": "",
            "app/physics.py": """
                import warp as wp

                @wp.kernel
                def integrate(x: wp.array(dtype=float)):
                    x[wp.tid()] += 1.0
            """,
        }
    )
    kernel = index.kernel_named("integrate")
    assert kernel is not None
    assert (kernel.file, kernel.line, kernel.decorator_line) == ("app/physics.py", 4, 3)
    assert kernel.python_module == "app.physics"
    assert kernel.module_kind == "default" and kernel.at_module_scope and kernel.function is None
    assert kernel.captures == [] and not kernel.is_generic
    assert index.kernels_of_module("app.physics") == [kernel]


@pytest.mark.parametrize(
    "imports, decorator",
    [
        ("import warp as wp", "@wp.kernel"),
        ("import warp", "@warp.kernel"),
        ("from warp import kernel", "@kernel"),
        ("from warp import kernel as warp_kernel", "@warp_kernel"),
        ("import warp as w", "@w.kernel(enable_backward=False)"),
    ],
)
def test_kernels_are_found_however_warp_was_imported(scan, imports, decorator):
    index = scan({"k.py": f"{imports}\n\n{decorator}\ndef k(a: float):\n    pass\n"})
    assert [k.name for k in index.kernels] == ["k"]


def test_a_decorator_merely_named_kernel_is_not_a_warp_kernel(scan):
    index = scan(
        {
            "k.py": """
                import warp as wp
                from mylib import kernel

                @kernel
                def not_warp():
                    pass
            """
        }
    )
    assert index.kernels == []


def test_decorator_arguments_are_recorded_as_values(scan):
    index = scan(
        {
            "k.py": """
                import warp as wp

                @wp.kernel(module="unique", module_options={"fast_math": True}, enable_backward=False)
                def fast(a: float):
                    pass

                @wp.kernel(module="physics")
                def named(a: float):
                    pass
            """
        }
    )
    fast, named = index.kernel_named("fast"), index.kernel_named("named")
    assert (fast.module_kind, fast.module_value) == ("unique", "unique")
    assert fast.module_options.is_constant and fast.module_options.value == {"fast_math": True}
    assert fast.enable_backward.value is False
    assert (named.module_kind, named.module_value) == ("literal", "physics")
    assert index.kernels_of_module("physics") == [named]


def test_a_factory_that_captures_its_parameters(scan):
    index = scan(
        {
            "factory.py": """
                import warp as wp

                def make_scale(dtype, factor, module="unique"):
                    offset = factor * 2

                    @wp.kernel(module=module)
                    def scale(a: wp.array(dtype=dtype)):
                        i = wp.tid()
                        a[i] = a[i] * factor + offset

                    return scale
            """
        }
    )
    kernel = index.kernel_named("scale")
    assert not kernel.at_module_scope
    assert kernel.function == "make_scale" and kernel.enclosing_functions == ["make_scale"]
    assert kernel.captures == ["dtype", "factor", "offset"]  # dtype through the annotation
    assert (kernel.module_kind, kernel.module_value) == ("parameter", "module")
    assert kernel.module_from_parameter and kernel.module_parameter_default.value == "unique"

    factory = index.factory_named("make_scale")
    assert factory.kernels == ["scale"] and factory.returns == ["scale"]
    assert factory.parameter("module").default.value == "unique"
    assert factory.parameter("dtype").default is None


def test_a_factory_kernel_that_captures_nothing(scan):
    index = scan(
        {
            "factory.py": """
                import functools
                import warp as wp

                SCALE = 2.0

                class Solver:
                    @functools.cache
                    def build(self):
                        @wp.kernel
                        def step(a: wp.array(dtype=float)):
                            a[wp.tid()] *= SCALE
                        return step
            """
        }
    )
    kernel = index.kernel_named("step")
    assert kernel.captures == []  # SCALE is a module global, not a closure
    assert kernel.function == "Solver.build"
    factory = index.factory_named("Solver.build")
    assert factory.decorators == ["functools.cache"] and factory.returns == ["step"]
    assert index.factory_named(".".join(kernel.enclosing_functions)) is factory


def test_a_methods_optional_kernel_records_what_chooses_it_and_a_local_read_by_wp_static(scan):
    index = scan(
        {
            "rec.py": """
                import warp as wp

                class Recorder:
                    def record(self, width):
                        if self.sync_mode:
                            pass
                        else:
                            @wp.kernel
                            def advance(heads: wp.array(dtype=int), window: int):
                                heads[wp.tid()] = (heads[wp.tid()] + 1) % window

                            @wp.kernel
                            def smooth(a: wp.array(dtype=float)):
                                a[wp.tid()] = a[wp.tid()] / float(wp.static(width))
            """
        }
    )
    advance, smooth = index.kernel_named("advance"), index.kernel_named("smooth")
    assert advance.chosen_by == ["self"] and advance.captures == []
    assert smooth.captures == ["width"]  # a local read at code generation is run-time data too


def test_nested_factories_are_found_by_their_function_path(scan):
    index = scan(
        {
            "nested.py": """
                import warp as wp

                def outer():
                    def make(n):
                        @wp.kernel
                        def k(a: float):
                            b = n
                        return k
                    return make
            """
        }
    )
    kernel = index.kernel_named("k")
    assert kernel.function == "outer.<locals>.make" and kernel.enclosing_functions == ["outer", "make"]
    assert kernel.captures == ["n"]
    factory = index.factory_named(".".join(kernel.enclosing_functions))
    assert (factory.qualname, factory.function_path) == ("outer.<locals>.make", "outer.make")


def test_a_module_name_assigned_locally_is_an_expression_not_a_parameter(scan):
    index = scan(
        {
            "k.py": """
                import warp as wp

                def make(name):
                    module = name + "_kernels"

                    @wp.kernel(module=module)
                    def k(a: float):
                        pass
                    return k
            """
        }
    )
    kernel = index.kernel_named("k")
    assert (kernel.module_kind, kernel.module_value) == ("expression", "module")


def test_generic_kernels_are_flagged_with_their_generic_parameters(scan):
    index = scan(
        {
            "g.py": """
                from typing import Any
                import warp as wp

                @wp.kernel
                def fill(a: wp.array(dtype=Any), value: Any, n: int):
                    pass

                @wp.kernel
                def scalar(a: wp.array(dtype=wp.Float)):
                    pass

                @wp.kernel
                def concrete(a: wp.array(dtype=wp.float32)):
                    pass
            """
        }
    )
    assert index.kernel_named("fill").generic_parameters == ["a", "value"]
    assert index.kernel_named("scalar").is_generic
    assert not index.kernel_named("concrete").is_generic


def test_warp_functions_are_indexed_with_their_kind(scan):
    index = scan(
        {
            "f.py": """
                import warp as wp

                @wp.func
                def square(x: float):
                    return x * x

                def make():
                    @wp.func_native("return a;")
                    def native(a: float): ...
                    return native
            """
        }
    )
    square, native = index.funcs
    assert (square.name, square.kind, square.line, square.at_module_scope) == ("square", "func", 4, True)
    assert (native.kind, native.function, native.at_module_scope) == ("func_native", "make", False)


def test_kernels_made_by_a_call_or_the_projects_own_decorator_are_found(scan):
    index = scan(
        {
            "app/__init__.py": "",
            "app/decorators.py": """
                import warp as wp

                def kernel(fn=None, **options):
                    options.setdefault("enable_backward", False)
                    return wp.kernel(fn, **options)
            """,
            "app/ops.py": """
                import warp as wp
                from app.decorators import kernel

                @kernel(module="unique")
                def rectify(x: wp.array(dtype=float)):
                    x[wp.tid()] = wp.abs(x[wp.tid()])

                def make_box(size: int):
                    def box(x: wp.array(dtype=float)):
                        x[wp.tid()] = x[wp.tid()] / float(size)

                    box.__qualname__ = f"box_{size}"
                    return wp.kernel(box, module="unique", module_options={"max_unroll": size})
            """,
        }
    )
    rectify = index.kernel_at("app/ops.py", 4)
    assert (rectify.name, rectify.made_by, rectify.module_kind) == ("rectify", "project-decorator", "unique")
    box = index.kernel_at("app/ops.py", 9)
    assert (box.name, box.made_by, box.decorator_line, box.captures) == ("box", "call", 13, ["size"])
    assert box.module_options.source == '{"max_unroll": size}'
    assert [k.name for k in index.kernels] == ["rectify", "box"]


def test_a_kernel_made_in_a_branch_on_a_factory_parameter_is_optional(scan):
    index = scan(
        {
            "shade.py": """
                import warp as wp

                _plain = None

                def make_shader(kind: str):
                    global _plain
                    if kind == "toon":
                        @wp.kernel(module="unique")
                        def toon(x: wp.array(dtype=float)):
                            x[wp.tid()] = wp.floor(x[wp.tid()])
                        return toon
                    if _plain is None:  # a lazy singleton: every run that gets here makes the same kernel
                        @wp.kernel(module="unique")
                        def plain(x: wp.array(dtype=float)):
                            x[wp.tid()] = x[wp.tid()]
                        _plain = plain
                    return _plain
            """
        }
    )
    assert index.kernel_named("toon").chosen_by == ["kind"]
    assert index.kernel_named("plain").chosen_by == []


def test_kernels_of_factories_in_a_registry_are_optional(scan):
    index = scan(
        {
            "effects.py": """
                import warp as wp

                def make_bloom():
                    @wp.kernel
                    def bloom(x: wp.array(dtype=float)):
                        x[wp.tid()] = x[wp.tid()] * 1.2
                    return bloom

                def make_fade():
                    @wp.kernel
                    def fade(x: wp.array(dtype=float)):
                        x[wp.tid()] = x[wp.tid()] * 0.5
                    return fade

                EFFECTS = {"bloom": make_bloom}
            """
        }
    )
    assert index.kernel_named("bloom").chosen_by == ["EFFECTS[...]"]
    assert index.kernel_named("fade").chosen_by == []


def test_module_scope_kernels_in_a_registry_are_plugin_entries(scan):
    index = scan(
        {
            "filters.py": """
                import warp as wp

                @wp.kernel
                def soften(x: wp.array(dtype=float)):
                    x[wp.tid()] = x[wp.tid()] * 0.9

                @wp.kernel
                def clip(x: wp.array(dtype=float)):
                    x[wp.tid()] = wp.min(x[wp.tid()], 1.0)

                FILTERS = {"soften": soften}

                def register(name, kernel):
                    FILTERS[name] = kernel
            """
        }
    )
    assert index.kernel_named("soften").chosen_by == ["FILTERS[...]"]
    assert index.kernel_named("clip").chosen_by == []


def test_module_scope_kernels_one_function_picks_by_configuration_are_a_closed_set(scan):
    index = scan(
        {
            "edges.py": """
                import warp as wp

                @wp.kernel
                def clamp_edges(x: wp.array(dtype=float)):
                    pass

                @wp.kernel
                def wrap_edges(x: wp.array(dtype=float)):
                    pass

                @wp.kernel
                def zero_edges(x: wp.array(dtype=float)):
                    pass

                EDGES = {"zero": zero_edges}

                def edge_kernel(kind):
                    if kind == "clamp":
                        return clamp_edges
                    elif kind == "wrap":
                        return wrap_edges
                    raise ValueError(kind)

                def by_lookup(kind):
                    return EDGES[kind]

                def by_call(kind):
                    if make(kind):
                        return clamp_edges
                    return wrap_edges
            """
        }
    )
    assert [(k.name, k.picked_by, k.picked_by_file, k.picked_by_line) for k in index.kernels] == [
        ("clamp_edges", "edge_kernel", "edges.py", 17),
        ("wrap_edges", "edge_kernel", "edges.py", 17),
        ("zero_edges", None, None, None),  # a registry's entry: plugin code, not an alternative
    ]
    assert index.kernel_named("zero_edges").chosen_by == ["EDGES[...]"]
    selectors = [(s.name, s.kernels) for s in index.selectors]
    assert selectors == [("edge_kernel", ["edges.clamp_edges", "edges.wrap_edges"])]


def test_a_method_that_picks_module_scope_kernels_by_the_kind_its_object_was_given_is_a_closed_set(scan):
    index = scan(
        {
            "edges.py": """
                import warp as wp

                @wp.kernel
                def clamp_edges(x: wp.array(dtype=float)):
                    pass

                @wp.kernel
                def wrap_edges(x: wp.array(dtype=float)):
                    pass

                class EdgeKernel:
                    def __init__(self, kind):
                        self.kind = kind

                    def run(self):
                        if self.kind == "clamp":
                            return clamp_edges
                        elif self.kind == "wrap":
                            return wrap_edges
                        raise ValueError(self.kind)

                    def cached(self):
                        return self.kernel

                def edge_kernel(kind):
                    return EdgeKernel(kind).run()
            """
        }
    )
    assert [(k.name, k.picked_by, k.picked_by_file, k.picked_by_line) for k in index.kernels] == [
        ("clamp_edges", "EdgeKernel.run", "edges.py", 15),
        ("wrap_edges", "EdgeKernel.run", "edges.py", 15),
    ]
    assert [(s.name, s.kernels) for s in index.selectors] == [
        ("EdgeKernel.run", ["edges.clamp_edges", "edges.wrap_edges"])
    ]


def test_a_function_of_another_file_that_picks_imported_kernels_by_configuration_makes_them_alternatives(scan):
    index = scan(
        {
            "app/__init__.py": "",
            "app/edges.py": """
                import warp as wp

                @wp.kernel
                def clamp_edges(x: wp.array(dtype=float)):
                    pass

                @wp.kernel
                def wrap_edges(x: wp.array(dtype=float)):
                    pass
            """,
            "app/pipeline.py": """
                import warp as wp

                from app import config
                from . import edges
                from .edges import clamp_edges

                def edge_kernel():
                    match config.EDGE:
                        case "clamp":
                            return clamp_edges
                        case "wrap":
                            return edges.wrap_edges
                    raise ValueError(config.EDGE)

                def not_a_set(kind):
                    if kind == "clamp":
                        return clamp_edges
                    return wp.kernel
            """,
        }
    )
    assert [(k.name, k.picked_by, k.picked_by_file, k.picked_by_line) for k in index.kernels] == [
        ("clamp_edges", "edge_kernel", "app/pipeline.py", 7),
        ("wrap_edges", "edge_kernel", "app/pipeline.py", 7),
    ]
