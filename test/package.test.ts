/**
 * The package as a user gets it: a copy of the repository's files without build output (as a fresh
 * clone has them) is packed with `npm pack` (its `prepack` builds), the tarball is installed into a
 * fresh project outside the repository, and a small program is compiled against it with strict `tsc`
 * (`skipLibCheck: false`, Node and bundler resolution) and run: a CPU top-k whose values it checks,
 * and segkit/testing comparing two backends.
 *
 * Offline: the project's dependencies (segkit's declared ones, and the project's own typescript and
 * @types/node) are linked from this repository's node_modules before `npm install --offline`, so npm
 * only unpacks the tarball. A package segkit needs but does not declare is absent there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const work = mkdtempSync(join(tmpdir(), 'segkit-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** Links `name` from this repository's node_modules into `modules` (scoped names included). */
function linkPackage(modules: string, name: string): void {
  const target = join(root, 'node_modules', name);
  if (!existsSync(target)) throw new Error(`${name} is not installed in ${root}node_modules (run npm ci)`);
  mkdirSync(dirname(join(modules, name)), { recursive: true });
  symlinkSync(target, join(modules, name), 'dir');
}

const installedVersion = (name: string) => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** The consumer: a CPU top-k with its values checked, the compile-time rules through the .d.ts, and segkit/testing. */
const program = String.raw`
import { DeviceBatchedTopK, SegkitRangeError, cpuBackend, env, p, type TopKVariantsFor } from 'segkit';
import { testBackends } from 'segkit/testing';

const rows = 3;
const cols = 6;
const scores = new Float32Array([
  0.1, 0.9, 0.3, 0.9, -1, 0.5,
  5, 4, 3, 2, 1, 0,
  -2, Number.NaN, 7, -0, 7, 1,
]);
const backend = cpuBackend({ workers: 0 });
const keysIn = backend.upload(scores);
const keysOut = backend.alloc('f32', rows * 2);
const valuesOut = backend.alloc('u32', rows * 2);
const args = {
  keysIn,
  keysOut,
  valuesOut,
  segmentSizes: p.constant(cols),
  k: p.uniform(2, { min: 1, max: 8 }),
  selectDirection: p.constantOption('max'),
  numSegments: p.uniform(rows),
};
const variant: TopKVariantsFor<typeof args> = 'reduce';
const plan = DeviceBatchedTopK.plan(args, env({ backend }));
await plan.run();
const keys = Array.from(await backend.download(keysOut));
const values = Array.from(await backend.download(valuesOut));
// Ties go to the smaller index; NaN ranks above every number; keys are f32 (0.9 reads back as fround(0.9)).
const expectedKeys = [0.9, 0.9, 5, 4, Number.NaN, 7].map(Math.fround);
const expectedValues = [1, 3, 0, 1, 1, 2];
if (JSON.stringify(values) !== JSON.stringify(expectedValues) || keys.some((key, i) => !Object.is(key, expectedKeys[i]))) {
  throw new Error('wrong top-k: keys ' + JSON.stringify(keys) + ', values ' + JSON.stringify(values));
}

// @ts-expect-error 16 is outside the static bounds [1, 8]
p.uniform(16, { min: 1, max: 8 });
let rangeMessage = 'no error';
try {
  DeviceBatchedTopK.plan({ ...args, k: p.perSegment([1, 9, 2], { min: 1, max: 4 }) }, env({ backend }));
} catch (error) {
  if (error instanceof SegkitRangeError) rangeMessage = error.message;
}

const backends = await testBackends({ only: ['cpu', 'cpu-workers'], workers: 1 });
const comparison = await backends.assertSame(async (b, run) => {
  const input = run.track(b.upload(new Float32Array(64 * 256).map((_, i) => (i * 7919) % 1009)));
  const output = run.track(b.alloc('f32', 64 * 4));
  await DeviceBatchedTopK.maxKeys({ keysIn: input, keysOut: output, segmentSizes: p.constant(256), k: p.constant(4), numSegments: p.constant(64) }, env({ backend: b }));
  return { keysOut: output };
}, { slotsPerSegment: 4 });
backends.destroy();
backend.destroy();
console.log(JSON.stringify({ variant: plan.variant, compileTime: variant, keys: keys.map(String), values, rangeMessage, compared: comparison.runs.map((r) => r.name) }));
`;

describe('the packed package', () => {
  let tarball = '';
  let packedFiles: string[] = [];

  beforeAll(() => {
    // The repository's files as a clone has them (tracked, plus new files git does not ignore): no dist/.
    const clone = join(work, 'clone');
    const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root).split('\0').filter(Boolean);
    for (const file of listed) {
      if (!existsSync(join(root, file))) continue; // deleted in the working tree
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(root, file), join(clone, file));
    }
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], clone)) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed[0]!.filename);
    packedFiles = packed[0]!.files.map((f) => f.path).sort();
  }, 300_000);

  it('prepack builds: the tarball holds both entry points, the sources its maps point at, the docs', () => {
    for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/testing.js', 'dist/testing.d.ts', 'docs/README.md', 'docs/top-k.md']) {
      expect(packedFiles, file).toContain(file);
    }
    expect(packedFiles.filter((f) => /^(test|bench|examples|types-tests|etc)\//.test(f))).toEqual([]);
    // Every source map and declaration map points at files that ship (src/ is in the tarball).
    const clone = join(work, 'clone');
    const maps = packedFiles.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(50);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(clone, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const path = posix.normalize(posix.join(posix.dirname(map), source));
        if (!packedFiles.includes(path)) missing.push(`${map} -> ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('installs into a fresh project, compiles under strict tsc without skipLibCheck, and runs', () => {
    const app = join(work, 'app');
    const modules = join(app, 'node_modules');
    mkdirSync(modules, { recursive: true });
    const tools = ['typescript', '@types/node'];
    for (const name of [...Object.keys(rootPackage.dependencies), ...tools]) linkPackage(modules, name);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'segkit-consumer',
        private: true,
        type: 'module',
        dependencies: { [rootPackage.name]: `file:${tarball}` },
        devDependencies: Object.fromEntries(tools.map((name) => [name, installedVersion(name)])),
      }),
    );
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], app);
    const installed = JSON.parse(readFileSync(join(modules, rootPackage.name, 'package.json'), 'utf8')) as { version: string };
    expect(installed.version).toBe(rootPackage.version);
    expect(existsSync(join(modules, 'webgpu')), 'the optional peer dependency is not installed').toBe(false);

    writeFileSync(join(app, 'main.ts'), program);
    const strict = { strict: true, skipLibCheck: false, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, target: 'ES2022', noEmitOnError: true };
    // A Node program (NodeNext), and a browser bundle's view of the same code (Bundler, no Node types).
    // Both need lib DOM: segkit's types include WebGPU's (@webgpu/types), which use DOM names
    // (BufferSource, EventInit, ...); docs/README.md says so.
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...strict, module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: ['node'], outDir: 'out' }, files: ['main.ts'] }),
    );
    writeFileSync(
      join(app, 'tsconfig.bundler.json'),
      JSON.stringify({ compilerOptions: { ...strict, module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM'], types: [], noEmit: true }, files: ['main.ts'] }),
    );
    const tsc = join(modules, 'typescript', 'bin', 'tsc');
    run(process.execPath, [tsc, '-p', 'tsconfig.json'], app);
    run(process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], app);

    const output = JSON.parse(run(process.execPath, [join(app, 'out', 'main.js')], app).trim()) as Record<string, unknown>;
    expect(output).toEqual({
      variant: 'reduce',
      compileTime: 'reduce',
      keys: ['0.8999999761581421', '0.8999999761581421', '5', '4', 'NaN', '7'],
      values: [1, 3, 0, 1, 1, 2],
      rangeMessage: 'k[1]: 9 is outside the static bounds [1, 4]',
      compared: ['cpu', 'cpu-workers'],
    });
  }, 300_000);
});
