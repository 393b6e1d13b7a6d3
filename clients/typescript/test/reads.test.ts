// The read endpoints: kinds, the log in pages, steps, replay, the
// transparency log, health, and the import's operator check.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KINDS, isProblem } from "@ludotheque/sdk";
import { client, collect, quickBot, range } from "./helpers.js";

/** A Cardinal game two server bots play to the end. */
async function finishedGame() {
  const created = await client.createGame({
    kind: "cardinal",
    players: [{ name: "R1", bot: quickBot }, { name: "R2", bot: quickBot }],
  });
  const updates = await collect(client.follow(created.id));
  return { id: created.id, last: updates.length - 1 };
}

test("reads: kinds, with their defaults", async () => {
  const { kinds } = await client.kinds();
  assert.deepEqual(kinds.map((k) => k.kind), [...KINDS]);
  for (const info of kinds) {
    if (info.kind === "battle13") assert.equal(info.default_options.target_crowns, 20);
    if (info.kind === "kardinal") assert.equal(info.default_options.variant, "standard");
    if (info.kind === "cardinal") assert.deepEqual([info.min_players, info.max_players], [2, 4]);
  }
});

test("reads: events page by page, steps, and replay at a past version", async () => {
  const { id, last } = await finishedGame();
  const page = await client.events(id, { from: 3, limit: 2 });
  assert.deepEqual(page.events.map((e) => e.seq), [3, 4]);
  assert.equal(page.next_from, 5);
  assert.deepEqual((await collect(client.allEvents(id))).map((e) => e.seq), range(0, last));

  const steps = await client.steps(id, { limit: 5 });
  assert.deepEqual(steps.steps.map((s) => s.seq), range(0, 4));
  assert.ok(steps.steps.every((s) => s.lines.length > 0));

  const past = await client.replay(id, 2);
  assert.equal(past.version, 2);
  assert.equal(past.latest_version, last);
  assert.ok(past.kind === "cardinal" && past.view.buildings.length === 1);
  await assert.rejects(client.replay(id, last + 1), (e: unknown) => isProblem(e));
});

test("reads: receipts and the transparency log", async () => {
  const { id } = await finishedGame();
  const receipt = await client.receipt(id);
  assert.match(receipt.leaf, new RegExp(`^ludotheque/game-head/v1\ngame ${id}\n`));

  const log = await client.logInfo();
  assert.equal(receipt.key, log.key);
  assert.equal(await client.logKey().then((k) => k.trim()), log.key);
  assert.ok(log.tree && log.tree.size > receipt.leaf_index);
  const checkpoint = await client.logCheckpoint();
  assert.ok(checkpoint.startsWith(`${log.origin}\n`));

  const proof = await client.logConsistency(1, log.tree.size);
  assert.deepEqual([proof.from, proof.to], [1, log.tree.size]);
  assert.ok(Array.isArray(proof.proof));

  const open = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"] });
  await assert.rejects(client.receipt(open.id), (e: unknown) => isProblem(e, "game_not_over"));
});

test("reads: health, readiness, metrics; an import needs the operator", async () => {
  assert.deepEqual(await client.health(), { status: "ok" });
  assert.deepEqual(await client.ready(), { status: "ready" });
  assert.match(await client.metrics(), /# EOF/);

  const { id } = await finishedGame();
  const exported = await client.exportGame(id);
  // A server without an operator token takes no import (forbidden); one
  // with it wants the token (unauthorized).
  await assert.rejects(client.importGame(exported), (e: unknown) => isProblem(e, "forbidden") || isProblem(e, "unauthorized"));
  const operator = process.env.LUDO_OPERATOR_TOKEN;
  if (operator) {
    await assert.rejects(client.importGame(exported, { token: operator }), (e: unknown) => isProblem(e, "game_exists"));
  }
});
