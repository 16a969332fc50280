"""`python -m retrograd train ...` and the `retrograd` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: retrograd train [options]   (retrograd train --help for the options)")
        return 0 if argv else 2
    if argv[0] == "train":
        from retrograd.train.cli import main as train_main

        return train_main(argv[1:])
    print(f"retrograd: unknown command {argv[0]!r}; try 'retrograd train --help'",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
