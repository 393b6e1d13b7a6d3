// The router: picks the page from location.pathname and shows it in #app.
import { api } from './api.js';
import { el, errorPanel, gamePath, rememberKinds } from './words.js';

const PAGES = {
  play: () => import('./game.js'),
  watch: () => import('./game.js'),
  replay: () => import('./replay.js'),
  audit: () => import('./audit.js'),
  join: () => import('./join.js'),
};

const NAV = [
  ['watch', 'Watch'],
  ['replay', 'Replay'],
  ['audit', 'Audit'],
];

function route(pathname) {
  if (pathname === '/' || pathname === '/index.html') return { page: 'lobby' };
  const m = /^\/games\/([^/]+)\/(play|watch|replay|audit|join)\/?$/.exec(pathname);
  if (m) return { page: m[2], id: decodeURIComponent(m[1]) };
  return { page: 'missing' };
}

function gameNav(id, page) {
  const nav = document.getElementById('game-nav');
  nav.replaceChildren();
  if (!id) {
    nav.hidden = true;
    return;
  }
  nav.hidden = false;
  for (const [p, label] of NAV) {
    const a = el('a', { href: gamePath(id, p) }, label);
    if (p === page) a.setAttribute('aria-current', 'page');
    nav.append(a);
  }
}

async function start() {
  const app = document.getElementById('app');
  const { page, id } = route(location.pathname);
  gameNav(id, page);
  // The kinds' names for every page's titles; without them a page shows the kind's id.
  rememberKinds(await api.kinds().then((answer) => answer.kinds, () => []));
  try {
    if (page === 'lobby') {
      const mod = await import('./lobby.js');
      await mod.show(app);
    } else if (page === 'missing') {
      document.title = 'Not found · Ludothèque';
      app.replaceChildren(
        el('h1', {}, 'Page not found'),
        el('p', {}, 'There is no page at this address. ', el('a', { href: '/' }, 'See all games'), '.'),
      );
    } else {
      const mod = await PAGES[page]();
      await mod.show(app, { id, page });
    }
  } catch (err) {
    console.error(err);
    const missing = err && err.status === 404;
    app.replaceChildren(
      el('h1', {}, missing ? 'No such game' : 'This page could not be shown'),
      errorPanel(err, missing ? {} : { retry: () => location.reload() }),
      el('p', {}, el('a', { href: '/' }, 'See all games')));
  }
}

window.addEventListener('unhandledrejection', (ev) => console.error('unhandled', ev.reason));
start();
