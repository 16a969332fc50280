"""nn.utils.parametrize against torch: registration, the class swap, state_dict keys, right
inverses (one tensor and a tuple), caching, removal, transfer, and the errors."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")

W = np.arange(12.0).reshape(4, 3) / 7 - 0.8
B = np.array([0.1, -0.2, 0.3, 0.05])
X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def _linear(lib, n_out=4, n_in=3):
    m = lib.nn.Linear(n_in, n_out).double()
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(W[:n_out, :n_in].copy()))
        m.bias.copy_(lib.from_numpy(B[:n_out].copy()))
    return m


def _square(lib):
    return _linear(lib, 3, 3)


def _parts(lib):
    """Parametrization classes built on `lib`'s Module."""

    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()

    class Scale(lib.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        def forward(self, x):
            return x * self.k

        def right_inverse(self, y):
            return y / self.k

    class NoInverse(lib.nn.Module):
        def forward(self, x):
            return x.exp()

    class Split(lib.nn.Module):
        """Two originals: the parametrized tensor is their sum."""

        def forward(self, a, b):
            return a + 2 * b

        def right_inverse(self, y):
            return y * 0.5, y * 0.25

    class Flat(lib.nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    class Wrong(lib.nn.Module):
        def __init__(self, out):
            super().__init__()
            self.out = out

        def forward(self, x):
            return self.out(x)

    return Symmetric, Scale, NoInverse, Split, Flat, Wrong


def _grads(m):
    return {n: p.grad for n, p in m.named_parameters()}


def test_register_symmetric_matches_torch():
    def prog(lib):
        sym = _parts(lib)[0]
        m = _square(lib)
        weight_param = m.weight
        out = lib.nn.utils.parametrize.register_parametrization(m, "weight", sym())
        y = m(lib.from_numpy(X.copy()))
        (y * y).sum().backward()
        return [out is m, type(m).__name__, repr(m), list(m.state_dict()), m.state_dict(),
                m.weight, y, _grads(m), [n for n, _ in m.named_parameters()],
                m.parametrizations.weight.original is weight_param,
                str(lib.nn.utils.parametrize.type_before_parametrizations(m)),
                lib.nn.utils.parametrize.is_parametrized(m),
                lib.nn.utils.parametrize.is_parametrized(m, "weight"),
                lib.nn.utils.parametrize.is_parametrized(m, "bias"),
                type(m.parametrizations).__name__, type(m.parametrizations.weight).__name__,
                isinstance(m, lib.nn.Linear), m.weight.grad_fn is not None]

    both(prog)


def test_chain_and_assignment_through_right_inverse():
    def prog(lib):
        sym, scale = _parts(lib)[:2]
        pz = lib.nn.utils.parametrize
        m = _square(lib)
        pz.register_parametrization(m, "weight", sym())
        pz.register_parametrization(m, "weight", scale(3.0))
        first = [repr(m), list(m.state_dict()), m.weight, m.parametrizations.weight.original]
        m.weight = lib.from_numpy(np.eye(3) * 6.0 + 1.0)  # goes through right_inverse
        second = [m.weight, m.parametrizations.weight.original]
        y = m(lib.from_numpy(X.copy())).sum()
        y.backward()
        return first, second, y, _grads(m), m.parametrizations.weight.unsafe

    both(prog)


def test_parametrized_buffer_and_load_state_dict():
    def prog(lib):
        scale = _parts(lib)[1]
        pz = lib.nn.utils.parametrize
        bn = lib.nn.BatchNorm1d(3).double()
        pz.register_parametrization(bn, "running_var", scale(2.0))
        keys = list(bn.state_dict())
        src = {k: v.clone() + 1.0 if v.is_floating_point() else v for k, v in
               bn.state_dict().items()}
        bn.load_state_dict(src)
        return (keys, bn.state_dict(), bn.running_var, [n for n, _ in bn.named_buffers()],
                type(bn).__name__, repr(bn))

    both(prog)


def test_tuple_right_inverse_gives_original0_original1():
    def prog(lib):
        split = _parts(lib)[3]
        pz = lib.nn.utils.parametrize
        m = _linear(lib)
        pz.register_parametrization(m, "weight", split())
        chain = m.parametrizations.weight
        info = [list(m.state_dict()), m.state_dict(), chain.is_tensor, chain.ntensors,
                hasattr(chain, "original"), type(chain.original0).__name__,
                chain.original1.requires_grad, m.weight]
        y = m(lib.from_numpy(X.copy()))
        (y ** 2).sum().backward()
        info.append(_grads(m))
        m.weight = lib.from_numpy(W * 4.0)
        info += [chain.original0, chain.original1, m.weight]
        info.append(error_of(pz.remove_parametrizations, m, "weight", leave_parametrized=False))
        pz.remove_parametrizations(m, "weight")
        info += [type(m).__name__, list(m.state_dict()), m.weight,
                 type(m.weight).__name__, m.weight.requires_grad]
        return info

    both(prog)


def test_remove_parametrizations_keeps_the_parameter_object():
    def prog(lib):
        sym, scale = _parts(lib)[:2]
        pz = lib.nn.utils.parametrize
        out = []
        for leave in (True, False):
            m = _square(lib)
            pz.register_parametrization(m, "weight", scale(2.0))
            pz.register_parametrization(m, "bias", scale(-1.0))
            pz.register_parametrization(m, "weight", sym())
            original = m.parametrizations.weight.original
            value = m.weight.detach().clone()
            pz.remove_parametrizations(m, "weight", leave_parametrized=leave)
            out += [m.weight is original, type(m).__name__, list(m.state_dict()), m.weight,
                    value, pz.is_parametrized(m), pz.is_parametrized(m, "weight")]
            pz.remove_parametrizations(m, "bias", leave_parametrized=leave)
            out += [type(m).__name__, hasattr(m, "parametrizations"), m.bias,
                    list(m.state_dict()), repr(m), type(m) is lib.nn.Linear]
        return out

    both(prog)


def test_cached_computes_once():
    def prog(lib):
        scale = _parts(lib)[1]
        pz = lib.nn.utils.parametrize
        m = _square(lib)
        pz.register_parametrization(m, "weight", scale(2.0))
        out = [m.weight is m.weight]
        with pz.cached():
            same = m.weight is m.weight
            with pz.cached():
                nested = m.weight is m.weight
            y = m(lib.from_numpy(X.copy())) + m(lib.from_numpy(X.copy() * 2))
        y.sum().backward()
        out += [same, nested, y, _grads(m), m.weight is m.weight]
        return out

    both(prog)


def test_unsafe_allows_shape_change():
    def prog(lib):
        flat = _parts(lib)[4]
        pz = lib.nn.utils.parametrize
        m = _linear(lib)
        pz.register_parametrization(m, "weight", flat(), unsafe=True)
        return [m.weight.shape, m.weight, m.parametrizations.weight.unsafe,
                list(m.state_dict())]

    both(prog)


def test_errors_match_torch():
    def prog(lib):
        sym, scale, no_inv, split, flat, wrong = _parts(lib)
        pz = lib.nn.utils.parametrize
        out = []
        m = _linear(lib)
        out.append(error_of(pz.register_parametrization, m, "weight", flat()))
        out.append(error_of(pz.register_parametrization, m, "weight",
                            wrong(lambda x: x.float())))
        out.append(error_of(pz.register_parametrization, m, "weight", wrong(lambda x: 3)))
        out.append(error_of(pz.register_parametrization, m, "nothing", scale(2.0)))
        out.append(error_of(pz.remove_parametrizations, m, "weight"))
        out.append(type(m).__name__)
        pz.register_parametrization(m, "weight", no_inv())
        out.append(error_of(setattr, m, "weight", lib.from_numpy(W.copy())))
        out.append(error_of(pz.register_parametrization, m, "weight", flat()))
        out.append(error_of(pz.register_parametrization, m, "weight",
                            wrong(lambda x: x.float())))
        out.append(error_of(pz.register_parametrization, m, "weight", wrong(lambda x: 3)))
        out.append(error_of(pickle.dumps, m))
        out.append(error_of(lambda: pz.ParametrizationList([], m.bias)))

        class BadInverse(lib.nn.Module):
            def __init__(self, inv):
                super().__init__()
                self.inv = inv

            def forward(self, x):
                return x

            def right_inverse(self, x):
                return self.inv(x)

        out.append(error_of(pz.register_parametrization, _linear(lib), "weight",
                            BadInverse(lambda x: 5)))
        out.append(error_of(pz.register_parametrization, _linear(lib), "weight",
                            BadInverse(lambda x: x.float())))
        out.append(error_of(pz.register_parametrization, _linear(lib), "weight",
                            BadInverse(lambda x: (x, 3))))
        m2 = _linear(lib)
        pz.register_parametrization(m2, "weight", scale(2.0))
        out.append(error_of(pz.register_parametrization, m2, "weight",
                            BadInverse(lambda x: x.float())))
        out.append(error_of(pz.register_parametrization, m2, "weight",
                            BadInverse(lambda x: x[0])))
        out.append(error_of(pz.register_parametrization, m2, "weight",
                            BadInverse(lambda x: "a")))
        m3 = _linear(lib)
        pz.register_parametrization(m3, "weight", split())
        out.append(error_of(setattr, m3, "weight", lib.from_numpy(W.copy())))
        return out

    both(prog)


def test_tuple_assignment_errors():
    def prog(lib):
        pz = lib.nn.utils.parametrize

        class Pair(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.mode = "ok"

            def forward(self, a, b):
                return a - b

            def right_inverse(self, y):
                if self.mode == "ok":
                    return y, y * 0
                if self.mode == "short":
                    return (y,)
                if self.mode == "dtype":
                    return y.float(), y.float()
                return y, "b"

        m = _linear(lib)
        pair = Pair()
        pz.register_parametrization(m, "weight", pair)
        out = []
        for mode in ("short", "dtype", "str"):
            pair.mode = mode
            out.append(error_of(setattr, m, "weight", lib.from_numpy(W.copy())))
        return out

    both(prog)


def test_transfer_parametrizations_and_params():
    def prog(lib):
        sym, scale, _, split = _parts(lib)[:4]
        pz = lib.nn.utils.parametrize
        src = _square(lib)
        pz.register_parametrization(src, "weight", sym())
        pz.register_parametrization(src, "weight", scale(2.0))
        pz.register_parametrization(src, "bias", split())
        dst = lib.nn.Linear(3, 3).double()
        out = pz.transfer_parametrizations_and_params(src, dst)
        res = [out is dst, type(dst).__name__, list(dst.state_dict()), dst.state_dict(),
               dst.parametrizations.weight.original is src.parametrizations.weight.original,
               dst.weight, dst.bias]

        class Bare(lib.nn.Module):
            pass

        only = pz.transfer_parametrizations_and_params(src, Bare(), "weight")
        res += [type(only).__name__, list(only.state_dict()), only.weight, repr(only)]
        plain = lib.nn.Linear(3, 3)
        res.append(pz.transfer_parametrizations_and_params(_square(lib), plain) is plain)
        return res

    both(prog)


def test_deepcopy_keeps_parametrization():
    def prog(lib):
        scale = _parts(lib)[1]
        pz = lib.nn.utils.parametrize
        m = _square(lib)
        pz.register_parametrization(m, "weight", scale(2.0))
        c = copy.deepcopy(m)
        with lib.no_grad():
            c.parametrizations.weight.original.mul_(3)
        return [type(c).__name__, list(c.state_dict()), c.weight, m.weight,
                pz.type_before_parametrizations(c) is lib.nn.Linear]

    both(prog)


def test_parametrization_follows_train_mode():
    def prog(lib):
        scale = _parts(lib)[1]
        pz = lib.nn.utils.parametrize
        m = _square(lib).eval()
        s = scale(2.0)
        pz.register_parametrization(m, "weight", s)
        first = s.training
        m.train()
        return [first, s.training, m.parametrizations.training]

    both(prog)
