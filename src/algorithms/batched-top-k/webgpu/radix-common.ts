import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { radixPasses, radixState, radixStateWords } from '../policy.js';
import { type TopKKernelFacts, bitonicOf, rankSortOf } from './facts.js';
import { bitonicSortWgsl, inclusiveScanWgsl, rankSortWgsl, scanLaneWgsl, sortSlotsFor } from '../../../backends/webgpu/blocks.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * What the radix-select kernels share (radix-plan.ts lists them): temporary storage bound as atomic
 * words, the slots' word offsets as uniforms, the segment entry on the radix side of the device-side
 * single-tile branch, digits of BITS bits from the top (the last one narrower), and the choice of a
 * digit's threshold bucket from a histogram in workgroup memory. State words per segment
 * (problem.ts): [0 mode, 1 threshold T, 2 keys that reached T, 3 pass-0 workgroups done, 4 last
 * filter workgroups done (where that launch finalizes), 8 + p selected by digit p, 16 + p candidates
 * kept by digit p].
 */

/** Uniforms of every radix kernel beyond the shared ones. */
const radixUniforms = ['tiles', 'filterTiles', 'histogramTiles', 'launchPass', 'segmentStateAt', 'histogramAt', 'selectedAt', 'candidates0At', 'candidates1At', 'candidatesLen'];

/**
 * WGSL: `chooseDigit(bins, remaining, lid)` over the kernel's `localHistogram` (atomic words, at
 * least `histogramWords`), `chosenDigit` (vec3<u32>) and an `inclusiveScan`, for a workgroup of
 * `workgroupSize`; shared by the radix-select and row-radix kernels. Each invocation's run of digits
 * is read into named registers, every load issued before any is added, and the crossing is found
 * among them: a loop over the run waited out a workgroup-memory round trip per digit, twice. On an
 * H200 (GPU ms, 2026-11-29, two rounds): a choice took about 2.5 us (radix-init of 1x16M k=100,
 * which makes two, 0.0180 with them and 0.0128 without); attention 512x(16..8192) k=256 (row-radix)
 * 0.109 -> 0.107, 32x131072 k=2048 unsorted 0.0765 -> 0.0745.
 */
export function chooseDigitWgsl(histogramWords: number, workgroupSize: number): string {
  const per = Math.ceil(histogramWords / workgroupSize);
  const run = Array.from({ length: per }, (_, j) => j);
  // Digit hi - 1 - j of the run in c{j}: the best first.
  return `// The digit whose bucket holds the remaining-th best of the counts in localHistogram (digits
// [0, bins), best = highest): (digit, items in higher digits, items in its bucket). Fewer items
// than remaining (only inconsistent input under 'trust'): (0, 0, remaining), every item taken.
// Invocation t sums digits [bins - (t + 1) per, bins - t per); one scan finds the crossing.
fn chooseDigit(bins: u32, remaining: u32, lid: u32) -> vec3<u32> {
  let per = (bins + WG - 1u) / WG;
  let hi = bins - min(bins, lid * per);
  let lo = bins - min(bins, lid * per + per);
${run.map((j) => `  var c${j} = 0u;\n  if (lo + ${j}u < hi) { c${j} = atomicLoad(&localHistogram[hi - ${j + 1}u]); }`).join('\n')}
  let sum = ${run.map((j) => `c${j}`).join(' + ')};
  let atOrAbove = inclusiveScan(sum, lid);
  let above = atOrAbove - sum;
  if (above < remaining && remaining <= atOrAbove) {
    var acc = above;
    var found = false;
${run.map((j) => `    if (!found && acc + c${j} >= remaining) {
      chosenDigit = vec3<u32>(hi - ${j + 1}u, acc, c${j});
      found = true;
    }
    acc += c${j};`).join('\n')}
  }
  if (lid == WG - 1u && atOrAbove < remaining) { chosenDigit = vec3<u32>(0u, 0u, remaining); }
  return workgroupUniformLoad(&chosenDigit);
}`;
}

/**
 * WGSL body of `loadHistogram(at, lid)`: a segment's `bins` counts from temporary storage into
 * localHistogram, every invocation's loads issued (into named registers) before any is stored. Temp is
 * bound as atomic words, and a loop of an atomic load then a workgroup store waited out a memory round
 * trip per count (eight a kernel with 11-bit digits and workgroups of 256). H200, GPU ms of the call
 * (2026-11-29, two rounds; loop / registers): 1x16M k=100 0.1094-0.111 / 0.1031-0.1043 (its two
 * filters 0.029 -> 0.024, finalize 0.0185 -> 0.0177); the shapes whose filter pass 0 picks among few
 * candidates unchanged (64x151936 k=50 0.068-0.070 / 0.068-0.069, 256x262144 k=256 0.160).
 */
function loadHistogramWgsl(bins: number, workgroupSize: number): string {
  const run = Array.from({ length: Math.ceil(bins / workgroupSize) }, (_, j) => j);
  const full = bins % workgroupSize === 0;
  const at = (j: number) => `${j * workgroupSize}u + lid`;
  return [
    ...run.map((j) => (full ? `  let c${j} = atomicLoad(&temp[at + ${at(j)}]);` : `  var c${j} = 0u;\n  if (${at(j)} < BINS) { c${j} = atomicLoad(&temp[at + ${at(j)}]); }`)),
    ...run.map((j) => (full ? `  atomicStore(&localHistogram[${at(j)}], c${j});` : `  if (${at(j)} < BINS) { atomicStore(&localHistogram[${at(j)}], c${j}); }`)),
  ].join('\n');
}

/**
 * A radix kernel's program from its parts. `io.readsPick`: the kernel's WGSL depends on
 * `facts.radixPick` (init, filter pass 0, finalize); the other kernels' pipelines serve plans with
 * and without the pick, so the pick's facts stay out of their keys, all but whether pass 0 writes
 * the candidates' keys beside them for the spread pick ({@link spreadPickOf}).
 */
export function radixProgram(
  kernel: string,
  facts: TopKKernelFacts,
  name: string,
  io: { keys: boolean; keys4?: boolean; outputs: boolean; readsPick?: boolean },
  declarations: string,
  main: string,
): WebGpuProgram {
  const { readsPick = false, ...access } = io;
  const shape: KernelShape = { ...access, temp: 'atomic', branch: 'radix' };
  const bits = facts.radixBits;
  const bins = 2 ** bits;
  return {
    name,
    cacheKey: `${kernel}|${JSON.stringify(readsPick ? facts : { ...facts, radixPick: false, radixPickSpread: 0, keysBeside: spreadPickOf(facts) !== undefined })}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), ...radixUniforms],
    bindings: kernelBindings(facts, shape),
    preamble: topKPreamble(facts, shape),
    declarations: `const RADIX_TILE: u32 = ${facts.radixTileItems}u;
const TILE: u32 = ${facts.tileItems}u;
const BITS: u32 = ${bits}u;
const BINS: u32 = ${bins}u;
const PASSES: u32 = ${radixPasses(bits)}u;
const STATE_WORDS: u32 = ${radixStateWords}u;
const STATE_MODE: u32 = ${radixState.mode}u;
const STATE_THRESHOLD: u32 = ${radixState.threshold}u;
const STATE_COLLECTED: u32 = ${radixState.collected}u;
const STATE_ARRIVED: u32 = ${radixState.arrived}u;
const STATE_SELECTED: u32 = ${radixState.selectedByPass}u;
const STATE_KEPT: u32 = ${radixState.keptByPass}u;
const STATE_FILTER_ARRIVED: u32 = ${radixState.filterArrived}u;
const STATE_COMPACT: u32 = ${radixState.compactPending}u;
const STATE_COMPACT_T: u32 = ${radixState.compactThreshold}u;
const STATE_COMPACT_TIES: u32 = ${radixState.compactTies}u;
var<workgroup> localHistogram: array<atomic<u32>, ${Math.max(256, bins)}>;
var<workgroup> scan: array<u32, ${facts.workgroupSize}>;
var<workgroup> chosenDigit: vec3<u32>;
${scanDeclarationsWgsl(facts, facts.workgroupSize)}
fn digitShift(p: u32) -> u32 { let used = BITS * (p + 1u); return select(32u - used, 0u, used >= 32u); }
// Digit p of an ordered key: BITS bits from the top, the last digit what is left.
fn digitOf(key: u32, p: u32) -> u32 {
  let shift = digitShift(p);
  return (key >> shift) & ((1u << (32u - BITS * p - shift)) - 1u);
}
fn histogramOf(segment: u32, p: u32) -> u32 { return u.histogramAt + (segment * PASSES + p) * BINS; }
fn bufferAt(b: u32) -> u32 { return select(u.candidates0At, u.candidates1At, b == 1u); }
// A take past the tile that the compaction launches write (radix-plan.ts radixCompacts): the filters
// only count its selected keys, and its threshold or least key goes to the state words.
const COMPACTS: bool = ${facts.radixCompacts};
fn compactedTake(take: u32) -> bool { return COMPACTS && take > TILE; }
// The digits before digit p (p > 0) that every candidate in buffer p & 1 shares, the rest zero.
fn candidatesPrefix(s: Segment, p: u32) -> u32 {
  let key = orderedKey(keysIn[s.start + atomicLoad(&temp[bufferAt(p & 1u) + s.start])], s.direction);
  return key & ~((1u << (32u - BITS * p)) - 1u);
}
// Items the filters of digits < p selected.
fn selectedBefore(state: u32, p: u32) -> u32 {
  var sum = 0u;
  for (var q = 0u; q < p; q++) { sum += atomicLoad(&temp[state + STATE_SELECTED + q]); }
  return sum;
}
fn loadHistogram(at: u32, lid: u32) {
${loadHistogramWgsl(bins, facts.workgroupSize)}
  workgroupBarrier();
}
fn clearHistogram(bins: u32, lid: u32) {
  for (var d = lid; d < bins; d += WG) { atomicStore(&localHistogram[d], 0u); }
  workgroupBarrier();
}
// Adds the workgroup's counts to a segment's histogram (after a barrier).
fn flushHistogram(at: u32, lid: u32) {
  for (var d = lid; d < BINS; d += WG) {
    let c = atomicLoad(&localHistogram[d]);
    if (c != 0u) { atomicAdd(&temp[at + d], c); }
  }
}
${chooseDigitWgsl(Math.max(256, bins), facts.workgroupSize)}
${declarations}`,
    ...scanInMain(facts, main),
  };
}

/**
 * WGSL: the kernel's `inclusiveScan` over its `scan` array, within subgroups where the facts give
 * their width (`scanSubgroupWidth`), with the lane word it reads.
 */
export function scanDeclarationsWgsl(facts: Pick<TopKKernelFacts, 'scanSubgroupWidth'>, workgroupSize: number): string {
  const width = facts.scanSubgroupWidth;
  return width === undefined ? inclusiveScanWgsl() : `${scanLaneWgsl.declaration}\n${inclusiveScanWgsl('inclusiveScan', 'a + b', { subgroupWidth: width, workgroupSize })}`;
}

/** A kernel's `main` (and whether it enables subgroups) with the scan's lane set first, where its scan runs within subgroups. */
export function scanInMain(facts: Pick<TopKKernelFacts, 'scanSubgroupWidth'>, main: string): { main: string; usesSubgroups?: true } {
  return facts.scanSubgroupWidth === undefined ? { main } : { main: `${scanLaneWgsl.set}\n${main}`, usesSubgroups: true };
}

/**
 * WGSL of the radix kernels that sort a selection in workgroup memory (finalize; filter pass 0 over
 * few candidates): `sortKeys` and `order` of `tileItems` words, the bitonic sort,
 * `loadEntries(at, count, padded, start, direction, lid)`, which loads `count` item indices from temp
 * words [at, at + count) with their ordered keys (`withKeys`; else keys 0) and pads entries
 * [count, padded) to rank last, and `sortIndices(at, count, start, direction, lid)`, which loads them
 * padded to a power of two and sorts them; with `keysBeside`, also `loadEntriesBeside(at, keysAt,
 * count, padded, lid)`, which takes the ordered keys from temp words beside the indices (the spread
 * pick's). The kernel defines `sortLoad`/`sortStore` (how entries compare: by key, or by index
 * alone, where `withKeys` can be false).
 *
 * The loads come in rounds of LOAD_BATCH per invocation, every index of a round requested before any
 * key it names: one workgroup sorts its segment's selection alone, and a load at a time (an index,
 * then its key) left it waiting on two memory round trips per entry. A selection already in order
 * (filter pass 0's own, in rank order when sorted or index order when not, as finalize then finds it)
 * skips the sort: the CPU twin's `inRankOrder` and `ensureAscending`.
 */
export function selectionSortWgsl(facts: TopKKernelFacts, withKeys = true, keysBeside = false): string {
  return `var<workgroup> sortKeys: array<u32, ${sortSlotsFor(facts.tileItems)}>;
var<workgroup> order: array<u32, ${sortSlotsFor(facts.tileItems)}>;
var<workgroup> outOfOrder: atomic<u32>;
var<workgroup> sortNeeded: u32;
const LOAD_BATCH: u32 = 8u;
${bitonicSortWgsl(bitonicOf(facts))}
${rankSortWgsl(rankSortOf(facts))}
${loadEntriesWgsl(withKeys ? 'gather' : 'none')}
${keysBeside ? loadEntriesWgsl('beside') : ''}
fn sortIndices(at: u32, count: u32, start: u32, direction: u32, lid: u32) {
  if (lid == 0u) { atomicStore(&outOfOrder, 0u); }
  loadEntries(at, count, nextPowerOfTwo(count), start, direction, lid);
  var inOrder = true;
  for (var j = lid + 1u; j < count; j += WG) { inOrder = inOrder && !sortBefore(sortLoad(j), sortLoad(j - 1u)); }
  if (!inOrder) { atomicStore(&outOfOrder, 1u); }
  workgroupBarrier();
  if (lid == 0u) { sortNeeded = atomicLoad(&outOfOrder); }
  if (workgroupUniformLoad(&sortNeeded) != 0u) { rankSort(count, lid); }
}`;
}

/**
 * The fewest invocations that count one candidate's better candidates in filter pass 0's spread
 * pick (policy \`radixPickSpread\`, at least WG / 256 so that a workgroup's ranks fit the histogram's
 * words), or undefined where the plan builds no spread pick: no pick, unsorted output, or a value
 * past the workgroup. Where it is built, pass 0 writes each candidate's ordered key beside its index
 * (candidates1, free until filter pass 0 keeps digit 1's candidates there), so that the spread pick's
 * workgroups load both in one round instead of gathering every key from the segment.
 */
export function spreadPickOf(facts: Pick<TopKKernelFacts, 'radixPick' | 'sorted' | 'radixPickSpread' | 'workgroupSize'>): number | undefined {
  const spread = Math.max(facts.radixPickSpread, Math.ceil(facts.workgroupSize / 256));
  return facts.radixPick && facts.sorted && spread <= facts.workgroupSize ? spread : undefined;
}

/**
 * WGSL of \`loadEntries\` (\`keys\` 'gather': each entry's ordered key read from the keys by its
 * index, after the round's indices; 'none': keys 0) or \`loadEntriesBeside\` ('beside': the ordered
 * keys at temp words [keysAt, keysAt + count), loaded with the indices). One round of
 * LOAD_BATCH entries an invocation: every load of a round issued before any is stored.
 */
function loadEntriesWgsl(keys: 'gather' | 'none' | 'beside'): string {
  const beside = keys === 'beside';
  const key = keys === 'gather' ? 'if (j < count) { key = orderedKey(keysIn[start + indices[r]], direction); }' : keys === 'beside' ? 'if (j < count) { key = besideKeys[r]; }' : '// Compared by index alone: no key is read.';
  return `fn ${beside ? 'loadEntriesBeside(at: u32, keysAt: u32, count: u32, padded: u32' : 'loadEntries(at: u32, count: u32, padded: u32, start: u32, direction: u32'}, lid: u32) {
  for (var base = 0u; base < padded; base += WG * LOAD_BATCH) {
    var indices: array<u32, LOAD_BATCH>;${beside ? '\n    var besideKeys: array<u32, LOAD_BATCH>;' : ''}
    for (var r = 0u; r < LOAD_BATCH; r++) {
      let j = base + r * WG + lid;
      indices[r] = SENTINEL;
      if (j < count) {
        indices[r] = atomicLoad(&temp[at + j]);${beside ? '\n        besideKeys[r] = atomicLoad(&temp[keysAt + j]);' : ''}
      }
    }
    for (var r = 0u; r < LOAD_BATCH; r++) {
      let j = base + r * WG + lid;
      if (j < padded) {
        order[sortSlot(j)] = indices[r];
        var key = 0u;
        ${key}
        sortKeys[sortSlot(j)] = key;
      }
    }
  }
  workgroupBarrier();
}`;
}

/** Enters segment `segment` (the grid covers tiles * radixTileItems keys per segment); `s` is the segment, `state` its state words. */
export const enterRadixSegment = (segment: string) => `
  let s = enterSegment(${segment}, mulSat(u.tiles, RADIX_TILE), lid);
  if (s.go == 0u) { return; }
  let state = u.segmentStateAt + (${segment}) * STATE_WORDS;`;
