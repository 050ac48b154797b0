import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { contextPerPlan } from '../../../backends/cpu/segments.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import { radixSample, radixSampleCap, radixSampleWideOf, radixState, radixStateWords } from '../policy.js';
import type { TopKExecutor, TopKKernelId, TopKRun } from '../problem.js';
import { TopKContext, type TopKKernelParams } from './common.js';
import {
  radixFilterWorkgroupBytes,
  radixFinalizeWorkgroupBytes,
  radixHistogramWorkgroupBytes,
  runRadixFallback,
  runRadixFilter,
  runRadixFilterFinalize,
  runRadixCompactCount,
  runRadixCompactWrite,
  runRadixFinalize,
  runRadixHistogram,
  runRadixInit,
} from './radix-select.js';
import { reduceWorkgroupBytes, runReduce, runReduceChunkMerge, runReduceMerge } from './reduce.js';
import { rowRadixWorkgroupBytes, runRowRadix } from './row-radix.js';
import { runSingleTile, singleTileWorkgroupBytes } from './single-tile.js';
import { runWeights } from './weights.js';
import { runSortHistogram, runSortMergeBlocks, runSortMergePass, runSortScan, runSortScatter } from './sorted.js';
import { radixWorkgroupBytes } from '../../segmented-sort/cpu/radix.js';
import { tileSortCpuWorkgroupBytes } from '../../segmented-sort/cpu/kernels.js';

/** Items a radix pass-0 launch scans: every key of every tile (the fallback only where a sampled threshold misled). */
function radixPassZeroItems(grid: number, params: TopKKernelParams, fallback = false): number {
  const ctx = params.ctx;
  const perTile = Math.min(ctx.problem.maxSegmentSize, ctx.policy.radixTileItems);
  grid = ctx.maxSegments * ctx.tilesPerSegment;
  if (!fallback || ctx.stateSlot < 0) return grid * perTile;
  const segments = ctx.maxSegments;
  if (segments > 4096) return grid * perTile;
  const temp = ctx.temp;
  let misled = 0;
  for (let s = 0; s < segments; s++) {
    const state = ctx.stateSlot + s * radixStateWords;
    if (temp[state + radixState.mode] === 1 && temp[state + radixState.collected]! < ctx.kMax) misled++;
  }
  return misled === 0 ? 0 : Math.ceil((grid * perTile * misled) / segments);
}

/**
 * Work of a radix-init launch, in key reads: zeroing the state and histograms, and the sample's
 * gather and selection (about 8 steps a sampled key; policy.ts radixSample's shape).
 */
function radixInitItems(grid: number, { ctx }: TopKKernelParams): number {
  const size = ctx.problem.maxSegmentSize;
  // The widest sample a segment of that size takes (a take of 1: policy.ts radixSample).
  const sampled = radixSample(size, 1, radixSampleCap(ctx.policy.workgroupSize), 0, false, radixSampleWideOf(ctx.policy))?.m ?? 0;
  return (grid / ctx.radixInitParts) * (16 + ((ctx.radixPasses * ctx.radixDigits) >>> 2) + 8 * sampled);
}

/**
 * Sorting a candidate costs about as much as reading 16 keys (sortByRank: a bucket pass, an
 * insertion and the copies: the best 64 of 224 candidates in ~4 us, 2026-11).
 */
const sortStepsPerCandidate = 16;

/**
 * Work of a radix filter launch, in key reads: the previous digit's candidates (the keys, or those
 * past the sampled threshold, for digit 0), or for digit 0's shortcut (few candidates, ties by
 * index) their sort, unless the collect sorted them (one pass-0 tile per segment).
 */
function radixFilterItems(grid: number, params: TopKKernelParams): number {
  const ctx = params.ctx;
  const segments = ctx.maxSegments;
  if (ctx.stateSlot < 0 || segments > 4096) return grid * Math.min(ctx.problem.maxSegmentSize, ctx.policy.radixTileItems);
  const temp = ctx.temp;
  const pass = params.pass;
  let items = 0;
  for (let s = 0; s < segments; s++) {
    const state = ctx.stateSlot + s * radixStateWords;
    if (pass > 0) items += temp[state + radixState.keptByPass + pass - 1]!;
    else if (temp[state + radixState.mode] !== 1 || temp[state + radixState.collected] === 0) items += ctx.problem.maxSegmentSize;
    else {
      const collected = temp[state + radixState.collected]!;
      const shortcut = ctx.radixPick && !ctx.tiesAsFound && collected <= ctx.policy.tileItems;
      // With one pass-0 tile per segment, the collect took the shortcut already.
      items += shortcut ? (ctx.tilesPerSegment === 1 ? 0 : collected * sortStepsPerCandidate) : collected;
    }
  }
  return items;
}

/**
 * Radix-select launches estimated below this many key reads stay on the calling thread (their items
 * count as 0, so only a backend told to split every launch, parallelThreshold 0, splits them). A
 * launch this short (128x4096 k=64: its largest, pass 0, 512K key reads, ~0.6 ms on one thread) gains
 * at most ~0.3 ms from a worker on a quiet 2-core machine, and on one whose cores other work shares,
 * a worker descheduled while it holds workgroups stalls the launch for milliseconds: bench/topk-cpu.ts
 * --cases=mid-k64 (median of 9, 2026-11-28 16:10 UTC, load average 2.4-2.8, in alternation) ran
 * 3.79, 4.00, 4.55 ms with the default worker against 1.96, 1.70, 1.67 with --workers=0. In one
 * process, in alternation after 12 ms of other work (medians of 60-100 calls, load average 1.5-3.3),
 * the worker won twice (1.05 against 1.35 ms, 1.51 against 1.87) and lost eight times by 0.27-0.51
 * ms (e.g. 1.77 against 1.43, 1.87 against 1.47).
 */
const radixPoolItems = 1 << 20;
const pooled = (items: number) => (items >= radixPoolItems ? items : 0);

/**
 * Each kernel's body, its workgroup memory and the items a launch works on (for running it on worker
 * threads; absent: grid-1 kernels, which stay on the calling thread).
 */
const kernels: Record<TopKKernelId, CpuKernelEntry<TopKContext>> = {
  ...prologueCpuKernels,
  'single-tile': {
    body: runSingleTile,
    bytes: (ctx) => singleTileWorkgroupBytes(ctx.policy.tileItems),
    items: (grid, { ctx }) => grid * 2 * Math.min(ctx.problem.maxSegmentSize, ctx.policy.tileItems),
  },
  reduce: {
    body: runReduce,
    bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax),
    items: (grid, { ctx }) => grid * Math.max(1, ctx.reduceSegmentsPerWorkgroup) * Math.min(ctx.problem.maxSegmentSize, ctx.policy.reduceChunkItems),
  },
  'reduce-chunk-merge': {
    body: runReduceChunkMerge,
    bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax),
    items: (grid, { ctx }) => grid * Math.min(ctx.problem.maxSegmentSize, ctx.policy.reduceChunkItems),
  },
  'reduce-merge': { body: runReduceMerge, bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => grid * ctx.chunksPerSegment * ctx.kMax * 4 },
  'radix-init': { body: runRadixInit, bytes: () => 16, items: (grid, params) => pooled(radixInitItems(grid, params)) },
  'radix-histogram': { body: runRadixHistogram, bytes: (ctx) => radixHistogramWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: (grid, params) => pooled(radixPassZeroItems(grid, params)) },
  'radix-fallback': { body: runRadixFallback, bytes: (ctx) => radixHistogramWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: (grid, params) => pooled(radixPassZeroItems(grid, params, true)) },
  'radix-filter': { body: runRadixFilter, bytes: (ctx) => radixFilterWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: (grid, params) => pooled(radixFilterItems(grid, params)) },
  'radix-filter-finalize': {
    body: runRadixFilterFinalize,
    bytes: (ctx) => Math.max(radixFilterWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), radixFinalizeWorkgroupBytes(ctx.kMax)),
    items: (grid, params) => pooled(radixFilterItems(grid, params) + params.ctx.maxSegments * params.ctx.kMax * 8),
  },
  // Three reads of the row at most (the histogram, the bucket's keys, the collect).
  'row-radix': { body: runRowRadix, bytes: rowRadixWorkgroupBytes, items: (grid, { ctx }) => grid * 3 * ctx.problem.maxSegmentSize },
  'radix-finalize': { body: runRadixFinalize, bytes: (ctx) => radixFinalizeWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => pooled(grid * ctx.kMax * 8) },
  // A selection past the tile in index order, tile by tile (radix-plan.ts): each reads its tile's keys.
  'radix-compact-count': { body: runRadixCompactCount, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.policy.radixTileItems },
  'radix-compact-write': { body: runRadixCompactWrite, bytes: () => 16, items: (grid, { ctx }) => grid * (ctx.policy.radixTileItems + ctx.tilesPerSegment) },
  // Sorted output past a tile: the segmented sort's radix kernels over the selection (cpu/sorted.ts).
  'sort-histogram': { body: runSortHistogram, bytes: () => radixWorkgroupBytes, items: (grid, { ctx }) => grid * Math.ceil((ctx.kMax * 2) / (ctx.selectionSort?.tiles ?? 1)) },
  'sort-scan': { body: runSortScan, bytes: () => radixWorkgroupBytes, items: (grid, { ctx }) => grid * (ctx.selectionSort?.tiles ?? 1) * 512 },
  'sort-scatter': { body: runSortScatter, bytes: () => radixWorkgroupBytes, items: (grid, { ctx }) => grid * Math.ceil((ctx.kMax * 4) / (ctx.selectionSort?.tiles ?? 1)) },
  // Or its merge kernels (a sort of n keys costs about n log n compares; a pass reads and writes each key).
  'sort-merge-blocks': {
    body: runSortMergeBlocks,
    // The selection is sorted in place: a tile going to the outputs is staged.
    bytes: (ctx) => tileSortCpuWorkgroupBytes({ tileItems: ctx.policy.tileItems, inPlace: true }),
    items: (grid, { ctx }) => grid * (ctx.selectionSort?.merge?.blocks.segmentsPerWorkgroup ?? 1) * 12 * (ctx.selectionSort?.merge?.tile ?? 1),
  },
  'sort-merge-pass': { body: runSortMergePass, bytes: () => 0, items: (grid, { ctx }) => grid * 2 * (ctx.selectionSort?.merge?.tile ?? 1) },
  // About 40 integer steps per slot for the sum, as many again for the weight.
  weights: { body: runWeights, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.policy.workgroupSize * ctx.kMax * 80 },
};

const contextOf = contextPerPlan((run: TopKRun) => new TopKContext(run));

const topK = cpuExecutor<TopKRun, TopKContext>({
  kernels,
  context: contextOf,
  revive: (copy) => TopKContext.fromWorkerCopy(copy),
  module: import.meta.url,
});

/** Runs top-k plans on the CPU emulator. */
export const cpuTopKExecutor: TopKExecutor = topK.executor;

/**
 * A launch of kernel `kernelId` on a worker thread (the worker pool imports this module for it):
 * `shared` is a {@link TopKContext.forWorker} copy (structured-cloned, its typed arrays shared with
 * the main thread), `local` the radix pass.
 * @internal
 */
export const cpuWorkerLaunch = topK.cpuWorkerLaunch;
