/**
 * The workgroup sorts the top-k kernels share (backends/webgpu/blocks.ts), run alone on the device.
 *
 * The bitonic sort (`bitonicSortWgsl`): for each grouping a kernel uses (and the extremes of the
 * options), workgroups of 64 and 256 invocations, and counts around every power of two up to 2048,
 * each segment's entries must come out best first (key descending, then index ascending) exactly as
 * a plain sort orders them. Keys with many ties and keys drawn from all 32 bits.
 *
 * The rank sort (`rankSortWgsl`), the same counts and workgroups, over keys spread the ways its
 * buckets meet them: all 32 bits, a narrow span, all tied (the indices split the buckets), few
 * values with many ties and one key far from the rest (buckets past its limit: the bitonic sort
 * takes over), and indices that neither start at 0 nor run contiguously.
 *
 * The workgroup scan (`inclusiveScanWgsl`) the radix-select, row-radix and single-tile kernels
 * choose their buckets with: the Hillis-Steele form and, where the adapter has subgroups of one
 * width, the subgroup form with its runs' sums added by a loop (more runs than a subgroup's lanes)
 * and by a scan within a subgroup (at most that many): each invocation's result is the sum of the
 * values of the local indices up to its own, every result stays in the array, and a second scan
 * right after the first reads none of the first's words.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BitonicOptions, bitonicSortWgsl, defaultBitonic, inclusiveScanWgsl, rankSortWgsl, scanLaneWgsl } from '../src/backends/webgpu/blocks.js';
import { type WebGpuBackend, webgpuBackend } from '../src/index.js';
import { rng } from './helpers.js';
import { describeOnWebGpu } from './webgpu-adapter.js';
import { runShader } from './webgpu-shader.js';
import { workgroupSortShader, wrongPlaces } from './workgroup-sort-shader.js';

const describeSort = await describeOnWebGpu('the workgroup sorts');

/** Entries a segment holds at most (keys and indices in two arrays fit a software adapter's 32 KiB). */
const most = 2048;
const counts = [1, 2, 3, 5, 15, 16, 17, 31, 64, 100, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024, 1025, 2047, 2048];
const groupings: BitonicOptions[] = [defaultBitonic, { wideGroups: 32, maxBits: 3 }, { wideGroups: 1, maxBits: 4 }, { wideGroups: 4096, maxBits: 4 }, { wideGroups: 128, maxBits: 1 }];

/** A segment's keys: few distinct values (ties) in even segments, any 32 bits in odd ones. */
function keysOf(segment: number, count: number): Uint32Array {
  const random = rng(segment * 104729 + count);
  return Uint32Array.from({ length: count }, () => (segment % 2 === 0 ? Math.floor(random() * 8) : Math.floor(random() * 4294967296)) >>> 0);
}

function shader(options: BitonicOptions, workgroupSize: number): string {
  return workgroupSortShader({ workgroupSize, most, blocks: bitonicSortWgsl(options), sort: 'bitonicSort(count, lid);', count: 'counts[g]', index: 'i' });
}

/** How the rank sort's keys spread (a random source, the entry, the count): what its buckets meet. */
const rankSpreads: [string, (random: () => number, i: number, count: number) => number][] = [
  ['keys from all 32 bits', (random) => random() * 4294967296],
  ['keys in a narrow span', (random) => 0xbf7e0000 + random() * 0x20000],
  ['every key tied', () => 0x3f800000],
  ['eight values, many ties', (random) => 0x40000000 + Math.floor(random() * 8) * 0x100],
  ['one key far above the rest', (random, i) => (i === 0 ? 0xffffff00 : 0x3f800000 + random() * 64)],
];

/** Entry i's index in segment g: neither from 0 nor contiguous. */
const rankIndexOf = (g: number, i: number) => 1000 + g * 3 + i * 37;

function rankShader(workgroupSize: number): string {
  const bucketBits = 11;
  const blocks = `var<workgroup> scan: array<u32, WG>;
var<workgroup> buckets: array<atomic<u32>, ${2 ** bucketBits}>;
${inclusiveScanWgsl()}
${bitonicSortWgsl(defaultBitonic)}
${rankSortWgsl({ perInvocation: most / workgroupSize, buckets: 'buckets', bucketBits, bucketMax: 32, minCount: 2 })}`;
  return workgroupSortShader({ workgroupSize, most, blocks, sort: 'rankSort(count, lid);', count: 'counts[g]', index: '1000u + g * 3u + i * 37u' });
}

/**
 * A shader of two scans a workgroup (`scanWgsl`): workgroup g scans values [2 g WG, 2 g WG + WG),
 * then the next WG; out words 3 (g WG + lid) + 0, 1, 2 hold its first result, the first scan's
 * result of the invocation after it (read from the array), and its second result.
 */
function scanShader(workgroupSize: number, subgroupWidth: number | undefined): string {
  const lane = subgroupWidth === undefined ? '' : ', @builtin(subgroup_invocation_id) subgroupLane: u32';
  return `${subgroupWidth === undefined ? '' : 'enable subgroups;'}
const WG: u32 = ${workgroupSize}u;
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
var<workgroup> scan: array<u32, WG>;
${subgroupWidth === undefined ? inclusiveScanWgsl() : `${scanLaneWgsl.declaration}\n${inclusiveScanWgsl('inclusiveScan', 'a + b', { subgroupWidth, workgroupSize })}`}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) id: vec3u, @builtin(local_invocation_index) lid: u32${lane}) {
${subgroupWidth === undefined ? '' : scanLaneWgsl.set}
  let g = id.x;
  let first = inclusiveScan(values[2u * g * WG + lid], lid);
  let next = scan[(lid + 1u) % WG];
  workgroupBarrier();
  let second = inclusiveScan(values[2u * g * WG + WG + lid], lid);
  let at = 3u * (g * WG + lid);
  out[at] = first;
  out[at + 1u] = next;
  out[at + 2u] = second;
}`;
}

/** The scan shader's expected words for `values` (wrapping u32 sums, as WGSL adds). */
function expectedScans(values: Uint32Array, workgroupSize: number, workgroups: number): Uint32Array {
  const out = new Uint32Array(3 * workgroupSize * workgroups);
  for (let g = 0; g < workgroups; g++) {
    const prefix = (half: number) => {
      const sums = new Uint32Array(workgroupSize);
      let sum = 0;
      for (let i = 0; i < workgroupSize; i++) sums[i] = sum = (sum + values[(2 * g + half) * workgroupSize + i]!) >>> 0;
      return sums;
    };
    const first = prefix(0);
    const second = prefix(1);
    for (let i = 0; i < workgroupSize; i++) out.set([first[i]!, first[(i + 1) % workgroupSize]!, second[i]!], 3 * (g * workgroupSize + i));
  }
  return out;
}

describeSort('the workgroup sorts', () => {
  let backend: WebGpuBackend;
  beforeAll(async () => {
    backend = await webgpuBackend();
  });
  afterAll(() => backend?.destroy());

  for (const options of groupings) {
    for (const workgroupSize of [64, 256]) {
      it(`groups of up to ${2 ** options.maxBits} entries from ${options.wideGroups} groups on, ${workgroupSize} invocations: every count sorts best first`, async () => {
        const device = backend.device;
        const segments = counts.length;
        const keys = new Uint32Array(segments * most);
        counts.forEach((count, g) => keys.set(keysOf(g, count), g * most));
        const sorted = await runShader(device, shader(options, workgroupSize), [keys, Uint32Array.from(counts)], segments * most * 2, segments);
        expect(wrongPlaces(sorted, keys, most, counts, (_, i) => i).first).toEqual([]);
      });
    }
  }

  for (const [spread, keyOf] of rankSpreads) {
    for (const workgroupSize of [64, 256]) {
      it(`the rank sort, ${spread}, ${workgroupSize} invocations: every count sorts best first`, async () => {
        const segments = counts.length;
        const keys = new Uint32Array(segments * most);
        counts.forEach((count, g) => {
          const random = rng(g * 7919 + count);
          for (let i = 0; i < count; i++) keys[g * most + i] = keyOf(random, i, count) >>> 0;
        });
        const sorted = await runShader(backend.device, rankShader(workgroupSize), [keys, Uint32Array.from(counts)], segments * most * 2, segments);
        expect(wrongPlaces(sorted, keys, most, counts, rankIndexOf).first).toEqual([]);
      });
    }
  }

  for (const workgroupSize of [32, 64, 256]) {
    it(`the workgroup scan, ${workgroupSize} invocations: Hillis-Steele, and within subgroups where the adapter has one width`, async () => {
      const width = (backend as unknown as { fixedSubgroupSize: number | undefined }).fixedSubgroupSize;
      if (process.env.CI && width === undefined) throw new Error('CI: the adapter has no subgroups of one width; the subgroup scan went untested');
      const workgroups = 3;
      const random = rng(workgroupSize * 31);
      // Small counts, zeros, and sums that wrap past 2^32.
      const values = Uint32Array.from({ length: 2 * workgroupSize * workgroups }, (_, i) => (i % 7 === 0 ? 0 : i % 5 === 0 ? 0xfffffff0 + (i & 15) : Math.floor(random() * 4096)) >>> 0);
      const expected = expectedScans(values, workgroupSize, workgroups);
      const forms: [string, number | undefined][] = [['Hillis-Steele', undefined]];
      if (width !== undefined && workgroupSize % width === 0) forms.push([workgroupSize / width <= width ? 'subgroups, runs summed in a subgroup' : 'subgroups, runs summed in a loop', width]);
      for (const [form, subgroupWidth] of forms) {
        const words = await runShader(backend.device, scanShader(workgroupSize, subgroupWidth), [values], expected.length, workgroups);
        expect({ form, words: Array.from(words) }).toEqual({ form, words: Array.from(expected) });
      }
    });
  }
});
