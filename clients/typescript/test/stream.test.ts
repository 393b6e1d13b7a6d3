// Following live: the SSE parser, a connection cut mid-stream and resumed
// with Last-Event-ID, and the end of a finished game's stream.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { LudoClient, SseParser } from "@ludotheque/sdk";
import { BASE, client, collect, quickBot, range } from "./helpers.js";

test("sse: events cut anywhere, CRLF or CR line ends, comments, ids that persist, retry", () => {
  const text = "\uFEFF: ping\r\nretry: 1500\nid: 7\nevent: record\ndata: {\"a\":\ndata: 1}\n\nevent: end\r\rdata:x\n\n";
  // Every way of cutting the text in two gives the same events.
  for (let cut = 0; cut <= text.length; cut++) {
    const parser = new SseParser();
    const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut)), ...parser.end()];
    assert.deepEqual(
      events,
      [
        { event: "record", data: '{"a":\n1}', id: "7" },
        { event: "message", data: "x", id: "7" },
      ],
      `cut at ${cut}`,
    );
    assert.equal(parser.retry, 1500);
    assert.equal(parser.lastEventId, "7");
  }
  // An event the stream cut off before its blank line is dropped, not half-delivered.
  const parser = new SseParser("3");
  assert.deepEqual([...parser.push("id: 4\ndata: {\"partial"), ...parser.end()], []);
  assert.equal(parser.lastEventId, "3", "and its id is not where a reconnect resumes");
});

test("stream: a connection cut mid-event is resumed with Last-Event-ID, without gap or duplicate", async () => {
  // A proxy to the server that, on the first stream only, passes three
  // whole events and half of a fourth, then cuts the connection.
  const streamHeaders: (string | undefined)[] = [];
  const proxy = http.createServer((req, res) => {
    const isStream = /\/stream(\?|$)/.test(req.url ?? "");
    if (isStream) streamHeaders.push(req.headers["last-event-id"] as string | undefined);
    const cut = isStream && streamHeaders.length === 1;
    const upstream = http.request(new URL(req.url ?? "/", BASE), { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (!cut) return void up.pipe(res);
      let seen = "";
      let done = false;
      up.setEncoding("utf8");
      up.on("data", (chunk: string) => {
        seen += chunk;
        const ends = [...seen.matchAll(/\n\n/g)];
        if (done || ends.length < 4) return;
        done = true;
        // Three events, then the fourth up to the middle of its data line
        // (past its `id: 3`, which must not count).
        const third = (ends[2]?.index ?? 0) + 2;
        const cutAt = seen.indexOf("data:", third) + 40;
        assert.ok(seen.slice(third, cutAt).startsWith("id: 3\n"));
        res.write(seen.slice(0, cutAt));
        up.destroy();
        setTimeout(() => res.socket?.destroy(), 50);
      });
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = proxy.address() as AddressInfo;
    const bot = { ...quickBot, think_ms: 20 };
    const created = await client.createGame({
      kind: "cardinal",
      players: [{ name: "R1", bot }, { name: "R2", bot }],
    });
    const viaProxy = new LudoClient({ baseUrl: `http://127.0.0.1:${port}` });
    const stream = viaProxy.follow(created.id, { reconnectDelayMs: 50 });
    const seqs = (await collect(stream)).map((u) => u.event.seq);
    const final = await client.getGame(created.id);
    assert.equal(final.status.state, "finished");
    assert.deepEqual(seqs, range(0, final.version));
    assert.ok(stream.reconnects >= 1);
    assert.deepEqual(streamHeaders.slice(0, 2), [undefined, "2"], "the reconnect resumed after record 2");
    assert.equal(stream.end?.version, final.version);
  } finally {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  }
});

test("stream: from a version, and nothing after the last record of a finished game (204)", async () => {
  const created = await client.createGame({ kind: "cardinal", players: ["Ann", "Bob"] });
  await client.resign(created.id, { token: created.seats[0]?.token ?? "" });
  const game = await client.getGame(created.id);
  assert.equal(game.version, 1);

  const fromOne = client.follow(created.id, { from: 1 });
  assert.deepEqual((await collect(fromOne)).map((u) => u.event.type), ["seat_resigned"]);
  assert.equal(fromOne.end?.status.state, "finished");

  const after = client.follow(created.id, { lastEventId: game.version });
  assert.deepEqual(await collect(after), []);
  assert.equal(after.end, undefined, "a 204 ends the stream without an end event");
});
