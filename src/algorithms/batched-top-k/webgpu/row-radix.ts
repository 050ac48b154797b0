import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { bitonicSortWgsl, sortSlotsFor } from '../../../backends/webgpu/blocks.js';
import { radixPasses, rowRadixCandidateRoom } from '../policy.js';
import { type TopKKernelFacts, rowRadixBitonic } from './facts.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';
import { chooseDigitWgsl, scanDeclarationsWgsl, scanInMain } from './radix-common.js';

/*
 * 'row-radix' (grid maxSegments): one workgroup per segment does every digit pass of a radix select
 * over its row (the CPU twin: cpu/row-radix.ts), so nothing waits on another workgroup or launch;
 * the row is re-read, from cache, by each pass that needs it. Digits of BITS bits of the ordered key:
 *
 * - digit 0: the histogram of every key, in workgroup memory (keys read as aligned vec4 quads);
 * - digit 1: a second pass over the row compacts the keys of digit 0's threshold bucket (their
 *   ordered keys: which index a key has does not matter until the collect) into workgroup memory,
 *   or, past ROOM keys, into `rowCandidates` at the segment's start; with their digit-1 histogram;
 * - digit p >= 2: the histogram of the candidates that share the digits chosen so far.
 *
 * It ends as single-tile does: when a whole bucket is taken or after the last digit, with the bucket
 * [lo, hi] and `ties`; the selection is every key above hi plus the first `ties` keys within [lo, hi]
 * by index. A last pass over the row collects it in index order: invocation t owns 4 QUADS
 * consecutive keys of each chunk, a workgroup scan of its (above, within) counts gives each key its
 * slot. Sorted output (a selection of at most TILE keys) is gathered in workgroup memory and put in
 * order by a bitonic sort; otherwise the selection goes straight to the outputs, in index order (a
 * sorted selection past the tile is then sorted after, plan.ts).
 *
 * Workgroup memory: 2 TILE words (the candidates, then the selection's keys and indices), the
 * histogram, the scan: within radix-select's (policy.ts radixWorkgroupBytes).
 */

/**
 * Quads (4 keys) each invocation loads per trip over the row, all before any is used: a workgroup
 * reads its row alone, so its loads in flight set its speed (256 invocations of 4 quads: 16 KiB in
 * flight, about 8 GB/s per row on an H200; 1024 of 8: 128 KiB). At most 8: the collect packs two
 * counts of up to 32 keys an invocation, for 1024 invocations, into 16-bit halves.
 */
const quadsPerTrip = 8;

const quadNumbers = Array.from({ length: quadsPerTrip }, (_, r) => r);
/**
 * WGSL: loads a trip's quads into registers k0..k7 (zero past the row), quad r at `at(r)`, all
 * requested before any is used. Written out, as is every loop over a trip's keys (`eachKey`): a
 * private array indexed in a loop may live in slow per-invocation memory.
 */
const loadQuads = (at: (r: number) => string): string =>
  quadNumbers.map((r) => `    let q${r} = ${at(r)};\n    var k${r} = vec4<u32>();\n    if (q${r} <= lastQuad) { k${r} = keysIn4[q${r}]; }`).join('\n');
/**
 * WGSL: `body` for each key of the trip's quads within [a, b): `raw` its bits, `i` its index in keysIn.
 * A quad's four keys in a loop (a vector's components, not an array's elements): a quarter of the code
 * of writing all of them out, as fast on an H200, and less for a software adapter to compile.
 */
const eachKey = (body: string): string =>
  quadNumbers
    .map((r) => `    if (q${r} <= lastQuad) {\n      for (var lane = 0u; lane < 4u; lane++) { let i = q${r} * 4u + lane; if (i >= a && i < b) { let raw = k${r}[lane]; ${body} } }\n    }`)
    .join('\n');

/** The row-radix program. */
export function rowRadixProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const shape: KernelShape = { keys: true, keys4: true, outputs: true, temp: 'u32', branch: 'radix' };
  const bits = facts.radixBits;
  const bins = 2 ** bits;
  const tile = facts.tileItems;
  const room = rowRadixCandidateRoom(facts);
  // Its own workgroup size (policy.rowRadixWorkgroupSize), not the other kernels'.
  const wg = facts.rowRadixWorkgroupSize;
  if (wg * quadsPerTrip * 4 > 65535) throw new Error(`internal: row-radix's collect packs counts of ${wg * quadsPerTrip * 4} keys into 16 bits`);
  const declarations = `
const TILE: u32 = ${tile}u;
const SORT_SLOTS: u32 = ${sortSlotsFor(tile)}u;
const ROOM: u32 = ${room}u;
const RADIX_TILE: u32 = ${facts.radixTileItems}u;
const BITS: u32 = ${bits}u;
const BINS: u32 = ${bins}u;
const PASSES: u32 = ${radixPasses(bits)}u;
const QUADS: u32 = ${quadsPerTrip}u;
const SORTED: bool = ${facts.sorted};
var<workgroup> localHistogram: array<atomic<u32>, ${Math.max(256, bins)}>;
var<workgroup> scan: array<u32, ${wg}>;
var<workgroup> chosenDigit: vec3<u32>;
var<workgroup> pool: array<u32, ${Math.max(room, 2 * sortSlotsFor(tile))}>;
var<workgroup> poolCount: atomic<u32>;
${scanDeclarationsWgsl(facts, wg)}
${chooseDigitWgsl(Math.max(256, bins), wg)}
fn digitShift(p: u32) -> u32 { let used = BITS * (p + 1u); return select(32u - used, 0u, used >= 32u); }
fn digitMask(p: u32) -> u32 { return (1u << (32u - BITS * p - digitShift(p))) - 1u; }
fn clearHistogram(lid: u32) {
  for (var d = lid; d < BINS; d += WG) { atomicStore(&localHistogram[d], 0u); }
  workgroupBarrier();
}
// The selection's entries for the sort: keys in pool[0, SORT_SLOTS), their indices in pool[SORT_SLOTS, 2 SORT_SLOTS).
fn sortLoad(i: u32) -> vec2<u32> { let at = sortSlot(i); return vec2<u32>(pool[at], pool[SORT_SLOTS + at]); }
fn sortStore(i: u32, entry: vec2<u32>) { let at = sortSlot(i); pool[at] = entry.x; pool[SORT_SLOTS + at] = entry.y; }
${bitonicSortWgsl(rowRadixBitonic)}`;
  const main = `
  let segment = workgroupIndex;
  let s = enterSegment(segment, mulSat(u.tiles, RADIX_TILE), lid);
  if (s.go == 0u) { return; }
  let out = segment * u.kMax;
  let take = s.take;
  if (take == 0u) {
    for (var j = lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }
    return;
  }
  // Aligned quads covering keys [a, b) of keysIn; elements outside [a, b) are skipped.
  let a = s.start;
  let b = s.start + s.size;
  let firstQuad = a >> 2u;
  let lastQuad = (b - 1u) >> 2u;
  let shift0 = digitShift(0u);

  // Digit 0: the histogram of every key.
  clearHistogram(lid);
  for (var trip = firstQuad; trip <= lastQuad; trip += WG * QUADS) {
${loadQuads((r) => `trip + ${r}u * WG + lid`)}
${eachKey('atomicAdd(&localHistogram[orderedKey(raw, s.direction) >> shift0], 1u);')}
  }
  workgroupBarrier();

  var remaining = take;
  var prefix = 0u;
  var lo = 0u;
  var hi = 0u;
  var ties = 0u;
  var candidates = 0u;
  var inTemp = false;
  let tempAt = u.rowCandidatesAt + s.start;
  for (var p = 0u; p < PASSES; p++) {
    let shift = digitShift(p);
    if (p >= 2u) {
      // The candidates that share the digits chosen so far, by digit p.
      clearHistogram(lid);
      let fixed = 0xffffffffu << (32u - BITS * p);
      let mask = digitMask(p);
      for (var c = lid; c < candidates; c += WG) {
        var key = 0u;
        if (inTemp) { key = temp[tempAt + c]; } else { key = pool[c]; }
        if ((key & fixed) == prefix) { atomicAdd(&localHistogram[(key >> shift) & mask], 1u); }
      }
      workgroupBarrier();
    }
    let chosen = chooseDigit(BINS, remaining, lid);
    prefix = prefix | (chosen.x << shift);
    remaining = remaining - chosen.y;
    if (chosen.z == remaining || p == PASSES - 1u) {
      lo = prefix;
      hi = prefix | ((1u << shift) - 1u);
      ties = remaining;
      break;
    }
    if (p == 0u) {
      // Digit 1: the bucket's keys compacted as candidates, with their digit-1 histogram.
      inTemp = chosen.z > ROOM;
      if (lid == 0u) { atomicStore(&poolCount, 0u); }
      clearHistogram(lid);
      let nextShift = digitShift(1u);
      let nextMask = digitMask(1u);
      for (var trip = firstQuad; trip <= lastQuad; trip += WG * QUADS) {
${loadQuads((r) => `trip + ${r}u * WG + lid`)}
        // Count this trip's bucket keys (and their digit-1 histogram), reserve their places, write them.
        var n = 0u;
${eachKey('let key = orderedKey(raw, s.direction); if ((key >> shift) == chosen.x) { n += 1u; atomicAdd(&localHistogram[(key >> nextShift) & nextMask], 1u); }')}
        if (n > 0u) {
          var at = atomicAdd(&poolCount, n);
${eachKey('let key = orderedKey(raw, s.direction); if ((key >> shift) == chosen.x) { if (!inTemp) { pool[at] = key; } else if (s.start + at < u.rowCandidatesLen) { temp[tempAt + at] = key; } at += 1u; }')}
        }
      }
      candidates = min(chosen.z, select(ROOM, u.rowCandidatesLen - min(u.rowCandidatesLen, s.start), inTemp));
      storageBarrier();
      workgroupBarrier();
    }
  }

  // The selection in index order: keys above hi, and the first \`ties\` keys within [lo, hi].
  // Invocation t owns QUADS consecutive aligned quads of each chunk of WG * QUADS.
  let gather = SORTED && take <= TILE;
  var aboveSoFar = 0u;
  var withinSoFar = 0u;
  for (var trip = firstQuad; trip <= lastQuad; trip += WG * QUADS) {
${loadQuads((r) => `trip + lid * QUADS + ${r}u`)}
    var above = 0u;
    var within = 0u;
${eachKey('let key = orderedKey(raw, s.direction); if (key > hi) { above += 1u; } else if (key >= lo) { within += 1u; }')}
    let packed = (above << 16u) | within;
    let before = inclusiveScan(packed, lid) - packed;
    let total = workgroupUniformLoad(&scan[WG - 1u]);
    var aboveBefore = aboveSoFar + (before >> 16u);
    var withinBefore = withinSoFar + (before & 0xffffu);
    if (above + within > 0u) {
${eachKey(`let key = orderedKey(raw, s.direction);
        var slot = SENTINEL;
        if (key > hi) {
          slot = aboveBefore + min(withinBefore, ties);
          aboveBefore += 1u;
        } else if (key >= lo) {
          if (withinBefore < ties) { slot = aboveBefore + withinBefore; }
          withinBefore += 1u;
        }
        if (slot != SENTINEL && slot < take) {
          if (gather) { sortStore(slot, vec2<u32>(key, i - s.start)); } else { writeResult(out + slot, s.start, i - s.start); }
        }`)}
    }
    aboveSoFar += total >> 16u;
    withinSoFar += total & 0xffffu;
    workgroupBarrier();
    if (aboveSoFar + min(withinSoFar, ties) >= take) { break; }
  }
  if (gather) {
    let padded = nextPowerOfTwo(take);
    for (var j = take + lid; j < padded; j += WG) {
      sortStore(j, vec2<u32>(0u, SENTINEL));
    }
    workgroupBarrier();
    bitonicSort(take, lid);
    for (var j = lid; j < take; j += WG) { writeResult(out + j, s.start, sortLoad(j).y); }
  }
  for (var j = take + lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }`;
  return {
    name,
    cacheKey: `row-radix|${JSON.stringify(facts)}`,
    workgroupSize: wg,
    uniforms: [...kernelUniforms(facts, shape), 'tiles', 'rowCandidatesAt', 'rowCandidatesLen'],
    bindings: kernelBindings(facts, shape),
    preamble: topKPreamble(facts, shape),
    declarations,
    ...scanInMain(facts, main),
  };
}
