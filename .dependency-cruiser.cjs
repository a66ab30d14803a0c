// The import graph of src/: no cycles, and every folder imports only folders below it.
// docs/architecture.md draws the same layers; `npm run deps` (part of `npm test`) checks them.
//
// Lowest first. A folder may import its own layer's siblings only where the list says so
// (a layer is an array of folders that must not import each other).
const LAYERS = [
  ['errors', 'log', 'process'], // plain facts and helpers, no tether imports
  ['machines'], // pure statecharts: no I/O
  ['protocol'], // wire shapes: frames, input, session names
  ['config', 'tmux', 'ops', 'push'], // each talks to one outside thing
  ['stream'], // ring, pane stream, per-client streaming, hub
  ['actors', 'agent', 'auth'], // the live actors; the agent link; pairing and tokens
  ['service'], // what a session can be asked to do, for every transport
  ['transport'], // HTTPS and WebSocket
  ['reference-client'], // the client library a phone app or a script builds on
  ['extension', 'cli'], // the programs: the pi extension and the tether command
];

// src/<folder>/… or src/<file>.ts for the single-file modules at the top.
const path = (name) => `^src/(${name}/|${name}\\.ts$)`;

const rules = [];
LAYERS.forEach((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  for (const folder of layer) {
    const siblings = layer.filter((f) => f !== folder);
    const banned = [...above, ...siblings];
    if (banned.length === 0) continue;
    rules.push({
      name: `${folder}-imports-only-lower-layers`,
      comment: `${folder} sits in layer ${i}; it may not import ${banned.join(', ')}`,
      severity: 'error',
      from: { path: path(folder) },
      to: { path: `^src/(${banned.map((b) => `${b}/|${b}\\.ts$`).join('|')})` },
    });
  }
});

module.exports = {
  // Read by test/unit/architecture-map.test.ts, which holds docs/architecture.md's map to it.
  layers: LAYERS,
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle makes load order matter and hides which part depends on which.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'every-folder-is-layered',
      comment: 'A new folder under src/ must be placed in LAYERS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: `^src/(${LAYERS.flat()
          .map((f) => `${f}/|${f}\\.ts$`)
          .join('|')})`,
      },
      to: {},
    },
    ...rules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|test|bench|scripts)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
