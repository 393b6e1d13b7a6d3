"""Whole games of each kind, played by the example bot while a second client
follows them live; then exported and verified."""

from __future__ import annotations

from typing import Literal

import httpx
import pytest
from bot import play
from conftest import Background, CuttingTransport

from ludotheque import Client, Problem
from ludotheque.types import BotPlayer, CreatedGame, GameUpdate, PlayerSeat, StreamEnd

Kind = Literal["cardinal", "kardinal", "battle13"]


def server_bot(name: str) -> BotPlayer:
    # think_ms 0: the server bot moves at once, keeping the suite quick.
    return {"name": name, "bot": {"level": "random", "think_ms": 0}}


# Server bots fill some seats; the example bot plays every seat with a token.
TABLES: dict[Kind, list[PlayerSeat | None]] = {
    "cardinal": ["Ann", "Bob"],
    "kardinal": ["Ann", server_bot("Robo"), "Cid"],
    "battle13": ["Ann", server_bot("Robo"), "Cid", server_bot("Dee")],
}


def create(client: Client, kind: Kind) -> CreatedGame:
    if kind == "cardinal":
        return client.create_game("cardinal", TABLES[kind], options={"first_seat": 1})
    if kind == "kardinal":
        return client.create_game("kardinal", TABLES[kind], options={"variant": "standard"})
    return client.create_game("battle13", TABLES[kind], options={"target_crowns": 20})


def play_in_background(base_url: str, created: CreatedGame) -> Background[None]:
    """The example bot plays every seat the creator holds a token for."""
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}

    def run() -> None:
        with Client(base_url) as player:
            play(player, created["id"], tokens, seed=7)

    return Background(run)


@pytest.mark.parametrize("kind", ["cardinal", "kardinal", "battle13"])
def test_a_whole_game_followed_live_then_verified(client: Client, base_url: str, kind: Kind) -> None:
    created = create(client, kind)
    game_id = created["id"]
    assert created["kind"] == kind and created["version"] == 0
    # A second client follows from before the first move. Its network drops
    # its first three streams after a few chunks: the feed must resume with
    # Last-Event-ID, losing and repeating nothing.
    transport = CuttingTransport(chunks=5, times=3)
    with httpx.Client(transport=transport, timeout=30) as http:
        feed = Client(base_url, http=http).follow(game_id)
        follower = Background(lambda: [(update["kind"], update["event"]["seq"]) for update in feed])
        player = play_in_background(base_url, created)
        player.result()
        received = follower.result()
    assert {k for k, _ in received} == {kind}
    seen = [seq for _, seq in received]

    final = client.get_game(game_id)
    assert final["status"]["state"] == "finished"
    assert seen == list(range(final["version"] + 1)), "every version, once, in order"
    assert feed.connections == 4 and transport.cutter.streams == 4
    end: StreamEnd | None = feed.end
    assert end is not None and end["version"] == final["version"] and end["status"] == final["status"]

    # Kind-specific facts, reached through narrowing on `kind`.
    if final["kind"] == "battle13":
        assert final["options"].get("target_crowns") == 20
        assert max(final["view"]["crowns"]) >= 20
    elif final["kind"] == "kardinal":
        assert final["view"]["final_scoring"] is not None
    else:
        assert final["view"]["phase"] == "finished"

    # Export, then verify with the server: a finished game's bundle.
    export = client.export(game_id)
    header, *records = export.splitlines()
    assert len([r for r in records if '"revealed"' not in r]) >= final["version"] + 1
    report = client.verify(export)
    assert report["valid"] is True
    assert report["chain_intact"] and report["replayed"] and report["seed"] == "matches"
    assert report["records"] == final["version"] + 1
    assert report.get("kind") == kind
    receipt = report.get("receipt")
    assert receipt is not None and receipt["trusted"] and receipt["included"] and receipt["leaf_matches"]

    # A tampered export is caught.
    tampered = client.verify(export.replace('"seq":1,', '"seq":9,', 1))
    assert tampered["valid"] is False and tampered.get("fault") is not None


def test_resume_from_last_event_id_has_no_gap_and_no_repeat(client: Client, base_url: str) -> None:
    created = create(client, "cardinal")
    player = play_in_background(base_url, created)
    first: list[GameUpdate] = []
    feed = client.follow(created["id"])
    for update in feed:
        first.append(update)
        if len(first) == 5:
            break  # as if the process stopped here
    assert feed.last_event_id == "4"
    resumed = client.follow(created["id"], last_event_id=feed.last_event_id)
    rest = Background(lambda: [u["event"]["seq"] for u in resumed]).result()
    player.result()
    final = client.get_game(created["id"])["version"]
    assert [u["event"]["seq"] for u in first] + rest == list(range(final + 1))

    # Resuming a finished game that was sent in full: the server answers 204
    # and the feed ends at once, with nothing.
    done = client.follow(created["id"], last_event_id=str(final))
    assert list(done) == [] and done.end is None


def test_a_seat_follows_with_stream_tickets(client: Client) -> None:
    created = client.create_game("kardinal", ["Ann", "Bob", "Cid"])
    ann = created["seats"][0]["token"]
    ticket = client.stream_ticket(created["id"], token=ann)
    assert ticket["seat"] == 0 and ticket["expires_in_ms"] > 0

    feed = client.follow(created["id"], token=ann, use_ticket=True)
    updates = iter(feed)
    first = next(updates)
    assert first["kind"] == "kardinal"
    hands = [seat.get("hand") for seat in first["view"]["seats"]]
    assert hands[0] is not None and hands[1] is None and hands[2] is None, "the seat sees its own hand only"

    # Renewing the token revokes the seat's open stream: the feed raises it.
    client.reissue_token(created["id"], 0, token=ann)
    with pytest.raises(Problem) as raised:
        next(updates)
    assert raised.value.code == "seat_revoked" and raised.value.seat == 0
