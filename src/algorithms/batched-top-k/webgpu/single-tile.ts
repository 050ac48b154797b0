import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { type TopKKernelFacts, bitonicOf } from './facts.js';
import { bitonicSortWgsl, sortSlotsFor } from '../../../backends/webgpu/blocks.js';
import { scanDeclarationsWgsl, scanInMain } from './radix-common.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * 'single-tile' (grid maxSegments): one workgroup per segment, the segment's ordered keys in a tile of
 * workgroup memory (tileItems * 8 + 2 KiB + a few words, within the policy's tileItems * 8 + 4 KiB).
 *
 * The CPU twin's decomposition: an in-tile radix select over the ordered key, 8-bit digits MSB first
 * (a workgroup histogram of the digit among keys matching the prefix so far; the threshold digit from
 * the top by a suffix scan), ending when a whole bucket is taken or after the last digit with the
 * bucket [lo, hi] and `ties`: the selection is every key above hi plus the first `ties` keys within
 * [lo, hi] by index. One pass collects it in index order (a workgroup scan over contiguous runs), then
 * a bitonic sort of the selection's indices (keys read through the tile) when sorted.
 *
 * A constant segment size equal to the tile removes every bounds test of the tile loops.
 */

const shape: KernelShape = { keys: true, outputs: true, temp: 'none', branch: 'single-tile' };

/** The single-tile program for these facts. */
export function singleTileProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const tile = facts.tileItems;
  const wg = facts.workgroupSize;
  if (tile % wg !== 0) throw new Error(`internal: tileItems ${tile} is not a multiple of the workgroup size ${wg}`);
  const temp = facts.startMode === 1 ? 'u32' : 'none';
  const kernelShape: KernelShape = { ...shape, temp };
  // The padding code goes when every segment fills the tile exactly.
  const fullTile = facts.sizes.kind === 'constant' && facts.sizes.value === tile;
  const inTile = (i: string) => (fullTile ? 'true' : `${i} < size`);
  const declarations = `
const TILE: u32 = ${tile}u;
const PER_THREAD: u32 = ${tile / wg}u;
var<workgroup> tileKeys: array<u32, ${tile}>;
var<workgroup> order: array<u32, ${sortSlotsFor(tile)}>;
var<workgroup> histogram: array<atomic<u32>, 256>;
var<workgroup> scan: array<u32, ${wg}>;
var<workgroup> chosen: vec3<u32>;
${scanDeclarationsWgsl(facts, wg)}
fn rankOf(index: u32) -> u32 { if (index == SENTINEL) { return 0u; } return tileKeys[index]; }
fn sortLoad(i: u32) -> vec2<u32> { let index = order[sortSlot(i)]; return vec2<u32>(rankOf(index), index); }
fn sortStore(i: u32, entry: vec2<u32>) { order[sortSlot(i)] = entry.y; }
${bitonicSortWgsl(bitonicOf(facts))}
`;
  const main = `
  let segment = workgroupIndex;
  let s = enterSegment(segment, TILE, lid);
  if (s.go == 0u) { return; }
  let out = segment * u.kMax;
  let take = s.take;
  let size = ${fullTile ? 'TILE' : 's.size'};
  if (take == 0u) {
    for (var j = lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }
    return;
  }
  for (var j = 0u; j < PER_THREAD; j++) {
    let i = j * WG + lid;
    if (${inTile('i')}) { tileKeys[i] = orderedKey(keysIn[s.start + i], s.direction); }
  }

  // Radix select in the tile: the threshold bucket [lo, hi] and how many ties it gives.
  var prefix = 0u;
  var remaining = take;
  var lo = 0u;
  var hi = 0xffffffffu;
  var ties = take;
  for (var digitPass = 0u; digitPass < 4u; digitPass++) {
    let shift = 24u - 8u * digitPass;
    let fixed = select(0xffffffffu << (shift + 8u), 0u, digitPass == 0u);
    for (var d = lid; d < 256u; d += WG) { atomicStore(&histogram[d], 0u); }
    workgroupBarrier();
    for (var j = 0u; j < PER_THREAD; j++) {
      let i = j * WG + lid;
      if (${inTile('i')}) {
        let key = tileKeys[i];
        if ((key & fixed) == prefix) { atomicAdd(&histogram[(key >> shift) & 255u], 1u); }
      }
    }
    workgroupBarrier();
    // Digits from the best down: invocation t holds digit 255 - t, so an inclusive scan is the count at or above.
    var atOrAbove = 0u;
    for (var base = 0u; base < 256u; base += WG) {
      let value = select(0u, atomicLoad(&histogram[255u - (base + lid)]), base + lid < 256u);
      let sum = inclusiveScan(value, lid) + atOrAbove;
      if (sum - value < remaining && remaining <= sum) { chosen = vec3<u32>(255u - (base + lid), sum - value, value); }
      atOrAbove = atOrAbove + scan[WG - 1u];
      workgroupBarrier();
    }
    let c = workgroupUniformLoad(&chosen);
    prefix = prefix | (c.x << shift);
    lo = prefix;
    hi = prefix | ((1u << shift) - 1u);
    remaining = remaining - c.y;
    if (c.z == remaining || digitPass == 3u) {
      ties = remaining;
      break;
    }
  }

  // Collect the selection in index order: invocation t owns items [t * PER_THREAD, (t + 1) * PER_THREAD).
  let first = lid * PER_THREAD;
  var above = 0u;
  var within = 0u;
  for (var j = 0u; j < PER_THREAD; j++) {
    let i = first + j;
    if (${inTile('i')}) {
      let key = tileKeys[i];
      if (key > hi) { above += 1u; } else if (key >= lo) { within += 1u; }
    }
  }
  let packed = (above << 16u) | within;
  let before = inclusiveScan(packed, lid) - packed;
  var aboveBefore = before >> 16u;
  var withinBefore = before & 0xffffu;
  for (var j = 0u; j < PER_THREAD; j++) {
    let i = first + j;
    if (${inTile('i')}) {
      let key = tileKeys[i];
      if (key > hi) {
        order[sortSlot(aboveBefore + min(withinBefore, ties))] = i;
        aboveBefore += 1u;
      } else if (key >= lo) {
        if (withinBefore < ties) { order[sortSlot(aboveBefore + withinBefore)] = i; }
        withinBefore += 1u;
      }
    }
  }
  workgroupBarrier();
  ${
    facts.sorted
      ? `let padded = nextPowerOfTwo(take);
  for (var j = take + lid; j < padded; j += WG) { order[sortSlot(j)] = SENTINEL; }
  workgroupBarrier();
  bitonicSort(take, lid);`
      : ''
  }
  for (var j = lid; j < u.kMax; j += WG) {
    if (j < take) { writeResult(out + j, s.start, order[sortSlot(j)]); } else { writeFill(out + j, s.direction); }
  }`;
  const preamble = topKPreamble(facts, kernelShape);
  return {
    name,
    cacheKey: `single-tile|${JSON.stringify(facts)}`,
    workgroupSize: wg,
    uniforms: kernelUniforms(facts, kernelShape),
    bindings: kernelBindings(facts, kernelShape),
    preamble,
    declarations,
    ...scanInMain(facts, main),
  };
}
