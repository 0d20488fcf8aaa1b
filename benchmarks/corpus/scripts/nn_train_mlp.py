"""Train a small MLP for a few steps the way warp-nn's documentation shows: a model, a tape, an optimizer.

`--device cpu|cuda:0` picks the device."""

import argparse

import numpy as np
import warp as wp
import warp_nn.nn as nn
from warp_nn.optimizers import Adam


@wp.kernel
def mse_loss(prediction: wp.array2d[float], target: wp.array2d[float], loss: wp.array[float]):
    i, j = wp.tid()
    diff = prediction[i, j] - target[i, j]
    wp.atomic_add(loss, 0, diff * diff)


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
wp.set_device(parser.parse_args().device)

np.random.seed(0)  # warp-nn's initializers draw from NumPy's global generator: seed it for reproducible output
rng = np.random.default_rng(0)
inputs = wp.array(rng.standard_normal((64, 8)).astype(np.float32), dtype=float)
targets = wp.array(rng.standard_normal((64, 1)).astype(np.float32), dtype=float)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = Adam(model.parameters(), lr=1e-2)
loss = wp.zeros(1, dtype=float, requires_grad=True)
for step in range(5):
    loss.zero_()
    tape = wp.Tape()
    with tape:
        prediction = model(inputs)
        wp.launch(mse_loss, dim=prediction.shape, inputs=[prediction, targets], outputs=[loss])
    tape.backward(loss)
    optimizer.step()
    tape.zero()
    print(f"step {step} loss {loss.numpy()[0]:.4f}")
