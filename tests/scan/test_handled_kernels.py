"""A launch under a tape whose kernel the scan cannot name (`wp.launch(self.kernel, ...)`) runs a kernel the program
handled as a value before it got there: stored, passed on, put in a table, made by a factory. Kernels only ever
launched (or called) by their names are not among them: each case below is one way of handling a kernel, and
whether the unresolved tape may then reach the module that defines it."""

from __future__ import annotations

from warp_fix.scan.differentiation import differentiated_kernels

STEP_KERNELS = """
    import warp as wp

    @wp.kernel
    def integrate(x: wp.array(dtype=float)):
        x[wp.tid()] += 1.0

    @wp.kernel
    def integrate_fast(x: wp.array(dtype=float)):
        x[wp.tid()] += 2.0
"""

DRAW_KERNELS = """
    import warp as wp

    @wp.kernel
    def draw(x: wp.array(dtype=float)):
        x[wp.tid()] *= 0.5
"""

VIEWER = """
    import warp as wp
    from sim.draw_kernels import draw

    class Viewer:
        def show(self, x):
            wp.launch(kernel=draw, dim=1, inputs=[x])  # by name, as a keyword: not a value handed on
"""


def reach(scan, solver: str, **files: str) -> tuple[bool, bool]:
    """Whether the one unresolved tape may reach (the step kernels' module, the viewer's draw kernels' module)."""
    index = scan({"sim/__init__.py": "from .kernels import integrate, integrate_fast\nfrom .viewer import Viewer\n",
                  "sim/kernels.py": STEP_KERNELS, "sim/draw_kernels.py": DRAW_KERNELS, "sim/viewer.py": VIEWER,
                  "sim/solver.py": solver, "scripts/fit.py": FIT, **files})
    (tape,) = differentiated_kernels(index).unresolved_tapes
    return tape.may_reach(["sim/kernels.py"]), tape.may_reach(["sim/draw_kernels.py"])


FIT = """
    import warp as wp
    import sim
    from sim.solver import Solver

    def fit(x):
        solver = Solver(x)
        with wp.Tape():
            solver.step()
"""


def test_a_kernel_a_helper_returns_is_what_an_attribute_launch_may_run(scan):
    assert reach(scan, """
        import warp as wp
        from sim.kernels import integrate, integrate_fast

        def _pick(fast):
            return integrate_fast if fast else integrate

        class Solver:
            def __init__(self, x, fast=False):
                self.x = x
                self.kernel = _pick(fast)  # not a name: the launch of self.kernel stays unfollowed

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])
    """) == (True, False)


def test_a_table_of_kernels_is_what_a_subscript_launch_may_run(scan):
    assert reach(scan, """
        import warp as wp
        from sim.kernels import integrate, integrate_fast

        _KERNELS = {1: integrate, 2: integrate_fast}

        class Solver:
            def __init__(self, x):
                self.x = x

            def step(self):
                wp.launch(_KERNELS[self.x.ndim], dim=1, inputs=[self.x])
    """) == (True, False)


def test_a_table_in_a_file_that_never_names_warp_still_hands_its_kernels_on(scan):
    assert reach(scan, """
        import warp as wp
        from sim.registry import TABLE

        class Solver:
            def __init__(self, x):
                self.x = x

            def step(self):
                wp.launch(TABLE["step"], dim=1, inputs=[self.x])
    """, **{"sim/registry.py": "from .kernels import integrate\n\nTABLE = {'step': integrate}\n"}) == (True, False)


def test_a_kernel_read_through_a_package_re_export_is_the_defining_module_s(scan):
    assert reach(scan, """
        import warp as wp
        import sim

        class Solver:
            def __init__(self, x, name):
                self.x = x
                self.kernel = {"plain": sim.integrate}[name]  # sim/__init__.py re-exports it from sim.kernels

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])
    """) == (True, False)


def test_a_module_handed_on_as_a_value_hands_on_every_kernel_it_defines(scan):
    assert reach(scan, """
        import warp as wp
        import sim.draw_kernels as drawing

        class Solver:
            def __init__(self, x, name):
                self.x, self.name = x, name

            def step(self):
                wp.launch(getattr(drawing, self.name), dim=1, inputs=[self.x])
    """) == (False, True)


def test_a_package_handed_on_as_a_value_hands_on_what_it_re_exports(scan):
    assert reach(scan, """
        import warp as wp
        import sim

        class Solver:
            def __init__(self, x, name):
                self.x, self.name = x, name

            def step(self):
                wp.launch(getattr(sim, self.name), dim=1, inputs=[self.x])
    """) == (True, False)  # sim/__init__.py re-exports integrate and integrate_fast, not draw


def test_a_factory_s_kernel_only_reaches_a_launch_as_a_value(scan):
    assert reach(scan, """
        import warp as wp

        def make_kernel(scale: float):
            @wp.kernel
            def scaled(x: wp.array(dtype=float)):
                x[wp.tid()] *= scale
            return scaled

        class Solver:
            def __init__(self, x):
                self.x = x
                self.kernel = make_kernel(2.0)

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])
    """) == (False, False)  # its module is the solver's file, neither of the two


def test_an_unknown_call_beside_the_launch_may_still_run_any_code_the_program_imports(scan):
    assert reach(scan, """
        import warp as wp
        from sim.kernels import integrate

        class Solver:
            def __init__(self, x, hook):
                self.x, self.hook, self.kernel = x, hook, integrate

            def step(self):
                wp.launch(self.kernel, dim=1, inputs=[self.x])
                getattr(self, self.hook)()
    """) == (True, True)


def test_what_counts_as_reading_a_name_as_a_value(scan):
    index = scan({"sim/__init__.py": "", "sim/kernels.py": STEP_KERNELS, "sim/draw_kernels.py": DRAW_KERNELS,
                  "sim/use.py": """
        import warp as wp
        import sim.kernels as K
        from sim.draw_kernels import *

        def run(x, name):
            from sim.kernels import integrate_fast
            wp.launch(K.integrate, dim=1, inputs=[x])          # a launch's kernel: not a value
            wp.launch(kernel=draw, dim=1, inputs=[x])          # nor as a keyword
            integrate = K.integrate                            # read: stored in a local
            plan = [integrate_fast]                            # read: in a list (a function's own import)
            return plan, integrate, draw                       # `draw` read, through the `*` import
    """})
    assert sorted(read.target for read in index.value_reads) == [
        "sim.draw_kernels.draw", "sim.kernels.integrate", "sim.kernels.integrate_fast"]
