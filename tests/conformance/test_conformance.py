"""PyTorch's own autograd tests on retrograd: no test the tracked list marks as passing may fail
(NOTE [Conformance runner] in runner.py)."""

import pytest

from tests.conformance import runner


def test_no_conformance_regression():
    directory = runner.tests_dir()
    if directory is None:
        pytest.skip(runner.HOW_TO_GET)
    tracked = runner.read_status()
    assert tracked, "status.tsv is missing: run python -m tests.conformance --update"
    # a generous per-test timeout: it still catches a hang, while the slowest tests (lobpcg
    # ~15 s, the logging-tensor jacobians ~8 s on a quiet machine) stay under it when the suite
    # shares two cores with other test processes
    ours = runner.run_backend("retrograd", directory, timeout=180.0)
    assert set(ours) == set(tracked), "the collected tests differ from the tracked list"
    bad = runner.regressions(tracked, ours)
    assert not bad, "tests that passed now fail:\n" + "\n".join(bad)


def test_tracked_list_is_consistent():
    """Every entry has a known status, and every non-passing counted test says why."""
    tracked = runner.read_status()
    for test_id, (status, reason) in tracked.items():
        assert status in ("pass", "todo", "scope", "deliberate", "uncounted"), test_id
        if status != "pass":
            assert reason, f"{test_id} is {status} without a reason"
