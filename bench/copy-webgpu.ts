/**
 * DeviceBatchedCopy on WebGPU against a loop of `copyBufferToBuffer` (one per buffer, all in one
 * encoder, one submit), on the shapes (bench/lib/copy-shapes.ts). segkit's figure is
 * --batch back-to-back `plan.run`s then one `synchronize()`, per run; the peer's is --batch encoders
 * of one copy loop each, then one `onSubmittedWorkDone`. Medians of --runs; GB/s counts bytes read
 * plus bytes written. Prints JSON with --json=FILE.
 *
 * Run (lavapipe or a GPU): node --import tsx bench/copy-webgpu.ts [--runs=5] [--batch=10] [--shapes=small,medium,large]
 * On the H200: bench/gpu/build.sh bundles it into dist/bench/copy-webgpu.mjs (see bench/gpu/remote.sh).
 */
/// <reference types="@webgpu/types" />
import { writeFileSync } from 'node:fs';
import { DeviceBatchedCopy, env, p, webgpuBackend } from 'segkit';
import { copyShapes, medianOf } from './lib/copy-shapes.js';
import { constantOf } from './lib/constant.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const runs = Number(args.runs ?? 5);
const batch = Number(args.batch ?? 10);
const backend = await webgpuBackend();
const device = backend.device;
const results: Record<string, unknown>[] = [];

for (const s of copyShapes(args.shapes?.split(','))) {
  const source = backend.upload(new Uint32Array(s.length).map((_, i) => i));
  const destination = backend.alloc('u32', s.length);
  const plan = DeviceBatchedCopy.plan(
    { source, destination, sizes: p.perSegment(s.sizes), sourceOffsets: p.perSegment(s.sourceOffsets), destinationOffsets: p.perSegment(s.destinationOffsets), numBuffers: constantOf(s.sizes.length) },
    env({ backend }),
  );
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  const [src, dst] = [backend.gpuBuffer(source), backend.gpuBuffer(destination)];
  const segkit: number[] = [];
  const peer: number[] = [];
  for (let r = 0; r <= runs; r++) {
    let t = performance.now();
    for (let b = 0; b < batch; b++) await plan.run(temp);
    await backend.synchronize();
    if (r > 0) segkit.push((performance.now() - t) / batch);
    t = performance.now();
    for (let b = 0; b < batch; b++) {
      const encoder = device.createCommandEncoder();
      for (let i = 0; i < s.sizes.length; i++) encoder.copyBufferToBuffer(src, s.sourceOffsets[i]! * 4, dst, s.destinationOffsets[i]! * 4, s.sizes[i]! * 4);
      device.queue.submit([encoder.finish()]);
    }
    await device.queue.onSubmittedWorkDone();
    if (r > 0) peer.push((performance.now() - t) / batch);
  }
  const gbs = (ms: number) => (s.total * 8) / (ms * 1e6);
  const [a, b] = [medianOf(segkit), medianOf(peer)];
  console.log(`${s.name.padEnd(16)} segkit ${plan.variant.padEnd(9)} ${a.toFixed(3)} ms (${gbs(a).toFixed(2)} GB/s)   copyBufferToBuffer loop ${b.toFixed(3)} ms (${gbs(b).toFixed(2)} GB/s)`);
  results.push({ shape: s.name, variant: plan.variant, segkitMs: a, segkitGBs: gbs(a), copyBufferToBufferMs: b, copyBufferToBufferGBs: gbs(b), buffers: s.sizes.length, items: s.total });
  plan.destroy();
  temp?.destroy();
  source.destroy();
  destination.destroy();
}
if (args.json) writeFileSync(args.json, JSON.stringify({ bench: 'copy-webgpu', runs, batch, results }, null, 2));
backend.destroy();
