"""Module machinery against torch: registration, traversal, state_dict, repr, modes, dtypes."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _net(lib):
    """A small model with nested modules, a shared submodule and buffers."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU())
            self.head = nn.Linear(8, 3)
            self.alias = self.head  # the same module twice
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("step", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.empty = None

        def forward(self, x):
            return self.head(self.features(x).flatten(1)) * self.scale

    return Net()


def _shapes(pairs):
    return [(name, tuple(t.shape)) for name, t in pairs]


def test_traversal_matches_torch():
    def prog(lib):
        m = _net(lib)
        return {
            "params": _shapes(m.named_parameters()),
            "params_dup": _shapes(m.named_parameters(remove_duplicate=False)),
            "params_local": _shapes(m.named_parameters(recurse=False)),
            "params_prefix": _shapes(m.named_parameters(prefix="net")),
            "buffers": _shapes(m.named_buffers()),
            "buffers_local": _shapes(m.named_buffers(recurse=False)),
            "children": [n for n, _ in m.named_children()],
            "modules": [n for n, _ in m.named_modules()],
            "modules_dup": [n for n, _ in m.named_modules(remove_duplicate=False)],
            "module_types": [type(x).__name__ for x in m.modules()],
            "n_params": len(list(m.parameters())),
            "state_keys": list(m.state_dict().keys()),
            "state_shapes": _shapes(m.state_dict().items()),
            "state_prefix": list(m.state_dict(prefix="p.").keys()),
            "metadata": dict(m.state_dict()._metadata),
            "submodule": repr(m.get_submodule("features.1")),
            "get_parameter": tuple(m.get_parameter("features.0.bias").shape),
            "get_buffer": tuple(m.get_buffer("features.1.running_var").shape),
            "errors": [error_of(m.get_submodule, "features.7"),
                       error_of(m.get_submodule, "scale"),
                       error_of(m.get_parameter, "step"),
                       error_of(m.get_buffer, "head.weight")],
        }

    both(prog)


def test_state_dict_tensors_are_detached_and_shared():
    def prog(lib):
        m = lib.nn.Linear(2, 2)
        sd = m.state_dict()
        kept = m.state_dict(keep_vars=True)
        sd["weight"].zero_()  # shares memory with the parameter
        return (sd["weight"].requires_grad, kept["weight"].requires_grad,
                type(kept["weight"]).__name__, type(sd["weight"]).__name__,
                m.weight.abs().sum(), isinstance(sd, OrderedDict))

    both(prog)


def test_repr_matches_torch():
    def prog(lib):
        nn = lib.nn
        mods = [
            _net(lib),
            nn.Sequential(OrderedDict(a=nn.Linear(2, 3, bias=False),
                                      b=nn.GELU(approximate="tanh"))),
            nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU(), nn.Tanh()]),
            nn.ModuleList(),
            nn.ModuleDict({"x": nn.Conv1d(2, 3, 2, dilation=2, bias=False), "y": nn.Identity()}),
            nn.Conv2d(3, 6, (3, 5), stride=2, padding=(1, 2), groups=3, padding_mode="reflect"),
            nn.Conv2d(2, 2, 3, padding="same"),
            nn.Conv3d(1, 1, 1), nn.Bilinear(2, 3, 4),
            nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1, dilation=2, bias=False),
            nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True), nn.AvgPool2d((2, 3)),
            nn.AdaptiveAvgPool2d((None, 3)), nn.AdaptiveMaxPool2d(2),
            nn.ReLU(inplace=True), nn.LeakyReLU(0.1, inplace=True), nn.ELU(), nn.Softplus(),
            nn.Softmax(dim=1), nn.LogSoftmax(), nn.Hardtanh(), nn.ReLU6(True), nn.SiLU(),
            nn.Sigmoid(), nn.PReLU(3), nn.Threshold(0.1, 20), nn.Softshrink(),
            nn.Dropout(0.2), nn.Dropout2d(), nn.LayerNorm([2, 3], elementwise_affine=False),
            nn.GroupNorm(2, 4, affine=False), nn.RMSNorm(3, eps=1e-6), nn.BatchNorm1d(3),
            nn.BatchNorm2d(2, momentum=None, affine=False, track_running_stats=False),
            nn.InstanceNorm1d(4, affine=True), nn.Embedding(5, 2, padding_idx=0, max_norm=1.0),
            nn.Flatten(0), nn.Unflatten(1, (2, 2)), nn.CrossEntropyLoss(), nn.MSELoss(),
            nn.MultiheadAttention(4, 2), nn.MultiheadAttention(4, 2, kdim=3, vdim=5),
            nn.TransformerEncoderLayer(4, 2, 8, activation="gelu", norm_first=True),
            nn.TransformerEncoderLayer(4, 2, 8, activation=nn.GELU()),
            nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), lib.ones(2, dtype=lib.float64)]),
            nn.ParameterDict({"b": nn.Parameter(lib.zeros(1)), "a": lib.zeros(2, 2)}),
        ]
        return [repr(m) for m in mods]

    both(prog)


def test_parameter_and_buffer_types():
    def prog(lib):
        nn = lib.nn
        t = lib.zeros(3)
        p = nn.Parameter(t)
        t.add_(1)  # the parameter shares memory and the version counter
        frozen = nn.Parameter(lib.arange(3), requires_grad=False)
        b = nn.Buffer(lib.ones(2), persistent=False)
        m = nn.Module()
        m.b = b
        m.p = p
        return (repr(p), repr(frozen), repr(nn.Parameter()), p.is_leaf, p._version,
                isinstance(p, lib.Tensor), type(p * 2).__name__, type(p.detach()).__name__,
                type(b).__name__, isinstance(b, nn.Buffer), isinstance(t, nn.Buffer),
                list(m.state_dict()), [n for n, _ in m.named_buffers()],
                error_of(nn.Parameter, lib.arange(3)), error_of(nn.Parameter, 1))

    both(prog)


def test_parameter_deepcopy_and_pickle():
    p = retrograd.nn.Parameter(retrograd.tensor([1.0, 2.0]))
    p.tag = "w"
    q = copy.deepcopy(p)
    r = pickle.loads(pickle.dumps(p))
    for other in (q, r):
        assert type(other) is retrograd.nn.Parameter
        assert other.requires_grad and other.tag == "w"
        np.testing.assert_array_equal(other.detach().numpy(), [1.0, 2.0])
        assert other.data_ptr() != p.data_ptr()


def test_attribute_assignment_rules_match_torch():
    def prog(lib):
        nn = lib.nn
        m = nn.Module()
        out = []
        m.w = nn.Parameter(lib.zeros(2))
        out.append(error_of(setattr, m, "w", lib.zeros(2)))  # tensor onto a parameter slot
        m.w = None
        out.append(("w" in m._parameters, m.w))
        m.sub = nn.Linear(1, 1)
        out.append(error_of(setattr, m, "sub", 3))
        m.sub = None
        m.register_buffer("buf", lib.zeros(1))
        m.buf = lib.ones(2)  # plain tensor onto a buffer slot: stays a buffer
        out.append(error_of(setattr, m, "buf", 3))
        out.append(error_of(m.register_buffer, "a.b", lib.zeros(1)))
        out.append(error_of(m.register_buffer, "", lib.zeros(1)))
        out.append(error_of(m.register_buffer, "sub", lib.zeros(1)))
        out.append(error_of(m.register_buffer, "x", 3))
        out.append(error_of(m.register_parameter, "x", lib.zeros(1)))
        out.append(error_of(m.register_parameter, "y", nn.Parameter(lib.zeros(1)) * 2))
        out.append(error_of(m.add_module, "z", 3))
        out.append(error_of(m.add_module, "z.z", nn.ReLU()))
        out.append(error_of(m.add_module, "buf", nn.ReLU()))
        m.plain = 5
        m.plain = nn.Parameter(lib.ones(1))  # replaces the plain attribute
        out.append(error_of(getattr, m, "missing"))
        del m.buf
        out.append(([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
                    list(m._modules), "plain" in m.__dict__))
        out.append(error_of(lambda: nn.Module()(1)))
        out.append(error_of(nn.Module, 1))
        out.append(error_of(nn.Module, a=1))
        return out

    both(prog)


def test_attribute_before_init_raises_like_torch():
    def prog(lib):
        nn = lib.nn

        class Early(nn.Module):
            def __init__(self, what):
                if what == "param":
                    self.p = nn.Parameter(lib.zeros(1))
                elif what == "module":
                    self.m = nn.ReLU()
                else:
                    self.register_buffer("b", lib.zeros(1))
                super().__init__()

        return [error_of(Early, w) for w in ("param", "module", "buffer")]

    both(prog)


def test_load_state_dict_errors_match_torch():
    def prog(lib):
        m = lib.nn.Linear(2, 3)
        seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        good = {"weight": lib.zeros(3, 2), "bias": lib.zeros(3)}
        return [
            error_of(m.load_state_dict, {"weight": lib.zeros(3, 2)}),
            error_of(m.load_state_dict, {**good, "extra": lib.zeros(1), "sub.x": lib.zeros(1)}),
            error_of(m.load_state_dict, {"weight": lib.zeros(2, 2), "bias": lib.zeros(3)}),
            error_of(m.load_state_dict, {"weight": 1, "bias": lib.zeros(3)}),
            error_of(m.load_state_dict, {"bias": lib.zeros(4), "other": lib.zeros(1)}),
            error_of(m.load_state_dict, [1]),
            repr(m.load_state_dict({"weight": lib.zeros(3, 2)}, strict=False)),
            repr(m.load_state_dict(good)),
            tuple(m.load_state_dict({"bias": lib.ones(3), "x": lib.ones(1)}, strict=False)),
            m.bias,
            error_of(seq.load_state_dict, {"0.weight": lib.zeros(2, 2)}),
            error_of(seq.load_state_dict, {k: v for k, v in seq.state_dict().items()
                                           if k != "1.num_batches_tracked"}),
        ]

    both(prog)


def test_load_state_dict_copies_in_place_and_assign():
    def prog(lib):
        m = lib.nn.Linear(2, 2)
        w = m.weight
        v0 = w._version
        src = {"weight": lib.ones(2, 2, dtype=lib.float64), "bias": lib.zeros(2)}
        m.load_state_dict(src)
        same = m.weight is w
        bumped = w._version > v0
        m2 = lib.nn.Linear(2, 2)
        new_w = lib.full((2, 2), 3.0)
        m2.load_state_dict({"weight": new_w, "bias": lib.zeros(2)}, assign=True)
        return (same, bumped, m.weight, m.weight.dtype, type(m2.weight).__name__,
                m2.weight.requires_grad, m2.weight.data_ptr() == new_w.data_ptr())

    both(prog)


def test_old_batchnorm_checkpoint_without_num_batches_tracked():
    def prog(lib):
        bn = lib.nn.BatchNorm1d(2)
        sd = OrderedDict((k, v) for k, v in bn.state_dict().items()
                         if k != "num_batches_tracked")
        sd._metadata = OrderedDict({"": {"version": 1}})
        return repr(bn.load_state_dict(sd)), bn.num_batches_tracked

    both(prog)


def test_state_dict_and_load_hooks_match_torch():
    def prog(lib):
        log = []
        m = lib.nn.Sequential(lib.nn.Linear(1, 1))
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        m[0].register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", prefix, sorted(sd))))
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: log.append(("load_pre", prefix)))

        def post(mod, keys):
            log.append(("load_post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.unexpected_keys.clear()

        m.register_load_state_dict_post_hook(post)
        sd = m.state_dict()
        sd["junk"] = lib.zeros(1)
        res = m.load_state_dict(sd)
        return log, repr(res)

    both(prog)


def test_train_eval_requires_grad_zero_grad():
    def prog(lib):
        m = _net(lib)
        out = [m.training, m.features[1].training]
        m.eval()
        out += [m.training, m.features[1].training, m.head.training]
        m.train()
        out.append(m.features[1].training)
        out.append(error_of(m.train, 1))
        m.features.requires_grad_(False)
        out.append([p.requires_grad for p in m.parameters()])
        m.requires_grad_()
        y = m(lib.ones(2, 1, 4, 4)).sum()
        y.backward()
        out.append([p.grad is not None for p in m.parameters()])
        m.zero_grad(set_to_none=False)
        out.append([p.grad for p in m.parameters()])
        m.zero_grad()
        out.append([p.grad is None for p in m.parameters()])
        return out

    both(prog)


def test_to_and_dtype_casts_match_torch():
    def prog(lib):
        m = _net(lib)
        w = m.head.weight
        m(lib.ones(1, 1, 4, 4)).sum().backward()
        m.double()
        out = [w is m.head.weight, m.head.weight.dtype, m.head.weight.grad.dtype,
               m.features[1].running_mean.dtype, m.features[1].num_batches_tracked.dtype,
               m.step.dtype]
        m.to(lib.float16)
        out.append(m.head.weight.dtype)
        m.float()
        out.append(m.head.bias.dtype)
        m.to(lib.zeros(1, dtype=lib.float64))
        out.append(m.scale.dtype)
        m.to("cpu", lib.float32)
        out.append(m.scale.dtype)
        m.half().to(dtype=lib.float64)
        out.append(m.head.weight.dtype)
        out.append(error_of(m.to, lib.int64))
        out.append(m.cpu() is m)
        return out

    both(prog)


def test_apply_order_and_return():
    def prog(lib):
        seen = []
        m = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Sequential(lib.nn.ReLU()))
        res = m.apply(lambda mod: seen.append(type(mod).__name__))
        return seen, res is m

    both(prog)


def test_sequential_and_modulelist_operations():
    def prog(lib):
        nn = lib.nn
        a, b, c = nn.Linear(1, 1), nn.ReLU(), nn.Tanh()
        s = nn.Sequential(a, b, c)
        out = [len(s), s[0] is a, s[-1] is c, type(s[1:]).__name__, list(s[1:]._modules),
               [type(x).__name__ for x in s]]
        s.append(nn.Sigmoid())
        s.insert(1, nn.Identity())
        out.append([type(x).__name__ for x in s])
        del s[1]
        out.append(list(s._modules))
        s[0] = nn.ELU()
        out.append(repr(s))
        out.append(repr(s + nn.Sequential(nn.ReLU())))
        out.append(repr(2 * nn.Sequential(nn.ReLU())))
        out.append(error_of(lambda: s[10]))
        out.append(error_of(lambda: s + [1]))
        out.append(repr(s.pop(0)))
        lst = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        lst.append(nn.ReLU())
        lst.extend([nn.Sigmoid()])
        lst.insert(0, nn.GELU())
        lst += [nn.Identity()]
        out.append(repr(lst))
        del lst[1:3]
        out.append([type(x).__name__ for x in lst])
        out.append(list(lst._modules))
        out.append(error_of(lambda: lst[9]))
        out.append(error_of(lst.extend, 3))
        d = nn.ModuleDict({"a": nn.ReLU()})
        d.update([("b", nn.Tanh())])
        d["c"] = nn.Identity()
        out.append((list(d.keys()), "a" in d, len(d), repr(d.pop("b")), list(d)))
        out.append(error_of(d.update, [("x",)]))
        return out

    both(prog)


def test_parameter_list_and_dict():
    def prog(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.ones(3))])
        pl.append(lib.ones(1))
        pd = nn.ParameterDict({"w": lib.zeros(2)})
        pd["v"] = nn.Parameter(lib.ones(1))
        m = nn.Module()
        m.pl, m.pd = pl, pd
        return ([type(p).__name__ for p in pl], len(pl), list(pd.keys()),
                [n for n, _ in m.named_parameters()], type(pl[1:]).__name__,
                error_of(pl, 1), list(pd.items())[0][0], error_of(pl.extend, lib.zeros(2)))

    both(prog)


def test_forward_hooks_match_torch():
    def prog(lib):
        log = []
        m = lib.nn.Linear(2, 2)

        def pre(mod, args):
            log.append(("pre", len(args)))
            return (args[0] * 2,)

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return None

        def first(mod, args, out):
            log.append("first")

        def post(mod, args, out):
            log.append(("post", tuple(out.shape)))
            return out + 1

        def post_kw(mod, args, kwargs, out):
            log.append(("post_kw", sorted(kwargs)))

        m.load_state_dict({"weight": lib.tensor([[1.0, 2.0], [3.0, -1.0]]),
                           "bias": lib.tensor([0.5, 0.0])})
        h1 = m.register_forward_pre_hook(pre)
        m.register_forward_pre_hook(pre_kw, with_kwargs=True, prepend=True)
        m.register_forward_hook(post)
        m.register_forward_hook(first, prepend=True)
        m.register_forward_hook(post_kw, with_kwargs=True)
        x = lib.ones(1, 2)
        y1 = m(x)
        h1.remove()
        y2 = m(x)
        return log, y1, y2, y1 - y2

    both(prog)


def test_forward_hook_always_call_and_pre_hook_errors():
    def prog(lib):
        log = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda m, a, o: log.append(("always", o)), always_call=True)
        b.register_forward_hook(lambda m, a, o: log.append("never"))
        err = error_of(b, lib.ones(1))
        m = lib.nn.ReLU()
        m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        err2 = error_of(m, lib.ones(1))
        single = lib.nn.ReLU()
        single.register_forward_pre_hook(lambda mod, a: -a[0])  # a bare value is wrapped
        return log, err, err2, single(lib.ones(2))

    both(prog)


def test_global_module_hooks():
    from retrograd.nn.modules import module as rmod

    log = []
    h1 = rmod.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__)))
    h2 = rmod.register_module_forward_hook(lambda m, a, o: log.append(("post", type(m).__name__)))
    try:
        net = retrograd.nn.Sequential(retrograd.nn.ReLU())
        net(retrograd.ones(1))
    finally:
        h1.remove()
        h2.remove()
    net(retrograd.ones(1))
    assert log == [("pre", "Sequential"), ("pre", "ReLU"), ("post", "ReLU"),
                   ("post", "Sequential")]


class _Picklable(retrograd.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = retrograd.nn.Linear(2, 2)
        self.alias = self.head
        self.norm = retrograd.nn.BatchNorm1d(2)


def test_deepcopy_and_pickle_module():
    m = _Picklable()
    m.register_forward_hook(lambda *a: None)
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(_Picklable()))):
        assert [n for n, _ in other.named_parameters()] == [n for n, _ in m.named_parameters()]
        assert other.head.weight is not m.head.weight
        assert other.alias is other.head
        assert isinstance(other.head.weight, retrograd.nn.Parameter)
    clone = copy.deepcopy(m)
    np.testing.assert_array_equal(clone.head.weight.detach().numpy(),
                                  m.head.weight.detach().numpy())


def test_dir_lists_members():
    m = _net(retrograd)
    names = dir(m)
    for n in ("head", "scale", "step", "forward", "features"):
        assert n in names
