import type { WebGpuRuntime } from '../../../backends/webgpu/webgpu-backend.js';
import { type SegmentKernelFacts, type SourceFact, segmentKernelFacts } from '../../../backends/webgpu/segments.js';
import type { MergeLayout } from '../../segmented-sort/problem.js';
import { type BitonicOptions, type RankSortOptions, defaultBitonic } from '../../../backends/webgpu/blocks.js';
import { type RadixWarpRank, radixWarpRankFor, sortRadixLoads } from '../../segmented-sort/webgpu/radix.js';
import { radixFoldsFallback, radixInitParts, radixSampleCap, radixSampleRun, reducePerInvocation } from '../policy.js';
import type { TopKRun } from '../problem.js';

/*
 * The static facts of a top-k run that the WGSL is specialized on, and nothing else: two runs with
 * equal facts share every pipeline. Host values that change between calls (numSegments, kMax, a
 * uniform k, slot offsets, ...) are uniforms; device-only values are read from the run's device block
 * (backends/webgpu/executor.ts).
 */

/** The static facts of a top-k run: the segment facts, with `k` and `selectDirection` among the sources. */
export interface TopKKernelFacts extends SegmentKernelFacts {
  readonly sources: { readonly k: SourceFact; readonly selectDirection: SourceFact };
  readonly keyType: 'f32' | 'i32' | 'u32';
  readonly valueMode: 'none' | 'payload' | 'indices';
  readonly valueType: 'f32' | 'i32' | 'u32';
  readonly sorted: boolean;
  /** Option index -> direction (0 'max', 1 'min'), for option indices from a constant, a uniform or the device. */
  readonly directionOfOption: readonly number[];
  readonly hasSingleTile: boolean;
  readonly hasRadix: boolean;
  readonly tileItems: number;
  readonly reduceChunkItems: number;
  readonly reduceMaxK: number;
  /**
   * The register list a reduce kernel keeps: min(kMax, reduceMaxK) rounded up to a power of two
   * (k is clamped to kMax). A uniform or per-segment k under kMax 1 (greedy decoding) gets a
   * one-entry list; kMax is otherwise a uniform, so at most four reduce pipelines (1, 2, 4, 8).
   */
  readonly reduceListK: number;
  /** Reduce gives each segment one invocation (policy.ts reducePerInvocation). */
  readonly reducePerInvocation: boolean;
  readonly radixTileItems: number;
  /**
   * Samples radix-init's invocations hold each (registers): enough for the largest sample any
   * segment of the run takes (policy.ts radixSample), in steps of 4 so that sizes share pipelines.
   * Sized for the cap instead (32 at workgroups of 256), shorter rows paid for registers they never
   * fill: H200, GPU ms, three alternating rounds (bench/topk-webgpu.ts, 2026-11-28 15:46 UTC), 64x151936
   * k=50 0.0839-0.0855 -> 0.082-0.0831, 32x131072 k=2048 0.0931-0.0934 -> 0.0905-0.0912; rows that
   * fill the cap unchanged (256x262144 k=256 0.248, 1x16M k=100 0.130).
   */
  readonly radixSamplesPerInvocation: number;
  /** radix-init's workgroups a segment (policy.ts radixInitParts): past 1, a long segment's wider sample. */
  readonly radixInitParts: number;
  /** Bits per radix digit. */
  readonly radixBits: number;
  /**
   * Radix-select's filter pass 0 carries its pick among the sampled candidates (problem.radixPick:
   * policy.ts radixPickOf). False: the filter shader has neither the pick's code nor its workgroup
   * memory (the sort's keys and indices), and filter and finalize compile its test as false. On an
   * H200 (GPU ms, 2026-11-29) the pick compiled out took ragged rows with device-only sizes (128x(1..65536)
   * k=512, whose short rows sample nothing) from 0.0855 to 0.078, and uniform long rows, where it
   * runs, from 0.161 to 0.195 (256x262144 k=256). False on plans without radix-select's filter.
   * Init reads it too: where the pick is built, its tile bounds the sample's rank (policy.ts
   * radixSampleMidRank).
   */
  readonly radixPick: boolean;
  /** The fewest invocations a candidate's rank count is split over for the spread pick (policy.radixPickSpread). */
  readonly radixPickSpread: number;
  /** The compaction launches write selections past the tile (radix-plan.ts): finalize leaves them the threshold. */
  readonly radixCompacts: boolean;
  /**
   * Radix-select's pass 0 takes a misleading sampled threshold's histogram in each segment's last
   * workgroup to finish (policy.ts radixFoldsFallback), where the plan has no 'radix-fallback' launch.
   */
  readonly radixFoldedFallback: boolean;
  /** Invocations of a row-radix workgroup (policy.rowRadixWorkgroupSize). */
  readonly rowRadixWorkgroupSize: number;
  /** The device has subgroups (the reduce merge shuffles within them). */
  readonly subgroups: boolean;
  /**
   * The width of every subgroup where the workgroup scans of the radix-select, row-radix and
   * single-tile kernels run within subgroups (backends/webgpu/blocks.ts `inclusiveScanWgsl`):
   * subgroups of one power-of-two width from 4 to 128 dividing both workgroup sizes; undefined
   * elsewhere (the Hillis-Steele scan, two barriers a step). See {@link scanSubgroupWidthFor}.
   */
  readonly scanSubgroupWidth: number | undefined;
  /**
   * The most stages a round of the workgroup bitonic sorts (filter pass 0's pick, finalize,
   * single-tile) runs between barriers: 4 (groups of 16 entries) where kMax is at least 512, else 3
   * (groups of 8). On the H200 (BENCHMARKS.md run 19, GPU ms, groups of 8 -> 16): the indexers
   * (kMax 2048) 0.080 -> 0.076 and the ragged rows (kMax 512) 0.088 -> 0.085 gained; the vocabulary
   * (kMax 50, sorts of a few hundred candidates, which never fill groups of 16) lost, 0.069 -> 0.071,
   * likely to their code in its kernel; the anchor (kMax 256) read 0.162 -> 0.163. Below 512 the
   * kernels are the groups-of-8 ones those figures were measured with.
   */
  readonly sortGroupBits: 3 | 4;
  /** Fewest entries radix-select's workgroup sorts sort by ranks (policy.rankSortMinItems; `rankSortOf`). */
  readonly rankSortMinItems: number;
  /** How the selection sort's radix scatter ranks by warp-level multisplit (segmented-sort/webgpu/radix.ts `radixWarpRankFor`); undefined: four 2-bit splits. */
  readonly radixWarpRank: RadixWarpRank | undefined;
  /** The merge selection sort's tile and block layout (problem.ts selectionMergeLayout); undefined without merge launches. */
  readonly selectionMerge: MergeLayout | undefined;
  /** The radix selection sort's scatter adds up its digits' places from the tiles' counts: no scan launch (segmented-sort/problem.ts `radixScansInScatter`). */
  readonly radixScanInScatter: boolean;
}

/** Direction index of an option index, as the kernels resolve it (indices past the end clamp to the last). */
export function directionOf(directionOfOption: readonly number[], option: number): number {
  const options = directionOfOption.length > 0 ? directionOfOption : [0];
  return options[Math.min(option, options.length - 1)] === 1 ? 1 : 0;
}

/** The facts of a run. */
export function kernelFacts(run: TopKRun, runtime: Pick<WebGpuRuntime, 'subgroups' | 'fixedSubgroupSize'>): TopKKernelFacts {
  const { problem, policy } = run;
  const segments = segmentKernelFacts(run, policy.workgroupSize);
  const valueMode = run.arrays.valuesOut === undefined ? 'none' : problem.valueMode;
  // The selection sort's radix launches (plan.ts selectionSortLaunches) rank in tiles of tileItems, as sorted.ts builds them.
  const sortsSelection = run.launches.some((l) => l.kernel === 'sort-histogram');
  const radixOptions = { hasValues: valueMode !== 'none', workgroupSize: policy.workgroupSize, rankItems: policy.tileItems, loads: sortRadixLoads };
  return {
    ...segments,
    sources: segments.sources as TopKKernelFacts['sources'],
    keyType: problem.keyType,
    valueMode,
    valueType: problem.valueType,
    sorted: problem.sorted,
    directionOfOption: problem.directionOfOption,
    hasSingleTile: run.launches.some((l) => l.kernel === 'single-tile'),
    hasRadix: run.launches.some((l) => l.kernel === 'radix-histogram' || l.kernel === 'row-radix'),
    tileItems: policy.tileItems,
    reduceChunkItems: policy.reduceChunkItems,
    reduceMaxK: policy.reduceMaxK,
    reduceListK: 2 ** Math.ceil(Math.log2(Math.max(1, Math.min(problem.kMax, policy.reduceMaxK)))),
    reducePerInvocation: run.launches.some((l) => l.kernel === 'reduce') && reducePerInvocation(policy, problem.maxSegmentSize),
    radixTileItems: policy.radixTileItems,
    radixSamplesPerInvocation: samplesPerInvocation(problem.maxSegmentSize, policy.workgroupSize),
    radixInitParts: radixInitParts(problem.maxSegmentSize, policy),
    radixBits: policy.radixBits,
    // The plan's choice, not the launches of this run: a run of a prefix of the launches (the twin
    // test's) compiles init as the whole plan does (its sample rank reads the pick's tile).
    radixPick: problem.radixPick,
    radixPickSpread: policy.radixPickSpread,
    radixCompacts: run.launches.some((l) => l.kernel === 'radix-compact-count'),
    // The plan's choice too (a prefix of the launches may end before the fallback's).
    radixFoldedFallback: radixFoldsFallback(problem.maxSegmentSize, policy),
    rowRadixWorkgroupSize: policy.rowRadixWorkgroupSize,
    subgroups: runtime.subgroups,
    scanSubgroupWidth: scanSubgroupWidthFor(runtime, [policy.workgroupSize, policy.rowRadixWorkgroupSize]),
    sortGroupBits: problem.kMax >= 512 ? 4 : 3,
    rankSortMinItems: policy.rankSortMinItems,
    radixWarpRank: sortsSelection ? radixWarpRankFor(radixOptions, runtime.fixedSubgroupSize, run.backend.capabilities.workgroupStorageBytes) : undefined,
    selectionMerge: problem.selectionSort?.variant === 'merge' ? problem.selectionSort.layout : undefined,
    // The plan's choice (a prefix of the launches may end before a scan launch).
    radixScanInScatter: problem.selectionSort?.variant === 'radix' && problem.selectionSort.scanInScatter,
  };
}

/**
 * The subgroup width the kernels' workgroup scans run on (`scanSubgroupWidth`), or undefined: the
 * device has subgroups, all of one width (`fixedSubgroupSize`), a power of two from 4 to 128 that
 * divides each of `workgroupSizes`.
 *
 * H200 (subgroups of 32; bench/topk-webgpu.ts, GPU ms of the call, two rounds in one device call,
 * 2026-12-02, Hillis-Steele / within subgroups): attention 512x(16..8192) k=256 (row-radix)
 * 0.0967 / 0.0925-0.0926, 64x32768 k=2048 (row-radix) 0.0697-0.070 / 0.066-0.0666, 128x4096 k=64
 * (single-tile) 0.0238-0.024 / 0.0227-0.0229, the indexers 64x65536 and 32x131072 k=2048
 * 0.0531-0.0532 / 0.0518-0.0521 and 0.0524-0.0525 / 0.0509-0.051, decoding 1x131072 k=2048
 * 0.0421-0.0426 / 0.0401-0.0409, 1x16M k=100 0.0959-0.0962 / 0.0944-0.0955, the anchor
 * 0.1585-0.159 / 0.1569-0.1579; the vocabulary and the routers level. A first form that added the
 * runs' sums in a loop on every invocation lost on 64x32768 k=2048 (0.070 -> 0.0716: 32 runs of
 * 1024 invocations), so where a subgroup can hold every run's sum it scans them.
 */
export function scanSubgroupWidthFor(runtime: Pick<WebGpuRuntime, 'subgroups' | 'fixedSubgroupSize'>, workgroupSizes: readonly number[]): number | undefined {
  const width = runtime.fixedSubgroupSize;
  if (!runtime.subgroups || width === undefined || width < 4 || width > 128 || (width & (width - 1)) !== 0) return undefined;
  return workgroupSizes.every((size) => size % width === 0) ? width : undefined;
}

/** radix-init's samples per invocation for segments of up to `maxSegmentSize` keys (the sample's size: policy.ts radixSample). */
function samplesPerInvocation(maxSegmentSize: number, workgroupSize: number): number {
  const cap = radixSampleCap(workgroupSize);
  const most = Math.floor(Math.min(cap, Math.max(256, maxSegmentSize >>> 5)) / radixSampleRun) * radixSampleRun;
  return Math.min(Math.ceil(cap / workgroupSize), Math.ceil(most / workgroupSize / 4) * 4);
}

/** How the bitonic sorts of every top-k kernel but row-radix group their entries (backends/webgpu/blocks.ts; `sortGroupBits`). */
export function bitonicOf(facts: Pick<TopKKernelFacts, 'sortGroupBits'>): BitonicOptions {
  return { ...defaultBitonic, maxBits: facts.sortGroupBits };
}

/**
 * Row-radix's bitonic sort: groups of up to 8 entries from 32 groups on (the others': of up to 16,
 * from 128). Its selection (a row's take, often 256) sorts on 1024 invocations, where one stage per
 * barrier paid 36 barriers for 256 entries. H200, GPU ms (2026-11-29, BENCHMARKS.md run 19):
 * attention 512x(16..8192) k=256 0.108 -> 0.096, 64x32768 k=2048 0.070 both; groups of 16 here
 * (an A/B call before it) took 64x32768 k=2048 0.0702 -> 0.0705 and k=4096 0.0828 -> 0.0839.
 */
export const rowRadixBitonic: BitonicOptions = { wideGroups: 32, maxBits: 3 };

/** Entries a bucket of top-k's rank sorts holds at most before they take the bitonic sort instead. */
export const rankSortBucketMax = 32;

/**
 * The rank sort of radix-select's kernels: up to a tile of entries on a workgroup, its buckets
 * counted in the kernel's `localHistogram` (max(256, 2^radixBits) words).
 */
export function rankSortOf(facts: Pick<TopKKernelFacts, 'radixBits' | 'rankSortMinItems' | 'tileItems' | 'workgroupSize'>): RankSortOptions {
  return { perInvocation: Math.ceil(facts.tileItems / facts.workgroupSize), buckets: 'localHistogram', bucketBits: Math.max(8, facts.radixBits), bucketMax: rankSortBucketMax, minCount: facts.rankSortMinItems };
}
