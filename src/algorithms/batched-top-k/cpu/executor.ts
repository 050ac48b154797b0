import type { CpuKernel, WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { type CpuBackend, isCpuBackend } from '../../../backends/cpu/cpu-backend.js';
import type { TopKExecutor, TopKKernelId, TopKLaunch, TopKRun } from '../problem.js';
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
import { runSegmentOffsets } from './segment-offsets.js';
import { runSingleTile, singleTileWorkgroupBytes } from './single-tile.js';
import { runValidate } from './validate.js';

type KernelBody = (workgroupId: number, numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams) => void;

/** Each kernel's body and its workgroup memory. */
const kernels: Record<TopKKernelId, { readonly body: KernelBody; readonly bytes: (ctx: TopKContext) => number }> = {
  validate: { body: runValidate, bytes: () => 16 },
  'segment-offsets': { body: runSegmentOffsets, bytes: () => 16 },
  'single-tile': { body: runSingleTile, bytes: (ctx) => singleTileWorkgroupBytes(ctx.policy.tileItems) },
  reduce: { body: runReduce, bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax) },
  'reduce-merge': { body: runReduceMerge, bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax) },
  'radix-init': { body: runRadixInit, bytes: () => 16 },
  'radix-histogram': { body: runRadixHistogram, bytes: () => radixHistogramWorkgroupBytes },
  'radix-choose': { body: runRadixChoose, bytes: () => 16 },
  'radix-filter': { body: runRadixFilter, bytes: (ctx) => radixFilterWorkgroupBytes(ctx.policy.radixTileItems) },
  'radix-finalize': { body: runRadixFinalize, bytes: (ctx) => radixFinalizeWorkgroupBytes(ctx.kMax) },
};

/** Grids the kernels expect, from the problem and policy; a launch with another grid is a plan bug. */
function expectedGrid(launch: TopKLaunch, ctx: TopKContext): number {
  switch (launch.kernel) {
    case 'validate':
    case 'segment-offsets':
      return 1;
    case 'reduce':
      return ctx.maxSegments * ctx.chunksPerSegment;
    case 'radix-histogram':
    case 'radix-filter':
      return ctx.maxSegments * ctx.tilesPerSegment;
    default:
      return ctx.maxSegments;
  }
}

/** The CPU kernel of one launch, named as the launch is counted (`launch.name`). */
export function kernelFor(launch: TopKLaunch, ctx: TopKContext): CpuKernel<TopKKernelParams> {
  const kernel = kernels[launch.kernel];
  if (kernel === undefined) throw new Error(`internal: no CPU kernel for '${String(launch.kernel)}'`);
  const grid = expectedGrid(launch, ctx);
  if (launch.grid !== grid) {
    throw new Error(`internal: launch ${launch.name} (${launch.kernel}) has grid ${launch.grid}; its kernel expects ${grid}`);
  }
  return { name: launch.name, workgroupStorageBytes: kernel.bytes(ctx), run: kernel.body };
}

/**
 * Runs a top-k plan's launches on the CPU emulator, in order, each as a grid of workgroups
 * (`CpuBackend.launch`). Work is done when it returns.
 */
export const cpuTopKExecutor: TopKExecutor = {
  execute(run: TopKRun): void {
    if (!isCpuBackend(run.backend)) throw new Error('internal: the CPU top-k executor got a non-CPU backend');
    const backend: CpuBackend = run.backend;
    const ctx = new TopKContext(run);
    for (const launch of run.launches) {
      backend.launch(kernelFor(launch, ctx), launch.grid, { ctx, pass: launch.pass });
    }
  },
};
