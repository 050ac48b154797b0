/**
 * segkit's WebGPU backend against tfjs-backend-webgpu's `tf.topk`, both on ONE Dawn device in one
 * process, plus a plain copy kernel on that device for the bandwidth fraction. f32 keys, 'max',
 * sorted, segment-local indices; same cases as bench/topk-cpu.ts with the single row at 1x16777216
 * (clamped to the device's storage-binding limit, e.g. lavapipe's 128 MiB).
 *
 * Figures per case (medians after warm-up):
 * - segkit batched: N back-to-back `DeviceBatchedTopK.select` calls (each one submit, no read-back),
 *   then one `backend.synchronize()`; time / N.
 * - segkit single: one select + synchronize.
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
 *          --single-cols=N (single-row case size, default 16777216), --out=dir, --no-tfjs, --no-check
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { create, globals } from 'webgpu';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as segkit from 'segkit';
import { type Case, makeCases, median, mismatches, parseArgs, peerKeyMismatches, printTable, reference } from './lib/cases.js';
import { segkitCase } from './lib/segkit-runner.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 9);
const batchMs = Number(argv['batch-ms'] ?? 60);
const withTfjs = argv['no-tfjs'] === undefined;
const check = argv['no-check'] === undefined;
// Default: bench/results/ of the repo (this file runs from dist/bench/ once bundled).
const outDir = (argv.out ?? process.env.OUT ?? new URL('../../bench/results', import.meta.url).pathname).replace(/\/+$/, '');
const log = (...a: unknown[]) => console.error(...a);

// ---- one Dawn device, shared by segkit, tfjs and the copy kernel ------------------------------
Object.assign(globalThis, globals);
const gpu = create([]);
// tfjs' WebGPUBackend needs navigator.gpu; this also keeps the create() result reachable (if it
// is garbage-collected, dawn.node crashes).
Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
(globalThis as Record<string, unknown>).__segkitBenchGpu = gpu;
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) throw new Error('no WebGPU adapter (VK_ICD_FILENAMES?)');
const L = adapter.limits;
const wantFeatures = (['subgroups', 'timestamp-query', 'shader-f16'] as GPUFeatureName[]).filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({
  requiredFeatures: wantFeatures,
  requiredLimits: {
    maxComputeWorkgroupStorageSize: L.maxComputeWorkgroupStorageSize,
    maxComputeWorkgroupsPerDimension: L.maxComputeWorkgroupsPerDimension,
    maxStorageBufferBindingSize: L.maxStorageBufferBindingSize,
    maxBufferSize: L.maxBufferSize,
    maxComputeWorkgroupSizeX: L.maxComputeWorkgroupSizeX,
    maxComputeInvocationsPerWorkgroup: L.maxComputeInvocationsPerWorkgroup,
    maxStorageBuffersPerShaderStage: L.maxStorageBuffersPerShaderStage,
  },
});
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

async function timeBatched(call: () => unknown | Promise<unknown>, finish: () => Promise<unknown>, perCallEstimateMs: number) {
  const n = Math.max(5, Math.min(500, Math.ceil(batchMs / Math.max(perCallEstimateMs, 0.002))));
  const samples: number[] = [];
  for (let r = 0; r < Math.max(3, Math.ceil(runs / 2)); r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await call();
    await finish();
    samples.push((performance.now() - t0) / n);
  }
  return { ms: median(samples), n };
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
const cases = makeCases({ singleRowCols: singleCols, ...(argv.cases ? { only: String(argv.cases).split(',') } : {}), ...(clampNote ? { clampNote } : {}) });
const results: Record<string, unknown>[] = [];
const fmt = (x: number | undefined, d = 3) => (x === undefined || !Number.isFinite(x) ? undefined : +x.toFixed(d));

for (const c of cases) {
  log(`-- ${c.label}`);
  const ref = check ? reference(c) : undefined;
  const row: Record<string, unknown> = { case: c.label, keysMiB: +((c.validKeys * 4) / 2 ** 20).toFixed(2) };
  const keyBytes = c.validKeys * 4;

  const copyCase = await copyMs(c.rows * c.stride * 4);
  row.copySameBytesMs = fmt(copyCase, 4);

  if (sk && environment) {
    const s = segkitCase(c, sk, environment);
    row.variant = s.plan.variant;
    try {
      for (let i = 0; i < 3; i++) await s.select();
      await sk.synchronize();
      if (ref) row.mismatches = mismatches(ref, await sk.download(s.keysOut), await sk.download(s.valuesOut));
      const single = await timeSingle(async () => {
        await s.select();
        await sk.synchronize();
      });
      const batched = await timeBatched(() => s.select(), () => sk.synchronize(), single);
      row.segkitMs = fmt(batched.ms, 4);
      row.segkitSingleMs = fmt(single, 4);
      row.segkitN = batched.n;
      row.launches = s.plan.launches?.length;
      row.bwFraction = fmt(keyBytes / (batched.ms * 1e6) / copyGBps, 3);
      row.readGBps = fmt(keyBytes / (batched.ms * 1e6), 1);
    } catch (e) {
      row.segkitError = String((e as Error).message ?? e).slice(0, 300);
      log('segkit failed:', row.segkitError);
    }
    s.destroy();
  }

  if (withTfjs) {
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
      x.dispose();
      row.tfjsMs = fmt(batched.ms, 4);
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
printTable(results, ['case', 'variant', 'launches', 'segkitMs', 'segkitSingleMs', 'tfjsMs', 'tfjsSingleMs', 'xVsTfjs', 'xVsTfjsSingle', 'copySameBytesMs', 'overCopy', 'readGBps', 'bwFraction', 'mismatches', 'tfjsKeyMismatches']);
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
};
mkdirSync(outDir, { recursive: true });
writeFileSync(`${outDir}/topk-webgpu.json`, JSON.stringify({ meta, results }, null, 2));
log(`wrote ${outDir}/topk-webgpu.json`);

if (withTfjs) tf.removeBackend('webgpu');
sk?.destroy();
device.destroy();
