// The bot the docs show is the bot the suite plays with.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

test("docs: docs/sdk/typescript.md shows examples/bot.ts verbatim", async () => {
  const bot = await readFile(new URL("../../examples/bot.ts", import.meta.url), "utf8");
  const doc = await readFile(new URL("../../../../docs/sdk/typescript.md", import.meta.url), "utf8");
  assert.ok(doc.includes("```ts\n" + bot + "```\n"), "the doc's bot differs from examples/bot.ts");
});
