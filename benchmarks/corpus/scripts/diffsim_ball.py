"""Find the launch velocity that makes a bouncing ball end on a target: Newton's diffsim ball, as a training loop.

Each iteration runs the throw under a `wp.Tape`, differentiates the squared distance to the target with respect to
the launch velocity and takes a gradient-descent step. `--device cpu|cuda:0`, `--iters N`, `--frames N`."""

import argparse

import warp as wp
from ball_scene import BallThrow


@wp.kernel
def distance_loss(pos: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    delta = pos[0] - target
    loss[0] = wp.dot(delta, delta)


@wp.kernel
def sgd_step(x: wp.array(dtype=wp.vec3), grad: wp.array(dtype=wp.vec3), rate: float):
    i = wp.tid()
    x[i] = x[i] - grad[i] * rate


parser = argparse.ArgumentParser()
parser.add_argument("--device", default=None)
parser.add_argument("--iters", type=int, default=4)
parser.add_argument("--frames", type=int, default=36)
parser.add_argument("--rate", type=float, default=0.02)
args = parser.parse_args()
if args.device:
    wp.set_device(args.device)

throw = BallThrow(frames=args.frames)
target = wp.vec3(0.0, -2.0, 1.5)
velocity = wp.array([wp.vec3(0.0, 5.0, -5.0)], dtype=wp.vec3, requires_grad=True)
loss = wp.zeros(1, dtype=float, requires_grad=True)

for it in range(args.iters):
    tape = wp.Tape()
    with tape:
        final = throw.rollout(velocity)
        wp.launch(distance_loss, dim=1, inputs=[final.particle_q, target], outputs=[loss])
    tape.backward(loss)
    wp.launch(sgd_step, dim=1, inputs=[velocity, velocity.grad, args.rate])
    tape.zero()
    print(f"iter {it} loss {loss.numpy()[0]:.4f} velocity {velocity.numpy()[0]}")
