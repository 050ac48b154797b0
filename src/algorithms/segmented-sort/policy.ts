import type { BackendCapabilities } from '../../backends/backend.js';
import { type VariantSelection, type VariantVerdict, checkPolicyNames, checkPositiveIntegers, gpuClass, selectVariant } from '../../dispatch/variants.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import { defaultMergeMinTiles, defaultRadixMinTiles, defaultRadixScanLaunchMinTiles, mergePassWorkgroupBytes, mergePassesFor, mergeTileFor, workgroupRadixBytes } from './problem.js';
import { tileItemsFor } from '../batched-top-k/policy.js';
import { sortRadixLoads } from './webgpu/radix.js';

/** The variants of DeviceSegmentedSort. */
export type SegmentedSortVariant = 'single-tile' | 'merge' | 'workgroup-radix' | 'radix';
/** Every variant, in the order `explain()` lists them. */
export const segmentedSortVariants: readonly SegmentedSortVariant[] = ['single-tile', 'merge', 'workgroup-radix', 'radix'];

/** Policy values: what the kernels of each variant are sized by. */
export interface SegmentedSortPolicy {
  /** Invocations per workgroup. */
  readonly workgroupSize: number;
  /** Most items a single-tile workgroup sorts in workgroup memory (a sort key and an index each, 8 bytes). */
  readonly tileItems: number;
  /**
   * Items each single-tile invocation holds in registers (a power of two, 2 to 32): it sorts them
   * there and merges through workgroup memory log2 of this many bitonic stages at a time, so a tile
   * of n items takes about log2(n)^2 / (2 log2 of this) workgroup barriers instead of log2(n)^2 / 2.
   */
  readonly tileItemsPerInvocation: number;
  /**
   * Loads each single-tile invocation has in flight at once (a power of two, 1 to 16): it requests
   * this many of its keys before storing the first in workgroup memory, and gathers this many
   * outputs' key bits (and payloads) before writing the first; 1 loads one at a time, each waited
   * for. Left out (top-k's selection sort has no single-tile launch): 4, the built-in policies' value.
   * H200 (bench/sort-webgpu.ts --policies, GPU ms, 2026-11-28 11:28 UTC; 1 / 2 / 4 / 8 / 16):
   * 256x4096 0.0508 / 0.0492 / 0.0492 / 0.0495 / 0.0516, 4096x256 0.0325 / 0.0308 / 0.0308 /
   * 0.0311 / 0.0342.
   */
  readonly tileLoadBatch?: number;
  /**
   * Items one radix histogram/scatter workgroup (a tile of a segment) covers, at most (more when
   * `radixMaxTiles` caps the tiles). The scatter ranks its tile in workgroup memory `tileItems` keys
   * at a time (at most 16 per invocation), so a tile longer than that takes several rounds.
   */
  readonly radixTileItems: number;
  /**
   * Most radix tiles one launch covers (`segments * tilesPerSegment`): each tile keeps 256 counts
   * (1 KiB) in temporary storage, so this bounds the counts at 16 MiB; longer segments get longer
   * tiles, and more segments run in groups (launches one after the other, reusing the counts).
   */
  readonly radixMaxTiles: number;
  /**
   * Tiles the radix kernels keep over a batch where they can: a tile grows from `radixTileItems` to
   * two and then four times that while the batch still makes at least this many (problem.ts
   * `tilesPerSegment`). Longer tiles pay the per-tile work (counts, scan entries, the rounds'
   * set-up) fewer times; too few leave multiprocessors idle. Left out (top-k's selection sort): the
   * built-in policies' value, 512.
   */
  readonly radixMinTiles?: number;
  /**
   * Tiles per segment from which the radix scan has a launch of its own (problem.ts
   * `radixScansInScatter`); below, each scatter workgroup adds up its digits' counts over the
   * segment's tiles itself, and a digit pass is two launches. 1: always the launch. Left out: the
   * built-in policies' value (problem.ts `defaultRadixScanLaunchMinTiles`).
   */
  readonly radixScanLaunchMinTiles?: number;
  /**
   * How the radix kernels load, 1 to 3 (webgpu/radix.ts `RadixLoads`): 1 has the scatter gather
   * each value by its index at the write; 2 carries the values, loaded beside their keys, through
   * workgroup memory instead; 3 also has the histogram load eight keys an invocation before
   * counting them. Results are the same for each; the CPU backend has no use for it. Left out
   * (top-k's selection sort): the default, 1. H200 (bench/sort-webgpu.ts --policies and --policy,
   * GPU ms, 2026-11-28 11:28 UTC; 1 / 2 / 3): 64x32768 0.270 / 0.274 / 0.267, 1x16M in fresh
   * processes 2.08 and 2.15 / 2.18 / 2.13; per launch, 3's histogram is faster (16M: 0.045 against
   * 0.059 ms) and its scatter no faster (0.42 against 0.40). No gain, so 1. Since 2026-11-29 every
   * mode loads a ranking lane's keys before its first ballot (webgpu/radix.ts); 1x16M then
   * (bench/webgpu-launch-profile.ts, GPU ms, two rounds): 1.855 with 1, 1.826 with 3 (its
   * histograms 0.013 faster, three of its scatters 0.01 slower): within 2%, left at 1. Since the
   * radix kernels bind each half of the double buffer apart (webgpu/radix.ts `split`), 3 is the
   * default: 1x16M 1.496 -> 1.268 ms, 1024x8192 0.824 -> 0.710 (webgpu/radix.ts `sortRadixLoads`),
   * on the bench's keys of then (419 values repeated); on uniform keys 1 / 2 / 3 took the 16M-key
   * sort 1.538-1.541 / 1.484-1.488 / 1.462-1.464 ms (2026-11-30, BENCHMARKS.md session 31).
   */
  readonly radixLoads?: number;
  /**
   * Items each 'workgroup-radix' invocation ranks per tile (a power of two, 1 to 16): the workgroup
   * sorts its segment tile by tile, `workgroupSize` times this many keys (and values) at a time in
   * workgroup memory (problem.ts `workgroupRadixBytes`).
   *
   * The three 'workgroup-radix' values are in every policy the sort's selector makes; a policy built
   * for top-k's selection sort (batched-top-k/problem.ts selectionSortPolicy), which runs the radix or
   * merge kernels alone, may leave them out.
   */
  readonly workgroupRadixItemsPerInvocation?: number;
  /**
   * Segments past the tile of at most this many keys go to 'merge' (each tile sorted as single-tile
   * sorts a segment, then passes merging runs in pairs); a value within the tile (1) never picks it.
   * Top-k's selection sort leaves it out: the selector then takes the backend's (batched-top-k/problem.ts
   * chooseSelectionSort).
   */
  readonly mergeMaxSegmentItems?: number;
  /**
   * 'merge' sorts and merges tiles of half `tileItems` where the batch makes fewer than this many
   * tiles of `tileItems` (problem.ts `mergeTileFor`): twice the workgroups for few segments. Left out
   * (top-k's selection sort): 128, the built-in policies' value. H200 (bench/sort-webgpu.ts
   * --policies, GPU ms, 2026-11-28 18:36 UTC, two rounds; tiles of 4096 / 2048): 1x65536 (16 tiles)
   * 0.0673 / 0.0590-0.0600, 8x16384 (32) 0.0474 / 0.0427-0.0430, 16x16384 (64) 0.0476 / 0.0436-0.0443,
   * 4x65536 (64) 0.0674 / 0.0607; 32x16384 (128) 0.0482 / 0.0561, 16x65536 (256) 0.122-0.125 /
   * 0.136, 64x32768 (512) 0.201 / 0.221-0.223. Halving again gained nothing (19:15 UTC, two rounds,
   * tiles of 2048 / 1024): 1x65536 0.0592-0.0597 / 0.0596, 8x16384 0.0435-0.0437 / 0.0451-0.0457,
   * 16x16384 0.0436-0.0442 / 0.0548-0.0553, so the tile halves once.
   */
  readonly mergeMinTiles?: number;
  /**
   * Where every segment would take 'merge' three passes or more (the least segment size the host
   * knows past four of its tiles) and the batch holds more than this many keys for certain (the
   * number of segments times that least size), the segments go to 'radix' instead: there radix's
   * digit passes, two launches each (the scan in the scatter below `radixScanLaunchMinTiles`), cost
   * less than merge's passes. Ragged batches keep merge (rows of 1 to cols keys, radix / merge:
   * 32x65536 0.158-0.177 / 0.129-0.130, 128x32768 0.273-0.299 / 0.241-0.243, 64x65536 0.274-0.301 /
   * 0.276-0.277, though 256x65536 0.702 / 0.909 and 512x32768 0.702-0.705 / 0.792). H200
   * (bench/sort-webgpu.ts --variants=radix,merge, GPU ms, f32 keys with indices, 2026-12-02, two
   * rounds; radix / merge): 32x32768 0.096 / 0.102-0.107, 64x32768 0.181-0.182 / 0.201-0.203,
   * 256x32768 0.550-0.551 / 0.770, 16x65536 0.097-0.100 / 0.121-0.126, 32x65536 0.185-0.200 /
   * 0.238; merge kept at 16x32768 (524288 keys) 0.089-0.141 / 0.059-0.105, 1x65536 0.089 / 0.060,
   * and at two passes or fewer: 128x16384 0.182 / 0.168, 8x16384 0.087 / 0.043-0.056, 1024x8192
   * 0.578 / 0.489. Left out (top-k's selection sort): the backend's.
   */
  readonly mergeLongMaxItems?: number;
  /** Segments past the tile of at most this many items go to 'workgroup-radix', however few there are. */
  readonly workgroupRadixSegmentItems?: number;
  /** From this many segments (the host bound) on, 'workgroup-radix' takes segments past the tile of any size. */
  readonly workgroupRadixMinSegments?: number;
  /**
   * From this many segments (the host bound; up to 65535, `sizeOrderMaxSegments`) on, packed segments
   * with per-segment sizes go to the 'single-tile' and 'workgroup-radix' workgroups largest first:
   * 'segment-offsets' also writes their order by size class (dispatch/problem.ts
   * `SegmentedProblem.sizeOrder`), so that a long segment does not start last and run on alone.
   * H200 (bench/sort-webgpu.ts --policies='[{},{"sizeOrderMinSegments":100000}]', GPU ms, f32 keys
   * with indices, each row 1 to cols keys, two rounds, 2026-12-01), by size / in index order:
   * 256x4096 0.0473-0.0478 / 0.0509-0.0515, 512x4096 0.0759-0.076 / 0.0802-0.0803, 1024x2048
   * 0.0689-0.0696 / 0.0806-0.0808, 2048x1024 0.065-0.0652 / 0.0735-0.0738, 4096x1024 0.113 /
   * 0.1352-0.1358; 'workgroup-radix' forced: 256x8192 0.144 / 0.184, 512x16384 0.460-0.461 / 0.560,
   * 256x32768 0.556-0.558 / 0.721-0.722. 128x4096 (128 segments, fewer than the device's workgroup
   * slots) gained nothing (0.0309-0.0313 either way): 256 is the threshold on GPU-class backends;
   * on the others (the CPU emulator, software adapters) it is past the most, so never. Then the order's
   * second walk left out where the sizes are one chunk (webgpu/prologue.ts), three rounds:
   * 256x4096 0.0453-0.0459, 512x4096 0.0738-0.0745, 1024x2048 0.067-0.0674, 2048x1024
   * 0.0616-0.0623, 4096x1024 0.109-0.1091.
   */
  readonly sizeOrderMinSegments?: number;
  /**
   * The size order is used where a 'single-tile' workgroup sorts at most this many segments side by
   * side (4). H200 as above, with segments sharing workgroups: 4096 rows of 1..256 keys (16 a
   * workgroup) 0.0426-0.0428 by size against 0.0375-0.0376, 16384 rows of 1..64 (64 a workgroup)
   * 0.0757-0.0758 against 0.046: the order's walk over that many sizes in 'segment-offsets' costs
   * more than it saves, where the workgroups' work is already even.
   */
  readonly sizeOrderSegmentsPerWorkgroup?: number;
}

/** The most segments the size order takes (its counts are 16 bits: webgpu/prologue.ts). */
export const sizeOrderMaxSegments = 65535;

/** The policy's `sizeOrderSegmentsPerWorkgroup` (measured: see `sizeOrderMinSegments`). */
export const defaultSizeOrderSegmentsPerWorkgroup = 4;


/** The policy's `sizeOrderMinSegments` (measured: see the field). */
export const defaultSizeOrderMinSegments = 256;

/** Single-tile's loads in flight an invocation where the policy leaves them out. */
export const defaultTileLoadBatch = 4;

/**
 * Static limits every built-in policy lies within; `SegmentedSortVariantsFor` reads the same numbers
 * as literal types, so compile-time pruning never rules out what a policy picks.
 */
export const segmentedSortPolicyLimits = {
  /** The smallest `tileItems` of any policy (16 KiB of workgroup memory). */
  minTileItems: 1024,
  /** The largest `tileItems` of any policy (48 KiB or more). */
  maxTileItems: 4096,
  /**
   * Where 'merge' beats both radix variants: segments past the tile of at most 65536 keys. H200
   * (Dawn/Vulkan, bench/sort-webgpu.ts --variants=merge,radix,workgroup-radix, GPU ms, f32 keys with
   * indices, 2026-11-28 18:06 UTC), merge / radix / workgroup-radix: 8x16384 0.048 / 0.137 / 0.193,
   * 1x65536 0.066 / 0.139 / 0.766, 128x16384 0.166 / 0.247 / 0.209, 64x32768 0.200 / 0.248 / 0.422,
   * 1024x8192 0.487 / 0.967 / 0.782, 512 ragged rows of 1..16384 keys 0.346 / 0.655 / 0.552; past it
   * radix wins: 32x131072 0.544 / 0.499, 16x262144 0.623 / 0.517, 1x1048576 0.196 / 0.181, 1x16M
   * 4.16 / 1.81. The tiles' sort is the bulk (64x32768: 0.101 of 0.200 ms; 1x16M: 0.694), and each
   * pass costs about 40% of it (0.038-0.040 ms at 64x32768, 0.29-0.35 at 1x16M,
   * where timing-only builds put a third of a pass in the two searches and a quarter in the
   * invocations' merges), so a segment's twelve passes at 16M lose to radix's four digits.
   * On backends with few workgroup slots (the CPU emulator) merge is never picked by itself: there
   * it lost to both radix variants (bench/sort-cpu.ts --policy='{"mergeMaxSegmentItems":2097152}',
   * 2 shared cores, 2026-11-28 18:27 UTC, two alternating rounds, ms): 16x65536 64.8-69.2 against
   * workgroup-radix's 26.1-28.6, 1x1048576 97.3-101.3 against radix's 28.7-30.4.
   */
  mergeMaxSegmentItems: 65536,
} as const;

/** Merge passes from which a large batch goes to radix instead (policy `mergeLongMaxItems`). */
export const mergeLongMinPasses = 3;

/** `mergeLongMaxItems` of the built-in policies: batches of up to 512K keys keep merge (16x32768). */
export const defaultMergeLongMaxItems = 524288;

/**
 * The policy for a backend's capabilities. The tile is top-k's (`tileItemsFor`: keys and indices,
 * 8 bytes an item, in the workgroup memory the backend has), so a segment that top-k sorts in one
 * tile the sort also does; radix tiles of 8192 items (32 per invocation of 256).
 *
 * Workgroups of 512 invocations where the backend has them, and 16 items per single-tile invocation:
 * the fastest of the combinations measured on an H200 (Dawn/Vulkan, bench/sort-webgpu.ts GPU time,
 * 1M f32 keys with indices, 2026-11). Single-tile, ms for rows x columns of 4096x256 / 256x4096 /
 * 16384x64 / 65536x16: 512 and 8: 0.035 / 0.057 / 0.027 / 0.031; 256 and 8: 0.034 / 0.066 / 0.026 /
 * 0.035; 256 and 16: 0.039 / 0.058 / 0.032 / 0.037; 256 and 4: 0.038 / 0.087 / 0.028 / 0.038;
 * 1024 and 8: 0.035 / 0.059 / 0.025 / 0.050 (a tile of 16 keys fills too few invocations).
 * 2026-11-24, 512 invocations, 8 / 16 items (and 1024x1024): 4096x256 0.0350 / 0.0328, 256x4096
 * 0.0565 / 0.0512, 16384x64 0.0262 / 0.0258, 65536x16 0.0173 / 0.0164, 1024x1024 0.0452 / 0.0414
 * (4 and 32: 256x4096 0.0745 and 0.0564). Radix over 64x32768: 0.418 ms with 512 invocations, 0.567
 * with 256 (the same 4096-item tiles). Radix tiles of 8192 items on the CPU backend, which shares
 * this policy (bench/sort-cpu.ts, f32 keys with indices, 2 shared cores, 2026-11-28, medians of three
 * alternating rounds, 4096 / 8192 items): 16x65536 59.1 / 54.9 ms, 1x1048576 58.5 / 59.9 ms, within
 * the machine's noise. H200, GPU ms, 4096 / 8192 (bench/sort-webgpu.ts, 2026-11-28 11:28 UTC):
 * 64x32768 0.270 / 0.252, 1x16M (fresh processes) 2.08-2.15 / 1.96. So 8192. Longer tiles (12:12
 * UTC, 8192 / 16384 / 32768): 1x16M 1.94 / 1.87 / 1.84, but 64x32768 0.248-0.255 / 0.262 / 0.432
 * (128 and 64 tiles leave the device idle); one size for both stays 8192.
 * 2026-11-30 (bench/sort-webgpu.ts --policies, two rounds; default / 8 items / 32 items / 256
 * invocations / 1024 invocations): 256x4096 0.0492-0.0495 / 0.0557 / 0.055-0.0555 / 0.0518-0.0523 /
 * 0.0515, 512x2048 0.0445 / 0.0501-0.0505 / 0.0502 / 0.0477-0.0481 / 0.0462-0.0467, ragged 512 rows
 * of 1..4096 keys 0.0802 / 0.0903 / 0.090 / 0.0819-0.0823 / 0.0865, 1024x1024 0.0397 / 0.0445 /
 * 0.0451 / 0.0429 / 0.041: the default, fastest on each.
 */
export function segmentedSortPolicyFor(capabilities: BackendCapabilities): Required<SegmentedSortPolicy> {
  const workgroupSize = Math.min(512, capabilities.maxWorkgroupSize);
  return {
    workgroupSize,
    tileItems: tileItemsFor(capabilities.workgroupStorageBytes),
    tileItemsPerInvocation: 16,
    tileLoadBatch: defaultTileLoadBatch,
    radixTileItems: 32 * Math.min(256, capabilities.maxWorkgroupSize),
    radixMaxTiles: 16384,
    radixMinTiles: defaultRadixMinTiles,
    radixScanLaunchMinTiles: defaultRadixScanLaunchMinTiles,
    radixLoads: sortRadixLoads,
    workgroupRadixItemsPerInvocation: workgroupRadixItemsFor(workgroupSize, capabilities.workgroupStorageBytes),
    mergeMaxSegmentItems: !gpuClass(capabilities) ? 1 : segmentedSortPolicyLimits.mergeMaxSegmentItems,
    mergeMinTiles: defaultMergeMinTiles,
    mergeLongMaxItems: defaultMergeLongMaxItems,
    ...workgroupRadixThresholds,
    workgroupRadixMinSegments: !gpuClass(capabilities) ? Math.max(1, capabilities.parallelism) : workgroupRadixThresholds.workgroupRadixMinSegments,
    // The CPU emulator (and a software adapter) never: its threads take runs of workgroups, and in
    // size order a run's segments lie apart (2 threads: 2000 rows of 0..3000 keys 57-80 ms by size
    // against 41-42 in index order).
    sizeOrderMinSegments: gpuClass(capabilities) ? defaultSizeOrderMinSegments : sizeOrderMaxSegments + 1,
    sizeOrderSegmentsPerWorkgroup: defaultSizeOrderSegmentsPerWorkgroup,
  };
}

/**
 * Where 'workgroup-radix' beats 'radix' (one workgroup per segment, one launch, against three
 * launches per digit spread over the whole batch), measured on an H200 (132 SMs; Dawn/Vulkan,
 * bench/sort-webgpu.ts GPU time, f32 keys with indices, each variant forced, 2026-11-23), ms
 * workgroup-radix / radix: 1x8192 0.098 / 0.126, 128x16384 0.21 / 0.41, 96x32768 0.47 / 0.74,
 * 1024x8192 0.79 / 1.70, 512 ragged rows of 1..16384 keys 0.55 / 1.15; but 8x16384 0.19 / 0.13,
 * 32x131072 1.87 / 0.86, 16x262144 3.7 / 0.86, 1x65536 0.77 / 0.144 (and 64x32768 about 0.47 /
 * 0.42). A workgroup sorts a segment at about 14 ns a key while radix takes about 0.2 ns a key of the
 * whole batch, so with one segment per multiprocessor workgroup-radix wins from about 70 segments;
 * a segment of at most 8192 keys takes it about 0.1 ms, less than radix's twelve launches.
 *
 * With few workgroup slots (`parallelism` under the framework's gpuClassMinParallelism, 128: the CPU
 * emulator, whose slots are its threads, or a software adapter) workgroup-radix takes segments of
 * any size from as many segments as slots: each slot then sorts whole segments, with one read for
 * the four digit histograms where radix reads every key once more for each digit's. CPU emulator,
 * 2 cores with another process busy on them, 2026-11-28 16:14 UTC (DeviceSegmentedSort.sort and both
 * downloads, f32 keys with indices, medians of 7 in three alternating rounds), ms radix /
 * workgroup-radix: 2 threads, 16x65536 71.7, 36.5, 28.3 / 25.5, 24.2, 24.6; 4x262144 53.4, 25.8,
 * 27.3 / 22.4, 20.9, 21.3; 2x524288 53.2, 32.7, 24.3 / 25.1, 24.1, 40.5. 1 thread (workers: 0),
 * 16x65536 49.6, 50.8 / 41.8, 45.0; 1x1048576 47.2, 48.9 / 40.6, 40.0. One segment on 2 threads
 * stays with radix, whose launches share each pass between the threads (1x1048576 28.2 against
 * workgroup-radix's one thread).
 */

const workgroupRadixThresholds = { workgroupRadixSegmentItems: 8192, workgroupRadixMinSegments: 80 } as const;

/** The most items per 'workgroup-radix' invocation (a power of two, at most 16) whose workgroup memory, with values, fits the backend's; 1 when none does (then the variant cannot run). */
function workgroupRadixItemsFor(workgroupSize: number, workgroupStorageBytes: number): number {
  let items = 1;
  while (items < 16 && workgroupRadixBytes(workgroupSize, items * 2, true) <= workgroupStorageBytes) items *= 2;
  return items;
}

/** The facts the selector reads: the effective segment-size bounds, after every static and host runtime bound. */
export interface SegmentedSortSelectorFacts {
  readonly segmentSize: Bounds;
  /** The most segments of a call (the host bound; 1 when left out). */
  readonly segments?: number;
}

/** The selector's answer. */
export type SegmentedSortSelection = VariantSelection<SegmentedSortVariant, Required<SegmentedSortPolicy>>;

/**
 * The policy selector: single-tile when every segment fits a tile; otherwise workgroup-radix (one
 * workgroup sorts each segment) when the segments are short enough or many enough to fill the device
 * (`workgroupRadixSegmentItems`, `workgroupRadixMinSegments`), else radix (every digit pass spread
 * over the whole batch). Either leaves the segments that fit a tile to single-tile (plan.ts). A
 * forced variant wins when it is applicable, else throws with the reason.
 */
export function selectSegmentedSortVariant(
  facts: SegmentedSortSelectorFacts,
  capabilities: BackendCapabilities,
  tuning: { variant?: SegmentedSortVariant; policy?: Partial<SegmentedSortPolicy> } = {},
): SegmentedSortSelection {
  const defaults = segmentedSortPolicyFor(capabilities);
  checkPolicyNames(tuning.policy, defaults);
  const policy = { ...defaults, ...tuning.policy } as Required<SegmentedSortPolicy>;
  checkPolicy(policy, capabilities);
  const maxSize = facts.segmentSize.max;
  const tileFits = maxSize <= policy.tileItems;
  const someFit = facts.segmentSize.min <= policy.tileItems;
  const segments = facts.segments ?? 1;
  const memory = workgroupRadixBytes(policy.workgroupSize, policy.workgroupRadixItemsPerInvocation, true);
  const workgroupFits = memory <= capabilities.workgroupStorageBytes;
  const workgroupWins = maxSize <= policy.workgroupRadixSegmentItems || segments >= policy.workgroupRadixMinSegments;
  const mergeTile = mergeTileFor({ maxSegments: segments, maxSegmentSize: maxSize }, policy);
  const mergeBytes = mergePassWorkgroupBytes(mergeTile, policy.workgroupSize, true);
  const mergeRuns = policy.workgroupSize >= 2 && mergeBytes <= capabilities.workgroupStorageBytes;
  const mergePasses = mergePassesFor(maxSize, mergeTile);
  // Every segment three merge passes or more, and more than mergeLongMaxItems keys in all for
  // certain (the least size): radix's digit passes cost less. Ragged batches keep merge, whose
  // passes skip a segment once it is sorted while radix reads every tile the largest size allows.
  const minSize = facts.segmentSize.min;
  const batchItems = segments * minSize;
  const leastPasses = mergePassesFor(minSize, mergeTile);
  const mergeLong = maxSize <= policy.mergeMaxSegmentItems && leastPasses >= mergeLongMinPasses && batchItems > policy.mergeLongMaxItems;
  const mergeWins = mergeRuns && maxSize <= policy.mergeMaxSegmentItems && !mergeLong;
  const mergePreferred = `merge is preferred for segments past the tile of at most mergeMaxSegmentItems ${policy.mergeMaxSegmentItems} keys`;
  const longReason = `segments past the tile that merge would take at least ${leastPasses} passes (>= ${mergeLongMinPasses}) in a batch of at least ${batchItems} keys (> mergeLongMaxItems ${policy.mergeLongMaxItems}): radix's digit passes cost less`;
  const natural: SegmentedSortVariant = tileFits ? 'single-tile' : mergeWins ? 'merge' : mergeLong ? 'radix' : workgroupFits && workgroupWins ? 'workgroup-radix' : 'radix';
  const verdicts: VariantVerdict<SegmentedSortVariant>[] = [
    {
      variant: 'single-tile',
      applicable: tileFits,
      reachable: someFit,
      reason: tileFits
        ? `max segment size ${maxSize} <= tile ${policy.tileItems}`
        : someFit
          ? `max segment size ${maxSize} > tile ${policy.tileItems}; it sorts the segments that fit, ${natural} the rest`
          : `min segment size ${facts.segmentSize.min} > tile ${policy.tileItems}`,
    },
    {
      variant: 'merge',
      applicable: mergeRuns,
      reachable: natural === 'merge',
      reason: !mergeRuns
        ? policy.workgroupSize < 2
          ? 'a merge workgroup needs at least 2 invocations (one searches where its range starts, one where it ends)'
          : `a merge workgroup of ${policy.workgroupSize} invocations over tiles of ${mergeTile} keys needs ${mergeBytes} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`
        : tileFits
          ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
          : mergeWins
            ? `segments longer than a tile, max segment size ${maxSize} <= mergeMaxSegmentItems ${policy.mergeMaxSegmentItems}: each tile of ${mergeTile} keys sorted in workgroup memory, then ${mergePasses} passes merging runs in pairs`
            : mergeLong
              ? longReason
              : `max segment size ${maxSize} > mergeMaxSegmentItems ${policy.mergeMaxSegmentItems}`,
    },
    {
      variant: 'workgroup-radix',
      applicable: workgroupFits,
      reachable: natural === 'workgroup-radix',
      reason: !workgroupFits
        ? `a workgroup of ${policy.workgroupSize} ranking ${policy.workgroupRadixItemsPerInvocation} items each needs ${memory} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`
        : tileFits
          ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
          : mergeWins
            ? mergePreferred
            : mergeLong
              ? longReason
              : workgroupWins
              ? `segments longer than a tile, one workgroup each: max segment size ${maxSize} <= ${policy.workgroupRadixSegmentItems} or ${segments} segments >= ${policy.workgroupRadixMinSegments}`
              : `max segment size ${maxSize} > ${policy.workgroupRadixSegmentItems} with ${segments} segments < ${policy.workgroupRadixMinSegments}: too few workgroups for the device`,
    },
    {
      variant: 'radix',
      applicable: true,
      reachable: natural === 'radix',
      reason: tileFits
        ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
        : mergeLong
          ? longReason
          : natural === 'radix'
          ? `segments longer than a tile, too long and too few for one workgroup each (max segment size ${maxSize} > ${policy.workgroupRadixSegmentItems}, ${segments} segments < ${policy.workgroupRadixMinSegments})`
          : mergeWins
            ? mergePreferred
            : 'segments longer than a tile; workgroup-radix sorts them in one launch',
    },
  ];
  return selectVariant<SegmentedSortVariant, Required<SegmentedSortPolicy>>('segmented sort', verdicts, natural, policy, tuning.variant);
}

function checkPolicy(policy: Required<SegmentedSortPolicy>, capabilities: BackendCapabilities): void {
  checkPositiveIntegers(policy);
  if (policy.workgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} exceeds the backend's maxWorkgroupSize ${capabilities.maxWorkgroupSize}`);
  }
  if (policy.tileItems * 8 + 4096 > capabilities.workgroupStorageBytes && policy.tileItems > tileItemsFor(capabilities.workgroupStorageBytes)) {
    throw new SegkitUsageError(`tuning.policy.tileItems: ${policy.tileItems} items need ${policy.tileItems * 8 + 4096} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`);
  }
  if ((policy.tileItems & (policy.tileItems - 1)) !== 0) throw new SegkitUsageError(`tuning.policy.tileItems: ${policy.tileItems} is not a power of two (the tile's bitonic sort needs one)`);
  const perInvocation = policy.tileItemsPerInvocation;
  if (perInvocation < 2 || perInvocation > 32 || (perInvocation & (perInvocation - 1)) !== 0) {
    throw new SegkitUsageError(`tuning.policy.tileItemsPerInvocation: ${perInvocation} is not a power of two from 2 to 32`);
  }
  if (policy.tileItems % policy.workgroupSize !== 0) throw new SegkitUsageError(`tuning.policy.tileItems: ${policy.tileItems} is not a multiple of workgroupSize ${policy.workgroupSize}`);
  if (policy.radixLoads > 3) throw new SegkitUsageError(`tuning.policy.radixLoads: ${policy.radixLoads} is not 1, 2 or 3`);
  const batch = policy.tileLoadBatch;
  if (batch > 16 || (batch & (batch - 1)) !== 0) throw new SegkitUsageError(`tuning.policy.tileLoadBatch: ${batch} is not a power of two from 1 to 16`);
  const rankItems = policy.workgroupRadixItemsPerInvocation;
  if (rankItems > 16 || (rankItems & (rankItems - 1)) !== 0) {
    throw new SegkitUsageError(`tuning.policy.workgroupRadixItemsPerInvocation: ${rankItems} is not a power of two from 1 to 16`);
  }
}
