"""Building, checking and timing schedules.

NOTE [Schedule generation]
Every schedule is produced the same way: a list scheduler runs on a virtual clock (forward,
input-backward and weight-backward cost 1, a fused backward 2; a message arrives when its sender
finishes). Whenever a rank is free it takes, among the actions whose inputs are ready, the first
its policy allows:
  GPipe       every forward, then the backwards
  1F1B        backward first; forward only while fewer than `limit` microbatches are in flight
  zero bubble input-backward first; forward within the in-flight limit; else a pending weight
              pass (which fills what would be a bubble)
The in-flight limit is the memory bound of 1F1B (`num_stages - stage` for one stage per rank).
Communication actions are then inserted around the compute actions that cross ranks, the
result is checked for deadlock, and can be timed on the same virtual clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrograd.distributed.pipelining.schedules.actions import (
    COMPUTE,
    RECV_B,
    RECV_F,
    SEND_B,
    SEND_F,
    Action,
    B,
    F,
    I,
    W,
)

COSTS = {F: 1, I: 1, W: 1, B: 2}


@dataclass
class Layout:
    """Which rank holds which stage."""

    num_ranks: int
    num_stages: int
    style: str = "loop"  # "loop": stage s on rank s % p; "v": ranks 0..p-1 then back

    def rank_of(self, stage: int) -> int:
        p = self.num_ranks
        if self.style == "v":
            return stage if stage < p else 2 * p - 1 - stage
        return stage % p

    def stages_of(self, rank: int) -> list:
        return [s for s in range(self.num_stages) if self.rank_of(s) == rank]


def generate(layout: Layout, n_microbatches: int, policy: str, limits: dict | None = None) -> dict:
    """Per-rank compute orders for `policy` in ("gpipe", "1f1b", "zb")."""
    split = policy == "zb"
    S, m = layout.num_stages, n_microbatches
    finish: dict = {}  # action -> virtual finish time
    rank_free = [0] * layout.num_ranks
    orders: dict = {r: [] for r in range(layout.num_ranks)}
    in_flight = [0] * layout.num_ranks
    pending_w: dict = {r: [] for r in range(layout.num_ranks)}
    next_f = {s: 0 for s in range(S)}
    next_b = {s: 0 for s in range(S)}
    limits = limits or {}
    total = S * m * (3 if split else 2)
    done = 0
    t = 0
    while done < total:
        for r in range(layout.num_ranks):
            if rank_free[r] > t:
                continue
            act = _pick(layout, r, t, policy, split, finish, next_f, next_b, in_flight,
                        pending_w, limits.get(r, S), m)
            if act is None:
                continue
            cost = COSTS[act.computation_type]
            finish[act] = t + cost
            rank_free[r] = t + cost
            orders[r].append(act)
            done += 1
            kind = act.computation_type
            if kind is F:
                next_f[act.stage_index] += 1
                in_flight[r] += 1
            elif kind in (B, I):
                next_b[act.stage_index] += 1
                in_flight[r] -= 1
                if kind is I:
                    pending_w[r].append(Action(act.stage_index, W, act.microbatch_index))
            else:
                pending_w[r].remove(act)
        t += 1
        if t > 100 * total + 100:
            raise RuntimeError(f"schedule generation for {policy} did not converge")
    return orders


def _ready(dep: Action | None, t: int, finish: dict) -> bool:
    return dep is None or (dep in finish and finish[dep] <= t)


def _pick(layout: Layout, r: int, t: int, policy: str, split: bool, finish: dict,
          next_f: dict, next_b: dict, in_flight: list, pending_w: dict, limit: int,
          m: int) -> Action | None:
    S = layout.num_stages
    back = I if split else B
    backs, fwds = [], []
    for s in layout.stages_of(r):
        i = next_b[s]
        if i < m and i < next_f[s]:
            dep = None if s == S - 1 else _backward_of(s + 1, i, split, finish)
            if (s == S - 1 and _ready(Action(s, F, i), t, finish)) or (
                    dep is not None and _ready(dep, t, finish)):
                backs.append(Action(s, back, i))
        i = next_f[s]
        if i < m and (s == 0 or _ready(Action(s - 1, F, i), t, finish)):
            fwds.append(Action(s, F, i))
    # later stages' backwards first (they unblock the rest); earlier microbatches first
    backs.sort(key=lambda a: (a.microbatch_index, -a.stage_index))
    fwds.sort(key=lambda a: (a.microbatch_index, a.stage_index))
    if policy == "gpipe":
        local_forwards_left = any(next_f[s] < m for s in layout.stages_of(r))
        if fwds:
            return fwds[0]
        if backs and not local_forwards_left:
            return backs[0]
        return None
    if backs:
        return backs[0]
    if fwds and in_flight[r] < limit:
        return fwds[0]
    if split and pending_w[r]:
        return pending_w[r][0]
    return None


def _backward_of(stage: int, mb: int, split: bool, finish: dict) -> Action:
    return Action(stage, I if split else B, mb)


def add_communication(layout: Layout, orders: dict) -> dict:
    """Insert SEND/RECV actions around compute actions whose neighbour stage is elsewhere."""
    S = layout.num_stages
    out = {}
    for r, acts in orders.items():
        seq = []
        for a in acts:
            s, kind, i = a
            if kind is F and s > 0 and layout.rank_of(s - 1) != r:
                seq.append(Action(s, RECV_F, i))
            if kind in (B, I) and s < S - 1 and layout.rank_of(s + 1) != r:
                seq.append(Action(s, RECV_B, i))
            seq.append(a)
            if kind is F and s < S - 1 and layout.rank_of(s + 1) != r:
                seq.append(Action(s, SEND_F, i))
            if kind in (B, I) and s > 0 and layout.rank_of(s - 1) != r:
                seq.append(Action(s, SEND_B, i))
        out[r] = seq
    return out


class DeadlockError(RuntimeError):
    pass


def _message_key(a: Action) -> tuple:
    """(kind, sending stage, microbatch) of the message an action sends or waits for."""
    s, kind, i = a
    if kind is SEND_F:
        return ("F", s, i)
    if kind is RECV_F:
        return ("F", s - 1, i)
    if kind is SEND_B:
        return ("B", s, i)
    return ("B", s + 1, i)


def _local_ready(a: Action, done: set, received: set, layout: Layout) -> bool:
    s, kind, i = a
    S = layout.num_stages
    if kind is F:
        return s == 0 or Action(s - 1, F, i) in done or ("F", s - 1, i) in received
    if kind in (B, I):
        if Action(s, F, i) not in done:
            return False
        return s == S - 1 or Action(s + 1, B, i) in done or Action(s + 1, I, i) in done or \
            ("B", s + 1, i) in received
    if kind is W:
        return Action(s, I, i) in done
    if kind is SEND_F:
        return Action(s, F, i) in done
    if kind is SEND_B:
        return Action(s, B, i) in done or Action(s, I, i) in done
    return True


def simulate(layout: Layout, orders: dict, costs: dict | None = None) -> dict:
    """Run the per-rank action lists on a virtual clock; raise DeadlockError if they can't
    finish. Returns {"makespan", "finish" (per action), "peak_in_flight" (per rank)}."""
    costs = costs or COSTS
    pos = {r: 0 for r in orders}
    clock = {r: 0 for r in orders}
    done: set = set()
    sent: dict = {}  # message key -> sender's finish time
    received: set = set()
    finish: dict = {}
    in_flight = {r: 0 for r in orders}
    peak = {r: 0 for r in orders}
    last_compute_end = {r: 0 for r in orders}
    remaining = sum(len(v) for v in orders.values())
    while remaining:
        progressed = False
        for r, acts in orders.items():
            while pos[r] < len(acts):
                a = acts[pos[r]]
                if a is None:
                    pos[r] += 1
                    remaining -= 1
                    continue
                kind = a.computation_type
                if kind in (RECV_F, RECV_B):
                    key = _message_key(a)
                    if key not in sent:
                        break
                    clock[r] = max(clock[r], sent[key])
                    received.add(key)
                elif kind in (SEND_F, SEND_B):
                    if not _local_ready(a, done, received, layout):
                        raise RuntimeError(f"rank {r}: {a} before the compute it sends")
                    sent[_message_key(a)] = last_compute_end[r]
                else:
                    if not _local_ready(a, done, received, layout):
                        if _waits_on_other_rank(a, layout, r):
                            break
                        raise RuntimeError(f"rank {r}: {a} runs before its inputs are ready")
                    start = clock[r]
                    start = max(start, _local_dep_time(a, finish, layout, r))
                    clock[r] = start + costs[kind]
                    last_compute_end[r] = clock[r]
                    finish[a] = clock[r]
                    if kind is F:
                        in_flight[r] += 1
                        peak[r] = max(peak[r], in_flight[r])
                    elif kind in (B, I):
                        in_flight[r] -= 1
                done.add(a)
                pos[r] += 1
                remaining -= 1
                progressed = True
        if not progressed and remaining:
            stuck = {r: str(orders[r][pos[r]]) for r in orders if pos[r] < len(orders[r])}
            raise DeadlockError(f"schedule deadlocks: ranks wait on {stuck}")
    return {"makespan": max(clock.values(), default=0), "finish": finish,
            "peak_in_flight": peak}


def _waits_on_other_rank(a: Action, layout: Layout, r: int) -> bool:
    s, kind, i = a
    if kind is F:
        return s > 0 and layout.rank_of(s - 1) == r  # same-rank producer not run yet
    if kind in (B, I):
        return s < layout.num_stages - 1 and layout.rank_of(s + 1) == r
    return False


def _local_dep_time(a: Action, finish: dict, layout: Layout, r: int) -> int:
    """When a same-rank dependency finished (different-rank ones arrive through RECV)."""
    s, kind, i = a
    deps = []
    if kind is F and s > 0 and layout.rank_of(s - 1) == r:
        deps.append(Action(s - 1, F, i))
    if kind in (B, I):
        deps.append(Action(s, F, i))
        if s < layout.num_stages - 1 and layout.rank_of(s + 1) == r:
            deps += [Action(s + 1, B, i), Action(s + 1, I, i)]
    if kind is W:
        deps.append(Action(s, I, i))
    return max((finish[d] for d in deps if d in finish), default=0)


def check_order(orders: dict) -> None:
    """Every W(i) after I(i) on its rank, each compute action exactly once."""
    seen = set()
    for r, acts in orders.items():
        done = set()
        for a in acts:
            if a is None:
                continue
            if a.computation_type is W and Action(a.stage_index, I, a.microbatch_index) \
                    not in done:
                raise RuntimeError(f"rank {r}: {a} runs before its input pass")
            if a.computation_type in COMPUTE:
                if a in seen:
                    raise RuntimeError(f"{a} scheduled twice")
                seen.add(a)
            done.add(a)
