"""Refusals, versions, idempotency, seats people join and leave, resigning,
bots and autopilot, reads of the record and the transparency log: each
against the real server."""

from __future__ import annotations

import time

import pytest

from ludotheque import Client, Problem
from ludotheque.cardinal import KeepCardinalMove
from ludotheque.types import GameState

KEEP: KeepCardinalMove = {"type": "keep_cardinal"}


def wait_until_over(client: Client, game_id: str, seconds: float = 30) -> GameState:
    """Server bots play on their own: read until the game ends, within a bound."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        game = client.get_game(game_id)
        if game["status"]["state"] == "finished":
            return game
        time.sleep(0.05)
    raise AssertionError(f"game {game_id} still running after {seconds} s")


def test_the_server_and_its_kinds(client: Client) -> None:
    assert client.health()["status"] == "ok"
    assert client.ready()["status"] == "ready"
    assert "# EOF" in client.metrics()
    kinds = {k["kind"]: k for k in client.kinds()["kinds"]}
    assert set(kinds) == {"cardinal", "kardinal", "battle13"}
    battle13 = kinds["battle13"]
    assert battle13["kind"] == "battle13" and battle13["min_players"] == battle13["max_players"] == 4
    assert battle13["default_options"].get("target_crowns") == 20


def test_a_refused_move_is_a_typed_problem(client: Client) -> None:
    game = client.create_game("cardinal", ["Ann", "Bob"], options={"first_seat": 0})
    ann, bob = (seat["token"] for seat in game["seats"])
    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], KEEP, token=ann)  # CA-10: build first
    problem = raised.value
    assert (problem.status, problem.code, problem.rule) == (422, "rule_violation", "CA-10")
    assert problem.body["type"] == "urn:ludotheque:problem:rule_violation" and "CA-10" in problem.detail

    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], KEEP, token=bob)
    assert raised.value.code == "not_your_turn" and raised.value.to_move == [0]

    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], {"type": "build", "shape": "hut", "colour": 0, "x": 0, "y": 0}, token=ann)  # type: ignore[typeddict-item]
    assert raised.value.code == "invalid_input" and raised.value.field is not None

    with pytest.raises(Problem) as raised:
        client.get_game("no-such-game")
    assert (raised.value.status, raised.value.code) == (404, "not_found")


def test_expected_version_and_request_id(client: Client) -> None:
    game = client.create_game("cardinal", ["Ann", "Bob"], options={"first_seat": 0})
    ann = game["seats"][0]["token"]
    legal = client.legal_moves(game["id"], token=ann)
    assert legal["kind"] == "cardinal" and legal["version"] == 0 and legal["seat"] == 0
    build = legal["moves"][0]
    assert build["type"] == "build"

    first = client.submit_move(game["id"], build, token=ann, expected_version=0, request_id="ann-1")
    assert first["version"] == 1 and "view" in first
    # The same request again: the first answer, nothing appended.
    again = client.submit_move(game["id"], build, token=ann, expected_version=0, request_id="ann-1")
    assert again["version"] == 1 and client.get_game(game["id"])["version"] == 1
    # The same id with another move is refused.
    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], legal["moves"][1], token=ann, request_id="ann-1")
    assert raised.value.code == "request_id_reused"
    # A stale expected_version is refused, naming the current one.
    follow_up = client.legal_moves(game["id"], token=ann)["moves"][0]
    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], follow_up, token=ann, expected_version=0)
    assert (raised.value.code, raised.value.current_version, raised.value.expected_version) == ("version_conflict", 1, 0)
    # A minimal answer leaves the view out.
    minimal = client.submit_move(game["id"], follow_up, token=ann, expected_version=1, minimal=True)
    assert minimal["version"] == 2 and "view" not in minimal and minimal["kind"] == "cardinal"


def test_open_seats_join_and_leave(client: Client) -> None:
    game = client.create_game("kardinal", ["Ann", None, None], public=True)
    assert game["status"] == {"state": "waiting", "open_seats": [1, 2]}
    invitations = {inv["seat"]: inv for inv in game.get("invitations", [])}
    assert invitations[1]["open"] and "#" in invitations[1]["link"]

    lobby = client.list_games(open=True, kind="kardinal", limit=1000)
    assert game["id"] in [g["id"] for g in lobby["games"]]

    bea = client.join(game["id"], "Bea", invitation=invitations[1]["code"])
    assert (bea["seat"], bea["name"]) == (1, "Bea") and bea["status"] == {"state": "waiting", "open_seats": [2]}
    with pytest.raises(Problem) as raised:
        client.join(game["id"], "Bob", invitation=invitations[1]["code"])
    assert raised.value.code == "seat_taken" and raised.value.seat == 1
    assert client.legal_moves(game["id"], token=bea["token"])["moves"] == []
    with pytest.raises(Problem) as raised:
        client.submit_move(game["id"], {"type": "draw_deck"}, token=bea["token"])
    assert raised.value.code == "game_waiting" and raised.value.open_seats == [2]

    left = client.leave(game["id"], token=bea["token"])
    assert left["status"] == {"state": "waiting", "open_seats": [1, 2]}

    # A public game: join without an invitation, the lowest open seat first.
    cid = client.join(game["id"], "Cid")
    dee = client.join(game["id"], "Dee")
    assert (cid["seat"], dee["seat"]) == (1, 2)
    assert dee["status"]["state"] == "in_progress"
    with pytest.raises(Problem) as raised:
        client.leave(game["id"], token=cid["token"])
    assert raised.value.code == "game_started"
    seen = client.get_game(game["id"], token=cid["token"])
    assert seen["viewer_seat"] == 1 and [s.get("name") for s in seen["seats"]] == ["Ann", "Cid", "Dee"]
    types = [e["type"] for e in client.events(game["id"])["events"]]
    assert types == ["game_created", "seat_joined", "seat_left", "seat_joined", "seat_joined"]


def test_cancel_before_the_start(client: Client) -> None:
    game = client.create_game("cardinal", ["Ann", None])
    cancelled = client.cancel(game["id"], token=game["admin_token"])
    assert cancelled["status"] == {"state": "cancelled"}
    assert client.get_game(game["id"])["status"]["state"] == "cancelled"


def test_resigning_a_two_sided_game_ends_it(client: Client) -> None:
    game = client.create_game("cardinal", ["Ann", "Bob"])
    bob = game["seats"][1]["token"]
    over = client.resign(game["id"], token=bob)
    status = over["status"]
    assert status["state"] == "finished"
    assert status["result"]["winners"] == [0] and status.get("forfeits") == [{"seat": 1, "reason": "resigned"}]
    assert over.get("receipt") is not None
    with pytest.raises(Problem) as raised:
        client.resign(game["id"], token=bob)
    assert raised.value.code in ("game_finished", "seat_resigned")


def test_bot_seats_and_autopilot(client: Client) -> None:
    # The admin hands an open seat to a server bot, which takes it and starts the game.
    game = client.create_game("cardinal", ["Ann", None], options={"first_seat": 0})
    ann = game["seats"][0]["token"]
    handed = client.set_seat_bot(game["id"], 1, {"level": "random", "think_ms": 0}, name="Robo", token=game["admin_token"])
    assert handed["status"]["state"] == "in_progress"
    seats = client.get_game(game["id"])["seats"]
    assert seats[1].get("name") == "Robo" and seats[1].get("bot") == {"level": "random", "think_ms": 0}

    knowledge = client.seat_knowledge(game["id"], token=ann)
    assert knowledge["seat"] == 0 and knowledge["kind"] == "cardinal" and isinstance(knowledge["info"], dict)

    # Autopilot: a slow bot takes Ann's seat, and she takes it back at once.
    on = client.set_autopilot(game["id"], {"level": "greedy", "think_ms": 1_000}, token=ann)
    assert on["seat"] == 0 and on.get("bot") == {"level": "greedy", "think_ms": 1_000}
    off = client.clear_autopilot(game["id"], token=ann)
    assert off.get("bot") is None and off["version"] == on["version"] + 1
    # Then a quick one plays her seat, and the two bots finish the game.
    client.set_autopilot(game["id"], {"level": "greedy", "think_ms": 0}, token=ann)
    final = wait_until_over(client, game["id"])
    events = client.events(game["id"], limit=1000)["events"]
    # The bot took the open seat by joining it; autopilot on, off, on are hand-overs.
    assert [e["type"] for e in events[:5]] == ["game_created", "seat_joined", "seat_bot", "seat_bot", "seat_bot"]
    assert [e.get("handover") for e in events[2:5]] == [
        {"bot": {"level": "greedy", "think_ms": 1_000}},
        {"bot": None},
        {"bot": {"level": "greedy", "think_ms": 0}},
    ]
    marks = {mark["level"] for e in events if e["type"] == "move" and (mark := e.get("bot"))}
    assert marks == {"random", "greedy"}
    assert final["version"] == events[-1]["seq"]


def test_a_bot_leaves_an_open_seat_before_the_start(client: Client) -> None:
    game = client.create_game("kardinal", ["Ann", None, None])
    admin = game["admin_token"]
    taken = client.set_seat_bot(game["id"], 2, {"level": "strong"}, token=admin)
    assert taken["status"] == {"state": "waiting", "open_seats": [1]}
    freed = client.clear_seat_bot(game["id"], 2, token=admin)
    assert freed["status"] == {"state": "waiting", "open_seats": [1, 2]}
    with pytest.raises(Problem) as raised:
        client.set_seat_bot(game["id"], 0, {"level": "greedy"}, token=admin)
    assert raised.value.code == "forbidden", "a person's seat goes to a bot only by that person"


def test_the_record_and_the_transparency_log(client: Client) -> None:
    game = client.create_game("cardinal", ["Ann", "Bob"], options={"first_seat": 0})
    ann, bob = (seat["token"] for seat in game["seats"])
    for _ in range(4):  # two turns of Ann's: build, then keep or move the cardinal
        move = client.legal_moves(game["id"], token=ann)["moves"][0]
        client.submit_move(game["id"], move, token=ann)
        if client.get_game(game["id"])["status"].get("to_move") != [0]:
            break
    client.resign(game["id"], token=bob)
    final = client.get_game(game["id"])
    version = final["version"]

    page = client.events(game["id"], from_seq=1, limit=2)
    assert [e["seq"] for e in page["events"]] == [1, 2] and page.get("next_from") == 3
    assert page["version"] == version
    steps = client.steps(game["id"])
    assert [s["seq"] for s in steps["steps"]] == list(range(version + 1))
    assert all(s["lines"] for s in steps["steps"])
    at_start = client.replay(game["id"], 0)
    assert at_start["version"] == 0 and at_start["latest_version"] == version
    assert at_start["status"]["state"] == "in_progress"

    receipt = client.receipt(game["id"])
    assert final.get("receipt") == receipt and game["id"] in receipt["leaf"]
    log = client.log_info()
    tree = log.get("tree")
    assert tree is not None and tree["size"] > receipt["leaf_index"]
    assert client.log_key().strip() == log["key"] == receipt["key"]
    assert client.log_checkpoint().startswith(log["origin"] + "\n")
    proof = client.log_consistency(1, tree["size"])
    assert (proof["from"], proof["to"]) == (1, tree["size"])

    with pytest.raises(Problem) as raised:
        client.import_game(client.export(game["id"]), token="not-the-operator")
    assert raised.value.code in ("forbidden", "unauthorized", "game_exists")
