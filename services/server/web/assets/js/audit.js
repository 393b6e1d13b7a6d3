// Audit: the hash chain (through POST /v1/verify), the seed against its
// commitment (checked here with WebCrypto), the export download, and a box
// that verifies any export file.
import { api } from './api.js';
import { el, errorPanel, gamePath, kindName, listJoin, resultText, seatLabel, stateWord, when } from './words.js';

export async function show(app, { id }) {
  const chain = el('div', { id: 'chain-status', class: 'check', 'data-valid': 'pending', role: 'status', 'aria-live': 'polite' }, 'Checking the hash chain…');
  const seed = el('div', { id: 'seed-status', class: 'check', 'data-valid': 'pending', role: 'status', 'aria-live': 'polite' }, 'Checking the seed…');
  const summary = el('dl', { class: 'facts small', id: 'audit-facts' });
  const download = el('a', {
    id: 'download-export', class: 'btn', href: `/v1/games/${encodeURIComponent(id)}/export`, download: `${id}.jsonl`,
    type: 'application/x-ndjson',
  }, 'Download the export (.jsonl)');
  const title = el('h1', { class: 'game-title' }, 'Audit');

  const fileInput = el('input', { type: 'file', id: 'verify-file', accept: '.jsonl,.ndjson,.json,.txt,application/x-ndjson,text/plain', 'aria-describedby': 'verify-help' });
  const result = el('div', { id: 'verify-result', class: 'check', 'data-valid': '', role: 'status', 'aria-live': 'polite' });
  const firstBad = el('p', { id: 'verify-first-bad', class: 'first-bad' });
  const drop = el('label', { for: 'verify-file', class: 'drop' },
    el('span', {}, 'Choose an export file, or drop it here'), fileInput);

  app.replaceChildren(
    el('div', { class: 'game-head' }, el('div', {}, title,
      el('p', { class: 'muted small' }, el('a', { href: gamePath(id, 'watch') }, 'Current state'), ' · ', el('a', { href: gamePath(id, 'replay') }, 'Replay')))),
    el('div', { class: 'audit-grid' },
      el('section', { class: 'panel', 'aria-labelledby': 'this-game' },
        el('h2', { id: 'this-game' }, 'This game’s record'),
        el('p', { class: 'muted small' }, 'Every record carries the hash of the one before it, so no move can be changed, removed or slipped in without breaking the chain. The seed that shuffled and dealt was committed to (its SHA-256 published) when the game was created, and is revealed when it ends.'),
        el('h3', {}, 'Hash chain'), chain,
        el('h3', {}, 'Seed commitment'), seed,
        summary,
        el('p', {}, download)),
      el('section', { class: 'panel', 'aria-labelledby': 'verify-title' },
        el('h2', { id: 'verify-title' }, 'Verify a file'),
        el('p', { class: 'muted small', id: 'verify-help' }, 'Check any export (from this server or another) through /v1/verify: the chain, the seed and a re-play of every move. Nothing is stored.'),
        drop, result, firstBad)));

  fileInput.addEventListener('change', () => {
    const file = fileInput.files && fileInput.files[0];
    if (file) verifyFile(file, result, firstBad);
  });
  for (const type of ['dragenter', 'dragover']) {
    drop.addEventListener(type, (ev) => {
      ev.preventDefault();
      drop.classList.add('dragging');
    });
  }
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    const file = ev.dataTransfer && ev.dataTransfer.files[0];
    if (file) verifyFile(file, result, firstBad);
  });

  // This game: its state (seats, status, commitment), its export and the report.
  let game;
  try {
    game = (await api.game(id)).json;
  } catch (err) {
    if (err.status === 404) throw err;
    chain.dataset.valid = 'error';
    chain.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
    seed.dataset.valid = 'error';
    seed.textContent = 'Unknown: the game could not be read.';
    return;
  }
  document.title = `Audit · ${kindName(game.kind)} · Ludothèque`;
  title.textContent = `Audit: ${kindName(game.kind)}, ${listJoin(game.seats.map(seatLabel))}`;
  const finished = game.status.state === 'finished';
  facts(summary, [
    ['Game', game.id],
    ['Created', when(game.created_at)],
    ['State', finished ? resultText(game.status.result, game.seats, game.kind, game.status.forfeits) : `${stateWord(game.status)}, version ${game.version}`],
    ['Ruleset', game.ruleset],
    ['Seed commitment', game.seed_commitment],
  ]);

  let text;
  try {
    text = await api.exportText(id);
  } catch (err) {
    chain.dataset.valid = 'error';
    chain.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
  }
  let header = null;
  let records = [];
  if (text != null) {
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    try {
      header = JSON.parse(lines[0]);
      // The records, then (a finished game's) lines revealing what they hid.
      const count = Number.isInteger(header.records) ? header.records : lines.length - 1;
      records = lines.slice(1, 1 + count).map((l) => JSON.parse(l));
    } catch {
      /* the report names what is wrong */
    }
    try {
      const report = await api.verify(text);
      showChain(chain, report, records, header);
    } catch (err) {
      chain.dataset.valid = 'error';
      chain.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
    }
  }

  // The seed: revealed at the end; its SHA-256 must be the commitment of record 0.
  const commitment = (records[0] && records[0].seed_commitment) || game.seed_commitment;
  const revealed = game.seed || (header && header.seed) || null;
  if (!revealed) {
    seed.dataset.valid = 'sealed';
    seed.replaceChildren(
      el('p', {}, el('strong', {}, 'Still sealed. '), 'The seed stays secret while the game runs (it would reveal the cards to come). It is published when the game ends, and this page then checks it against the commitment.'),
      el('p', { class: 'mono small break' }, `Commitment: ${commitment}`));
  } else {
    try {
      const digest = await sha256Hex(hexBytes(revealed));
      const ok = digest === String(commitment).toLowerCase() && (!game.seed_commitment || digest === game.seed_commitment);
      seed.dataset.valid = ok ? 'true' : 'false';
      seed.replaceChildren(
        el('p', {}, el('strong', {}, ok ? '✓ The seed matches its commitment. ' : '✗ The seed does not match its commitment. '),
          ok ? 'The seed revealed at the end hashes (SHA-256, computed in this browser) to the commitment published when the game was created: the deal was fixed before the first move.'
            : 'The seed revealed at the end does not hash to the commitment published at creation.'),
        el('p', { class: 'mono small break' }, `Seed: ${revealed}`),
        el('p', { class: 'mono small break' }, `SHA-256: ${digest}`),
        el('p', { class: 'mono small break' }, `Commitment: ${commitment}`));
    } catch (err) {
      seed.dataset.valid = 'false';
      seed.textContent = `The seed could not be checked: ${err.message}`;
    }
  }
}

function facts(dl, rows) {
  dl.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { class: k === 'Game' || k.startsWith('Seed') ? 'mono break' : '' }, v)]));
}

function showChain(box, report, records, header) {
  const intact = !!report.chain_intact;
  const valid = !!report.valid;
  box.dataset.valid = valid && intact ? 'true' : 'false';
  const n = report.records;
  const parts = [];
  if (valid && intact) {
    parts.push(el('p', {}, el('strong', {}, '✓ The hash chain is intact. '),
      `${n} record${n === 1 ? '' : 's'}, each linked to the one before${report.replayed ? ', and every move re-played by the rules gives the same game' : ''}.`));
    const shown = header && header.revealed;
    if (shown) parts.push(el('p', { class: 'small' }, `The ${shown} line${shown === 1 ? '' : 's'} after the records show${shown === 1 ? 's' : ''} the cards that were hidden during play; each was checked against a replay from the seed.`));
  } else {
    parts.push(el('p', {}, el('strong', {}, intact ? '✗ The record does not verify. ' : '✗ The hash chain is broken. '), faultText(report.fault)));
  }
  const last = records.length ? records[records.length - 1].hash : null;
  if (report.last_hash) {
    parts.push(el('p', { class: 'mono small break' }, `Last hash: ${report.last_hash}`));
    if (last && last !== report.last_hash) parts.push(el('p', { class: 'notice notice-error small' }, 'The last record’s hash differs from the report’s.'));
  }
  if (!report.replayed && valid) parts.push(el('p', { class: 'muted small' }, 'The moves are re-played once the seed is published, at the end of the game.'));
  box.replaceChildren(...parts);
}

function faultText(fault) {
  if (!fault) return 'No detail was given.';
  const where = fault.seq != null ? `Line ${fault.line} (record ${fault.seq})` : `Line ${fault.line}`;
  return `${where}: ${fault.reason}`;
}

async function verifyFile(file, result, firstBad) {
  result.dataset.valid = 'pending';
  result.textContent = `Verifying ${file.name}…`;
  firstBad.textContent = '';
  try {
    const text = await file.text();
    const report = await api.verify(text);
    const valid = !!report.valid;
    result.dataset.valid = valid ? 'true' : 'false';
    const what = report.game_id ? `${report.kind ? `${kindName(report.kind)} game` : 'Game'} ${report.game_id}` : file.name;
    const seedWords = { matches: 'the seed matches its commitment', absent: 'the seed is not in it yet (a running game)', mismatch: 'the seed does not match its commitment', unchecked: 'the seed was not checked' };
    if (valid) {
      result.replaceChildren(el('p', {}, el('strong', {}, '✓ Valid. '),
        `${what}: ${report.records} record${report.records === 1 ? '' : 's'}, the hash chain is intact, ${seedWords[report.seed] || report.seed}${report.replayed ? ', every move re-plays' : ''}.`),
      ...(report.last_hash ? [el('p', { class: 'mono small break' }, `Last hash: ${report.last_hash}`)] : []));
      firstBad.textContent = '';
    } else {
      result.replaceChildren(el('p', {}, el('strong', {}, '✗ Not valid. '), `${what}: ${report.records === 0 && !report.chain_intact ? 'not a readable export.' : `${report.chain_intact ? 'the hash chain holds' : 'the hash chain is broken'}; ${seedWords[report.seed] || 'the seed was not checked'}.`}`));
      firstBad.textContent = report.fault ? `First bad record: ${faultText(report.fault)}` : 'The first bad record was not named.';
    }
  } catch (err) {
    result.dataset.valid = 'error';
    result.replaceChildren(errorPanel(err));
    firstBad.textContent = '';
  }
}

function hexBytes(hex) {
  const clean = String(hex).trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(clean)) throw new Error('the seed is not hexadecimal');
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.substr(i * 2, 2), 16);
  return out;
}

const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256 with WebCrypto; on a page that is not a secure context (no crypto.subtle), a small local one. */
export async function sha256Hex(bytes) {
  if (globalThis.crypto && crypto.subtle && typeof crypto.subtle.digest === 'function') {
    return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
  }
  return toHex(sha256Fallback(bytes));
}

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
