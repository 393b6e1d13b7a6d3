// Every move of every kind, and every kind's options with their defaults left
// out, typed with what openapi-typescript generates from the ludotheque
// OpenAPI document with its default flags (`./schema`, made by
// tests/clients.rs). `tsc --strict --noEmit` over this file is the check:
//
// - `moves` must have one entry per move schema the document names
//   (`<kind>.Move.<Move>`), typed by that schema: a move added to a game and
//   not here, or one a submission cannot carry, fails to compile;
// - options and creations leave every defaulted option out: an option the
//   generated types made required fails to compile;
// - the `@ts-expect-error` lines must be errors: a closed set (Battle 13's
//   `target_crowns`), an unknown move, a tag of another kind.

import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type MoveSchema = Extract<keyof Schemas, `${string}.Move.${string}`>;

// One move of each schema, each also a move a submission carries.
const moves: { [Name in MoveSchema]: Schemas[Name] & Schemas["GameMove"] } = {
  "cardinal.Move.Build": { type: "build", shape: "tower", colour: 1, x: 3, y: 4, orientation: "vertical" },
  "cardinal.Move.MoveCardinal": { type: "move_cardinal", x: 5, y: 6 },
  "cardinal.Move.KeepCardinal": { type: "keep_cardinal" },
  "kardinal.Move.Place": {
    type: "place",
    pieces: [{ piece: "counsellor", country: "france", paid_with: ["france", "france"] }],
  },
  "kardinal.Move.DrawDeck": { type: "draw_deck" },
  "kardinal.Move.TakeDisplay": { type: "take_display", slot: 2 },
  "kardinal.Move.Exchange": { type: "exchange", discard: "england_swabia", take: "deck" },
  "kardinal.Move.Pass": { type: "pass" },
  "battle13.Move.Bid": { type: "bid", card: { kind: "weapons", value: 3 } },
  "battle13.Move.Pass": { type: "pass" },
  "battle13.Move.ChooseFamily": { type: "choose_family", family: "neutral" },
  "battle13.Move.Chaos": { type: "chaos" },
  "battle13.Move.DeclineChaos": { type: "decline_chaos" },
  "battle13.Move.Play": { type: "play", knight: { family: "eagle", strength: 7 } },
};

// Each kind's own union takes its moves, and a submission takes any of them.
const battle13Pass: Schemas["battle13.Move"] = moves["battle13.Move.Pass"];
const kardinalPass: Schemas["kardinal.Move"] = moves["kardinal.Move.Pass"];
const submissions: Schemas["SubmitMove"][] = Object.values(moves).map((move, n) => ({
  move,
  expected_version: n,
  request_id: `r-${n}`,
}));
const otherBids: Schemas["battle13.Move"][] = [
  { type: "bid", card: { kind: "tournaments", value: 2 } },
  { type: "bid", card: { kind: "family", family: "dragon" } },
];

// Options with every default left out, and creations of each kind.
const cardinalOptions: Schemas["cardinal.OptionsRequest"] = {};
const kardinalOptions: Schemas["kardinal.OptionsRequest"] = { variant: "dynamic" };
const battle13Options: Schemas["battle13.OptionsRequest"] = { target_crowns: 50 };
const creations: Schemas["CreateGame"][] = [
  { kind: "cardinal", players: ["Ann", "Bob"], options: cardinalOptions },
  { kind: "kardinal", players: ["Ann", "Bob", null], options: kardinalOptions },
  {
    kind: "battle13",
    players: ["Ann", { name: "Bot", bot: { level: "random" } }, "Cid", "Dee"],
    options: battle13Options,
  },
  { kind: "battle13", players: ["Ann", "Bob", "Cid", "Dee"], options: {} },
  { kind: "kardinal", players: ["Ann", "Bob", "Cid"] },
];
const createBody: paths["/v1/games"]["post"]["requestBody"] = { content: { "application/json": creations[0]! } };

// Import and verify take the export as text (JSON Lines) or bytes.
const exportText = '{"header":1}\n{"seq":0}\n';
const verifyBody: NonNullable<paths["/v1/verify"]["post"]["requestBody"]>["content"]["application/x-ndjson"] = exportText;
const importBody: NonNullable<paths["/v1/games/import"]["post"]["requestBody"]>["content"]["application/octet-stream"] = exportText;

// Answers: the kinds' `options_schema` is a JSON Schema object; a game's
// options hold every option; a game's view is its kind's.
function optionNames(info: Schemas["KindInfo"]): string[] {
  const schemaType: "object" = info.options_schema.type;
  return schemaType === "object" ? Object.keys(info.options_schema.properties) : [];
}
function crowns(game: Schemas["GameState"]): 20 | 50 | 100 | undefined {
  return game.kind === "battle13" ? game.options.target_crowns : undefined;
}

// @ts-expect-error: 30 crowns is no match length (20, 50 or 100).
const badCrowns: Schemas["battle13.OptionsRequest"] = { target_crowns: 30 };
// @ts-expect-error: no game has a `resign` move (resigning is its own endpoint).
const badMove: Schemas["GameMove"] = { type: "resign" };
// @ts-expect-error: Battle 13 has no `draw_deck`.
const wrongKind: Schemas["battle13.Move"] = { type: "draw_deck" };

export const checked = [
  moves,
  battle13Pass,
  kardinalPass,
  submissions,
  otherBids,
  creations,
  createBody,
  verifyBody,
  importBody,
  optionNames,
  crowns,
  badCrowns,
  badMove,
  wrongKind,
];
