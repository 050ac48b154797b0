import type { CpuKernel, CpuKernelParallel, CpuWorkerLaunch, WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { type CpuBackend, isCpuBackend } from '../../../backends/cpu/cpu-backend.js';
import type { TopKExecutor, TopKKernelId, TopKLaunch, TopKRun } from '../problem.js';
import { radixStateWords } from '../policy.js';
import { TopKContext, type TopKKernelParams } from './common.js';
import {
  radixFilterWorkgroupBytes,
  radixFinalizeWorkgroupBytes,
  radixHistogramWorkgroupBytes,
  runRadixFallback,
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

/** Items a radix pass-0 launch scans: every key of every tile (the fallback only where a sampled threshold misled). */
function radixPassZeroItems(grid: number, params: TopKKernelParams, fallback = false): number {
  const ctx = params.ctx;
  const perTile = Math.min(ctx.problem.maxSegmentSize, ctx.policy.radixTileItems);
  if (!fallback || ctx.stateSlot < 0) return grid * perTile;
  grid = ctx.maxSegments * ctx.tilesPerSegment;
  const segments = ctx.maxSegments;
  if (segments > 4096) return grid * perTile;
  const temp = ctx.temp;
  let misled = 0;
  for (let s = 0; s < segments; s++) {
    const state = ctx.stateSlot + s * radixStateWords;
    if (temp[state] === 1 && temp[state + 2]! < ctx.kMax) misled++;
  }
  return misled === 0 ? 0 : Math.ceil((grid * perTile * misled) / segments);
}

/** Items a radix filter launch reads: the previous digit's candidates (the keys, or those past the sampled threshold, for digit 0). */
function radixFilterItems(grid: number, params: TopKKernelParams): number {
  const ctx = params.ctx;
  const segments = ctx.maxSegments;
  if (ctx.stateSlot < 0 || segments > 4096) return grid * Math.min(ctx.problem.maxSegmentSize, ctx.policy.radixTileItems);
  const temp = ctx.temp;
  const pass = params.pass;
  let items = 0;
  for (let s = 0; s < segments; s++) {
    const state = ctx.stateSlot + s * radixStateWords;
    items += pass > 0 ? temp[state + 16 + pass - 1]! : temp[state] === 1 && temp[state + 2]! > 0 ? temp[state + 2]! : ctx.problem.maxSegmentSize;
  }
  return items;
}

/**
 * Each kernel's body, its workgroup memory and the items a launch works on (for running it on worker
 * threads; absent: grid-1 kernels, which stay on the calling thread).
 */
const kernels: Record<
  TopKKernelId,
  { readonly body: KernelBody; readonly bytes: (ctx: TopKContext) => number; readonly items?: (grid: number, params: TopKKernelParams) => number }
> = {
  validate: { body: runValidate, bytes: () => 16 },
  'segment-offsets': { body: runSegmentOffsets, bytes: () => 16 },
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
  'reduce-merge': { body: runReduceMerge, bytes: (ctx) => reduceWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => grid * ctx.chunksPerSegment * ctx.kMax * 4 },
  'radix-init': { body: runRadixInit, bytes: () => 16, items: (grid, { ctx }) => grid * (16 + Math.min(8192, ctx.problem.maxSegmentSize >>> 5)) },
  'radix-histogram': { body: runRadixHistogram, bytes: (ctx) => radixHistogramWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: (grid, params) => radixPassZeroItems(grid, params) },
  'radix-fallback': { body: runRadixFallback, bytes: (ctx) => radixHistogramWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: (grid, params) => radixPassZeroItems(grid, params, true) },
  'radix-filter': { body: runRadixFilter, bytes: (ctx) => radixFilterWorkgroupBytes(ctx.policy.radixTileItems, ctx.radixBits), items: radixFilterItems },
  'radix-finalize': { body: runRadixFinalize, bytes: (ctx) => radixFinalizeWorkgroupBytes(ctx.kMax), items: (grid, { ctx }) => grid * ctx.kMax * 8 },
};

const parallelOf = new Map<TopKKernelId, CpuKernelParallel<TopKKernelParams>>();

/**
 * The module a worker thread imports to rebuild these kernels: this one, unless it was bundled into
 * another file (whose top level a worker must not run), when kernels stay on the calling thread.
 */
const workerModule = /\/executor\.[cm]?[jt]s$/.test(import.meta.url) ? import.meta.url : undefined;

/** How a worker thread runs kernel `kernelId` (see {@link cpuWorkerLaunch}). */
function parallelFor(kernelId: TopKKernelId): CpuKernelParallel<TopKKernelParams> | undefined {
  const items = kernels[kernelId].items;
  if (items === undefined || workerModule === undefined) return undefined;
  let parallel = parallelOf.get(kernelId);
  if (parallel === undefined) {
    parallel = {
      module: workerModule,
      kernelId,
      workItems: items,
      shared: (params) => params.ctx.forWorker(),
      local: (params) => params.pass,
    };
    parallelOf.set(kernelId, parallel);
  }
  return parallel;
}

/**
 * A launch of kernel `kernelId` on a worker thread: `shared` is a {@link TopKContext.forWorker} copy
 * (structured-cloned, its typed arrays shared with the main thread), `local` the radix pass.
 * @internal
 */
export function cpuWorkerLaunch(kernelId: string, shared: object, local: unknown): CpuWorkerLaunch {
  const kernel = kernels[kernelId as TopKKernelId];
  if (kernel === undefined) throw new Error(`internal: no CPU kernel '${kernelId}'`);
  const params: TopKKernelParams = { ctx: TopKContext.fromWorkerCopy(shared), pass: local as number };
  return { run: kernel.body as CpuWorkerLaunch['run'], params };
}

/** Grids the kernels expect, from the problem and policy; a launch with another grid is a plan bug. */
function expectedGrid(launch: TopKLaunch, ctx: TopKContext): number {
  switch (launch.kernel) {
    case 'validate':
    case 'segment-offsets':
      return 1;
    case 'reduce':
      return ctx.reduceSegmentsPerWorkgroup > 0 ? Math.ceil(ctx.maxSegments / ctx.reduceSegmentsPerWorkgroup) : ctx.maxSegments * ctx.chunksPerSegment;
    case 'radix-histogram':
      return ctx.maxSegments * ctx.tilesPerSegment;
    case 'radix-fallback':
    case 'radix-filter':
      return ctx.maxSegments * ctx.filterTilesPerSegment;
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
  const parallel = parallelFor(launch.kernel);
  return parallel === undefined
    ? { name: launch.name, workgroupStorageBytes: kernel.bytes(ctx), run: kernel.body }
    : { name: launch.name, workgroupStorageBytes: kernel.bytes(ctx), run: kernel.body, parallel };
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
