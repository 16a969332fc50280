"""python -m tests.conformance [--update] [-k TEXT] [--failures]

Runs PyTorch's autograd tests on retrograd and compares with the tracked list (status.tsv):
exit 1 if a test listed as passing fails. `--update` also runs the torch 2.13 control and
rewrites the list. NOTE [Conformance runner] in runner.py says how it works.
"""

from __future__ import annotations

import argparse
import sys

from tests.conformance import runner


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance")
    parser.add_argument("--update", action="store_true",
                        help="rewrite status.tsv (the control is taken from it unless "
                             "--rerun-control or it has none)")
    parser.add_argument("--rerun-control", action="store_true",
                        help="with --update: run the torch 2.13 control again")
    parser.add_argument("-k", dest="pattern", default=None, help="only tests whose id contains it")
    parser.add_argument("--failures", action="store_true", help="print every non-passing test")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)

    directory = runner.tests_dir()
    if directory is None:
        print(runner.HOW_TO_GET)
        return 0
    tracked = runner.read_status()
    only = None
    if args.pattern:
        only = [t for t in tracked if args.pattern in t] if tracked and not args.update else None
    ours = runner.run_backend("retrograd", directory, only, args.jobs, args.timeout)
    if args.pattern and only is None:
        ours = {t: r for t, r in ours.items() if args.pattern in t}
    if args.update:
        if args.rerun_control or not tracked:
            control = runner.run_backend("torch", directory, only, args.jobs, args.timeout)
        else:
            control = runner.control_from(tracked)
        entries = runner.classify_all(control, ours)
        if args.pattern:
            entries = {**tracked, **entries}
        runner.write_status(entries)
        tracked = entries
    if args.failures:
        for test_id in sorted(ours):
            status, reason = tracked.get(test_id, ("?", ""))
            if status not in ("pass", "uncounted"):
                print(f"{status:10} {test_id}  {reason}")
    counts = runner.score(tracked)
    passed = sum(1 for t, (s, _) in tracked.items() if s != "uncounted"
                 and ours.get(t, {}).get("status") in ("pass", "xfail"))
    print(f"retrograd passes {passed} of {counts['counted']} counted tests "
          f"(scope {counts['scope']}, deliberate {counts['deliberate']}, "
          f"todo {counts['todo']}; {counts['uncounted']} uncounted: they fail on torch 2.13)")
    bad = runner.regressions(tracked, ours) if not args.update else []
    for line in bad:
        print(f"REGRESSION {line}")
    fresh = runner.newly_passing(tracked, ours) if not args.update else []
    if fresh:
        print(f"{len(fresh)} tests now pass that the list does not mark so; run --update")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
