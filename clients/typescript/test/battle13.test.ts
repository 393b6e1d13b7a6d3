import assert from "node:assert/strict";
import { test } from "node:test";
import { wholeGame, quickBot } from "./helpers.js";

test("battle13: the SDK bot plays a camp to 20 crowns against server bots, followed live, exported and verified", async () => {
  const { final, updates } = await wholeGame(
    {
      kind: "battle13",
      players: ["Ann", { name: "Robo", bot: quickBot }, "Cid", { name: "Dot", bot: quickBot }],
      options: { target_crowns: 20 },
    },
    [0, 2],
    4,
  );
  assert.ok(final.kind === "battle13");
  const { view } = final;
  assert.equal(view.target_crowns, 20);
  assert.ok(view.winner === 0 || view.winner === 1);
  assert.ok((view.crowns[view.winner] ?? 0) >= 20);
  assert.equal(view.turn ?? null, null);
  const effects = updates.flatMap((u) => (u.kind === "battle13" ? u.event.effects : []));
  const won = effects.find((e) => e.type === "match_won");
  assert.ok(won?.type === "match_won");
  assert.equal(won.camp, view.winner);
  assert.ok(effects.some((e) => e.type === "knight_played" && e.by !== e.seat), "a master played its servant's knights");
});
