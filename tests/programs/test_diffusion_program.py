"""A denoising-diffusion program in the style of the popular annotated implementations, trained
on torch and retrograd from the same weights: a small U-Net (sinusoidal time embedding,
GroupNorm, scale-shift residual blocks, einsum attention, nearest upsampling), the linear beta
schedule written with NumPy's argument names (`torch.cumprod(alphas, axis=0)`), `gather`-based
coefficient lookup, Huber and smooth-L1 losses, and a few reverse sampling steps under no_grad."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.programs.program_harness import assert_close, run_both

pytest.importorskip("torch")


def _diffusion(lib, sync, float64=False):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(0)

    class SinusoidalPositionEmbeddings(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim
        def forward(self, time):
            half_dim = self.dim // 2
            embeddings = math.log(10000) / (half_dim - 1)
            embeddings = torch.exp(torch.arange(half_dim, device=time.device) * -embeddings)
            embeddings = time[:, None] * embeddings[None, :]
            return torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)

    class Block(nn.Module):
        def __init__(self, dim, dim_out, groups=4):
            super().__init__()
            self.proj = nn.Conv2d(dim, dim_out, 3, padding=1)
            self.norm = nn.GroupNorm(groups, dim_out)
            self.act = nn.SiLU()
        def forward(self, x, scale_shift=None):
            x = self.norm(self.proj(x))
            if scale_shift is not None:
                scale, shift = scale_shift
                x = x * (scale + 1) + shift
            return self.act(x)

    class ResnetBlock(nn.Module):
        def __init__(self, dim, dim_out, time_emb_dim):
            super().__init__()
            self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2))
            self.block1 = Block(dim, dim_out)
            self.block2 = Block(dim_out, dim_out)
            self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()
        def forward(self, x, t):
            t = self.mlp(t)[:, :, None, None]
            scale_shift = t.chunk(2, dim=1)
            h = self.block1(x, scale_shift=scale_shift)
            h = self.block2(h)
            return h + self.res_conv(x)

    class Attn(nn.Module):
        def __init__(self, dim, heads=2, dim_head=8):
            super().__init__()
            self.scale = dim_head ** -0.5
            self.heads = heads
            hidden = dim_head * heads
            self.to_qkv = nn.Conv2d(dim, hidden * 3, 1, bias=False)
            self.to_out = nn.Conv2d(hidden, dim, 1)
        def forward(self, x):
            b, c, h, w = x.shape
            qkv = self.to_qkv(x).chunk(3, dim=1)
            q, k, v = map(lambda t: t.reshape(b, self.heads, -1, h * w), qkv)
            q = q * self.scale
            sim = torch.einsum("b h d i, b h d j -> b h i j", q, k)
            sim = sim - sim.amax(dim=-1, keepdim=True).detach()
            attn = sim.softmax(dim=-1)
            out = torch.einsum("b h i j, b h d j -> b h i d", attn, v)
            out = out.permute(0, 1, 3, 2).reshape(b, -1, h, w)
            return self.to_out(out)

    class UNet(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.init_conv = nn.Conv2d(1, dim, 7, padding=3)
            tdim = dim * 4
            self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(dim), nn.Linear(dim, tdim),
                                          nn.GELU(), nn.Linear(tdim, tdim))
            self.down1 = ResnetBlock(dim, dim, tdim)
            self.downsample = nn.Conv2d(dim, dim * 2, 4, 2, 1)
            self.mid = ResnetBlock(dim * 2, dim * 2, tdim)
            self.mid_attn = nn.Sequential(nn.GroupNorm(1, dim*2), Attn(dim * 2))
            self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                    nn.Conv2d(dim * 2, dim, 3, padding=1))
            self.up1 = ResnetBlock(dim * 2, dim, tdim)
            self.final = nn.Conv2d(dim, 1, 1)
        def forward(self, x, time):
            x = self.init_conv(x)
            r = x.clone()
            t = self.time_mlp(time)
            h = self.down1(x, t)
            x = self.downsample(h)
            x = self.mid(x, t)
            x = x + self.mid_attn(x)
            x = self.up(x)
            x = torch.cat((x, h), dim=1)
            x = self.up1(x, t)
            return self.final(x + r)

    def linear_beta_schedule(timesteps):
        return torch.linspace(0.0001, 0.02, timesteps)
    T = 50
    betas = linear_beta_schedule(T)
    alphas = 1. - betas
    alphas_cumprod = torch.cumprod(alphas, axis=0)
    alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
    sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
    sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)
    posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)

    def extract(a, t, x_shape):
        batch_size = t.shape[0]
        out = a.gather(-1, t.cpu())
        return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)

    def q_sample(x_start, t, noise):
        return (extract(sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    model = sync(UNet())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(3):
        x0 = torch.from_numpy(rng.standard_normal((4, 1, 8, 8)).astype(np.float32))
        t = torch.from_numpy(rng.integers(0, T, (4,)))
        noise = torch.from_numpy(rng.standard_normal((4, 1, 8, 8)).astype(np.float32))
        x_noisy = q_sample(x0, t, noise)
        pred = model(x_noisy, t)
        loss = F.smooth_l1_loss(noise, pred) + F.huber_loss(noise, pred, delta=0.5)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    @torch.no_grad()
    def p_sample(x, t, t_index):
        betas_t = extract(betas, t, x.shape)
        s1 = extract(sqrt_one_minus_alphas_cumprod, t, x.shape)
        s2 = extract(sqrt_recip_alphas, t, x.shape)
        mean = s2 * (x - betas_t * model(x, t) / s1)
        if t_index == 0:
            return mean
        pv = extract(posterior_variance, t, x.shape)
        return mean + torch.sqrt(pv) * 0.5
    img = torch.from_numpy(rng.standard_normal((1, 1, 8, 8)).astype(np.float32))
    for i in reversed(range(0, 5)):
        img = p_sample(img, torch.full((1,), i, dtype=torch.long), i)
    return losses, img


def test_diffusion_trains_and_samples_like_torch():
    ours, theirs = run_both(_diffusion)
    assert_close(ours, theirs, rtol=1e-3, atol=1e-4)
