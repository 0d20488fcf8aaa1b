"""The scene of the ball-throw optimisation: a particle thrown at a wall, bouncing off it and the ground.

`BallThrow.rollout(velocity)` launches the ball at `velocity` and steps Newton's semi-implicit solver; run it under a
`wp.Tape` to differentiate the final state with respect to the launch velocity."""

import newton
import warp as wp


@wp.kernel
def set_launch_velocity(velocity: wp.array(dtype=wp.vec3), particle_qd: wp.array(dtype=wp.vec3)):
    particle_qd[0] = velocity[0]


class BallThrow:
    def __init__(self, frames=36, substeps=8, fps=60, device=None):
        self.dt = 1.0 / (fps * substeps)
        ke, kf, kd, mu = 1.0e4, 0.0, 1.0e1, 0.2
        builder = newton.ModelBuilder(up_axis=newton.Axis.Z)
        builder.add_particle(pos=wp.vec3(0.0, -0.5, 1.0), vel=wp.vec3(0.0, 0.0, 0.0), mass=1.0)
        contact = newton.ModelBuilder.ShapeConfig(ke=ke, kf=kf, kd=kd, mu=mu)
        wall = wp.transform(wp.vec3(0.0, 2.0, 1.0), wp.quat_identity())
        builder.add_shape_box(body=-1, xform=wall, hx=1.0, hy=0.25, hz=1.0, cfg=contact)
        builder.add_ground_plane(cfg=contact)
        self.model = builder.finalize(device=device, requires_grad=True)
        self.model.soft_contact_ke = ke
        self.model.soft_contact_kf = kf
        self.model.soft_contact_kd = kd
        self.model.soft_contact_mu = mu
        self.model.soft_contact_restitution = 1.0

        self.solver = newton.solvers.SolverSemiImplicit(self.model)
        self.states = [self.model.state() for _ in range(frames * substeps + 1)]
        self.control = self.model.control()
        # The wall and the ground do not move: the contacts found once at the start hold for the whole throw.
        self.pipeline = newton.CollisionPipeline(
            self.model, broad_phase="explicit", soft_contact_gap=10.0, requires_grad=True
        )
        self.contacts = self.pipeline.contacts()
        self.pipeline.collide(self.states[0], self.contacts)

    def rollout(self, velocity):
        """Throw the ball at `velocity` (a one-element vec3 array) and return the final state."""
        wp.launch(set_launch_velocity, dim=1, inputs=[velocity], outputs=[self.states[0].particle_qd])
        for t in range(len(self.states) - 1):
            self.states[t].clear_forces()
            self.solver.step(self.states[t], self.states[t + 1], self.control, self.contacts, self.dt)
        return self.states[-1]
