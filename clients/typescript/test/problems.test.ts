// Refusals arrive as typed problems, and a repeated request_id never moves twice.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LudoProblem, isProblem, type CardinalMove } from "@ludotheque/sdk";
import { client } from "./helpers.js";

async function twoSeats() {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"], options: { first_seat: 0 } });
  const [ann, bob] = created.seats.map((s) => client.withToken(s.token));
  assert.ok(ann && bob);
  return { id: created.id, ann, bob };
}

test("problems: a rule violation carries its code and rule", async () => {
  const { id, ann } = await twoSeats();
  await assert.rejects(ann.submitMove(id, { type: "keep_cardinal" }), (error: unknown) => {
    assert.ok(error instanceof LudoProblem);
    assert.equal(error.status, 422);
    assert.equal(error.code, "rule_violation");
    assert.equal(error.rule, "CA-10");
    assert.equal(error.type, "urn:ludotheque:problem:rule_violation");
    assert.match(error.detail, /CA-10/);
    assert.equal(error.problem.rule, "CA-10");
    return true;
  });
});

test("problems: invalid input names its field; another seat's turn names who is to move", async () => {
  const { id, ann, bob } = await twoSeats();
  const bad = { type: "build", shape: "hexagon", colour: 0, x: 0, y: 1 } as unknown as CardinalMove;
  await assert.rejects(ann.submitMove(id, bad), (e: unknown) => isProblem(e, "invalid_input") && e.field === "move.shape");
  const legal = await bob.legalMoves(id);
  assert.deepEqual(legal.moves, [], "nothing is legal off turn");
  await assert.rejects(ann.legalMoves(id).then((l) => bob.submitMove(id, l.moves[0]!)), (e: unknown) => {
    assert.ok(isProblem(e, "not_your_turn"));
    assert.deepEqual(e.to_move, [0]);
    return true;
  });
  await assert.rejects(client.withToken("ludo_nobody").legalMoves(id), (e: unknown) => isProblem(e, "unauthorized"));
  await assert.rejects(client.getGame(crypto.randomUUID()), (e: unknown) => isProblem(e, "not_found"));
});

test("problems: a stale expected_version is a version_conflict with the current version", async () => {
  const { id, ann } = await twoSeats();
  const legal = await ann.legalMoves(id);
  const build = legal.moves[0];
  assert.ok(build?.type === "build");
  const accepted = await ann.submitMove(id, build, { expectedVersion: 0 });
  assert.equal(accepted.version, 1);
  assert.ok(accepted.view, "a full answer carries the mover's view");
  const next = (await ann.legalMoves(id)).moves[0];
  assert.ok(next);
  await assert.rejects(ann.submitMove(id, next, { expectedVersion: 0 }), (error: unknown) => {
    assert.ok(isProblem(error, "version_conflict"));
    assert.equal(error.status, 409);
    assert.equal(error.current_version, 1);
    assert.equal(error.expected_version, 0);
    return true;
  });
  const minimal = await ann.submitMove(id, next, { expectedVersion: 1, minimal: true });
  assert.equal(minimal.version, 2);
  assert.equal(minimal.view, undefined, "return=minimal leaves the view out");
});

test("problems: the same request_id again returns the first answer and appends nothing", async () => {
  const { id, ann } = await twoSeats();
  const move = (await ann.legalMoves(id)).moves[0];
  assert.ok(move);
  const first = await ann.submitMove(id, move, { requestId: "build-1" });
  const again = await ann.submitMove(id, move, { requestId: "build-1" });
  assert.deepEqual(again, first);
  const page = await client.events(id);
  assert.equal(page.version, 1, "one move recorded");
  assert.equal(page.events[1]?.request_id, "build-1");
  const other = (await ann.legalMoves(id)).moves[0];
  assert.ok(other);
  await assert.rejects(ann.submitMove(id, other, { requestId: "build-1" }), (e: unknown) => isProblem(e, "request_id_reused"));
});
