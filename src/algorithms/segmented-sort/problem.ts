import type { DeviceArray } from '../../backends/backend.js';
import type { Executor, KernelTable, Launch, SegmentSource, SegmentedProblem, SegmentedRun } from '../../dispatch/problem.js';
import type { KeyType } from '../batched-top-k/keys.js';
import type { SegmentedSortPolicy, SegmentedSortVariant } from './policy.js';

/*
 * What a sort call adds to the segmented problem (dispatch/problem.ts), and the sort's kernel table.
 */

/**
 * Everything the sort kernels need. The segmented input is `keysIn`; `sources` holds `order`
 * (option indices). Outputs have the input's layout: item j of segment i goes to `start(i) + j`.
 *
 * Conventions every kernel follows (beyond the segmented problem's):
 * - a key is ranked by its sort key (keys.ts `sortKey`), then by its segment-local index, so the
 *   sort is stable; outputs carry the input's bits;
 * - `orderOfOption[index]` is 0 for 'ascending', 1 for 'descending' (indices past the end clamp to
 *   the last entry);
 * - with single-tile's launch beside radix's or workgroup-radix's in a plan, single-tile sorts the
 *   segments of at most `tileItems` items and the other variant the longer ones (a plan never holds
 *   both radix and workgroup-radix).
 */
export interface SegmentedSortProblem extends SegmentedProblem {
  readonly keyType: KeyType;
  /** 'payload': move `valuesIn` with the keys; 'indices': segment-local indices (an argsort); 'none': keys only. */
  readonly valueMode: 'none' | 'payload' | 'indices';
  /** dtype of `valuesOut` when values are written. */
  readonly valueType: 'f32' | 'i32' | 'u32';
  readonly sources: { readonly order: SegmentSource };
  /** Option index -> 0 ('ascending') or 1 ('descending'). */
  readonly orderOfOption: readonly number[];
  /** Radix tiles per segment (1 when the plan has no radix launches). */
  readonly tilesPerSegment: number;
  /** Segments of one radix group (launches of group g cover segments [g * groupSegments, (g + 1) * groupSegments)). */
  readonly groupSegments: number;
  /** The least segment size the host knows (host values, or host bounds; else the static bounds): webgpu/tile-radix.ts `tileRadixFor` reads it. */
  readonly leastSegmentSize: number;
}

/** The kernels of the sort. */
export type SegmentedSortKernelId = 'validate' | 'segment-offsets' | 'single-tile' | 'merge-blocks' | 'merge-pass' | 'radix-histogram' | 'radix-scan' | 'radix-scatter' | 'workgroup-radix';

/** One kernel launch of a sort plan, in order. */
export type SegmentedSortLaunch = Launch<SegmentedSortKernelId, SegmentedSortVariant>;

/** Everything an executor needs for one run of a sort plan. */
export type SegmentedSortRun = SegmentedRun<SegmentedSortProblem, SegmentedSortPolicy, SegmentedSortKernelId> & {
  readonly arrays: { readonly keysIn: DeviceArray; readonly keysOut: DeviceArray; readonly valuesIn: DeviceArray | undefined; readonly valuesOut: DeviceArray | undefined };
};

/** Runs a sort plan's launches on one kind of backend. */
export type SegmentedSortExecutor = Executor<SegmentedSortRun>;

/** Radix passes: 8-bit digits of a 32-bit sort key, least significant first. */
export const radixPasses = 4;

/**
 * Every built-in policy's `radixMinTiles`. H200 (bench/sort-webgpu.ts --policies, GPU ms, 2026-11-28
 * 12:12 UTC), radix tiles of 8192 / 16384 / 32768 items: 1x16M (2048 / 1024 / 512 tiles) 1.94 / 1.87 /
 * 1.84, 64x32768 (256 / 128 / 64 tiles) 0.248-0.255 / 0.262 / 0.432. Down to 512 tiles a longer tile
 * was faster, below 256 slower.
 */
export const defaultRadixMinTiles = 512;

/**
 * Radix tiles per segment: enough for `radixTileItems` items each, or two or four (up to `growth`)
 * times that while the batch keeps `radixMinTiles` tiles, within `radixMaxTiles` over all segments.
 * Tile t of a segment of n items covers items [t * c, min((t + 1) * c, n)), c = ceil(n / tiles).
 */
export function tilesPerSegment(problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy, growth = 4): number {
  const segments = Math.max(1, problem.maxSegments);
  const minTiles = policy.radixMinTiles ?? defaultRadixMinTiles;
  let tileItems = policy.radixTileItems;
  while (tileItems < growth * policy.radixTileItems && segments * Math.ceil(problem.maxSegmentSize / (2 * tileItems)) >= minTiles) tileItems *= 2;
  const wanted = Math.ceil(problem.maxSegmentSize / tileItems);
  return Math.max(1, Math.min(wanted, Math.floor(policy.radixMaxTiles / segments)));
}

/**
 * Every built-in policy's `radixScanLaunchMinTiles`: segments of fewer tiles have no scan launch.
 * H200, GPU ms (bench/sort-webgpu.ts --variants=radix --topk, 2026-12-01, two rounds; a scan launch
 * always (1) / from 33 / 65 / 129 tiles): sorted top-k 32x262144 k=100000 (7 tiles a segment)
 * 0.566-0.569 / 0.549-0.550 / 0.547-0.550 / 0.548-0.549, 8x1048576 k=262144 (16 tiles) 0.460-0.461 /
 * 0.429 / 0.429-0.430 / 0.429-0.430, 1x4194304 k=100000 (25 tiles) 0.180-0.194 / 0.160-0.161 /
 * 0.161-0.177 / 0.160-0.164, 2x2097152 k=500000 (123 tiles) 0.296-0.305 / 0.307 / 0.305-0.307 /
 * 0.336-0.340; the sort's radix forced over 64x32768 (4 tiles) 0.197-0.199 / 0.183 / 0.182-0.183 /
 * 0.182-0.183; 1x16M (512 tiles) unchanged. A scatter workgroup adds up 256 x tiles counts where
 * the launch reads them once: from about a hundred tiles that costs more than the launch.
 */
export const defaultRadixScanLaunchMinTiles = 33;

/**
 * Whether a radix pass over segments of `tiles` tiles leaves the scan to the scatter: each scatter
 * workgroup adds up, for each digit, the segment's tile counts (the digit's total) and those of the
 * tiles before its own, as the scan would have left them, so a digit pass is two launches. A
 * scatter workgroup then reads 256 x tiles counts, where the scan launch reads them once: worth it
 * only while that launch's fixed cost is most of its time.
 */
export function radixScansInScatter(tiles: number, policy: Pick<SegmentedSortPolicy, 'radixScanLaunchMinTiles'>): boolean {
  return tiles < (policy.radixScanLaunchMinTiles ?? defaultRadixScanLaunchMinTiles);
}

/** Segments one radix group covers: as many as `radixMaxTiles` tiles hold. */
export function groupSegments(problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy, growth = 4): number {
  return Math.max(1, Math.floor(policy.radixMaxTiles / tilesPerSegment(problem, policy, growth)));
}

/**
 * A radix launch's `pass` word: the group and the digit pass (`group * radixPasses + digit`), so that
 * a kernel reads both from the one per-launch value every backend passes.
 */
export const radixLaunchPass = (group: number, digit: number) => group * radixPasses + digit;

/**
 * Tile counts each invocation of the radix scan adds up for its digit (a run of at most this many
 * tiles, or more past this many times workgroupSize tiles): 2. Each invocation reads its run twice
 * (its sum, then each tile's count before the scan's result is written over it), one load at a
 * time, so the run's length was the scan's time: one 16M-key segment's 512 tiles at 16 counts a
 * lane (16 workgroups) took 0.0189 ms a scan launch on an H200, at 2 (128 workgroups) 0.0105, and
 * the sort 1.056 -> 1.023 ms (4 counts: 1.028); top-k's 4x1048576 k=131072 selection sort 0.199-0.201
 * -> 0.189-0.191 (bench/sort-webgpu.ts, BENCHMARKS.md session 40).
 */
export const radixScanTilesPerThread = 2;

/**
 * How the radix scan splits a segment's counts over workgroups: `threadsPerDigit` invocations scan
 * one digit's tile counts (each a run of at most {@link radixScanTilesPerThread} tiles, or more past
 * that many times workgroupSize tiles), `digitsPerWorkgroup` digits to a workgroup, `workgroups`
 * workgroups per segment. The WGSL computes the same numbers (webgpu/radix.ts `scanMain`); the CPU
 * twin covers the same digits per workgroup.
 */
export function radixScanShape(tiles: number, workgroupSize: number): { threadsPerDigit: number; digitsPerWorkgroup: number; workgroups: number } {
  let threadsPerDigit = 1;
  while (threadsPerDigit * radixScanTilesPerThread < tiles && threadsPerDigit < workgroupSize) threadsPerDigit *= 2;
  if (threadsPerDigit > workgroupSize) threadsPerDigit = workgroupSize;
  const digitsPerWorkgroup = Math.max(1, Math.min(256, Math.floor(workgroupSize / threadsPerDigit)));
  return { threadsPerDigit, digitsPerWorkgroup, workgroups: Math.ceil(256 / digitsPerWorkgroup) };
}

/**
 * Words of the counts slot for `segments` segments of `tiles` tiles: per segment, 256 digits x tiles
 * counts (digit-major, so one digit's tiles are adjacent) and the 256 digit totals.
 */
export function radixCountsWords(segments: number, tiles: number): number {
  return segments * (tiles + 1) * 256;
}

/**
 * 'merge': the merge passes a segment of `size` keys takes after its tiles are sorted, with tiles of
 * `tile` keys ({@link mergeTileFor}): pass p merges runs of tile * 2^p keys in pairs, so
 * ceil(log2(tiles)) of them (none for a segment within one tile, whose block launch writes the
 * outputs).
 */
export function mergePassesFor(size: number, tile: number): number {
  let passes = 0;
  while (tile * 2 ** passes < size) passes++;
  return passes;
}

/** Tiles of `tileItems` keys in the host size bound (at least 1). */
const tilesIn = (maxSegmentSize: number, tileItems: number) => Math.max(1, Math.ceil(maxSegmentSize / tileItems));

/** Every built-in policy's `mergeMinTiles`: see policy.ts. */
export const defaultMergeMinTiles = 128;

/**
 * 'merge''s tile (the keys the block launch sorts in one workgroup, and the places of one merge
 * workgroup): `tileItems`, or half of it where the batch makes fewer than `mergeMinTiles` tiles of
 * `tileItems` (and half still gives every invocation a key), so that few segments get twice the
 * workgroups.
 */
export function mergeTileFor(problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy): number {
  const tiles = Math.max(1, problem.maxSegments) * tilesIn(problem.maxSegmentSize, policy.tileItems);
  const half = policy.tileItems / 2;
  return tiles < (policy.mergeMinTiles ?? defaultMergeMinTiles) && half >= policy.workgroupSize && Number.isInteger(half / policy.workgroupSize) ? half : policy.tileItems;
}

/**
 * Bytes of workgroup memory of a 'merge-pass' workgroup (webgpu/merge.ts declares exactly these): the
 * range's keys and values, one padding word per 32, a verdict per invocation, a few words.
 */
export function mergePassWorkgroupBytes(tile: number, workgroupSize: number, hasValues: boolean): number {
  const padded = tile + Math.ceil(tile / 32);
  return 4 * ((hasValues ? 2 : 1) * padded + workgroupSize + 16);
}

/** How 'merge' lays a run out: see {@link mergeLayout}. */
export interface MergeLayout {
  /** Keys of a tile ({@link mergeTileFor}). */
  readonly tile: number;
  /** Workgroups per segment of its launches: tiles in the host size bound. */
  readonly tilesPerSegment: number;
  /** The block launch's single-tile layout (single-tile's over tiles of `tile` keys). */
  readonly blocks: SingleTileShape;
}

/** 'merge''s layout for a problem, the same on every backend (it sets the grids). */
export function mergeLayout(problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy): MergeLayout {
  const tile = mergeTileFor(problem, policy);
  return { tile, tilesPerSegment: tilesIn(problem.maxSegmentSize, tile), blocks: singleTileShape(problem.maxSegmentSize, { ...policy, tileItems: tile }) };
}

/** How 'single-tile' lays its segments out: see {@link singleTileShape}. */
export interface SingleTileShape {
  /** Items of workgroup memory per segment: the size bound rounded up to a power of two (2 to `tileItems`). */
  readonly tile: number;
  /** Items each invocation sorts in registers: the policy's, at most `tile`. */
  readonly itemsPerInvocation: number;
  /** Segments one workgroup sorts side by side (a power of two). */
  readonly segmentsPerWorkgroup: number;
}

/** Workgroup memory bytes of a single-tile WGSL workgroup: keys and indices (a padding word every 16), and three words per segment. */
export function singleTileWorkgroupBytes(shape: SingleTileShape): number {
  const items = shape.tile * shape.segmentsPerWorkgroup;
  return 8 * (items + (items >> 4)) + 12 * shape.segmentsPerWorkgroup + 16;
}

/**
 * The single-tile layout for segments of at most `maxSegmentSize` items, the same on every backend
 * (it sets the grid): a short segment gets a short tile, and segments whose tiles are short share a
 * workgroup (as many as keep every invocation busy, within the memory of one `tileItems` tile), so a
 * batch of 256-item rows runs 16 rows to a workgroup instead of one 4096-item tile each.
 */
export function singleTileShape(maxSegmentSize: number, policy: SegmentedSortPolicy): SingleTileShape {
  let tile = 2;
  while (tile < maxSegmentSize && tile < policy.tileItems) tile *= 2;
  const itemsPerInvocation = Math.min(policy.tileItemsPerInvocation, tile);
  // tileItems * 8 + 4096 bytes lie within the backend's workgroup memory (policy.ts checks it).
  const budget = policy.tileItems * 8 + 4096;
  let segmentsPerWorkgroup = 1;
  for (;;) {
    const next = { tile, itemsPerInvocation, segmentsPerWorkgroup: segmentsPerWorkgroup * 2 };
    if ((next.segmentsPerWorkgroup * tile) / itemsPerInvocation > policy.workgroupSize || next.segmentsPerWorkgroup * tile > policy.tileItems || singleTileWorkgroupBytes(next) > budget) break;
    segmentsPerWorkgroup = next.segmentsPerWorkgroup;
  }
  return { tile, itemsPerInvocation, segmentsPerWorkgroup };
}

/**
 * Bytes of workgroup memory of a 'workgroup-radix' workgroup of `workgroupSize` invocations ranking
 * `itemsPerInvocation` items each (webgpu/workgroup-radix.ts declares exactly these arrays): the rank
 * tile's keys, one padding word per 32, in an array that also holds eight packed 16-bit counters per
 * invocation (one padding word per 32) while the keys are in registers; the tile's values; the four
 * digit histograms; two copies of the 256 digit places; each digit's first place in the tile; the
 * scan's two buffers; a few words.
 */
export function workgroupRadixBytes(workgroupSize: number, itemsPerInvocation: number, hasValues: boolean): number {
  const tile = workgroupSize * itemsPerInvocation;
  const padded = (n: number) => n + Math.ceil(n / 32);
  return 4 * (Math.max(padded(tile), padded(8 * workgroupSize)) + (hasValues ? padded(tile) : 0) + 1024 + 512 + 256 + 2 * workgroupSize + 8);
}

/** The grids of one radix group (the largest; a last, partial group launches fewer). */
const groupOf = (problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy) => Math.min(problem.maxSegments, groupSegments(problem, policy));
const perTile = (problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy) => groupOf(problem, policy) * tilesPerSegment(problem, policy);
const radixSlots = ['offsets', 'sortCounts', 'sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] as const;
const mergeSlots = ['offsets', 'sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] as const;
/** 'merge' launches: a workgroup per tile of every segment (its keys in the block launch, its output range in a merge pass). */
const mergeGrid = (problem: { maxSegments: number; maxSegmentSize: number }, policy: SegmentedSortPolicy) => problem.maxSegments * mergeLayout(problem, policy).tilesPerSegment;

/**
 * The sort's kernel table: the slots each kernel binds and its grid, read by the planner and by both
 * executors. Every slot is written the same way on every backend (the twin test compares them).
 *
 * Temporary-storage slots (u32 words):
 * - `offsets`: segment starts (packed layout with per-segment sizes), from 'segment-offsets';
 * - `sortCounts`: radixCountsWords(groupSegments, tiles) (one group's), per segment `(tiles + 1) * 256`
 *   words: at `d * tiles + t` the count of digit d in tile t (radix-histogram), then the number of items
 *   of digit d in tiles before t (radix-scan); at `256 * tiles + d` the total of digit d (radix-scan).
 *   The scatter adds the totals of smaller digits (its own scan over the 256 totals);
 * - `sortKeys0`/`sortKeys1`, `sortValues0`/`sortValues1`: the double buffer, as long as the segments' extent (a
 *   segment's items at its own start): radix pass p (< 3) writes buffer p % 2 with the key bits and
 *   values (payloads or index values) in the order of digits 0..p; pass 3 writes the outputs.
 *   'workgroup-radix' skips the passes whose digit is the same for every item of the segment: its
 *   k-th pass that runs writes buffer k % 2 in the order of the digits so far, its last the outputs
 *   (no pass runs: it copies the keys to the outputs).
 *   'merge' writes them as key bits and values (payloads, or segment-local indices as u32): the
 *   block launch sorts each tile into buffer 0, merge pass p reads buffer p % 2 and writes buffer
 *   (p + 1) % 2, and a segment's last pass (mergePassesFor) writes the outputs instead; later passes
 *   skip it.
 */
export const segmentedSortKernels: KernelTable<Exclude<SegmentedSortKernelId, 'validate' | 'segment-offsets'>, SegmentedSortProblem, SegmentedSortPolicy> = {
  'single-tile': { slots: ['offsets'], grid: (problem, policy) => Math.ceil(problem.maxSegments / singleTileShape(problem.maxSegmentSize, policy).segmentsPerWorkgroup) },
  'merge-blocks': {
    slots: mergeSlots,
    // Several segments to a workgroup only where every segment is one tile (singleTileShape).
    grid: (problem, policy) => Math.ceil(mergeGrid(problem, policy) / mergeLayout(problem, policy).blocks.segmentsPerWorkgroup),
    identicalSlots: ['sortKeys0', 'sortValues0'],
  },
  'merge-pass': { slots: mergeSlots, grid: mergeGrid, identicalSlots: ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] },
  'radix-histogram': { slots: radixSlots, grid: perTile, identicalSlots: ['sortCounts'] },
  'radix-scan': { slots: radixSlots, grid: (problem, policy) => groupOf(problem, policy) * radixScanShape(tilesPerSegment(problem, policy), policy.workgroupSize).workgroups, identicalSlots: ['sortCounts'] },
  'radix-scatter': { slots: radixSlots, grid: perTile, identicalSlots: ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] },
  'workgroup-radix': { slots: ['offsets', 'sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'], grid: (problem) => problem.maxSegments, identicalSlots: ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] },
};
