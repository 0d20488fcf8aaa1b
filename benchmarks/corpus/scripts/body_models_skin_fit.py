"""Fit the pose of a small skinned rig to a target shape through body-models' Warp linear blend skinning.

body-models' packaged bodies (SMPL, MANO, ...) need licensed data downloads, so the rig is the user's own: a tube of
rings around three bones, two bone influences per vertex. The skinning is the function the body-models classes call
with `kernel_backend="warp"` (TorchRuntime._compact_linear_blend_skinning): a torch.autograd.Function whose forward
and backward launch body-models' own Warp kernels. A few Adam steps fit the bones' rotations and a per-vertex
correction to a target made from a known pose; `loss.backward()` runs the hand-written backward kernels for both.
`--device cpu|cuda:0`, `--steps N`.
"""

import argparse
import math

import torch
from body_models._common.skinning import CompactSkinning
from body_models._common.warp import compact_linear_blend_skinning, prepare_compact_skinning

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()
device = torch.device(args.device)
torch.manual_seed(0)

# A tube along z: 24 rings of 16 vertices; three bones of length 1 at z = 0, 1, 2.
rings, around, bones = 24, 16, 3
z = torch.linspace(0.0, 3.0, rings)
angle = torch.arange(around) * (2 * math.pi / around)
rest = torch.stack(
    [0.2 * torch.cos(angle).repeat(rings), 0.2 * torch.sin(angle).repeat(rings), z.repeat_interleave(around)], dim=-1
)
# Each vertex follows its bone and the next one, blended along the bone.
bone = (rest[:, 2].clamp(max=2.999)).floor().long()
t = rest[:, 2] - bone
indices = torch.stack([bone, (bone + 1).clamp(max=bones - 1)], dim=-1)
weights = torch.stack([1.0 - 0.5 * t, 0.5 * t], dim=-1)
weights[bone == bones - 1] = torch.tensor([1.0, 0.0])
skinning = prepare_compact_skinning(CompactSkinning(joint_indices=indices, joint_weights=weights)).to(device)
rest = rest.to(device)
joints = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]], device=device)


def rodrigues(axis_angle):
    theta = axis_angle.norm(dim=-1, keepdim=True).clamp(min=1e-8)
    k = axis_angle / theta
    kx, ky, kz = k.unbind(-1)
    zero = torch.zeros_like(kx)
    cross = torch.stack([zero, -kz, ky, kz, zero, -kx, -ky, kx, zero], dim=-1).reshape(*k.shape[:-1], 3, 3)
    eye = torch.eye(3, device=axis_angle.device).expand_as(cross)
    s, c = torch.sin(theta)[..., None], torch.cos(theta)[..., None]
    return eye + s * cross + (1 - c) * cross @ cross


def bone_transforms(axis_angle):
    """World transforms of a chain of bones, each rotating about its joint, relative to the rest pose."""
    local = rodrigues(axis_angle)
    rotations, translations = [], []
    position = joints[0]
    for j in range(bones):
        if j == 0:
            r = local[0]
        else:
            r = rotations[-1] @ local[j]
            position = rotations[-1] @ (joints[j] - joints[j - 1]) + position
        rotations.append(r)
        translations.append(position - r @ joints[j])
    top = torch.cat([torch.stack(rotations), torch.stack(translations)[..., None]], dim=-1)
    bottom = torch.tensor([0.0, 0.0, 0.0, 1.0], device=device).expand(bones, 1, 4)
    return torch.cat([top, bottom], dim=-2)[None]  # (1, J, 4, 4)


with torch.no_grad():
    target_pose = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.6, 0.0]], device=device)
    target = compact_linear_blend_skinning(rest[None], bone_transforms(target_pose), skinning=skinning)

pose = torch.zeros(bones, 3, device=device, requires_grad=True)
correction = torch.zeros_like(rest, requires_grad=True)
optimizer = torch.optim.Adam([pose, correction], lr=0.05)
for step in range(args.steps):
    optimizer.zero_grad()
    posed = compact_linear_blend_skinning((rest + correction)[None], bone_transforms(pose), skinning=skinning)
    loss = ((posed - target) ** 2).sum(dim=-1).mean() + 1e-2 * (correction**2).sum(dim=-1).mean()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.5f} |grad pose| {pose.grad.norm():.4f}")
