// The table: open seats, joining and leaving, bot seats, autopilot,
// resigning, cancelling, renewing a token.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isProblem } from "@ludotheque/sdk";
import { client, collect, quickBot } from "./helpers.js";

test("seats: an open seat is joined by invitation, left, and joined again", async () => {
  const created = await client.createGame({ kind: "kardinal", players: ["Ann", null, null] });
  assert.deepEqual(created.status, { state: "waiting", open_seats: [1, 2] });
  const invitation = created.invitations?.find((i) => i.seat === 1);
  assert.ok(invitation?.open);
  assert.match(invitation.link, new RegExp(`/games/${created.id}/join#`));

  const bea = await client.join(created.id, { name: "Bea", invitation: invitation.code });
  assert.equal(bea.seat, 1);
  assert.deepEqual(bea.status, { state: "waiting", open_seats: [2] });
  await assert.rejects(client.join(created.id, { name: "Eve", invitation: invitation.code }), (e: unknown) =>
    isProblem(e, "seat_taken"),
  );
  // Nobody moves while seats are open.
  await assert.rejects(client.seatKnowledge(created.id, { token: bea.token }), (e: unknown) => isProblem(e, "game_waiting"));

  const left = await client.leave(created.id, { token: bea.token });
  assert.deepEqual(left.status, { state: "waiting", open_seats: [1, 2] });
  const again = await client.join(created.id, { name: "Bob", invitation: invitation.code });
  assert.equal(again.seat, 1);
  const game = await client.getGame(created.id);
  assert.equal(game.seats[1]?.name, "Bob");
  assert.equal(game.seats[2]?.name ?? null, null);

  const cancelled = await client.cancel(created.id, { token: created.admin_token });
  assert.deepEqual(cancelled.status, { state: "cancelled" });
});

test("seats: a public game is listed in the lobby and joined without invitation", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", null], public: true });
  const lobby = [];
  for await (const g of client.games({ open: true, kind: "cardinal" })) lobby.push(g.id);
  assert.ok(lobby.includes(created.id), "listed among the open games");
  const page = await client.listGames({ limit: 1 });
  assert.equal(page.games.length, 1);

  const joined = await client.join(created.id, { name: "Bob" });
  assert.equal(joined.seat, 1);
  assert.equal(joined.status.state, "in_progress", "the last seat taken starts the game");
  await assert.rejects(client.leave(created.id, { token: joined.token }), (e: unknown) => isProblem(e, "game_started"));
});

test("seats: the admin hands an open seat to a server bot, which plays it", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", null], options: { first_seat: 1 } });
  const admin = client.withToken(created.admin_token);
  const changed = await admin.setSeatBot(created.id, 1, { bot: quickBot, name: "Robo" });
  assert.equal(changed.status.state, "in_progress");
  // The bot plays first: follow until it is Ann's turn.
  for await (const update of client.follow(created.id)) {
    if (update.status.state === "in_progress" && update.status.to_move.includes(0)) break;
  }
  const { events } = await client.events(created.id);
  const botMove = events.find((e) => e.type === "move");
  assert.equal(botMove?.seat, 1);
  assert.equal(botMove?.bot?.level, "random");
  const game = await client.getGame(created.id);
  assert.deepEqual(game.seats[1], { seat: 1, name: "Robo", bot: quickBot });
  // A person's seat is not the admin's to hand over.
  await assert.rejects(admin.setSeatBot(created.id, 0, { bot: quickBot }), (e: unknown) => isProblem(e, "forbidden"));
});

test("seats: autopilot plays a seat for its player, who takes it back", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"], options: { first_seat: 0 } });
  const ann = client.withToken(created.seats[0]?.token ?? "");
  const on = await ann.setAutopilot(created.id, quickBot);
  assert.deepEqual({ seat: on.seat, bot: on.bot }, { seat: 0, bot: quickBot });
  for await (const update of client.follow(created.id)) {
    if (update.status.state === "in_progress" && update.status.to_move.includes(1)) break;
  }
  const off = await ann.clearAutopilot(created.id);
  assert.equal(off.bot ?? null, null);
  const events = await collect(client.allEvents(created.id));
  const handovers = events.filter((e) => e.type === "seat_bot").map((e) => e.handover?.bot ?? null);
  assert.deepEqual(handovers, [quickBot, null]);
  assert.ok(events.some((e) => e.type === "move" && e.seat === 0 && e.bot?.level === "random"));
});

test("seats: resigning a two-sided game ends it, and the resigned token may only watch", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"] });
  const ann = client.withToken(created.seats[0]?.token ?? "");
  const resigned = await ann.resign(created.id);
  assert.ok(resigned.status.state === "finished");
  assert.deepEqual(resigned.status.result.winners, [1]);
  assert.deepEqual(resigned.status.forfeits, [{ seat: 0, reason: "resigned" }]);
  assert.ok(resigned.receipt, "the change that ended the game carries its receipt");
  const receipt = await client.receipt(created.id);
  assert.equal(receipt.leaf_index, resigned.receipt.leaf_index);
  const seen = await ann.getGame(created.id);
  assert.equal(seen.viewer_seat, 0);
  assert.equal(seen.seats[0]?.resigned, true);
  await assert.rejects(ann.resign(created.id), (e: unknown) => isProblem(e, "game_finished"));
});

test("seats: a renewed token replaces the old one, and a stream opened with the old one is revoked", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"] });
  const old = client.withToken(created.seats[1]?.token ?? "");
  const stream = old.follow(created.id);
  const iterator = stream[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).value?.event.seq, 0, "the stream is open");

  const renewed = await old.reissueToken(created.id, 1);
  assert.equal(renewed.seat, 1);
  await assert.rejects(iterator.next(), (e: unknown) => isProblem(e, "seat_revoked"));
  await assert.rejects(old.legalMoves(created.id), (e: unknown) => isProblem(e, "unauthorized"));
  const legal = await client.legalMoves(created.id, { token: renewed.token });
  assert.equal(legal.seat, 1);
  const knowledge = await client.seatKnowledge(created.id, { token: renewed.token });
  assert.equal(knowledge.seat, 1);
  assert.equal(knowledge.kind, "cardinal");
  assert.equal(typeof knowledge.info, "object");
});
