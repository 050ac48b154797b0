/**
 * DeviceBatchedCopy on the CPU backend against a plain JS loop of `TypedArray.prototype.set` of
 * `subarray`s (the best a host loop does), on the shapes: 4096 buffers of 1..256 items, 256
 * buffers of 4K..64K, one buffer of 16M. segkit's figure is `plan.run` then `synchronize()` (no
 * download), with the plan made once (host arrays copied and checked at plan time); medians of
 * --runs runs after a warm-up (--warmup ms, default 500). GB/s counts bytes read plus bytes written.
 *
 * Run: npm run build && node --import tsx bench/copy-cpu.ts [--runs=7] [--warmup=500] [--shapes=small,medium,large] [--workers=N]
 */
import { DeviceBatchedCopy, cpuBackend, env, p } from 'segkit';
import { copyShapes, medianOf } from './lib/copy-shapes.js';
import { constantOf } from './lib/constant.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const runs = Number(args.runs ?? 7);
const backend = cpuBackend(args.workers === undefined ? {} : { workers: Number(args.workers) });
/**
 * Runs of both before the measured ones, for at least this long: a backend with worker threads starts
 * them, and they load the kernels, during its first parallel launches (on a busy 2-core machine the
 * first shape's runs were 3-5x slower without a warm-up).
 */
const warmUpMs = Number(args.warmup ?? 500);
const { workers } = (backend as unknown as { workerStats(): { workers: number } }).workerStats();
console.log(`cpu backend with ${workers} worker thread${workers === 1 ? '' : 's'}${workers > 0 ? ' (device memory in SharedArrayBuffers)' : ''}; medians of ${runs} runs after ${warmUpMs} ms of warm-up`);

for (const s of copyShapes(args.shapes?.split(','))) {
  const source = new Uint32Array(s.length).map((_, i) => i);
  const destination = new Uint32Array(s.length);
  const deviceSource = backend.upload(source);
  const deviceDestination = backend.alloc('u32', s.length);
  const plan = DeviceBatchedCopy.plan(
    { source: deviceSource, destination: deviceDestination, sizes: p.perSegment(s.sizes), sourceOffsets: p.perSegment(s.sourceOffsets), destinationOffsets: p.perSegment(s.destinationOffsets), numBuffers: constantOf(s.sizes.length) },
    env({ backend }),
  );
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  const segkit: number[] = [];
  const loop: number[] = [];
  const warmUpUntil = performance.now() + warmUpMs;
  for (let r = 0; segkit.length < runs; r++) {
    const measured = r >= 2 && performance.now() >= warmUpUntil;
    let t = performance.now();
    await plan.run(temp);
    await backend.synchronize();
    if (measured) segkit.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < s.sizes.length; i++) destination.set(source.subarray(s.sourceOffsets[i]!, s.sourceOffsets[i]! + s.sizes[i]!), s.destinationOffsets[i]!);
    if (measured) loop.push(performance.now() - t);
  }
  const got = await backend.download(deviceDestination);
  const same = got.every((v, i) => v === destination[i]);
  const gbs = (ms: number) => ((s.total * 8) / (ms * 1e6)).toFixed(2);
  const [a, b] = [medianOf(segkit), medianOf(loop)];
  console.log(`${s.name.padEnd(16)} segkit ${plan.variant.padEnd(9)} ${a.toFixed(3)} ms (${gbs(a)} GB/s)   JS set loop ${b.toFixed(3)} ms (${gbs(b)} GB/s)   ${same ? 'same words' : 'MISMATCH'}`);
  plan.destroy();
  temp?.destroy();
  deviceSource.destroy();
  deviceDestination.destroy();
}
backend.destroy();
