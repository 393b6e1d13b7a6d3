// What the audit page checks by itself, without trusting the server's word:
// SHA-256 (WebCrypto, or a small local one off a secure context), a log's
// key and its id, a C2SP signed note's Ed25519 signature (where this
// browser's WebCrypto has Ed25519), a C2SP tlog-checkpoint, a game's leaf,
// and RFC 6962 inclusion and consistency proofs.
//
// Formats: C2SP signed-note and tlog-checkpoint (c2sp.org),
// RFC 6962 §2.1 hashing and the proof checks of RFC 9162 §2.1.3.2, §2.1.4.2.

const utf8 = new TextEncoder();

export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Standard base64 to bytes; throws on anything else. */
export function base64Bytes(text) {
  const clean = String(text);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) throw new Error(`\`${clean.slice(0, 64)}\` is not base64`);
  const binary = atob(clean);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** SHA-256 with WebCrypto; on a page that is not a secure context (no crypto.subtle), a small local one. */
export async function sha256(bytes) {
  if (globalThis.crypto && crypto.subtle && typeof crypto.subtle.digest === 'function') {
    return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  }
  return sha256Fallback(bytes);
}

export async function sha256Hex(bytes) {
  return toHex(await sha256(bytes));
}

// ---------------------------------------------------------------------------
// Keys and signed notes.

/**
 * A C2SP signed-note verifier key, `name+keyid+base64(0x01 ‖ Ed25519 public key)`:
 * `{ name, id, publicKey, idMatches }`, where `idMatches` says whether the id
 * is the key's own (the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ key)).
 * Throws for text that is not such a key.
 */
export async function parseKey(text) {
  // The name and the id hold no `+`; the base64 after them may.
  const found = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/.exec(String(text).trim());
  if (!found) throw new Error('not a verifier key (name+keyid+base64)');
  const [, name, id, encoded] = found;
  const raw = base64Bytes(encoded);
  if (raw.length !== 33 || raw[0] !== 1) throw new Error('not an Ed25519 verifier key');
  const digest = await sha256(concat(utf8.encode(name), Uint8Array.of(0x0a), raw));
  return { name, id, publicKey: raw.slice(1), idMatches: toHex(digest.slice(0, 4)) === id };
}

/**
 * A signed note: its text (up to the blank line, newline included) and its
 * signature lines `— name base64(keyid ‖ signature)`. Throws when it is not one.
 */
export function parseNote(note) {
  const all = String(note);
  const split = all.lastIndexOf('\n\n');
  if (split < 0 || !all.endsWith('\n')) throw new Error('the checkpoint is not a signed note (no blank line before its signatures)');
  const signatures = all.slice(split + 2).split('\n').filter((line) => line !== '').map((line) => {
    const found = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!found) throw new Error(`not a signature line: ${line.slice(0, 80)}`);
    const raw = base64Bytes(found[2]);
    if (raw.length < 5) throw new Error('a signature line too short to hold a key id and a signature');
    return { name: found[1], id: toHex(raw.slice(0, 4)), signature: raw.slice(4) };
  });
  return { text: all.slice(0, split + 1), signatures };
}

/**
 * A checkpoint's lines: origin, tree size, root hash (base64), then
 * optional extension lines. `{ origin, size, root }`; throws when malformed.
 */
export function parseCheckpoint(text) {
  const lines = String(text).split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new Error('the signed text is not a checkpoint (origin, size, root)');
  const [origin, sizeText, root] = lines;
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new Error(`the checkpoint's size \`${sizeText.slice(0, 40)}\` is not a number this page can check`);
  }
  if (base64Bytes(root).length !== 32) throw new Error('the checkpoint\'s root is not a 32-byte hash');
  return { origin, size: Number(sizeText), root };
}

/** The key as a WebCrypto Ed25519 key, or null where this browser has no Ed25519. */
async function ed25519Key(publicKey) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  try {
    return await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  } catch {
    return null;
  }
}

/**
 * Opens a signed checkpoint with `key` (from `parseKey`):
 * `{ tree, signed, reason }`, where `signed` is true or false once checked
 * here, and null when this browser cannot check Ed25519 (`reason` says why
 * not, or what is wrong). Throws for text that is no checkpoint.
 */
export async function openCheckpoint(note, key) {
  const { text, signatures } = parseNote(note);
  const tree = parseCheckpoint(text);
  if (tree.origin !== key.name) {
    return { tree, signed: false, reason: `the checkpoint's origin \`${tree.origin}\` is not the key's name \`${key.name}\`` };
  }
  const line = signatures.find((s) => s.name === key.name && s.id === key.id);
  if (!line) return { tree, signed: false, reason: `the checkpoint carries no signature by key ${key.id}` };
  const webKey = await ed25519Key(key.publicKey);
  if (!webKey) return { tree, signed: null, reason: 'this browser’s WebCrypto has no Ed25519' };
  const signed = line.signature.length === 64 && await crypto.subtle.verify({ name: 'Ed25519' }, webKey, line.signature, utf8.encode(text));
  return { tree, signed, reason: signed ? '' : `the Ed25519 signature by key ${key.id} does not check out` };
}

// ---------------------------------------------------------------------------
// The game's leaf.

/**
 * The leaf a game's head makes (the server's `GameHead::leaf`): its id, its
 * record count, its last record's hash and its outcome, one fact a line.
 * Null while the game is not over.
 */
export function gameLeaf({ id, records, lastHash, status }) {
  const head = `ludotheque/game-head/v1\ngame ${id}\nrecords ${records}\nlast ${lastHash}\n`;
  const list = (items) => items.map((x) => ` ${x}`).join('');
  if (status && status.state === 'finished') {
    const result = status.result || {};
    return `${head}outcome finished\nscores${list(result.scores || [])}\nwinners${list(result.winners || [])}\n`
      + `forfeits${list((status.forfeits || []).map((f) => `${f.seat}:${f.reason}`))}\n`;
  }
  if (status && status.state === 'cancelled') return `${head}outcome cancelled\n`;
  return null;
}

/** The first line where `found` departs from `expected`, in words; '' when they are the same. */
export function leafDifference(expected, found) {
  if (expected === found) return '';
  const want = expected.split('\n');
  const got = found.split('\n');
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (want[i] !== got[i]) {
      if (got[i] == null) return `the leaf lacks the line \`${want[i]}\``;
      if (want[i] == null) return `the leaf has a line more: \`${got[i].slice(0, 120)}\``;
      return `the leaf says \`${got[i].slice(0, 120)}\` where this game says \`${want[i]}\``;
    }
  }
  return 'the leaf is not this game’s head';
}

// ---------------------------------------------------------------------------
// RFC 6962 Merkle trees.

const leafHash = (bytes) => sha256(concat(Uint8Array.of(0), bytes));
const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/**
 * Whether `proof` (base64 hashes, from the leaf's sibling up) leads from
 * the leaf text `leaf`, at `index`, to `root` (base64) of the tree of
 * `size` leaves (RFC 9162 §2.1.3.2).
 */
export async function checkInclusion(leaf, index, proof, size, root) {
  let fn = BigInt(index);
  let sn = BigInt(size) - 1n;
  if (fn > sn) return false;
  let r = await leafHash(utf8.encode(leaf));
  for (const p of proof.map(base64Bytes)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = await nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && sameBytes(r, base64Bytes(root));
}

/**
 * Whether `proof` (base64 hashes) shows the tree of `first` leaves with
 * root `firstRoot` to be a prefix of the tree of `second` leaves with root
 * `secondRoot` (RFC 9162 §2.1.4.2): nothing it held was dropped or changed.
 */
export async function checkConsistency(first, firstRoot, second, secondRoot, proof) {
  const oldRoot = base64Bytes(firstRoot);
  const newRoot = base64Bytes(secondRoot);
  let path = proof.map(base64Bytes);
  if (first > second) return false;
  if (first === second) return path.length === 0 && sameBytes(oldRoot, newRoot);
  if (first === 0) return path.length === 0;
  if (path.length === 0) return false;
  let fn = BigInt(first) - 1n;
  let sn = BigInt(second) - 1n;
  // The first tree is a complete subtree: its root starts the path.
  if ((BigInt(first) & (BigInt(first) - 1n)) === 0n) path = [oldRoot, ...path];
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && sameBytes(fr, oldRoot) && sameBytes(sr, newRoot);
}

// ---------------------------------------------------------------------------
// SHA-256 where WebCrypto is missing (a page served over plain HTTP to
// another machine is not a secure context).

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

function sha256Fallback(data) {
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const len = data.length;
  const padded = new Uint8Array(((len + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[len] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor((len * 8) / 2 ** 32));
  view.setUint32(padded.length - 4, (len * 8) >>> 0);
  const w = new Uint32Array(64);
  const rot = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rot(w[i - 15], 7) ^ rot(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rot(w[i - 2], 17) ^ rot(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  h.forEach((v, i) => ov.setUint32(i * 4, v));
  return out;
}
