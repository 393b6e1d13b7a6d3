// The retry policy, against local fake servers (exact timings and dropped
// connections) and against the real one (its per-seat rate limit).
import assert from "node:assert/strict";
import { test } from "node:test";
import { LudoClient, LudoNetworkError, LudoProblem, isProblem } from "@ludotheque/sdk";
import { BASE, client, fakeServer, json, problem } from "./helpers.js";

const accepted = { kind: "cardinal", version: 1, status: { state: "in_progress", to_move: [0] }, effects: [] };
const move = { type: "keep_cardinal" } as const;

test("retry: a 429 is retried after its retry_after_ms, with the same request_id", async () => {
  const fake = await fakeServer((n, _req, res) =>
    n === 0 ? problem(res, 429, "rate_limited", { retry_after_ms: 400 }) : json(res, accepted),
  );
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, token: "t" });
    const started = performance.now();
    const answer = await ludo.submitMove("g", move, { expectedVersion: 0 });
    const waited = performance.now() - started;
    assert.equal(answer.version, 1);
    assert.equal(fake.requests.length, 2);
    assert.ok(waited >= 390, `waited ${waited} ms for a retry_after_ms of 400`);
    const [a, b] = fake.requests.map((r) => JSON.parse(r.body) as { request_id: string; expected_version: number });
    assert.ok(a && b);
    assert.match(a.request_id, /^[0-9a-f-]{36}$/, "a request_id is made when none is given");
    assert.equal(b.request_id, a.request_id);
    assert.equal(b.expected_version, 0);
    assert.equal(fake.requests[1]?.headers.authorization, "Bearer t");
  } finally {
    await fake.close();
  }
});

test("retry: without retry_after_ms, the Retry-After header (seconds) is honoured", async () => {
  const fake = await fakeServer((n, _req, res) => {
    if (n > 0) return json(res, { status: "ok" });
    res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" });
    res.end("slow down");
  });
  try {
    const started = performance.now();
    assert.deepEqual(await new LudoClient({ baseUrl: fake.url }).health(), { status: "ok" });
    assert.ok(performance.now() - started >= 990);
  } finally {
    await fake.close();
  }
});

test("retry: a dropped connection is retried with the same request_id", async () => {
  // The first submission reaches the "server" and its connection is cut
  // before any answer: the outcome is unknown, so the retry must be the
  // same request, which the server would recognise by its request_id.
  const fake = await fakeServer((n, req, res) => (n === 0 ? req.socket.destroy() : json(res, accepted)));
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, token: "t", retry: { backoffMs: 10 } });
    const answer = await ludo.submitMove("g", move, { requestId: "my-move-1" });
    assert.equal(answer.version, 1);
    assert.deepEqual(
      fake.requests.map((r) => (JSON.parse(r.body) as { request_id: string }).request_id),
      ["my-move-1", "my-move-1"],
    );
  } finally {
    await fake.close();
  }
});

test("retry: a creation whose connection dropped is not sent again", async () => {
  const fake = await fakeServer((_n, req) => req.socket.destroy());
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, retry: { backoffMs: 10 } });
    await assert.rejects(ludo.createGame({ kind: "cardinal", players: ["Ann", "Bob"] }), (error: unknown) => {
      assert.ok(error instanceof LudoNetworkError);
      assert.equal(error.maybeReached, true);
      return true;
    });
    assert.equal(fake.requests.length, 1, "a second creation could make a second game");
  } finally {
    await fake.close();
  }
});

test("retry: a refused connection is retried even for a creation (nothing was sent)", async () => {
  const fake = await fakeServer(() => undefined);
  const url = fake.url;
  await fake.close(); // nothing listens there any more
  const ludo = new LudoClient({ baseUrl: url, retry: { attempts: 2, backoffMs: 10 } });
  await assert.rejects(ludo.createGame({ kind: "cardinal", players: ["Ann", "Bob"] }), (error: unknown) => {
    assert.ok(error instanceof LudoNetworkError);
    assert.equal(error.maybeReached, false);
    return true;
  });
});

test("retry: 502, 503 and 504 are retried with backoff, a bounded number of times", async () => {
  const statuses = [502, 504, 503, 503, 503];
  const fake = await fakeServer((n, _req, res) => {
    res.writeHead(statuses[n] ?? 500, { "content-type": "text/html" });
    res.end("<h1>bad gateway</h1>");
  });
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, retry: { attempts: 4, backoffMs: 10 } });
    await assert.rejects(ludo.kinds(), (error: unknown) => {
      assert.ok(error instanceof LudoProblem);
      assert.equal(error.status, 503);
      assert.equal(error.code, "unexpected_response");
      return true;
    });
    assert.equal(fake.requests.length, 4);
  } finally {
    await fake.close();
  }
});

test("retry: a 503 storage_unavailable is not retried for a resignation, whose outcome is unknown", async () => {
  const fake = await fakeServer((_n, _req, res) => problem(res, 503, "storage_unavailable", { retry_after_ms: 10 }));
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, token: "t" });
    await assert.rejects(ludo.resign("g"), (e: unknown) => isProblem(e, "storage_unavailable"));
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test("retry: a wait longer than maxRetryAfterMs is the caller's to decide", async () => {
  const fake = await fakeServer((_n, _req, res) => problem(res, 429, "rate_limited", { retry_after_ms: 60_000 }));
  try {
    const ludo = new LudoClient({ baseUrl: fake.url, retry: { maxRetryAfterMs: 1000 } });
    await assert.rejects(ludo.verify("{}\n"), (error: unknown) => {
      assert.ok(isProblem(error, "rate_limited"));
      assert.equal(error.retry_after_ms, 60_000);
      return true;
    });
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test("retry: the real server's per-seat rate limit answers 429, and the SDK waits it out", async () => {
  // Seat changes count against the seat's move budget (burst 60 by default):
  // 40 joins and leaves of one seat go over it within a fraction of a second.
  const statuses: number[] = [];
  const counting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    statuses.push(res.status);
    return res;
  };
  const ludo = new LudoClient({ baseUrl: BASE, fetch: counting });
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", null, null] });
  const invitation = created.invitations?.find((i) => i.seat === 1)?.code;
  assert.ok(invitation);
  for (let i = 0; i < 40; i++) {
    const joined = await ludo.join(created.id, { name: "Bea", invitation });
    assert.equal(joined.seat, 1);
    const left = await ludo.leave(created.id, { token: joined.token });
    assert.deepEqual(left.status, { state: "waiting", open_seats: [1, 2] });
  }
  assert.ok(statuses.includes(429), "the server rate-limited the seat");
  assert.equal(statuses.filter((s) => s === 200).length, 80, "and every call succeeded in the end");

  // Without retries the refusal reaches the caller, typed.
  const impatient = new LudoClient({ baseUrl: BASE, retry: false });
  let refusal: unknown;
  for (let i = 0; i < 100 && refusal === undefined; i++) {
    try {
      const joined = await impatient.join(created.id, { name: "Bea", invitation });
      await impatient.leave(created.id, { token: joined.token });
    } catch (error) {
      refusal = error;
    }
  }
  assert.ok(isProblem(refusal, "rate_limited"), String(refusal));
  assert.equal(refusal.status, 429);
  assert.equal(typeof refusal.retry_after_ms, "number");
  await client.cancel(created.id, { token: created.admin_token });
});
