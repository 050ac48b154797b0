import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import { sumOrder } from '../ops.js';
import type { SegmentedReduceExecutor, SegmentedReduceKernelId, SegmentedReduceRun } from '../problem.js';
import { ReduceContext } from './context.js';
import { runChunk, runChunkMerge, runMerge, runSubgroup, runThread, runWorkgroup } from './kernels.js';

/**
 * Each kernel's body, its workgroup memory (none: the CPU keeps lanes in locals) and the items a
 * launch works on (for running it on worker threads).
 */
const kernels: Record<SegmentedReduceKernelId, CpuKernelEntry<ReduceContext>> = {
  ...prologueCpuKernels,
  thread: { body: runThread, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.policy.workgroupSize * Math.min(ctx.maxSegmentSize, ctx.policy.threadMaxItems) },
  subgroup: {
    body: runSubgroup,
    bytes: () => 16,
    items: (grid, { ctx }) => grid * (ctx.policy.workgroupSize / ctx.policy.subgroupSize) * Math.max(1, ctx.maxSegmentSize),
  },
  workgroup: { body: runWorkgroup, bytes: () => 16, items: (grid, { ctx }) => grid * Math.max(1, ctx.maxSegmentSize) },
  chunk: { body: runChunk, bytes: () => 16, items: (grid, { ctx }) => grid * Math.min(ctx.maxSegmentSize, sumOrder.chunkItems) },
  merge: { body: runMerge, bytes: () => 16, items: (grid, { ctx }) => grid * ctx.chunks * 4 },
  'chunk-merge': { body: runChunkMerge, bytes: () => 16, items: (grid, { ctx }) => grid * Math.min(ctx.maxSegmentSize, sumOrder.chunkItems) },
};

const reduce = cpuExecutor<SegmentedReduceRun, ReduceContext>({
  kernels,
  context: (run) => new ReduceContext(run),
  revive: (copy) => ReduceContext.fromWorkerCopy(copy),
  module: import.meta.url,
});

/** Runs reduce plans on the CPU emulator. */
export const cpuSegmentedReduceExecutor: SegmentedReduceExecutor = reduce.executor;

/**
 * A launch of kernel `kernelId` on a worker thread (the worker pool imports this module for it).
 * @internal
 */
export const cpuWorkerLaunch = reduce.cpuWorkerLaunch;
