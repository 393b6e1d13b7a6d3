"""The generated files are current: the types match openapi/openapi.json, the
blocking client matches the asyncio one, and the docs show the example bot
exactly as the tests run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # clients/python
REPO = HERE.parent.parent


def run_tool(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HERE / "tools" / name), "--check"], capture_output=True, text=True)


def test_types_match_the_openapi_document() -> None:
    result = run_tool("gen_types.py")
    assert result.returncode == 0, result.stderr


def test_the_sync_client_is_generated_from_the_async_one() -> None:
    result = run_tool("gen_sync.py")
    assert result.returncode == 0, result.stderr


def test_the_guide_shows_the_example_bot_verbatim() -> None:
    guide = (REPO / "docs" / "sdk" / "python.md").read_text()
    bot = (HERE / "examples" / "bot.py").read_text()
    assert f"```python\n{bot}```" in guide
