/**
 * The workgroup sorts the top-k kernels share (src/backends/webgpu/blocks.ts), timed alone: each
 * workgroup of a launch loads one segment's (key, index) entries into workgroup memory, sorts them
 * best first and writes them out. GPU time of the launch (timestamp queries, median of --runs), for
 * the bitonic sort in top-k's groupings and the rank sort, at counts that top-k's kernels sort
 * (a few hundred candidates, a take of 2048, ~3.3K candidates of a 2048 take), with keys spread as
 * they reach those kernels; 'load only' is the launch without a sort (what the sort adds is the
 * difference). Every result is checked against a plain sort.
 *
 *   node dist/bench/workgroup-sort-webgpu.mjs [--counts=128,512,2048,4096] [--segments=64] [--runs=9]
 *     [--workgroup=256] [--most=4096] [--warm-ms=100] [--out=DIR] [--out-file=NAME]
 * (--most: the entries a workgroup holds at most, and so the largest count; 2048 fits a software
 * adapter's 32 KiB of workgroup memory.)
 * (bench/gpu/build.sh bundles it.)
 */
/// <reference types="@webgpu/types" />
import { writeFileSync } from 'node:fs';
import { bitonicSortWgsl, inclusiveScanWgsl, rankSortWgsl } from '../src/backends/webgpu/blocks.js';
import { rng } from '../test/rng.js';
import { bindingsOf, encodeDispatch } from '../test/webgpu-shader.js';
import { workgroupSortShader, wrongPlaces } from '../test/workgroup-sort-shader.js';
import { benchDevice, passTimer } from './lib/gpu-device.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => /^--([^=]+)(?:=(.*))?$/.exec(a)!).map(([, k, v]) => [k, v ?? '1'])) as Record<string, string>;
const counts = (argv.counts ?? '100,128,512,2048,3300,4096').split(',').map(Number).filter((n) => n <= Number(argv.most ?? 4096));
const segments = Number(argv.segments ?? 64);
const runs = Number(argv.runs ?? 9);
const workgroupSize = Number(argv.workgroup ?? 256);
const warmMs = Number(argv['warm-ms'] ?? 100);
const most = Number(argv.most ?? 4096);
const bucketBits = 11;

/** Keys as they reach a sort (ordered f32 bits): the top of uniform floats, any 32 bits, few values. */
const spreads: Record<string, (random: () => number) => number> = {
  'top of uniform floats': (random) => (0x80000000 | (0x3f7f0000 + Math.floor(random() * 0x10000))) >>> 0,
  'any 32 bits': (random) => Math.floor(random() * 4294967296) >>> 0,
  'eight values': (random) => 0xc0000000 + Math.floor(random() * 8),
};

const sorts: Record<string, string> = {
  'load only': '',
  'bitonic, groups of 8': 'bitonic3',
  'bitonic, groups of 16': 'bitonic4',
  rank: 'rank',
};

function shader(sort: string): string {
  const blocks = `var<workgroup> scan: array<u32, WG>;
var<workgroup> buckets: array<atomic<u32>, ${2 ** bucketBits}>;
${inclusiveScanWgsl()}
${bitonicSortWgsl({ wideGroups: 128, maxBits: sort === 'bitonic3' ? 3 : 4 })}
${rankSortWgsl({ perInvocation: most / workgroupSize, buckets: 'buckets', bucketBits, bucketMax: 32, minCount: 2 })}`;
  const call = sort === '' ? '' : sort === 'rank' ? 'rankSort(count, lid);' : 'bitonicSort(count, lid);';
  return workgroupSortShader({ workgroupSize, most, blocks, sort: call, count: 'counts[0]', index: 'g * 131072u + i * 29u' });
}

const { device } = await benchDevice();
const timer = passTimer(device);
const buffer = (bytes: number, usage: number) => device.createBuffer({ size: Math.max(16, bytes), usage });
const keysBuffer = buffer(segments * most * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
const sizeBuffer = buffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
const outBuffer = buffer(segments * most * 8, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
const readBuffer = buffer(segments * most * 8, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
const pipelines = Object.fromEntries(
  Object.entries(sorts).map(([label, sort]) => [label, device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: shader(sort) }), entryPoint: 'main' } })]),
);

interface Row {
  spread: string;
  count: number;
  sort: string;
  gpuMs?: number;
  mismatches: number;
}
const rows: Row[] = [];
for (const [spread, keyOf] of Object.entries(spreads)) {
  for (const count of counts) {
    const keys = new Uint32Array(segments * most);
    const random = rng(count * 7 + spread.length);
    for (let g = 0; g < segments; g++) for (let i = 0; i < count; i++) keys[g * most + i] = keyOf(random);
    device.queue.writeBuffer(keysBuffer, 0, keys);
    device.queue.writeBuffer(sizeBuffer, 0, Uint32Array.of(count, 0, 0, 0));
    for (const [label, pipeline] of Object.entries(pipelines)) {
      const bindGroup = bindingsOf(device, pipeline, [keysBuffer, sizeBuffer, outBuffer]);
      const call = async () => {
        const encoder = device.createCommandEncoder();
        encodeDispatch(encoder, pipeline, bindGroup, segments);
        device.queue.submit([encoder.finish()]);
      };
      // Busy for warmMs first: the checks' host sorts idle the GPU, and its clock drops meanwhile.
      for (const until = performance.now() + warmMs; performance.now() < until; ) {
        await call();
        await device.queue.onSubmittedWorkDone();
      }
      const gpuMs = (await timer.gpuTimeMs(call, () => device.queue.onSubmittedWorkDone(), runs))?.ms;
      let mismatches = 0;
      if (label !== 'load only') {
        const encoder = device.createCommandEncoder();
        encoder.copyBufferToBuffer(outBuffer, 0, readBuffer, 0, segments * most * 8);
        device.queue.submit([encoder.finish()]);
        await readBuffer.mapAsync(GPUMapMode.READ);
        const out = new Uint32Array(readBuffer.getMappedRange().slice(0));
        readBuffer.unmap();
        mismatches = wrongPlaces(out, keys, most, Array.from({ length: segments }, () => count), (g, i) => g * 131072 + i * 29).count;
      }
      rows.push({ spread, count, sort: label, gpuMs: gpuMs === undefined ? undefined : +gpuMs.toFixed(4), mismatches });
      console.log(`${spread.padEnd(22)} ${String(count).padStart(5)}  ${label.padEnd(22)} ${gpuMs?.toFixed(4) ?? 'n/a'} ms${mismatches ? `  MISMATCHES ${mismatches}` : ''}`);
    }
  }
}
if (argv.out) writeFileSync(`${argv.out}/${argv['out-file'] ?? 'workgroup-sort.json'}`, JSON.stringify({ date: new Date().toISOString(), segments, workgroupSize, runs, rows }, null, 1));
device.destroy();
