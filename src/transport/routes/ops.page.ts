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
import { OPS_PAGE_SCRIPT } from './ops.page-script.js';

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
<script>${OPS_PAGE_SCRIPT}</script>
</body>
</html>
`;

/** Only this daemon, inline code, and the WebSocket back to it. */
export const OPS_PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
