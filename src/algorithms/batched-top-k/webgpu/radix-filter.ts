import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram, selectionSortWgsl } from './radix-common.js';

/*
 * 'radix-filter' for digit p = launchPass, p < passes - 1 (grid maxSegments * filterTiles; workgroup
 * w of a segment takes the input tiles w, w + filterTiles, ...). Every launch before it is done, so
 * each workgroup with input finds digit p's threshold bucket b itself, from the segment's digit-p
 * histogram and the items still to take (take minus what digits < p selected): no launch of its own.
 * Input: digit 0 reads the keys that reached the sampled threshold (candidates0), or every key;
 * digit p > 0 reads candidate buffer p & 1. An item whose digit is above b (or equal, when the whole
 * bucket is taken) is selected; one equal to b is kept in buffer (p + 1) & 1 and counted in the
 * digit-(p + 1) histogram. When b's bucket holds exactly the rest, nothing is kept and the later
 * launches find nothing left to take. Each workgroup counts a tile's items in workgroup atomics, then
 * reserves its ranges with one global atomic per list.
 *
 * Digit 0 after a sampled pass 0 whose candidates fit a tile (tileItems; not when ties may be taken
 * as found): the segment's first workgroup sorts the candidates instead and writes the best take as
 * digit 0's selection (the CPU twin's selectAmongCandidates); the later digits and finalize's choice
 * find nothing left to take.
 */

/**
 * The radix-filter program. `tiesAsFound` (the requirements let tied items be taken as found) turns
 * off digit 0's shortcut, which takes ties by index.
 */
export function radixFilterProgram(facts: TopKKernelFacts, name: string, tiesAsFound: boolean): WebGpuProgram {
  const perInvocation = facts.radixTileItems / facts.workgroupSize;
  if (!Number.isInteger(perInvocation)) throw new Error(`internal: radixTileItems ${facts.radixTileItems} is not a multiple of the workgroup size`);
  const declarations = `
const PER: u32 = ${perInvocation}u;
const KEPT: u32 = 0x80000000u;
const TIES_AS_FOUND: bool = ${tiesAsFound};
fn sortLoad(i: u32) -> vec2<u32> { let at = sortSlot(i); return vec2<u32>(sortKeys[at], order[at]); }
fn sortStore(i: u32, entry: vec2<u32>) { let at = sortSlot(i); sortKeys[at] = entry.x; order[at] = entry.y; }
${selectionSortWgsl(facts.tileItems)}
var<workgroup> filterInfo: vec3<u32>;
var<workgroup> selectedInTile: atomic<u32>;
var<workgroup> keptInTile: atomic<u32>;
var<workgroup> bases: vec2<u32>;`;
  const main = `
  let tiles = u.filterTiles;
  let segment = workgroupIndex / tiles;
  let w = workgroupIndex - segment * tiles;${enterRadixSegment('segment')}
  let p = u.launchPass;
  if (lid == 0u) {
    let sampled = atomicLoad(&temp[state + STATE_MODE]) == 1u && atomicLoad(&temp[state + STATE_COLLECTED]) >= s.take;
    var count = s.size;
    if (p > 0u) { count = atomicLoad(&temp[state + STATE_KEPT + p - 1u]); } else if (sampled) { count = atomicLoad(&temp[state + STATE_COLLECTED]); }
    filterInfo = vec3<u32>(min(count, s.size), selectedBefore(state, p), select(0u, 1u, p == 0u && !sampled));
  }
  let info = workgroupUniformLoad(&filterInfo);
  let count = info.x;
  let before = info.y;
  if (before >= s.take || w * RADIX_TILE >= count) { return; }
  let fromKeys = info.z == 1u;
  if (p == 0u && !fromKeys && !TIES_AS_FOUND && count <= TILE) {
    // Few keys reached the sampled threshold: the first workgroup sorts them in workgroup memory
    // (best first: key, then index) and takes the first take as digit 0's selection; the later
    // digits find the selection full.
    if (w == 0u) {
      sortIndices(bufferAt(0u) + s.start, count, s.start, s.direction, lid);
      let selected = u.selectedAt + segment * u.kMax;
      for (var j = lid; j < min(s.take, u.kMax); j += WG) { atomicStore(&temp[selected + j], order[sortSlot(j)]); }
      if (lid == 0u) { atomicStore(&temp[state + STATE_SELECTED], s.take); }
    }
    return;
  }
  loadHistogram(histogramOf(segment, p), lid);
  let chosen = chooseDigit(BINS, s.take - before, lid);
  let threshold = chosen.x;
  let takeBucket = chosen.y + chosen.z == s.take - before;
  clearHistogram(BINS, lid);
  let source = bufferAt(p & 1u) + s.start;
  let next = bufferAt((p + 1u) & 1u) + s.start;
  let selected = u.selectedAt + segment * u.kMax;
  for (var t = w; t * RADIX_TILE < count; t += tiles) {
    let begin = t * RADIX_TILE;
    let to = min(begin + RADIX_TILE, count);
    if (lid == 0u) {
      atomicStore(&selectedInTile, 0u);
      atomicStore(&keptInTile, 0u);
    }
    workgroupBarrier();
    var itemIndex: array<u32, PER>;
    var itemSlot: array<u32, PER>;
    for (var j = 0u; j < PER; j++) {
      let c = begin + j * WG + lid;
      var index = c;
      var slot = SENTINEL;
      if (c < to) {
        if (!fromKeys) { index = atomicLoad(&temp[source + c]); }
        let key = orderedKey(keysIn[s.start + index], s.direction);
        let digit = digitOf(key, p);
        if (digit > threshold || (digit == threshold && takeBucket)) {
          slot = atomicAdd(&selectedInTile, 1u);
        } else if (digit == threshold) {
          slot = atomicAdd(&keptInTile, 1u) | KEPT;
          atomicAdd(&localHistogram[digitOf(key, p + 1u)], 1u);
        }
      }
      itemIndex[j] = index;
      itemSlot[j] = slot;
    }
    workgroupBarrier();
    if (lid == 0u) {
      bases = vec2<u32>(
        atomicAdd(&temp[state + STATE_SELECTED + p], atomicLoad(&selectedInTile)),
        atomicAdd(&temp[state + STATE_KEPT + p], atomicLoad(&keptInTile)),
      );
    }
    let base = workgroupUniformLoad(&bases);
    for (var j = 0u; j < PER; j++) {
      let slot = itemSlot[j];
      if (slot == SENTINEL) { continue; }
      if ((slot & KEPT) == 0u) {
        let at = before + base.x + slot;
        if (at < u.kMax) { atomicStore(&temp[selected + at], itemIndex[j]); }
      } else {
        let at = base.y + (slot & ~KEPT);
        if (s.start + at < u.candidatesLen) { atomicStore(&temp[next + at], itemIndex[j]); }
      }
    }
  }
  workgroupBarrier();
  flushHistogram(histogramOf(segment, p + 1u), lid);`;
  return radixProgram('radix-filter', facts, name, { keys: true, outputs: false }, declarations, main);
}
