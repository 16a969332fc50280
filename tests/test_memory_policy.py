"""NOTE [Retaining freed memory]: retrograd keeps glibc from handing freed array memory back to
the OS between steps (and leaves it alone when told to)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from retrograd._memory import retain_freed_memory

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# a step's pattern: several large arrays made, used and freed, over and over; prints the page
# faults the repeats cost after a warm-up
_STEPS = """
import resource, numpy as np, retrograd
def step():
    arrays = [np.ones(1 << 20, np.float32) for _ in range(6)]
    return sum(float(a[0]) for a in arrays)
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(retain: str) -> int:
    env = dict(os.environ, RETROGRAD_RETAIN_FREED_MEMORY=retain)
    out = subprocess.run([sys.executable, "-c", _STEPS], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


def test_opt_out_leaves_malloc_alone(monkeypatch):
    monkeypatch.setenv("RETROGRAD_RETAIN_FREED_MEMORY", "0")
    assert retain_freed_memory() is False


@pytest.mark.skipif(not GLIBC, reason="the policy is glibc's mallopt")
def test_policy_is_accepted_by_glibc(monkeypatch):
    monkeypatch.delenv("RETROGRAD_RETAIN_FREED_MEMORY", raising=False)
    assert retain_freed_memory() is True


@pytest.mark.skipif(not GLIBC, reason="the policy is glibc's mallopt")
def test_repeated_steps_reuse_memory_instead_of_faulting_it_in_again():
    # 20 steps of six 4 MiB arrays: with glibc's defaults the freed memory goes back to the OS
    # and every step faults ~6,000 pages in again; retained, the steps reuse it
    default = _faults("0")
    retained = _faults("1")
    assert default > 20 * 1000
    assert retained < 200
