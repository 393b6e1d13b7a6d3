"""The installed package is complete: the build generated every module the
repository does not commit, it ships py.typed, and every OpenAPI operation
has a method in both clients; the docs show the example bot exactly as the
tests run it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # clients/python
REPO = HERE.parent.parent

# Written at build time by hatch_build.py, never committed.
GENERATED = ("types", "cardinal", "kardinal", "battle13", "_sync")


def test_the_installed_package_has_every_generated_module() -> None:
    import ludotheque

    installed = Path(ludotheque.__path__[0])
    # The tests run against the installed wheel, not the checkout's src/.
    assert HERE / "src" not in installed.parents, installed
    assert (installed / "py.typed").is_file()
    for name in GENERATED:
        assert (installed / f"{name}.py").is_file(), name
        module = importlib.import_module(f"ludotheque.{name}")
        assert "generated" in (module.__doc__ or "").lower(), name


def test_the_guide_shows_the_example_bot_verbatim() -> None:
    guide = (REPO / "docs" / "sdk" / "python.md").read_text()
    bot = (HERE / "examples" / "bot.py").read_text()
    assert f"```python\n{bot}```" in guide


# Each operation of the OpenAPI document, and the method that calls it.
METHODS = {
    "log_key": "log_key",
    "health": "health",
    "metrics": "metrics",
    "ready": "ready",
    "list_games": "list_games",
    "create_game": "create_game",
    "import_game": "import_game",
    "get_game": "get_game",
    "hand_to_bot": "set_autopilot",
    "take_back_from_bot": "clear_autopilot",
    "cancel_game": "cancel",
    "list_events": "events",
    "export_game": "export",
    "seat_knowledge": "seat_knowledge",
    "join_game": "join",
    "leave_game": "leave",
    "legal_moves": "legal_moves",
    "submit_move": "submit_move",
    "game_receipt": "receipt",
    "replay": "replay",
    "resign": "resign",
    "set_seat_bot": "set_seat_bot",
    "clear_seat_bot": "clear_seat_bot",
    "reissue_token": "reissue_token",
    "list_steps": "steps",
    "stream_game": "follow",
    "stream_ticket": "stream_ticket",
    "list_kinds": "kinds",
    "log_info": "log_info",
    "log_checkpoint": "log_checkpoint",
    "log_consistency": "log_consistency",
    "verify_export": "verify",
}


def test_every_operation_has_a_method_in_both_clients() -> None:
    from ludotheque import AsyncClient, Client

    document = json.loads((REPO / "openapi" / "openapi.json").read_text())
    operations = {op["operationId"] for item in document["paths"].values() for op in item.values() if "operationId" in op}
    assert operations == set(METHODS)
    for method in METHODS.values():
        assert callable(getattr(Client, method)) and callable(getattr(AsyncClient, method)), method
