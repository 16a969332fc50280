"""retrograd.utils.benchmark.Timer: run counts, Measurement statistics and repr (no timing
assertions: a counter in the statement's globals tells how often it ran)."""

import numpy as np

from retrograd.utils.benchmark import Measurement, TaskSpec, Timer


def test_timeit_runs_the_statement_and_reports_per_run_time():
    box = {"n": 0}
    t = Timer("box['n'] += 1", globals={"box": box}, label="count", description="ints")
    m = t.timeit(500)
    assert isinstance(m, Measurement)
    assert box["n"] == 500 + 5  # the measured runs plus one warm-up block
    assert m.number_per_run == 500 and len(m.raw_times) == 1
    assert m.times == [m.raw_times[0] / 500]
    assert m.mean == m.median == m.times[0] and m.iqr == 0.0
    text = repr(m).splitlines()
    assert text[1:3] == ["count", "ints"]
    assert text[4] == "  1 measurement, 500 runs , 1 thread"
    assert text[3].split()[-1] in ("ns", "us", "ms", "s")


def test_setup_runs_before_the_statement():
    t = Timer("acc.append(x)", setup="x = 7; acc = []")
    m = t.timeit(3)
    assert m.number_per_run == 3
    assert "setup: x = 7; acc = []" in repr(m)


def test_blocked_autorange_collects_blocks_until_min_run_time():
    calls = []
    box = {"n": 0}
    t = Timer("box['n'] += 1", globals={"box": box})
    m = t.blocked_autorange(callback=lambda number, seconds: calls.append((number, seconds)),
                            min_run_time=0.02)
    assert len(m.raw_times) == len(calls) >= 1
    assert [c[1] for c in calls] == m.raw_times
    assert all(c[0] == m.number_per_run for c in calls)
    assert sum(m.raw_times) >= 0.02
    np.testing.assert_allclose(m.median, np.median(m.times))
    np.testing.assert_allclose(m.mean, np.mean(m.times))


def test_adaptive_autorange_stops_by_max_run_time():
    t = Timer("sum(range(50))")
    calls = []
    m = t.adaptive_autorange(threshold=0.0, max_run_time=0.05,  # never confident enough
                             callback=lambda number, seconds: calls.append(seconds))
    assert sum(m.raw_times) >= 0.05 and m.raw_times == calls
    assert sum(m.raw_times[:-1]) < 0.05  # it stopped at the first block past max_run_time
    q1, q3 = np.quantile(m.times, [0.25, 0.75])
    np.testing.assert_allclose(m.iqr, q3 - q1)


def test_measurement_summary_and_warning():
    spec = TaskSpec(stmt="f()", setup="pass", label="lbl", sub_label="sub")
    quiet = Measurement(10, [1e-3, 1e-3, 1e-3, 1e-3], spec)
    assert quiet.title == "lbl: sub" and not quiet.has_warnings and quiet.meets_confidence()
    lines = repr(quiet).splitlines()
    assert lines[1:] == ["lbl: sub", "  Median: 100.00 us", "  IQR:    0.00 us (100.00 to "
                         "100.00)", "  4 measurements, 10 runs per measurement, 1 thread"]
    noisy = Measurement(1, [1.0, 1.0, 2.0, 4.0], TaskSpec(stmt="g()", setup="pass"))
    assert noisy.has_warnings and "WARNING: Interquartile range is" in repr(noisy)
    assert repr(noisy).splitlines()[1] == "g()"
