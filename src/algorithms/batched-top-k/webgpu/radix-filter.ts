import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixTile, radixPassInputCount, radixProgram } from './radix-common.js';

/*
 * 'radix-filter' (grid maxSegments * tiles, one launch per pass): an item whose digit is above the
 * threshold digit b (or equal, when the whole bucket is taken) goes to the segment's `selected` list;
 * one equal to b goes to candidate buffer pass & 1 (at the segment's start). Each workgroup counts its
 * items in workgroup atomics first, reserves its ranges with one global atomic per list, then writes.
 */

/** The radix-filter program. */
export function radixFilterProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const perInvocation = facts.radixTileItems / facts.workgroupSize;
  if (!Number.isInteger(perInvocation)) throw new Error(`internal: radixTileItems ${facts.radixTileItems} is not a multiple of the workgroup size`);
  const declarations = `
const PER: u32 = ${perInvocation}u;
const CANDIDATE: u32 = 0x80000000u;
var<workgroup> tileInfo: vec4<u32>;
var<workgroup> selectedInTile: atomic<u32>;
var<workgroup> candidatesInTile: atomic<u32>;
var<workgroup> bases: vec2<u32>;`;
  const main = `${enterRadixTile}
  if (lid == 0u) {${radixPassInputCount}
    tileInfo = vec4<u32>(atomicLoad(&temp[state + 6u]), count, atomicLoad(&temp[state + 4u]), atomicLoad(&temp[state + 5u]));
    atomicStore(&selectedInTile, 0u);
    atomicStore(&candidatesInTile, 0u);
  }
  let info = workgroupUniformLoad(&tileInfo);
  let begin = tile * RADIX_TILE;
  let to = min(begin + RADIX_TILE, info.y);
  if (info.x != 0u || begin >= to) { return; }
  let threshold = info.z;
  let takeBucket = info.w != 0u;
  let shift = 24u - 8u * u.launchPass;
  let source = select(u.candidates0At, u.candidates1At, ((u.launchPass - 1u) & 1u) == 1u) + s.start;
  var itemIndex: array<u32, ${perInvocation}>;
  var itemSlot: array<u32, ${perInvocation}>;
  for (var j = 0u; j < PER; j++) {
    let c = begin + j * WG + lid;
    var index = c;
    var slot = SENTINEL;
    if (c < to) {
      if (u.launchPass > 0u) { index = atomicLoad(&temp[source + c]); }
      let digit = (orderedKey(keysIn[s.start + index], s.direction) >> shift) & 255u;
      if (digit > threshold || (digit == threshold && takeBucket)) {
        slot = atomicAdd(&selectedInTile, 1u);
      } else if (digit == threshold) {
        slot = atomicAdd(&candidatesInTile, 1u) | CANDIDATE;
      }
    }
    itemIndex[j] = index;
    itemSlot[j] = slot;
  }
  workgroupBarrier();
  if (lid == 0u) {
    bases = vec2<u32>(
      atomicAdd(&temp[state + 1u], atomicLoad(&selectedInTile)),
      atomicAdd(&temp[state + 2u + (u.launchPass & 1u)], atomicLoad(&candidatesInTile)),
    );
  }
  let base = workgroupUniformLoad(&bases);
  let selected = u.selectedAt + segment * u.kMax;
  let next = select(u.candidates0At, u.candidates1At, (u.launchPass & 1u) == 1u) + s.start;
  for (var j = 0u; j < PER; j++) {
    let slot = itemSlot[j];
    if (slot == SENTINEL) { continue; }
    if ((slot & CANDIDATE) == 0u) {
      let at = base.x + slot;
      if (at < u.kMax) { atomicStore(&temp[selected + at], itemIndex[j]); }
    } else {
      let at = base.y + (slot & ~CANDIDATE);
      if (s.start + at < u.candidatesLen) { atomicStore(&temp[next + at], itemIndex[j]); }
    }
  }`;
  return radixProgram('radix-filter', facts, name, { keys: true, outputs: false }, declarations, main);
}
