/**
 * The `/ops` page: one self-contained HTML document (inline CSS and JS, nothing from the
 * network but this daemon) that shows the actor tree and each actor's statechart with its
 * current state highlighted, live over `/ops/events`, plus recent events per actor, the
 * subsystems from `/health`, and on each stream client's card its connection's figures (round
 * trip, bytes sent, connected for, its device's reconnects and away time, behind or not), also
 * from `/health`, the last answers to what agents asked, from `/ops/answers`, and why each stopped
 * agent stopped, from `/sessions`.
 *
 * Invariant: nothing an actor reports is ever put into the page as markup (textContent only);
 * the only markup inserted is the daemon's own generated SVG charts.
 */

/** Recent events shown per actor on the page. */
export const OPS_PAGE_EVENTS = 8;

const CSS = `
:root { color-scheme: light dark; --bg:#fafafa; --fg:#1d1d1f; --muted:#6e6e73; --card:#fff; --line:#d2d2d7; --hi:#ffcc00; --hi-line:#d14900; }
@media (prefers-color-scheme: dark) { :root { --bg:#111; --fg:#eee; --muted:#999; --card:#1c1c1e; --line:#3a3a3c; } }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--fg); }
header { padding:10px 16px; border-bottom:1px solid var(--line); display:flex; gap:18px; align-items:baseline; flex-wrap:wrap; }
header h1 { font-size:16px; margin:0; }
#conn { font-size:12px; color:var(--muted); }
#conn.live { color:#2e7d32; }
#subsystems { display:flex; gap:14px; flex-wrap:wrap; font-size:12px; }
#subsystems span b { font-weight:600; }
main { display:grid; grid-template-columns: minmax(200px, 260px) 1fr; gap:16px; padding:16px; }
#tree ul { list-style:none; margin:0; padding-left:14px; }
#tree > ul { padding-left:0; }
#tree li { margin:2px 0; }
#tree a { color:inherit; text-decoration:none; }
#tree a:hover { text-decoration:underline; }
#tree .st { color:var(--muted); font-size:12px; margin-left:6px; font-family:ui-monospace, monospace; }
#cards { display:flex; flex-direction:column; gap:14px; min-width:0; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:10px 12px; }
.card h2 { font-size:14px; margin:0 0 4px; font-family:ui-monospace, monospace; }
.card .state { font-family:ui-monospace, monospace; font-size:12px; color:var(--muted); word-break:break-all; }
.card .connection { font-family:ui-monospace, monospace; font-size:12px; margin-top:2px; }
.card .connection:empty { display:none; }
.card .connection.behind { color:#b00020; }
.card .chart { overflow:auto; margin:8px 0; }
.card .chart svg { max-width:100%; height:auto; }
.card .chart svg .node.active polygon, .card .chart svg .node.active path, .card .chart svg .node.active ellipse { fill:var(--hi); stroke:var(--hi-line); stroke-width:2.5; }
.card .chart svg .cluster.active > polygon, .card .chart svg .cluster.active > path { stroke:var(--hi-line); stroke-width:2; }
.card ol { margin:0; padding-left:18px; font-family:ui-monospace, monospace; font-size:12px; color:var(--muted); }
.card.plain .chart { display:none; }
#dropped { color:#b00020; font-size:12px; }
#answers, #stops, #usage { padding:0 16px; font-size:12px; }
#answers h2, #stops h2, #usage h2 { font-size:13px; margin:10px 0 4px; }
#answers ol, #stops ul, #usage ul { margin:0; padding-left:18px; font-family:ui-monospace, monospace; color:var(--muted); }
#answers ol:empty::before, #stops ul:empty::before, #usage ul:empty::before { content:'none yet'; }
`;

const JS = `
(() => {
  'use strict';
  const MAX_EVENTS = ${OPS_PAGE_EVENTS};
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || '';
  // The token stays in memory only: take it out of the address bar and the history.
  if (token) { params.delete('token'); history.replaceState(null, '', location.pathname + (params.toString() ? '?' + params : '')); }
  const auth = { headers: { authorization: 'Bearer ' + token } };
  const actors = new Map();   // id -> view
  const events = new Map();   // id -> [{event, at}]
  const charts = new Map();   // machine -> Promise<SVGElement|null>
  const cards = new Map();    // id -> element
  const links = new Map();    // client actor id -> its connection's figures, from /health
  let dropped = 0;

  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k);
    return e;
  };
  const stateText = (v) => v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  const ms = (v) => v === null ? '-' : Math.round(v) + ' ms';
  const secs = (v) => (v / 1000).toFixed(1) + ' s';
  const size = (n) => n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KB' : (n / 1048576).toFixed(1) + ' MB';
  const since = (s) => s < 60 ? Math.floor(s) + ' s' : s < 3600 ? Math.floor(s / 60) + 'm ' + Math.floor(s % 60) + 's' : Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';

  // A client's connection on its card: what the phone's link is doing, refreshed with /health.
  function showLink(c, link) {
    const line = c.querySelector('.connection');
    if (!line) return;
    if (!link) { line.textContent = ''; return; }
    line.textContent = 'rtt ' + ms(link.rttMs) + ' (smoothed ' + ms(link.srttMs) + ') \u00b7 sent ' + size(link.bytesSent) +
      ' \u00b7 connected ' + since(link.connectedS) + ' \u00b7 ' + link.device + ': ' + link.reconnects + ' reconnect' + (link.reconnects === 1 ? '' : 's') +
      (link.reconnects ? ' (away ' + secs(link.awayMs) + ' in all, last ' + secs(link.lastAwayMs || 0) + ')' : '') +
      (link.behind ? ' \u00b7 behind' : '');
    line.classList.toggle('behind', link.behind);
    line.setAttribute('data-rtt-ms', link.rttMs === null ? '' : String(link.rttMs));
    line.setAttribute('data-srtt-ms', link.srttMs === null ? '' : String(link.srttMs));
    line.setAttribute('data-bytes-sent', String(link.bytesSent));
    line.setAttribute('data-reconnects', String(link.reconnects));
    line.setAttribute('data-behind', String(link.behind));
  }

  function chart(machine) {
    if (!charts.has(machine)) {
      charts.set(machine, fetch('/ops/charts/' + encodeURIComponent(machine) + '.svg', auth)
        .then((r) => r.ok ? r.text() : null)
        .then((text) => {
          if (!text) return null;
          const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
          const svg = doc.documentElement;
          return svg && svg.nodeName === 'svg' ? svg : null;
        })
        .catch(() => null));
    }
    return charts.get(machine);
  }

  function highlight(card, view) {
    const active = new Set(view.active || []);
    for (const g of card.querySelectorAll('.chart g.node, .chart g.cluster')) {
      const id = g.getAttribute('data-state');
      g.classList.toggle('active', active.has(id));
    }
    card.setAttribute('data-state', stateText(view.value));
    card.querySelector('.state').textContent = stateText(view.value) + (view.status !== 'active' ? ' (' + view.status + ')' : '');
  }

  function card(view) {
    let c = cards.get(view.id);
    if (!c) {
      c = el('section', { class: 'card' + (view.machine ? '' : ' plain'), 'data-actor': view.id, 'data-machine': view.machine || '' },
        el('h2', {}, view.id + (view.machine ? '  (' + view.machine + ')' : '')),
        el('div', { class: 'state' }),
        el('div', { class: 'connection' }),
        el('div', { class: 'chart' }),
        el('ol', { class: 'events' }));
      c.id = 'actor-' + view.id.replace(/[^A-Za-z0-9_-]/g, '_');
      cards.set(view.id, c);
      if (view.machine) {
        chart(view.machine).then((svg) => {
          if (!svg) return;
          const copy = document.importNode(svg, true);
          for (const g of copy.querySelectorAll('g.node, g.cluster')) {
            const t = g.querySelector('title');
            const name = t ? t.textContent.replace(/^cluster_/, '') : '';
            g.setAttribute('data-state', name);
          }
          c.querySelector('.chart').append(copy);
          c.classList.add('charted');
          highlight(c, actors.get(view.id) || view);
        });
      }
    }
    highlight(c, view);
    showLink(c, links.get(view.id));
    return c;
  }

  function renderEvents(id) {
    const c = cards.get(id);
    if (!c) return;
    const ol = c.querySelector('.events');
    ol.replaceChildren(...(events.get(id) || []).slice(-MAX_EVENTS).map((e) => el('li', {}, new Date(e.at).toISOString().slice(11, 23) + '  ' + e.event)));
  }

  function depthOrder() {
    const kids = new Map();
    for (const v of actors.values()) {
      const p = v.parent && actors.has(v.parent) ? v.parent : null;
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(v);
    }
    for (const list of kids.values()) list.sort((a, b) => a.id.localeCompare(b.id));
    return kids;
  }

  function render() {
    const kids = depthOrder();
    const order = [];
    const branch = (parent) => {
      const ul = el('ul');
      for (const v of kids.get(parent) || []) {
        order.push(v.id);
        const a = el('a', { href: '#actor-' + v.id.replace(/[^A-Za-z0-9_-]/g, '_') }, v.id);
        const li = el('li', { 'data-actor': v.id }, a, el('span', { class: 'st' }, stateText(v.value)));
        if (kids.has(v.id)) li.append(branch(v.id));
        ul.append(li);
      }
      return ul;
    };
    document.getElementById('tree').replaceChildren(branch(null));
    const list = document.getElementById('cards');
    for (const [id, c] of cards) if (!actors.has(id)) { c.remove(); cards.delete(id); }
    list.replaceChildren(...order.map((id) => card(actors.get(id))));
    for (const id of order) renderEvents(id);
    document.getElementById('dropped').textContent = dropped ? dropped + ' events dropped (this view fell behind)' : '';
  }

  function apply(batch) {
    let structure = false;
    for (const m of batch) {
      if (m.type === 'actors') {
        actors.clear(); events.clear(); structure = true;
        for (const v of m.actors) actors.set(v.id, v);
        for (const e of m.recent) { if (!events.has(e.actor)) events.set(e.actor, []); events.get(e.actor).push(e); }
      } else if (m.type === 'state') {
        if (!actors.has(m.actor.id)) structure = true;
        actors.set(m.actor.id, m.actor);
        if (!structure && cards.has(m.actor.id)) {
          highlight(cards.get(m.actor.id), m.actor);
          const li = document.querySelector('#tree li[data-actor="' + CSS.escape(m.actor.id) + '"] > .st');
          if (li) li.textContent = stateText(m.actor.value);
        }
      } else if (m.type === 'gone') {
        actors.delete(m.actor); events.delete(m.actor); structure = true;
      } else if (m.type === 'event') {
        if (!events.has(m.actor)) events.set(m.actor, []);
        const list = events.get(m.actor);
        list.push(m);
        if (list.length > MAX_EVENTS) list.shift();
        if (!structure) renderEvents(m.actor);
      } else if (m.type === 'dropped') {
        dropped += m.count;
      }
    }
    if (structure) render();
    else document.getElementById('dropped').textContent = dropped ? dropped + ' events dropped (this view fell behind)' : '';
  }

  function connect() {
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ops/events?token=' + encodeURIComponent(token));
    const conn = document.getElementById('conn');
    ws.onopen = () => { conn.textContent = 'live'; conn.className = 'live'; };
    ws.onmessage = (m) => { try { apply(JSON.parse(m.data)); } catch (err) { console.error(err); } };
    ws.onclose = (e) => {
      conn.className = '';
      conn.textContent = e.code === 1008 || e.code === 4401 ? 'not allowed: open this page with a valid ?token=' : 'disconnected; reconnecting';
      if (e.code !== 4401) setTimeout(connect, 1000);
    };
  }

  async function health() {
    try {
      const r = await fetch('/health', auth);
      if (!r.ok) return;
      const h = await r.json();
      const s = document.getElementById('subsystems');
      const item = (label, value) => el('span', { 'data-subsystem': label }, el('b', {}, label + ': '), String(value));
      s.replaceChildren(
        item('status', h.status),
        item('clients', h.clients),
        item('watchdog', h.watchdog.state + (h.watchdog.reason ? ' (' + h.watchdog.reason + ')' : '')),
        item('buffer', h.bufferMb + ' MB, ' + h.diskFreeGb + ' GB free'),
        item('push', h.push.configured ? h.push.sent + ' sent, ' + h.push.failed + ' failed' : 'off'),
        item('tls', h.tls.enabled ? 'on' : 'off'),
        item('uptime', h.uptime + ' s'));
      links.clear();
      for (const link of h.connections || []) if (link.actor) links.set(link.actor, link);
      for (const [id, c] of cards) showLink(c, links.get(id));
    } catch { /* the next poll tries again */ }
  }

  // The last answers to asks: who answered what, and whether the agent took it.
  async function answers() {
    try {
      const r = await fetch('/ops/answers', auth);
      if (!r.ok) return;
      const list = (await r.json()).answers || [];
      document.getElementById('answer-list').replaceChildren(...list.slice().reverse().map((a) =>
        el('li', { 'data-ask': a.ask }, a.at + '  ' + a.session + '  ' + a.agent + ' ' + a.kind + (a.tool ? ' ' + a.tool : '') + ': ' +
          a.concern + '  ->  ' + (a.label || a.choice || '?') + '  by ' + a.by + (a.landed ? '' : '  (not seen taken)'))));
    } catch { /* the next poll tries again */ }
  }

  // Why each stopped agent stopped: the sessions' stops, from /sessions.
  async function stops() {
    try {
      const r = await fetch('/sessions', auth);
      if (!r.ok) return;
      const list = (await r.json()).filter((s) => s.stop);
      document.getElementById('stop-list').replaceChildren(...list.map((s) =>
        el('li', { 'data-stop': s.stop.kind }, s.id + '  ' + s.stop.agent + ' ' + s.stop.kind + '  ' + s.stop.stoppedAt +
          (s.stop.resetsAt ? '  resets ' + s.stop.resetsAt + (s.stop.limit ? ' (' + s.stop.limit + ')' : '') : '') +
          (s.stop.message ? ': ' + s.stop.message : ''))));
    } catch { /* the next poll tries again */ }
  }

  // How much of each agent's account limits is used: one line per agent and window, from /usage.
  async function usage() {
    try {
      const r = await fetch('/usage', auth);
      if (!r.ok) return;
      const rows = [];
      for (const u of await r.json())
        for (const w of u.windows)
          rows.push(el('li', { 'data-usage': u.agent + ':' + w.name }, u.agent + '  ' + w.name + '  ' + w.usedPercent + ' %' +
            (w.resetsAt ? '  resets ' + w.resetsAt : '') + (u.binding === w.name ? '  (binding)' : '') + '  as of ' + u.observedAt));
      document.getElementById('usage-list').replaceChildren(...rows);
    } catch { /* the next poll tries again */ }
  }

  connect();
  health();
  answers();
  stops();
  usage();
  setInterval(() => { health(); answers(); stops(); usage(); }, 2000);
})();
`;

/** The page; it takes its token from `?token=` and keeps it in memory only. */
export const OPS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tether ops</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>tether ops</h1><span id="conn">connecting</span><div id="subsystems"></div><span id="dropped"></span></header>
<section id="answers"><h2>Answers</h2><ol id="answer-list"></ol></section>
<section id="stops"><h2>Stops</h2><ul id="stop-list"></ul></section>
<section id="usage"><h2>Usage</h2><ul id="usage-list"></ul></section>
<main><nav id="tree" aria-label="actors"></nav><div id="cards"></div></main>
<script>${JS}</script>
</body>
</html>
`;

/** Only this daemon, inline code, and the WebSocket back to it. */
export const OPS_PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
