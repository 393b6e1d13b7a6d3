import assert from "node:assert/strict";
import { test } from "node:test";
import { LudoClient } from "@ludotheque/sdk";
import { BASE, client, quickBot, wholeGame } from "./helpers.js";

test("kardinal: the SDK bot plays two seats to the end against a server bot, followed live, exported and verified", async () => {
  const { final, updates } = await wholeGame(
    { kind: "kardinal", players: ["Ann", "Bob", { name: "Robo", bot: quickBot }], options: { variant: "dynamic" } },
    [0, 1],
    3,
  );
  assert.ok(final.kind === "kardinal");
  assert.equal(final.view.variant, "dynamic");
  assert.equal(final.options.variant, "dynamic");
  assert.ok(final.options.board, "a game's options carry its board");
  assert.ok(final.view.final_scoring);
  assert.ok(final.status.state === "finished");
  assert.deepEqual(final.view.final_scoring.winners, final.status.result.winners);
  // The spectator saw no hand while the game ran.
  for (const u of updates) {
    if (u.kind !== "kardinal" || u.status.state === "finished") continue;
    assert.ok(u.view.seats.every((s) => s.hand == null), `no hand visible to a spectator at ${u.event.seq}`);
  }
});

test("kardinal: a seat follows by stream ticket or header and sees its own hand only", async () => {
  const created = await client.createGame({ kind: "kardinal", players: ["Ann", "Bob", "Cid"] });
  const token = created.seats[1]?.token;
  assert.ok(token);
  const seat = new LudoClient({ baseUrl: BASE, token });
  for (const auth of ["ticket", "header"] as const) {
    const stream = seat.follow(created.id, { auth });
    for await (const update of stream) {
      assert.ok(update.kind === "kardinal");
      assert.equal(update.view.viewer, 1);
      assert.ok(update.view.seats[1]?.hand?.length === 3, `${auth}: its own hand`);
      assert.equal(update.view.seats[0]?.hand ?? null, null, `${auth}: not another's`);
      break;
    }
  }
  await client.resign(created.id, { token: created.seats[0]?.token ?? "" });
});
