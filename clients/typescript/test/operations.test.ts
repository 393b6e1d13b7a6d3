// Every operation of the OpenAPI document has its method here: an endpoint
// added to the server and not to this SDK fails the suite (docs/testing.md,
// "Changing the API").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { LudoClient } from "@ludotheque/sdk";

/** The document's operationId → this SDK's method. */
const METHODS: Record<string, keyof LudoClient> = {
  list_kinds: "kinds",
  list_games: "listGames",
  create_game: "createGame",
  get_game: "getGame",
  replay: "replay",
  join_game: "join",
  leave_game: "leave",
  resign: "resign",
  cancel_game: "cancel",
  reissue_token: "reissueToken",
  set_seat_bot: "setSeatBot",
  clear_seat_bot: "clearSeatBot",
  hand_to_bot: "setAutopilot",
  take_back_from_bot: "clearAutopilot",
  legal_moves: "legalMoves",
  submit_move: "submitMove",
  seat_knowledge: "seatKnowledge",
  list_events: "events",
  list_steps: "steps",
  stream_ticket: "streamTicket",
  stream_game: "follow",
  export_game: "exportGame",
  verify_export: "verify",
  import_game: "importGame",
  game_receipt: "receipt",
  log_info: "logInfo",
  log_checkpoint: "logCheckpoint",
  log_key: "logKey",
  log_consistency: "logConsistency",
  health: "health",
  ready: "ready",
  metrics: "metrics",
};

test("every operation of the document has a method", () => {
  const url = new URL("../../../../openapi/openapi.json", import.meta.url);
  const document = JSON.parse(readFileSync(url, "utf8")) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const operations = Object.values(document.paths).flatMap((item) =>
    Object.values(item).flatMap((op) => (op.operationId === undefined ? [] : [op.operationId])),
  );
  assert.deepEqual([...operations].sort(), Object.keys(METHODS).sort());
  for (const method of Object.values(METHODS)) {
    assert.equal(typeof LudoClient.prototype[method], "function", method);
  }
});
