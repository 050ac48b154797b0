/**
 * The browser example (examples/browser/: a top-k on navigator.gpu showing explain() and the time per
 * call) and a subset of every algorithm's conformance suite (top-k, reduce, scan, sort, batched copy)
 * on WebGPU in headless Chromium (Debian's `chromium`, driven by playwright-core; WebGPU on
 * SwiftShader), against the built package: page.ts is bundled by esbuild from dist/ (run `npm run
 * build` first; `npm test` does). The page returns each case's outputs with the reference's; this file
 * asserts them equal, bit for bit, one test per algorithm.
 *
 * No /usr/bin/chromium or no dist/: in CI (process.env.CI set) that is a failure; elsewhere the file
 * is skipped and says why.
 */
import { existsSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleServer } from '../../examples/browser/serve.js';
import { referenceTopK } from '../../src/index.js';
import type { ComparedOutput, SubsetOutcome } from './subset.js';

const chromiumPath = '/usr/bin/chromium';
const root = fileURLToPath(new URL('../../', import.meta.url));
const distIndex = `${root}dist/index.js`;
const chromiumFlags = [
  '--enable-unsafe-webgpu',
  '--enable-unsafe-swiftshader',
  '--no-sandbox',
  '--headless',
  '--disable-gpu-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

const missing = !existsSync(chromiumPath)
  ? `no ${chromiumPath} (apt-get install chromium; .ci/run installs it)`
  : !existsSync(distIndex)
    ? 'no dist/index.js (run npm run build first)'
    : undefined;
if (missing !== undefined) {
  if (process.env.CI) throw new Error(`the browser WebGPU test cannot run in CI: ${missing}`);
  console.warn(`[segkit] skipping the browser WebGPU test: ${missing}`);
}

/** The page script, bundled against dist/ (the suite's imports of src/index.js are redirected there). */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [`${root}test/browser/page.ts`],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    // Node-only code paths of the backend (Dawn's loader) never run in the page.
    external: ['node:*', 'webgpu'],
    plugins: [
      {
        name: 'segkit-dist',
        setup(builder) {
          builder.onResolve({ filter: /\/src\/index\.js$/ }, () => ({ path: distIndex }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}

(missing === undefined ? describe : describe.skip)('WebGPU in headless Chromium', () => {
  let server: Server;
  let url: string;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];
  beforeAll(async () => {
    const script = await bundlePage();
    server = createServer((request, response) => {
      if (request.url === '/page.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      } else {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>segkit</title><script type="module" src="/page.js"></script>');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // localhost is a secure context, which navigator.gpu needs.
    url = `http://localhost:${(server.address() as AddressInfo).port}/`;
    // One page serves every algorithm's subset (each on its own backend): Chromium starts once.
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumFlags, headless: true });
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(url);
    await page.waitForFunction(() => document.title === 'segkit webgpu ready', undefined, { timeout: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  /** Runs one algorithm's subset on the page; checks every output against the reference's, every variant forced once, and the bad-input case. */
  async function expectSubset(
    run: 'runReduceSubset' | 'runScanSubset' | 'runSortSubset' | 'runCopySubset',
    expected: { cases: number; violation: string; parameter: string; segment: number },
  ): Promise<SubsetOutcome> {
    const outcome = await page.evaluate((name) => (globalThis as unknown as Record<string, () => Promise<SubsetOutcome>>)[name]!(), run);
    expect(pageErrors).toEqual([]);
    console.info(`[segkit] ${outcome.algorithm} in Chromium: ${outcome.cases.length} runs, ${outcome.compiled} pipelines compiled, ${outcome.ms.toFixed(0)} ms`);
    expect(outcome.cases.length, `${outcome.algorithm}: runs`).toBe(expected.cases);
    for (const c of outcome.cases) {
      if (c.forced !== undefined) expect(c.variant, `${c.name}: the forced variant ran`).toBe(c.forced);
      expect(c.outputs.length, `${c.name}: outputs`).toBeGreaterThan(0);
      for (const output of c.outputs) {
        expect(output.expected.length, `${c.name}: ${output.label} compared`).toBeGreaterThan(0);
        expectSameWords(output, `${outcome.algorithm} ${c.name} (${c.variant}): ${output.label}`);
      }
    }
    const forced = outcome.cases.map((c) => c.forced).filter((v) => v !== undefined);
    expect([...new Set(forced)].sort(), `${outcome.algorithm}: every variant forced once`).toEqual([...outcome.variants].sort());
    // A device-only value outside its guarantees under 'validate': not at run time (no read-back per
    // run) but at the next synchronize, named, and every output as it was.
    expect(outcome.violation.surfacedAt, `${outcome.algorithm}: ${outcome.violation.error}`).toBe('synchronize');
    expect(outcome.violation.error).toBe(`GuaranteeViolationError: ${expected.violation}`);
    expect(outcome.violation.parameter).toBe(expected.parameter);
    expect(outcome.violation.segment).toBe(expected.segment);
    expect(outcome.violation.untouched.length).toBeGreaterThan(0);
    expect(outcome.violation.untouched.every((u) => u), `${outcome.algorithm}: outputs untouched after the violation`).toBe(true);
    return outcome;
  }

  /** The words of a case's named output. */
  const output = (outcome: SubsetOutcome, name: string, label: string): number[] => {
    const found = outcome.cases.find((c) => c.name === name)?.outputs.find((o) => o.label === label);
    if (found === undefined) throw new Error(`no output '${label}' of case '${name}'`);
    return found.got;
  };

  it('runs the top-k subset bit-identical to the reference', async () => {
    expect(pageErrors).toEqual([]);
    const hasGpu = await page.evaluate(() => 'gpu' in navigator);
    expect(hasGpu, 'navigator.gpu in headless Chromium').toBe(true);
    const outcome = await page.evaluate(() =>
      (globalThis as unknown as { runTopKSubset(): Promise<{ adapter: string; results: { name: string; variant: string; keys: number[]; expectedKeys: number[]; values?: number[]; expectedValues?: number[]; ms: number; compiled: number }[]; violation: string }> }).runTopKSubset(),
    );
    expect(outcome.results.length).toBe(11);
    const variants = new Set(outcome.results.map((r) => r.variant));
    expect([...variants].sort()).toEqual(['radix-select', 'reduce', 'row-radix', 'single-tile']);
    for (const r of outcome.results) {
      expect(r.keys, `${r.name} (${r.variant}): keys`).toEqual(r.expectedKeys);
      expect(r.values, `${r.name} (${r.variant}): values`).toEqual(r.expectedValues);
    }
    expect(outcome.violation).toBe('GuaranteeViolationError: k[1]: 9 is outside the static bounds [1, 4] (found on the device)');
  }, 120_000);

  it('runs the DeviceSegmentedReduce subset bit-identical to the reference', async () => {
    const outcome = await expectSubset('runReduceSubset', { cases: 6, violation: 'segmentSizes[1]: 9 is outside the static bounds [0, 8] (found on the device)', parameter: 'segmentSizes', segment: 1 });
    // Known bits: argMax and max take the first NaN (its payload), argMin and min the -0 before an equal +0.
    expect(output(outcome, 'NaN, -0, Infinity', 'values').map(hex)).toEqual([0x7fc00001, 0x80000000, 0x7fc00001, 0x00000000].map(hex));
    expect(output(outcome, 'NaN, -0, Infinity', 'indices')).toEqual([2, 0, 2, 0]);
  }, 90_000);

  it('runs the DeviceSegmentedScan subset bit-identical to the reference', async () => {
    const outcome = await expectSubset('runScanSubset', { cases: 5, violation: 'segmentSizes[1]: the segment ends at 12, past the 11 values of valuesIn (found on the device)', parameter: 'segmentSizes', segment: 1 });
    // Known bits: max keeps -0 through +0, then +Inf, then the first NaN's own bits; min keeps -0 until -Inf.
    expect(output(outcome, 'NaN, -0, Infinity', 'valuesOut').map(hex)).toEqual(
      [0x80000000, 0x80000000, 0x7f800000, 0x7fc00001, 0x7fc00001, 0x7fc00001, 0x7fc00001, 0x7fc00001, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0xff800000, 0xff800000].map(hex),
    );
  }, 90_000);

  it('runs the DeviceSegmentedSort subset bit-identical to the reference', async () => {
    const outcome = await expectSubset('runSortSubset', { cases: 6, violation: 'segmentSizes[1]: 9 is outside the static bounds [0, 8] (found on the device)', parameter: 'segmentSizes', segment: 1 });
    // Known bits: NaN largest, -0 equal to +0 (input order kept, each its own bits), in both orders.
    expect(output(outcome, 'NaN, -0, +0', 'keysOut').map(hex)).toEqual(
      [0xbf800000, 0x80000000, 0, 0x80000000, 0x3f800000, 0x7fc00001, 0xffc00002, 0x7fc00001, 0xffc00002, 0x3f800000, 0x80000000, 0, 0x80000000, 0xbf800000].map(hex),
    );
    expect(output(outcome, 'NaN, -0, +0', 'valuesOut')).toEqual([4, 1, 2, 6, 3, 0, 5, 0, 5, 3, 1, 2, 6, 4]);
  }, 90_000);

  it('runs the DeviceBatchedCopy subset bit-identical to the reference', async () => {
    const outcome = await expectSubset('runCopySubset', { cases: 4, violation: "destinationOffsets[1]: the destination range [27, 67) overlaps buffer 2's destination range [66, 69) (found on the device)", parameter: 'destinationOffsets', segment: 1 });
    // The words moved include NaN payloads of both signs, -0 and infinities, kept as they were.
    const moved = new Set(output(outcome, 'f32 words with specials, sizes at boundaries', 'destination'));
    for (const special of [0x7fc00001, 0xffc12345, 0x80000000, 0x7f800000, 0xff800000]) expect(moved.has(special), hex(special)).toBe(true);
  }, 90_000);

  it('runs the browser example: top-k on navigator.gpu, explain() and the time per call shown, results checked', async () => {
    const example = await startExampleServer();
    const exampleBrowser = await chromium.launch({ executablePath: chromiumPath, args: chromiumFlags, headless: true });
    try {
      const page = await exampleBrowser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      const tokens = 512;
      const experts = 96;
      const k = 3;
      await page.goto(`${example.url}?tokens=${tokens}&experts=${experts}&k=${k}`);
      await page.waitForFunction(() => (globalThis as { segkitExample?: { done: boolean } }).segkitExample?.done === true, undefined, { timeout: 60_000 });
      expect(errors).toEqual([]);
      const result = await page.evaluate(
        () =>
          (globalThis as unknown as { segkitExample: { error?: string; variant: string; explain: string; calls: number; msPerCall: number; mismatches: number; sample: { logits: number[][]; experts: number[][]; chosen: number[][] } } })
            .segkitExample,
      );
      expect(result.error).toBeUndefined();
      expect(result.mismatches).toBe(0);
      expect(result.variant).toBe('reduce');
      expect(result.explain).toContain(`DeviceBatchedTopK on webgpu: ${tokens} segments, kMax ${k}`);
      expect(result.calls).toBe(20);
      expect(result.msPerCall).toBeGreaterThan(0);
      // The page shows what it computed: explain() verbatim, the time per call, the first tokens.
      expect(await page.textContent('#explain')).toBe(result.explain);
      expect(await page.textContent('#time')).toBe(`${result.msPerCall.toFixed(3)} ms (20 calls back to back, after one warm-up call)`);
      expect(await page.textContent('#status')).toBe("Done: variant reduce; every token's experts match a plain sort.");
      // The sample's experts and logits, against the reference on the page's own inputs.
      const shown = result.sample.logits.length;
      expect(shown).toBe(4);
      const expected = referenceTopK({
        keyType: 'f32',
        keys: new Uint32Array(new Float32Array(result.sample.logits.flat()).buffer),
        segmentStarts: Array.from({ length: shown }, (_, t) => t * experts),
        segmentSizes: Array.from({ length: shown }, () => experts),
        k: Array.from({ length: shown }, () => k),
        directions: Array.from({ length: shown }, () => 'max' as const),
        kMax: k,
        withValues: true,
      });
      expect(result.sample.experts.flat()).toEqual(Array.from(expected.values));
      expect(result.sample.chosen.flat()).toEqual(Array.from(new Float32Array(expected.keys.buffer)));
    } finally {
      await exampleBrowser.close();
      await new Promise<void>((resolve) => example.server.close(() => resolve()));
    }
  }, 120_000);
});

const hex = (word: number) => `0x${word.toString(16).padStart(8, '0')}`;

/** Word-for-word equality, reporting the first difference (a deep diff of thousands of words is unreadable). */
function expectSameWords({ got, expected }: ComparedOutput, label: string): void {
  expect(got.length, `${label}: length`).toBe(expected.length);
  const at = got.findIndex((word, i) => word !== expected[i]);
  if (at >= 0) expect(`${label}: word ${at} is ${hex(got[at]!)}`).toBe(`${label}: word ${at} is ${hex(expected[at]!)}`);
}
