"""Small programs in the style of the PyTorch tutorials and the classic examples, run on torch and
retrograd from the same weights: polynomial fitting with manual updates under no_grad, a custom
autograd.Function (a Legendre polynomial), nn.Sequential with Flatten(0, 1) and RMSprop, a module
whose depth changes per call, a smooth-L1 regression, an MNIST-style CNN with Adadelta and
StepLR, a continuous-Bernoulli VAE, and a graph convolution network (spmm, xavier_normal_)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from tests.programs.program_harness import assert_close, batches, run_both

pytest.importorskip("torch")


def test_polynomial_fit_with_manual_updates():
    def run(lib, sync):
        x = lib.linspace(-math.pi, math.pi, 500)
        y = lib.sin(x)
        coeffs = [lib.tensor(v, requires_grad=True) for v in (0.1, -0.2, 0.3, -0.05)]
        losses = []
        for _ in range(60):
            a, b, c, d = coeffs
            loss = (a + b * x + c * x ** 2 + d * x ** 3 - y).pow(2).sum()
            losses.append(loss.item())
            loss.backward()
            with lib.no_grad():
                for p in coeffs:
                    p -= 1e-6 * p.grad
                    p.grad = None
        return {"losses": losses, "coeffs": coeffs}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_custom_function_legendre():
    def run(lib, sync):
        class Cubic(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return 0.5 * (5 * t ** 3 - 3 * t)

            @staticmethod
            def backward(ctx, grad_output):
                (t,) = ctx.saved_tensors
                return grad_output * 1.5 * (5 * t ** 2 - 1)

        x = lib.linspace(-math.pi, math.pi, 400)
        y = lib.sin(x)
        a, b, c, d = (lib.full((), v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
        losses = []
        for _ in range(60):
            pred = a + b * Cubic.apply(c + d * x)
            loss = (pred - y).pow(2).sum()
            losses.append(loss.item())
            loss.backward()
            with lib.no_grad():
                for p in (a, b, c, d):
                    p -= 5e-6 * p.grad
                    p.grad = None
        return {"losses": losses, "params": [a, b, c, d], "node": type(pred.grad_fn).__name__}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_sequential_flatten_rmsprop_and_dynamic_depth():
    def run(lib, sync):
        nn = lib.nn
        x = lib.linspace(-math.pi, math.pi, 300)
        y = lib.sin(x)
        features = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3]))
        model = sync(nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)))
        opt = lib.optim.RMSprop(model.parameters(), lr=1e-3)
        loss_fn = nn.MSELoss(reduction="sum")
        losses = []
        for _ in range(40):
            loss = loss_fn(model(features), y)
            losses.append(loss.item())
            opt.zero_grad()
            loss.backward()
            opt.step()

        class Dynamic(nn.Module):
            def __init__(self):
                super().__init__()
                for name, v in zip("abcde", (0.1, 0.5, -0.1, -0.05, 0.01)):
                    setattr(self, name, nn.Parameter(lib.tensor(v)))

            def forward(self, t):
                out = self.a + self.b * t + self.c * t ** 2 + self.d * t ** 3
                for power in range(4, random.randint(4, 6)):
                    out = out + self.e * t ** power  # the same weight used 0-2 times
                return out

        random.seed(0)
        dyn = sync(Dynamic())
        opt = lib.optim.SGD(dyn.parameters(), lr=1e-8, momentum=0.9)
        for _ in range(30):
            loss = loss_fn(dyn(x), y)
            losses.append(loss.item())
            opt.zero_grad()
            loss.backward()
            opt.step()
        return {"losses": losses, "linear": model[0].weight, "dynamic": dyn.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_smooth_l1_regression_with_in_place_updates():
    w_true = np.random.default_rng(0).standard_normal((4, 1)).astype(np.float32) * 5
    xs = batches(1, 30, (16,))

    def run(lib, sync):
        fc = sync(lib.nn.Linear(4, 1))
        target_w = lib.from_numpy(w_true)
        losses = []
        for raw in xs:
            x = lib.from_numpy(raw).unsqueeze(1)
            feats = lib.cat([x ** i for i in range(1, 5)], 1)
            y = feats.mm(target_w) + 1.5
            fc.zero_grad()
            out = lib.nn.functional.smooth_l1_loss(fc(feats), y)
            out.backward()
            for p in fc.parameters():
                p.data.add_(-0.05 * p.grad)
            losses.append(out.item())
        return {"losses": losses, "state": fc.state_dict(),
                "desc": ["{:+.2f}".format(w) for w in fc.weight.view(-1)]}  # noqa: UP032

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_mnist_style_cnn_with_adadelta_and_steplr():
    images = batches(2, 3, (4, 1, 12, 12))
    labels = batches(3, 3, (4,), high=10)

    def run(lib, sync):
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = nn.Conv2d(1, 4, 3, 1), nn.Conv2d(4, 8, 3, 1)
                self.drop = nn.Dropout(0.0)
                self.fc1, self.fc2 = nn.Linear(8 * 4 * 4, 16), nn.Linear(16, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
                x = F.relu(self.fc1(lib.flatten(self.drop(x), 1)))
                return F.log_softmax(self.fc2(x), dim=1)

        model = sync(Net())
        opt = lib.optim.Adadelta(model.parameters(), lr=1.0)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        losses, correct = [], []
        for _ in range(2):
            model.train()
            for img, lab in zip(images, labels):
                opt.zero_grad()
                loss = F.nll_loss(model(lib.from_numpy(img)), lib.from_numpy(lab))
                loss.backward()
                opt.step()
                losses.append(loss.item())
            model.eval()
            with lib.no_grad():
                out = model(lib.from_numpy(images[0]))
                pred = out.argmax(dim=1, keepdim=True)
                target = lib.from_numpy(labels[0])
                correct.append(pred.eq(target.view_as(pred)).sum().item())
                losses.append(F.nll_loss(out, target, reduction="sum").item())
            sched.step()
        return {"losses": losses, "correct": correct, "lr": sched.get_last_lr(),
                "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_continuous_bernoulli_vae():
    data = [np.abs(np.tanh(a)) for a in batches(4, 2, (4, 36))]
    noise = batches(5, 2, (4, 3))

    def run(lib, sync):
        nn, F = lib.nn, lib.nn.functional

        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc, self.mu, self.logvar = nn.Linear(36, 12), nn.Linear(12, 3), \
                    nn.Linear(12, 3)
                self.dec1, self.dec2 = nn.Linear(3, 12), nn.Linear(12, 36)

            def forward(self, x, eps):
                h = F.relu(self.enc(x))
                mu, logvar = self.mu(h), self.logvar(h)
                z = mu + eps * lib.exp(0.5 * logvar)
                out = lib.sigmoid(self.dec2(F.relu(self.dec1(z))))
                return lib.clamp(out, min=1e-4, max=1 - 1e-4), mu, logvar

        def log_norm(lam, lo=0.49, hi=0.51):
            outside = lib.max(lib.le(lam, lo), lib.gt(lam, hi))
            cut = lib.where(outside, lam, lo * lib.ones_like(lam))
            atanh = 0.5 * (lib.log(1.0 + (1 - 2.0 * cut)) - lib.log(1.0 - (1 - 2.0 * cut)))
            exact = lib.log(lib.abs(2.0 * atanh)) - lib.log(lib.abs(1 - 2.0 * cut))
            taylor = lib.log(lib.tensor(2.0)) + 4.0 / 3.0 * lib.pow(lam - 0.5, 2) \
                + 104.0 / 45.0 * lib.pow(lam - 0.5, 4)
            return lib.where(outside, exact, taylor)

        model = sync(VAE().double())
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        losses = []
        for x_np, eps_np in zip(data, noise):
            x = lib.from_numpy(x_np.astype(np.float64))
            recon, mu, logvar = model(x, lib.from_numpy(eps_np.astype(np.float64)))
            loss = F.binary_cross_entropy(recon, x, reduction="sum") \
                - lib.sum(log_norm(recon)) \
                - 0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return {"losses": losses, "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs, rtol=1e-7, atol=1e-9)


def test_graph_convolution_network():
    rng = np.random.default_rng(6)
    nodes = 12
    feats = rng.integers(0, 2, (nodes, 5)).astype(np.float32)
    adj = np.zeros((nodes, nodes), np.float32)
    edges = rng.integers(0, nodes, (20, 2))
    adj[edges[:, 0], edges[:, 1]] = 1
    labels = rng.integers(0, 3, nodes)
    order = rng.permutation(nodes)

    def run(lib, sync):
        nn, F = lib.nn, lib.nn.functional

        class GraphConv(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.kernel = nn.Parameter(lib.empty(cin, cout))
                nn.init.xavier_normal_(self.kernel)
                self.bias = nn.Parameter(lib.empty(cout))
                nn.init.zeros_(self.bias)

            def forward(self, x, a):
                return lib.spmm(a, lib.mm(x, self.kernel)) + self.bias

        class GCN(nn.Module):
            def __init__(self):
                super().__init__()
                self.g1, self.g2 = GraphConv(5, 6), GraphConv(6, 3)

            def forward(self, x, a):
                return F.log_softmax(self.g2(F.relu(self.g1(x, a)), a), dim=1)

        x = lib.from_numpy(feats.copy())
        scale = 1 / lib.sum(x, dim=1)
        scale[scale == float("inf")] = 0
        x = lib.diag(scale) @ x
        a = lib.eye(nodes) + lib.from_numpy(adj.copy())
        deg = lib.sqrt(1 / lib.sum(a, dim=1))
        a = lib.diag(deg) @ a @ lib.diag(deg)
        y = lib.from_numpy(labels.copy())
        idx = lib.from_numpy(order.copy())
        train, val = idx[:8], idx[8:]
        model = sync(GCN())
        opt = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        loss_fn = nn.NLLLoss()
        log = []
        for _ in range(5):
            model.train()
            opt.zero_grad()
            out = model(x, a)
            loss = loss_fn(out[train], y[train])
            loss.backward()
            opt.step()
            model.eval()
            with lib.no_grad():
                out = model(x, a)[val]
                acc = (out.argmax(dim=1) == y[val]).float().sum() / len(val)
            log.append((loss.item(), acc.item()))
        return {"log": log, "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)
