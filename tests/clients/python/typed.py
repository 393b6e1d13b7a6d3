"""Every move of every kind, and every kind's options with their defaults left
out, built with the classes openapi-python-client generates from the
ludotheque OpenAPI document.

tests/clients.rs generates the client as the package `ludo_client`, then:

1. runs `mypy --strict` over this file: a move the document's unions do not
   reach (a Battle 13 `pass` once was not), a tag the caller must repeat
   (`type_="pass"`), an option the types make required although the server
   has a default, or an open set where the server has a closed one is a
   type error here;
2. runs it: each request body must serialize to exactly the JSON the API
   guide gives for it. It prints `built <schema>` for each move schema built,
   which the test compares with the document's moves, so a move added to a
   game and not here fails the test.

Import and verify take an export as bytes (`File`): built here too.
"""

from __future__ import annotations

import io
import json
from typing import Any

from ludo_client.api.games import create_game, submit_move
from ludo_client.api.records import import_game, verify_export
from ludo_client.models.battle_13_bid_card_family import Battle13BidCardFamily
from ludo_client.models.battle_13_bid_card_tournaments import Battle13BidCardTournaments
from ludo_client.models.battle_13_bid_card_weapons import Battle13BidCardWeapons
from ludo_client.models.battle_13_create_game import Battle13CreateGame
from ludo_client.models.battle_13_family import Battle13Family
from ludo_client.models.battle_13_family_card import Battle13FamilyCard
from ludo_client.models.battle_13_knight import Battle13Knight
from ludo_client.models.battle_13_move_bid import Battle13MoveBid
from ludo_client.models.battle_13_move_chaos import Battle13MoveChaos
from ludo_client.models.battle_13_move_choose_family import Battle13MoveChooseFamily
from ludo_client.models.battle_13_move_decline_chaos import Battle13MoveDeclineChaos
from ludo_client.models.battle_13_move_pass import Battle13MovePass
from ludo_client.models.battle_13_move_play import Battle13MovePlay
from ludo_client.models.battle_13_options_request import Battle13OptionsRequest
from ludo_client.models.battle_13_options_request_target_crowns import Battle13OptionsRequestTargetCrowns
from ludo_client.models.bot_level import BotLevel
from ludo_client.models.bot_player import BotPlayer
from ludo_client.models.bot_request import BotRequest
from ludo_client.models.cardinal_create_game import CardinalCreateGame
from ludo_client.models.cardinal_move_build import CardinalMoveBuild
from ludo_client.models.cardinal_move_keep_cardinal import CardinalMoveKeepCardinal
from ludo_client.models.cardinal_move_move_cardinal import CardinalMoveMoveCardinal
from ludo_client.models.cardinal_options_request import CardinalOptionsRequest
from ludo_client.models.cardinal_orientation import CardinalOrientation
from ludo_client.models.cardinal_shape import CardinalShape
from ludo_client.models.kardinal_card_kind import KardinalCardKind
from ludo_client.models.kardinal_country import KardinalCountry
from ludo_client.models.kardinal_create_game import KardinalCreateGame
from ludo_client.models.kardinal_move_draw_deck import KardinalMoveDrawDeck
from ludo_client.models.kardinal_move_exchange import KardinalMoveExchange
from ludo_client.models.kardinal_move_pass import KardinalMovePass
from ludo_client.models.kardinal_move_place import KardinalMovePlace
from ludo_client.models.kardinal_move_take_display import KardinalMoveTakeDisplay
from ludo_client.models.kardinal_options_request import KardinalOptionsRequest
from ludo_client.models.kardinal_piece import KardinalPiece
from ludo_client.models.kardinal_placement import KardinalPlacement
from ludo_client.models.kardinal_source import KardinalSource
from ludo_client.models.kardinal_variant import KardinalVariant
from ludo_client.models.submit_move import SubmitMove
from ludo_client.types import File

Move = (
    CardinalMoveBuild
    | CardinalMoveMoveCardinal
    | CardinalMoveKeepCardinal
    | KardinalMovePlace
    | KardinalMoveDrawDeck
    | KardinalMoveTakeDisplay
    | KardinalMoveExchange
    | KardinalMovePass
    | Battle13MoveBid
    | Battle13MovePass
    | Battle13MoveChooseFamily
    | Battle13MoveChaos
    | Battle13MoveDeclineChaos
    | Battle13MovePlay
)

# (the document's schema, the move built with no tag given, its JSON)
MOVES: list[tuple[str, Move, dict[str, Any]]] = [
    (
        "cardinal.Move.Build",
        CardinalMoveBuild(shape=CardinalShape.TOWER, colour=1, x=3, y=4, orientation=CardinalOrientation.VERTICAL),
        {"type": "build", "shape": "tower", "colour": 1, "x": 3, "y": 4, "orientation": "vertical"},
    ),
    ("cardinal.Move.MoveCardinal", CardinalMoveMoveCardinal(x=5, y=6), {"type": "move_cardinal", "x": 5, "y": 6}),
    ("cardinal.Move.KeepCardinal", CardinalMoveKeepCardinal(), {"type": "keep_cardinal"}),
    (
        "kardinal.Move.Place",
        KardinalMovePlace(
            pieces=[
                KardinalPlacement(
                    piece=KardinalPiece.COUNSELLOR,
                    country=KardinalCountry.FRANCE,
                    paid_with=[KardinalCardKind.FRANCE, KardinalCardKind.FRANCE],
                )
            ]
        ),
        {"type": "place", "pieces": [{"piece": "counsellor", "country": "france", "paid_with": ["france", "france"]}]},
    ),
    ("kardinal.Move.DrawDeck", KardinalMoveDrawDeck(), {"type": "draw_deck"}),
    ("kardinal.Move.TakeDisplay", KardinalMoveTakeDisplay(slot=2), {"type": "take_display", "slot": 2}),
    (
        "kardinal.Move.Exchange",
        KardinalMoveExchange(discard=KardinalCardKind.ENGLAND_SWABIA, take=KardinalSource.DECK),
        {"type": "exchange", "discard": "england_swabia", "take": "deck"},
    ),
    ("kardinal.Move.Pass", KardinalMovePass(), {"type": "pass"}),
    ("battle13.Move.Bid", Battle13MoveBid(card=Battle13BidCardWeapons(value=3)), {"type": "bid", "card": {"kind": "weapons", "value": 3}}),
    ("battle13.Move.Pass", Battle13MovePass(), {"type": "pass"}),
    (
        "battle13.Move.ChooseFamily",
        Battle13MoveChooseFamily(family=Battle13FamilyCard.NEUTRAL),
        {"type": "choose_family", "family": "neutral"},
    ),
    ("battle13.Move.Chaos", Battle13MoveChaos(), {"type": "chaos"}),
    ("battle13.Move.DeclineChaos", Battle13MoveDeclineChaos(), {"type": "decline_chaos"}),
    (
        "battle13.Move.Play",
        Battle13MovePlay(knight=Battle13Knight(family=Battle13Family.EAGLE, strength=7)),
        {"type": "play", "knight": {"family": "eagle", "strength": 7}},
    ),
]

# Bids of the other two kinds of card (a bid's card is itself a tagged union).
BIDS: list[tuple[Battle13MoveBid, dict[str, Any]]] = [
    (Battle13MoveBid(card=Battle13BidCardTournaments(value=2)), {"type": "bid", "card": {"kind": "tournaments", "value": 2}}),
    (
        Battle13MoveBid(card=Battle13BidCardFamily(family=Battle13FamilyCard.DRAGON)),
        {"type": "bid", "card": {"kind": "family", "family": "dragon"}},
    ),
]

# Each kind's creation, every option left out but one, and the kind's tag too.
CREATIONS: list[tuple[CardinalCreateGame | KardinalCreateGame | Battle13CreateGame, dict[str, Any]]] = [
    (
        CardinalCreateGame(players=["Ann", "Bob"], options=CardinalOptionsRequest(first_seat=1)),
        {"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 1}},
    ),
    (
        KardinalCreateGame(players=["Ann", "Bob", None], options=KardinalOptionsRequest(variant=KardinalVariant.DYNAMIC)),
        {"kind": "kardinal", "players": ["Ann", "Bob", None], "options": {"variant": "dynamic"}},
    ),
    (
        Battle13CreateGame(
            players=["Ann", BotPlayer(name="Bot", bot=BotRequest(level=BotLevel.RANDOM)), "Cid", "Dee"],
            options=Battle13OptionsRequest(target_crowns=Battle13OptionsRequestTargetCrowns.VALUE_50),
        ),
        {
            "kind": "battle13",
            "players": ["Ann", {"name": "Bot", "bot": {"level": "random"}}, "Cid", "Dee"],
            "options": {"target_crowns": 50},
        },
    ),
    (CardinalCreateGame(players=["Ann", "Bob"], options=CardinalOptionsRequest()), {"kind": "cardinal", "players": ["Ann", "Bob"], "options": {}}),
    (KardinalCreateGame(players=["Ann", "Bob", "Cid"]), {"kind": "kardinal", "players": ["Ann", "Bob", "Cid"]}),
    (Battle13CreateGame(players=["Ann", "Bob", "Cid", "Dee"], options=Battle13OptionsRequest()), {"kind": "battle13", "players": ["Ann", "Bob", "Cid", "Dee"], "options": {}}),
]


def same(what: str, got: dict[str, Any], want: dict[str, Any], failures: list[str]) -> None:
    if got != want:
        failures.append(f"{what}: {json.dumps(got, sort_keys=True)} != {json.dumps(want, sort_keys=True)}")


def main() -> int:
    failures: list[str] = []
    for schema, move, want in MOVES:
        same(schema, move.to_dict(), want, failures)
        body = SubmitMove(move=move, expected_version=7, request_id="r-1")
        same(f"{schema} submitted", body.to_dict(), {"move": want, "expected_version": 7, "request_id": "r-1"}, failures)
        # The endpoint's own function takes it: the request it would send.
        kwargs = submit_move._get_kwargs(id="g", body=body)
        same(f"{schema} as sent", kwargs["json"], body.to_dict(), failures)
        print(f"built {schema}")
    for bid, want in BIDS:
        same("a bid", bid.to_dict(), want, failures)
    for creation, want in CREATIONS:
        same("a creation", creation.to_dict(), want, failures)
        same("a creation as sent", create_game._get_kwargs(body=creation)["json"], want, failures)
    export = b'{"header":1}\n{"seq":0}\n'
    for endpoint in (verify_export, import_game):
        sent = endpoint._get_kwargs(body=File(payload=io.BytesIO(export), mime_type="application/x-ndjson"))
        content = sent.get("content")
        if (content.read() if isinstance(content, io.BytesIO) else content) != export:
            failures.append(f"{endpoint.__name__}: the export is not sent as its bytes: {sent!r}")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
