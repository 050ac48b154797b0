/**
 * Where the time of a small WebGPU call goes: a ladder of raw Dawn calls (each rung adds one thing a
 * segkit call does) beside segkit's `plan.run` of every algorithm on shapes small enough that the GPU
 * work is negligible. Per rung: N back-to-back calls then one `onSubmittedWorkDone` (or
 * `synchronize()`), time / N ("perCallUs"), and the time spent issuing the calls alone ("hostUs").
 * Where hostUs ~ perCallUs the floor is the host; where perCallUs is well above hostUs the GPU side
 * (Dawn's submit and Vulkan's fences) sets it.
 *
 *   bash bench/gpu/build.sh   (bundles this file into dist/bench/webgpu-call-floor.mjs)
 *   node dist/bench/webgpu-call-floor.mjs [--calls=400] [--rounds=7] [--out=DIR]
 * Locally: VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp node --import tsx bench/webgpu-call-floor.ts
 */
/// <reference types="@webgpu/types" />
import { mkdirSync, writeFileSync } from 'node:fs';
import { type WebGpuBackend, DeviceBatchedCopy, DeviceBatchedTopK, DeviceSegmentedReduce, DeviceSegmentedScan, DeviceSegmentedSort, env, p, webgpuBackend } from 'segkit';
import { benchDevice } from './lib/gpu-device.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? '1'])) as Record<string, string>;
const calls = Number(argv.calls ?? 400);
const rounds = Number(argv.rounds ?? 7);
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

const results: { device: string; rung: string; perCallUs: number; hostUs: number }[] = [];

async function measureOn(on: string, rung: string, call: () => unknown, done: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 50; i++) await call();
  await done();
  const total: number[] = [];
  const host: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await call();
    const t1 = performance.now();
    await done();
    const t2 = performance.now();
    host.push(((t1 - t0) * 1000) / calls);
    total.push(((t2 - t0) * 1000) / calls);
  }
  const row = { device: on, rung, perCallUs: +median(total).toFixed(1), hostUs: +median(host).toFixed(1) };
  console.log(`${on.padEnd(16)} ${rung.padEnd(58)} ${String(row.perCallUs).padStart(7)} us per call   ${String(row.hostUs).padStart(7)} us issuing`);
  results.push(row);
}

/** The ladder and segkit's rungs on one backend's device; `on` names the device's settings. */
async function ladder(on: string, backend: WebGpuBackend): Promise<void> {
  const device = backend.device;
  const measure = (rung: string, call: () => unknown, done: () => Promise<unknown>) => measureOn(on, rung, call, done);
  // ---- raw Dawn -----------------------------------------------------------------------------------
  const storage = device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const report = device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const uniforms = device.createBuffer({ size: 1024, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const module = device.createShaderModule({
    code: `struct U { n: u32 }
  @group(0) @binding(0) var<uniform> u: U;
  @group(0) @binding(1) var<storage, read_write> a: array<u32>;
  @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < u.n) { a[g.x] = a[g.x] + 1u; } }`,
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const makeGroup = () => device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: uniforms, size: 256 } }, { binding: 1, resource: { buffer: storage } }] });
  const group = makeGroup();
  // Five bindings, as a segkit kernel has (uniforms, input, output, status, temporary storage).
  const wide = device.createBuffer({ size: 4 * 4096, usage: GPUBufferUsage.STORAGE });
  const wideInput = device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE });
  const wideModule = device.createShaderModule({
    code: `struct U { n: u32 }
  @group(0) @binding(0) var<uniform> u: U;
  @group(0) @binding(1) var<storage, read> b: array<u32>;
  @group(0) @binding(2) var<storage, read_write> a: array<u32>;
  @group(0) @binding(3) var<storage, read_write> c: array<u32>;
  @group(0) @binding(4) var<storage, read_write> d: array<u32>;
  @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < u.n) { a[g.x] = b[g.x] + c[g.x] + d[g.x]; } }`,
  });
  const widePipeline = device.createComputePipeline({ layout: 'auto', compute: { module: wideModule, entryPoint: 'main' } });
  const wideGroup = device.createBindGroup({
    layout: widePipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: uniforms, size: 256 } }, { binding: 1, resource: { buffer: wideInput } }, ...[1, 2, 3].map((i) => ({ binding: i + 1, resource: { buffer: wide, offset: i * 4096, size: 4096 } }))],
  });
  const words = new Uint32Array(64).fill(64);
  device.queue.writeBuffer(uniforms, 0, words);
  const queueDone = () => device.queue.onSubmittedWorkDone();

  interface Rung { dispatches?: number; write?: boolean; reportCopy?: boolean; watch?: boolean; bindGroupPerCall?: boolean; empty?: boolean; labels?: boolean; wide?: boolean }
  function rawCall(r: Rung): () => void {
    return () => {
      if (r.write) device.queue.writeBuffer(uniforms, 0, words.buffer, 0, 256);
      const encoder = r.labels ? device.createCommandEncoder({ label: 'segkit probe' }) : device.createCommandEncoder();
      if (!r.empty) {
        const pass = r.labels ? encoder.beginComputePass({ label: 'segkit probe' }) : encoder.beginComputePass();
        pass.setPipeline(r.wide ? widePipeline : pipeline);
        const g = r.wide ? wideGroup : r.bindGroupPerCall ? makeGroup() : group;
        for (let d = 0; d < (r.dispatches ?? 1); d++) {
          pass.setBindGroup(0, g);
          pass.dispatchWorkgroups(1);
        }
        pass.end();
      }
      if (r.reportCopy) encoder.copyBufferToBuffer(storage, 0, report, 0, 16);
      device.queue.submit([encoder.finish()]);
      if (r.watch) void device.queue.onSubmittedWorkDone();
    };
  }
  await measure('raw: empty encoder, submit', rawCall({ empty: true }), queueDone);
  await measure('raw: one pass, one dispatch, submit', rawCall({}), queueDone);
  await measure('raw: one pass, three dispatches, submit', rawCall({ dispatches: 3 }), queueDone);
  await measure('raw: + writeBuffer(256 B) first', rawCall({ write: true }), queueDone);
  await measure('raw: + writeBuffer + 16 B copy after the pass', rawCall({ write: true, reportCopy: true }), queueDone);
  await measure('raw: + writeBuffer + copy + onSubmittedWorkDone per call', rawCall({ write: true, reportCopy: true, watch: true }), queueDone);
  await measure('raw: one dispatch, labelled encoder and pass', rawCall({ labels: true }), queueDone);
  await measure('raw: one dispatch binding five buffers', rawCall({ wide: true }), queueDone);
  await measure('raw: one dispatch + createBindGroup per call', rawCall({ bindGroupPerCall: true }), queueDone);
  // A read-back's round trip (what a 'validate' run's status costs whoever waits for it): awaited per call.
  const oneDispatch = rawCall({});
  await measure('raw: one dispatch, then await onSubmittedWorkDone', async () => {
    oneDispatch();
    await device.queue.onSubmittedWorkDone();
  }, queueDone);
  const readBack = async (staging: GPUBuffer) => {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(storage, 0, staging, 0, 32);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    staging.unmap();
  };
  await measure('raw: one dispatch, then read 32 B (fresh staging buffer)', async () => {
    oneDispatch();
    const staging = device.createBuffer({ size: 32, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    await readBack(staging);
    staging.destroy();
  }, queueDone);
  const kept = device.createBuffer({ size: 32, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  await measure('raw: one dispatch, then read 32 B (staging buffer kept)', async () => {
    oneDispatch();
    await readBack(kept);
  }, queueDone);
  kept.destroy();

  // ---- segkit plan.run on small shapes --------------------------------------------------------------
  const rows = 64;
  const width = 16;
  const values = backend.upload(Float32Array.from({ length: rows * width }, (_, i) => Math.sin(i)));
  const out = backend.alloc('f32', rows * width);
  const indices = backend.alloc('i32', rows * width);
  const shape = { segmentSizes: p.uniform(width), numSegments: p.uniform(rows) };
  const segments = { ...shape, valuesIn: values };
  const e = env({ backend });
  const plans = {
    'segkit: reduce sum 64x16': DeviceSegmentedReduce.plan({ ...segments, valuesOut: out, op: p.constantOption('sum') } as never, e),
    'segkit: scan inclusive sum 64x16': DeviceSegmentedScan.plan({ ...segments, valuesOut: out, op: p.constantOption('sum'), mode: p.constantOption('inclusive') } as never, e),
    'segkit: sort 64x16': DeviceSegmentedSort.plan({ ...shape, keysIn: values, keysOut: out, order: p.constantOption('ascending') } as never, e),
    'segkit: top-k 64x16 k=2': DeviceBatchedTopK.plan({ ...shape, keysIn: values, keysOut: out, valuesOut: indices, k: p.uniform(2), selectDirection: p.constantOption('max') } as never, e),
    'segkit: batched copy 4 buffers of 16': DeviceBatchedCopy.plan({ source: values, destination: out, sizes: p.uniform(16), sourceOffsets: p.perSegment(Uint32Array.of(0, 16, 32, 48)), destinationOffsets: p.perSegment(Uint32Array.of(64, 80, 96, 112)), numBuffers: p.uniform(4) } as never, e),
  };
  for (const [rung, plan] of Object.entries(plans)) {
    const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
    await measure(`${rung} (${plan.variant}, ${plan.launches.length} launches)`, () => plan.run(temp), () => backend.synchronize());
    plan.destroy();
    temp?.destroy();
  }
  // Each call awaited with its synchronize: the latency a caller who waits every call sees.
  const tokens = 4096;
  const routerKeys = backend.upload(Float32Array.from({ length: tokens * 128 }, (_, i) => Math.sin(i * 0.37)));
  const routerOut = backend.alloc('f32', tokens * 8);
  const routerIndices = backend.alloc('i32', tokens * 8);
  const deviceKs = backend.upload(Uint32Array.from({ length: tokens }, (_, i) => 1 + (i % 8)));
  const router = { keysIn: routerKeys, keysOut: routerOut, valuesOut: routerIndices, segmentSizes: p.constant(128), k: p.perSegment(deviceKs, { min: 1, max: 8 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(tokens) };
  for (const checks of ['validate', 'trust'] as const) {
    const plan = DeviceBatchedTopK.plan(router as never, env({ backend, requirements: { guaranteeChecks: checks } }));
    await measure(`segkit: router 4096x128, device k, '${checks}': run + synchronize`, async () => {
      await plan.run();
      await backend.synchronize();
    }, () => backend.synchronize());
    plan.destroy();
  }
  const eight = backend.alloc('u32', 8);
  await measure('segkit: download 8 words', () => backend.download(eight), () => backend.synchronize());
  for (const a of [values, out, indices, routerKeys, routerOut, routerIndices, deviceKs, eight]) a.destroy();
  for (const b of [storage, report, uniforms, wide, wideInput]) b.destroy();
  backend.destroy();
}

// segkit's default device, then a device with Dawn's validation skipped (Dawn's skip_validation toggle),
// then the default again (does the order matter?).
await ladder('default', await webgpuBackend());
{
  const { device } = await benchDevice({ toggles: ['enable-dawn-features=skip_validation'] });
  await ladder('skip_validation', await webgpuBackend({ device }));
  device.destroy();
}
await ladder('default again', await webgpuBackend());

if (argv.out) {
  mkdirSync(argv.out, { recursive: true });
  writeFileSync(`${argv.out}/webgpu-call-floor.json`, JSON.stringify({ calls, rounds, results }, null, 1));
}
