// Lint: the recommended type-aware rules, plus the habits the house style asks for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // src/**/*.checks.ts: written by `npm run schemas` (TypeBox's check code as it comes).
  { ignores: ['dist/**', 'dist-check/**', 'node_modules/**', 'coverage/**', 'docs/**', 'test-artifacts/**', 'src/**/*.checks.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [{ name: 'child_process', message: 'use node:child_process' }] }],
    },
  },
  {
    // Machines are pure: no node built-ins, no clocks, no timers.
    files: ['src/machines/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['node:*', 'fastify*', 'ws', '../actors/*', '../transport/*', '../tmux/*'] }],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'Date'],
    },
  },
  {
    // Actors never reach the transport.
    files: ['src/actors/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['fastify*', 'ws', '@fastify/*', '../transport/*'] }] },
  },
  {
    // The composition root and its wiring, all of src/daemon/ and nothing else (a file outside it
    // that constructs a service is refused by test/unit/wiring.test.ts), only construct and
    // connect: a rule ("when", "if", "unless") lives in the room it is about, where a unit test
    // reaches it (docs/architecture.md "The map").
    files: ['src/daemon/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'IfStatement',
          'ConditionalExpression',
          'SwitchStatement',
          'ForStatement',
          'ForOfStatement',
          'ForInStatement',
          'WhileStatement',
          'DoWhileStatement',
          "LogicalExpression[operator='&&']",
          "LogicalExpression[operator='||']",
        ].map((selector) => ({
          selector,
          message: 'the composition root only constructs and connects: put this decision in the room it is about',
        })),
      ],
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The import-graph rule is CommonJS, as dependency-cruiser reads it.
    files: ['.dependency-cruiser.cjs', 'scripts/layers.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly' },
      parserOptions: { projectService: false, project: null },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
);
