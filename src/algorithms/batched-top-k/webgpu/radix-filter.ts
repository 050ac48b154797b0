import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { radixPasses } from '../policy.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram, selectionSortWgsl, spreadPickOf } from './radix-common.js';
import { finalizeSegmentWgsl } from './radix-finalize.js';

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
 * as found), where the plan builds the pick (`facts.radixPick`, policy.ts radixPickOf: by default
 * only where every segment samples a threshold): the segment's first workgroup picks the best take
 * (larger key, then smaller index) among them in workgroup memory and writes them as digit 0's
 * selection (the CPU twin's selectAmongCandidates); the later digits and finalize's choice find
 * nothing left to take. How (policy.ts radixCandidateShortcut):
 *
 * - 'sort': a bitonic sort of every candidate; the first take, in rank order.
 * - 'select': a radix select over the candidates' distances from the least of their ordered keys
 *   (a histogram of one digit per round with workgroup atomics, the threshold bucket from a scan;
 *   digits of at most BITS bits from the highest bit a distance reaches, so at most ceil(32 / BITS)
 *   rounds, each over the candidates with the distance's bits decided so far). Candidates that all
 *   reached a sampled threshold share the key's leading bits, and digits taken from the key's top
 *   spent rounds that split nothing: H200, unsorted output (GPU ms, 2026-11-30, three rounds each,
 *   BENCHMARKS.md session 30): 64x151936 k=50 0.0723-0.073 -> 0.0682-0.071, 256x262144 k=256
 *   0.1792-0.1799 -> 0.1741-0.1749, 64x65536 k=2048 0.058-0.0582 -> 0.056-0.0566, 32x131072 k=2048
 *   0.0564-0.057 -> 0.0554-0.0556. Then, where the take-th best key T is
 *   tied, the same over the indices of the candidates equal to T (8-bit digits from the top: the
 *   smallest win, finalize's rule). Selected: keys above T and the ties up to the last index taken,
 *   the very items the sort takes. Unsorted output writes them in index order, so finalize finds
 *   its order and skips its sort: a counting sort by index >> shift into at most INDEX_BUCKETS
 *   buckets of at most INDEX_BUCKET_MAX indices (segments of up to 262144 keys with 11-bit
 *   digits), then each item's rank among its bucket's few members; a longer segment's selection is
 *   written as found and finalize sorts it by index. Sorted output compacts the selection and sorts
 *   only it (take padded to a power of two, not the candidates), where that shrinks the sort.
 *
 * Where the pick's order is the output's (sorted, or unsorted through the select's index-order
 * write) and kMax fits the tile ({@link pickedOutputsWgsl}), the first workgroup also writes the
 * segment's outputs and fills, and finalize, which would read the selection and its keys again to
 * write the same, returns at once. On an H200 (GPU ms, 2026-11-29) finalize took 0.011 ms of such a
 * call and takes 0.0035-0.0045 now: 32x131072 k=2048 0.086 -> 0.082, 64x151936 k=50 0.075 -> 0.069,
 * 256x262144 k=256 0.167 -> 0.163.
 */

/**
 * Most indices of one bucket of the select's index-order write (its rank count reads every member).
 * 128 covers rows of up to 262144 keys with 11-bit digits, where 64 sent the vocabulary's and the
 * anchor's rows to finalize for a sort by index. H200, unsorted output (GPU ms, 2026-11-30, two
 * rounds; 64 / 128 / 256): 64x151936 k=50 0.0695-0.0707 / 0.0653-0.0656 / 0.0662, 256x262144 k=256
 * 0.1739-0.1754 / 0.161 / 0.1608-0.1618; the indexers and ragged rows (buckets within 64) the same.
 */
const indexBucketMax = 128;

/**
 * WGSL shared by filter pass 0 and finalize: `pickRuns(mode, collected, s)`, whether filter pass 0's
 * first workgroup picks the segment's selection among its candidates, from the segment's state words
 * mode and collected (sampled, with at least take and at most a tile of candidates, and ties not
 * taken as found), and `pickWritesOutputs(size)`, whether that pick also writes the
 * outputs: its order is the output's (sorted; unsorted where the select writes index order) and kMax
 * fits the tile (a selection sort past the tile reads `selected` after finalize). Needs the radix
 * constants and `TIES_AS_FOUND`. Where the plan builds no pick (`facts.radixPick` false), both are
 * false.
 */
export function pickedOutputsWgsl(facts: TopKKernelFacts, shortcut: 'select' | 'sort'): string {
  if (!facts.radixPick) {
    return `// Filter pass 0 carries no pick in this plan (facts.radixPick): no segment's selection is picked.
fn pickRuns(mode: u32, collected: u32, s: Segment) -> bool { return false; }
fn pickWritesOutputs(size: u32) -> bool { return false; }`;
  }
  // The pick's order is the output's when sorted, and unsorted only where the select writes index order.
  const order = facts.sorted ? 'true' : shortcut === 'select' ? '(1u << indexBucketShift(size)) <= INDEX_BUCKET_MAX' : 'false';
  return `const INDEX_BUCKETS: u32 = ${indexBucketsOf(facts)}u;
const INDEX_BUCKET_MAX: u32 = ${indexBucketMax}u;
// The least shift that puts a segment's indices into at most INDEX_BUCKETS buckets.
fn indexBucketShift(size: u32) -> u32 {
  var shift = 0u;
  while (shift < 31u && ((max(size, 1u) - 1u) >> shift) >= INDEX_BUCKETS) { shift++; }
  return shift;
}
fn pickRuns(mode: u32, collected: u32, s: Segment) -> bool {
  return !TIES_AS_FOUND && s.take > 0u && mode == 1u && collected >= s.take && min(collected, s.size) <= TILE;
}
fn pickWritesOutputs(size: u32) -> bool {
  return u.kMax <= TILE && ${order};
}`;
}

/** Buckets of the select's index-order write: one per histogram bin. */
const indexBucketsOf = (facts: TopKKernelFacts) => Math.max(256, 2 ** facts.radixBits);

/**
 * The radix-filter program. `tiesAsFound` (the requirements let tied items be taken as found) turns
 * off digit 0's shortcut, which takes ties by index; `shortcut` says how it picks (above). Where the
 * plan builds no pick (`facts.radixPick` false: policy.ts radixPickOf), the program has neither the
 * pick's code nor its workgroup memory (the sort's keys and indices, the select's counters), and
 * digit 0 filters sampled candidates as any digit does.
 */
export function radixFilterProgram(facts: TopKKernelFacts, name: string, tiesAsFound: boolean, shortcut: 'select' | 'sort', finalize?: { readonly orderAsFound: boolean }): WebGpuProgram {
  const finalizes = finalize !== undefined;
  if (finalizes && radixPasses(facts.radixBits) < 3) throw new Error('internal: the last filter finalizes only past digit 0 (policy.ts radixFoldsFinalize)');
  // The last filter of three digits or more never picks (only digit 0's does): its program has none
  // of the pick's code, which with finalize's made a program that Mesa's lavapipe took minutes to
  // compile. Finalize still reads whether digit 0's pick wrote the outputs (pickedOutputsWgsl, on
  // the plan's facts).
  const pickHere = facts.radixPick && !finalizes;
  const perInvocation = facts.radixTileItems / facts.workgroupSize;
  if (!Number.isInteger(perInvocation)) throw new Error(`internal: radixTileItems ${facts.radixTileItems} is not a multiple of the workgroup size`);
  const items = Array.from({ length: perInvocation }, (_, j) => j);
  // Tile t's items (t a workgroup-uniform variable): indices from the input list (or the keys' own
  // places in digit 0's pass over every key), then their keys.
  const loadTile = `  if (t * RADIX_TILE < count) {
    let begin = t * RADIX_TILE;
    let to = min(begin + RADIX_TILE, count);
${items.map((j) => `    index${j} = begin + ${j}u * WG + lid;\n    live${j} = index${j} < to;\n    if (live${j} && !fromKeys) { index${j} = atomicLoad(&temp[source + index${j}]); }`).join('\n')}
${items.map((j) => `    if (live${j}) { key${j} = keysIn[s.start + index${j}]; }`).join('\n')}
  }`;
  const declarations = `
const PER: u32 = ${perInvocation}u;
const KEPT: u32 = 0x80000000u;
const TIES_AS_FOUND: bool = ${tiesAsFound};
${pickHere ? pickDeclarationsWgsl(facts, shortcut) : ''}
${finalizes ? `var<workgroup> lastFilterToArrive: u32;\n${finalizeSegmentWgsl(facts, shortcut, finalize.orderAsFound)}` : ''}
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
    let mode = atomicLoad(&temp[state + STATE_MODE]);
    let collected = atomicLoad(&temp[state + STATE_COLLECTED]);
    let sampled = mode == 1u && collected >= s.take;
    var count = s.size;
    if (p > 0u) { count = atomicLoad(&temp[state + STATE_KEPT + p - 1u]); } else if (sampled) { count = collected; }
    // z: bit 0 digit 0 reads every key, bit 1 digit 0 picks among the candidates.
    filterInfo = vec3<u32>(min(count, s.size), selectedBefore(state, p), select(0u, 1u, p == 0u && !sampled)${pickHere ? ' | select(0u, 2u, p == 0u && pickRuns(mode, collected, s))' : ''});
  }
  let info = workgroupUniformLoad(&filterInfo);
  let count = info.x;
  let before = info.y;
${pickHere && spreadPickOf(facts) !== undefined ? spreadPickBranchWgsl : ''}  if (before >= s.take || w * RADIX_TILE >= count) {
    ${finalizes ? '// Workgroup 0 has no input only where no workgroup of the segment has: it finalizes.\n    return w == 0u;' : 'return;'}
  }
  let fromKeys = (info.z & 1u) != 0u;${pickHere ? pickBranchWgsl(shortcut) : ''}
  let source = bufferAt(p & 1u) + s.start;
  let next = bufferAt((p + 1u) & 1u) + s.start;
  let selected = u.selectedAt + segment * u.kMax;
  // Item j of the tile in named registers (live, index, key bits): the tile's index loads are all
  // issued, then its key loads, before any is used, and the first tile's before the histogram is
  // read, so the workgroup waits out two memory round trips a tile instead of two an item.
${items.map((j) => `  var live${j} = false;\n  var index${j} = 0u;\n  var key${j} = 0u;`).join('\n')}
  var t = w;
${loadTile}
  loadHistogram(histogramOf(segment, p), lid);
  let chosen = chooseDigit(BINS, s.take - before, lid);
  let threshold = chosen.x;
  let takeBucket = chosen.y + chosen.z == s.take - before;
  // Where the compaction launches write the selection, the selected items are only counted.
  let countsSelected = compactedTake(s.take);
  if (countsSelected && takeBucket && w == 0u && lid == 0u) {
    // The take ends with this digit's bucket: the selection is every key at or above the bucket's
    // least key (the digits before this one, which every candidate shares, then the bucket's, zeros
    // after), and at or above the sampled threshold where pass 0 read only the keys that reached
    // it. The compaction launches write it (radix-plan.ts); finalize has nothing to find.
    var least = threshold << digitShift(p);
    if (p > 0u) { least = least | candidatesPrefix(s, p); }
    if (atomicLoad(&temp[state + STATE_MODE]) == 1u && atomicLoad(&temp[state + STATE_COLLECTED]) >= s.take) { least = max(least, atomicLoad(&temp[state + STATE_THRESHOLD])); }
    atomicStore(&temp[state + STATE_COMPACT_T], least);
    atomicStore(&temp[state + STATE_COMPACT_TIES], 0xffffffffu);
    atomicStore(&temp[state + STATE_COMPACT], 1u);
  }
  clearHistogram(BINS, lid);
  loop {
    if (t * RADIX_TILE >= count) { break; }
    if (lid == 0u) {
      atomicStore(&selectedInTile, 0u);
      atomicStore(&keptInTile, 0u);
    }
    workgroupBarrier();
    var counted = 0u;
${items
  .map(
    (j) => `    var slot${j} = SENTINEL;
    if (live${j}) {
      let key = orderedKey(key${j}, s.direction);
      let digit = digitOf(key, p);
      if (digit > threshold || (digit == threshold && takeBucket)) {
        if (countsSelected) { counted += 1u; } else { slot${j} = atomicAdd(&selectedInTile, 1u); }
      } else if (digit == threshold) {
        slot${j} = atomicAdd(&keptInTile, 1u) | KEPT;
        atomicAdd(&localHistogram[digitOf(key, p + 1u)], 1u);
      }
    }`,
  )
  .join('\n')}
    if (counted != 0u) { atomicAdd(&selectedInTile, counted); }
    workgroupBarrier();
    if (lid == 0u) {
      bases = vec2<u32>(
        atomicAdd(&temp[state + STATE_SELECTED + p], atomicLoad(&selectedInTile)),
        atomicAdd(&temp[state + STATE_KEPT + p], atomicLoad(&keptInTile)),
      );
    }
    let base = workgroupUniformLoad(&bases);
${items
  .map(
    (j) => `    if (slot${j} != SENTINEL) {
      if ((slot${j} & KEPT) == 0u) {
        let at = before + base.x + slot${j};
        if (at < u.kMax) { atomicStore(&temp[selected + at], index${j}); }
      } else {
        let at = base.y + (slot${j} & ~KEPT);
        if (s.start + at < u.candidatesLen) { atomicStore(&temp[next + at], index${j}); }
      }
    }`,
  )
  .join('\n')}
    continuing {
      t += tiles;
${loadTile.replaceAll('\n  ', '\n      ').replace(/^  /, '      ')}
    }
  }
  workgroupBarrier();
  flushHistogram(histogramOf(segment, p + 1u), lid);${finalizes ? arrivalWgsl : ''}`;
  if (!finalizes) return radixProgram(`radix-filter|${tiesAsFound}|${shortcut}`, facts, name, { keys: true, outputs: true, readsPick: true }, declarations, main);
  // One call of finalizeSegment, in the entry point: the filter's body becomes a function that says
  // whether its workgroup finalizes (every early return says no). Called from each of the filter's
  // exits, finalize's code was inlined at each, and Mesa's lavapipe took ~240 s to compile the
  // program (127 s with one call, while the pick's code was in it too; under a second now).
  const filterFunction = `fn filterWorkgroup(workgroupIndex: u32, lid: u32) -> bool {${main.replaceAll('return;', 'return false;')}
}`;
  const entry = `
  if (!filterWorkgroup(workgroupIndex, lid)) { return; }
  let segment = workgroupIndex / u.filterTiles;${enterRadixSegment('segment')}
  storageBarrier();
  finalizeSegment(s, segment, state, lid);`;
  return radixProgram(`radix-filter-finalize|${tiesAsFound}|${finalize.orderAsFound}|${shortcut}`, facts, name, { keys: true, outputs: true, readsPick: true }, `${declarations}
${filterFunction}`, entry);
}

/**
 * Where the last filter launch finalizes: every workgroup with input counts its arrival once its
 * stores and histogram adds are issued (after a storage barrier), and the segment's last to arrive
 * does finalize's work (radix-finalize.ts `finalizeSegment`). No workgroup waits for another.
 */
const arrivalWgsl = `
  storageBarrier();
  if (lid == 0u) {
    let participants = min(tiles, (count + RADIX_TILE - 1u) / RADIX_TILE);
    lastFilterToArrive = select(0u, 1u, atomicAdd(&temp[state + STATE_FILTER_ARRIVED], 1u) + 1u == participants);
  }
  return workgroupUniformLoad(&lastFilterToArrive) == 1u;`;


/**
 * WGSL declarations of filter pass 0's pick (only where the plan builds it): the workgroup sort's
 * memory and functions, `pickRuns` and `pickWritesOutputs`, and the select's functions.
 */
function pickDeclarationsWgsl(facts: TopKKernelFacts, shortcut: 'select' | 'sort'): string {
  const spread = spreadPickOf(facts);
  return `const SORTED: bool = ${facts.sorted};
fn sortLoad(i: u32) -> vec2<u32> { let at = sortSlot(i); return vec2<u32>(sortKeys[at], order[at]); }
fn sortStore(i: u32, entry: vec2<u32>) { let at = sortSlot(i); sortKeys[at] = entry.x; order[at] = entry.y; }
${selectionSortWgsl(facts, true, spread !== undefined)}
${pickedOutputsWgsl(facts, shortcut)}
${shortcut === 'select' ? candidateSelectWgsl(Math.ceil(facts.tileItems / facts.workgroupSize)) : ''}
${spread === undefined ? '' : spreadPickWgsl(spread)}`;
}

/** WGSL of where a pick writes segment \`segment\`'s selection (temp words) and outputs, and whether it writes the outputs. */
const pickTargetsWgsl = `let selected = u.selectedAt + segment * u.kMax;
    let out = segment * u.kMax;
    let direct = pickWritesOutputs(s.size);`;

/** WGSL of the pick's end, by the segment's first workgroup: the outputs' fills, and digit 0's selection marked full. */
const pickFinishedWgsl = `if (direct) {
        for (var j = s.take + lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }
      }
      if (lid == 0u) { atomicStore(&temp[state + STATE_SELECTED], s.take); }`;

/**
 * WGSL of filter pass 0's branch into the spread pick (sorted output; before the workgroups without
 * input return, for every workgroup of the segment takes part): where the segment's filter
 * workgroups are enough to split each candidate's count of better candidates PICK_SPREAD ways.
 */
const spreadPickBranchWgsl = `
  if ((info.z & 2u) != 0u && spreadPickRuns(count, u.filterTiles)) {
    ${pickTargetsWgsl}
    spreadPick(bufferAt(0u) + s.start, bufferAt(1u) + s.start, count, s.take, w, u.filterTiles, s.start, selected, direct, out, lid);
    if (w == 0u) {
      ${pickFinishedWgsl}
    }
    return;
  }
`;

/**
 * WGSL of the spread pick (sorted output): the candidates' ranks counted by every filter workgroup
 * of the segment at once, where the first workgroup alone would select and sort them. Each workgroup
 * loads every candidate (its index, and its ordered key from beside it: pass 0 wrote both,
 * radix-common.ts spreadPickOf) and ranks \`group\` of them, each by \`share\` invocations that
 * count the candidates before it (larger key, then smaller index: \`sortBefore\`), so a
 * candidate's rank is its place in the sorted order; a rank below the take is written there. A
 * segment's few candidates (filter pass 0's pick holds at most a tile) against hundreds of idle
 * workgroups: one workgroup's select and sort waits out its barriers and rounds alone while the
 * device idles. \`share\` is the largest power of two (at most WG) that lets the segment's
 * workgroups cover the candidates in one round; the branch runs only where it is at least
 * PICK_SPREAD (policy \`radixPickSpread\`; at least WG / 256, so that a workgroup's ranks fit the
 * histogram's words).
 *
 * H200, one 16M-key row with k = 100 (~2.8K candidates on 256 filter workgroups of 256: 173 rank 16
 * each, 16 invocations a candidate), the filter launch in a pass of its own (launch profile, GPU
 * ms, 2026-12-02): the first workgroup's sort 0.037; spread, each key gathered from the segment by
 * every workgroup, counting one entry at a time 0.048 (launching alone 0.010, the loads 0.011, the
 * count 0.026), four entries a round 0.032, eight 0.0296; with the keys beside the indices 0.022.
 * The whole call 0.094 -> 0.079 ms.
 */
function spreadPickWgsl(spread: number): string {
  return `const PICK_SPREAD: u32 = ${spread}u;
fn spreadPickRuns(count: u32, tiles: u32) -> bool {
  return count <= tiles * (WG / PICK_SPREAD);
}
// 1 where entry e ranks before me (sortBefore, without its branches).
fn beforeCount(e: vec2<u32>, me: vec2<u32>) -> u32 { return select(0u, 1u, e.x > me.x) | select(0u, 1u, (e.x == me.x) & (e.y < me.y)); }
fn spreadPick(at: u32, keysAt: u32, count: u32, take: u32, w: u32, tiles: u32, start: u32, selected: u32, direct: bool, out: u32, lid: u32) {
  var share = WG;
  while (share > PICK_SPREAD && (WG / share) * tiles < count) { share = share >> 1u; }
  let group = WG / share;
  let first = w * group;
  if (first >= count) { return; }
  // Every candidate's index and ordered key (pass 0 wrote the key beside the index: spreadPickOf).
  loadEntriesBeside(at, keysAt, count, count, lid);
  if (lid < group) { atomicStore(&localHistogram[lid], 0u); }
  workgroupBarrier();
  let mine = first + lid / share;
  let part = lid % share;
  let ranks = lid < group * share && mine < count;
  var me = vec2<u32>(0u, SENTINEL);
  if (ranks) {
    me = sortLoad(mine);
    var better = 0u;
    // Eight entries a round, each loaded before any is compared: one at a time, each round waited
    // out a workgroup-memory load (below).
    var j = part;
    loop {
      if (j + 7u * share >= count) { break; }
      ${Array.from({ length: 8 }, (_, i) => `let e${i} = sortLoad(j + ${i}u * share);`).join('\n      ')}
      better += ${Array.from({ length: 8 }, (_, i) => `beforeCount(e${i}, me)`).join(' + ')};
      j += 8u * share;
    }
    for (; j < count; j += share) { better += beforeCount(sortLoad(j), me); }
    if (better != 0u) { atomicAdd(&localHistogram[lid / share], better); }
  }
  workgroupBarrier();
  if (ranks && part == 0u) {
    let rank = atomicLoad(&localHistogram[lid / share]);
    if (rank < min(take, u.kMax)) {
      atomicStore(&temp[selected + rank], me.y);
      if (direct) { writeResult(out + rank, start, me.y); }
    }
  }
}`;
}

/** WGSL of filter pass 0's branch into the pick (only where the plan builds it), after `fromKeys`. */
function pickBranchWgsl(shortcut: 'select' | 'sort'): string {
  return `
  if ((info.z & 2u) != 0u) {
    // Few keys reached the sampled threshold: the first workgroup picks the best take among them in
    // workgroup memory (key, then index: pickWgsl) as digit 0's selection; the later digits find the
    // selection full.
    if (w == 0u) {
      ${pickTargetsWgsl}
      ${pickWgsl(shortcut)}
      ${pickFinishedWgsl}
    }
    return;
  }`;
}

/**
 * WGSL of the shortcut's first workgroup: the best take of the `count` candidates to temp words
 * [selected, ...), and to the outputs from `out` on where `direct`.
 */
function pickWgsl(shortcut: 'select' | 'sort'): string {
  const sortAll = `sortIndices(bufferAt(0u) + s.start, count, s.start, s.direction, lid);
      for (var j = lid; j < min(s.take, u.kMax); j += WG) {
        let index = order[sortSlot(j)];
        atomicStore(&temp[selected + j], index);
        if (direct) { writeResult(out + j, s.start, index); }
      }`;
  if (shortcut === 'sort') return sortAll;
  // Sorted, the select pays where the take's sort is shorter than the candidates' (a smaller power of two).
  return `if (!SORTED || nextPowerOfTwo(s.take) < nextPowerOfTwo(count)) {
        selectCandidates(bufferAt(0u) + s.start, count, s.start, s.size, s.take, s.direction, selected, direct, out, lid);
      } else {
        ${sortAll}
      }`;
}

/**
 * WGSL: `selectCandidates(at, count, start, size, take, direction, selected, lid)`, the 'select'
 * shortcut (above): the candidates' indices at temp words [at, at + count) and their ordered keys in
 * the sort's arrays, the best take found by radix selects, written to temp words [selected, ...):
 * in index order when unsorted (or as found past INDEX_BUCKET_MAX), in rank order when sorted.
 * localHistogram holds the digits' counts, then the index buckets' (INDEX_BUCKETS of them).
 */
function candidateSelectWgsl(tilePerInvocation: number): string {
  return `const TILE_PER_INVOCATION: u32 = ${tilePerInvocation}u;
var<workgroup> selectedTotal: u32;
var<workgroup> selectedFound: atomic<u32>;
var<workgroup> candidateLeast: atomic<u32>;
var<workgroup> candidateGreatest: atomic<u32>;
var<workgroup> candidateRange: vec2<u32>;
// Counts a digit into the invocation's run of equal digits, adding the run to localHistogram when
// the digit changes: the candidates share their leading digits (they all reached the sampled
// threshold; a tied key's indices share their top bits), and one add per run spares that bin a
// serialized atomic per candidate.
fn countDigit(digit: u32, run: ptr<function, vec2<u32>>) {
  if ((*run).y > 0u && (*run).x != digit) {
    atomicAdd(&localHistogram[(*run).x], (*run).y);
    (*run).y = 0u;
  }
  (*run).x = digit;
  (*run).y += 1u;
}
fn flushRun(run: vec2<u32>) {
  if (run.y > 0u) { atomicAdd(&localHistogram[run.x], run.y); }
}
fn selectCandidates(at: u32, count: u32, start: u32, size: u32, take: u32, direction: u32, selected: u32, direct: bool, out: u32, lid: u32) {
  if (lid == 0u) {
    atomicStore(&candidateLeast, 0xffffffffu);
    atomicStore(&candidateGreatest, 0u);
  }
  loadEntries(at, count, count, start, direction, lid);
  // The candidates' least and greatest ordered keys. The rounds select over each key's distance
  // from the least (base), in digits of at most BITS bits from the highest bit a distance reaches:
  // the candidates all reached the sampled threshold and share the key's leading bits, on which
  // digits from the key's top bit spent whole rounds that split nothing.
  var least = 0xffffffffu;
  var greatest = 0u;
  for (var j = lid; j < count; j += WG) {
    let key = sortKeys[sortSlot(j)];
    least = min(least, key);
    greatest = max(greatest, key);
  }
  atomicMin(&candidateLeast, least);
  atomicMax(&candidateGreatest, greatest);
  workgroupBarrier();
  if (lid == 0u) { candidateRange = vec2<u32>(atomicLoad(&candidateLeast), atomicLoad(&candidateGreatest)); }
  let range = workgroupUniformLoad(&candidateRange);
  let base = range.x;
  // The take-th best key T is base + prefix: the distance's bits from shift up decided (the bits of
  // decided), where T's bucket was taken whole, or all of them (shift 0) where T is tied.
  var prefix = 0u;
  var decided = 0u;
  var shift = 32u - countLeadingZeros(range.y - base);
  var remaining = take;
  var tied = true;
  loop {
    if (shift == 0u) { break; }
    let next = select(shift - BITS, 0u, shift <= BITS);
    let mask = (1u << (shift - next)) - 1u;
    clearHistogram(BINS, lid);
    var run = vec2<u32>(0u, 0u);
    for (var j = lid; j < count; j += WG) {
      let distance = sortKeys[sortSlot(j)] - base;
      if ((distance & decided) == prefix) { countDigit((distance >> next) & mask, &run); }
    }
    flushRun(run);
    workgroupBarrier();
    let chosen = chooseDigit(BINS, remaining, lid);
    prefix = prefix | (chosen.x << next);
    decided = ~((1u << next) - 1u);
    remaining -= chosen.y;
    shift = next;
    if (chosen.z == remaining) {
      tied = false;
      break;
    }
  }
  // T tied: the remaining smallest indices among the candidates equal to T (bins hold 255 - digit:
  // the best bin is the smallest index digit), as finalize takes ties; from the highest index byte
  // the segment's size can set.
  var highest = 0xffffffffu;
  if (tied) {
    var indexPrefix = 0u;
    var firstPass = 0u;
    while (firstPass < 3u && ((max(size, 1u) - 1u) >> (24u - 8u * firstPass)) == 0u) { firstPass++; }
    for (var digitPass = firstPass; digitPass < 4u; digitPass++) {
      let indexShift = 24u - 8u * digitPass;
      let fixed = select(0xffffffffu << (indexShift + 8u), 0u, digitPass == 0u);
      clearHistogram(256u, lid);
      var run = vec2<u32>(0u, 0u);
      for (var j = lid; j < count; j += WG) {
        let index = order[sortSlot(j)];
        if (sortKeys[sortSlot(j)] - base == prefix && (index & fixed) == indexPrefix) { countDigit(255u - ((index >> indexShift) & 255u), &run); }
      }
      flushRun(run);
      workgroupBarrier();
      let chosen = chooseDigit(256u, remaining, lid);
      indexPrefix = indexPrefix | ((255u - chosen.x) << indexShift);
      remaining -= chosen.y;
      highest = indexPrefix | ((1u << indexShift) - 1u);
      if (chosen.z == remaining) { break; }
    }
  }
  // Mark the rest unselected (index SENTINEL: no index of a segment is 0xffffffff).
  let bound = prefix >> shift;
  for (var j = lid; j < count; j += WG) {
    let at = sortSlot(j);
    let above = (sortKeys[at] - base) >> shift;
    if (!(above > bound || (above == bound && order[at] <= highest))) { order[at] = SENTINEL; }
  }
  let bucketShift = indexBucketShift(size);
  if (SORTED) {
    writeRanked(count, take, selected, direct, start, out, lid);
  } else if ((1u << bucketShift) <= INDEX_BUCKET_MAX) {
    writeByIndex(count, bucketShift, selected, direct, start, out, lid);
  } else {
    // As found: finalize sorts it by index.
    if (lid == 0u) { atomicStore(&selectedFound, 0u); }
    workgroupBarrier();
    for (var j = lid; j < count; j += WG) {
      let index = order[sortSlot(j)];
      if (index != SENTINEL) {
        let to = atomicAdd(&selectedFound, 1u);
        if (to < u.kMax) { atomicStore(&temp[selected + to], index); }
      }
    }
  }
}
// Sorted: the selection compacted to entries [0, n) (through registers, then the sort pads), sorted,
// written in rank order. The compaction's order comes from atomics; the sort's does not (distinct
// indices).
fn writeRanked(count: u32, take: u32, selected: u32, direct: bool, start: u32, out: u32, lid: u32) {
  if (lid == 0u) { atomicStore(&selectedFound, 0u); }
  workgroupBarrier();
  var entries: array<vec2<u32>, TILE_PER_INVOCATION>;
  var slots: array<u32, TILE_PER_INVOCATION>;
  for (var r = 0u; r < TILE_PER_INVOCATION; r++) {
    let j = r * WG + lid;
    slots[r] = SENTINEL;
    if (j < count) {
      let entry = sortLoad(j);
      entries[r] = entry;
      if (entry.y != SENTINEL) { slots[r] = atomicAdd(&selectedFound, 1u); }
    }
  }
  workgroupBarrier();
  if (lid == 0u) { selectedTotal = min(atomicLoad(&selectedFound), count); }
  let n = workgroupUniformLoad(&selectedTotal);
  for (var r = 0u; r < TILE_PER_INVOCATION; r++) {
    if (slots[r] != SENTINEL) { sortStore(slots[r], entries[r]); }
  }
  for (var j = n + lid; j < nextPowerOfTwo(n); j += WG) { sortStore(j, vec2<u32>(0u, SENTINEL)); }
  workgroupBarrier();
  rankSort(n, lid);
  for (var j = lid; j < min(take, u.kMax); j += WG) {
    let index = order[sortSlot(j)];
    atomicStore(&temp[selected + j], index);
    if (direct) { writeResult(out + j, start, index); }
  }
}
// Unsorted: index order. Counts per bucket of index >> bucketShift, an exclusive scan, each index
// placed in its bucket's range (of sortKeys, free now), then written at its bucket's start plus the
// members below it.
fn writeByIndex(count: u32, bucketShift: u32, selected: u32, direct: bool, start: u32, out: u32, lid: u32) {
  clearHistogram(INDEX_BUCKETS, lid);
  for (var j = lid; j < count; j += WG) {
    let index = order[sortSlot(j)];
    if (index != SENTINEL) { atomicAdd(&localHistogram[index >> bucketShift], 1u); }
  }
  workgroupBarrier();
  let per = (INDEX_BUCKETS + WG - 1u) / WG;
  let lo = min(lid * per, INDEX_BUCKETS);
  let hi = min(lo + per, INDEX_BUCKETS);
  var sum = 0u;
  for (var b = lo; b < hi; b++) { sum += atomicLoad(&localHistogram[b]); }
  var running = inclusiveScan(sum, lid) - sum;
  for (var b = lo; b < hi; b++) {
    let c = atomicLoad(&localHistogram[b]);
    atomicStore(&localHistogram[b], running);
    running += c;
  }
  workgroupBarrier();
  for (var j = lid; j < count; j += WG) {
    let index = order[sortSlot(j)];
    if (index != SENTINEL) { sortKeys[sortSlot(atomicAdd(&localHistogram[index >> bucketShift], 1u))] = index; }
  }
  workgroupBarrier();
  // Each bucket's word now holds its end, the next one's start.
  let total = atomicLoad(&localHistogram[INDEX_BUCKETS - 1u]);
  for (var slot = lid; slot < total; slot += WG) {
    let index = sortKeys[sortSlot(slot)];
    let bucket = index >> bucketShift;
    var first = 0u;
    if (bucket > 0u) { first = atomicLoad(&localHistogram[bucket - 1u]); }
    let to = atomicLoad(&localHistogram[bucket]);
    var rank = first;
    for (var m = first; m < to; m++) { rank += select(0u, 1u, sortKeys[sortSlot(m)] < index); }
    if (rank < u.kMax) {
      atomicStore(&temp[selected + rank], index);
      if (direct) { writeResult(out + rank, start, index); }
    }
  }
}`;
}
