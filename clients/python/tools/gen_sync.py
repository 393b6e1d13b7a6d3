"""Writes the blocking client, src/ludotheque/_sync.py, from the asyncio one.

    python tools/gen_sync.py [--out DIR]   # write DIR/_sync.py (default src/ludotheque)

Both clients must offer the same calls with the same retry rules, so the
sync one is a word-for-word translation of _async.py (the technique of
httpcore's "unasync"), never edited by hand. _sync.py is never committed:
the package's build runs this tool (hatch_build.py), and install-tools.sh
runs it into src/ so that mypy can check a checkout.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "ludotheque"
SOURCE = PACKAGE / "_async.py"
TARGET = PACKAGE / "_sync.py"

# Whole words, applied in this order.
WORDS = [
    ("async def", "def"),
    ("async for", "for"),
    ("async with", "with"),
    ("await ", ""),
    ("AsyncIterator", "Iterator"),
    ("AsyncClient", "Client"),
    ("AsyncFeed", "Feed"),
    ("__aiter__", "__iter__"),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("aiter_lines", "iter_lines"),
    ("aread", "read"),
    ("aclose", "close"),
    ("asyncio.sleep", "time.sleep"),
    ("import asyncio", "import time"),
    ("an async iterator", "an iterator"),
    ("`async for update in feed`", "`for update in feed`"),
    ("for asyncio", "blocking"),
]

HEADER = '''"""The blocking client, generated from _async.py by tools/gen_sync.py: do not
edit; change _async.py and run the tool."""
'''


def translate(text: str) -> str:
    # Replace the module docstring, then every word.
    body = text.split('"""', 2)[2]
    for old, new in WORDS:
        start = r"\b" if re.match(r"\w", old[0]) else ""
        end = r"\b" if re.match(r"\w", old[-1]) else ""
        body = re.sub(start + re.escape(old) + end, new, body)
    return HEADER + body


def main(argv: list[str]) -> int:
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else PACKAGE
    out.mkdir(parents=True, exist_ok=True)
    (out / TARGET.name).write_text(translate(SOURCE.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
