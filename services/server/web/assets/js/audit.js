// Audit: the hash chain (through POST /v1/verify), the seed against its
// commitment (checked here with WebCrypto), the game's receipt from the
// server's transparency log (checked here, and through /v1/verify), the
// export download, and a box that verifies any export file.
import { api } from './api.js';
import { checkConsistency, checkInclusion, gameLeaf, leafDifference, openCheckpoint, parseKey, sha256Hex } from './proofs.js';
import { el, errorPanel, gamePath, isOver, kindName, listJoin, resultText, seatLabel, stateWord, when } from './words.js';

export async function show(app, { id }) {
  const chain = el('div', { id: 'chain-status', class: 'check', 'data-valid': 'pending', role: 'status', 'aria-live': 'polite' }, 'Checking the hash chain…');
  const seed = el('div', { id: 'seed-status', class: 'check', 'data-valid': 'pending', role: 'status', 'aria-live': 'polite' }, 'Checking the seed…');
  const summary = el('dl', { class: 'facts small', id: 'audit-facts' });
  const download = el('a', {
    id: 'download-export', class: 'btn', href: `/v1/games/${encodeURIComponent(id)}/export`, download: `${id}.jsonl`,
    type: 'application/x-ndjson',
  }, 'Download the export (.jsonl)');
  const title = el('h1', { class: 'game-title' }, 'Audit');
  const receiptStatus = el('div', { id: 'receipt-status', class: 'check', 'data-valid': 'pending', role: 'status', 'aria-live': 'polite' }, 'Checking the receipt…');
  const logFacts = el('dl', { class: 'facts small', id: 'log-facts' });
  const receiptDetail = el('div', { id: 'receipt-detail' });

  const fileInput = el('input', { type: 'file', id: 'verify-file', accept: '.jsonl,.ndjson,.json,.txt,application/x-ndjson,text/plain', 'aria-describedby': 'verify-help' });
  const result = el('div', { id: 'verify-result', class: 'check', 'data-valid': '', role: 'status', 'aria-live': 'polite' });
  const firstBad = el('p', { id: 'verify-first-bad', class: 'first-bad' });
  const drop = el('label', { for: 'verify-file', class: 'drop' },
    el('span', {}, 'Choose an export file, or drop it here'), fileInput);

  app.replaceChildren(
    el('div', { class: 'game-head' }, el('div', {}, title,
      el('p', { class: 'muted small' }, el('a', { href: gamePath(id, 'watch') }, 'Current state'), ' · ', el('a', { href: gamePath(id, 'replay') }, 'Replay')))),
    el('div', { class: 'audit-grid' },
      el('div', { class: 'audit-main' },
        el('section', { class: 'panel', 'aria-labelledby': 'this-game' },
          el('h2', { id: 'this-game' }, 'This game’s record'),
          el('p', { class: 'muted small' }, 'Every record carries the hash of the one before it, so no move can be changed, removed or slipped in without breaking the chain. The seed that shuffled and dealt was committed to (its SHA-256 published) when the game was created, and is revealed when it ends.'),
          el('h3', {}, 'Hash chain'), chain,
          el('h3', {}, 'Seed commitment'), seed,
          summary,
          el('p', {}, download)),
        el('section', { class: 'panel', id: 'transparency', 'aria-labelledby': 'log-title' },
          el('h2', { id: 'log-title' }, 'Transparency log'),
          el('p', { class: 'muted small' }, 'When a game ends, its head (its id, how many records it has, the last record’s hash and its outcome) becomes a leaf of this server’s append-only log, a Merkle tree (RFC 6962), and the server signs checkpoints of that tree with its Ed25519 key. The receipt is the leaf, a signed checkpoint and the proof that the checkpoint’s tree holds the leaf: once it is given, the server cannot drop or rewrite the game without its log showing it.'),
          receiptStatus, logFacts, receiptDetail)),
      el('section', { class: 'panel', 'aria-labelledby': 'verify-title' },
        el('h2', { id: 'verify-title' }, 'Verify a file'),
        el('p', { class: 'muted small', id: 'verify-help' }, 'Check any export (from this server or another) through /v1/verify: the chain, the seed, a re-play of every move and, for a finished game, its receipt from the transparency log. Nothing is stored.'),
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
    receiptStatus.dataset.valid = 'error';
    receiptStatus.textContent = 'Unknown: the game could not be read.';
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

  // The log's key and latest checkpoint, asked for now and used below.
  const log = api.logInfo().catch((err) => err);

  let text;
  try {
    text = await api.exportText(id);
  } catch (err) {
    chain.dataset.valid = 'error';
    chain.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
  }
  let header = null;
  let records = [];
  let report = null;
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
      report = await api.verify(text);
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

  await showReceipt({ box: receiptStatus, facts: logFacts, detail: receiptDetail }, { game, header, records, report, log: await log });
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
      ...(report.last_hash ? [el('p', { class: 'mono small break' }, `Last hash: ${report.last_hash}`)] : []),
      fileReceipt(report, carriesReceipt(text)));
      firstBad.textContent = '';
    } else {
      result.replaceChildren(el('p', {}, el('strong', {}, '✗ Not valid. '), `${what}: ${report.records === 0 && !report.chain_intact ? 'not a readable export.' : `${report.chain_intact ? 'the hash chain holds' : 'the hash chain is broken'}; ${seedWords[report.seed] || 'the seed was not checked'}.`}`),
      ...(report.records === 0 && !report.chain_intact ? [] : [fileReceipt(report, carriesReceipt(text))]));
      firstBad.textContent = report.fault ? `First bad record: ${faultText(report.fault)}` : 'The first bad record was not named.';
    }
  } catch (err) {
    result.dataset.valid = 'error';
    result.replaceChildren(errorPanel(err));
    firstBad.textContent = '';
  }
}

/** Whether an export's header line carries a receipt. */
function carriesReceipt(text) {
  try {
    const header = JSON.parse(text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n')));
    return !!(header && header.receipt);
  } catch {
    return false;
  }
}

/** What /v1/verify found of a file's receipt (`#verify-receipt`); without one, that completeness is not proven. */
function fileReceipt(report, carried) {
  const r = report.receipt;
  // The receipt is checked once the game re-plays; before, it is reported unchecked.
  if ((r || carried) && !report.replayed) {
    return el('div', { id: 'verify-receipt', class: 'receipt-report', 'data-valid': 'unchecked' },
      el('p', {}, el('strong', {}, 'Its receipt was not checked: '), 'an earlier check failed, so completeness is not proven either.'));
  }
  if (!r) {
    return el('div', { id: 'verify-receipt', class: 'receipt-report', 'data-valid': 'none' },
      el('p', {}, el('strong', {}, 'No receipt: completeness is not proven. '),
        'Nothing in this file shows that it is the whole game as a server logged it (the export of a running game, or one made before receipts). Compare its last hash with the one the server shows.'));
  }
  const ok = r.signature && r.leaf_matches && r.included;
  const id = r.key_id || 'of unknown id';
  const games = r.tree ? gamesWord(r.tree.size) : null;
  const notChecked = 'not checked (an earlier check failed)';
  return el('div', { id: 'verify-receipt', class: 'receipt-report', 'data-valid': ok ? 'true' : 'false', 'data-trusted': r.trusted ? 'true' : 'false' },
    el('p', {}, el('strong', {}, ok ? '✓ Its receipt checks out' : '✗ Its receipt does not check out'),
      ok ? (r.trusted ? ': this server’s log holds this very game.' : ', but under another server’s key.') : '.'),
    el('ul', { class: 'checklist small' },
      el('li', { 'data-valid': r.signature ? 'true' : 'false' },
        r.signature ? `Signed by ${r.trusted ? 'this server’s key' : 'key'} ${id}` : `The checkpoint is not signed by the key it names (${id})`),
      el('li', { 'data-valid': r.trusted ? 'true' : 'false' },
        r.trusted ? 'The key is this server’s own.'
          : 'The key is not this server’s: the receipt proves only that whoever holds that key committed to the game. Compare it with that server’s published key.'),
      el('li', { 'data-valid': r.leaf_matches ? 'true' : r.signature ? 'false' : 'unchecked' },
        r.leaf_matches ? 'The leaf is this game’s head, as re-played from the file.' : r.signature ? 'The leaf is not this game’s head.' : `The leaf: ${notChecked}.`),
      el('li', { 'data-valid': r.included ? 'true' : r.leaf_matches ? 'false' : 'unchecked' },
        r.included ? `Included in the checkpoint of ${games}, as leaf ${r.leaf_index}.`
          : r.leaf_matches ? `The inclusion proof does not lead to the root of the checkpoint${games ? ` of ${games}` : ''}.` : `The inclusion: ${notChecked}.`)));
}

const gamesWord = (n) => `${n} game${Number(n) === 1 ? '' : 's'}`;

/** One check of the receipt: `valid` is true, false, 'error' (a request failed) or 'unchecked'. */
const check = (id, valid, ...words) => ({ id, valid, words });

/**
 * The game's receipt: checked in this browser (the key and its id, the
 * checkpoint's Ed25519 signature where WebCrypto has it, the leaf against
 * this game, the inclusion proof, the log's latest checkpoint extending the
 * receipt's) and through /v1/verify of the export (`report.receipt`).
 */
async function showReceipt({ box, facts, detail }, { game, header, records, report, log }) {
  const logError = log instanceof Error ? log : null;
  if (logError) log = null;
  if (!isOver(game.status)) {
    showNotOver(box, facts, log, logError);
    return;
  }
  let receipt = game.receipt || (header && header.receipt) || null;
  if (!receipt) {
    try {
      receipt = await api.receipt(game.id);
    } catch (err) {
      if (err.code === 'game_not_over') {
        showNotOver(box, facts, log, logError);
      } else {
        box.dataset.valid = 'error';
        box.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
      }
      return;
    }
  }

  // The key, and whether it is the one this server publishes.
  let key = null;
  let keyProblem = '';
  try {
    key = await parseKey(receipt.key);
    if (!key.idMatches) keyProblem = `the key’s id ${key.id} is not the id of its public key`;
  } catch (err) {
    keyProblem = err.message;
  }
  const keyId = key ? key.id : '?';
  const ours = log ? receipt.key === log.key : null;

  // The checkpoint: its tree, and its signature where this browser can check it.
  let opened = null;
  let openProblem = '';
  try {
    if (key) opened = await openCheckpoint(receipt.checkpoint, key);
  } catch (err) {
    openProblem = err.message;
  }
  const tree = opened ? opened.tree : null;
  const server = report ? report.receipt : null;
  const checks = [];

  const signedHere = opened ? opened.signed : false;
  const signedThere = server ? server.signature && server.key === receipt.key : null;
  if (keyProblem || openProblem) {
    checks.push(check('receipt-check-key', false, `The receipt’s key or checkpoint cannot be read: ${keyProblem || openProblem}.`));
  } else if (ours === false) {
    checks.push(check('receipt-check-key', false, `Signed by key ${keyId}, which is not this server’s key ${log.key_id}.`));
  } else if (signedHere === false) {
    checks.push(check('receipt-check-key', false, `Not signed by this server’s key ${keyId}: ${opened.reason}.`));
  } else if (signedHere === true) {
    checks.push(check('receipt-check-key', ours === null ? 'error' : true, `Signed by ${ours ? 'this server’s key' : 'key'} ${keyId}`,
      el('span', { class: 'muted' }, `: the checkpoint’s Ed25519 signature checks out in this browser${ours === null ? ' (whose key this is could not be asked: /v1/log failed)' : ''}.`)));
  } else {
    // No Ed25519 in this browser's WebCrypto: the server's check stands in.
    checks.push(check('receipt-check-key', ours === null || signedThere === null ? 'error' : signedThere, `Signed by ${ours ? 'this server’s key' : 'key'} ${keyId}`,
      el('span', { class: 'muted' }, `: this browser cannot check Ed25519 signatures, so the signature is checked by the server through /v1/verify${signedThere === null ? ', which could not be asked' : signedThere ? ', which finds it good' : ', which finds it bad'}.`)));
  }

  // The leaf, against this game as the export and the state tell it.
  const count = header && Number.isInteger(header.records) ? header.records : game.version + 1;
  const last = records.length ? records[records.length - 1].hash : report && report.last_hash;
  const expected = last ? gameLeaf({ id: game.id, records: count, lastHash: last, status: game.status }) : null;
  if (!expected) {
    checks.push(check('receipt-check-leaf', 'error', 'The leaf could not be compared with this game: its export could not be read.'));
  } else {
    const difference = leafDifference(expected, receipt.leaf);
    checks.push(difference
      ? check('receipt-check-leaf', false, `The leaf is not this game’s head: ${difference}.`)
      : check('receipt-check-leaf', true, 'The leaf is this game’s head',
        el('span', { class: 'muted' }, `: its id, its ${count} records, the last record’s hash and its outcome.`)));
  }

  // The inclusion proof, walked here from the leaf to the checkpoint's root.
  const proof = receipt.inclusion || [];
  if (tree) {
    let included = false;
    try {
      included = await checkInclusion(receipt.leaf, receipt.leaf_index, proof, tree.size, tree.root);
    } catch {
      included = false;
    }
    checks.push(included
      ? check('receipt-check-inclusion', true, `Included in the checkpoint of ${gamesWord(tree.size)}`,
        el('span', { class: 'muted' }, proof.length
          ? `, as leaf ${receipt.leaf_index}: the inclusion proof (${proof.length} hash${proof.length === 1 ? '' : 'es'}) leads from the leaf to the checkpoint’s root, in this browser.`
          : `, as leaf ${receipt.leaf_index}: the tree holds this leaf alone, and the leaf’s hash is the checkpoint’s root, in this browser.`))
      : check('receipt-check-inclusion', false, `Not included in the checkpoint of ${gamesWord(tree.size)}: the proof does not lead from leaf ${receipt.leaf_index} to its root.`));
  }

  // The log now: its latest checkpoint extends the receipt's.
  let latest = null;
  if (tree && log && log.tree && log.checkpoint && log.key === receipt.key) {
    checks.push(await checkStillLogged(tree, log, key, (opened) => {
      latest = opened;
    }));
  } else if (tree && logError) {
    checks.push(check('receipt-check-log', 'error', `Whether the log still holds it is unknown: /v1/log failed (${logError.message}).`));
  }

  // The server's own check of the export's receipt.
  if (!report) {
    checks.push(check('receipt-check-server', 'error', 'The server’s check (/v1/verify of the export) could not be run.'));
  } else if (!server) {
    checks.push(check('receipt-check-server', false, 'The server’s check (/v1/verify) found no receipt in the export.'));
  } else {
    const agrees = server.signature && server.leaf_matches && server.included && server.trusted && server.key === receipt.key;
    const failed = [
      !server.trusted && 'the key is not its own',
      server.key !== receipt.key && 'the export’s receipt names another key',
      !server.signature && 'the signature does not check out',
      server.signature && !server.leaf_matches && 'the leaf is not the re-played game’s head',
      server.leaf_matches && !server.included && 'the inclusion proof fails',
    ].filter(Boolean);
    const fault = report.fault && /receipt/.test(report.fault.reason) ? ` (${report.fault.reason})` : '';
    checks.push(agrees
      ? check('receipt-check-server', true, 'The server agrees',
        el('span', { class: 'muted' }, `: /v1/verify of the export finds the checkpoint signed with its own key ${server.key_id || keyId}, the leaf the head of the game as re-played, and the leaf included in the checkpoint of ${server.tree ? gamesWord(server.tree.size) : 'its tree'}.`))
      : check('receipt-check-server', false, `The server’s check (/v1/verify of the export) fails: ${listJoin(failed) || 'the receipt does not check out'}${fault}.`));
  }

  const valids = checks.map((c) => c.valid);
  const verdict = valids.includes(false) ? 'false' : valids.every((v) => v === true) ? 'true' : 'error';
  box.dataset.valid = verdict;
  const headline = {
    true: ['✓ The receipt checks out. ', `This server’s log has committed to this game’s ending: signed by this server’s key ${keyId}, the leaf is this game’s head, included in the checkpoint of ${tree ? gamesWord(tree.size) : 'its tree'}.`],
    false: ['✗ The receipt does not check out. ', 'See what failed below.'],
    error: ['The receipt could not be fully checked. ', 'A request failed; see below.'],
  }[verdict];
  box.replaceChildren(
    el('p', {}, el('strong', {}, headline[0]), headline[1]),
    el('ul', { class: 'checklist small', 'aria-label': 'Checks of the receipt' },
      ...checks.map((c) => el('li', { id: c.id, 'data-valid': String(c.valid) }, ...c.words))));

  facts.replaceChildren(
    ...fact('Log', el('span', { id: 'log-origin', class: 'mono break' }, tree ? tree.origin : key ? key.name : '?')),
    ...fact('Key id', el('span', { id: 'log-key-id', class: 'mono' }, keyId),
      ours === true ? ' (this server’s key)' : ours === false ? ` (not this server’s key ${log.key_id})` : ''),
    ...fact('Leaf index', el('span', { id: 'receipt-leaf-index' }, String(receipt.leaf_index))),
    ...(tree ? [
      ...fact('Checkpoint', el('span', { id: 'log-tree-size' }, String(tree.size)), ` game${tree.size === 1 ? '' : 's'}`),
      ...fact('Root', el('span', { id: 'log-tree-root', class: 'mono break' }, tree.root)),
    ] : []),
    ...(log && log.tree ? fact('Log now', el('span', { id: 'log-latest-size' }, String(log.tree.size)),
      ` game${log.tree.size === 1 ? '' : 's'}${latest && latest.tree.size === (tree && tree.size) ? ' (the receipt’s checkpoint is the latest)' : ''}`) : []));

  detail.replaceChildren(
    el('h3', { id: 'receipt-leaf-title' }, 'The leaf'),
    el('pre', { id: 'receipt-leaf', class: 'raw leaf', tabindex: '0', 'aria-labelledby': 'receipt-leaf-title' }, receipt.leaf),
    el('details', { class: 'raw-view' },
      el('summary', {}, 'The signed checkpoint and the inclusion proof'),
      el('pre', { id: 'receipt-checkpoint', class: 'raw', tabindex: '0', 'aria-label': 'The signed checkpoint' }, receipt.checkpoint),
      proof.length
        ? el('ol', { id: 'receipt-inclusion', class: 'proof mono small', start: '1', 'aria-label': 'Inclusion proof, from the leaf’s sibling up' }, ...proof.map((h) => el('li', { class: 'break' }, h)))
        : el('p', { class: 'small muted' }, 'The inclusion proof is empty: the leaf is the whole tree.')),
    el('p', { class: 'small' },
      el('a', { href: `/v1/games/${encodeURIComponent(game.id)}/receipt`, download: `${game.id}.receipt.json`, type: 'application/json' }, 'Download the receipt (JSON)'),
      ' · ', el('a', { href: '/.well-known/ludotheque-log-key', type: 'text/plain' }, 'This server’s log key')));
}

/** A game not over yet: its receipt comes at the end; the log as it stands. */
function showNotOver(box, facts, log, logError) {
  box.dataset.valid = 'not_over';
  box.replaceChildren(
    el('p', {}, el('strong', {}, 'The receipt comes when the game ends. '),
      'A game joins the log once it is over; until then the server has no receipt to give (it answers game_not_over). Come back to this page after the last move.'));
  if (!log) {
    facts.replaceChildren(...fact('Log', logError ? `unknown: /v1/log failed (${logError.message})` : 'unknown'));
    return;
  }
  facts.replaceChildren(
    ...fact('Log', el('span', { id: 'log-origin', class: 'mono break' }, log.origin)),
    ...fact('Key id', el('span', { id: 'log-key-id', class: 'mono' }, log.key_id), ' (this server’s key)'),
    ...fact('Log now', el('span', { id: 'log-latest-size' }, String(log.tree ? log.tree.size : 0)),
      ` game${log.tree && log.tree.size === 1 ? '' : 's'}`));
}

/**
 * Whether the log's latest checkpoint (signed by the same key) and the
 * receipt's are of one log: the smaller tree is a prefix of the larger
 * (a consistency proof, checked here). Calls `seen` with the latest opened.
 */
async function checkStillLogged(tree, log, key, seen) {
  let latest;
  try {
    latest = await openCheckpoint(log.checkpoint, key);
  } catch (err) {
    return check('receipt-check-log', false, `The log’s latest checkpoint cannot be read: ${err.message}.`);
  }
  seen(latest);
  if (latest.signed === false) return check('receipt-check-log', false, `The log’s latest checkpoint is not signed by its key: ${latest.reason}.`);
  const [older, newer] = latest.tree.size < tree.size ? [latest.tree, tree] : [tree, latest.tree];
  let consistent;
  try {
    const proof = await api.logConsistency(older.size, newer.size);
    consistent = await checkConsistency(older.size, older.root, newer.size, newer.root, proof.proof || []);
  } catch (err) {
    return check('receipt-check-log', 'error', `Whether the log still holds it is unknown: ${err.message}.`);
  }
  if (!consistent) {
    return check('receipt-check-log', false,
      `The log forked: its checkpoint of ${gamesWord(older.size)} is not a prefix of its checkpoint of ${gamesWord(newer.size)}.`);
  }
  if (latest.tree.size === tree.size) {
    return check('receipt-check-log', true, 'Still in the log', el('span', { class: 'muted' }, ': the receipt’s checkpoint is the log’s latest.'));
  }
  if (latest.tree.size < tree.size) {
    // A replica that has not caught up yet answers an older checkpoint.
    return check('receipt-check-log', true, 'Of the same log',
      el('span', { class: 'muted' }, `: the latest checkpoint this server answered, of ${gamesWord(latest.tree.size)}, is a prefix of the receipt’s (the consistency proof checks out in this browser).`));
  }
  return check('receipt-check-log', true, 'Still in the log',
    el('span', { class: 'muted' }, `: its latest checkpoint, of ${gamesWord(latest.tree.size)}, extends the receipt’s (the consistency proof checks out in this browser), so no game it held was dropped or changed since.`));
}

function fact(term, ...value) {
  return [el('dt', {}, term), el('dd', {}, ...value)];
}

function hexBytes(hex) {
  const clean = String(hex).trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(clean)) throw new Error('the seed is not hexadecimal');
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.substr(i * 2, 2), 16);
  return out;
}
