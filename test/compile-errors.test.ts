import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/*
 * The compiler's own diagnostics for each compile-time rule contain the rule's message in words.
 * types-tests/ pins the message types; this pins what a user actually reads in the editor.
 * One program over every snippet in fixtures/compile-errors/ keeps it to a few seconds.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtureDir = join(root, 'test', 'fixtures', 'compile-errors');
const fixtures = readdirSync(fixtureDir)
  .filter((name) => name.endsWith('.ts'))
  .sort();

interface Expectation {
  /** 1-based line the error must start on. */
  readonly line: number;
  readonly text: string;
}

/** `// @error: <text>` on line n expects an error containing `<text>` on line n + 1. */
function expectationsOf(source: string): Expectation[] {
  return source.split('\n').flatMap((line, index) => {
    const found = /^\s*\/\/ @error: (.*)$/.exec(line);
    return found === null ? [] : [{ line: index + 2, text: found[1]! }];
  });
}

interface Reported {
  readonly line: number;
  readonly message: string;
}

let diagnosticsByFixture: Map<string, Reported[]>;

beforeAll(() => {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
  const options: ts.CompilerOptions = { ...config.options, noEmit: true, rootDir: root, declaration: false, declarationMap: false, sourceMap: false };
  const files = fixtures.map((name) => join(fixtureDir, name));
  const program = ts.createProgram(files, options);
  diagnosticsByFixture = new Map(
    fixtures.map((name, index) => {
      const sourceFile = program.getSourceFile(files[index]!)!;
      const diagnostics = [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)];
      return [
        name,
        diagnostics.map((d) => ({
          line: sourceFile.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
          message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
        })),
      ];
    }),
  );
}, 60_000);

describe.each(fixtures)('compile errors in %s', (name) => {
  const expectations = expectationsOf(readFileSync(join(fixtureDir, name), 'utf8'));

  it('has expectations', () => {
    expect(expectations.length).toBeGreaterThan(0);
  });

  it.each(expectations)('line $line: $text', ({ line, text }) => {
    const onLine = diagnosticsByFixture.get(name)!.filter((d) => d.line === line);
    expect(onLine.map((d) => d.message).join('\n')).toContain(text);
  });

  it('reports nothing else', () => {
    const expectedLines = new Set(expectations.map((e) => e.line));
    const unexpected = diagnosticsByFixture.get(name)!.filter((d) => !expectedLines.has(d.line));
    expect(unexpected).toEqual([]);
  });
});
