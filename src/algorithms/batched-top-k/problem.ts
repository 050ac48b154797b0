import type { BackendCapabilities, DeviceArray } from '../../backends/backend.js';
import type { Executor, KernelTable, Launch, SegmentSource, SegmentedProblem, SegmentedRun } from '../../dispatch/problem.js';
import type { KeyType } from './keys.js';
import { type TopKPolicy, type TopKVariant, radixInitParts, reducePerInvocation } from './policy.js';
import { SegkitUsageError } from '../../errors.js';
import { type SegmentedSortPolicy, selectSegmentedSortVariant } from '../segmented-sort/policy.js';
import { type MergeLayout, groupSegments, mergeLayout, radixScanShape, radixScansInScatter, tilesPerSegment } from '../segmented-sort/problem.js';

/*
 * What a top-k call adds to the segmented problem (dispatch/problem.ts) that host and kernels read
 * the same way, and top-k's kernel table.
 */

/**
 * Everything the top-k kernels need, with every host per-segment array already uploaded. The
 * segmented input is `keysIn`; `sources` holds `k` and `selectDirection` (option indices).
 *
 * Conventions every kernel follows (beyond the segmented problem's):
 * - keys are read as u32 bits and ranked by `orderedKey` (keys.ts): larger ordered key first, then
 *   the smaller segment-local index;
 * - `directionOfOption[index]` is 0 for 'max', 1 for 'min' (indices past the end clamp to the last
 *   entry);
 * - under 'trust', k past kMax is clamped, so no write lands outside the outputs.
 */
export interface TopKProblem extends SegmentedProblem {
  readonly keyType: KeyType;
  /** 'payload': copy `valuesIn`; 'indices': segment-local indices; 'none': no values output. */
  readonly valueMode: 'none' | 'payload' | 'indices';
  /** dtype of `valuesOut` when values are written. */
  readonly valueType: 'f32' | 'i32' | 'u32';
  /** Output slots per segment. */
  readonly kMax: number;
  readonly sources: { readonly k: SegmentSource; readonly selectDirection: SegmentSource };
  /** Option index -> 0 ('max') or 1 ('min'). */
  readonly directionOfOption: readonly number[];
  /** Sort each segment's results (best first) in the kernel that selects them. */
  readonly sorted: boolean;
  /**
   * The selection is sorted after radix-select or row-radix by the segmented sort's merge or radix
   * kernels (sorted output past a tile: `sorted` is then false and the selection comes in index
   * order), over segments of at most min(kMax, largest segment) items.
   */
  readonly selectionSort: SelectionSort | undefined;
  /**
   * Tied items of the threshold bucket may be taken in the order the kernels found them instead of
   * the smallest indices first (`tieBreak: 'any'` with `determinism: 'not-guaranteed'`).
   */
  readonly tiesAsFound: boolean;
  /**
   * An unsorted selection may be written in the order the kernels found it instead of a fixed order
   * (`outputOrdering: 'unsorted'` with `determinism: 'not-guaranteed'`).
   */
  readonly orderAsFound: boolean;
  /**
   * Radix-select's filter pass 0 carries its pick among the sampled candidates (policy.ts
   * radixPickOf, from the policy's `radixPick` and the host-known bounds): without it the WGSL
   * filter is built without the pick's code and workgroup memory, and the CPU twin takes the digit
   * passes too. The outputs are the same either way.
   */
  readonly radixPick: boolean;
  /**
   * The routing-weights epilogue ('weights' kernel): `kind` indexes `routingWeightsKinds`
   * (routing.ts), `scaleBits` is the scale's f32 bits. Absent: no weights.
   */
  readonly weights: { readonly kind: number; readonly scaleBits: number } | undefined;
}

/** The kernels of top-k. */
export type TopKKernelId =
  | 'validate'
  | 'segment-offsets'
  | 'single-tile'
  | 'reduce'
  | 'reduce-merge'
  | 'reduce-chunk-merge'
  | 'radix-init'
  | 'radix-histogram'
  | 'radix-fallback'
  | 'radix-filter'
  | 'radix-filter-finalize'
  | 'radix-finalize'
  | 'radix-compact-count'
  | 'radix-compact-write'
  | 'row-radix'
  | 'sort-histogram'
  | 'sort-scan'
  | 'sort-scatter'
  | 'sort-merge-blocks'
  | 'sort-merge-pass'
  | 'weights';

/** One kernel launch of a top-k plan, in order. */
export type TopKLaunch = Launch<TopKKernelId, TopKVariant>;

/** Everything an executor needs for one run of a top-k plan. */
export type TopKRun = SegmentedRun<TopKProblem, TopKPolicy, TopKKernelId> & {
  readonly arrays: {
    readonly keysIn: DeviceArray;
    readonly keysOut: DeviceArray;
    readonly valuesIn: DeviceArray | undefined;
    readonly valuesOut: DeviceArray | undefined;
    readonly weightsOut: DeviceArray | undefined;
  };
};

/** Runs a top-k plan's launches on one kind of backend. */
export type TopKExecutor = Executor<TopKRun>;

const perSegment = (problem: { maxSegments: number }) => problem.maxSegments;
const radixSlots = ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'] as const;
const sortSlots = ['offsets', 'sortCounts', 'sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] as const;
const mergeSortSlots = ['offsets', 'sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] as const;
const sortBuffers = ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] as const;
/*
 * Radix-select's per-segment counters and histograms are the same on every backend after each launch
 * but finalize (counts do not depend on the order of atomic appends); the candidate and selected
 * lists are not (appended in whatever order workgroups ran).
 */
const radixCounts = ['segmentState', 'histogram'] as const;
/** The grid of the launches over a segment's filter tiles (the fallback and the filters). */
const radixFilterGrid = (problem: Pick<TopKProblem, 'maxSegments' | 'maxSegmentSize'>, policy: TopKPolicy) => problem.maxSegments * radixFilterTiles(problem, policy);

/**
 * Top-k's kernel table: the slots each kernel binds and its grid, read by the planner (plan.ts) and
 * by both executors. Reduce runs `chunks` workgroups per segment (or, for segments of at most
 * policy.reduceSmallSegmentItems keys, one invocation per segment); radix pass 0 (histogram) runs
 * `histogramTiles` workgroups per segment, the fallback and filters `filterTiles`.
 */
export const topKKernels: KernelTable<Exclude<TopKKernelId, 'validate' | 'segment-offsets'>, TopKProblem, TopKPolicy> = {
  'single-tile': { slots: ['offsets'], grid: perSegment },
  reduce: {
    slots: ['offsets', 'partials'],
    grid: (problem, policy) =>
      reducePerInvocation(policy, problem.maxSegmentSize) ? Math.ceil(problem.maxSegments / policy.workgroupSize) : problem.maxSegments * reduceChunks(problem.maxSegmentSize, policy),
    identicalSlots: ['partials'],
  },
  'reduce-merge': { slots: ['offsets', 'partials'], grid: perSegment },
  // 'reduce' over several chunks a segment with the merge in the same launch: each chunk workgroup
  // publishes its list in `partials` and counts itself in its segment's word of `arrivals`; the last
  // to arrive merges (policy.ts reduceLastChunkMerges).
  'reduce-chunk-merge': {
    slots: ['offsets', 'partials', 'arrivals'],
    grid: (problem, policy) => problem.maxSegments * reduceChunks(problem.maxSegmentSize, policy),
    identicalSlots: ['partials', 'arrivals'],
  },
  // Up to radixInitWorkgroups a segment (policy.ts radixInitParts): a long segment's wider sample.
  'radix-init': { slots: [...radixSlots, 'sampleMerge'], grid: (problem, policy) => problem.maxSegments * radixInitParts(problem.maxSegmentSize, policy), identicalSlots: radixCounts },
  'radix-histogram': { slots: radixSlots, grid: (problem, policy) => problem.maxSegments * radixHistogramTiles(problem, policy), identicalSlots: radixCounts },
  'radix-fallback': { slots: radixSlots, grid: radixFilterGrid, identicalSlots: radixCounts },
  'radix-filter': { slots: radixSlots, grid: radixFilterGrid, identicalSlots: radixCounts },
  // The last filter with finalize's work in the segment's last workgroup to finish (policy.ts radixFoldsFinalize).
  'radix-filter-finalize': { slots: radixSlots, grid: radixFilterGrid, identicalSlots: radixCounts },
  'radix-finalize': { slots: radixSlots, grid: perSegment },
  // A selection past the tile, in index order by every tile of the segment (radix-plan.ts): each
  // tile's keys above the threshold and equal to it counted, then written at their places.
  'radix-compact-count': { slots: [...radixSlots, 'compactCounts'], grid: (problem, policy) => problem.maxSegments * radixTiles(problem.maxSegmentSize, policy), identicalSlots: ['compactCounts'] },
  'radix-compact-write': { slots: [...radixSlots, 'compactCounts'], grid: (problem, policy) => problem.maxSegments * radixTiles(problem.maxSegmentSize, policy) },
  // One workgroup per segment doing every digit pass over its row (webgpu/row-radix.ts).
  'row-radix': { slots: ['offsets', 'rowCandidates'], grid: perSegment },
  // Sorted output past a tile: the segmented sort's radix kernels over each segment's selection (the
  // grids of one group; plan.ts sizes each launch from the selection's bound).
  'sort-histogram': { slots: sortSlots, grid: (problem, policy) => sortGroup(problem, policy) * sortTiles(problem, policy), identicalSlots: ['sortCounts'] },
  'sort-scan': { slots: sortSlots, grid: (problem, policy) => sortGroup(problem, policy) * radixScanShape(sortTiles(problem, policy), policy.workgroupSize).workgroups, identicalSlots: ['sortCounts'] },
  'sort-scatter': { slots: sortSlots, grid: (problem, policy) => sortGroup(problem, policy) * sortTiles(problem, policy), identicalSlots: sortBuffers },
  // Or the segmented sort's merge kernels: a workgroup per tile of every selection (several selections
  // of one tile to a block workgroup where every selection is one tile).
  'sort-merge-blocks': {
    slots: mergeSortSlots,
    grid: (problem, policy) => {
      const { tilesPerSegment, blocks } = selectionMergeLayout(problem, policy);
      return Math.ceil((problem.maxSegments * tilesPerSegment) / blocks.segmentsPerWorkgroup);
    },
    identicalSlots: sortBuffers,
  },
  'sort-merge-pass': { slots: mergeSortSlots, grid: (problem, policy) => problem.maxSegments * selectionMergeLayout(problem, policy).tilesPerSegment, identicalSlots: sortBuffers },
  // One invocation per segment, after the variant's last launch: it reads keysOut, writes weightsOut.
  weights: { slots: ['offsets'], grid: (problem, policy) => Math.ceil(problem.maxSegments / policy.workgroupSize) },
};

/**
 * The segmented sort's policy for sorting top-k's selection: top-k's workgroup, tile and radix tile
 * (the merge's tiles fit the workgroup memory top-k's single-tile has), the rest the sort's defaults.
 */
export function selectionSortPolicy(policy: TopKPolicy): SegmentedSortPolicy {
  // Radix tiles of one rank tile (the sort's tileItems, top-k's tile), where radix-select's own
  // tiles (halved for its pass 0 where whole tiles give too few workgroups: 2048 keys on an H200's
  // plans below) left each scatter workgroup half a rank tile. H200, GPU ms, sorted top-k
  // (bench/sort-webgpu.ts --topk, 2026-12-01, two rounds; radix-select's tiles / 4096 (one rank
  // tile) / 2048 / 1024): 4x1048576 k=131072 0.247-0.250 / 0.229-0.232 / 0.245-0.248 / 0.294-0.296,
  // 2x2097152 k=500000 0.371-0.372 / 0.316-0.318 / 0.371-0.374 / 0.481, 1x4194304 k=100000,
  // 32x262144 k=100000 and 8x1048576 k=262144 within 1% of each other at the first three. Tiles of
  // two or four (selectionTileGrowth: up to eight) rank tiles while 128 tiles remain (radixMinTiles;
  // the sort's own is 512), so that a
  // scatter workgroup loads a rank tile while it writes the one before (bench/sort-webgpu.ts --topk,
  // 2026-12-01, two rounds; 512 / 256 / 128 / 64): 32x262144 k=100000 0.589 / 0.594-0.596 /
  // 0.570-0.573 / 0.571, 8x1048576 k=262144 0.470-0.475 / 0.460 / 0.464-0.465 / 0.464, 2x2097152
  // k=500000 0.304-0.310 / 0.309-0.314 / 0.302-0.314 / 0.299-0.303, 4x1048576 k=131072 (64 tiles of
  // 8192 at 64) 0.226-0.236 / 0.253-0.263 / 0.226-0.255 / 0.271-0.293.
  return { workgroupSize: policy.workgroupSize, tileItems: policy.tileItems, tileItemsPerInvocation: 8, radixTileItems: policy.tileItems, radixMaxTiles: 16384, radixMinTiles: 128 };
}

/**
 * How a sorted selection past a tile is sorted after it is selected: by the segmented sort's radix
 * programs (12 launches per group of segments) or its merge programs (a block launch, then
 * ceil(log2(tiles)) passes), with their shape over selections of at most the selection bound.
 */
export type SelectionSort =
  | { readonly variant: 'radix'; readonly tiles: number; readonly groupSegments: number; readonly scanInScatter: boolean }
  | { readonly variant: 'merge'; readonly layout: MergeLayout };

/** 'merge''s layout over selections of at most `maxSegmentSize` keys (problem.ts of the sort, `mergeLayout`). */
export function selectionMergeLayout(problem: { maxSegments: number; maxSegmentSize: number }, policy: TopKPolicy): MergeLayout {
  return mergeLayout(problem, selectionSortPolicy(policy));
}

/**
 * The selection sort for selections of at most `selected` keys (past top-k's tile, which is the
 * sort's here) in `maxSegments` segments, and why: merge where the segmented sort's policy picks
 * merge for segments of that size, radix otherwise, unless the policy's `selectionSortVariant`
 * forces one (merge only where its workgroup memory fits). Both backends choose from the
 * capabilities alone, so the CPU emulator given a GPU's chooses as that GPU does.
 */
export function chooseSelectionSort(maxSegments: number, selected: number, policy: TopKPolicy, capabilities: BackendCapabilities): { sort: SelectionSort; why: string } {
  const geometry = { maxSegments, maxSegmentSize: selected };
  const radix = (): SelectionSort => ({ variant: 'radix', ...selectionSortShape(maxSegments, selected, policy) });
  const forced = policy.selectionSortVariant;
  if (forced === 'radix') return { sort: radix(), why: "radix, forced by tuning.policy.selectionSortVariant 'radix'" };
  const sort = selectSegmentedSortVariant({ segmentSize: { min: 0, max: selected }, segments: maxSegments }, capabilities, { policy: selectionSortPolicy(policy) });
  const merge = sort.verdicts.find((v) => v.variant === 'merge')!;
  if (forced === 'merge' && !merge.applicable) throw new SegkitUsageError(`tuning.policy.selectionSortVariant: 'merge' cannot run for these parameters: ${merge.reason}`);
  const natural = sort.variant === 'merge';
  const why = forced === 'merge' ? `merge, forced by tuning.policy.selectionSortVariant 'merge' (${merge.reason})` : `${natural ? 'merge' : 'radix'}, as the segmented sort's policy decides for segments of up to ${selected} keys: ${natural ? sort.why : merge.reason}`;
  return { sort: forced === 'merge' || natural ? { variant: 'merge', layout: selectionMergeLayout(geometry, policy) } : radix(), why };
}

/**
 * The selection sort's radix tiles grow up to eight rank tiles (the sort's own: four) while 128
 * tiles remain. H200, GPU ms (bench/sort-webgpu.ts --topk, 2026-12-01, two rounds; up to four /
 * eight): 32x262144 k=100000 (7 / 4 tiles a segment) 0.545-0.546 / 0.529-0.532; the other shapes
 * keep their tiles (4x1048576 k=131072, 1x4194304 k=100000, 2x2097152 k=500000, 8x1048576 k=262144).
 */
const selectionTileGrowth = 8;

/**
 * Tiles and segments per group of the selection sort, for `selected` items per segment at most, and
 * whether its scatter adds up the tiles' counts itself (no scan launch: segmented-sort/problem.ts
 * `radixScansInScatter`).
 */
export function selectionSortShape(maxSegments: number, selected: number, policy: TopKPolicy): { tiles: number; groupSegments: number; scanInScatter: boolean } {
  const geometry = { maxSegments, maxSegmentSize: selected };
  const sortPolicy = selectionSortPolicy(policy);
  const tiles = tilesPerSegment(geometry, sortPolicy, selectionTileGrowth);
  return { tiles, groupSegments: groupSegments(geometry, sortPolicy, selectionTileGrowth), scanInScatter: radixScansInScatter(tiles, sortPolicy) };
}

function sortTiles(problem: { maxSegments: number; maxSegmentSize: number }, policy: TopKPolicy): number {
  return selectionSortShape(problem.maxSegments, problem.maxSegmentSize, policy).tiles;
}
function sortGroup(problem: { maxSegments: number; maxSegmentSize: number }, policy: TopKPolicy): number {
  return Math.min(problem.maxSegments, selectionSortShape(problem.maxSegments, problem.maxSegmentSize, policy).groupSegments);
}

/**
 * Words of one entry of a chunk's list in 'reduce-chunk-merge''s `partials`: its ordered key and its
 * index, each as two published words (dispatch/published-words.ts, status 1), so the merging
 * workgroup needs no ordering between another workgroup's stores.
 */
export const publishedEntryWords = 4;
/** The status of those published words. */
export const publishedEntryStatus = 1;

/** Reduce workgroups per segment (when it does not run one invocation per segment). */
export function reduceChunks(maxSegmentSize: number, policy: TopKPolicy): number {
  return Math.max(1, Math.ceil(maxSegmentSize / policy.reduceChunkItems));
}

/** Radix pass-0 workgroups (tiles) per segment: the grid of the kernel that reads every key. */
export function radixTiles(maxSegmentSize: number, policy: TopKPolicy): number {
  return Math.max(1, Math.ceil(maxSegmentSize / policy.radixTileItems));
}

/**
 * Radix pass-0 workgroups per segment: policy.radixHistogramWorkgroups spread over the segments, at
 * most one per tile (workgroup w of a segment takes its tiles w, w + this, ...).
 */
export function radixHistogramTiles(problem: Pick<TopKProblem, 'maxSegments' | 'maxSegmentSize'>, policy: TopKPolicy): number {
  return Math.min(radixTiles(problem.maxSegmentSize, policy), Math.max(1, Math.ceil(policy.radixHistogramWorkgroups / Math.max(1, problem.maxSegments))));
}

/**
 * Radix fallback and filter workgroups per segment: policy.radixFilterWorkgroups spread over the
 * segments, at most one per tile (each loops over the tiles of its input).
 */
export function radixFilterTiles(problem: Pick<TopKProblem, 'maxSegments' | 'maxSegmentSize'>, policy: TopKPolicy): number {
  return Math.min(radixTiles(problem.maxSegmentSize, policy), Math.max(1, Math.ceil(policy.radixFilterWorkgroups / Math.max(1, problem.maxSegments))));
}

/*
 * Temporary-storage slots (u32 words unless said), shared by every backend:
 * - `offsets`: maxSegments + 1 segment starts (packed layout with per-segment sizes), written by
 *   'segment-offsets' (exclusive scan of the sizes; entry maxSegments = the total).
 * - reduce: `partials`: maxSegments * chunksPerSegment * kMax pairs (ordered key, index) when a
 *   segment spans several chunks (sentinel pair (0, 0xFFFFFFFF) ranks below every real item).
 *   'reduce-chunk-merge' publishes each pair as {@link publishedEntryWords} words (the key's two,
 *   then the index's), zeroed every run, and counts the chunk workgroups of segment i that are done
 *   in word i of `arrivals` (zeroed every run; it ends at chunksPerSegment for a segment that ran).
 * - radix-select (radix-plan.ts): `segmentState`: maxSegments * 32 words [0 mode (1: a sampled
 *   threshold, 0: none), 1 the threshold T (an ordered key), 2 keys that reached T (appended to
 *   candidates0 by pass 0), 5-7 the compaction's (1 pending, the selection's threshold, the equal
 *   keys taken: policy.ts radixState), 8 + p items selected by digit p, 16 + p candidates kept by
 *   digit p]; `compactCounts` (with the compaction launches): per segment and tile the keys above
 *   the selection's threshold and those equal to it, two words;
 *   `histogram`: maxSegments * passes * 2^radixBits words, one histogram per digit;
 *   `selected`: maxSegments * kMax indices (digit p appends after the items of digits < p);
 *   `candidates0`, `candidates1`: candidate indices, each as long as the keys (a segment's
 *   candidates live at its own start): digit p's filter reads buffer p & 1 (pass 0: the keys that
 *   reached T, or every key) and writes buffer (p + 1) & 1.
 * - row-radix: `rowCandidates`: the ordered keys of a segment's digit-0 threshold bucket when they
 *   outgrow workgroup memory, at the segment's own start (as long as the keys' extent; 4 bytes when
 *   no segment is longer than the workgroup's candidate room).
 * - sorted output past a tile: `sortKeys0/1`, `sortValues0/1` (with values), the double buffer as
 *   long as the outputs (segment i's selection at i * kMax), and for radix its counts `sortCounts`
 *   (segmented-sort/problem.ts).
 */
