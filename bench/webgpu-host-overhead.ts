// Host time per plan.run on WebGPU (same plan, same buffers): 200 runs then synchronize; median of 5 rounds.
import { DeviceBatchedTopK, env, p } from '../src/index.js';
import { webgpuBackend } from '../src/backends/webgpu/webgpu-backend.js';

const gpu = await webgpuBackend();
async function measure(label: string, segments: number, size: number, k: number, runs = 200, rounds = 5) {
  const keys = new Float32Array(segments * size);
  for (let i = 0; i < keys.length; i++) keys[i] = Math.random();
  const keysIn = gpu.upload(keys);
  const keysOut = gpu.alloc('f32', segments * k);
  const valuesOut = gpu.alloc('i32', segments * k);
  const plan = DeviceBatchedTopK.plan(
    { keysIn, keysOut, valuesOut, segmentSizes: p.constant(size), k: p.constant(k), selectDirection: p.constantOption('max'), numSegments: p.constant(segments) },
    env({ backend: gpu }),
  );
  const temp = plan.tempStorageBytes > 0 ? gpu.alloc('u8', plan.tempStorageBytes) : undefined;
  await plan.run(temp);
  await gpu.synchronize();
  const hostUs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) await plan.run(temp);
    const t1 = performance.now();
    await gpu.synchronize();
    hostUs.push(((t1 - t0) * 1000) / runs);
  }
  hostUs.sort((a, b) => a - b);
  console.log(`${label} variant=${plan.variant} launches=${plan.launches.length}: host us/run median ${hostUs[rounds >> 1]!.toFixed(1)} (all ${hostUs.map((x) => x.toFixed(1)).join(', ')})`);
  for (const a of [keysIn, keysOut, valuesOut, temp]) a?.destroy();
}
await measure('radix 64x32768 k=2048', 64, 32768, 2048, 200, 5);
await measure('reduce 4096x256 k=8', 4096, 256, 8, 200, 5);
gpu.destroy();
