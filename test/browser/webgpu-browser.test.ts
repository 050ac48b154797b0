/**
 * The browser example (examples/browser/: a top-k on navigator.gpu showing explain() and the time per
 * call) and a subset of the top-k conformance suite on WebGPU in headless Chromium (Debian's `chromium`,
 * driven by playwright-core; WebGPU on SwiftShader), against the built package: page.ts is bundled
 * by esbuild from dist/ (run `npm run build` first; `npm test` does). The page returns each case's
 * outputs with the reference's; this file asserts them equal, bit for bit.
 *
 * No /usr/bin/chromium or no dist/: in CI (process.env.CI set) that is a failure; elsewhere the file
 * is skipped and says why.
 */
import { existsSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleServer } from '../../examples/browser/serve.js';
import { referenceTopK } from '../../src/index.js';

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
  }, 60_000);
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('runs the top-k subset bit-identical to the reference', async () => {
    const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumFlags, headless: true });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(url);
      await page.waitForFunction(() => document.title === 'segkit webgpu ready', undefined, { timeout: 30_000 });
      expect(errors).toEqual([]);
      const hasGpu = await page.evaluate(() => 'gpu' in navigator);
      expect(hasGpu, 'navigator.gpu in headless Chromium').toBe(true);
      const outcome = await page.evaluate(() =>
        (globalThis as unknown as { runTopKSubset(): Promise<{ adapter: string; results: { name: string; variant: string; keys: number[]; expectedKeys: number[]; values?: number[]; expectedValues?: number[]; ms: number; compiled: number }[]; violation: string }> }).runTopKSubset(),
      );
      expect(outcome.results.length).toBe(10);
      const variants = new Set(outcome.results.map((r) => r.variant));
      expect([...variants].sort()).toEqual(['radix-select', 'reduce', 'single-tile']);
      for (const r of outcome.results) {
        expect(r.keys, `${r.name} (${r.variant}): keys`).toEqual(r.expectedKeys);
        expect(r.values, `${r.name} (${r.variant}): values`).toEqual(r.expectedValues);
      }
      expect(outcome.violation).toBe('GuaranteeViolationError: k[1]: 9 is outside the static bounds [1, 4] (found on the device)');
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('runs the browser example: top-k on navigator.gpu, explain() and the time per call shown, results checked', async () => {
    const example = await startExampleServer();
    const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumFlags, headless: true });
    try {
      const page = await browser.newPage();
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
      await browser.close();
      await new Promise<void>((resolve) => example.server.close(() => resolve()));
    }
  }, 120_000);
});
