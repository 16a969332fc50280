"""Every `NOTE [Name]` cited in the sources is defined somewhere in them.

A definition is a line that starts with the note's title (after `#` or a docstring's quotes),
alone or followed by a colon: the explanation follows it. Every other mention is a citation.
"""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "retrograd"
MENTION = re.compile(r"NOTE \[([^\]]+)\]")
DEFINITION = re.compile(r'^\s*(?:#\s*|[rb]?"""\s*)?NOTE \[([^\]]+)\](?::|\s*$)')


def _scan() -> tuple:
    defined, cited = {}, {}
    for path in sorted(SRC.rglob("*.py")):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(SRC.parent)}:{lineno}"
            d = DEFINITION.match(line)
            if d:
                defined.setdefault(d.group(1), where)
                continue
            for name in MENTION.findall(line):
                cited.setdefault(name, []).append(where)
    return defined, cited


def test_every_cited_note_is_defined():
    defined, cited = _scan()
    dangling = {name: places for name, places in cited.items() if name not in defined}
    assert not dangling, "\n".join(f"NOTE [{n}] cited at {', '.join(p)} but never defined"
                                   for n, p in sorted(dangling.items()))


def test_the_scan_sees_notes():
    defined, cited = _scan()
    assert "Formulas" in defined and "Array formulas" in cited
    assert DEFINITION.match("    # NOTE [Saved order]: values are saved")
    assert not DEFINITION.match("    post (NOTE [Hook order]).")
