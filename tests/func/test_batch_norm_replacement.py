"""func.replace_all_batch_norm_modules_ against torch.func's: which layers change, what they
keep, and that vmap over the model then normalizes each example with its own statistics."""

import numpy as np

import retrograd
from tests.parity.harness import torch_or_skip


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3),
                             lib.nn.Sequential(lib.nn.BatchNorm2d(3, track_running_stats=False)),
                             lib.nn.Flatten(), lib.nn.BatchNorm1d(12), lib.nn.LayerNorm(12))


def _state(model):
    return [(type(m).__name__, getattr(m, "track_running_stats", None),
             getattr(m, "running_mean", "n/a") is None, getattr(m, "running_var", "n/a") is None,
             getattr(m, "num_batches_tracked", "n/a") is None) for m in model.modules()]


def test_replace_all_batch_norm_modules_like_torch():
    torch = torch_or_skip()
    ours, theirs = _model(retrograd), _model(torch)
    assert retrograd.func.replace_all_batch_norm_modules_(ours) is ours
    assert torch.func.replace_all_batch_norm_modules_(theirs) is theirs
    assert _state(ours) == _state(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


def test_vmapped_model_uses_each_examples_statistics():
    model = retrograd.func.replace_all_batch_norm_modules_(
        retrograd.nn.Sequential(retrograd.nn.Linear(3, 4), retrograd.nn.BatchNorm1d(4)))
    x = retrograd.randn(5, 6, 3)  # 5 independent batches of 6
    out = retrograd.func.vmap(model)(x)
    for i in range(5):
        np.testing.assert_allclose(out[i].detach().numpy(), model(x[i]).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
