// The import graph of src/: no cycles, and every folder imports only folders below it.
// docs/architecture.md draws the same layers; `npm run deps` (part of `npm test`) checks them.
// Around src/: the tests and the benchmarks share helpers only through testkit/, which imports
// src/ and nothing else; src/ imports none of them (docs/testing.md).
//
const { LAYERS } = require('./scripts/layers.cjs');

// src/<folder>/… or src/<file>.ts for the single-file modules at the top.
const path = (name) => `^src/(${name}/|${name}\\.ts$)`;

/** An error whenever a file whose path matches `from` imports one whose path matches `to`. */
const forbid = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

const rules = [];
LAYERS.forEach((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  for (const folder of layer) {
    const siblings = layer.filter((f) => f !== folder);
    const banned = [...above, ...siblings];
    if (banned.length === 0) continue;
    const comment = `${folder} sits in layer ${i}; it may not import ${banned.join(', ')}`;
    rules.push(
      forbid(`${folder}-imports-only-lower-layers`, comment, path(folder), `^src/(${banned.map((b) => `${b}/|${b}\\.ts$`).join('|')})`),
    );
  }
});

module.exports = {
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
    forbid('src-imports-no-tests', 'The product never depends on its tests, benchmarks or their kit.', '^src/', '^(test|bench|testkit)/'),
    forbid(
      'testkit-imports-only-src',
      'testkit/ is what tests and benchmarks share: it may lean on src/, never on either of them.',
      '^testkit/',
      '^(test|bench)/',
    ),
    forbid('bench-imports-no-tests', 'A helper the benchmarks need from the tests moves to testkit/.', '^bench/', '^test/'),
    forbid('tests-import-no-bench', 'A helper the tests need from the benchmarks moves to testkit/.', '^test/', '^bench/'),
    ...rules,
    // Inside src/agent/ (docs/architecture.md "The map"): the wire and the asks stand alone; the
    // contract, the asks and the adapters never reach up into the hub, which uses them all.
    forbid(
      'agent-wire-stands-alone',
      'agent/wire/ is what crosses the agent socket: it imports no other room of agent/.',
      '^src/agent/wire/',
      '^src/agent/(?!wire/)',
    ),
    forbid(
      'agent-asks-stand-alone',
      'agent/asks/ is an ask and its desk: it imports no other room of agent/.',
      '^src/agent/asks/',
      '^src/agent/(?!asks/)',
    ),
    forbid(
      'agent-hub-is-on-top',
      'The hub uses the contract, the wire, the asks and the adapters; none of them imports the hub.',
      '^src/agent/(?!hub/)',
      '^src/agent/hub/',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^(dist|scripts|test/fixtures|bench/peers)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
