import { type Executor, type SegmentedRun, statusWords } from '../../dispatch/problem.js';
import { type CpuBackend, isCpuBackend } from './cpu-backend.js';
import type { CpuKernel, CpuKernelParallel, CpuWorkerLaunch, WorkgroupMemory } from './kernel.js';
import { deviceMemory } from './memory.js';
import type { KernelParams, SegmentedContext } from './segments.js';

/*
 * Runs a segmented algorithm's launches on the CPU emulator, in order, each as a grid of workgroups
 * (`CpuBackend.launch`). An algorithm gives its CPU kernel table (the body, the workgroup memory and
 * the work items of each kernel id) and how to build its context; this module makes the executor and
 * the function worker threads call to rebuild a kernel (`cpuWorkerLaunch`).
 */

/** One kernel's CPU entry. */
export interface CpuKernelEntry<Context extends SegmentedContext> {
  /** Runs one workgroup. */
  readonly body: (workgroupId: number, numWorkgroups: number, shared: WorkgroupMemory, params: KernelParams<Context>) => void;
  /** Bytes of workgroup memory. */
  readonly bytes: (ctx: Context) => number;
  /** Items a launch works on (an estimate); absent: grid-1 kernels, which stay on the calling thread. */
  readonly items?: (grid: number, params: KernelParams<Context>) => number;
}

/** What an algorithm gives {@link cpuExecutor}. */
export interface CpuAlgorithm<Run extends SegmentedRun, Context extends SegmentedContext> {
  /** Kernel entries by kernel id (the prologue's included: see prologue.ts `prologueCpuKernels`). */
  readonly kernels: Readonly<Record<string, CpuKernelEntry<Context>>>;
  /** The run's context. */
  context(run: Run): Context;
  /** The context a worker rebuilds from `forWorker()`'s copy. */
  revive(copy: object): Context;
  /**
   * URL of the module that exports this algorithm's `cpuWorkerLaunch` (its `import.meta.url`), or
   * undefined to keep every kernel on the calling thread. A module bundled into another file (whose
   * top level a worker must not run) is detected by its name and kept off the workers.
   */
  readonly module: string | undefined;
}

/** The executor and the worker entry point of an algorithm on the CPU emulator. */
export interface CpuExecutor<Run extends SegmentedRun> {
  readonly executor: Executor<Run>;
  /** How a worker thread rebuilds kernel `kernelId` from the shared context copy and the per-launch part. */
  cpuWorkerLaunch(kernelId: string, shared: object, local: unknown): CpuWorkerLaunch;
}

/** Builds the CPU executor of an algorithm from its kernel table. */
export function cpuExecutor<Run extends SegmentedRun, Context extends SegmentedContext>(algorithm: CpuAlgorithm<Run, Context>): CpuExecutor<Run> {
  const workerModule = algorithm.module !== undefined && /\/executor\.[cm]?[jt]s$/.test(algorithm.module) ? algorithm.module : undefined;
  const parallelOf = new Map<string, CpuKernelParallel<KernelParams<Context>>>();

  const entryOf = (kernelId: string): CpuKernelEntry<Context> => {
    const entry = algorithm.kernels[kernelId];
    if (entry === undefined) throw new Error(`internal: no CPU kernel for '${kernelId}'`);
    return entry;
  };

  const parallelFor = (kernelId: string): CpuKernelParallel<KernelParams<Context>> | undefined => {
    const items = entryOf(kernelId).items;
    if (items === undefined || workerModule === undefined) return undefined;
    let parallel = parallelOf.get(kernelId);
    if (parallel === undefined) {
      parallel = { module: workerModule, kernelId, workItems: items, shared: (params) => params.ctx.forWorker(), local: (params) => params.pass };
      parallelOf.set(kernelId, parallel);
    }
    return parallel;
  };

  const kernelFor = (kernelId: string, name: string, ctx: Context): CpuKernel<KernelParams<Context>> => {
    const entry = entryOf(kernelId);
    const parallel = parallelFor(kernelId);
    const kernel = { name, workgroupStorageBytes: entry.bytes(ctx), run: entry.body };
    return parallel === undefined ? kernel : { ...kernel, parallel };
  };

  return {
    executor: {
      execute(run: Run): void {
        if (!isCpuBackend(run.backend)) throw new Error(`internal: the CPU ${run.algorithm} executor got a ${run.backend.name} backend`);
        const backend: CpuBackend = run.backend;
        const ctx = algorithm.context(run);
        // Slots the launches meet in (counters, published flags) start at zero in every run, as on WebGPU.
        for (const slot of run.layout.slots) {
          if (slot.zeroed) deviceMemory(run.temp!).u8.fill(0, slot.offset, slot.offset + slot.bytes);
        }
        for (const launch of run.launches) backend.launch(kernelFor(launch.kernel, launch.name, ctx), launch.grid, { ctx, pass: launch.pass });
        // A device-side copy, as the WebGPU executor's copyBufferToBuffer: not a download.
        if (run.statusReport !== undefined && run.status !== undefined) {
          deviceMemory(run.statusReport.array).u32.set(deviceMemory(run.status).u32.subarray(0, statusWords), run.statusReport.word);
        }
      },
    },
    cpuWorkerLaunch(kernelId: string, shared: object, local: unknown): CpuWorkerLaunch {
      const params: KernelParams<Context> = { ctx: algorithm.revive(shared), pass: local as number };
      return { run: entryOf(kernelId).body as CpuWorkerLaunch['run'], params };
    },
  };
}
