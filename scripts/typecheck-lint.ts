/**
 * `npm run typecheck:lint`: the typecheck and the lint in one process, on one TypeScript program
 * (docs/testing.md "Time").
 *
 * The lint's type-aware rules need the types of every file, which `eslint .` alone builds a second
 * time after `tsc --noEmit` built them: most of the lint's CPU. Here the program tsc's check
 * filled is handed to the lint (typescript-eslint's `parserOptions.programs`), so each type is
 * worked out once. The checks are the same as `npm run typecheck` and `npm run lint`: the same
 * tsconfig.json, the same eslint.config.js and files; only the TypeScript files (all of them in
 * the program) take the program, the few plain JavaScript files keep their own settings. The
 * output is tsc's diagnostics, then eslint's report; the exit code is 0 only when neither found an
 * error.
 */
import { ESLint } from 'eslint';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** tsc -p tsconfig.json --noEmit, in this process: its diagnostics and the program it checked. */
function typecheck(): { program: ts.Program; diagnostics: readonly ts.Diagnostic[] } {
  const configPath = join(ROOT, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
  });
  return { program, diagnostics: ts.getPreEmitDiagnostics(program) };
}

async function main(): Promise<number> {
  const { program, diagnostics } = typecheck();
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  };
  if (diagnostics.length > 0) process.stdout.write(`typecheck:\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, host)}\n`);
  const typeErrors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;

  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program], projectService: false } } }],
  });
  const results = await eslint.lintFiles(['.']);
  const report = await (await eslint.loadFormatter('stylish')).format(results);
  if (report.length > 0) process.stdout.write(`lint:${report}\n`);
  const lintErrors = results.reduce((n, r) => n + r.errorCount, 0);

  process.stdout.write(`typecheck: ${typeErrors} error(s); lint: ${lintErrors} error(s) in ${results.length} files\n`);
  return typeErrors > 0 || lintErrors > 0 ? 1 : 0;
}

process.exitCode = await main();
