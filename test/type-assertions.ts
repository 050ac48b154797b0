/**
 * Type-checks generated assertions against the sources (the `*-variants-for` tests write one `const`
 * per variant the runtime reaches, typed with the compile-time set that must hold it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The package's entry point in the sources, as an import specifier for generated files. */
export const sourceEntry = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'index.js').replace(/\\/g, '/');

/** The compiler's messages for `source` (a module importing from {@link sourceEntry}); none when it type-checks. */
export function typeErrors(source: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'segkit-type-assertions-'));
  const file = join(dir, 'assertions.ts');
  writeFileSync(file, source);
  try {
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
