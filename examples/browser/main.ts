/**
 * The browser example's page script: a batched top-k on WebGPU through `navigator.gpu`, its plan's
 * explain(), the time per call, and the first results checked against a plain sort. Bundled by
 * serve.ts (which maps `segkit` to the built package); the result is also left on
 * `window.segkitExample` for the headless Chromium test (test/browser/).
 */
import { DeviceBatchedTopK, env, p, webgpuBackend } from 'segkit';

/** What the page found, for people (the DOM) and for the test (window.segkitExample). */
export interface ExampleResult {
  done: true;
  error?: string;
  adapter?: string;
  variant?: string;
  explain?: string;
  calls?: number;
  msPerCall?: number;
  /** The first tokens' logits, and the experts and logits top-k chose for them. */
  sample?: { logits: number[][]; experts: number[][]; chosen: number[][] };
  /** Tokens whose experts differ from a plain sort of their logits (0 when all agree). */
  mismatches?: number;
}

const query = new URLSearchParams(location.search);
const tokens = Number(query.get('tokens') ?? 4096);
const experts = Number(query.get('experts') ?? 128);
const k = Number(query.get('k') ?? 2);
const calls = 20;

const show = (id: string, text: string) => {
  document.getElementById(id)!.textContent = text;
};

async function run(): Promise<ExampleResult> {
  show('tokens', String(tokens));
  show('experts', String(experts));
  show('k', String(k));
  if (!('gpu' in navigator)) throw new Error('this browser has no navigator.gpu (WebGPU); try a recent Chrome or Edge, or Firefox Nightly');
  const gpu = await webgpuBackend();
  try {
    const info = gpu.adapterInfo;
    const adapter = [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') || 'unknown';

    const logits = new Float32Array(tokens * experts);
    for (let i = 0; i < logits.length; i++) logits[i] = Math.sin(i * 12.9898) * 4;
    const keysIn = gpu.upload(logits);
    const keysOut = gpu.alloc('f32', tokens * k);
    const valuesOut = gpu.alloc('u32', tokens * k);
    const plan = DeviceBatchedTopK.plan(
      {
        keysIn,
        keysOut,
        valuesOut,
        segmentSizes: p.uniform(experts),
        k: p.uniform(k, { min: 1, max: 8 }),
        selectDirection: p.constantOption('max'),
        numSegments: p.uniform(tokens),
      },
      env({ backend: gpu }),
    );
    const temp = plan.tempStorageBytes > 0 ? gpu.alloc('u8', plan.tempStorageBytes) : undefined;

    // The first call compiles the pipelines; then `calls` calls back to back, timed to the end of the GPU work.
    await plan.run(temp);
    await gpu.synchronize();
    const started = performance.now();
    for (let i = 0; i < calls; i++) await plan.run(temp);
    await gpu.synchronize();
    const msPerCall = (performance.now() - started) / calls;

    const chosenExperts = await gpu.download(valuesOut);
    const chosenLogits = await gpu.download(keysOut);
    let mismatches = 0;
    for (let t = 0; t < tokens; t++) {
      const row = logits.subarray(t * experts, (t + 1) * experts);
      const best = Array.from(row.keys()).sort((a, b) => row[b]! - row[a]! || a - b).slice(0, k);
      if (best.some((e, j) => chosenExperts[t * k + j] !== e)) mismatches++;
    }
    const shown = Math.min(4, tokens);
    const sample = {
      logits: Array.from({ length: shown }, (_, t) => Array.from(logits.subarray(t * experts, (t + 1) * experts))),
      experts: Array.from({ length: shown }, (_, t) => Array.from(chosenExperts.subarray(t * k, (t + 1) * k))),
      chosen: Array.from({ length: shown }, (_, t) => Array.from(chosenLogits.subarray(t * k, (t + 1) * k))),
    };
    for (const array of [keysIn, keysOut, valuesOut, temp]) array?.destroy();
    return { done: true, adapter, variant: plan.variant, explain: plan.explain(), calls, msPerCall, sample, mismatches };
  } finally {
    gpu.destroy();
  }
}

const result: ExampleResult = await run().catch((error: unknown) => ({ done: true, error: error instanceof Error ? error.message : String(error) }));
if (result.error !== undefined) {
  show('status', `Failed: ${result.error}`);
  document.getElementById('status')!.className = 'error';
} else {
  show('status', result.mismatches === 0 ? `Done: variant ${result.variant}; every token's experts match a plain sort.` : `${result.mismatches} tokens differ from a plain sort!`);
  show('adapter', result.adapter!);
  show('time', `${result.msPerCall!.toFixed(3)} ms (${result.calls} calls back to back, after one warm-up call)`);
  show('sample', result.sample!.experts.map((row, t) => `token ${t}: ${row.map((e, j) => `${e}: ${result.sample!.chosen[t]![j]!.toFixed(3)}`).join(', ')}`).join('\n'));
  show('explain', result.explain!);
}
(globalThis as { segkitExample?: ExampleResult }).segkitExample = result;
