import { type CpuKernelEntry, cpuExecutor } from '../../../backends/cpu/executor.js';
import { contextPerPlan } from '../../../backends/cpu/segments.js';
import { prologueCpuKernels } from '../../../backends/cpu/prologue.js';
import { buffersPerTeamWorkgroup } from '../problem.js';
import type { BatchedCopyExecutor, BatchedCopyKernelId, BatchedCopyRun } from '../problem.js';
import { CopyContext } from './context.js';
import { runCheckClear, runCheckMark, runCheckReport, runCheckScan, runChunked, runTeam, runWorkgroup } from './kernels.js';

/**
 * The words a copy launch moves at most: what its grid covers, and never more than the plan's bound
 * on the total (many buffers of a small size bound copy little), so a small copy stays on the calling
 * thread.
 */
const wordsMoved = (ctx: CopyContext, covered: number) => Math.min(covered, ctx.run.problem.maxTotalItems);

/**
 * Each kernel's body, its workgroup memory (none) and the items a launch moves (for worker threads).
 * The check kernels stay on the calling thread: their bitmap updates are read-modify-writes.
 */
const kernels: Record<BatchedCopyKernelId, CpuKernelEntry<CopyContext>> = {
  ...prologueCpuKernels,
  'check-clear': { body: runCheckClear, bytes: () => 16 },
  'check-mark': { body: runCheckMark, bytes: () => 16 },
  'check-scan': { body: runCheckScan, bytes: () => 16 },
  'check-report': { body: runCheckReport, bytes: () => 16 },
  team: { body: runTeam, bytes: () => 16, items: (grid, { ctx }) => wordsMoved(ctx, grid * buffersPerTeamWorkgroup(ctx.policy) * Math.max(1, ctx.maxSegmentSize)) },
  workgroup: { body: runWorkgroup, bytes: () => 16, items: (grid, { ctx }) => wordsMoved(ctx, grid * Math.max(1, ctx.maxSegmentSize)) },
  chunked: { body: runChunked, bytes: () => 16, items: (grid, { ctx }) => wordsMoved(ctx, grid * ctx.policy.chunkItems) },
};

const contextOf = contextPerPlan((run: BatchedCopyRun) => new CopyContext(run));

const copy = cpuExecutor<BatchedCopyRun, CopyContext>({
  kernels,
  context: contextOf,
  revive: (copy) => CopyContext.fromWorkerCopy(copy),
  module: import.meta.url,
});

/** Runs copy plans on the CPU emulator. */
export const cpuBatchedCopyExecutor: BatchedCopyExecutor = copy.executor;

/**
 * A launch of kernel `kernelId` on a worker thread (the worker pool imports this module for it).
 * @internal
 */
export const cpuWorkerLaunch = copy.cpuWorkerLaunch;
