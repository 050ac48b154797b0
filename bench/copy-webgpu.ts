/**
 * DeviceBatchedCopy on WebGPU against a loop of `copyBufferToBuffer` (one per buffer, all in one
 * encoder, one submit), on the shapes (bench/lib/copy-shapes.ts). segkit's figure is
 * --batch back-to-back `plan.run`s then one `synchronize()`, per run, after --warm-ms of calls (segkit's
 * JavaScript runs several times slower until V8 has optimized it: ~40 us a call over the first
 * thousands of calls against ~9 us after, Dawn stubbed); the peer's is --batch encoders
 * of one copy loop each, then one `onSubmittedWorkDone`. Medians of --runs; GB/s counts bytes read
 * plus bytes written. After the timing, the destination is read back and checked against the buffers
 * copied on the host (`mismatches`). Writes copy-webgpu.json into --out=DIR (bench/gpu/run-all.sh) or
 * to --json=FILE.
 *
 * Run (lavapipe or a GPU): node --import tsx bench/copy-webgpu.ts [--runs=5] [--batch=50] [--warm-ms=300] [--shapes=small,medium,large]
 * On the H200: bench/gpu/build.sh bundles it into dist/bench/copy-webgpu.mjs (see bench/gpu/remote.sh).
 */
/// <reference types="@webgpu/types" />
import { mkdirSync, writeFileSync } from 'node:fs';
import { DeviceBatchedCopy, env, p, webgpuBackend } from 'segkit';
import { copyShapes, medianOf } from './lib/copy-shapes.js';
import { constantOf } from './lib/constant.js';
import { benchDevice, passTimer } from './lib/gpu-device.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const runs = Number(args.runs ?? 5);
const batch = Number(args.batch ?? 50);
const warmMs = Number(args['warm-ms'] ?? 300);
const { device } = await benchDevice();
const backend = await webgpuBackend({ device });
const timer = passTimer(device);
const results: Record<string, unknown>[] = [];

for (const s of copyShapes(args.shapes?.split(','))) {
  const data = new Uint32Array(s.length).map((_, i) => i);
  const source = backend.upload(data);
  const destination = backend.alloc('u32', s.length);
  const plan = DeviceBatchedCopy.plan(
    { source, destination, sizes: p.perSegment(s.sizes), sourceOffsets: p.perSegment(s.sourceOffsets), destinationOffsets: p.perSegment(s.destinationOffsets), numBuffers: constantOf(s.sizes.length) },
    env({ backend }),
  );
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  const [src, dst] = [backend.gpuBuffer(source), backend.gpuBuffer(destination)];
  const segkit: number[] = [];
  const peer: number[] = [];
  for (const until = performance.now() + warmMs; performance.now() < until; ) {
    for (let b = 0; b < batch; b++) await plan.run(temp);
    await backend.synchronize();
  }
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
  const expected = new Uint32Array(s.length);
  for (let i = 0; i < s.sizes.length; i++) expected.set(data.subarray(s.sourceOffsets[i]!, s.sourceOffsets[i]! + s.sizes[i]!), s.destinationOffsets[i]!);
  await plan.run(temp);
  const got = (await backend.download(destination)) as Uint32Array;
  let mismatches = 0;
  for (let i = 0; i < s.total; i++) if (got[i] !== expected[i]) mismatches++;
  const gpuT = await timer.gpuTimeMs(() => plan.run(temp), () => backend.synchronize(), runs);
  const gbs = (ms: number) => (s.total * 8) / (ms * 1e6);
  const [a, b] = [medianOf(segkit), medianOf(peer)];
  console.log(`${s.name.padEnd(16)} segkit ${plan.variant.padEnd(9)} ${a.toFixed(3)} ms (${gbs(a).toFixed(2)} GB/s)   copyBufferToBuffer loop ${b.toFixed(3)} ms (${gbs(b).toFixed(2)} GB/s)   mismatches ${mismatches}`);
  results.push({ case: s.name, variant: plan.variant, segkitMs: a, segkitGBs: gbs(a), segkitGpuMs: gpuT?.ms, segkitGpuGBs: gpuT === undefined ? undefined : gbs(gpuT.ms), copyBufferToBufferMs: b, copyBufferToBufferGBs: gbs(b), buffers: s.sizes.length, items: s.total, mismatches });
  plan.destroy();
  temp?.destroy();
  source.destroy();
  destination.destroy();
}
const report = JSON.stringify({ bench: 'copy-webgpu', runs, batch, results }, null, 2);
if (args.json) writeFileSync(args.json, report);
if (args.out) {
  mkdirSync(args.out, { recursive: true });
  writeFileSync(`${args.out}/copy-webgpu.json`, report);
}
backend.destroy();
device.destroy();
