"""Every optimizer refuses bad hyperparameters with torch's message, checked in torch's order."""

from __future__ import annotations

import inspect

import pytest
import torch

import retrograd

NAMES = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "SGD"]
BAD = {"lr": -0.5, "eps": -1.0, "rho": 1.5, "betas": (0.9, 1.0), "weight_decay": -2.0,
       "momentum": -0.25, "alpha": -3.0, "lr_decay": -0.125, "initial_accumulator_value": -4.0,
       "momentum_decay": -5.0}


def _message(lib, name, kwargs):
    param = lib.nn.Parameter(lib.zeros(2))
    with pytest.raises(ValueError) as err:
        getattr(lib.optim, name)([param], **kwargs)
    return str(err.value)


def _cases():
    for name in NAMES:
        accepted = inspect.signature(getattr(torch.optim, name)).parameters
        bad = {k: v for k, v in BAD.items() if k in accepted}
        for key, value in bad.items():
            yield name, {key: value}
        yield name, bad  # all at once: the first check torch makes wins


@pytest.mark.parametrize("name,kwargs", list(_cases()))
def test_bad_hyperparameter_message(name, kwargs):
    assert _message(retrograd, name, kwargs) == _message(torch, name, kwargs)
