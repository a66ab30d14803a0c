// The layers of src/, lowest first: the import rule (.dependency-cruiser.cjs) enforces them and
// test/unit/architecture-map.test.ts holds docs/architecture.md's map to them.
// Lowest first. A folder may import its own layer's siblings only where the list says so
// (a layer is an array of folders that must not import each other).
const LAYERS = [
  ['errors', 'log', 'process', 'files'], // plain facts and helpers, no tether imports
  ['machines'], // pure statecharts: no I/O
  ['protocol'], // wire shapes: frames, input, session names
  ['config', 'tmux', 'ops', 'push', 'history', 'uploads', 'mdns', 'git'], // each talks to one outside thing
  ['stream'], // ring, pane stream, per-client streaming, hub
  ['actors', 'agent', 'auth'], // the live actors; the agent link; pairing and tokens
  ['restore', 'runtime'], // a session outliving its tmux server; the daemon process's log, heap settings, run file and refusals
  ['service'], // what a session can be asked to do, for every transport
  ['transport'], // HTTPS and WebSocket
  ['reference-client'], // the client library a phone app or a script builds on
  ['extension', 'daemon'], // the pi extension (a program); the daemon's composition root and its wiring, nothing else
  ['cli'], // the tether command: its commands, and the executable
];

module.exports = { LAYERS };
