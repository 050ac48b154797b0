/**
 * The examples, run as a user runs them (node with tsx; `segkit` resolves to dist/ through the
 * package's "exports", so `npm run build` first; `npm test` does): README's main example
 * (examples/moe-router.ts), the sparse-attention example on the CPU and on WebGPU, and the node:test
 * version of the backend-agnostic test. examples/backend-agnostic.test.ts runs under vitest itself;
 * the browser example runs in test/browser/.
 *
 * No dist/: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { testBackends } from '../src/testing.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const missing = existsSync(`${root}dist/index.js`) ? undefined : 'no dist/index.js (run npm run build first)';
if (missing !== undefined) {
  if (process.env.CI) throw new Error(`the examples cannot run in CI: ${missing}`);
  console.warn(`[segkit] skipping the examples: ${missing}`);
}
const [webgpu] = (await testBackends({ only: ['webgpu'] })).entries;

/** Runs an example with node (tsx for TypeScript); fails the test with its output when it fails. */
function runExample(args: string[]): string {
  const result = spawnSync(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    encoding: 'utf8',
    // Lavapipe's threads spin on a busy machine; one is as fast here (see test/webgpu.test.ts).
    env: { ...process.env, LP_NUM_THREADS: process.env.LP_NUM_THREADS ?? '1' },
    timeout: 240_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status ?? result.signal}:\n${output}`);
  return result.stdout;
}

/** The LCG of examples/moe-router.ts. */
function moeScores(tokens: number, experts: number): Float32Array {
  const scores = new Float32Array(tokens * experts);
  let seed = 12345;
  for (let i = 0; i < scores.length; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    scores[i] = (seed / 2 ** 32) * 8 - 4;
  }
  return scores;
}

(missing === undefined ? describe : describe.skip)('examples', () => {
  it('moe-router.ts (npm run example): the top-2 experts, their softmax weights, the plan explained', () => {
    const output = runExample(['examples/moe-router.ts']);
    expect(output).toContain('routed 4096 tokens to the top 2 of 128 experts');
    expect(output).toContain('two-step plan (compile-time variants: reduce): the same weights, bit for bit: true');
    expect(output).toContain('DeviceBatchedTopK on cpu: 4096 segments, kMax 2, f32 keys, values: indices, weights: softmax');
    expect(output).toContain('Chosen variant: reduce');
    const scores = moeScores(4096, 128);
    for (let token = 0; token < 4; token++) {
      const row = scores.subarray(token * 128, (token + 1) * 128);
      const [a, b] = Array.from(row.keys()).sort((x, y) => row[y]! - row[x]! || x - y);
      // Softmax over the two selected logits in float64 (the epilogue is within 1 ulp of it).
      const sum = 1 + Math.exp(row[b!]! - row[a!]!);
      const wa = 1 / sum;
      const wb = Math.exp(row[b!]! - row[a!]!) / sum;
      expect(output).toContain(
        `token ${token}: expert ${a} (logit ${row[a!]!.toFixed(3)}, weight ${wa.toFixed(3)}), expert ${b} (logit ${row[b!]!.toFixed(3)}, weight ${wb.toFixed(3)})`,
      );
    }
  }, 240_000);

  it('sparse-attention.ts: ragged strided rows, device-only lengths and k, k up to 2048 sorted, checked against a plain sort; the same rows on WebGPU', () => {
    const cpu = runExample(['examples/sparse-attention.ts']);
    expect(cpu).toContain('checked 24 rows against a plain sort: identical');
    // radix-select on the CPU emulator (row-radix is natural on backends of many workgroup slots only).
    expect(cpu).toMatch(/^cpu: 24 rows, lengths 0\.\.8192, k 1\.\.2048, variant radix-select, [\d.]+ ms per call$/m);
    expect(cpu).toContain("Checks: device-only values are validated on the device; each run's status words are copied aside on the device and read back at the next synchronize()/download() or plan.checked(), not per run.");
    const rows = (output: string) => output.split('\n').filter((line) => line.startsWith('row '));
    expect(rows(cpu)).toHaveLength(4);
    if (webgpu!.skip !== undefined) {
      expect(process.env.CI, `WebGPU skipped in CI: ${webgpu!.skip}`).toBeUndefined();
      return;
    }
    const gpu = runExample(['examples/sparse-attention.ts', '--webgpu']);
    expect(gpu).toContain('checked 24 rows against a plain sort: identical');
    expect(gpu).toMatch(/^webgpu: 24 rows, .* variant (row-radix|radix-select), /m);
    expect(rows(gpu)).toEqual(rows(cpu));
  }, 480_000);

  it('backend-agnostic.node-test.ts: the same test under node:test passes on every backend here', () => {
    const output = runExample(['--test', '--test-reporter=tap', 'examples/backend-agnostic.node-test.ts']);
    const available = webgpu!.skip === undefined ? 3 : 2;
    expect(output).toContain(`# pass ${available + 1}`);
    expect(output).toContain('# fail 0');
    expect(output).toContain(`# skipped ${3 - available}`);
    expect(output).toContain('ok 3 - routes each token to its top 2 experts on webgpu');
  }, 240_000);
});
