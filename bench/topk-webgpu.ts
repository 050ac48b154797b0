/**
 * segkit's WebGPU backend against tfjs-backend-webgpu's `tf.topk`, both on ONE Dawn device in one
 * process, plus a plain copy kernel on that device for the bandwidth fraction. f32 keys, 'max',
 * sorted, segment-local indices; same cases as bench/topk-cpu.ts with the single row at 1x16777216
 * (clamped to the device's storage-binding limit, e.g. lavapipe's 128 MiB).
 *
 * Figures per case (medians after warm-up):
 * - segkit batched: N back-to-back `DeviceBatchedTopK.select` calls (each one submit, no read-back),
 *   then one `backend.synchronize()`; time / N.
 *   segkitHostMs: the time inside the select calls alone (host-bound where it is ~ segkitMs);
 *   segkitPlanRunMs: the same with the two-step API (plan once, plan.run(temp) N times).
 *   segkitPlanRunGpuMs: plan.run's compute passes from timestamps (beside segkitGpuMs, select's).
 * - segkit single: one select + synchronize.
 * - segkit GPU: one select's compute pass, from timestamp queries (when the device has them).
 * - tfjs batched: N back-to-back `tf.topk` calls, then `await data()` of the last; time / N.
 * - tfjs single: one `tf.topk` + `await values.data()` + `await indices.data()`.
 * - copy: a vec4 copy kernel over the same number of key bytes (one dispatch), back-to-back in one
 *   submit; and a 256 MiB copy for the device's bandwidth (read + write bytes / time).
 * - bwFraction: (valid key bytes / segkit batched time) / copy GB/s (256 MiB, read + write).
 *
 * Runs under plain Node: bundle first (bench/gpu/build.sh -> dist/bench/topk-webgpu.mjs), then
 *   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp node dist/bench/topk-webgpu.mjs
 * or on the device: bash bench/gpu/run-all.sh
 * Options: --runs=N (default 9), --cases=id,id, --batch-ms=T (target time per batch, default 60),
 *          --warm-ms=T (each case keeps the GPU busy this long before it is timed, default 300),
 *          --single-cols=N (single-row case size, default 16777216), --out=dir, --no-tfjs, --no-check,
 *          --variants (also force each applicable variant: GPU and plan.run times per variant),
 *          --extra-cases=single-bits (diagnostic: the single row with random-bit keys),
 *          --no-tfjs-for=id,id (skip tfjs on those cases), --out-file=name.json, --build=label (kept in
 *          the JSON's meta, e.g. the commit), --set=cpu (only the first issue's cases),
 *          --tune='label={"policy":{"radixBits":8}};label2@id,id={...}' (also run each case, or the
 *          named ones, under these env tunings: GPU and plan.run times per tuning, to measure a
 *          policy value; a tuning that cannot run on a case is recorded as n/a; a "requirements"
 *          member is the env's requirements instead, e.g. {"requirements":{"outputOrdering":"unsorted"},
 *          "variant":"radix-select"}: unsorted output is checked in rank order),
 *          --toggles=enable-dawn-features=disable_robustness (Dawn instance flags separated by ';', each a comma-separated list, for diagnostics)
 * Cases whose parameters live on the device (per-token k, ragged sizes) are also timed under
 * `guaranteeChecks: 'trust'` (segkitTrustMs), beside the default 'validate'.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as segkit from 'segkit';
import { inRankOrder, makeCases, median, mismatches, parseArgs, peerKeyMismatches, printTable, reference } from './lib/cases.js';
import { segkitCase } from './lib/segkit-runner.js';
import { benchDevice, passTimer } from './lib/gpu-device.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 9);
const batchMs = Number(argv['batch-ms'] ?? 60);
const warmMs = Number(argv['warm-ms'] ?? 300);
const withTfjs = argv['no-tfjs'] === undefined;
const check = argv['no-check'] === undefined;
// Default: bench/results/ of the repo (this file runs from dist/bench/ once bundled).
const outDir = (argv.out ?? process.env.OUT ?? new URL('../../bench/results', import.meta.url).pathname).replace(/\/+$/, '');
const log = (...a: unknown[]) => console.error(...a);

// ---- one Dawn device, shared by segkit, tfjs and the copy kernel ------------------------------
const { gpu, adapter, device, features: wantFeatures } = await benchDevice({ features: ['shader-f16'], toggles: argv.toggles?.split(';') });
// tfjs' WebGPUBackend needs navigator.gpu.
Object.defineProperty(globalThis, 'navigator', { value: { gpu, hardwareConcurrency: cpus().length }, configurable: true, writable: true });
let gpuError: string | undefined;
device.addEventListener('uncapturederror', (e) => {
  const msg = (e as GPUUncapturedErrorEvent).error.message;
  gpuError ??= msg;
  log('uncaptured WebGPU error:', msg);
});
const info = adapter.info;
const adapterInfo = { vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description };
log('adapter:', JSON.stringify(adapterInfo), 'features:', wantFeatures.join(','));

const maxBind = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
const wantSingle = Number(argv['single-cols'] ?? 16777216);
let singleCols = wantSingle;
while (singleCols * 4 > maxBind) singleCols /= 2; // keys and tfjs' pow2-padded buffers must bind
const clampNote = singleCols < wantSingle ? `clamped from 1x${wantSingle}: maxStorageBufferBindingSize ${maxBind} B` : undefined;
if (clampNote) log(clampNote);

// ---- copy kernel -------------------------------------------------------------------------------
const copyModule = device.createShaderModule({
  code: `@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * 256u;
  if (i < arrayLength(&src)) { dst[i] = src[i]; }
}`,
});
const copyPipe = device.createComputePipeline({ layout: 'auto', compute: { module: copyModule, entryPoint: 'main' } });

/** ms per copy of `bytes` (vec4 kernel, `reps` dispatches in one pass and one submit; median of 5). */
async function copyMs(bytes: number): Promise<number> {
  bytes = Math.max(16, Math.ceil(bytes / 16) * 16);
  const usage = GPUBufferUsage.STORAGE;
  const a = device.createBuffer({ size: bytes, usage });
  const b = device.createBuffer({ size: bytes, usage });
  const bg = device.createBindGroup({ layout: copyPipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: a } }, { binding: 1, resource: { buffer: b } }] });
  const groups = Math.ceil(bytes / 16 / 256);
  const gx = Math.min(groups, 65535);
  const gy = Math.ceil(groups / gx);
  const run = async (reps: number) => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(copyPipe);
    pass.setBindGroup(0, bg);
    for (let i = 0; i < reps; i++) pass.dispatchWorkgroups(gx, gy);
    pass.end();
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  };
  await run(2);
  const one = await run(1);
  const reps = Math.max(3, Math.min(2000, Math.ceil(batchMs / Math.max(one, 0.005))));
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push((await run(reps)) / reps);
  a.destroy();
  b.destroy();
  return median(samples);
}

const bigCopyBytes = Math.min(256 << 20, maxBind) & ~0xffff;
const bigCopy = await copyMs(bigCopyBytes);
const copyGBps = (2 * bigCopyBytes) / (bigCopy * 1e6);
log(`copy ${bigCopyBytes >> 20} MiB: ${bigCopy.toFixed(3)} ms = ${copyGBps.toFixed(1)} GB/s (read + write)`);

// ---- GPU time of one call: timestamps around each compute pass (bench/lib/gpu-device.ts).
const timer = passTimer(device);
const gpuTimeMs = (call: () => Promise<unknown>, sync: () => Promise<unknown>) => timer.gpuTimeMs(call, sync, runs);

// ---- per-submit overhead: an empty submit round trip --------------------------------------------
const emptyRt: number[] = [];
for (let i = 0; i < 100; i++) {
  const t0 = performance.now();
  device.queue.submit([device.createCommandEncoder().finish()]);
  await device.queue.onSubmittedWorkDone();
  emptyRt.push(performance.now() - t0);
}
const emptySubmitUs = median(emptyRt) * 1000;

// ---- backends ----------------------------------------------------------------------------------
const webgpuBackend = (segkit as Record<string, unknown>).webgpuBackend as ((o?: { device?: GPUDevice }) => Promise<segkit.Backend>) | undefined;
const sk = webgpuBackend ? await webgpuBackend({ device }) : undefined;
if (!sk) log('segkit has no webgpuBackend export yet: segkit columns skipped');
const environment = sk ? segkit.env({ backend: sk }) : undefined;
if (withTfjs) {
  tf.env().set('IS_TEST', true);
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new WebGPUBackend(device, info as never), 3);
  await tf.setBackend('webgpu');
  await tf.ready();
}

/**
 * N back-to-back calls then one `finish`: ms per call, and hostMs = the time inside the calls
 * themselves (planning, encoding, submitting) per call: where hostMs ~ ms, the figure is host-bound.
 */
async function timeBatched(call: () => unknown | Promise<unknown>, finish: () => Promise<unknown>, perCallEstimateMs: number) {
  const n = Math.max(5, Math.min(500, Math.ceil(batchMs / Math.max(perCallEstimateMs, 0.002))));
  const samples: number[] = [];
  const host: number[] = [];
  for (let r = 0; r < Math.max(3, Math.ceil(runs / 2)); r++) {
    let inCalls = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const c0 = performance.now();
      await call();
      inCalls += performance.now() - c0;
    }
    await finish();
    samples.push((performance.now() - t0) / n);
    host.push(inCalls / n);
  }
  return { ms: median(samples), hostMs: median(host), n };
}
/** Back-to-back `call`s for about `warmMs` (synchronized every ~20 ms), so timing starts at working clocks. */
async function keepBusy(call: () => unknown | Promise<unknown>, finish: () => Promise<unknown>) {
  const until = performance.now() + warmMs;
  while (performance.now() < until) {
    const slice = performance.now() + 20;
    while (performance.now() < slice) await call();
    await finish();
  }
}
async function timeSingle(fn: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

// ---- cases -------------------------------------------------------------------------------------
const cases = makeCases({
  singleRowCols: singleCols,
  set: argv.set === 'cpu' ? 'cpu' : 'gpu',
  ...(argv.cases ? { only: String(argv.cases).split(',') } : {}),
  ...(argv['extra-cases'] ? { extra: String(argv['extra-cases']).split(',') } : {}),
  ...(clampNote ? { clampNote } : {}),
});
const variantsToTry = ['single-tile', 'reduce', 'radix-select', 'row-radix'] as const;
/** --tune: label -> env tuning, and the case ids it runs on (`label@id,id={...}`; all when none named). */
const tunings: [string, Record<string, unknown>, string[] | undefined][] = argv.tune
  ? String(argv.tune).split(';').filter((t) => t.includes('=')).map((t) => {
      const at = t.indexOf('=');
      const [label, ids] = t.slice(0, at).split('@') as [string, string | undefined];
      return [label, JSON.parse(t.slice(at + 1)) as Record<string, unknown>, ids?.split(',')];
    })
  : [];
const results: Record<string, unknown>[] = [];
const fmt = (x: number | undefined, d = 3) => (x === undefined || !Number.isFinite(x) ? undefined : +x.toFixed(d));

for (const c of cases) {
  log(`-- ${c.label}`);
  const ref = check ? reference(c) : undefined;
  const row: Record<string, unknown> = { case: c.label, id: c.id, workload: c.workload, keysMiB: +((c.validKeys * 4) / 2 ** 20).toFixed(2) };
  const keyBytes = c.validKeys * 4;

  const copyCase = await copyMs(c.rows * c.stride * 4);
  row.copySameBytesMs = fmt(copyCase, 4);

  if (sk && environment) {
    // Planning may refuse a case this device cannot bind (temporary storage past
    // maxStorageBufferBindingSize): recorded as the case's error, the other cases still run.
    let s: ReturnType<typeof segkitCase> | undefined;
    try {
      const sc = segkitCase(c, sk, environment);
      s = sc;
      row.variant = sc.plan.variant;
      for (let i = 0; i < 3; i++) await sc.select();
      await sk.synchronize();
      if (ref) row.mismatches = mismatches(ref, await sk.download(sc.keysOut), await sk.download(sc.valuesOut));
      // The GPU idles while the host builds a case (a 16M-key reference, uploads, new pipelines) and
      // its clocks may fall: in run 4's sweep and again on 2026-11-23 12:11, select (timed first) ran
      // 2-5x slower than plan.run (timed after it) on the GPU's own timestamps, on the cases with the
      // longest host-side setup, though both run the same kernels. Keep the GPU busy for warmMs first.
      await keepBusy(() => sc.run(), () => sk.synchronize());
      const single = await timeSingle(async () => {
        await sc.select();
        await sk.synchronize();
      });
      const batched = await timeBatched(() => sc.select(), () => sk.synchronize(), single);
      const gpuT = await gpuTimeMs(() => sc.select(), () => sk.synchronize());
      row.segkitGpuMs = fmt(gpuT?.ms, 4);
      row.segkitPasses = gpuT?.passes;
      const viaPlan = await timeBatched(() => sc.run(), () => sk.synchronize(), single);
      row.segkitMs = fmt(batched.ms, 4);
      row.segkitHostMs = fmt(batched.hostMs, 4);
      row.segkitPlanRunMs = fmt(viaPlan.ms, 4);
      row.segkitPlanRunHostMs = fmt(viaPlan.hostMs, 4);
      // Where select and plan.run part in a long sweep: plan.run's compute passes from timestamps.
      const runGpu = await gpuTimeMs(() => sc.run(), () => sk.synchronize());
      row.segkitPlanRunGpuMs = fmt(runGpu?.ms, 4);
      row.segkitPlanRunPasses = runGpu?.passes;
      row.segkitSingleMs = fmt(single, 4);
      row.segkitN = batched.n;
      row.launches = sc.plan.launches?.length;
      row.bwFraction = fmt(keyBytes / (batched.ms * 1e6) / copyGBps, 3);
      row.readGBps = fmt(keyBytes / (batched.ms * 1e6), 2);
    } catch (e) {
      row.segkitError = String((e as Error).message ?? e).slice(0, 300);
      log('segkit failed:', row.segkitError);
    }
    s?.destroy();
    // Device-only parameters: also under 'trust' (no device check, no status word).
    if (c.kind === 'moe-per-token-k-device' || c.kind === 'ragged-device') {
      const st = segkitCase(c, sk, segkit.env({ backend: sk, requirements: { guaranteeChecks: 'trust' } }));
      try {
        await st.select();
        await sk.synchronize();
        const g = await gpuTimeMs(() => st.select(), () => sk.synchronize());
        const b = await timeBatched(() => st.select(), () => sk.synchronize(), g?.ms ?? 0.1);
        row.segkitTrustMs = fmt(b.ms, 4);
        row.segkitTrustHostMs = fmt(b.hostMs, 4);
        row.segkitTrustGpuMs = fmt(g?.ms, 4);
        if (ref) row.trustMismatches = mismatches(ref, await sk.download(st.keysOut), await sk.download(st.valuesOut));
      } catch (e) {
        row.segkitTrustError = String((e as Error).message ?? e).slice(0, 300);
      }
      st.destroy();
    }
    // --tune: the case under each env tuning that applies.
    if (tunings.some(([, , ids]) => ids === undefined || ids.includes(c.id))) {
      const byTuning: Record<string, unknown> = {};
      for (const [label, tuning, ids] of tunings) {
        if (ids !== undefined && !ids.includes(c.id)) continue;
        let sv: ReturnType<typeof segkitCase> | undefined;
        try {
          const { requirements, ...envTuning } = tuning as { requirements?: Record<string, unknown> };
          sv = segkitCase(c, sk, segkit.env({ backend: sk, tuning: envTuning as never, ...(requirements === undefined ? {} : { requirements: requirements as never }) }));
          await sv.run();
          await sk.synchronize();
          const [keysOut, valuesOut] = [await sk.download(sv.keysOut), await sk.download(sv.valuesOut)];
          const checked = requirements?.outputOrdering === 'unsorted' ? inRankOrder(c, keysOut, valuesOut) : { keys: keysOut, indices: valuesOut };
          const ok = ref ? mismatches(ref, checked.keys, checked.indices) : undefined;
          const g = await gpuTimeMs(() => sv!.run(), () => sk.synchronize());
          const b = await timeBatched(() => sv!.run(), () => sk.synchronize(), g?.ms ?? 0.1);
          byTuning[label] = { variant: sv.plan.variant, gpuMs: fmt(g?.ms, 4), planRunMs: fmt(b.ms, 4), launches: sv.plan.launches.length, mismatches: ok };
        } catch (e) {
          byTuning[label] = { error: String((e as Error).message ?? e).slice(0, 160) };
        }
        sv?.destroy();
      }
      row.tunings = byTuning;
    }
    // --variants: every applicable variant forced through env tuning: GPU time and batched time.
    if (argv.variants !== undefined) {
      const byVariant: Record<string, unknown> = {};
      for (const v of variantsToTry) {
        let sv: ReturnType<typeof segkitCase> | undefined;
        try {
          sv = segkitCase(c, sk, segkit.env({ backend: sk, tuning: { variant: v } }));
          await sv.run();
          await sk.synchronize();
          const ok = ref ? mismatches(ref, await sk.download(sv.keysOut), await sk.download(sv.valuesOut)) : undefined;
          const g = await gpuTimeMs(() => sv!.run(), () => sk.synchronize());
          const b = await timeBatched(() => sv!.run(), () => sk.synchronize(), g?.ms ?? 0.1);
          byVariant[v] = { gpuMs: fmt(g?.ms, 4), planRunMs: fmt(b.ms, 4), hostMs: fmt(b.hostMs, 4), launches: sv.plan.launches.length, mismatches: ok };
        } catch (e) {
          byVariant[v] = { error: String((e as Error).message ?? e).slice(0, 160) };
        }
        sv?.destroy();
      }
      row.variants = byVariant;
    }
  }

  if (withTfjs && argv['no-tfjs-for']?.split(',').includes(c.id) !== true) {
    try {
      const x = tf.tensor2d(c.data, [c.rows, c.stride]);
      const once = async () => {
        const o = tf.topk(x, c.kMax, true);
        const v = await o.values.data();
        await o.indices.data();
        o.values.dispose();
        o.indices.dispose();
        return v;
      };
      let v: ArrayLike<number> = [];
      for (let i = 0; i < 2; i++) v = await once();
      if (ref) row.tfjsKeyMismatches = peerKeyMismatches(c, ref, c.kMax, v);
      const single = await timeSingle(once);
      let last: tf.TensorContainer | undefined;
      const batched = await timeBatched(
        () => {
          const o = tf.topk(x, c.kMax, true);
          if (last) tf.dispose(last);
          last = o;
        },
        async () => {
          const o = last as { values: tf.Tensor; indices: tf.Tensor };
          await o.values.data();
          await o.indices.data();
        },
        single,
      );
      if (last) tf.dispose(last);
      // tfjs' own GPU time (timestamp queries around its programs) where the device has them.
      if (wantFeatures.includes('timestamp-query')) {
        const k: number[] = [];
        for (let r = 0; r < runs; r++) {
          const t = await tf.time(() => {
            const o = tf.topk(x, c.kMax, true);
            tf.dispose([o.values, o.indices]); // the kernels still run; tf.time awaits their timestamps
          });
          const km = t.kernelMs as number | { error: string };
          if (typeof km === 'number') k.push(km);
        }
        if (k.length) row.tfjsGpuMs = fmt(median(k), 4);
      }
      x.dispose();
      row.tfjsMs = fmt(batched.ms, 4);
      row.tfjsHostMs = fmt(batched.hostMs, 4);
      row.tfjsSingleMs = fmt(single, 4);
    } catch (e) {
      row.tfjsError = String((e as Error).message ?? e).slice(0, 300);
      log('tfjs failed:', row.tfjsError);
    }
  }
  if (typeof row.segkitMs === 'number' && typeof row.tfjsMs === 'number') row.xVsTfjs = fmt((row.tfjsMs as number) / (row.segkitMs as number), 1);
  if (typeof row.segkitSingleMs === 'number' && typeof row.tfjsSingleMs === 'number') row.xVsTfjsSingle = fmt((row.tfjsSingleMs as number) / (row.segkitSingleMs as number), 1);
  if (typeof row.segkitMs === 'number') row.overCopy = fmt((row.segkitMs as number) / copyCase, 1);
  row.peerCall = c.peerNote;
  if (c.clampNote) row.note = c.clampNote;
  log(JSON.stringify(row));
  results.push(row);
}

console.log();
printTable(results, ['case', 'variant', 'launches', 'segkitMs', 'segkitHostMs', 'segkitPlanRunMs', 'segkitTrustMs', 'segkitSingleMs', 'segkitGpuMs', 'segkitPasses', 'segkitPlanRunGpuMs', 'segkitPlanRunPasses', 'tfjsMs', 'tfjsSingleMs', 'tfjsGpuMs', 'xVsTfjs', 'xVsTfjsSingle', 'copySameBytesMs', 'overCopy', 'readGBps', 'bwFraction', 'mismatches', 'tfjsKeyMismatches']);
for (const r of results) {
  if (r.variants === undefined) continue;
  const parts = Object.entries(r.variants as Record<string, Record<string, unknown>>).map(([v, x]) =>
    x.error !== undefined ? `${v}: n/a` : `${v}: GPU ${x.gpuMs} ms, plan.run ${x.planRunMs} ms (${x.launches} launches, mismatches ${x.mismatches})`);
  console.log(`forced variants, ${r.case}: ${parts.join('; ')}`);
}
for (const r of results) {
  if (r.tunings === undefined) continue;
  const parts = Object.entries(r.tunings as Record<string, Record<string, unknown>>).map(([t, x]) =>
    x.error !== undefined ? `${t}: n/a` : `${t}: ${x.variant} GPU ${x.gpuMs} ms, plan.run ${x.planRunMs} ms (${x.launches} launches, mismatches ${x.mismatches})`);
  console.log(`tunings, ${r.case}: ${parts.join('; ')}`);
}
console.log(`copy kernel ${bigCopyBytes >> 20} MiB: ${copyGBps.toFixed(1)} GB/s (read + write); empty submit round trip ${emptySubmitUs.toFixed(1)} us`);
const meta = {
  date: new Date().toISOString(),
  node: process.version,
  adapter: adapterInfo,
  features: wantFeatures,
  cpu: cpus()[0]?.model,
  runs,
  batchMs,
  copy: { bytes: bigCopyBytes, ms: bigCopy, GBpsReadPlusWrite: +copyGBps.toFixed(1) },
  emptySubmitRoundTripUs: +emptySubmitUs.toFixed(1),
  singleCols,
  clampNote,
  uncapturedError: gpuError,
  segkitStats: sk?.stats(),
  build: argv.build,
};
mkdirSync(outDir, { recursive: true });
const outFile = argv['out-file'] ?? 'topk-webgpu.json';
writeFileSync(`${outDir}/${outFile}`, JSON.stringify({ meta, results }, null, 2));
log(`wrote ${outDir}/${outFile}`);

if (withTfjs) tf.removeBackend('webgpu');
sk?.destroy();
device.destroy();
