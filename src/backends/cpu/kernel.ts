/**
 * How a kernel runs on the CPU emulator: as a grid of workgroups, each with its own workgroup
 * memory, mirroring the decomposition its WebGPU twin has (one workgroup per tile, the same passes,
 * the same temporary buffers). `run` executes one whole workgroup; the phases between barriers are
 * plain loops over the workgroup's invocations (or their vectorised equivalent), so a barrier is the
 * end of one loop and the start of the next.
 */
export interface CpuKernel<Params> {
  /** `<algorithm>/<variant>` plus its specialization, e.g. `topk/reduce[k<=8]`. */
  readonly name: string;
  /** Bytes of workgroup memory one workgroup uses. */
  readonly workgroupStorageBytes: number;
  /**
   * Runs workgroup `workgroupId` of `numWorkgroups`. `shared` is this workgroup's memory; as on a GPU
   * its contents are undefined on entry.
   */
  run(workgroupId: number, numWorkgroups: number, shared: WorkgroupMemory, params: Params): void;
  /**
   * Present when the kernel's workgroups may run on worker threads. Workgroups must then be
   * independent except through device memory updated with Atomics (or through results that do not
   * depend on the order workgroups run in).
   */
  readonly parallel?: CpuKernelParallel<Params>;
}

/** How a worker thread rebuilds a kernel: its module, its id there, and its parameters in two parts. */
export interface CpuKernelParallel<Params> {
  /** URL of an ES module exporting `cpuWorkerLaunch(kernelId, shared, local): { run, params }`. */
  readonly module: string;
  readonly kernelId: string;
  /** Items the launch works on (an estimate; may read device memory): small launches stay on the calling thread. */
  workItems(numWorkgroups: number, params: Params): number;
  /**
   * The structured-cloneable part of `params` shared by many launches (the same object each time:
   * a worker gets it once); typed arrays in it must be views of SharedArrayBuffers.
   */
  shared(params: Params): object;
  /** The per-launch, structured-cloneable rest of `params`. */
  local(params: Params): unknown;
}

/** What a kernel module's `cpuWorkerLaunch` returns in a worker. */
export interface CpuWorkerLaunch {
  run(workgroupId: number, numWorkgroups: number, shared: WorkgroupMemory, params: unknown): void;
  params: unknown;
}

/** Workgroup (shared) memory of one workgroup, with typed views over the same bytes. */
export class WorkgroupMemory {
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;

  constructor(readonly bytes: number) {
    const buffer = new ArrayBuffer(Math.max(4, bytes));
    this.u32 = new Uint32Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.f32 = new Float32Array(buffer);
  }
}
