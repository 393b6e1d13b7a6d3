// Shared by the test files: the server under test, a second client, local
// fake servers, and a whole game played, followed, exported and verified.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { LudoClient, type CreateGameOf, type GameState, type GameUpdate, type Kind, type Seat } from "@ludotheque/sdk";
import { playBot } from "../examples/bot.js";

/** The server under test. Unset or unreachable fails every file: a suite that skips proves nothing. */
export const BASE: string = await serverUnderTest();

async function serverUnderTest(): Promise<string> {
  const base = process.env.LUDO_BASE;
  if (!base) throw new Error("LUDO_BASE is not set: point it at a running ludotheque server, e.g. http://127.0.0.1:8080");
  try {
    const res = await fetch(new URL("/healthz", base), { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`/healthz answered ${res.status}`);
  } catch (error) {
    throw new Error(`LUDO_BASE=${base} is unreachable`, { cause: error });
  }
  return base;
}

export const client = new LudoClient({ baseUrl: BASE });

/** A server bot that moves at once, to keep games short. */
export const quickBot = { level: "random", think_ms: 0 } as const;

/** A small seeded generator (mulberry32), so a failing game can be played again. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export interface Fake {
  url: string;
  /** Every request received: method, path, headers and body. */
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/**
 * A local HTTP server on 127.0.0.1 whose handler answers the n-th request
 * (from 0), after its body has been read.
 */
export async function fakeServer(
  handler: (n: number, req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
): Promise<Fake> {
  const requests: Fake["requests"] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      handler(requests.length - 1, req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function problem(res: http.ServerResponse, status: number, code: string, extra: object = {}): void {
  res.writeHead(status, { "content-type": "application/problem+json" });
  res.end(JSON.stringify({ type: `urn:ludotheque:problem:${code}`, title: code, status, detail: code, code, ...extra }));
}

export function json(res: http.ServerResponse, body: object): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * The test every kind gets: the SDK bot plays `sdkSeats` (server bots the
 * rest) to the end, while a second client follows the game live from its
 * first record; then a follow interrupted halfway resumes with
 * `Last-Event-ID`, and the export verifies.
 */
export async function wholeGame<K extends Kind>(
  game: CreateGameOf<K>,
  sdkSeats: Seat[],
  seed: number,
): Promise<{ final: GameState; updates: GameUpdate[] }> {
  const created = await client.createGame(game);
  const tokens = new Map(created.seats.filter((s) => sdkSeats.includes(s.seat)).map((s) => [s.seat, s.token]));
  assert.equal(tokens.size, sdkSeats.length, "a token for every seat the SDK bot plays");

  // The second client: a spectator that follows from record 0, concurrently with the bot.
  const watcher = new LudoClient({ baseUrl: BASE });
  const live = watcher.follow(created.id);
  const watched = collect(live);

  const final = await playBot(client, created.id, tokens, seeded(seed));
  assert.equal(final.kind, game.kind);
  assert.equal(final.status.state, "finished");
  const updates = await watched;
  assert.deepEqual(
    updates.map((u) => u.event.seq),
    range(0, final.version),
    "every version, in order, once",
  );
  assert.ok(updates.every((u) => u.kind === game.kind));
  assert.deepEqual(live.end, { version: final.version, status: final.status }, "the stream ends with the game");
  assert.deepEqual(updates.at(-1)?.status, final.status);

  // Resume: stop halfway, then follow again after the last record received.
  const half = Math.ceil(final.version / 2);
  const first = watcher.follow(created.id);
  const before: number[] = [];
  for await (const update of first) {
    before.push(update.event.seq);
    if (before.length === half) break;
  }
  assert.equal(first.lastEventId, String(half - 1));
  const after = await collect(watcher.follow(created.id, { lastEventId: first.lastEventId ?? "" }));
  assert.deepEqual([...before, ...after.map((u) => u.event.seq)], range(0, final.version), "no gap, no duplicate");

  // Export the bundle and verify it on the server.
  const exported = await client.exportGame(created.id);
  const lines = exported.trimEnd().split("\n");
  const header = JSON.parse(lines[0] ?? "") as { game_id: string; records: number; finished: boolean; seed?: string };
  assert.equal(header.game_id, created.id);
  assert.equal(header.records, final.version + 1);
  assert.equal(header.finished, true);
  assert.equal(header.seed, final.seed);

  const report = await client.verify(exported);
  assert.equal(report.valid, true, JSON.stringify(report.fault));
  assert.equal(report.kind, game.kind);
  assert.equal(report.chain_intact, true);
  assert.equal(report.seed, "matches");
  assert.equal(report.replayed, true);
  assert.equal(report.records, final.version + 1);
  assert.equal(report.last_hash, updates.at(-1)?.event.hash);
  assert.deepEqual(report.status, final.status);
  assert.equal(report.receipt?.trusted, true);
  assert.equal(report.receipt?.leaf_matches, true);
  assert.equal(report.receipt?.included, true);

  // An export altered by one byte no longer verifies.
  const tampered = exported.replace(`"seq":1,`, `"seq":1,"x":0,`);
  assert.notEqual(tampered, exported);
  const bad = await client.verify(tampered);
  assert.equal(bad.valid, false);
  assert.ok(bad.fault);

  return { final, updates };
}
