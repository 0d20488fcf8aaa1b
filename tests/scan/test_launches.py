"""Launch sites, preloads, overloads and tapes."""

from __future__ import annotations

import pytest


def test_launch_sites_record_kernel_block_dim_and_device(scan):
    index = scan(
        {
            "run.py": """
                import warp as wp
                from warp import launch_tiled as tiled

                def step(kernels, n, bd):
                    wp.launch(kernels.integrate, dim=n, inputs=[], device="cuda:0")
                    wp.launch(kernel=solve, dim=n, block_dim=128)
                    tiled(gemm, dim=[n], inputs=[], block_dim=bd * 2)
            """
        }
    )
    plain, literal, tiled = index.launches
    assert (plain.kind, plain.kernel, plain.block_dim, plain.device.value) == (
        "launch",
        "kernels.integrate",
        None,
        "cuda:0",
    )
    assert plain.function == "step" and plain.line == 5
    assert literal.block_dim.is_constant and literal.block_dim.value == 128
    assert tiled.kind == "launch_tiled"
    assert not tiled.block_dim.is_constant and tiled.block_dim.source == "bd * 2"
    assert index.launches_of("integrate") == [plain]


def test_preloads_record_workers_and_device(scan):
    index = scan(
        {
            "pre.py": """
                import warp as wp
                wp.force_load(device="cuda:0", modules=[a, b], max_workers=4)
                wp.load_module(physics, "cpu", max_workers=workers)
            """
        }
    )
    force, load = index.preloads
    assert (force.kind, force.device.value, force.max_workers.value) == ("force_load", "cuda:0", 4)
    assert force.modules.source == "[a, b]"
    assert (load.kind, load.modules.source, load.device.value) == ("load_module", "physics", "cpu")
    assert not load.max_workers.is_constant


def test_overloads_in_both_forms(scan):
    index = scan(
        {
            "o.py": """
                import warp as wp
                wp.overload(fill, [wp.array(dtype=wp.float32), wp.float32])

                @wp.overload
                def fill(a: wp.array(dtype=wp.float64), v: wp.float64): ...
            """
        }
    )
    call, decorator = index.overloads
    assert (call.form, call.kernel) == ("call", "fill")
    assert call.types == "[wp.array(dtype=wp.float32), wp.float32]"
    assert (decorator.form, decorator.kernel, decorator.types) == ("decorator", "fill", None)


def test_tapes_and_their_backward_calls(scan):
    index = scan(
        {
            "t.py": """
                import warp as wp

                def train(loss):
                    tape = wp.Tape()
                    with wp.Tape() as inner:
                        pass
                    tape.backward(loss)
                    inner.backward()
                    optimizer.backward()
            """
        }
    )
    assert [(t.kind, t.receiver, t.function) for t in index.tapes] == [
        ("tape", "tape", "train"),
        ("tape", "inner", "train"),
        ("backward", "tape", "train"),
        ("backward", "inner", "train"),
    ]


def test_a_factory_call_launched_by_its_own_loop_records_where_the_values_come_from(scan):
    index = scan(
        {
            "bank.py": """
                import warp as wp
                from filters import make_filter

                WIDTHS = (3, 5)

                class Bank:
                    def __init__(self, widths):
                        self.widths = tuple(widths)

                    def run(self, x):
                        for width in self.widths:
                            kernel = make_filter(width)
                            wp.launch(kernel, dim=1, inputs=[x])

                    def fixed(self, x):
                        for w in WIDTHS:
                            wp.launch(make_filter(w, 2), dim=1, inputs=[x])

                def adaptive(frames, scale):
                    for frame in frames:
                        width = int(frame.max())
                        wp.launch(make_filter(width, scale), dim=1, inputs=[frame])

                def not_launched(values):
                    for v in values:
                        k = make_filter(v)
                    wp.launch(k, dim=1, inputs=[])
            """
        }
    )
    run, fixed, adaptive = index.loop_factory_calls
    assert (run.function, run.class_name, run.line, run.callee, run.arguments) == (
        "Bank.run", "Bank", 12, "make_filter", ["width"],
    )
    assert (run.loop_target, run.loop_iter, run.origin, run.init_line, run.per_call) == (
        "width", "self.widths", "constructor", 8, [],
    )
    assert (fixed.origin, fixed.arguments, fixed.per_call) == ("constant", ["w", "2"], [])
    assert adaptive.class_name is None and adaptive.origin == "parameter"
    assert adaptive.per_call == ["width (line 21: width = int(frame.max()))", "scale (a parameter of adaptive())"]


REACTOR = """
    import warp as wp
    from rates import ORDERS, make_rate

    class Reactor:
        def __init__(self, orders=(1, 2)):
            if set(orders) - set(ORDERS):
                raise ValueError(orders)
            self.orders = tuple(orders)

        def step(self, dt):
            self._react(self.orders, dt)

        def _react(self, orders, dt):
            for order in orders:
                wp.launch(make_rate(order), dim=1, inputs=[dt])
"""


def test_a_helper_parameter_every_call_fills_with_a_constructor_attribute_holds_its_values(scan):
    (call,) = scan({"reactor.py": REACTOR}).loop_factory_calls
    assert (call.function, call.loop_iter, call.origin) == ("Reactor._react", "orders", "constructor")
    assert (call.constructor_values, call.init_line) == ("self.orders", 8)
    assert call.origin_detail == (
        "orders is self.orders at every call of _react() (1 call in Reactor); self.orders is set in Reactor.__init__"
    )


@pytest.mark.parametrize(
    "caller",
    [
        "self._react(self.orders[:1], dt)",  # computed from the attribute
        "self._react(orders=self.extra, dt=dt)",  # another attribute, assigned nowhere in __init__
    ],
)
def test_a_helper_parameter_filled_otherwise_is_known_only_per_call(scan, caller):
    source = REACTOR.replace("self._react(self.orders, dt)", caller)
    (call,) = scan({"reactor.py": source}).loop_factory_calls
    assert call.origin == "parameter" and call.constructor_values == ""


def test_a_public_method_looping_over_its_parameter_is_known_only_per_call(scan):
    source = REACTOR.replace("_react", "react")  # other code may call it with values of its own
    (call,) = scan({"reactor.py": source}).loop_factory_calls
    assert call.origin == "parameter"


def test_a_loop_value_assigned_outside_the_constructor_is_not_fixed_at_construction(scan):
    index = scan(
        {
            "bank.py": """
                import warp as wp
                from filters import make_filter

                class Bank:
                    def __init__(self):
                        self.widths = (3,)

                    def grow(self, w):
                        self.widths = self.widths + (w,)

                    def run(self):
                        for width in self.widths:
                            wp.launch(make_filter(width), dim=1, inputs=[])
            """
        }
    )
    (call,) = index.loop_factory_calls
    assert call.origin == "computed" and call.origin_detail == "self.widths is also assigned in grow()"


BOUND_REACTOR = """
    import warp as wp
    from rates import make_rate

    def _Reactor_react(self, orders, dt):
        for order in orders:
            wp.launch(make_rate(order), dim=1, inputs=[dt])

    def _Reactor_step(self, dt):
        self._react(self.orders, dt)

    class Reactor:
        def __init__(self, orders=(1, 2)):
            self.orders = tuple(orders)

        _react = _Reactor_react
        step = _Reactor_step
"""


def test_a_module_function_a_class_binds_as_its_method_is_read_as_that_method(scan):
    """`_react = _Reactor_react`: `self` is its first parameter and `self.orders` is fixed at construction, as in a
    method written in the class body; the fix names the method as the class calls it."""
    (call,) = scan({"reactor.py": BOUND_REACTOR}).loop_factory_calls
    assert (call.function, call.class_name, call.method) == ("_Reactor_react", "Reactor", "_react")
    assert (call.origin, call.constructor_values, call.init_line) == ("constructor", "self.orders", 13)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (("_react = _Reactor_react", "_react = staticmethod(_Reactor_react)"), "a static method takes no self"),
        (("step = _Reactor_step", "step = _Reactor_step\n\n        def grow(self):\n            self.orders += (3,)"),
         "a method assigns the attribute again"),
        (("step = _Reactor_step", "step = _Reactor_step\n\n    _Reactor_react(None, (1,), 0.1)"),
         "the function is also called on its own, with any first argument"),
    ],
)
def test_a_bound_module_function_is_no_constructor_method_where_its_values_can_change(scan, edit, why):
    (call,) = scan({"reactor.py": BOUND_REACTOR.replace(*edit)}).loop_factory_calls
    assert call.origin != "constructor", why


HELPER_LAUNCHES = """
    import warp as wp

    @wp.kernel
    def loss(x: wp.array(dtype=float)):
        x[wp.tid()] *= 2.0

    def _launch(*args, **kwargs):
        return wp.launch(*args, **kwargs)

    def fit(x):
        with wp.Tape() as tape:
            _launch(loss, dim=1, inputs=[x], block_dim=64)
        tape.backward()
"""


def test_a_helper_that_passes_every_argument_on_to_wp_launch_is_a_launch_at_its_call(scan):
    """The kernel is known where the helper is called; the helper's own `wp.launch(*args, **kwargs)` names none."""
    index = scan({"fit.py": HELPER_LAUNCHES})
    (launch,) = index.launches
    assert (launch.kind, launch.kernel, launch.function, launch.line) == ("launch", "loss", "fit", 12)
    assert launch.block_dim.value == 64


def test_a_tape_reaches_the_kernel_launched_through_such_a_helper(scan):
    from warp_fix.scan.differentiation import differentiated_kernels

    found = differentiated_kernels(scan({"fit.py": HELPER_LAUNCHES}))
    assert found.kernels == {"loss": "fit.py:11"}
    assert found.unresolved == []


def test_a_helper_that_changes_the_arguments_is_not_a_launch(scan):
    index = scan({"run.py": """
        import warp as wp

        def _launch(kernel, *args, **kwargs):
            return wp.launch(kernel, *args, device="cpu", **kwargs)

        def step(k):
            _launch(k, dim=1)
    """})
    (launch,) = index.launches
    assert (launch.kernel, launch.function) == ("kernel", "_launch")


def test_a_tape_through_one_files_launch_helper_does_not_reach_another_files_helper(scan):
    """Two files each have their own `_launch`: a tape that launches through fit.py's does not run display.py's
    code (calls are followed by name, so the helper's call must not be one)."""
    from warp_fix.scan.differentiation import differentiated_kernels

    display = """
        import warp as wp

        @wp.kernel
        def blur(x: wp.array(dtype=float)):
            x[wp.tid()] *= 0.5

        def _launch(*args, **kwargs):
            return wp.launch(*args, **kwargs)

        def show(x):
            _launch(blur, dim=1, inputs=[x])
    """
    found = differentiated_kernels(scan({"fit.py": HELPER_LAUNCHES, "display.py": display}))
    assert found.kernels == {"loss": "fit.py:11"}
    assert not found.reaches("display.py")
