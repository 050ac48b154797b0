import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import type { SegmentedSortExecutor, SegmentedSortKernelId, SegmentedSortRun } from '../problem.js';
import { SortContext } from './context.js';
import { runMergeBlocks, runSingleTile, singleTileCpuWorkgroupBytes } from './kernels.js';
import { runMergePass } from './merge.js';
import { radixHistogram, radixScan, radixScatter, radixWorkgroupBytes } from './radix.js';
import { runWorkgroupRadix, workgroupRadixCpuBytes } from './workgroup-radix.js';

/** Items a radix tile launch covers: every segment's share of the host size bound. */
const radixItems = (grid: number, { ctx }: { ctx: SortContext }) => grid * Math.max(1, Math.ceil(ctx.maxSegmentSize / ctx.tiles));

/** Each kernel's body, its workgroup memory and the items a launch works on (for worker threads). */
const kernels: Record<SegmentedSortKernelId, CpuKernelEntry<SortContext>> = {
  ...prologueCpuKernels,
  'single-tile': {
    body: runSingleTile,
    bytes: (ctx) => singleTileCpuWorkgroupBytes(ctx.tileItems),
    // A sort of n items costs about n log n compares.
    items: (grid, { ctx }) => grid * ctx.singleTile.segmentsPerWorkgroup * 12 * ctx.singleTile.tile,
  },
  'merge-blocks': {
    body: runMergeBlocks,
    bytes: (ctx) => singleTileCpuWorkgroupBytes(ctx.tileItems),
    items: (grid, { ctx }) => grid * ctx.merge.blocks.segmentsPerWorkgroup * 12 * ctx.merge.tile,
  },
  // A read and a write per key, and the two searches.
  'merge-pass': { body: runMergePass, bytes: () => 0, items: (grid, { ctx }) => grid * 2 * ctx.merge.tile },
  'radix-histogram': { body: (w, _n, shared, { ctx, pass }) => radixHistogram(ctx, w, shared, pass), bytes: () => radixWorkgroupBytes, items: radixItems },
  'radix-scan': { body: (w, _n, shared, { ctx, pass }) => radixScan(ctx, w, shared, pass), bytes: () => radixWorkgroupBytes, items: (grid, { ctx }) => grid * ctx.tiles * ctx.scanDigits * 2 },
  'radix-scatter': { body: (w, _n, shared, { ctx, pass }) => radixScatter(ctx, w, shared, pass), bytes: () => radixWorkgroupBytes, items: (grid, params) => 2 * radixItems(grid, params) },
  // One read for the histograms and a read and a write per digit pass.
  'workgroup-radix': { body: runWorkgroupRadix, bytes: () => workgroupRadixCpuBytes, items: (grid, { ctx }) => grid * 9 * ctx.maxSegmentSize },
};

const sort = cpuExecutor<SegmentedSortRun, SortContext>({
  kernels,
  context: (run) => new SortContext(run),
  revive: (copy) => SortContext.fromWorkerCopy(copy),
  module: import.meta.url,
});

/** Runs sort plans on the CPU emulator. */
export const cpuSegmentedSortExecutor: SegmentedSortExecutor = sort.executor;

/**
 * A launch of kernel `kernelId` on a worker thread (the worker pool imports this module for it).
 * @internal
 */
export const cpuWorkerLaunch = sort.cpuWorkerLaunch;
