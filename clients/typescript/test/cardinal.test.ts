import assert from "node:assert/strict";
import { test } from "node:test";
import { quickBot, wholeGame } from "./helpers.js";

test("cardinal: the SDK bot plays both seats to the end, followed live, exported and verified", async () => {
  const { final, updates } = await wholeGame({ kind: "cardinal", players: ["Ann", "Bob"] }, [0, 1], 1);
  // Narrowed by `kind`: a Cardinal view from here on.
  assert.ok(final.kind === "cardinal");
  assert.equal(final.view.phase, "finished");
  assert.equal(final.view.scoring.provisional, false);
  assert.ok(final.status.state === "finished");
  assert.deepEqual(final.view.scoring.winners, final.status.result.winners);
  assert.deepEqual(
    final.view.scoring.seats.map((s) => s.total),
    final.status.result.scores,
  );
  const first = updates[0];
  assert.ok(first?.kind === "cardinal" && first.event.type === "game_created");
  assert.equal(first.event.game?.kind, "cardinal");
});

test("cardinal: three players, two SDK seats and a server bot", async () => {
  const { final } = await wholeGame(
    { kind: "cardinal", players: ["Ann", { name: "Robo", bot: quickBot }, "Cid"], options: { first_seat: 2 } },
    [0, 2],
    2,
  );
  assert.ok(final.kind === "cardinal");
  assert.equal(final.view.players, 3);
  assert.equal(final.view.first_seat, 2);
  assert.ok(final.view.fourth_colour !== undefined && final.view.fourth_colour !== null, "three players share a fourth colour");
  assert.deepEqual(final.seats[1]?.bot, quickBot);
});
