import type { ProgramBinding } from '../../../backends/webgpu/program.js';
import { radixScanTilesPerThread } from '../problem.js';

/*
 * The radix sort's WGSL programs over any source of segments (the sort's input, or top-k's
 * selection), twins of cpu/radix.ts: the same launches, tiles, groups and slots. The caller's WGSL
 * (`adapter`) defines where items come from and go:
 *
 * - `fn radixSegment(i: u32) -> vec4<u32>`: (start, size, order mask, go) of segment i, go 0 when
 *   the radix kernels have nothing to do for it (called by one invocation);
 * - `fn sourceKey(start: u32, j: u32) -> u32` and `fn sourceValue(start: u32, j: u32) -> u32`: pass 0's
 *   key bits and value of item j;
 * - `fn radixOrderedKey(bits: u32) -> u32`: the ordered key of key bits;
 * - `fn writeOut(start: u32, at: u32, bits: u32, value: u32)`: the last pass's write;
 *
 * and binds `temp` (u32; the histogram and the scatter also bind `tempA` and `tempB`,
 * {@link radixSplitBindings}) with the uniforms {@link radixUniforms}.
 *
 * One LSD pass over 8 bits of the sort key is three launches, reduce-then-scan (no workgroup waits on
 * another, so it is safe on every WebGPU device): the histogram counts each tile's digits; the scan
 * turns them, digit by digit (a digit's tile counts are adjacent: problem.ts), into the items of
 * that digit in earlier tiles, and each digit's total (over segments of few tiles there is no scan
 * launch and each scatter workgroup adds up the same from the counts: problem.ts
 * `radixScansInScatter`, two launches a pass); the scatter ranks its tile in workgroup memory
 * (rank tiles of `rankItems`, looping when a tile is longer) so that the tile ends up stably sorted by
 * the digit, and then writes item p of digit d to (smaller digits' totals + digit d in earlier tiles +
 * p - first p of digit d), so a digit's places in the rank tile go to consecutive words (the writes
 * are runs, as CUB's Onesweep writes them). It ranks by warp-level multisplit where subgroups have one fixed width
 * ({@link radixWarpRankFor}, `warpRank` below), else by four stable 2-bit splits, each one workgroup
 * scan of packed counters; both give the same order, so outputs do not depend on which ran.
 * A pass whose digit is the same for every item of the segment (the totals say so) copies instead.
 * How the histogram and the scatter load their keys and values is {@link RadixLoads}.
 *
 * Each buffer of the double buffer is a binding of its own ({@link radixSplitBindings}) and
 * the scatter is built once per digit parity, so no kernel loads from a binding it stores to. One
 * 16M-key sort with indices on an H200 (bench/webgpu-launch-profile.ts, GPU ms of the scatter's four
 * digit passes, 2026-11-29): 0.298 / 0.420 / 0.419 / 0.365 with both buffers in `temp`, 0.294 / 0.314
 * / 0.419 / 0.280 split; the whole sort 1.687 -> 1.494 ms (bench/sort-webgpu.ts). Digit 2 stayed
 * slower (0.367 where the others took 0.215-0.241 after the loads below went in flight early) until
 * digits 0 and 2 got a program each ({@link RadixDigitProgram}): each load of their shared program chose between
 * the source and buffer 1 (programs.ts `digitProgram` has the figures). Both callers build them so:
 * the segmented sort and top-k's sorted selection past a tile (batched-top-k/webgpu/sorted.ts).
 */

/** The kernels of the radix sort. */
export type RadixKernel = 'histogram' | 'scan' | 'scatter';

/**
 * How the radix kernels load (the sort policy's `radixLoads`; the results are the same for each):
 * - 1: the scatter gathers each value at the write from the source, by the item's index in the
 *   rank tile (the rank tile carries indices): the lanes of a subgroup read scattered words; the
 *   histogram counts each key as it arrives;
 * - 2: the scatter loads each value beside its key (coalesced) and carries it through the ranking
 *   in workgroup memory in place of the index, so the write reads workgroup memory only;
 * - 3: as 2, and the histogram loads eight keys an invocation before counting them.
 *
 * In every mode each lane of the warp ranking loads every key (and, 2 and 3, value) of its chunk
 * of the rank tile before its first ballot, all of them in flight at once, issued while the rank
 * tile before it is written out (`warpLoads`; the four 2-bit splits load the whole rank tile before
 * ranking in any case). Loaded one a sub-round, between ballots,
 * the keys of mode 1 cost the scatter of one 16M-key segment with indices (H200, GPU ms per launch,
 * bench/webgpu-launch-profile.ts, 2026-11-29) 0.405 / 0.426 / 0.424 / 0.378 for its four digits,
 * against 0.309 / 0.440 / 0.440 / 0.391 loaded first: the whole sort 1.910 -> 1.855.
 */
export type RadixLoads = 1 | 2 | 3;

/**
 * The sort policy's loads: 3. With the double buffer split ({@link radixSplitBindings}), one 16M-key
 * sort with indices took 1.268 ms of GPU time against 1.496 with 1, 1024 rows of 8192 keys 0.710 against 0.824, 512
 * ragged rows of up to 16384 keys 0.494 against 0.561, 64 rows of 32768 0.209 against 0.226 (H200,
 * bench/sort-webgpu.ts --variants=radix --policies, alternating in one process, 2026-11-29, on keys
 * that repeated 419 values; on uniform keys 1.462 against 1.538: BENCHMARKS.md session 31); before
 * the split the three were within 2% of each other (policy.ts `radixLoads`).
 */
export const sortRadixLoads: RadixLoads = 3;


/** Keys a histogram invocation loads before counting them (radix loads 3). */
const histogramBatch = 8;

/** What the radix programs are specialized on. */
export interface RadixProgramOptions {
  /** Values move with the keys. */
  readonly hasValues: boolean;
  readonly workgroupSize: number;
  /**
   * Items the scatter ranks at once in workgroup memory (8 bytes each with values, 4 without, plus
   * 4 KiB at most): the caller's single-tile capacity, which fits the same memory. Rounded down to a
   * multiple of the workgroup size, at most 16 items per invocation.
   */
  readonly rankItems: number;
  /** The scatter's warp-level ranking ({@link radixWarpRankFor}); left out: four 2-bit splits. */
  readonly warpRank?: RadixWarpRank;
  /** How the histogram and the scatter load. */
  readonly loads: RadixLoads;
  /**
   * The digits a histogram or scatter program is for ({@link RadixDigitProgram}), each buffer of the
   * double buffer in a binding of its own ({@link radixSplitBindings}), so that each program reads
   * one place and no kernel reads a binding it writes (programs.ts `digitProgram` has what a choice
   * at each load cost; the scan reads neither: any program).
   */
  readonly digit: RadixDigitProgram;
  /**
   * The scatter adds up each digit's total and its items in earlier tiles from the histogram's tile
   * counts itself (the plan has no scan launch: problem.ts `radixScansInScatter`); default false.
   */
  readonly scanInScatter?: boolean;
}

/**
 * A radix histogram's or scatter's program by the digits it runs: 0 for digit 0 (it reads the
 * source; the scatter writes buffer 0), 2 for digit 2 (buffer 1; into buffer 0), 1 for digits 1 and 3
 * (buffer 0; into buffer 1 or the outputs).
 */
export type RadixDigitProgram = 0 | 1 | 2;

/** The {@link RadixDigitProgram} a radix launch of pass `pass` (a group's 4 x group + digit) runs. */
export function radixDigitProgram(pass: number): RadixDigitProgram {
  const digit = pass & 3;
  return digit === 2 ? 2 : ((digit & 1) as 0 | 1);
}

/**
 * Where the radix programs split the double buffer: the temporary-storage slots each buffer's own
 * binding covers (buffer 0 `tempA`, buffer 1 `tempB`); `temp` keeps the counts.
 */
export const radixSplitBindings = { tempA: ['sortKeys0', 'sortValues0'], tempB: ['sortKeys1', 'sortValues1'] } as const;

/**
 * How the scatter ranks a rank tile by warp-level multisplit: `subgroups` subgroups of
 * `subgroupSize` invocations (the first ones of the workgroup; the rest sit out the ranking), each
 * `items` sub-rounds of one item a lane.
 */
export interface RadixWarpRank {
  readonly subgroupSize: number;
  readonly subgroups: number;
  readonly items: number;
}

/** Uniform fields the radix programs read (beyond the adapter's). */
export function radixUniforms(hasValues: boolean): string[] {
  return ['sortTiles', 'sortGroupSegments', 'launchPass', 'sortCountsAt', 'sortKeys0At', 'sortKeys1At', ...(hasValues ? ['sortValues0At', 'sortValues1At'] : [])];
}

/** Whether the scatter carries each value beside its key (`loads` 2 and 3 with values), rather than its index. */
const carriesValues = (options: Pick<RadixProgramOptions, 'hasValues' | 'loads'>) => options.hasValues && options.loads !== 1;

/** 0, 1, ..., n - 1. */
const indices = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Items per invocation in the scatter's ranking. */
export function radixRankItemsPerInvocation(options: Pick<RadixProgramOptions, 'workgroupSize' | 'rankItems'>): number {
  return Math.max(1, Math.min(16, Math.floor(options.rankItems / options.workgroupSize)));
}

/** WebGPU's size of a workgroup variable of `bytes`: rounded up to 16. */
const variableBytes = (bytes: number) => Math.ceil(bytes / 16) * 16;

/** Words of a rank array (keys or indices): one padding word per 32 places. */
function rankWords(rank: number): number {
  return rank + Math.ceil(rank / 32);
}

/** Workgroup memory of the scatter with four 2-bit splits (the declarations in `radixProgramParts`). */
function scatterSplitBytes(options: Pick<RadixProgramOptions, 'hasValues' | 'workgroupSize' | 'rankItems'>): number {
  const rank = radixRankItemsPerInvocation(options) * options.workgroupSize;
  const rankBytes = variableBytes(rankWords(rank) * 4);
  return variableBytes(16) + rankBytes * (options.hasValues ? 2 : 1) + variableBytes(256 * 4) + variableBytes(Math.max(options.workgroupSize, 128) * 8);
}

/**
 * The warp ranking's scan over the 128 pairs of digits (d, d + 128): `pairs` of them an invocation,
 * on the first `subgroups` subgroups.
 */
function digitScanShape(workgroupSize: number, subgroupSize: number): { pairs: number; subgroups: number } {
  const pairs = Math.ceil(128 / workgroupSize);
  return { pairs, subgroups: Math.ceil(Math.ceil(128 / pairs) / subgroupSize) };
}

/** What the warp-level ranking adds: each ranking subgroup's 256 counts in 16 bits, and the digit scan's subgroup sums. */
function warpRankBytes(workgroupSize: number, warp: Pick<RadixWarpRank, 'subgroupSize' | 'subgroups'>): number {
  return variableBytes(warp.subgroups * 128 * 4) + variableBytes(digitScanShape(workgroupSize, warp.subgroupSize).subgroups * 4);
}

/** Workgroup memory of the scatter program these options give (checked against the backend's when the ranking is chosen). */
export function radixScatterBytes(options: Omit<RadixProgramOptions, 'loads' | 'digit'>): number {
  return scatterSplitBytes(options) + (options.warpRank === undefined ? 0 : warpRankBytes(options.workgroupSize, options.warpRank));
}

/**
 * 32-bit registers one workgroup of the warp-ranking scatter may take: the register file of an
 * NVIDIA multiprocessor (65536), which a workgroup must fit in whole. WebGPU does not expose a
 * register count, so this one holds for every backend (the splits rank where it is passed). NVIDIA's
 * Vulkan driver (H200, driver 580.159.04, Dawn) does not report a pipeline past it: the scatter
 * simply wrote nothing, with no WebGPU error, so a policy that asked for such a shape sorted into
 * zeros. Hence the check here, on the host, before any shader is built.
 */
export const warpRankRegisterBudget = 65536;

/**
 * Registers one invocation of the warp-ranking scatter takes, as fitted to what ran on an H200
 * (BENCHMARKS.md session 32; radix forced on 65536 f32 keys): 40, and per item of its lane one
 * register for each word the lane keeps through the ranking (key, rank, and the value where it is
 * carried: `loads` 2 and 3 with values) plus one. Ran: 1024 invocations of 2 and 4 items (values
 * carried), 8 (keys only, and values gathered with `loads` 1); 512 of 8 and 16; 256 of 16 and 32.
 * Wrote nothing: 1024 of 8 (values carried) and of 16 (every mode); 512 of 32 (every mode). The
 * fit puts each of those on its side of 65536 registers a workgroup ({@link warpRankRegisterBudget}).
 */
export function warpRankRegisters(items: number, options: Pick<RadixProgramOptions, 'hasValues' | 'loads'>): number {
  const words = 2 + (carriesValues(options) ? 1 : 0);
  return 40 + items * (words + 1);
}

/**
 * The scatter's warp-level ranking for a backend whose subgroups all have `subgroupSize` invocations
 * (undefined where they may differ, or where shaders may not use subgroups), or undefined where the
 * scatter keeps the four 2-bit splits: the width must be a power of two from 8 to 32 (one u32 of each
 * ballot; below 8 a lane would own more than 32 digits' counters) dividing the workgroup size, and
 * each ranking subgroup's 256 counts (16 bits each, 512 bytes) must fit beside the rank tile in the
 * workgroup memory the backend has. Where they do not for every subgroup, half of them rank (each
 * lane twice the items), and so on while a lane ranks at most 32 items and the workgroup's registers
 * stay within {@link warpRankRegisterBudget} ({@link warpRankRegisters}). On an H200 (subgroups of 32,
 * 48 KiB): sort workgroups of 512 ranking 4096 keys with values take 38,928 bytes for the splits,
 * 8,208 more for 16 subgroups; lavapipe (8, 32 KiB): 2048 keys with values, 16 of the 64 subgroups
 * rank (10,736 bytes free, 512 each), 16 items a lane.
 */
export function radixWarpRankFor(
  options: Pick<RadixProgramOptions, 'hasValues' | 'workgroupSize' | 'rankItems' | 'loads'>,
  subgroupSize: number | undefined,
  workgroupStorageBytes: number,
): RadixWarpRank | undefined {
  const width = subgroupSize ?? 0;
  if (width < 8 || width > 32 || (width & (width - 1)) !== 0 || options.workgroupSize % width !== 0) return undefined;
  const rank = radixRankItemsPerInvocation(options) * options.workgroupSize;
  const base = scatterSplitBytes(options);
  for (let subgroups = options.workgroupSize / width; Number.isInteger(subgroups) && subgroups >= 1; subgroups /= 2) {
    const items = rank / (subgroups * width);
    // Fewer subgroups only give each lane more items (more registers): past the budget, the splits.
    if (items > 32 || options.workgroupSize * warpRankRegisters(items, options) > warpRankRegisterBudget) break;
    if (base + warpRankBytes(options.workgroupSize, { subgroupSize: width, subgroups }) <= workgroupStorageBytes) return { subgroupSize: width, subgroups, items };
  }
  return undefined;
}

/**
 * Where a program's digit passes read a buffer's words (`Keys` or `Values`), one place
 * ({@link RadixDigitProgram}): the source at digit 0, buffer 0 at digits 1 and 3 (what digits 0 and 2
 * wrote), buffer 1 at digit 2; so the WGSL has no load from a buffer the kernel writes and no choice
 * at a load.
 */
function readFrom(digit: RadixDigitProgram, what: 'Keys' | 'Values', source: string): string {
  const zero = `tempA[u.sort${what}0At + start + j]`;
  const one = `tempB[u.sort${what}1At + start + j]`;
  return `  return ${digit === 1 ? zero : digit === 0 ? source : one};`;
}

/** WGSL the radix programs share, after the adapter's. */
function common(kernel: RadixKernel, digit: RadixDigitProgram): string {
  const parts = [
    `var<workgroup> enteredRadix: vec4<u32>;
fn enterRadix(i: u32, lid: u32) -> vec4<u32> {
  if (lid == 0u) { enteredRadix = radixSegment(i); }
  return workgroupUniformLoad(&enteredRadix);
}`,
    `// Tile t of a segment of size items: [lo, hi).
fn tileRange(size: u32, t: u32) -> vec2<u32> {
  let chunk = (size + u.sortTiles - 1u) / u.sortTiles;
  let lo = min(size, t * chunk);
  return vec2<u32>(lo, min(size, lo + chunk));
}
// Segment g of the group's counts: 256 digits x tiles (digit-major), then 256 digit totals.
fn countsBase(g: u32) -> u32 { return u.sortCountsAt + g * (u.sortTiles + 1u) * 256u; }`,
  ];
  if (kernel !== 'scan') {
    parts.push(`// Key bits of item j in this digit's pass: from the source (pass 0) or the buffer the previous pass wrote.
fn bitsAt(digit: u32, start: u32, j: u32) -> u32 {
${readFrom(digit, 'Keys', 'sourceKey(start, j)')}
}`);
  }
  if (kernel !== 'histogram') {
    parts.push(`// A workgroup inclusive scan of packed counters (Hillis-Steele); the total is left in pairs[WG - 1].
fn scanPairs(value: vec2<u32>, lid: u32) -> vec2<u32> {
  pairs[lid] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var a = vec2<u32>(0u, 0u);
    if (lid >= offset) { a = pairs[lid - offset]; }
    workgroupBarrier();
    pairs[lid] = pairs[lid] + a;
    workgroupBarrier();
  }
  return pairs[lid];
}`);
  }
  return parts.join('\n');
}

function histogramMain(loads: RadixLoads): string {
  const count = (key: string) => `atomicAdd(&histogram[((radixOrderedKey(${key}) ^ s.z) >> shift) & 255u], 1u);`;
  const range = Array.from({ length: histogramBatch }, (_, b) => b);
  const counting =
    loads === 3
      ? `// ${histogramBatch} loads in flight before their counts (named registers, not an array indexed in a loop).
  for (var j = range.x + lid; j < range.y; j += ${histogramBatch}u * WG) {
    ${range.map((b) => `var k${b} = 0u; let in${b} = j + ${b}u * WG < range.y; if (in${b}) { k${b} = bitsAt(digit, s.x, j + ${b}u * WG); }`).join('\n    ')}
    ${range.map((b) => `if (in${b}) { ${count(`k${b}`)} }`).join('\n    ')}
  }`
      : `for (var j = range.x + lid; j < range.y; j += WG) { ${count('bitsAt(digit, s.x, j)')} }`;
  return `
  let inGroup = workgroupIndex / u.sortTiles;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  for (var d = lid; d < 256u; d += WG) { atomicStore(&histogram[d], 0u); }
  workgroupBarrier();
  let tile = workgroupIndex % u.sortTiles;
  let range = tileRange(s.y, tile);
  let digit = u.launchPass & 3u;
  let shift = 8u * digit;
  ${counting}
  workgroupBarrier();
  let at = countsBase(inGroup) + tile;
  for (var d = lid; d < 256u; d += WG) { temp[at + d * u.sortTiles] = atomicLoad(&histogram[d]); }`;
}

/**
 * Counts a scatter workgroup's invocation loads at once where it adds up its digit's counts itself
 * (no scan launch). In the scan launch, the same batches took one 16M-key sort's scan (512 tiles,
 * 16 counts a lane) from 0.0183 to 0.0195 ms of GPU time on an H200 (its loop of single loads
 * stays), one 100000-key selection's (25 tiles, 13 a lane) from 0.0123 to 0.0104
 * (bench/webgpu-launch-profile.ts, 2026-12-01).
 */
const scanBatch = 8;
const scanRange = Array.from({ length: scanBatch }, (_, b) => b);

// problem.ts radixScanShape, in WGSL: threads per digit, digits per workgroup.
const scanMain = `
  var threads = 1u;
  while (threads * ${radixScanTilesPerThread}u < u.sortTiles && threads < WG) { threads = threads << 1u; }
  threads = min(threads, WG);
  let digits = max(1u, min(256u, WG / threads));
  let perSegment = (256u + digits - 1u) / digits;
  let inGroup = workgroupIndex / perSegment;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  let digit = (workgroupIndex % perSegment) * digits + lid / threads;
  let live = lid / threads < digits && digit < 256u;
  let lane = lid % threads;
  let per = (u.sortTiles + threads - 1u) / threads;
  let first = min(u.sortTiles, lane * per);
  let end = min(u.sortTiles, first + per);
  let base = countsBase(inGroup);
  let at = base + digit * u.sortTiles;
  var sum = 0u;
  if (live) { for (var t = first; t < end; t++) { sum += temp[at + t]; } }
  // An inclusive scan over the lanes of each digit (segments of \`threads\` invocations).
  pairs[lid] = vec2<u32>(sum, 0u);
  workgroupBarrier();
  for (var offset = 1u; offset < threads; offset = offset << 1u) {
    var a = 0u;
    if (lane >= offset) { a = pairs[lid - offset].x; }
    workgroupBarrier();
    pairs[lid].x = pairs[lid].x + a;
    workgroupBarrier();
  }
  var running = pairs[lid].x - sum;
  if (live) {
    for (var t = first; t < end; t++) { let count = temp[at + t]; temp[at + t] = running; running += count; }
    if (lane == threads - 1u) { temp[base + 256u * u.sortTiles + digit] = running; }
  }`;

/** Where each digit's first place in the rank tile is, as the split ranking leaves it: pairs[d >> 1][d & 1]. */
const firstPlaces = `    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let d = digitOf(rankKeys[rankAt(p)], mask, shift);
        if (p == 0u || digitOf(rankKeys[rankAt(p - 1u)], mask, shift) != d) { pairs[d >> 1u][d & 1u] = p; }
      }
    }
    workgroupBarrier();
`;

/** The offsets past this rank tile, from its places (the split ranking). */
const splitOffsets = `    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let d = digitOf(rankKeys[rankAt(p)], mask, shift);
        if (p + 1u == n || digitOf(rankKeys[rankAt(p + 1u)], mask, shift) != d) { offsets[d] += p + 1u - pairs[d >> 1u][d & 1u]; }
      }
    }
    workgroupBarrier();
`;

/** The offsets past this rank tile, from the digits' first places (the warp ranking): digit d's items are the places from its first to digit d + 1's (n for the last digit). */
const warpOffsets = `    for (var d = lid; d < 256u; d += WG) {
      var end = n;
      if (d < 255u) { let e = d + 1u; end = pairs[e >> 1u][e & 1u]; }
      offsets[d] += end - pairs[d >> 1u][d & 1u];
    }
    workgroupBarrier();
`;

/** The workgroup array that carries each key's value (rankValues) or its index in the rank tile (rankIndex, radix loads 1) through the ranking. */
function carriedArray(options: Pick<RadixProgramOptions, 'loads'>): string {
  return options.loads === 1 ? 'rankIndex' : 'rankValues';
}

/** The rank tile loaded into rankKeys (and rankValues or rankIndex) and sorted by the digit with four stable 2-bit splits. */
function splitRank(options: RadixProgramOptions): string {
  const { hasValues } = options;
  const carried = options.loads === 1 ? 'rankIndex[rankAt(p)] = p;' : 'rankValues[rankAt(p)] = valueAt(digitPass, start, sub + p);';
  return `    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) { rankKeys[rankAt(p)] = bitsAt(digitPass, start, sub + p);${hasValues ? ` ${carried}` : ''} }
    }
    workgroupBarrier();
    // Four stable splits by 2 bits of the digit, least significant first. Invocation lid owns rank
    // places [lid * ITEMS, (lid + 1) * ITEMS); places from n on are padding, in the last bucket.
    for (var split = 0u; split < 8u; split += 2u) {
      let splitShift = shift + split;
      var keys: array<u32, ITEMS>;
      ${hasValues ? 'var carried: array<u32, ITEMS>;' : ''}
      var place: array<u32, ITEMS>;
      // Bucket b's count in 16 bits: word b / 2, bits 16 * (b % 2).
      var counts = vec2<u32>(0u, 0u);
      for (var i = 0u; i < ITEMS; i++) {
        let p = lid * ITEMS + i;
        let key = rankKeys[rankAt(p)];
        keys[i] = key;
        ${hasValues ? `carried[i] = ${carriedArray(options)}[rankAt(p)];` : ''}
        var b = 3u;
        if (p < n) { b = ((radixOrderedKey(key) ^ mask) >> splitShift) & 3u; }
        let field = (b & 1u) * 16u;
        let word = counts[b >> 1u];
        place[i] = b | (((word >> field) & 0xffffu) << 2u);
        counts[b >> 1u] = word + (1u << field);
      }
      let before = scanPairs(counts, lid) - counts;
      let total = pairs[WG - 1u];
      let t0 = total.x & 0xffffu;
      let t1 = t0 + (total.x >> 16u);
      let bucketStart = vec4<u32>(0u, t0, t1, t1 + (total.y & 0xffffu));
      workgroupBarrier();
      for (var i = 0u; i < ITEMS; i++) {
        let b = place[i] & 3u;
        let to = bucketStart[b] + ((before[b >> 1u] >> ((b & 1u) * 16u)) & 0xffffu) + (place[i] >> 2u);
        rankKeys[rankAt(to)] = keys[i];
        ${hasValues ? `${carriedArray(options)}[rankAt(to)] = carried[i];` : ''}
      }
      workgroupBarrier();
    }
`;
}

/** Where the warp ranking's subgroup and lane are (once per workgroup). */
function warpSetup(warp: RadixWarpRank): string {
  return `// Subgroups are runs of ${warp.subgroupSize} consecutive local indices (as every driver forms them for a
  // 1-D workgroup; the reduce kernels rely on it too), and the backend said every subgroup has that
  // width. Subgroup w < ${warp.subgroups} ranks places [w * ${warp.subgroupSize * warp.items}, (w + 1) * ${warp.subgroupSize * warp.items}) of each rank tile; the rest sit it out.
  let warp = lid / ${warp.subgroupSize}u;
  let lane = subgroupLane;
  let ranking = warp < ${warp.subgroups}u;
  let lanesBelow = (1u << lane) - 1u;
  // The digit scan's invocation index: lid where lanes are numbered as local indices (this keeps the
  // scan in lane order whatever the numbering).
  let pairLid = warp * ${warp.subgroupSize}u + lane;`;
}

/**
 * The rank tile sorted by the digit with warp-level multisplit (as CUB's Onesweep ranks, "WLMS"):
 * each ranking subgroup takes its chunk of the tile in `items` sub-rounds of one consecutive item a
 * lane, in index order. In a sub-round, eight ballots of the digit's bits (padding past n never
 * counts) give each lane the lanes with its digit; its rank in the subgroup is the subgroup's
 * running count of that digit before the sub-round plus those lanes below it. The running counts
 * live in workgroup memory, 16 bits each (digit d in half d >> 7 of the subgroup's word d & 127):
 * the lowest lane of each digit adds the sub-round's count with one atomicAdd and hands the count
 * before it to the others with one shuffle. The next sub-round's atomicAdd on that word is issued
 * only after every lane has the value this one returned (the shuffle waits for it), so the counts
 * grow in sub-round order on any device. WGSL orders one invocation's workgroup-memory writes before
 * another's reads only across a barrier, so after the ranking a barrier, then per digit an exclusive
 * scan over the subgroups and a scan over the digits give each (subgroup, digit) its first place,
 * and each item goes to (digit's first place + its subgroup's first place among them + its rank).
 * The result is the four splits' order (stable by index within the tile), with 4 barriers to rank a
 * tile where the splits take 85 at 512 invocations (a Hillis-Steele scan of 19 each), and the first
 * places come with it (one barrier less after).
 *
 * The counts were in registers before (lane L kept digits L, L + S, ... and a lane read its digit's
 * count with one shuffle per slot, 8 on a subgroup of 32): one 16M-key sort with indices took 1.753
 * ms of GPU time against 1.687 with the atomic (H200, bench/sort-webgpu.ts, 2026-11-29; the
 * scatter's digit passes 0.441 -> 0.427 ms each).
 */
/**
 * `body` once per item i < n, unrolled (i a constant in each copy): the ranking's arrays indexed by i
 * stay in registers. H200, GPU ms against the loops (bench/sort-webgpu.ts, radix forced, two rounds,
 * 2026-11-28): 1x16M 1.774 / 1.775 against 1.836 / 1.834, 64x32768 0.247 / 0.248 against 0.26-0.36.
 */
const eachItem = (n: number, body: string) => Array.from({ length: n }, (_, k) => `{\n      const i = ${k}u;${body}}`).join(' ');

/** WGSL: \`p\`, the rank-tile place of item i of this lane's chunk (an eachItem body's). */
const chunkPlace = (warp: RadixWarpRank) => `let p = warp * ${warp.subgroupSize * warp.items}u + i * ${warp.subgroupSize}u + lane;`;

/**
 * The warp ranking's loads of the rank tile from item `from` of the tile's range: each lane's chunk
 * (key and, loads 2 and 3, value into keys[i] and values[i]; places past the range keep what they
 * held and rank as padding), every load in flight at once. The first rank tile's are issued as the
 * workgroup starts, before it reads and scans the digits' totals, each next one's as soon as the
 * current one is placed in workgroup memory, so that they are in flight while it is written out
 * (one scatter workgroup fills a multiprocessor on an H200: nothing else hides their latency). H200,
 * GPU ms, bench/sort-webgpu.ts (2026-12-01, two rounds, against the loads at the top of each rank
 * tile): 1x16M with indices 1.471 -> 1.278-1.282 (the scatter's digit passes 0.298 / 0.296 / 0.415
 * / 0.238 -> 0.245 / 0.242 / 0.368 / 0.220, bench/webgpu-launch-profile.ts), 1024x8192 radix forced
 * 0.724-0.725 -> 0.711-0.713, 64x32768 radix forced 0.213-0.216 -> 0.216-0.217; then the first
 * loads issued before the totals' scan, the totals and tile counts read together and the scan by
 * subgroups ({@link warpScanTotals}): 1x16M 1.270-1.271 -> 1.268-1.269, 1024x8192 radix forced
 * 0.706-0.709 -> 0.683, 64x32768 radix forced 0.215-0.216 -> 0.209-0.211.
 */
function warpLoads(options: RadixProgramOptions, warp: RadixWarpRank, from: string): string {
  const values = carriesValues(options);
  return eachItem(
    warp.items,
    `
      ${chunkPlace(warp)}
      if (ranking && ${from} + p < range.y) { keys[i] = bitsAt(digitPass, start, ${from} + p);${values ? ` values[i] = valueAt(digitPass, start, ${from} + p);` : ''} }
    `,
  );
}

/** The warp ranking's registers for a lane's chunk, and the first rank tile's loads (before the rank tiles' loop). */
function warpFirstLoads(options: RadixProgramOptions, warp: RadixWarpRank): string {
  return `
  var keys: array<u32, ${warp.items}>;${carriesValues(options) ? `
  var values: array<u32, ${warp.items}>;` : ''}
  ${warpLoads(options, warp, 'range.x')}`;
}

/**
 * WGSL of one sub-round of the warp ranking for item i (an eachItem body's), given \`valid\` (the
 * item counts) and \`d\` (its digit) in scope, with \`lane\`, \`lanesBelow\`, \`warp\`, the
 * \`warpCounts\` words and the \`ranks\` array: eight ballots of the digit's bits give the lanes that
 * share it; the lowest of them adds the sub-round's count to the subgroup's (digit d's count: the
 * half d >> 7 of word d & 127) and hands the count before it to the others; \`ranks[i]\` is that
 * count plus the lanes below with the digit. Every lane ballots (subgroup operations in uniform
 * control flow). With \`everyLane\`, every item counts and there is no \`valid\` (the single-tile
 * sort's radix ranks, tile-radix.ts, give the places past a segment a digit of their own).
 */
export function warpRankItemWgsl(width: number, everyLane = false): string {
  const bit = (b: number) => `select(~b${b}, b${b}, (d & ${1 << b}u) != 0u)`;
  const lanes = width === 32 ? '0xffffffffu' : `${2 ** width - 1}u`;
  const counts = (cond: string) => (everyLane ? cond : `valid && ${cond}`);
  return `${everyLane ? '' : 'let live = subgroupBallot(valid).x;\n      '}${indices(8).map((b) => `let b${b} = subgroupBallot(${counts(`(d & ${1 << b}u) != 0u`)}).x;`).join('\n      ')}
      let same = ${everyLane ? lanes : 'live'} & ${indices(8).map(bit).join('\n        & ')};
      let leader = firstTrailingBit(same) & ${width - 1}u;
      let half = (d >> 7u) * 16u;
      var counted = 0u;
      if (${counts('lane == leader')}) { counted = atomicAdd(&warpCounts[warp * 128u + (d & 127u)], countOneBits(same) << half); }
      ranks[i] = ((subgroupShuffle(counted, leader) >> half) & 0xffffu) + countOneBits(same & lanesBelow);`;
}

/**
 * WGSL: each of \`subgroups\` ranking subgroups' counts of the digit pair \`q\` (both halves) replaced
 * by the pair's items in earlier subgroups, \`total\` (a var in scope, 0) left at the pair's total.
 * Every count is read before the first store (a store would hold back the loads after it).
 */
export function warpCountsBeforeWgsl(subgroups: number, q: string, total: string): string {
  return `${indices(subgroups).map((w) => `let w${w} = atomicLoad(&warpCounts[${w * 128}u + ${q}]);`).join('\n        ')}
        ${indices(subgroups).map((w) => `atomicStore(&warpCounts[${w * 128}u + ${q}], ${total}); ${total} += w${w};`).join('\n        ')}`;
}

function warpRank(options: RadixProgramOptions, warp: RadixWarpRank): string {
  const width = warp.subgroupSize;
  const scan = digitScanShape(options.workgroupSize, width);
  const values = carriesValues(options);
  // Where every subgroup ranks, places past the rank tile take digit 255: they rank after every item
  // (places in order), no ballot asks which lanes count, and digit 255's run ends at n (warpOffsets).
  const everyLane = warp.subgroups * width === options.workgroupSize;
  // keys and values hold this rank tile's chunk (warpFirstLoads, or the previous rank tile's end).
  return `    var ranks: array<u32, ${warp.items}>;
    ${eachItem(warp.items, `
      ${chunkPlace(warp)}
      // Every lane ballots (subgroup operations in uniform control flow); ${everyLane ? 'padding with digit 255' : 'padding with valid false'}.
      ${everyLane ? '' : 'let valid = ranking && p < n;\n      '}let key = keys[i];
      let d = ${everyLane ? 'select(digitOf(key, mask, shift), 255u, p >= n)' : 'digitOf(key, mask, shift)'};
      ${warpRankItemWgsl(width, everyLane)}
    `)}
    workgroupBarrier();
    // Invocation t: the pairs of digits (q, q + 128) for q in [t * ${scan.pairs}, (t + 1) * ${scan.pairs}), both halves at once (a
    // count is at most RANK, below 2^16). Each subgroup's count becomes the digit's items in earlier
    // subgroups, and the digits' totals are left.
    var pairTotals: array<u32, ${scan.pairs}>;
    var pairTotal = 0u;
    for (var c = 0u; c < ${scan.pairs}u; c++) {
      let q = pairLid * ${scan.pairs}u + c;
      var total = 0u;
      if (q < 128u) {
        ${warpCountsBeforeWgsl(warp.subgroups, 'q', 'total')}
      }
      pairTotals[c] = total;
      pairTotal += total;
    }
    // The digits' first places: an exclusive scan of the totals over digits 0..127 (low halves) and
    // 128..255 (high halves), within each subgroup and then over the first ${scan.subgroups} subgroups' sums.
    let pairBefore = subgroupExclusiveAdd(pairTotal);
    let pairSum = subgroupAdd(pairTotal);
    if (lane == 0u && warp < ${scan.subgroups}u) { warpSums[warp] = pairSum; }
    workgroupBarrier();
    if (pairLid * ${scan.pairs}u < 128u) {
      var first = pairBefore;
      var lows = 0u;
      for (var w = 0u; w < ${scan.subgroups}u; w++) {
        let part = warpSums[w];
        if (w < warp) { first += part; }
        lows += part & 0xffffu;
      }
      for (var c = 0u; c < ${scan.pairs}u; c++) {
        let q = pairLid * ${scan.pairs}u + c;
        if (q < 128u) {
          let high = q + 128u;
          pairs[q >> 1u][q & 1u] = first & 0xffffu;
          pairs[high >> 1u][high & 1u] = lows + (first >> 16u);
          first += pairTotals[c];
        }
      }
    }
    workgroupBarrier();
    ${eachItem(warp.items, `
      ${chunkPlace(warp)}
      if (ranking && p < n) {
        let d = digitOf(keys[i], mask, shift);
        let earlier = (atomicLoad(&warpCounts[warp * 128u + (d & 127u)]) >> ((d >> 7u) * 16u)) & 0xffffu;
        let to = pairs[d >> 1u][d & 1u] + earlier + ranks[i];
        rankKeys[rankAt(to)] = keys[i];${options.hasValues ? `\n        ${carriedArray(options)}[rankAt(to)] = ${values ? 'values[i]' : 'p'};` : ''}
      }
    `)}
    // The next rank tile's chunk in flight while this one is written out.
    ${warpLoads(options, warp, 'sub + RANK')}
    workgroupBarrier();
`;
}

/**
 * `writeNext(digit, start, at, bits, value)`: item `at` of a segment into what digit pass `digit`
 * writes, of the scatter's parity: buffer 0 at digits 0 and 2; buffer 1 at digit 1, the outputs
 * (`writeOut`) at digit 3.
 */
function writeNextWgsl(options: RadixProgramOptions): string {
  const store = (buffer: 'tempA' | 'tempB', half: 0 | 1) =>
    `${buffer}[u.sortKeys${half}At + start + at] = bits;${options.hasValues ? ` ${buffer}[u.sortValues${half}At + start + at] = value;` : ''}`;
  const body = options.digit !== 1 ? store('tempA', 0) : `if (digit == 3u) { writeOut(start, at, bits, value); } else { ${store('tempB', 1)} }`;
  return `fn writeNext(digit: u32, start: u32, at: u32, bits: u32, value: u32) {
  ${body}
}`;
}

/** The ranking subgroups' counts set to zero (before a barrier that precedes the ranking). */
const zeroWarpCounts = (warp: RadixWarpRank) => `for (var c = lid; c < ${warp.subgroups * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }`;

/**
 * The scan of the digits' totals where the warp ranking runs (subgroups of one width): within each
 * subgroup, then over the subgroups' sums, two barriers where the Hillis-Steele scan takes two a
 * step. Leaves \`running\` (the items of smaller digits before this invocation's first) and
 * \`constant\` (one digit holds every item).
 */
function warpScanTotals(warp: RadixWarpRank, workgroupSize: number): string {
  const subgroups = workgroupSize / warp.subgroupSize;
  return `let inSubgroup = subgroupExclusiveAdd(vec2<u32>(sum, everyItem));
  let subgroupSum = subgroupAdd(vec2<u32>(sum, everyItem));
  if (lane == 0u) { pairs[warp] = subgroupSum; }
  workgroupBarrier();
  var running = inSubgroup.x;
  var everyTotal = 0u;
  for (var w = 0u; w < ${subgroups}u; w++) {
    let part = pairs[w];
    if (w < warp) { running += part.x; }
    everyTotal += part.y;
  }
  if (lid == 0u) { pairs[${subgroups}u].y = everyTotal; }
  let constant = workgroupUniformLoad(&pairs[${subgroups}u]).y != 0u;`;
}

/**
 * WGSL: digit d<c>'s total and its items in tiles before this one, added up from the histogram's
 * counts of every tile of the segment (no scan launch ran), ${scanBatch} loads in flight at a time.
 */
function foldedCounts(c: number): string {
  const load = (b: number) => `var n${c}_${b} = 0u;\n      if (t + ${b}u < u.sortTiles) { n${c}_${b} = temp[at${c} + t + ${b}u]; }`;
  return `if (d${c} < 256u) {
    let at${c} = base + d${c} * u.sortTiles;
    for (var t = 0u; t < u.sortTiles; t += ${scanBatch}u) {
      ${scanRange.map(load).join('\n      ')}
      ${scanRange.map((b) => `total${c} += n${c}_${b};\n      earlier${c} += select(0u, n${c}_${b}, t + ${b}u < tile);`).join('\n      ')}
    }
  }`;
}

function scatterMain(options: RadixProgramOptions): string {
  const { hasValues, warpRank: warp } = options;
  const perThread = Math.ceil(256 / options.workgroupSize);
  return `
  let inGroup = workgroupIndex / u.sortTiles;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  let tile = workgroupIndex % u.sortTiles;
  let range = tileRange(s.y, tile);
  if (range.x >= range.y) { return; }
  let start = s.x;
  let mask = s.z;
  let digitPass = u.launchPass & 3u;
  let shift = 8u * digitPass;
  // Where digit d's first item of this tile goes: the totals of smaller digits (a scan over the 256
  // totals, ${perThread} per invocation) plus digit d's items in earlier tiles.
  let base = countsBase(inGroup);
  let totalsAt = base + 256u * u.sortTiles;${warp === undefined ? '' : `
  // The first rank tile's loads go out first: they are in flight through the scan below.
  ${warpSetup(warp)}${warpFirstLoads(options, warp)}`}
  // Digit d's total and its items in earlier tiles, both read before the scan (named registers).
  var sum = 0u;
  var everyItem = 0u;
  ${indices(perThread).map((c) => `let d${c} = lid * ${perThread}u + ${c}u;
  var total${c} = 0u;
  var earlier${c} = 0u;
  ${options.scanInScatter === true ? foldedCounts(c) : `if (d${c} < 256u) { total${c} = temp[totalsAt + d${c}]; earlier${c} = temp[base + d${c} * u.sortTiles + tile]; }`}
  sum += total${c};
  everyItem += select(0u, 1u, total${c} == s.y);`).join('\n  ')}
  ${warp === undefined ? `var running = scanPairs(vec2<u32>(sum, everyItem), lid).x - sum;
  // One digit holds every item of the segment: the pass keeps the order (a copy).
  let constant = workgroupUniformLoad(&pairs[WG - 1u]).y != 0u;` : warpScanTotals(warp, options.workgroupSize)}
  ${indices(perThread).map((c) => `if (d${c} < 256u) { offsets[d${c}] = running + earlier${c}; running += total${c}; }`).join('\n  ')}${warp === undefined ? '' : `
  ${zeroWarpCounts(warp)}`}
  workgroupBarrier();
  if (constant) {
    for (var j = range.x + lid; j < range.y; j += WG) {
      let bits = bitsAt(digitPass, start, j);
      writeNext(digitPass, start, j, bits, ${hasValues ? 'valueAt(digitPass, start, j)' : '0u'});
    }
    return;
  }
  for (var sub = range.x; sub < range.y; sub += RANK) {
    let n = min(RANK, range.y - sub);
${warp === undefined ? splitRank(options) : warpRank(options, warp)}    // The rank tile is stably sorted by the digit: place p of digit d goes to offsets[d] + p - (d's first place)${warp === undefined ? '' : ', which the ranking left in pairs'}.
${warp === undefined ? firstPlaces : ''}    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let bits = rankKeys[rankAt(p)];
        let d = digitOf(bits, mask, shift);
        let to = offsets[d] + p - pairs[d >> 1u][d & 1u];
        let value = ${!hasValues ? '0u' : options.loads === 1 ? 'valueAt(digitPass, start, sub + rankIndex[rankAt(p)])' : 'rankValues[rankAt(p)]'};
        writeNext(digitPass, start, to, bits, value);
      }
    }${warp === undefined ? '' : `
    // The next rank tile's counts start from zero (the placement above was their last reader).
    ${zeroWarpCounts(warp)}`}
    workgroupBarrier();
${warp === undefined ? splitOffsets : warpOffsets}  }`;
}

/**
 * The bindings a radix program adds to its caller's (`temp` and the adapter's arrays): each buffer
 * of the double buffer's own range of temporary storage, for the kernels that read them.
 */
function splitBindings(kernel: RadixKernel): ProgramBinding[] {
  if (kernel === 'scan') return [];
  return Object.entries(radixSplitBindings).map(([name, slots]) => ({ name, access: 'read_write', element: 'u32', tempSlots: slots }));
}

/**
 * A radix program's own declarations and entry-point body (the adapter's WGSL goes before), and the
 * bindings it adds to the caller's ({@link splitBindings}).
 */
export function radixProgramParts(kernel: RadixKernel, options: RadixProgramOptions): { declarations: string; main: string; bindings: ProgramBinding[]; usesSubgroups?: boolean } {
  const shared = common(kernel, options.digit);
  const bindings = splitBindings(kernel);
  const pairs = `var<workgroup> pairs: array<vec2<u32>, ${Math.max(options.workgroupSize, 128)}>;`;
  switch (kernel) {
    case 'histogram':
      return { declarations: `var<workgroup> histogram: array<atomic<u32>, 256>;\n${shared}`, main: histogramMain(options.loads), bindings };
    case 'scan':
      return { declarations: `${pairs}\n${shared}`, main: scanMain, bindings };
    case 'scatter': {
      const warp = options.warpRank;
      const items = radixRankItemsPerInvocation(options);
      const rank = items * options.workgroupSize;
      // One padding word per 32 keeps the invocations' runs of ITEMS places in distinct banks.
      const padded = rank + Math.ceil(rank / 32);
      const declarations = `const ITEMS = ${items}u;
const RANK = ${rank}u;
fn rankAt(p: u32) -> u32 { return p + (p >> 5u); }
var<workgroup> rankKeys: array<u32, ${padded}>;
${options.hasValues ? `// Each rank place's ${options.loads === 1 ? 'index in the rank tile' : 'value'}.\nvar<workgroup> ${carriedArray(options)}: array<u32, ${padded}>;\n` : ''}// Where digit d's next item goes in the segment.
var<workgroup> offsets: array<u32, 256>;
// The scan of the digits' totals${warp === undefined ? ' and the split scans' : ''}; then, as 256 words, each digit's first rank place.
${pairs}${warp === undefined ? '' : `
// Each ranking subgroup's counts of the 256 digits in 16 bits (warpRank), then its first places among each digit's.
var<workgroup> warpCounts: array<atomic<u32>, ${warp.subgroups * 128}>;
// The sums of the digit scan's subgroups.
var<workgroup> warpSums: array<u32, ${digitScanShape(options.workgroupSize, warp.subgroupSize).subgroups}>;`}
fn digitOf(bits: u32, mask: u32, shift: u32) -> u32 { return ((radixOrderedKey(bits) ^ mask) >> shift) & 255u; }
${shared}${options.hasValues ? `
// The value of item j in this digit's pass: from the source (pass 0) or the buffer the previous pass wrote.
fn valueAt(digit: u32, start: u32, j: u32) -> u32 {
${readFrom(options.digit, 'Values', 'sourceValue(start, j)')}
}` : ''}
${writeNextWgsl(options)}`;
      return { declarations, main: scatterMain(options), bindings, usesSubgroups: warp !== undefined };
    }
  }
}
