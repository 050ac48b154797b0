import { sortSlotsFor } from '../src/backends/webgpu/blocks.js';

/** A shader in which each workgroup sorts one segment of (key, index) entries in workgroup memory. */
export interface WorkgroupSortShader {
  readonly workgroupSize: number;
  /** Entries a workgroup holds at most (the segment's stride in `keys` and `sorted`). */
  readonly most: number;
  /** WGSL the sort needs (its blocks and their workgroup arrays), with `WG` and the sort arrays in scope. */
  readonly blocks: string;
  /** The WGSL statement that sorts entries [0, count) (empty: load and write only). */
  readonly sort: string;
  /** WGSL: workgroup g's count, from `counts` (binding 1). */
  readonly count: string;
  /** WGSL: entry i's index in workgroup g. */
  readonly index: string;
}

/**
 * The shader: keys at binding 0 (segment g from g * most), counts at binding 1, the sorted (key,
 * index) pairs written to binding 2. Entries are padded to a power of two (key 0, the largest index:
 * last), as the bitonic sort needs.
 */
export function workgroupSortShader(o: WorkgroupSortShader): string {
  return `const WG: u32 = ${o.workgroupSize}u;
var<workgroup> sortKeys: array<u32, ${sortSlotsFor(o.most)}>;
var<workgroup> sortIndices: array<u32, ${sortSlotsFor(o.most)}>;
var<workgroup> segmentCount: u32;
fn sortLoad(i: u32) -> vec2<u32> { let at = sortSlot(i); return vec2<u32>(sortKeys[at], sortIndices[at]); }
fn sortStore(i: u32, entry: vec2<u32>) { let at = sortSlot(i); sortKeys[at] = entry.x; sortIndices[at] = entry.y; }
${o.blocks}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> sorted: array<vec2<u32>>;
@compute @workgroup_size(${o.workgroupSize})
fn main(@builtin(workgroup_id) workgroup: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = workgroup.x;
  if (lid == 0u) { segmentCount = ${o.count}; }
  let count = workgroupUniformLoad(&segmentCount);
  for (var i = lid; i < nextPowerOfTwo(count); i += WG) {
    var entry = vec2<u32>(0u, 0xffffffffu);
    if (i < count) { entry = vec2<u32>(keys[g * ${o.most}u + i], ${o.index}); }
    sortStore(i, entry);
  }
  workgroupBarrier();
  ${o.sort}
  for (var i = lid; i < count; i += WG) { sorted[g * ${o.most}u + i] = sortLoad(i); }
}`;
}

/**
 * Compares the shader's output with a plain sort of each segment's keys (descending, then index
 * ascending): how many places are wrong, and the first ten described. Segment g holds counts[g]
 * keys from g * most; entry i's index is index(g, i).
 */
export function wrongPlaces(sorted: Uint32Array, keys: Uint32Array, most: number, counts: readonly number[], index: (g: number, i: number) => number): { count: number; first: string[] } {
  const first: string[] = [];
  let count = 0;
  counts.forEach((n, g) => {
    const segmentKeys = keys.subarray(g * most, g * most + n);
    const expected = Array.from(segmentKeys.keys()).sort((a, b) => segmentKeys[b]! - segmentKeys[a]! || index(g, a) - index(g, b));
    for (let i = 0; i < n; i++) {
      const at = 2 * (g * most + i);
      if (sorted[at + 1] === index(g, expected[i]!) && sorted[at] === segmentKeys[expected[i]!]) continue;
      count++;
      if (first.length < 10) first.push(`count ${n}, place ${i}: (${sorted[at]}, ${sorted[at + 1]}), expected (${segmentKeys[expected[i]!]}, ${index(g, expected[i]!)})`);
    }
  });
  return { count, first };
}
