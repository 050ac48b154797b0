/**
 * The WebGPU backend in Node (Dawn; Mesa's lavapipe on machines without a GPU): the conformance
 * suite bit for bit, and what only WebGPU has — the pipeline cache, buffer lifetimes, device loss,
 * process exit, zero transfers under 'trust'.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestAdapter } from '../src/backends/webgpu/gpu.js';
import { type WebGpuBackend, WebGpuDeviceLostError, webgpuBackend } from '../src/backends/webgpu/webgpu-backend.js';
import { DeviceBatchedTopK, SegkitUsageError, env, p, referenceTopK } from '../src/index.js';
import { defineTopKConformance } from './conformance/topk.suite.js';
import { webgpuAvailable } from './webgpu-adapter.js';

// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const webgpuRuns = await webgpuAvailable('the WebGPU tests');
const describeWebGpu = webgpuRuns ? describe : describe.skip;

if (webgpuRuns) defineTopKConformance('webgpu', () => webgpuBackend(), { compilesSlowly: true });

/** Keys of `segments` segments of `size` f32 values. */
function randomKeys(count: number, seed: number): Float32Array {
  const keys = new Float32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    keys[i] = (state / 4294967296 - 0.5) * 1000;
  }
  return keys;
}

function expectedTopK(keys: Float32Array, segments: number, size: number, k: number, kMax: number) {
  return referenceTopK({
    keyType: 'f32',
    keys: new Uint32Array(keys.buffer),
    segmentStarts: Array.from({ length: segments }, (_, i) => i * size),
    segmentSizes: Array.from({ length: segments }, () => size),
    k: Array.from({ length: segments }, () => k),
    directions: Array.from({ length: segments }, () => 'max' as const),
    kMax,
    withValues: true,
  });
}

describeWebGpu('webgpuBackend', () => {
  let gpu: WebGpuBackend;
  beforeAll(async () => {
    gpu = await webgpuBackend();
  });
  afterAll(() => gpu?.destroy());

  it('reports the device limits as capabilities', () => {
    const limits = gpu.device.limits;
    expect(gpu.name).toBe('webgpu');
    expect(gpu.capabilities.workgroupStorageBytes).toBe(limits.maxComputeWorkgroupStorageSize);
    expect(gpu.capabilities.maxStorageBufferBytes).toBe(limits.maxStorageBufferBindingSize);
    expect(gpu.capabilities.maxBufferBytes).toBe(limits.maxBufferSize);
    expect(gpu.capabilities.maxWorkgroupSize).toBe(Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX));
    expect(gpu.capabilities.subgroupSize === undefined || gpu.capabilities.subgroupSize >= 4).toBe(true);
    expect(gpu.device.features.has('subgroups')).toBe(gpu.capabilities.subgroupSize !== undefined);
  });

  it('upload and download copy, and are counted', async () => {
    gpu.resetStats();
    const source = new Int32Array([5, -6, 7]);
    const array = gpu.upload(source);
    source[0] = 99;
    expect([...(await gpu.download(array))]).toEqual([5, -6, 7]);
    const zeros = gpu.alloc('u8', 5);
    expect([...(await gpu.download(zeros))]).toEqual([0, 0, 0, 0, 0]);
    expect(gpu.stats()).toMatchObject({ uploads: 1, downloads: 2, bytesUploaded: 12, bytesDownloaded: 17 });
    array.destroy();
    zeros.destroy();
    await expect(gpu.download(array)).rejects.toThrow('download(array): the DeviceArray was destroyed and cannot be used');
  });

  it('MoE routing (constant segment size 256, k uniform in [1, 8]) compiles the reduce pipeline once per register-list length', async () => {
    const fresh = await webgpuBackend();
    try {
      const segments = 64;
      const size = 256;
      const keys = randomKeys(segments * size, 3);
      const keysIn = fresh.upload(keys);
      const keysOut = fresh.alloc('f32', segments * 8);
      const valuesOut = fresh.alloc('u32', segments * 8);
      const environment = env({ backend: fresh });
      const route = (k: number) =>
        DeviceBatchedTopK.plan(
          { keysIn, keysOut, valuesOut, segmentSizes: p.constant(256), k: p.uniform(k, { min: 1, max: 8 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(segments) },
          environment,
        );
      const first = route(8);
      expect(first.variant).toBe('reduce');
      expect(first.reachableVariants).toEqual(['reduce']);
      fresh.resetStats();
      await first.run();
      const stats = fresh.stats();
      expect(stats.kernelsCompiled).toBe(1);
      expect(Object.keys(stats.launchesByKernel)).toEqual(['topk/reduce[k<=8,f32,max]']);
      const expected = expectedTopK(keys, segments, size, 8, 8);
      expect(new Uint32Array((await fresh.download(keysOut)).buffer)).toEqual(expected.keys);
      expect(await fresh.download(valuesOut)).toEqual(expected.values);
      // The same call again, and other values of k: nothing new to compile, but for k = 1 (greedy
      // decoding): the register list is sized by kMax's power of two (1, 2, 4 or 8), and k = 1's
      // one-entry list is compiled once.
      for (const k of [8, 5]) await route(k).run();
      expect(fresh.stats().kernelsCompiled).toBe(1);
      for (const k of [1, 8, 1, 5]) await route(k).run();
      expect(fresh.stats().kernelsCompiled).toBe(2);
      expect(fresh.stats().uploads).toBe(0);
      for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
    } finally {
      fresh.destroy();
    }
  });

  it('specializes on static facts: a constant k and a constant direction are baked in, host values are not', async () => {
    const fresh = await webgpuBackend();
    try {
      const keysIn = fresh.upload(randomKeys(4 * 300, 5));
      const keysOut = fresh.alloc('f32', 4 * 40);
      const run = (k: ReturnType<typeof p.constant> | ReturnType<typeof p.uniform>, segments: number) =>
        DeviceBatchedTopK.plan(
          { keysIn, keysOut, segmentSizes: p.uniform(300), k, selectDirection: p.constantOption('min'), numSegments: p.uniform(segments, { min: 0, max: 4 }) },
          env({ backend: fresh }),
        ).run();
      await run(p.uniform(40, { min: 1, max: 40 }), 4);
      const afterUniform = fresh.stats().kernelsCompiled;
      await run(p.uniform(33, { min: 1, max: 40 }), 3);
      expect(fresh.stats().kernelsCompiled).toBe(afterUniform);
      await run(p.constant(33), 3);
      expect(fresh.stats().kernelsCompiled).toBe(afterUniform + 1);
      keysIn.destroy();
      keysOut.destroy();
    } finally {
      fresh.destroy();
    }
  });

  it('a device without subgroups (your own device) gives the same results through the workgroup-memory merge', async () => {
    const device = await (await requestAdapter({})).requestDevice();
    const plain = await webgpuBackend({ device });
    try {
      expect(plain.capabilities.subgroupSize).toBeUndefined();
      const shapes: [segments: number, size: number, k: number][] = [
        [33, 256, 8],
        [3, 20_000, 5],
      ];
      for (const [segments, size, k] of shapes) {
        const keys = randomKeys(segments * size, 21 + k);
        const keysIn = plain.upload(keys);
        const keysOut = plain.alloc('f32', segments * k);
        const valuesOut = plain.alloc('i32', segments * k);
        await DeviceBatchedTopK.select(
          { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(size), k: p.uniform(k, { min: 1, max: 8 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(segments) },
          env({ backend: plain }),
        );
        const expected = expectedTopK(keys, segments, size, k, k);
        expect(new Uint32Array((await plain.download(keysOut)).buffer)).toEqual(expected.keys);
        expect(new Uint32Array((await plain.download(valuesOut)).buffer)).toEqual(expected.values);
        for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
      }
      plain.destroy();
      // destroy() leaves a device it was given alive: another backend on it still works.
      const again = await webgpuBackend({ device });
      const keysIn = again.upload(new Float32Array([1, 7, 3]));
      const keysOut = again.alloc('f32', 1);
      await DeviceBatchedTopK.maxKeys({ keysIn, keysOut, segmentSizes: p.constant(3), k: p.constant(1), numSegments: p.constant(1) }, env({ backend: again }));
      expect([...(await again.download(keysOut))]).toEqual([7]);
      again.destroy();
    } finally {
      plain.destroy();
      device.destroy();
    }
  });

  it('reads reuse their mappable buffers: downloads of many sizes keep the pool within its bounds, and what they read is right', async () => {
    const held = () => (gpu as unknown as { stagingPoolHeld(): { buffers: number; bytes: number } }).stagingPoolHeld();
    const live = gpu.liveBuffers();
    const lengths = [1, 8, 63, 64, 65, 1000, 4096, 70_000, 1 << 20, (5 << 20) + 3];
    const arrays = lengths.map((n) => gpu.upload(Uint32Array.from({ length: n }, (_, i) => (i * 2654435761 + n) >>> 0)));
    for (let round = 0; round < 3; round++) {
      // Several reads at once take several buffers; each comes back whole.
      const reads = await Promise.all(arrays.map((a) => gpu.download(a)));
      reads.forEach((words, j) => {
        const n = lengths[j]!;
        expect(words.length).toBe(n);
        expect(words[n - 1]).toBe(((n - 1) * 2654435761 + n) >>> 0);
      });
    }
    const kept = held();
    expect(kept.buffers).toBeGreaterThan(0);
    expect(kept.buffers).toBeLessThanOrEqual(2 * lengths.length);
    expect(kept.bytes).toBeLessThanOrEqual(64 << 20);
    // More reads of the same sizes make no new buffers.
    await Promise.all(arrays.map((a) => gpu.download(a)));
    expect(held()).toEqual(kept);
    for (const a of arrays) a.destroy();
    await gpu.synchronize();
    expect(gpu.liveBuffers()).toBe(live);
  });

  it('1000 consecutive selects leave no growth in live buffers', async () => {
    const segments = 16;
    const size = 600;
    const keysIn = gpu.upload(randomKeys(segments * size, 9));
    const keysOut = gpu.alloc('f32', segments * 16);
    const valuesOut = gpu.alloc('i32', segments * 16);
    const args = { keysIn, keysOut, valuesOut, segmentSizes: p.perSegment(Array.from({ length: segments }, () => size)), selectDirection: p.constantOption('max'), numSegments: p.uniform(segments) } as const;
    const small = env({ backend: gpu });
    const radix = env({ backend: gpu, tuning: { variant: 'radix-select' } });
    await DeviceBatchedTopK.select({ ...args, k: p.uniform(16, { min: 1, max: 16 }) }, radix);
    await DeviceBatchedTopK.select({ ...args, k: p.uniform(4, { min: 1, max: 8 }) }, small);
    await gpu.synchronize();
    const live = gpu.liveBuffers();
    for (let i = 0; i < 500; i++) {
      await DeviceBatchedTopK.select({ ...args, k: p.uniform(4, { min: 1, max: 8 }) }, small);
      await DeviceBatchedTopK.select({ ...args, k: p.uniform(16, { min: 1, max: 16 }) }, radix);
    }
    await gpu.synchronize();
    expect(gpu.liveBuffers()).toBe(live);
    const expected = expectedTopK(new Float32Array(await gpu.download(keysIn)), segments, size, 16, 16);
    expect(new Uint32Array((await gpu.download(keysOut)).buffer)).toEqual(expected.keys);
    for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
    await gpu.synchronize();
    expect(gpu.liveBuffers()).toBe(live - 3);
  });

  it("'trust' with device-only values makes no host<->device transfer", async () => {
    const sizes = gpu.upload(new Uint32Array([300, 0, 1000, 5]));
    const ks = gpu.upload(new Uint32Array([3, 2, 50, 9]));
    const count = gpu.upload(new Uint32Array([4]));
    const keysIn = gpu.upload(randomKeys(1305, 13));
    const keysOut = gpu.alloc('f32', 4 * 64);
    const plan = DeviceBatchedTopK.plan(
      { keysIn, keysOut, segmentSizes: p.perSegment(sizes, { min: 0, max: 1000 }), k: p.perSegment(ks, { min: 1, max: 64 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(count, { min: 0, max: 4 }) },
      env({ backend: gpu, requirements: { guaranteeChecks: 'trust' } }),
    );
    const temp = plan.tempStorageBytes > 0 ? gpu.alloc('u8', plan.tempStorageBytes) : undefined;
    gpu.resetStats();
    await plan.run(temp);
    await gpu.synchronize();
    expect(gpu.stats()).toMatchObject({ uploads: 0, downloads: 0, bytesUploaded: 0, bytesDownloaded: 0 });
    expect(gpu.stats().launches).toBeGreaterThan(0);
    const out = await gpu.download(keysOut);
    expect(out[2 * 64]).toBeGreaterThan(out[2 * 64 + 49]!);
    for (const a of [sizes, ks, count, keysIn, keysOut, temp]) a?.destroy();
  });

  it('a plan keeps the bind groups of its last 4 sets of buffers: alternating temporary storage makes none after the first runs', async () => {
    const keys = randomKeys(8 * 3000, 17);
    const keysIn = gpu.upload(keys);
    const keysOut = gpu.alloc('f32', 8 * 40);
    const plan = DeviceBatchedTopK.plan(
      { keysIn, keysOut, segmentSizes: p.constant(3000), k: p.constant(40), selectDirection: p.constantOption('max'), numSegments: p.uniform(8) },
      env({ backend: gpu, tuning: { variant: 'radix-select' } }),
    );
    const temps = Array.from({ length: 5 }, () => gpu.alloc('u8', plan.tempStorageBytes));
    await plan.run(temps[0]);
    await gpu.synchronize();
    const made = vi.spyOn(gpu.device, 'createBindGroup');
    try {
      // Double-buffered temporary storage: two sets, made once each.
      for (let i = 0; i < 6; i++) await plan.run(temps[i % 2]);
      expect(made).toHaveBeenCalledTimes(plan.launches.length);
      // Four sets fit; a fifth pushes out the least recently used (temps[1]), which is made again.
      made.mockClear();
      for (const i of [2, 3, 0, 2, 3]) await plan.run(temps[i]);
      expect(made).toHaveBeenCalledTimes(2 * plan.launches.length);
      made.mockClear();
      await plan.run(temps[4]);
      await plan.run(temps[0]);
      expect(made).toHaveBeenCalledTimes(plan.launches.length);
      await plan.run(temps[1]);
      expect(made).toHaveBeenCalledTimes(2 * plan.launches.length);
    } finally {
      made.mockRestore();
    }
    const expected = expectedTopK(keys, 8, 3000, 40, 40);
    expect(new Uint32Array((await gpu.download(keysOut)).buffer)).toEqual(expected.keys);
    plan.destroy();
    for (const a of [keysIn, keysOut, ...temps]) a.destroy();
  });

  it('rejects keys larger than one storage binding with a clear error', async () => {
    const limit = gpu.capabilities.maxStorageBufferBytes;
    if (limit > 512 * 1024 * 1024) return; // too large to allocate in a test
    const keysIn = gpu.alloc('f32', limit / 4 + 1);
    const keysOut = gpu.alloc('f32', 8);
    const select = () =>
      DeviceBatchedTopK.select(
        { keysIn, keysOut, segmentSizes: p.uniform(limit / 4 + 1), k: p.constant(8), selectDirection: p.constantOption('max'), numSegments: p.constant(1) },
        env({ backend: gpu }),
      );
    await expect(select()).rejects.toThrow(SegkitUsageError);
    await expect(select()).rejects.toThrow(/^keysIn: \d+ elements \(\d+ bytes\) exceed the \d+ bytes one storage binding of this backend holds \(maxStorageBufferBytes\); split the call into batches of segments$/);
    keysIn.destroy();
    keysOut.destroy();
  });

  it('device loss rejects pending work and every later call', async () => {
    const doomed = await webgpuBackend();
    const keys = doomed.upload(randomKeys(1 << 16, 17));
    const pending = doomed.download(keys);
    doomed.device.destroy();
    await expect(pending).rejects.toBeInstanceOf(WebGpuDeviceLostError);
    expect(doomed.lost).toBe(true);
    expect(() => doomed.upload(new Float32Array(4))).toThrow(WebGpuDeviceLostError);
    await expect(doomed.download(keys)).rejects.toThrow(/the WebGPU device was lost/);
    await expect(doomed.synchronize()).rejects.toBeInstanceOf(WebGpuDeviceLostError);
    doomed.destroy();
  });

  it('the Node process exits by itself after destroy()', () => {
    const script = fileURLToPath(new URL('./fixtures/webgpu-exit.ts', import.meta.url));
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 45_000, env: { ...process.env } });
    expect(child.error).toBeUndefined();
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
    expect(child.stdout).toContain('top-k ok');
    expect(Date.now() - started).toBeLessThan(45_000);
  });
});
