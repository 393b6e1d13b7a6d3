"""A whole game with the asyncio client: two seats played by an async bot of
the same shape as examples/bot.py, while a second async client follows the
game through cut connections; then export and verify."""

from __future__ import annotations

import asyncio
import random

import httpx
from conftest import AsyncCuttingTransport

from ludotheque import AsyncClient, Problem


async def play(client: AsyncClient, game_id: str, tokens: dict[int, str], seed: int = 0) -> None:
    """examples/bot.py's `play`, with `await`."""
    rng = random.Random(seed)
    start = (await client.get_game(game_id))["version"]
    async for update in client.follow(game_id, from_version=start):
        status = update["status"]
        if status["state"] != "in_progress":
            continue
        for seat in status["to_move"]:
            if seat not in tokens:
                continue
            legal = await client.legal_moves(game_id, token=tokens[seat])
            if legal["version"] != update["event"]["seq"]:
                break
            try:
                move = rng.choice(legal["moves"])
                await client.submit_move(game_id, move, token=tokens[seat], expected_version=legal["version"], minimal=True)
            except Problem as problem:
                if problem.code != "version_conflict":
                    raise


async def watch(base_url: str, game_id: str) -> tuple[list[int], int]:
    transport = AsyncCuttingTransport(chunks=4, times=2)
    async with AsyncClient(base_url, http=httpx.AsyncClient(transport=transport, timeout=30)) as watcher:
        feed = watcher.follow(game_id)
        seen = [update["event"]["seq"] async for update in feed]
        assert feed.end is not None and feed.end["status"]["state"] == "finished"
        return seen, feed.connections


def test_a_whole_battle13_match_with_the_async_client(base_url: str) -> None:
    async def run() -> None:
        async with AsyncClient(base_url) as client:
            created = await client.create_game(
                "battle13",
                ["Ann", {"name": "Robo", "bot": {"level": "greedy", "think_ms": 0}}, "Cid", None],
                options={"target_crowns": 20, "first_seat": 0},
            )
            game_id = created["id"]
            # The open seat goes to a server bot; the async bot plays Ann and Cid.
            await client.set_seat_bot(game_id, 3, {"level": "random", "think_ms": 0}, token=created["admin_token"])
            tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}
            assert sorted(tokens) == [0, 2]
            (seen, connections), _ = await asyncio.wait_for(
                asyncio.gather(watch(base_url, game_id), play(client, game_id, tokens, seed=3)), timeout=90
            )
            final = await client.get_game(game_id, token=tokens[0])
            assert final["kind"] == "battle13" and final["status"]["state"] == "finished"
            assert seen == list(range(final["version"] + 1)) and connections == 3
            if final["kind"] == "battle13":  # narrows the view to Battle 13's
                assert final["view"]["winner"] is not None and max(final["view"]["crowns"]) >= 20

            report = await client.verify(await client.export(game_id))
            assert report["valid"] and report.get("kind") == "battle13"

    asyncio.run(run())
