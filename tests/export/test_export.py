"""retrograd.export against torch.export on the same modules and weights: signatures (names,
kinds, targets, persistence), the exported module's values and buffer updates, guards and
errors, dynamic dimensions, run_decompositions, save/load."""

from __future__ import annotations

import io

import numpy as np
import pytest

import retrograd
from retrograd.export import Dim, export, load, save
from tests.parity.harness import error_of, torch_or_skip


def _weights(rs, shape):
    return (rs.randn(*shape) * 0.5).astype(np.float32)


def _norm_block(lib):
    """BatchNorm (running statistics written in place), a non-persistent buffer, a tensor made
    inside forward, a keyword float, and dict/list outputs holding a Python int."""

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = lib.nn.BatchNorm1d(3)
            self.lin = lib.nn.Linear(3, 3)
            self.register_buffer("c", lib.ones(3), persistent=False)

        def forward(self, x, *, scale=1.0):
            y = self.lin(self.bn(x)) * scale + self.c + lib.tensor([1.0, 2.0, 3.0])
            return {"y": y, "z": [x.sum(), 3]}

    block = Block()
    rs = np.random.RandomState(0)
    with lib.no_grad():
        for _, p in block.named_parameters():
            p.copy_(lib.tensor(_weights(rs, p.shape)))
    return block


def _specs(ep):
    sig = ep.graph_signature
    return ([(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs],
            [s.kind.name for s in sig.output_specs], sig.user_inputs, sig.parameters,
            sig.buffers, sig.inputs_to_parameters, sig.inputs_to_buffers)


def _program(lib):
    block = _norm_block(lib)
    x = lib.tensor(_weights(np.random.RandomState(1), (4, 3)))
    ep = lib.export.export(block, (x,), {"scale": 2.0})
    state_after_export = block.bn.running_mean.clone()
    m = ep.module()
    first = m(x, scale=2.0)
    second = m(x * 2, scale=2.0)  # the running statistics moved in between
    return {"specs": _specs(ep), "constants": {k: v.numpy() for k, v in ep.constants.items()},
            "state_after_export": state_after_export.numpy(),
            "y": [first["y"].detach().numpy(), second["y"].detach().numpy()],
            "z": [first["z"][0].item(), first["z"][1]],
            "running_mean": ep.state_dict["bn.running_mean"].numpy(),
            "module_state": sorted(m.state_dict()),
            "errors": [error_of(m, x, scale=3.0)[:3], error_of(m, x[:3], scale=2.0)[:3],
                       error_of(ep, x)[:3]]}


def test_exported_block_matches_torch():
    torch = torch_or_skip()
    ours, theirs = _program(retrograd), _program(torch)
    assert ours["specs"] == theirs["specs"]
    assert ours["constants"].keys() == theirs["constants"].keys()
    for k in ours["constants"]:
        np.testing.assert_array_equal(ours["constants"][k], theirs["constants"][k])
    np.testing.assert_array_equal(ours["state_after_export"], np.zeros(3, np.float32))
    np.testing.assert_array_equal(theirs["state_after_export"], np.zeros(3, np.float32))
    for a, b in zip(ours["y"], theirs["y"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours["z"][1] == theirs["z"][1] == 3
    np.testing.assert_allclose(ours["z"][0], theirs["z"][0], rtol=1e-6)
    np.testing.assert_allclose(ours["running_mean"], theirs["running_mean"], rtol=1e-6)
    assert ours["module_state"] == theirs["module_state"]
    assert ours["errors"] == theirs["errors"]
    assert ours["errors"][0] == ("raised", "AssertionError", "Guard failed: scale == 2.0")
    assert ours["errors"][1] == ("raised", "AssertionError", "Guard failed: x.size()[0] == 4")


def test_linear_signature_values_and_shared_state_match_torch():
    torch = torch_or_skip()
    out = {}
    for lib in (retrograd, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())
        rs = np.random.RandomState(2)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(_weights(rs, p.shape)))
        x = lib.tensor(_weights(rs, (2, 3)))
        ep = lib.export.export(m, (x,))
        out[lib] = (_specs(ep), ep.module()(x).detach().numpy(),
                    ep.state_dict["0.weight"] is m[0].weight,
                    [type(p).__name__ for p in ep.parameters()],
                    [n for n, _ in ep.named_parameters()])
    assert out[retrograd][0] == out[torch][0]
    np.testing.assert_allclose(out[retrograd][1], out[torch][1], rtol=1e-6)
    assert out[retrograd][2:] == out[torch][2:] == (True, ["Parameter"] * 2,
                                                   ["0.weight", "0.bias"])


def test_input_names_flatten_like_torch():
    torch = torch_or_skip()
    names = {}
    for lib in (retrograd, torch):
        class M(lib.nn.Module):
            def forward(self, xs, d, *rest, k=None):
                return xs[0] + xs[1] + d["a"] + rest[0] + k

        ones = lib.ones(2)
        # distinct example tensors: torch traces one tensor passed twice as one input
        ep = lib.export.export(M(), ([lib.ones(2), lib.ones(2)], {"a": lib.ones(2)},
                                     lib.ones(2)), {"k": lib.ones(2)})
        names[lib] = (ep.graph_signature.user_inputs,
                      ep.module()([ones, ones * 2], {"a": ones}, ones, k=ones).tolist(),
                      error_of(ep.module(), [ones, ones], {"a": ones}, k=ones)[:2])
    assert names[retrograd] == names[torch]
    assert names[retrograd][0] == ("xs_0", "xs_1", "d_a", "rest_0", "k")
    assert names[retrograd][2] == ("raised", "ValueError")


def test_export_errors_match_torch():
    torch = torch_or_skip()
    for lib in (retrograd, torch):
        m = lib.nn.Linear(3, 4)
        assert error_of(lib.export.export, lambda x: x, (lib.ones(2),)) == (
            "raised", "ValueError",
            "Expected `mod` to be an instance of `torch.nn.Module`, got <class 'function'>.")
        kind, name, message = error_of(lib.export.export, m, [lib.ones(2, 3)])
        assert (kind, name) == ("raised", "UserError")
        assert message.startswith("Expecting `args` to be a tuple of example positional "
                                  "inputs, got <class 'list'>")
        kind, name, _ = error_of(lib.export.export, m, (lib.ones(4, 3),),
                                 dynamic_shapes=({0: lib.export.Dim("b", min=5)},))
        assert kind == "raised"
    assert error_of(lambda: export(retrograd.nn.Linear(3, 4), (retrograd.ones(4, 3),),
                                   dynamic_shapes=({0: Dim("b", min=5)},)))[1:] == (
        "UserError", "4 not in range [5, int_oo] for input.shape[0]")


def test_dynamic_dimension_ranges_match_torch():
    torch = torch_or_skip()
    got = {}
    for lib in (retrograd, torch):
        m = lib.nn.Linear(2, 3)
        b = lib.export.Dim("b", min=3, max=8)
        ep = lib.export.export(m, (lib.ones(4, 2),), dynamic_shapes={"input": {0: b}})
        mod = ep.module()
        x7 = lib.tensor(_weights(np.random.RandomState(3), (7, 2)))
        got[lib] = (np.allclose(mod(x7).detach().numpy(), m(x7).detach().numpy(), atol=1e-6),
                    [repr(v) for v in ep.range_constraints.values()],
                    error_of(mod, lib.ones(9, 2))[:3], error_of(mod, lib.ones(2, 2))[:3],
                    repr(b), repr(lib.export.Dim("c")), repr(lib.export.Dim.AUTO))
    assert got[retrograd] == got[torch]
    assert got[retrograd][:4] == (True, ["VR[3, 8]"],
                                  ("raised", "AssertionError", "Guard failed: "
                                   "input.size()[0] <= 8"),
                                  ("raised", "AssertionError", "Guard failed: "
                                   "input.size()[0] >= 3"))


def test_a_size_the_graph_fixed_is_refused_or_kept_static():
    """A Dim on a dimension whose size the traced graph holds (a view's shape) is refused
    (torch, reasoning about symbols, accepts it); Dim.AUTO keeps it static."""

    class Fold(retrograd.nn.Module):
        def forward(self, x):
            return x.view(x.shape[0] * 2, -1)

    with pytest.raises(retrograd._dynamo.exc.UserError, match=r"Constraints violated \(b\)!.*"
                       r"depends on x.size\(\)\[0\] = 4"):
        export(Fold(), (retrograd.ones(4, 2),), dynamic_shapes=({0: Dim("b")},))
    ep = export(Fold(), (retrograd.ones(4, 2),), dynamic_shapes=({0: Dim.AUTO},))
    assert ep.range_constraints == {}
    assert ep.module()(retrograd.ones(4, 2)).shape == (8, 1)
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 4"):
        ep.module()(retrograd.ones(5, 2))


def test_export_leaves_the_callers_inputs_alone():
    class Bump(retrograd.nn.Module):
        def forward(self, x):
            x.add_(1)
            return x * 2

    x = retrograd.zeros(3)
    ep = export(Bump(), (x,))
    assert x.tolist() == [0.0, 0.0, 0.0]
    y = retrograd.zeros(3)
    assert ep.module()(y).tolist() == [2.0, 2.0, 2.0] and y.tolist() == [1.0, 1.0, 1.0]


def test_run_decompositions():
    from retrograd.ops import aten

    m = retrograd.nn.Sequential(retrograd.nn.Linear(3, 4), retrograd.nn.GELU())
    x = retrograd.randn(2, 3)
    ep = export(m, (x,))
    assert ep.run_decompositions().graph_module.code == ep.graph_module.code

    def gelu(t, approximate="none"):
        return t * 0.5 * (1 + retrograd.erf(t / 2 ** 0.5))

    ep2 = ep.run_decompositions({aten.gelu.default: gelu})
    targets = [str(n.target) for n in ep2.graph.nodes if n.op == "call_function"]
    assert "aten.gelu.default" not in targets and "aten.erf.default" in targets
    assert ep2.graph_signature.user_outputs == (list(ep2.graph.nodes)[-1].args[0][0].name,)
    np.testing.assert_allclose(ep2.module()(x).detach().numpy(), m(x).detach().numpy(),
                               rtol=1e-6, atol=1e-7)


def test_save_and_load_round_trip(tmp_path):
    block = _norm_block(retrograd)
    x = retrograd.randn(4, 3)
    ep = export(block, (x,), {"scale": 2.0},
                dynamic_shapes={"x": {0: Dim("b", max=10)}, "scale": None})
    path = tmp_path / "block.pt2"
    extra = {"note": "hello"}
    save(ep, str(path), extra_files=extra)
    wanted = {"note": ""}
    back = load(str(path), extra_files=wanted)
    assert wanted == {"note": "hello"}
    assert back.graph_module.code == ep.graph_module.code
    assert _specs(back) == _specs(ep)
    assert str(back) == str(ep)
    assert [type(p).__name__ for p in back.parameters()] == ["Parameter"] * 4
    x6 = retrograd.randn(6, 3)
    a, b = ep.module()(x6, scale=2.0), back.module()(x6, scale=2.0)
    np.testing.assert_array_equal(a["y"].detach().numpy(), b["y"].detach().numpy())
    assert a["z"][1] == b["z"][1] == 3
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] <= 10"):
        back.module()(retrograd.ones(11, 3), scale=2.0)
    with pytest.raises(AssertionError, match="Guard failed: scale == 2.0"):
        back.module()(x6, scale=1.0)


def test_load_refuses_other_files():
    buf = io.BytesIO()
    retrograd.save({"weights": retrograd.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="not an exported program"):
        load(buf)
    with pytest.raises(TypeError, match="must be an instance of 'ExportedProgram'"):
        save(retrograd.nn.Linear(2, 2), io.BytesIO())


def test_load_resolves_ops_by_name_only():
    from retrograd.export import _serialize

    assert _serialize._resolve("aten.addmm.default") is retrograd.ops.aten.addmm.default
    for bad in ("os.system", "aten.no_such_op.default", "builtins.eval"):
        with pytest.raises(ValueError, match="unknown op"):
            _serialize._resolve(bad)
