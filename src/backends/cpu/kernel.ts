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
