"""retrograd.optim.lr_scheduler against torch.optim.lr_scheduler, step by step."""

import math
import warnings

import pytest

import retrograd
import retrograd.optim as optim
from retrograd.optim import lr_scheduler

torch = pytest.importorskip("torch")

STEPS = 30


def _optimizer(lib, name="SGD", groups=2):
    params = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
    spec = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if name == "SGD":
        return lib.optim.SGD(spec, lr=0.1, momentum=0.9)
    return getattr(lib.optim, name)(spec, lr=0.1)


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _run(lib, make, steps=STEPS, opt_name="SGD", metrics=None):
    """get_last_lr() and the groups' momentum (or beta1) after construction and each step."""
    opt = _optimizer(lib, opt_name)
    sched = make(lib.optim.lr_scheduler, opt)
    lrs = [list(sched.get_last_lr())]
    moms = [_momenta(opt)]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        lrs.append(list(sched.get_last_lr()))
        moms.append(_momenta(opt))
    return lrs, moms, [g["lr"] for g in opt.param_groups]


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 10, 10, 20], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineAnnealingLR-long": lambda m, o: m.CosineAnnealingLR(o, T_max=40),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=12),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=6),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, lr_lambda=[lambda e: 1 / (e + 1),
                                                           lambda e: e % 4]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.97),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0),
    "OneCycleLR-cos": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=STEPS),
    "OneCycleLR-linear": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS,
                                                   anneal_strategy="linear"),
    "OneCycleLR-three-phase": lambda m, o: m.OneCycleLR(
        o, max_lr=0.8, epochs=3, steps_per_epoch=10, three_phase=True, pct_start=0.25,
        div_factor=10.0, final_div_factor=100.0),
    "OneCycleLR-no-momentum": lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=STEPS,
                                                        cycle_momentum=False),
    "CyclicLR-triangular": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                   step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                    step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5,
                                                  mode="exp_range", gamma=0.9),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.01),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.95)]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_learning_rates_match_torch(name):
    make = SCHEDULERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run(retrograd, make)
        ref = _run(torch, make)
    # the same float formulas in the same order: exactly equal
    assert ours == ref


def test_onecycle_with_adam_cycles_beta1():
    make = SCHEDULERS["OneCycleLR-cos"]
    ours = _run(retrograd, make, opt_name="Adam")
    ref = _run(torch, make, opt_name="Adam")
    assert ours == ref
    assert ours[1][0][0] == 0.95  # beta1 starts at max_momentum


def test_onecycle_too_many_steps():
    for lib in (retrograd, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                             "total steps is 3"):
            sched.step()


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7] + [0.7] * 19

    def make(m, o):
        return m.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1, min_lr=0.01)

    ours = _run(retrograd, make, metrics=metrics)
    ref = _run(torch, make, metrics=metrics)
    assert ours == ref
    assert ours[0][-1][0] < 0.1

    def make_max(m, o):
        return m.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.05,
                                   patience=1)

    assert _run(retrograd, make_max, metrics=metrics) == _run(torch, make_max, metrics=metrics)


def test_closed_form_with_epoch_argument():
    for name in ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                 "PolynomialLR"):
        got = []
        for lib in (retrograd, torch):
            opt = _optimizer(lib)
            sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for epoch in (3, 8, 15):
                    opt.step()
                    sched.step(epoch)
            got.append(sched.get_last_lr())
        assert got[0] == got[1], name


def test_state_dict_round_trip():
    opt = _optimizer(retrograd)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd
    assert sd["last_epoch"] == 4

    opt2 = _optimizer(retrograd)
    opt2.load_state_dict(opt.state_dict())
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(sd)
    for _ in range(5):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_state_dict_keys_match_torch(name):
    keys = []
    for lib in (retrograd, torch):
        opt = _optimizer(lib)
        keys.append(set(SCHEDULERS[name](lib.optim.lr_scheduler, opt).state_dict()))
    assert keys[0] == keys[1]


def test_initial_lr_and_base_lrs():
    opt = _optimizer(retrograd)
    sched = lr_scheduler.StepLR(opt, step_size=2)
    assert sched.base_lrs == [0.1, 0.2]
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    assert sched.last_epoch == 0
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                       "param_groups\\[0\\]"):
        lr_scheduler.StepLR(_optimizer(retrograd), step_size=2, last_epoch=3)


def test_scheduler_before_optimizer_warns():
    opt = _optimizer(retrograd)
    sched = lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                         "`optimizer.step\\(\\)`"):
        sched.step()


def test_get_lr_outside_step_warns():
    sched = lr_scheduler.ExponentialLR(_optimizer(retrograd), gamma=0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_errors_match_torch():
    cases = [
        ("LinearLR", {"start_factor": 0}, ValueError),
        ("LinearLR", {"end_factor": 2.0}, ValueError),
        ("ConstantLR", {"factor": 2.0}, ValueError),
        ("OneCycleLR", {"max_lr": 1.0}, ValueError),
        ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10, "pct_start": 1.5}, ValueError),
        ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10, "anneal_strategy": "x"}, ValueError),
        ("OneCycleLR", {"max_lr": [1.0], "total_steps": 10}, ValueError),
        ("CosineAnnealingWarmRestarts", {"T_0": 0}, ValueError),
        ("ReduceLROnPlateau", {"factor": 1.0}, ValueError),
        ("ReduceLROnPlateau", {"mode": "avg"}, ValueError),
        ("LambdaLR", {"lr_lambda": [lambda e: 1.0]}, ValueError),
    ]
    for name, kwargs, exc in cases:
        msgs = []
        for lib in (retrograd, torch):
            with pytest.raises(exc) as err:
                getattr(lib.optim.lr_scheduler, name)(_optimizer(lib), **kwargs)
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1], name
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        lr_scheduler.StepLR(3, step_size=1)


def test_onecycle_requires_momentum():
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(optim.Adagrad([retrograd.zeros(1, requires_grad=True)]),
                                max_lr=1.0, total_steps=10)


def test_cosine_annealing_reaches_eta_min():
    opt = _optimizer(retrograd, groups=1)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    for _ in range(10):
        opt.step()
        sched.step()
    assert math.isclose(sched.get_last_lr()[0], 0.01, rel_tol=1e-12)
