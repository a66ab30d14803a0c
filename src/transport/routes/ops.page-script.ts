/**
 * The `/ops` page's script (ops.page.ts holds the page it runs in): the actor tree and each
 * actor's statechart, live over `/ops/events`, and the panels it refreshes from `/health`,
 * `/ops/answers` and `/sessions`.
 *
 * Invariant: nothing an actor reports is ever put into the page as markup (textContent only);
 * the only markup inserted is the daemon's own generated SVG charts.
 */

/** Recent events shown per actor on the page. */
export const OPS_PAGE_EVENTS = 8;

/** The page's script, inlined into it. */
export const OPS_PAGE_SCRIPT = `
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
