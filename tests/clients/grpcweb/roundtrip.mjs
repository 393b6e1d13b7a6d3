#!/usr/bin/env node
// A real gRPC-Web client against ludotheque: Connect-ES (@connectrpc/connect
// with @connectrpc/connect-node's gRPC-Web transport over HTTP/1.1, as a
// browser speaks it) and @bufbuild/protobuf v2, with NO code generation: the
// service and its messages come from the server's FileDescriptorSet, read at
// run time.
//
//   node roundtrip.mjs --base http://127.0.0.1:PORT --descriptors FILE
//                      [--import-base http://127.0.0.1:PORT2] [--packages DIR]
//
// --descriptors  the encoded google.protobuf.FileDescriptorSet of proto/
//                (ludo_proto::FILE_DESCRIPTOR_SET, written to a file by tests/clients.rs)
// --import-base  a second, empty server to import the finished game into
//                (default: --base, where the import is refused as game_exists)
// --packages     the directory whose node_modules holds the pinned packages
//                (default: .tools/grpcweb, as .ci/install-client-tools installs them)
//
// Through the generated-at-run-time client it calls every unary RPC of
// ludo.v1.Ludo and WatchGame (server streaming over gRPC-Web): creates a
// Cardinal game, plays it to its end with the seats' tokens (metadata
// `authorization: Bearer …`), lists, gets, reads legal moves, events (in
// pages), steps, replays, exports, verifies (a good and a tampered export)
// and imports it; two watchers (one live from the start, one after the end)
// must receive every record in order and see their stream end. Refused calls
// must come back with the right gRPC code and our google.rpc.ErrorInfo
// (reason, domain, metadata), read with connect's findDetails.
//
// The transparency log (GetLog, GetReceipt, GetConsistencyProof) is checked
// the way an outside auditor would, with node:crypto only: the log's key
// names its key id, every checkpoint's Ed25519 signature (C2SP signed note)
// checks out with it, every receipt's RFC 6962 inclusion proof leads from its
// leaf to its checkpoint's root, and consistency proofs lead from each older
// checkpoint's root to the latest one's.
//
// Prints one JSON summary on stdout (tests/clients.rs asserts on it) and exits
// 0; any unexpected failure exits 1 with the error on stderr.

import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function args() {
  const out = { packages: path.join(here, '..', '..', '..', '.tools', 'grpcweb') };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (argv[i + 1] === undefined) throw new Error(`${argv[i]} needs a value`);
    out[key] = argv[i + 1];
  }
  for (const need of ['base', 'descriptors']) {
    if (!out[need]) throw new Error(`--${need} is required`);
  }
  out.importBase ??= out.base;
  return out;
}

const opts = args();

// The pinned packages, from their own directory (ES modules ignore NODE_PATH,
// so resolve from there; every package ships CommonJS too, loaded once each).
const requireFrom = createRequire(path.join(path.resolve(opts.packages), 'package.json'));
const { create, createFileRegistry, fromBinary } = requireFrom('@bufbuild/protobuf');
const { FileDescriptorSetSchema, FileDescriptorProtoSchema } = requireFrom('@bufbuild/protobuf/wkt');
const { Code, ConnectError, createClient } = requireFrom('@connectrpc/connect');
const { createGrpcWebTransport } = requireFrom('@connectrpc/connect-node');

function installedVersion(name) {
  const file = path.join(path.resolve(opts.packages), 'node_modules', ...name.split('/'), 'package.json');
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

// ---------------------------------------------------------------------------
// The service, from the descriptor set (no generated code).

const set = fromBinary(FileDescriptorSetSchema, readFileSync(opts.descriptors));
const registry = createFileRegistry(set);
const Ludo = registry.getService('ludo.v1.Ludo');
if (!Ludo) throw new Error('ludo.v1.Ludo is not in the descriptor set');

// google.rpc.ErrorInfo and BadRequest are not in our descriptor set (tonic-types
// encodes them): describe the two messages here, as google/rpc/error_details.proto does.
const STRING = 9;
const MESSAGE = 11;
const OPTIONAL = 1;
const REPEATED = 3;
const errorDetails = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'google/rpc/error_details.proto',
    package: 'google.rpc',
    syntax: 'proto3',
    messageType: [
      {
        name: 'ErrorInfo',
        field: [
          { name: 'reason', number: 1, label: OPTIONAL, type: STRING, jsonName: 'reason' },
          { name: 'domain', number: 2, label: OPTIONAL, type: STRING, jsonName: 'domain' },
          { name: 'metadata', number: 3, label: REPEATED, type: MESSAGE, typeName: '.google.rpc.ErrorInfo.MetadataEntry', jsonName: 'metadata' },
        ],
        nestedType: [
          {
            name: 'MetadataEntry',
            field: [
              { name: 'key', number: 1, label: OPTIONAL, type: STRING, jsonName: 'key' },
              { name: 'value', number: 2, label: OPTIONAL, type: STRING, jsonName: 'value' },
            ],
            options: { mapEntry: true },
          },
        ],
      },
      {
        name: 'BadRequest',
        field: [
          { name: 'field_violations', number: 1, label: REPEATED, type: MESSAGE, typeName: '.google.rpc.BadRequest.FieldViolation', jsonName: 'fieldViolations' },
        ],
        nestedType: [
          {
            name: 'FieldViolation',
            field: [
              { name: 'field', number: 1, label: OPTIONAL, type: STRING, jsonName: 'field' },
              { name: 'description', number: 2, label: OPTIONAL, type: STRING, jsonName: 'description' },
            ],
          },
        ],
      },
    ],
  }),
  () => undefined,
);
const ErrorInfo = errorDetails.getMessage('google.rpc.ErrorInfo');
const BadRequest = errorDetails.getMessage('google.rpc.BadRequest');

// ---------------------------------------------------------------------------
// Clients: gRPC-Web over HTTP/1.1, as a browser would speak it.

const client = createClient(Ludo, createGrpcWebTransport({ baseUrl: opts.base, httpVersion: '1.1' }));
const importClient = createClient(Ludo, createGrpcWebTransport({ baseUrl: opts.importBase, httpVersion: '1.1' }));
const called = new Set();
const call = async (name, request, options, via = client) => {
  called.add(name);
  return via[name](request, options);
};
const as = (token) => ({ headers: { authorization: `Bearer ${token}` }, timeoutMs: 30000 });
const spectator = { timeoutMs: 30000 };

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

/// The refused call's gRPC code and ErrorInfo, as connect exposes them.
async function refused(rpc, what, promise) {
  try {
    await promise;
  } catch (e) {
    const err = ConnectError.from(e);
    const info = err.findDetails(ErrorInfo)[0];
    const bad = err.findDetails(BadRequest)[0];
    return {
      rpc,
      what,
      code: err.code,
      code_name: Code[err.code],
      message: err.rawMessage,
      reason: info?.reason ?? null,
      domain: info?.domain ?? null,
      metadata: info ? { ...info.metadata } : null,
      field_violations: bad ? bad.fieldViolations.map((v) => v.field) : null,
      details: err.details.length,
    };
  }
  throw new Error(`${rpc} (${what}) was not refused`);
}

/// Every update of a WatchGame stream until it ends.
async function watch(request, options) {
  called.add('watchGame');
  const seqs = [];
  let finished = false;
  let views = 0;
  for await (const update of client.watchGame(request, options)) {
    seqs.push(Number(update.event.seq));
    if (update.view?.game?.case === 'cardinal') views += 1;
    finished = update.status?.state?.case === 'finished';
  }
  return { seqs, ended: true, last_finished: finished, views };
}

const inOrder = (seqs, from, to) => seqs.length === to - from + 1 && seqs.every((s, i) => s === from + i);

// ---------------------------------------------------------------------------
// The transparency log, checked independently of the server's code: C2SP
// signed-note verifier keys and checkpoints, RFC 6962 (RFC 9162 §2.1) proofs.

const sha256 = (...parts) => createHash('sha256').update(Buffer.concat(parts.map((p) => Buffer.from(p)))).digest();
const leafHash = (leaf) => sha256([0x00], Buffer.from(leaf, 'utf8'));
const nodeHash = (left, right) => sha256([0x01], left, right);
const hash64 = (text) => {
  const bytes = Buffer.from(text, 'base64');
  check(bytes.length === 32 && bytes.toString('base64') === text, `a hash is 32 bytes of base64: ${text}`);
  return bytes;
};

/// A verifier key `name+keyid+base64(0x01 ‖ Ed25519 public key)`: its parts, its key id recomputed.
function openKey(key) {
  // The name holds no '+'; base64 may.
  const [, name, id, encoded] = key.match(/^([^+]+)\+([0-9a-f]{8})\+(.+)$/) ?? [];
  const raw = Buffer.from(encoded ?? '', 'base64');
  check(raw.length === 33 && raw[0] === 0x01 && raw.toString('base64') === encoded, `an Ed25519 verifier key: ${key}`);
  const computedId = sha256(Buffer.from(`${name}\n`, 'utf8'), raw).subarray(0, 4).toString('hex');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(1).toString('base64url') }, format: 'jwk' });
  return { name, id, computedId, publicKey };
}

/// A signed checkpoint opened with `key`: the tree it signs, or null when no
/// signature of that key checks out.
function openCheckpoint(note, key) {
  const split = note.lastIndexOf('\n\n');
  check(split > 0 && note.endsWith('\n'), 'a signed note: text, a blank line, signatures');
  const text = note.slice(0, split + 1);
  const signed = note
    .slice(split + 2)
    .trimEnd()
    .split('\n')
    .map((line) => line.match(/^\u2014 (\S+) (\S+)$/))
    .filter((m) => m && m[1] === key.name)
    .map((m) => Buffer.from(m[2], 'base64'))
    .some(
      (sig) =>
        sig.length === 68 &&
        sig.subarray(0, 4).toString('hex') === key.id &&
        verifySignature(null, Buffer.from(text, 'utf8'), key.publicKey, sig.subarray(4)),
    );
  if (!signed) return null;
  const [origin, size, root] = text.split('\n');
  check(/^[0-9]+$/.test(size), `a checkpoint's second line is its size: ${size}`);
  return { origin, size: Number(size), root: hash64(root).toString('base64') };
}

/// Whether `proof` leads from `leaf` at `index` to `root` of a tree of `size` leaves.
function included(leaf, index, size, proof, root) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash(leaf);
  for (const p of proof.map(hash64)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(hash64(root));
}

/// Whether `proof` shows the tree of `from` leaves (root `oldRoot`) to be a
/// prefix of the tree of `to` leaves (root `newRoot`).
function consistent(from, to, proof, oldRoot, newRoot) {
  if (from === to) return proof.length === 0 && oldRoot === newRoot;
  if (from === 0 || from > to) return from === 0 && proof.length === 0;
  const path = proof.map(hash64);
  if ((from & (from - 1)) === 0) path.unshift(hash64(oldRoot));
  if (path.length === 0) return false;
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(hash64(oldRoot)) && sr.equals(hash64(newRoot));
}

/// A leaf's lines as `{ first word: the rest }`.
const leafFacts = (leaf) =>
  Object.fromEntries(
    leaf
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => [line.split(' ')[0], line.split(' ').slice(1).join(' ')]),
  );

/// What a receipt shows, checked with `key` (the key GetLog published).
function receiptSummary(receipt, key, id) {
  if (!receipt) return null;
  const tree = openCheckpoint(receipt.checkpoint, key);
  const facts = leafFacts(receipt.leaf);
  return {
    leaf_index: Number(receipt.leafIndex),
    key_is_the_logs: receipt.key === key.text,
    format: receipt.leaf.split('\n')[0],
    names_the_game: facts.game === id,
    records: Number(facts.records),
    last_is_a_hash: /^[0-9a-f]{64}$/.test(facts.last ?? ''),
    outcome: facts.outcome ?? null,
    winners: facts.winners ?? null,
    forfeits: facts.forfeits ?? null,
    signed: tree !== null,
    tree_size: tree?.size ?? null,
    included: tree !== null && included(receipt.leaf, Number(receipt.leafIndex), tree.size, receipt.inclusion, tree.root),
  };
}

// ---------------------------------------------------------------------------

const summary = {
  client: {
    node: process.version,
    '@connectrpc/connect': installedVersion('@connectrpc/connect'),
    '@connectrpc/connect-node': installedVersion('@connectrpc/connect-node'),
    '@bufbuild/protobuf': installedVersion('@bufbuild/protobuf'),
    transport: 'grpc-web',
    http: '1.1',
  },
  service: Ludo.typeName,
  methods: Ludo.methods.map((m) => ({ name: m.name, kind: m.methodKind })),
};

const kinds = await call('listKinds', {}, spectator);
summary.kinds = kinds.kinds.map((k) => k.kind);

// The log before any game ended: a key, no checkpoint, no tree; the empty tree is consistent with itself.
const emptyLog = await call('getLog', {}, spectator);
const emptyProof = await call('getConsistencyProof', { from: 0n, to: 0n }, spectator);
summary.log = {
  empty: {
    origin: emptyLog.origin,
    key_id: emptyLog.keyId,
    checkpoint: emptyLog.checkpoint ?? null,
    tree: emptyLog.tree ?? null,
    proof: { from: Number(emptyProof.from), to: Number(emptyProof.to), hashes: emptyProof.proof.length },
  },
};

const created = await call(
  'createGame',
  { kind: 'cardinal', players: ['Ann', 'Bob'], options: { game: { case: 'cardinal', value: { firstSeat: 0 } } } },
  spectator,
);
const id = created.id;
const token = (seat) => created.seats.find((s) => s.seat === seat).token;
check(created.seats.length === 2 && created.seats.every((s) => s.token.length > 0), 'every seat has a token');

// A spectator watches live from record 0 while the game is played.
const live = watch({ id, from: 0n }, { timeoutMs: 120000 });

const errors = [];
errors.push(await refused('getGame', 'an unknown game', call('getGame', { id: 'no-such-game' }, spectator)));
errors.push(await refused('getReplay', 'a version past the end', call('getReplay', { id, at: 1000n }, spectator)));
const first = await call('listLegalMoves', { id }, as(token(0)));
const known = await call('getSeatKnowledge', { id }, as(token(0)));
summary.knowledge = { kind: known.kind, seat: known.seat, version: Number(known.version), info_is_json: typeof JSON.parse(known.infoJson) === 'object' };
errors.push(await refused('getSeatKnowledge', 'what a spectator knows', call('getSeatKnowledge', { id }, spectator)));
check(first.seat === 0 && first.moves.length > 0, 'seat 0 moves first');
errors.push(await refused('submitMove', 'the other seat moves', call('submitMove', { id, move: first.moves[0] }, as(token(1)))));
errors.push(await refused('submitMove', 'a move without a token', call('submitMove', { id, move: first.moves[0] }, spectator)));
errors.push(
  await refused(
    'submitMove',
    'a colour that does not exist',
    call('submitMove', { id, move: { game: { case: 'cardinal', value: { kind: { case: 'build', value: { shape: 1, colour: 9, x: 0, y: 1 } } } } } }, as(token(0))),
  ),
);
errors.push(
  await refused('submitMove', 'a stale expected version', call('submitMove', { id, move: first.moves[0], expectedVersion: 5n }, as(token(0)))),
);

// Play to the end: the seat to move plays its first legal move, conditional on the version.
let state = await call('getGame', { id }, as(token(0)));
let moves = 0;
let retried = null;
// The receipts the answers carried: the move that ended the game, the resignation, the cancellation.
const receipts = {};
while (state.status.state.case === 'inProgress') {
  const seat = state.status.state.value.toMove[0];
  const legal = await call('listLegalMoves', { id }, as(token(seat)));
  check(legal.seat === seat && legal.moves.length > 0, `seat ${seat} has legal moves`);
  const request = { id, move: legal.moves[0], expectedVersion: legal.version, requestId: `move-${moves}` };
  const accepted = await call('submitMove', request, as(token(seat)));
  check(accepted.version === legal.version + 1n, 'each move adds one record');
  if (accepted.receipt) {
    receipts.move = { at: Number(accepted.version), finished: accepted.status.state.case === 'finished', receipt: accepted.receipt };
  }
  if (retried === null) {
    // An exact retry answers as the first time and appends nothing.
    const again = await call('submitMove', request, as(token(seat)));
    retried = { same_version: again.version === accepted.version, effects: again.effects.length === accepted.effects.length };
  }
  moves += 1;
  check(moves < 500, 'the game ends');
  state = await call('getGame', { id }, as(token(seat)));
}
const version = Number(state.version);
summary.game = {
  id,
  moves,
  version,
  finished: state.status.state.case === 'finished',
  winners: state.status.state.value.winners,
  scores: state.status.state.value.scores,
  seed_revealed: typeof state.seed === 'string' && state.seed.length === 64,
  view: state.view?.game?.case ?? null,
  retried,
};
errors.push(await refused('submitMove', 'a move after the end', call('submitMove', { id, move: first.moves[0] }, as(token(0)))));
errors.push(await refused('setAutopilot', 'a bot of no level', call('setAutopilot', { id, bot: { level: 0 } }, as(token(0)))));
errors.push(await refused('setAutopilot', 'a hand-over after the end', call('setAutopilot', { id, bot: { level: 1 } }, as(token(0)))));

// Autopilot on a second game: seat 1 handed to a random bot, then taken back
// before its turn (seat 0 moves first), each a record.
const other = await call(
  'createGame',
  { kind: 'cardinal', players: ['Cy', 'Di'], options: { game: { case: 'cardinal', value: { firstSeat: 0 } } }, bots: {} },
  spectator,
);
const otherToken = (seat) => other.seats.find((s) => s.seat === seat).token;
const handed = await call('setAutopilot', { id: other.id, bot: { level: 1, thinkMs: 5000 } }, as(otherToken(1)));
const back = await call('setAutopilot', { id: other.id }, as(otherToken(1)));
const otherState = await call('getGame', { id: other.id }, spectator);
summary.autopilot = {
  handed: { version: Number(handed.version), seat: handed.seat, level: handed.bot?.level ?? null, think_ms: handed.bot?.thinkMs ?? null },
  back: { version: Number(back.version), bot: back.bot ?? null },
  seats_with_bots: otherState.seats.filter((s) => s.bot).length,
};

// Seats and clocks: a duel with seat 1 open and a clock, joined by
// invitation; the admin gives seat 0 a new token, and seat 0 resigns (the
// duel ends). A public game: a player joins and leaves, a bot takes a seat
// for the admin, and the admin cancels it.
const duel = await call(
  'createGame',
  { kind: 'cardinal', players: ['Eve', ''], openSeats: [1], clock: { moveMs: 600000n, onTimeout: 1 } },
  spectator,
);
const duelWaiting = (await call('getGame', { id: duel.id }, spectator)).status.state.case;
const invitation = duel.invitations.find((i) => i.seat === 1).code;
const fay = await call('joinGame', { id: duel.id, name: 'Fay', invitation }, spectator);
errors.push(await refused('joinGame', 'an invitation used after the start', call('joinGame', { id: duel.id, name: 'Gus', invitation }, spectator)));
const duelStarted = await call('getGame', { id: duel.id }, spectator);
const reissued = await call('reissueToken', { id: duel.id, seat: 0 }, as(duel.adminToken));
errors.push(await refused('resign', 'a token replaced', call('resign', { id: duel.id }, as(duel.seats[0].token))));
const resigned = await call('resign', { id: duel.id }, as(reissued.token));
const lobby = await call('createGame', { kind: 'cardinal', players: ['', '', ''], openSeats: [0, 1, 2], public: true }, spectator);
const hal = await call('joinGame', { id: lobby.id, name: 'Hal' }, spectator);
const left = await call('leaveGame', { id: lobby.id }, as(hal.token));
const botted = await call('setSeatBot', { id: lobby.id, seat: 2, bot: { level: 1 }, name: 'Robo' }, as(lobby.adminToken));
const cancelled = await call('cancelGame', { id: lobby.id }, as(lobby.adminToken));
summary.seats = {
  waiting: duelWaiting,
  invitations: duel.invitations.length,
  joined: { seat: fay.seat, version: Number(fay.version), state: fay.status.state.case },
  clock: Number(duelStarted.clock?.moveMs ?? 0),
  deadline: typeof duelStarted.status.state.value.clock?.seats?.find((s) => s.deadline)?.deadline === 'string',
  reissued: { seat: reissued.seat, version: Number(reissued.version) },
  resigned: {
    state: resigned.status.state.case,
    winners: resigned.status.state.value.winners,
    forfeits: resigned.status.state.value.forfeits.map((f) => [f.seat, f.reason]),
  },
  public_join: { seat: hal.seat, state: hal.status.state.case },
  left: left.status.state.case,
  botted: botted.status.state.value.openSeats ?? null,
  cancelled: cancelled.status.state.case,
};

summary.watch = { live: await live };
summary.watch.live.in_order = inOrder(summary.watch.live.seqs, 0, version);
// After the end: from record 3, everything is sent and the stream ends.
summary.watch.after = await watch({ id, from: 3n }, { timeoutMs: 60000 });
summary.watch.after.in_order = inOrder(summary.watch.after.seqs, 3, version);
for (const w of [summary.watch.live, summary.watch.after]) {
  w.count = w.seqs.length;
  w.first = w.seqs[0] ?? null;
  w.last = w.seqs.at(-1) ?? null;
  delete w.seqs;
}

const listed = await call('listGames', { kind: 'cardinal', state: 2, limit: 1000 }, spectator);
summary.list = { found: listed.games.some((g) => g.id === id && Number(g.version) === version && g.finishedAt) };

// Events in pages of 7, following next_from.
const seqs = [];
let from = 0n;
let pages = 0;
for (;;) {
  const page = await call('listEvents', { id, from, limit: 7 }, spectator);
  pages += 1;
  for (const e of page.events) seqs.push(Number(e.seq));
  if (page.nextFrom === undefined) break;
  from = page.nextFrom;
}
const events = await call('listEvents', { id, from: 0n, limit: 2 }, spectator);
summary.events = {
  pages,
  in_order: inOrder(seqs, 0, version),
  created: events.events[0].record.case === 'gameCreated',
  moved: events.events[1].record.case === 'move',
  hashes: events.events.every((e) => /^[0-9a-f]{64}$/.test(e.hash)),
};

const steps = await call('listSteps', { id, from: 0n, limit: 1000 }, spectator);
const lines = steps.steps.flatMap((s) => s.lines);
summary.steps = {
  count: steps.steps.length,
  every_step_says_something: steps.steps.every((s) => s.lines.length > 0),
  first: lines[0],
  a_build: lines.find((l) => l.includes(' built ')) ?? null,
  last: lines.at(-1),
};

const replay0 = await call('getReplay', { id, at: 0n }, spectator);
const replay1 = await call('getReplay', { id, at: 1n }, spectator);
summary.replay = {
  at0: Number(replay0.version),
  at1: Number(replay1.version),
  latest: Number(replay1.latestVersion),
  at1_in_progress: replay1.status.state.case === 'inProgress',
  view: replay1.view?.game?.case ?? null,
};

const exported = await call('exportGame', { id }, spectator);
const exportText = new TextDecoder().decode(exported.export);
const report = await call('verifyGame', { export: exported.export }, spectator);
// Tampered: one byte of record 5 (line 7 of the export) flipped.
const tampered = Uint8Array.from(exported.export);
const lineStarts = [0];
tampered.forEach((b, i) => b === 0x0a && lineStarts.push(i + 1));
tampered[lineStarts[6] + Math.floor((lineStarts[7] - lineStarts[6]) / 2)] ^= 0x01;
const bad = await call('verifyGame', { export: tampered }, spectator);
summary.export = { lines: exportText.trimEnd().split('\n').length, bytes: exported.export.length };
const exportedReceipt = JSON.parse(exportText.split('\n')[0]).receipt ?? null;
summary.verify = {
  valid: report.valid,
  chain_intact: report.chainIntact,
  seed: report.seed,
  replayed: report.replayed,
  records: Number(report.records),
  finished: report.status?.state?.case === 'finished',
  tampered_valid: bad.valid,
  tampered_fault_line: bad.fault ? Number(bad.fault.line) : null,
  tampered_fault_seq: bad.fault?.seq === undefined ? null : Number(bad.fault.seq),
};

// Imports are the operator's: its token in the metadata.
const operator = as(opts.operatorToken);
errors.push(await refused('importGame', 'no operator token', call('importGame', { export: exported.export }, spectator, importClient)));
errors.push(await refused('importGame', 'a tampered export', call('importGame', { export: tampered }, operator, importClient)));
const imported = await call('importGame', { export: exported.export }, operator, importClient);
const again = await importClient.getGame({ id }, spectator);
summary.import = {
  id: imported.id,
  version: Number(imported.version),
  finished: imported.status.state.case === 'finished',
  same_game: again.seedCommitment === state.seedCommitment && Number(again.version) === version,
  // Imported from the key that signed the bundle, and said so by the game too.
  origin_is_the_bundles: imported.imported?.key === exportedReceipt?.key && again.imported?.key === exportedReceipt?.key,
};
errors.push(await refused('importGame', 'the same game twice', call('importGame', { export: exported.export }, operator, importClient)));

// The transparency log after three games ended (the played game, the
// resigned duel, the cancelled lobby), in that order: leaves 0, 1 and 2.
const log = await call('getLog', {}, spectator);
const key = { ...openKey(log.key), text: log.key };
const latest = log.checkpoint === undefined ? null : openCheckpoint(log.checkpoint, key);
const gameReceipt = await call('getReceipt', { id }, spectator);
const duelReceipt = await call('getReceipt', { id: duel.id }, spectator);
const lobbyReceipt = await call('getReceipt', { id: lobby.id }, spectator);
const size = latest?.size ?? 0;
// Receipts compared field by field (a proto message, or the export's JSON).
const sameReceipt = (a, b) =>
  !!a &&
  !!b &&
  a.key === b.key &&
  BigInt(a.leafIndex ?? a.leaf_index) === BigInt(b.leafIndex ?? b.leaf_index) &&
  a.leaf === b.leaf &&
  a.checkpoint === b.checkpoint &&
  a.inclusion.join() === b.inclusion.join();
summary.log.after = {
  origin: log.origin,
  key_names_origin_and_id: key.name === log.origin && key.id === log.keyId && key.computedId === log.keyId,
  key_id_is_hex: /^[0-9a-f]{8}$/.test(log.keyId),
  same_key_as_before: log.key !== '' && log.keyId === emptyLog.keyId,
  checkpoint_signed: latest !== null,
  tree: log.tree ? { origin: log.tree.origin, size: Number(log.tree.size), root_matches: log.tree.root === latest?.root } : null,
  latest_is_the_last_receipts: log.checkpoint === lobbyReceipt.checkpoint,
};
summary.log.receipts = {
  game: receiptSummary(gameReceipt, key, id),
  duel: receiptSummary(duelReceipt, key, duel.id),
  lobby: receiptSummary(lobbyReceipt, key, lobby.id),
};
summary.log.game_records_match = Number(leafFacts(gameReceipt.leaf).records) === version + 1;
// The same receipt wherever it is given: the ending answer, the game state, the export.
summary.log.answers_carry_it = {
  move: receipts.move ? { at: receipts.move.at, finished: receipts.move.finished, same: sameReceipt(receipts.move.receipt, gameReceipt) } : null,
  state: sameReceipt(state.receipt, gameReceipt),
  state_now: sameReceipt((await call('getGame', { id }, spectator)).receipt, gameReceipt),
  in_progress_state: (await call('getGame', { id: other.id }, spectator)).receipt ?? null,
  export: sameReceipt(exportedReceipt, gameReceipt),
  resigned: sameReceipt(resigned.receipt, duelReceipt),
  cancelled: sameReceipt(cancelled.receipt, lobbyReceipt),
  left: left.receipt ?? null,
};
// Every older signed tree (each receipt's checkpoint) is a prefix of the latest.
const trees = [gameReceipt, duelReceipt, lobbyReceipt].map((r) => openCheckpoint(r.checkpoint, key));
summary.log.consistency = [];
for (const old of [{ size: 0, root: '' }, ...trees]) {
  if (!old || !latest) continue;
  const proof = await call('getConsistencyProof', { from: BigInt(old.size), to: BigInt(size) }, spectator);
  summary.log.consistency.push({
    from: Number(proof.from),
    to: Number(proof.to),
    hashes: proof.proof.length,
    consistent: consistent(old.size, size, proof.proof, old.root || latest.root, latest.root),
  });
}
// A forged leaf is not included, a wrong old root not consistent: the checks above can fail.
const forged = gameReceipt.leaf.replace(/^records .*$/m, 'records 1');
const firstProof = await call('getConsistencyProof', { from: 1n, to: BigInt(size) }, spectator);
summary.log.checks_can_fail = {
  forged_leaf_included: trees[0] !== null && included(forged, 0, trees[0].size, gameReceipt.inclusion, trees[0].root),
  wrong_root_consistent: trees[1] !== null && consistent(1, size, firstProof.proof, trees[1].root, latest?.root ?? ''),
  // A checkpoint claiming one more leaf than was signed.
  altered_checkpoint_signed: openCheckpoint((log.checkpoint ?? '').replace(`\n${size}\n`, `\n${size + 1}\n`), key) !== null,
};
summary.verify.receipt = report.receipt
  ? {
      key_is_the_logs: report.receipt.key === log.key,
      key_id: report.receipt.keyId === log.keyId,
      trusted: report.receipt.trusted,
      signature: report.receipt.signature,
      tree_size: report.receipt.tree ? Number(report.receipt.tree.size) : null,
      leaf_index: Number(report.receipt.leafIndex),
      leaf_matches: report.receipt.leafMatches,
      included: report.receipt.included,
    }
  : null;
errors.push(await refused('getReceipt', 'a game still being played', call('getReceipt', { id: other.id }, spectator)));
errors.push(await refused('getReceipt', 'an unknown game', call('getReceipt', { id: 'no-such-game' }, spectator)));
errors.push(
  await refused('getConsistencyProof', 'a tree larger than the log', call('getConsistencyProof', { from: 1n, to: BigInt(size + 1) }, spectator)),
);
errors.push(await refused('getConsistencyProof', 'from after to', call('getConsistencyProof', { from: 2n, to: 1n }, spectator)));

summary.errors = errors;
summary.called = Ludo.methods.map((m) => m.localName).filter((name) => called.has(name));
summary.not_called = Ludo.methods.map((m) => m.localName).filter((name) => !called.has(name));

process.stdout.write(`${JSON.stringify(summary, (_, v) => (typeof v === 'bigint' ? Number(v) : v), 2)}\n`);
