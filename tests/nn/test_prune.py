"""nn.utils.prune against torch: the deterministic methods (magnitude and norm based, custom
masks, global pruning), their composition in a PruningContainer, remove, is_pruned, and the
errors. The random methods are checked for what they promise (how many entries or channels
are pruned), since their draws come from each library's own generator."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")

RNG = np.random.default_rng(21)
W = RNG.permutation(np.arange(1, 25)).reshape(4, 6) * np.where(RNG.random((4, 6)) < 0.5, -1, 1)
X = RNG.standard_normal((3, 6))


def _prune(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _linear(lib):
    m = lib.nn.Linear(6, 4).double()
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(W / 10.0))
        m.bias.copy_(lib.from_numpy(np.array([0.35, -0.15, 0.25, -0.45])))
    return m


def _state(lib, m):
    y = m(lib.from_numpy(X.copy()))
    y.sum().backward()
    return [y, m.state_dict(), [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()], m.weight, m.weight_orig.grad, m.bias.grad]


@pytest.mark.parametrize("amount", [0.3, 5, 0, 0.0])
def test_l1_unstructured(amount):
    def prog(lib):
        prune = _prune(lib)
        m = _linear(lib)
        out = [prune.l1_unstructured(m, "weight", amount) is m, prune.is_pruned(m)]
        return out + _state(lib, m)

    both(prog)


@pytest.mark.parametrize("n", [1, 2, float("inf")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_then_l1(n, dim):
    def prog(lib):
        prune = _prune(lib)
        m = _linear(lib)
        prune.ln_structured(m, "weight", amount=0.5, n=n, dim=dim)
        first = m.weight_mask.clone()
        prune.l1_unstructured(m, "weight", amount=3)
        hooks = list(m._forward_pre_hooks.values())
        out = [first, type(hooks[0]).__name__, len(hooks[0]),
               [type(h).__name__ for h in hooks[0]]]
        return out + _state(lib, m)

    both(prog)


def test_custom_mask_importance_scores_global_and_remove():
    def prog(lib):
        prune = _prune(lib)
        a, b = _linear(lib), _linear(lib)
        mask = lib.from_numpy((np.arange(24).reshape(4, 6) % 3 != 0).astype(np.float64))
        prune.custom_from_mask(a, "weight", mask)
        scores = lib.from_numpy(np.arange(24.0).reshape(4, 6))
        prune.l1_unstructured(b, "weight", amount=4, importance_scores=scores)
        out = [a.weight, b.weight]
        c, d = _linear(lib), _linear(lib)
        with lib.no_grad():  # no ties between c's and d's magnitudes
            d.weight.mul_(1.03)
            d.bias.mul_(1.07)
        prune.identity(d, "bias")
        prune.global_unstructured([(c, "weight"), (c, "bias"), (d, "weight"), (d, "bias")],
                                  pruning_method=prune.L1Unstructured, amount=10)
        out += [c.weight, c.bias, d.weight, d.bias, c.bias_mask, d.bias_mask,
                type(d._forward_pre_hooks[next(iter(d._forward_pre_hooks))]).__name__]
        orig = a.weight_orig
        prune.remove(a, "weight")
        out += [a.weight is orig, a.weight, [n for n, _ in a.named_parameters()],
                list(a.state_dict()), prune.is_pruned(a), prune.is_pruned(lib.nn.Sequential(b)),
                len(a._forward_pre_hooks)]
        out.append(prune.L1Unstructured(amount=2).prune(lib.from_numpy(W / 10.0)))
        return out

    both(prog)


def test_random_methods_prune_the_promised_amount():
    def prog(lib):
        prune = _prune(lib)
        m = _linear(lib)
        prune.random_unstructured(m, "weight", amount=0.25)
        zeros_unstructured = int((m.weight_mask == 0).sum())
        conv = lib.nn.Conv2d(4, 6, 3)
        prune.random_structured(conv, "weight", amount=2, dim=0)
        per_channel = conv.weight_mask.sum(dim=(1, 2, 3))
        return [zeros_unstructured, int((per_channel == 0).sum()),
                sorted(set(per_channel.tolist())), list(conv.state_dict())]

    both(prog)


def test_errors():
    def prog(lib):
        prune = _prune(lib)
        out = [error_of(prune.l1_unstructured, _linear(lib), "weight", amount=1.5),
               error_of(prune.l1_unstructured, _linear(lib), "weight", amount=-1),
               error_of(prune.l1_unstructured, _linear(lib), "weight", amount="a"),
               error_of(prune.l1_unstructured, _linear(lib), "weight", amount=30),
               error_of(prune.ln_structured, _linear(lib), "bias", 1, 2, 0),
               error_of(prune.ln_structured, _linear(lib), "weight", 1, 2, 2),
               error_of(prune.remove, _linear(lib), "weight"),
               error_of(prune.global_unstructured, 3, prune.L1Unstructured, amount=1),
               error_of(prune.global_unstructured, [(_linear(lib), "bias")],
                        prune.LnStructured, amount=1, n=2, dim=0),
               error_of(prune.global_unstructured, [(_linear(lib), "bias")],
                        prune.L1Unstructured, importance_scores=[], amount=1),
               error_of(prune.l1_unstructured, _linear(lib), "weight", amount=1,
                        importance_scores=lib.ones(3))]
        m = _linear(lib)
        out.append(error_of(prune.l1_unstructured, m, "weight", amount=30))
        out.append([n for n, _ in m.named_parameters()])  # restored after the failure
        container = prune.PruningContainer()
        container._tensor_name = "weight"
        other = prune.Identity()
        other._tensor_name = "bias"
        out.append(error_of(container.add_pruning_method, 3)[:2])
        res = error_of(container.add_pruning_method, other)
        out.append((res[0], res[1]))
        return out

    both(prog)
