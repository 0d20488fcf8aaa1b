"""A method call under a tape is followed through its receiver's class where the code says which class it is, and
by the method's name wherever it does not: each case below is one shape, and what the walk reaches from it."""

from __future__ import annotations

from warp_fix.scan.differentiation import differentiated_kernels

KERNELS = """
    import warp as wp

    @wp.kernel
    def integrate(x: wp.array(dtype=float)):
        x[wp.tid()] += 1.0

    @wp.kernel
    def integrate_fast(x: wp.array(dtype=float)):
        x[wp.tid()] += 2.0

    @wp.kernel
    def draw(x: wp.array(dtype=float)):
        x[wp.tid()] *= 0.5
"""

SOLVERS = """
    import warp as wp
    from sim.kernels import integrate, integrate_fast

    class Solver:
        def __init__(self, x):
            self.x = x

        def step(self):
            wp.launch(integrate, dim=1, inputs=[self.x])

    class FastSolver(Solver):
        def step(self):
            wp.launch(integrate_fast, dim=1, inputs=[self.x])
"""

VIEWER = """
    import warp as wp
    from sim.kernels import draw

    class Viewer:
        def __init__(self, x):
            self.x = x

        def step(self):
            wp.launch(draw, dim=1, inputs=[self.x])
"""


def reached(scan, tape: str, **files: str) -> set[str]:
    index = scan({"sim/__init__.py": "from .solvers import FastSolver, Solver\nfrom .viewer import Viewer\n",
                  "sim/kernels.py": KERNELS, "sim/solvers.py": SOLVERS, "sim/viewer.py": VIEWER,
                  "scripts/fit.py": tape, **files})
    return set(differentiated_kernels(index).kernels)


def test_a_local_bound_once_to_a_constructor_runs_that_class_s_method(scan):
    assert reached(scan, """
        import warp as wp
        import sim

        def fit(x):
            solver = sim.Solver(x)
            with wp.Tape():
                solver.step()
    """) == {"integrate"}  # the re-export in sim/__init__.py is followed to sim.solvers.Solver


def test_an_attribute_the_class_stores_from_a_constructor_runs_that_class_s_method(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Fit:
            def __init__(self, x):
                self.solver = Solver(x)

            def run(self):
                with wp.Tape():
                    self.solver.step()
    """) == {"integrate"}


def test_an_annotated_parameter_may_hold_any_subclass(scan):
    assert reached(scan, """
        import warp as wp
        from sim.solvers import Solver

        def fit(solver: Solver):
            with wp.Tape():
                solver.step()
    """) == {"integrate", "integrate_fast"}


def test_a_receiver_the_code_does_not_type_is_followed_by_name(scan):
    assert reached(scan, """
        import warp as wp

        def fit(solver):
            with wp.Tape():
                solver.step()
    """) == {"integrate", "integrate_fast", "draw"}


def test_an_attribute_stored_from_an_untyped_value_is_followed_by_name(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Fit:
            def __init__(self, x, solver=None):
                self.solver = solver or Solver(x)

            def run(self):
                with wp.Tape():
                    self.solver.step()
    """) == {"integrate", "integrate_fast", "draw"}


def test_a_call_on_self_reaches_what_subclasses_put_in_its_place(scan):
    assert reached(scan, """
        import warp as wp
        from sim.kernels import integrate, integrate_fast

        class Rollout:
            def run(self, x):
                with wp.Tape():
                    self.advance(x)

            def advance(self, x):
                wp.launch(integrate, dim=1, inputs=[x])

        class FastRollout(Rollout):
            def advance(self, x):
                wp.launch(integrate_fast, dim=1, inputs=[x])
    """) == {"integrate", "integrate_fast"}


def test_super_runs_the_next_method_of_the_hierarchy(scan):
    assert reached(scan, """
        import warp as wp
        from sim.solvers import Solver

        class Logged(Solver):
            def step(self):
                super().step()

        def fit(x):
            solver = Logged(x)
            with wp.Tape():
                solver.step()
    """) == {"integrate"}


def test_a_subclass_with_a_base_the_scan_cannot_name_may_override_anything(scan):
    assert reached(scan, """
        import warp as wp
        from sim.kernels import integrate, draw

        class Rollout:
            def run(self, x):
                with wp.Tape():
                    self.advance(x)

            def advance(self, x):
                wp.launch(integrate, dim=1, inputs=[x])

        def mixin(base):
            class Drawn(base):
                def advance(self, x):
                    wp.launch(draw, dim=1, inputs=[x])
            return Drawn
    """) >= {"integrate", "draw"}


def test_an_instance_attribute_of_the_method_s_name_is_followed_by_name(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver, Viewer

        class Hooked(Solver):
            def __init__(self, x):
                super().__init__(x)
                self.step = Viewer(x).step

        def fit(x):
            solver = Hooked(x)
            with wp.Tape():
                solver.step()
    """) >= {"draw"}


def test_a_chain_of_attributes_is_followed_through_what_each_class_stores(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Rig:
            def __init__(self, x):
                self.solver = Solver(x)

        class Fit:
            def __init__(self, rig: Rig):
                self.rig = rig

            def run(self):
                rig = self.rig
                with wp.Tape():
                    rig.solver.step()
    """) == {"integrate"}  # `rig` holds `self.rig`, a Rig by its annotation; its `solver` a Solver


def test_a_method_of_a_warp_class_runs_no_project_code(scan):
    assert reached(scan, """
        import warp as wp

        class Grid:
            def __init__(self):
                self.grid = wp.HashGrid(4, 4, 4)

            def run(self, points):
                with wp.Tape():
                    self.grid.build(points, 0.1)
    """, **{"sim/builder.py": VIEWER.replace("class Viewer", "class Builder").replace("def step", "def build")}
    ) == set()  # by name, `build` would reach the builder's `build` and its `draw`


def test_a_closure_s_variable_holds_what_the_enclosing_function_bound_it_to(scan):
    assert reached(scan, """
        import warp as wp
        import sim

        def fit(x):
            solver = sim.Solver(x)

            def loss():
                with wp.Tape():
                    solver.step()

            return loss
    """) == {"integrate"}


def test_a_function_s_result_is_what_each_of_its_returns_makes(scan):
    assert reached(scan, """
        import warp as wp
        import sim

        def make_solver(x, fast=False):
            solver = sim.FastSolver(x) if fast else sim.Solver(x)
            return solver

        def make_plain(x):
            return sim.Solver(x)

        def fit(x):
            plain = make_plain(x)
            with wp.Tape():
                plain.step()
    """) == {"integrate"}


def test_a_return_the_scan_cannot_type_leaves_the_result_untyped(scan):
    assert reached(scan, """
        import warp as wp
        import sim

        def make_solver(x, fast=False):
            solver = sim.FastSolver(x) if fast else sim.Solver(x)
            return solver

        def fit(x):
            solver = make_solver(x)
            with wp.Tape():
                solver.step()
    """) == {"integrate", "integrate_fast", "draw"}


def test_self_in_a_module_function_the_class_binds_is_the_class_s_instance(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        def _Fit_run(self):
            with wp.Tape():
                self.solver.step()

        class Fit:
            run = _Fit_run

            def __init__(self, x):
                self.solver = Solver(x)
    """) == {"integrate"}


def test_an_attribute_set_by_name_shadows_the_method_and_is_followed_by_name(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver, Viewer

        class Hooked(Solver):
            def hook(self, x):
                setattr(self, "step", Viewer(x).step)

        def fit(x):
            solver = Hooked(x)
            with wp.Tape():
                solver.step()
    """) >= {"draw"}


def test_an_unannotated_parameter_holds_what_every_call_of_its_function_passes(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Fit:
            def __init__(self, x):
                self.solver = Solver(x)

            def run(self):
                with wp.Tape():
                    self.advance(self.solver)

            def advance(self, solver):
                solver.step()
    """) == {"integrate"}


def test_a_parameter_a_call_elsewhere_fills_otherwise_is_followed_by_name(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Fit:
            def __init__(self, x):
                self.solver = Solver(x)

            def run(self, other):
                with wp.Tape():
                    self.advance(self.solver)
                self.advance(other)

            def advance(self, solver):
                solver.step()
    """) == {"integrate", "integrate_fast", "draw"}


def test_a_callback_parameter_runs_the_functions_every_call_hands_it(scan):
    index_files = """
        import warp as wp
        from sim.kernels import integrate, draw

        class Fit:
            def __init__(self, x):
                self.x = x

            def run(self):
                def residual(x):
                    wp.launch(integrate, dim=1, inputs=[x])

                with wp.Tape():
                    self.for_each(residual)

            def for_each(self, fn):
                fn(self.x)
    """
    assert reached(scan, index_files) == {"integrate"}


def test_a_builder_s_store_on_the_object_it_makes_counts_for_that_class(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver, Viewer

        class Model:
            def __init__(self):
                self.hook = None

        def build(x):
            m = Model()
            m.hook = Viewer(x)
            return m

        def fit(model: Model):
            with wp.Tape():
                model.hook.step()
    """) == {"draw"}  # the builder's Viewer, not only the constructor's None


def test_a_store_on_an_object_made_of_a_base_class_leaves_the_subclass_s_attribute_alone(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        class Base:
            def refresh(self, anything):
                fresh = Base()
                fresh.solver = anything  # an exact Base, never a Fit

        class Fit(Base):
            def __init__(self, x):
                self.solver = Solver(x)

            def run(self):
                with wp.Tape():
                    self.solver.step()
    """) == {"integrate"}


def test_a_loop_variable_over_a_literal_of_bound_methods_runs_those_methods(scan):
    assert reached(scan, """
        import warp as wp
        from sim import FastSolver, Viewer

        def check_gradients(x):
            def evaluate(advance):
                with wp.Tape():
                    advance()

            solver = FastSolver(x)
            for advance, name in ((solver.step, "solver"),):
                evaluate(advance)
    """) == {"integrate_fast"}  # not Solver.step's, nor Viewer.step's


def test_a_loop_over_what_a_helper_returns_runs_the_methods_it_lists(scan):
    assert reached(scan, """
        import warp as wp
        from sim import Solver

        def _steppers(x):
            plain = Solver(x)
            return ((plain.step, "plain"),)

        def check_gradients(x):
            def evaluate(advance):
                with wp.Tape():
                    advance()

            for advance, _ in _steppers(x):
                evaluate(advance)
    """, **{"scripts/other.py": OTHER_EVALUATE}) == {"integrate"}


OTHER_EVALUATE = """
    import warp as wp

    def report(metric):
        return metric.evaluate()  # some `evaluate`, never the one nested in check_gradients
"""


def test_a_loop_over_anything_else_leaves_the_call_unfollowed(scan):
    index = scan({"sim/__init__.py": "", "sim/kernels.py": KERNELS, "sim/solvers.py": SOLVERS,
                  "scripts/fit.py": """
        import warp as wp
        from sim.solvers import Solver

        def check_gradients(x, extra):
            def evaluate(advance):
                with wp.Tape():
                    advance()

            for advance in [Solver(x).step, *extra]:
                evaluate(advance)
    """})
    found = differentiated_kernels(index)
    assert found.kernels == {} and [str(c.text) for t in found.unresolved_tapes for c in t.calls] == ["advance(...)"]


def test_a_launch_of_an_attribute_runs_the_kernels_its_class_stores_there(scan):
    assert reached(scan, """
        import warp as wp
        from sim import kernels

        class Stepper:
            def __init__(self, x, fast=False):
                self.x = x
                self.kernel = kernels.integrate_fast if fast else kernels.integrate

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])

        def fit(x):
            with wp.Tape():
                Stepper(x).step()
    """) == {"integrate", "integrate_fast"}  # never `draw`


def test_a_subclass_storing_anything_else_leaves_the_attribute_launch_unfollowed(scan):
    index = scan({"sim/__init__.py": "", "sim/kernels.py": KERNELS, "scripts/fit.py": """
        import warp as wp
        from sim import kernels

        class Stepper:
            def __init__(self, x):
                self.x = x
                self.kernel = kernels.integrate

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])

        class Custom(Stepper):
            def __init__(self, x, kernel):
                super().__init__(x)
                self.kernel = kernel

        def fit(x):
            with wp.Tape():
                Stepper(x).step()
    """})
    found = differentiated_kernels(index)
    assert found.kernels == {} and [c.text for t in found.unresolved_tapes for c in t.calls] == [
        "wp.launch(self.kernel, ...)"]
