import type { DeviceArray } from '../../backends/backend.js';
import type { Executor, KernelTable, Launch, SegmentSource, SegmentedProblem, SegmentedRun } from '../../dispatch/problem.js';
import type { ScanValueType } from './order.js';
import { groupLanes, laneItems, tileItems } from './order.js';
import type { ScanPolicy, ScanVariant } from './policy.js';

/*
 * What a scan call adds to the segmented problem (dispatch/problem.ts) that host and kernels read
 * the same way, and the scan's kernel table.
 */

/**
 * Everything the scan kernels need, with every host per-segment array already uploaded. The
 * segmented input is `valuesIn`; `valuesOut` has the same layout (segment i's outputs at its items'
 * positions). `sources` holds `op` and `mode` (option indices) and `initialValue` when given (a value
 * of the scan's type: the kernels read its bits).
 */
export interface ScanProblem extends SegmentedProblem {
  readonly valueType: ScanValueType;
  readonly sources: { readonly op: SegmentSource; readonly mode: SegmentSource; readonly initialValue?: SegmentSource };
  /** Option index -> operator code (order.ts `OpCode`); indices past the end clamp to the last entry. */
  readonly opOfOption: readonly number[];
  /** Option index -> 0 inclusive, 1 exclusive; indices past the end clamp to the last entry. */
  readonly modeOfOption: readonly number[];
  /** Bits of a constant or host uniform initial value (the kernels' baked constant or uniform). */
  readonly initialBits: number | undefined;
  /** f32 sums follow the canonical order (determinism 'run-to-run'); else the backend's fastest. */
  readonly canonical: boolean;
  /** 'tile-scan''s words per store on a GPU: 4 only where every store is a whole vec4 of one invocation (plan.ts `scanStores`). */
  readonly storeWords: 1 | 4;
}

/** The kernels of the scan. */
export type ScanKernelId =
  | 'validate'
  | 'segment-offsets'
  | 'thread'
  | 'workgroup'
  | 'tile-reduce'
  | 'spine-reduce'
  | 'spine-top'
  | 'spine-scan'
  | 'spine-walk'
  | 'spine-lanes'
  | 'tile-scan'
  | 'single-pass';

/** One kernel launch of a scan plan, in order. */
export type ScanLaunch = Launch<ScanKernelId, ScanVariant>;

/** Everything an executor needs for one run of a scan plan. */
export type ScanRun = SegmentedRun<ScanProblem, ScanPolicy, ScanKernelId> & {
  readonly arrays: { readonly valuesIn: DeviceArray; readonly valuesOut: DeviceArray };
};

/** Runs a scan plan's launches on one kind of backend. */
export type ScanExecutor = Executor<ScanRun>;

/** Tiles of the longest segment (at least one). */
export function tilesPerSegment(maxSegmentSize: number): number {
  return Math.max(1, Math.ceil(maxSegmentSize / tileItems));
}

/** Tiles of the tile totals of the longest segment: the upper scan's tiles (at least one). */
export function spineTilesPerSegment(maxSegmentSize: number): number {
  return Math.max(1, Math.ceil(tilesPerSegment(maxSegmentSize) / tileItems));
}

/**
 * How reduce-then-scan turns the tile totals into each tile's carry (the launches between
 * 'tile-reduce' and 'tile-scan'), from the longest segment's tiles and the policy:
 * - 'scan': at most 2048 tiles a segment: 'spine-scan' scans each segment's tile totals in place;
 * - 'walk' (policy `spineCarries` 'walk', up to `spineWorkgroupMaxTiles` tiles): 'spine-walk', one
 *   workgroup per segment scanning its tile totals in place, 2048 at a time;
 * - 'three' ('walk' past `spineWorkgroupMaxTiles`): 'spine-reduce', 'spine-top', 'spine-scan';
 * - 'lanes' (policy `spineCarries` 'parallel', at most `spineCarryTiles` tiles of tile totals):
 *   'spine-lanes', a workgroup per 2048 tile totals in parallel, leaves the parts of the carries
 *   (order.ts): each total's lane prefix p_k in place, each lane's carry from the lanes before it in
 *   its tile of totals, each tile of totals' total; 'tile-scan' adds the carry into a tile of totals
 *   itself from the totals of the tiles of totals before it (at most 8);
 * - 'lanes-top' (more tiles of tile totals): 'spine-lanes', then 'spine-top' scans their totals in
 *   place, from which 'tile-scan' reads the carry into a tile of totals.
 * After 'scan', 'walk' and 'three', tile total t - 1's word holds tile t's carry; after 'lanes' and
 * 'lanes-top', 'tile-scan' puts it together from three words and the carry into the tile of totals.
 * The same additions in the same order (order.ts), so the same bits.
 */
export type SpineForm = 'scan' | 'walk' | 'three' | 'lanes' | 'lanes-top';

/** The spine form of a reduce-then-scan run of this geometry and policy ({@link SpineForm}). */
export function spineForm(problem: { maxSegmentSize: number }, policy: Pick<ScanPolicy, 'spineCarries' | 'spineWorkgroupMaxTiles' | 'spineCarryTiles'>): SpineForm {
  const spineTiles = spineTilesPerSegment(problem.maxSegmentSize);
  if (spineTiles === 1) return 'scan';
  if (policy.spineCarries === 'walk') return tilesPerSegment(problem.maxSegmentSize) <= policy.spineWorkgroupMaxTiles ? 'walk' : 'three';
  return spineTiles <= policy.spineCarryTiles ? 'lanes' : 'lanes-top';
}

/**
 * Tiles one workgroup of the tile launches ('tile-reduce', 'tile-scan') takes, consecutive tiles of
 * one segment: as few as keep about `policy.tileWorkgroups` workgroups busy (at least one).
 */
export function tileSpan(problem: { maxSegments: number; maxSegmentSize: number }, policy: ScanPolicy): number {
  const tiles = tilesPerSegment(problem.maxSegmentSize);
  return Math.min(tiles, Math.max(1, Math.ceil((problem.maxSegments * tiles) / policy.tileWorkgroups)));
}

/** Workgroups per segment of the tile launches. */
export function spansPerSegment(problem: { maxSegments: number; maxSegmentSize: number }, policy: ScanPolicy): number {
  return Math.ceil(tilesPerSegment(problem.maxSegmentSize) / tileSpan(problem, policy));
}

/** Tile totals whose lanes make one group of the scan of tile totals (order.ts): 16 lanes of 8. */
export const carryGroupTiles = groupLanes * laneItems;
/** Tile totals that make one tile of the scan of tile totals (a unit, whose total feeds the level above). */
export const carryUnitTiles = tileItems;
/**
 * The most units before a tile that the single pass reads at once (one invocation each): segments of
 * up to 256 * 2048 tiles (2^30 items; a longer one does not fit one storage binding of 32-bit items).
 */
export const maxCarryUnits = 256;

/** Group totals of the longest segment in the single pass's look-back words. */
export function carryGroupsPerSegment(maxSegmentSize: number): number {
  return Math.ceil(tilesPerSegment(maxSegmentSize) / carryGroupTiles);
}

/** Unit totals of the longest segment in the single pass's look-back words. */
export function carryUnitsPerSegment(maxSegmentSize: number): number {
  return Math.ceil(tilesPerSegment(maxSegmentSize) / carryUnitTiles);
}

/**
 * Words of the single pass's `lookback` slot: the tile counter, then per segment two words (the
 * halves of a published value, each with the status) for each tile total, group total and unit total.
 */
export function lookbackWords(problem: { maxSegments: number; maxSegmentSize: number }): number {
  const entries = tilesPerSegment(problem.maxSegmentSize) + carryGroupsPerSegment(problem.maxSegmentSize) + carryUnitsPerSegment(problem.maxSegmentSize);
  return 1 + 2 * problem.maxSegments * entries;
}

const perSegment = (problem: { maxSegments: number }) => problem.maxSegments;
const perSpan = (problem: { maxSegments: number; maxSegmentSize: number }, policy: ScanPolicy) => problem.maxSegments * spansPerSegment(problem, policy);
const perSpineTile = (problem: { maxSegments: number; maxSegmentSize: number }) => problem.maxSegments * spineTilesPerSegment(problem.maxSegmentSize);
const spineSlots = ['offsets', 'tileTotals', 'spineTotals', 'spineLaneCarries'] as const;
const perPassSpan = (problem: { maxSegments: number; maxSegmentSize: number }, policy: ScanPolicy) => problem.maxSegments * Math.ceil(tilesPerSegment(problem.maxSegmentSize) / policy.singlePassTiles);

/**
 * The scan's kernel table: the slots each kernel binds and its grid, read by the planner (plan.ts)
 * and by both executors.
 *
 * - 'thread': one invocation per segment (workgroupSize segments a workgroup);
 * - 'workgroup': one workgroup per segment, walking its tiles;
 * - 'multi-workgroup': 'tile-reduce' (a workgroup per span of tiles, {@link tileSpan}: their totals), 'spine-reduce' (a workgroup
 *   per tile of tile totals, when a segment has more than 2048 tiles: their totals), 'spine-top' (a
 *   workgroup per segment: the inclusive scan of those, in place), 'spine-scan' (a workgroup per tile
 *   of tile totals: their inclusive scan in place, carried in from 'spine-top'), or instead of those
 *   three 'spine-walk' (a workgroup per segment: its tile totals' scan in place, 2048 at a time, for
 *   segments of at most `spineWorkgroupMaxTiles` tiles), or instead of all of those 'spine-lanes' (a
 *   workgroup per tile of tile totals, in parallel: the parts of every tile's carry, {@link SpineForm})
 *   and, past `spineCarryTiles` tiles of tile totals, 'spine-top'; 'tile-scan' (a workgroup per
 *   span of tiles: the items' scan, carried in from the tile totals' scan); or, with policy `passes` 1
 *   (plan.ts `scanPath`), 'single-pass' instead (a workgroup per span of `singlePassTiles` tiles:
 *   their carries put together from the totals other tiles publish, webgpu/single-pass.ts).
 */
export const scanKernels: KernelTable<Exclude<ScanKernelId, 'validate' | 'segment-offsets'>, ScanProblem, ScanPolicy> = {
  thread: { slots: ['offsets'], grid: (problem, policy) => Math.ceil(problem.maxSegments / policy.workgroupSize) },
  workgroup: { slots: ['offsets'], grid: perSegment },
  'tile-reduce': { slots: spineSlots, grid: perSpan },
  'spine-reduce': { slots: spineSlots, grid: perSpineTile },
  'spine-top': { slots: spineSlots, grid: perSegment },
  'spine-scan': { slots: spineSlots, grid: perSpineTile },
  'spine-walk': { slots: spineSlots, grid: perSegment },
  'spine-lanes': { slots: spineSlots, grid: perSpineTile },
  'tile-scan': { slots: spineSlots, grid: perSpan },
  'single-pass': { slots: ['offsets', 'lookback'], grid: perPassSpan },
};

/*
 * Temporary-storage slots (u32 words), shared by every backend:
 * - `offsets`: maxSegments + 1 segment starts (packed layout with per-segment sizes), written by
 *   'segment-offsets'.
 * - multi-workgroup: `tileTotals`: maxSegments * tilesPerSegment words, segment s's tile t at
 *   s * tilesPerSegment + t: the tile's total ('tile-reduce'), then the inclusive scan of the
 *   totals ('spine-scan'), whose word t - 1 is tile t's carry; `spineTotals` (when tilesPerSegment >
 *   2048): maxSegments * spineTilesPerSegment words, the totals of 2048 tile totals each
 *   ('spine-reduce' or 'spine-lanes'), then their inclusive scan ('spine-top'); 'spine-walk' needs
 *   no `spineTotals`. After 'spine-lanes' (spine forms 'lanes' and 'lanes-top'), `tileTotals` holds
 *   each tile total's lane prefix p_k instead of the scan, and `spineLaneCarries`: maxSegments *
 *   spineTilesPerSegment * 256 words, segment s's tile of totals u's lane l at (s *
 *   spineTilesPerSegment + u) * 256 + l: the carry into the lane from the lanes before it in that
 *   tile of totals, R_g ⊕ q_m (lane 0, which has none: the operator's identity, never read). Sums
 *   are canonical f32 values (a NaN as 0x7fc00000), so both backends hold the same words.
 * - single pass: `lookback` (zeroed by the executor at the start of every run):
 *   {@link lookbackWords} words, word 0 the counter workgroups take their tiles from, then per
 *   segment s, with E = tilesPerSegment + its groups + its units entries, entry e at 1 + 2 (s * E +
 *   e): tile t's total at e = t, group i's total (128 tiles) at tilesPerSegment + i, unit v's (2048
 *   tiles) after the groups. An entry is the low and the high 16 bits of its value, each as
 *   `1 << 16 | half` (0: not published). After a run the counter holds the grid, and every tile
 *   total and every group and unit total that a later tile of its segment reads is published, on
 *   every backend.
 */
