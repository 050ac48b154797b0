import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import { tileItems } from '../order.js';
import type { ScanExecutor, ScanKernelId, ScanRun } from '../problem.js';
import { ScanContext } from './context.js';
import { runSinglePass, runSpineLanes, runSpineReduce, runSpineScan, runSpineTop, runSpineWalk, runThread, runTileReduce, runTileScan, runWorkgroup } from './kernels.js';

/** Items a tile launch reads (an estimate, for running it on worker threads): a span of tiles a workgroup. */
const itemsOf = (grid: number, ctx: ScanContext) => grid * Math.min(ctx.maxSegmentSize, ctx.tileSpan * tileItems);

/** Each kernel's body, its workgroup memory and the items a launch works on. */
const kernels: Record<ScanKernelId, CpuKernelEntry<ScanContext>> = {
  ...prologueCpuKernels,
  thread: { body: runThread, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.policy.workgroupSize * Math.max(1, ctx.maxSegmentSize) },
  workgroup: { body: runWorkgroup, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.maxSegmentSize },
  'tile-reduce': { body: runTileReduce, bytes: () => 16, items: (grid, { ctx }) => itemsOf(grid, ctx) },
  'spine-reduce': { body: runSpineReduce, bytes: () => 16, items: (grid) => grid * tileItems },
  'spine-top': { body: runSpineTop, bytes: () => 16 },
  'spine-scan': { body: runSpineScan, bytes: () => 16, items: (grid, { ctx }) => grid * Math.min(ctx.tilesPerSegment, tileItems) },
  'spine-walk': { body: runSpineWalk, bytes: () => 16, items: (_grid, { ctx }) => 2 * ctx.tilesPerSegment },
  'spine-lanes': { body: runSpineLanes, bytes: () => 16, items: (grid) => grid * tileItems },
  'tile-scan': { body: runTileScan, bytes: () => 16, items: (grid, { ctx }) => 2 * itemsOf(grid, ctx) },
  'single-pass': { body: runSinglePass, bytes: () => 16, items: (grid, { ctx }) => 2 * grid * ctx.policy.singlePassTiles * tileItems },
};

const scan = cpuExecutor<ScanRun, ScanContext>({
  kernels,
  context: (run) => new ScanContext(run),
  revive: (copy) => ScanContext.fromWorkerCopy(copy),
  module: import.meta.url,
});

/** Runs scan plans on the CPU emulator. */
export const cpuScanExecutor: ScanExecutor = scan.executor;

/**
 * A launch of kernel `kernelId` on a worker thread (the worker pool imports this module for it).
 * @internal
 */
export const cpuWorkerLaunch = scan.cpuWorkerLaunch;
