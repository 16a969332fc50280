"""Policy-gradient programs in the style of the REINFORCE and actor-critic examples, trained on
torch and retrograd from the same weights, and the distributions they use (Categorical, Normal,
Bernoulli) against torch's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import both
from tests.programs.program_harness import assert_close, run_both

pytest.importorskip("torch")


class _Corridor:
    """A deterministic walk: action 1 moves right; the episode ends at either wall."""

    def __init__(self):
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        return np.array([self.pos / 3, 1.0, (self.pos % 2) - 0.5, 0.2], dtype=np.float64)

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        done = abs(self.pos) >= 3
        return self._obs(), (1.0 if self.pos > 0 else 0.1), done


@pytest.mark.parametrize("critic", [False, True])
def test_policy_gradient_trains_like_torch(critic):
    uniforms = np.random.default_rng(0).random(200)

    def run(lib, sync):
        nn, F = lib.nn, lib.nn.functional
        Categorical = lib.distributions.Categorical

        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.Linear(4, 16)
                self.action = nn.Linear(16, 2)
                self.value = nn.Linear(16, 1)

            def forward(self, x):
                h = F.relu(self.hidden(x))
                return F.softmax(self.action(h), dim=-1), self.value(h)

        policy = sync(Policy().double())
        opt = lib.optim.Adam(policy.parameters(), lr=3e-2)
        eps = np.finfo(np.float32).eps.item()
        env = _Corridor()
        draws = iter(uniforms)
        log = []
        for _ in range(4):
            state = env.reset()
            saved, rewards = [], []
            for _ in range(12):
                probs, value = policy(lib.from_numpy(state))
                dist = Categorical(probs)
                drawn = dist.sample()
                assert drawn.shape == () and 0 <= drawn.item() < 2
                # the same draw on both libraries: inverse CDF of a shared uniform
                action = lib.tensor(int(next(draws) > probs[0].item()))
                saved.append((dist.log_prob(action), value, dist.entropy()))
                state, reward, done = env.step(action.item())
                rewards.append(reward)
                if done:
                    break
            ret, returns = 0.0, []
            for r in rewards[::-1]:
                ret = r + 0.9 * ret
                returns.insert(0, ret)
            returns = lib.tensor(returns, dtype=lib.double)
            returns = (returns - returns.mean()) / (returns.std() + eps)
            policy_losses, value_losses = [], []
            for (log_prob, value, _), R in zip(saved, returns):
                if critic:
                    policy_losses.append(-log_prob * (R - value.item()))
                    value_losses.append(F.smooth_l1_loss(value, lib.tensor([R])))
                else:
                    policy_losses.append(-log_prob * R)
            opt.zero_grad()
            loss = lib.stack(policy_losses).sum()
            if critic:
                loss = loss + lib.stack(value_losses).sum()
            loss.backward()
            opt.step()
            log.append((loss.item(), len(rewards), sum(e.item() for _, _, e in saved)))
        return {"log": log, "state": policy.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_distributions_match_torch():
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    logits = np.array([0.5, -1.0, 2.0, 0.0])

    def program(lib):
        D = lib.distributions
        probs = lib.tensor(p, requires_grad=True)
        cat = D.Categorical(probs)
        lp = cat.log_prob(lib.tensor([2, 0]))
        ent = cat.entropy()
        (lp.sum() + ent.sum()).backward()
        lg = lib.tensor(logits, requires_grad=True)
        cat2 = D.Categorical(logits=lg)
        lp2 = cat2.log_prob(lib.tensor([[1], [3]]))  # broadcasts against the batch
        (lp2.sum() + cat2.entropy()).backward()
        loc = lib.tensor([0.0, 1.0], requires_grad=True)
        scale = lib.tensor([1.0, 2.0], requires_grad=True)
        normal = D.Normal(loc, scale)
        nlp = normal.log_prob(lib.tensor([0.5, -0.5]))
        (nlp.sum() + normal.entropy().sum()).backward()
        bern = D.Bernoulli(lib.tensor([0.3, 0.9], dtype=lib.double))
        blp = bern.log_prob(lib.tensor([1.0, 0.0], dtype=lib.double))
        shapes = [tuple(cat.sample().shape), tuple(cat.sample((4,)).shape),
                  tuple(normal.sample((3,)).shape), tuple(normal.rsample().shape),
                  tuple(bern.sample((2,)).shape), tuple(cat.batch_shape), tuple(cat.event_shape)]
        return {"lp": lp, "ent": ent, "gp": probs.grad, "lp2": lp2, "gl": lg.grad,
                "probs2": cat2.probs, "nlp": nlp, "gloc": loc.grad, "gscale": scale.grad,
                "moments": [normal.mean, normal.stddev, normal.variance, bern.mean,
                            bern.variance], "blp": blp, "bent": bern.entropy(),
                "blogits": bern.logits, "shapes": shapes,
                "nodes": [type(lp.grad_fn).__name__, type(cat.entropy().grad_fn).__name__],
                "rsample_grad": normal.rsample().requires_grad,
                "sample_grad": normal.sample().requires_grad,
                "repr": [repr(D.Categorical(logits=lib.zeros(2, 3))), repr(normal),
                         repr(D.Bernoulli(lib.tensor([0.5])))]}

    both(program)


def test_categorical_samples_follow_probs():
    import retrograd

    retrograd.manual_seed(0)
    dist = retrograd.distributions.Categorical(retrograd.tensor([0.1, 0.0, 0.9]))
    counts = np.bincount(dist.sample((2000,)).numpy(), minlength=3)
    assert counts[1] == 0 and 1700 < counts[2] < 1900
