import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { bitonicSortWgsl, inclusiveScanWgsl } from '../../../backends/webgpu/blocks.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * 'radix-finalize' (grid maxSegments): when the passes left items to take, they are the smallest
 * indices among candidate buffer 1 (whose members all share the threshold key): a radix select over
 * the index values (8-bit digits from the top, a workgroup histogram per digit) finds the largest
 * index to take, and every candidate at or below it is appended to `selected`. Then the selection,
 * which the atomics appended in an order that changes from run to run, is put in a fixed order: a
 * bitonic sort in workgroup memory, best first (ordered key descending, index ascending) when
 * sorted, by index when unsorted (as the CPU twin writes it); and written with the fills.
 *
 * Workgroup memory: tileItems * 8 bytes for the sort plus 2 KiB. A selection larger than the tile
 * (only with 'unsorted' output) is put in index order through a bitmap over the segment in candidate
 * buffer 0 (free once the last pass has read it): set a bit per selected index, then a workgroup
 * scan of the words' bit counts gives each index its output slot.
 *
 * The requirements' relaxations (plan.ts): TIES_AS_FOUND ('any' ties, 'not-guaranteed') takes the
 * first `ties` candidates in buffer order, skipping the select over their indices; ORDER_AS_FOUND
 * ('unsorted', 'not-guaranteed') writes the selection in the order the filter appended it, skipping
 * the sort. Both orders come from atomics and may change from run to run.
 */

/** The radix-finalize program; `relaxed` says what the requirements let it skip (plan.ts). */
export function radixFinalizeProgram(facts: TopKKernelFacts, name: string, relaxed: { tiesAsFound: boolean; orderAsFound: boolean }): WebGpuProgram {
  const declarations = `
const TIES_AS_FOUND: bool = ${relaxed.tiesAsFound};
const ORDER_AS_FOUND: bool = ${relaxed.orderAsFound};
var<workgroup> sortKeys: array<u32, ${facts.tileItems}>;
var<workgroup> order: array<u32, ${facts.tileItems}>;
var<workgroup> localHistogram: array<atomic<u32>, 256>;
var<workgroup> scan: array<u32, ${facts.workgroupSize}>;
var<workgroup> stateInfo: vec3<u32>;
var<workgroup> chosen: vec3<u32>;
var<workgroup> appended: atomic<u32>;
${inclusiveScanWgsl()}
fn entryBefore(a: u32, b: u32) -> bool {
${
  facts.sorted
    ? `  let ka = sortKeys[a];
  let kb = sortKeys[b];
  return ka > kb || (ka == kb && order[a] < order[b]);`
    : '  return order[a] < order[b];'
}
}
fn swapEntries(a: u32, b: u32) {
  let k = sortKeys[a]; sortKeys[a] = sortKeys[b]; sortKeys[b] = k;
  let i = order[a]; order[a] = order[b]; order[b] = i;
}
${bitonicSortWgsl}`;
  const main = `
  let segment = workgroupIndex;${enterRadixSegment('segment')}
  if (lid == 0u) {
    stateInfo = vec3<u32>(atomicLoad(&temp[state + 1u]), atomicLoad(&temp[state + 6u]), atomicLoad(&temp[state + 3u]));
    atomicStore(&appended, 0u);
  }
  let info = workgroupUniformLoad(&stateInfo);
  let selected = u.selectedAt + segment * u.kMax;
  let chosenCount = min(info.x, s.take);
  var count = chosenCount;
  if (info.y == 0u && chosenCount < s.take) {
    // The last bucket's members all share one ordered key: the smallest indices win.
    let candidates = u.candidates1At + s.start;
    let available = min(info.z, s.size);
    let ties = min(s.take - chosenCount, available);
    if (ties == available || TIES_AS_FOUND) {
      for (var j = lid; j < ties; j += WG) { atomicStore(&temp[selected + chosenCount + j], atomicLoad(&temp[candidates + j])); }
    } else {
      var prefix = 0u;
      var remaining = ties;
      var highest = 0xffffffffu;
      for (var digitPass = 0u; digitPass < 4u; digitPass++) {
        let shift = 24u - 8u * digitPass;
        let fixed = select(0xffffffffu << (shift + 8u), 0u, digitPass == 0u);
        for (var d = lid; d < 256u; d += WG) { atomicStore(&localHistogram[d], 0u); }
        workgroupBarrier();
        for (var c = lid; c < available; c += WG) {
          let index = atomicLoad(&temp[candidates + c]);
          if ((index & fixed) == prefix) { atomicAdd(&localHistogram[(index >> shift) & 255u], 1u); }
        }
        workgroupBarrier();
        // Invocation t holds digit t: an inclusive scan is the count at or below the digit.
        var atOrBelow = 0u;
        for (var base = 0u; base < 256u; base += WG) {
          let digit = min(base + lid, 255u);
          let value = select(0u, atomicLoad(&localHistogram[digit]), base + lid < 256u);
          let sum = inclusiveScan(value, lid) + atOrBelow;
          if (sum - value < remaining && remaining <= sum) { chosen = vec3<u32>(digit, sum - value, value); }
          atOrBelow = atOrBelow + scan[WG - 1u];
          workgroupBarrier();
        }
        let c = workgroupUniformLoad(&chosen);
        prefix = prefix | (c.x << shift);
        remaining = remaining - c.y;
        highest = prefix | ((1u << shift) - 1u);
        if (c.z == remaining) { break; }
      }
      for (var c = lid; c < available; c += WG) {
        let index = atomicLoad(&temp[candidates + c]);
        if (index <= highest) {
          let at = chosenCount + atomicAdd(&appended, 1u);
          if (at < u.kMax) { atomicStore(&temp[selected + at], index); }
        }
      }
    }
    count = chosenCount + ties;
  }
  storageBarrier();
  let out = segment * u.kMax;
  if (count <= TILE && !ORDER_AS_FOUND) {
    let padded = nextPowerOfTwo(count);
    for (var j = lid; j < padded; j += WG) {
      if (j < count) {
        let index = atomicLoad(&temp[selected + j]);
        order[j] = index;
        sortKeys[j] = orderedKey(keysIn[s.start + index], s.direction);
      } else {
        order[j] = SENTINEL;
        sortKeys[j] = 0u;
      }
    }
    workgroupBarrier();
    bitonicSort(count, lid);
    for (var j = lid; j < u.kMax; j += WG) {
      if (j < count) { writeResult(out + j, s.start, order[j]); } else { writeFill(out + j, s.direction); }
    }
  } else if (ORDER_AS_FOUND) {
    for (var j = lid; j < u.kMax; j += WG) {
      if (j < count) { writeResult(out + j, s.start, atomicLoad(&temp[selected + j])); } else { writeFill(out + j, s.direction); }
    }
  } else {
    // Index order through a bitmap over the segment (writes past the candidate buffer only under 'trust').
    let bitmap = u.candidates0At + s.start;
    let words = (s.size + 31u) / 32u;
    for (var w = lid; w < words; w += WG) {
      if (s.start + w < u.candidatesLen) { atomicStore(&temp[bitmap + w], 0u); }
    }
    storageBarrier();
    for (var j = lid; j < count; j += WG) {
      let index = atomicLoad(&temp[selected + j]);
      if (s.start + (index >> 5u) < u.candidatesLen) { atomicOr(&temp[bitmap + (index >> 5u)], 1u << (index & 31u)); }
    }
    storageBarrier();
    var written = 0u;
    for (var base = 0u; base < words; base += WG) {
      let w = base + lid;
      var word = 0u;
      if (w < words && s.start + w < u.candidatesLen) { word = atomicLoad(&temp[bitmap + w]); }
      let marked = countOneBits(word);
      var at = written + inclusiveScan(marked, lid) - marked;
      loop {
        if (word == 0u) { break; }
        if (at < count) { writeResult(out + at, s.start, w * 32u + firstTrailingBit(word)); }
        at += 1u;
        word &= word - 1u;
      }
      written += scan[WG - 1u];
      workgroupBarrier();
    }
    for (var j = count + lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }
  }`;
  return radixProgram(`radix-finalize|${JSON.stringify(relaxed)}`, facts, name, { keys: true, outputs: true }, declarations, main);
}
