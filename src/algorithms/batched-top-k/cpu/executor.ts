import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import type { TopKExecutor, TopKKernelId, TopKRun } from '../problem.js';
import { TopKContext, type TopKKernelParams } from './common.js';
import {
  radixFilterWorkgroupBytes,
  radixFinalizeWorkgroupBytes,
  radixHistogramWorkgroupBytes,
  runRadixChoose,
  runRadixFilter,
  runRadixFinalize,
  runRadixHistogram,
  runRadixInit,
} from './radix-select.js';
import { reduceWorkgroupBytes, runReduce, runReduceMerge } from './reduce.js';
import { runSingleTile, singleTileWorkgroupBytes } from './single-tile.js';
import { runWeights } from './weights.js';

/** Items a radix histogram/filter launch scans: every key in pass 0, the candidates (read from the device state) after. */
function radixScanItems(grid: number, params: TopKKernelParams, filter = false): number {
  const ctx = params.ctx;
  const perTile = Math.min(ctx.problem.maxSegmentSize, ctx.policy.radixTileItems);
  if ((params.pass === 0 && !filter) || ctx.stateSlot < 0) return grid * perTile;
  const segments = ctx.maxSegments;
  if (segments > 4096) return (grid * perTile) >>> 4;
  const temp = ctx.temp;
  let items = 0;
  for (let s = 0; s < segments; s++) {
    const state = ctx.stateSlot + s * 8;
    if (temp[state + 6] !== 0) continue;
    if (params.pass > 0) items += temp[state + 2 + ((params.pass - 1) & 1)]!;
    // Pass 0's filter reads every key, or only those past the sampled threshold (radix-select.ts).
    else items += (temp[state + 5]! & 2) !== 0 ? temp[state + 3]! : perTile * ctx.tilesPerSegment;
  }
  return items;
}

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
    items: (grid, { ctx }) => grid * Math.min(ctx.problem.maxSegmentSize, ctx.policy.reduceChunkItems),
  },
  'reduce-merge': { body: runReduceMerge, bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => grid * ctx.chunksPerSegment * ctx.kMax * 4 },
  'radix-init': { body: runRadixInit, bytes: () => 16, items: (grid, { ctx }) => grid * (16 + Math.min(8192, ctx.problem.maxSegmentSize >>> 5)) },
  'radix-histogram': { body: runRadixHistogram, bytes: (ctx) => radixHistogramWorkgroupBytes(ctx.policy.radixTileItems), items: radixScanItems },
  'radix-choose': { body: runRadixChoose, bytes: () => 16, items: (grid) => grid * 64 },
  'radix-filter': { body: runRadixFilter, bytes: (ctx) => radixFilterWorkgroupBytes(ctx.policy.radixTileItems), items: (grid, params) => radixScanItems(grid, params, true) },
  'radix-finalize': { body: runRadixFinalize, bytes: (ctx) => radixFinalizeWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => grid * ctx.kMax * 8 },
  // About 40 integer steps per slot for the sum, as many again for the weight.
  weights: { body: runWeights, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.policy.workgroupSize * ctx.kMax * 80 },
};

const topK = cpuExecutor<TopKRun, TopKContext>({
  kernels,
  context: (run) => new TopKContext(run),
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
