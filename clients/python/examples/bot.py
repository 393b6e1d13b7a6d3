"""A bot that plays any ludotheque game: a random legal move for each of its seats, whenever the game's stream says one is to move."""

import random

from ludotheque import Client, Problem


def play(client: Client, game_id: str, tokens: dict[int, str], seed: int = 0) -> None:
    """Plays the seats in `tokens` (seat -> token) until the game is over."""
    rng = random.Random(seed)
    start = client.get_game(game_id)["version"]
    for update in client.follow(game_id, from_version=start):
        status = update["status"]
        if status["state"] != "in_progress":
            continue  # the feed ends after the game's last record
        for seat in status["to_move"]:
            if seat not in tokens:
                continue  # another player's, or a server bot's
            legal = client.legal_moves(game_id, token=tokens[seat])
            if legal["version"] != update["event"]["seq"]:
                break  # a newer record is on its way: act on that one
            try:
                move = rng.choice(legal["moves"])
                client.submit_move(game_id, move, token=tokens[seat], expected_version=legal["version"], minimal=True)
            except Problem as problem:
                if problem.code != "version_conflict":
                    raise  # a conflict only means a newer record is on its way
