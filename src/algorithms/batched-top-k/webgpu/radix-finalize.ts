import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram, selectionSortWgsl } from './radix-common.js';
import { pickedOutputsWgsl } from './radix-filter.js';

/*
 * 'radix-finalize' (grid maxSegments), digit p = passes - 1: when items are left to take, the last
 * digit's threshold bucket b from its histogram; the candidates of buffer p & 1 above b (or equal,
 * when the whole bucket is taken) are appended to `selected`, those equal to b, which all share one
 * ordered key, go to buffer (p + 1) & 1 as ties. The smallest indices among the ties win: a radix
 * select over the index values (8-bit digits from the top, a workgroup histogram per digit) finds
 * the largest index to take, and every tie at or below it is appended. Then the selection, which
 * the atomics appended in an order that changes from run to run, is put in a fixed order: a bitonic
 * sort in workgroup memory, best first (ordered key descending, index ascending) when sorted, by
 * index when unsorted (as the CPU twin writes it); and written with the fills.
 *
 * Workgroup memory: tileItems * 8 bytes for the sort, the histogram and the scan (radix-common.ts).
 * A selection larger than the tile (only with 'unsorted' output) is put in index order through a
 * bitmap over the segment in candidate buffer 0 (free once every selected index is in `selected`):
 * set a bit per selected index, then a workgroup scan of the words' bit counts gives each index its
 * output slot.
 *
 * The requirements' relaxations (plan.ts): TIES_AS_FOUND ('any' ties, 'not-guaranteed') takes the
 * first ties in buffer order, skipping the select over their indices; ORDER_AS_FOUND ('unsorted',
 * 'not-guaranteed') writes the selection in the order it was appended, skipping the sort. Both
 * orders come from atomics and may change from run to run.
 *
 * A segment whose outputs filter pass 0's pick wrote already (radix-filter.ts `pickWritesOutputs`)
 * has nothing left here: its workgroup returns once it has read the state words.
 */

/**
 * WGSL: `finalizeSegment(s, segment, state, lid)`, finalize's work on one segment (above), called in
 * uniform control flow, with what it needs: its workgroup memory, the selection sort (sorted: best
 * first, key descending, index ascending; unsorted: by index, the keys read as equal) and whether
 * filter pass 0's pick wrote the outputs (pickedOutputsWgsl). The program around it declares
 * TIES_AS_FOUND: finalize's own launch, or the last filter's where that launch also finalizes
 * (radix-filter.ts; policy.ts radixFoldsFinalize).
 */
export function finalizeSegmentWgsl(facts: TopKKernelFacts, shortcut: 'select' | 'sort', orderAsFound: boolean): string {
  return `fn sortLoad(i: u32) -> vec2<u32> { let at = sortSlot(i); return vec2<u32>(${facts.sorted ? 'sortKeys[at]' : '0u'}, order[at]); }
fn sortStore(i: u32, entry: vec2<u32>) { let at = sortSlot(i); ${facts.sorted ? 'sortKeys[at] = entry.x; ' : ''}order[at] = entry.y; }
${selectionSortWgsl(facts, facts.sorted)}
${pickedOutputsWgsl(facts, shortcut)}
const ORDER_AS_FOUND: bool = ${orderAsFound};
var<workgroup> finalInfo: vec3<u32>;
var<workgroup> finalFound: vec3<u32>;
var<workgroup> finalAppended: atomic<u32>;
var<workgroup> finalTied: atomic<u32>;
fn finalizeSegment(s: Segment, segment: u32, state: u32, lid: u32) {
  let p = PASSES - 1u;
  if (lid == 0u) {
    let written = pickRuns(atomicLoad(&temp[state + STATE_MODE]), atomicLoad(&temp[state + STATE_COLLECTED]), s) && pickWritesOutputs(s.size);
    finalInfo = vec3<u32>(selectedBefore(state, p), atomicLoad(&temp[state + STATE_KEPT + p - 1u]), select(0u, 1u, written));
    atomicStore(&finalAppended, 0u);
    atomicStore(&finalTied, 0u);
  }
  let info = workgroupUniformLoad(&finalInfo);
  if (info.z == 1u) { return; }
  let selected = u.selectedAt + segment * u.kMax;
  var count = min(info.x, s.take);
  if (compactedTake(s.take) && count >= s.take) {
    // The filters selected the whole take, and the one that ended it wrote the selection's least
    // key for the compaction launches (radix-filter.ts).
    return;
  }
  if (count < s.take) {
    // The last digit: above its bucket selected, in it tied (one ordered key).
    let remaining = s.take - count;
    let available = min(info.y, s.size);
    loadHistogram(histogramOf(segment, p), lid);
    let last = chooseDigit(BINS, remaining, lid);
    let takeBucket = last.y + last.z == remaining;
    let source = bufferAt(p & 1u) + s.start;
    let candidates = bufferAt((p + 1u) & 1u) + s.start;
    if (compactedTake(s.take)) {
      // The compaction launches write the selection in index order (radix-plan.ts): the threshold
      // (the candidates' digits above the last, which they share, then the last's bucket) and the
      // keys equal to it that are taken.
      if (lid == 0u) {
        atomicStore(&temp[state + STATE_COMPACT_T], candidatesPrefix(s, p) | last.x);
        atomicStore(&temp[state + STATE_COMPACT_TIES], remaining - last.y);
        atomicStore(&temp[state + STATE_COMPACT], 1u);
      }
      return;
    }
    for (var c = lid; c < available; c += WG) {
      let index = atomicLoad(&temp[source + c]);
      let digit = digitOf(orderedKey(keysIn[s.start + index], s.direction), p);
      if (digit > last.x || (digit == last.x && takeBucket)) {
        let at = count + atomicAdd(&finalAppended, 1u);
        if (at < u.kMax) { atomicStore(&temp[selected + at], index); }
      } else if (digit == last.x) {
        let at = atomicAdd(&finalTied, 1u);
        if (s.start + at < u.candidatesLen) { atomicStore(&temp[candidates + at], index); }
      }
    }
    workgroupBarrier();
    if (lid == 0u) { finalFound = vec3<u32>(atomicLoad(&finalAppended), atomicLoad(&finalTied), 0u); atomicStore(&finalAppended, 0u); }
    let found = workgroupUniformLoad(&finalFound);
    let chosenCount = min(count + found.x, s.take);
    let tiesFound = min(found.y, s.size);
    let ties = min(s.take - chosenCount, tiesFound);
    storageBarrier();
    if (ties == tiesFound || TIES_AS_FOUND) {
      for (var j = lid; j < ties; j += WG) { atomicStore(&temp[selected + chosenCount + j], atomicLoad(&temp[candidates + j])); }
    } else if (ties > 0u) {
      var prefix = 0u;
      var left = ties;
      var highest = 0xffffffffu;
      for (var digitPass = 0u; digitPass < 4u; digitPass++) {
        let shift = 24u - 8u * digitPass;
        let fixed = select(0xffffffffu << (shift + 8u), 0u, digitPass == 0u);
        clearHistogram(256u, lid);
        for (var c = lid; c < tiesFound; c += WG) {
          let index = atomicLoad(&temp[candidates + c]);
          if ((index & fixed) == prefix) { atomicAdd(&localHistogram[255u - ((index >> shift) & 255u)], 1u); }
        }
        workgroupBarrier();
        // Bins hold 255 - digit: the best bin is the smallest index digit.
        let c = chooseDigit(256u, left, lid);
        prefix = prefix | ((255u - c.x) << shift);
        left = left - c.y;
        highest = prefix | ((1u << shift) - 1u);
        if (c.z == left) { break; }
      }
      for (var c = lid; c < tiesFound; c += WG) {
        let index = atomicLoad(&temp[candidates + c]);
        if (index <= highest) {
          let at = chosenCount + atomicAdd(&finalAppended, 1u);
          if (at < u.kMax) { atomicStore(&temp[selected + at], index); }
        }
      }
    }
    count = chosenCount + ties;
  }
  storageBarrier();
  let out = segment * u.kMax;
  if (count <= TILE && !ORDER_AS_FOUND) {
    sortIndices(selected, count, s.start, s.direction, lid);
    for (var j = lid; j < u.kMax; j += WG) {
      if (j < count) { writeResult(out + j, s.start, order[sortSlot(j)]); } else { writeFill(out + j, s.direction); }
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
  }
}`;
}

/**
 * The radix-finalize program; `relaxed` says what the requirements let it skip (plan.ts), `shortcut`
 * how filter pass 0 picks among few candidates (which decides whether it wrote the outputs).
 */
export function radixFinalizeProgram(facts: TopKKernelFacts, name: string, relaxed: { tiesAsFound: boolean; orderAsFound: boolean }, shortcut: 'select' | 'sort'): WebGpuProgram {
  const declarations = `
const TIES_AS_FOUND: bool = ${relaxed.tiesAsFound};
${finalizeSegmentWgsl(facts, shortcut, relaxed.orderAsFound)}`;
  const main = `
  let segment = workgroupIndex;${enterRadixSegment('segment')}
  finalizeSegment(s, segment, state, lid);`;
  return radixProgram(`radix-finalize|${JSON.stringify(relaxed)}|${shortcut}`, facts, name, { keys: true, outputs: true, readsPick: true }, declarations, main);
}
