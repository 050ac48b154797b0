import { SegkitUsageError } from '../../errors.js';
import {
  type Backend,
  BackendHooks,
  type BackendCapabilities,
  type BackendStats,
  type DType,
  type DTypeOf,
  type DeviceArray,
  type HostArrayOf,
  type UploadableArray,
  StatsCounter,
  bytesPerElement,
  checkDeviceArray,
  checkAllocArguments,
  uploadDType,
} from '../backend.js';
import type { CpuKernel } from './kernel.js';
import { WorkgroupMemory } from './kernel.js';
import { attachMemory, deviceMemory, detachMemory } from './memory.js';
import { type CpuWorkerPool, createWorkerPool, hostParallelism, parallelLaunchItems, workersSupported } from './pool.js';

/** Options of {@link cpuBackend}. */
export interface CpuBackendOptions {
  /**
   * Capabilities to report instead of the defaults, e.g. to see which variant a GPU with 16 KiB of
   * workgroup memory would get.
   */
  capabilities?: Partial<BackendCapabilities>;
  /**
   * Worker threads that run large launches' workgroups alongside the calling thread. Default:
   * `os.availableParallelism() - 1`; 0 runs everything on the calling thread (as do runtimes without
   * `node:worker_threads`). Device memory is then in SharedArrayBuffers; launches stay synchronous,
   * and results are the same for every number of workers.
   */
  workers?: number;
  /**
   * Items (an estimate per launch) below which a launch stays on the calling thread; default 32768.
   * @internal
   */
  parallelThreshold?: number;
}

/**
 * Defaults of the CPU emulator. The workgroup memory is sized so that a single-tile workgroup
 * (keys + indices of 4096 items = 32 KiB) fits, as on most desktop GPUs.
 */
const defaultCpuCapabilities: BackendCapabilities = {
  maxWorkgroupSize: 256,
  workgroupStorageBytes: 32768,
  subgroupSize: 32,
  maxStorageBufferBytes: 2 ** 31,
  maxWorkgroupsPerDimension: 65535,
  parallelism: 1,
};

/** The CPU emulator's backend, with the kernel launch that its algorithms use. */
export interface CpuBackend extends Backend {
  readonly name: 'cpu';
  /**
   * Runs `kernel` over `numWorkgroups` workgroups. Work on the CPU is done when this returns, which
   * keeps the semantics of a queue whose work completes in order.
   * @internal
   */
  launch<Params>(kernel: CpuKernel<Params>, numWorkgroups: number, params: Params): void;
}

class CpuDeviceArray<D extends DType> implements DeviceArray<D> {
  destroyed = false;
  constructor(
    readonly backend: CpuBackendImpl,
    readonly dtype: D,
    readonly length: number,
  ) {}

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    detachMemory(this);
    this.backend.live--;
    this.backend.liveBytes -= this.length * bytesPerElement[this.dtype];
  }
}

class CpuBackendImpl implements CpuBackend {
  readonly name = 'cpu' as const;
  readonly capabilities: BackendCapabilities;
  live = 0;
  liveBytes = 0;
  /** @internal */
  readonly hooks = new BackendHooks((array) => this.read(array));
  private readonly counter = new StatsCounter();
  private readonly compiledKernels = new Set<string>();
  private readonly sharedMemory = new Map<number, WorkgroupMemory>();
  private destroyedBackend = false;
  private readonly pool: CpuWorkerPool | undefined;
  private readonly shareMemory: boolean;
  private readonly parallelThreshold: number;

  constructor(options: CpuBackendOptions) {
    const requested = options.workers ?? hostParallelism() - 1;
    if (!Number.isSafeInteger(requested) || requested < 0) {
      throw new SegkitUsageError(`cpuBackend({ workers }): ${String(options.workers)} is not a non-negative integer`);
    }
    this.pool = requested > 0 && workersSupported() ? createWorkerPool(requested) : undefined;
    this.shareMemory = this.pool !== undefined;
    this.parallelThreshold = options.parallelThreshold ?? parallelLaunchItems;
    const parallelism = (this.pool?.size ?? 0) + 1;
    this.capabilities = Object.freeze({ ...defaultCpuCapabilities, parallelism, ...options.capabilities });
  }

  private checkAlive(): void {
    if (this.destroyedBackend) throw new SegkitUsageError('the cpu backend was destroyed and cannot be used');
  }

  private allocate<D extends DType>(dtype: D, length: number): CpuDeviceArray<D> {
    const array = new CpuDeviceArray(this, dtype, length);
    // Round up to whole words so every allocation has u32/f32 views.
    const bytes = Math.ceil((length * bytesPerElement[dtype]) / 4) * 4;
    attachMemory(array, this.shareMemory ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
    this.live++;
    this.liveBytes += length * bytesPerElement[dtype];
    return array;
  }

  upload<T extends UploadableArray>(data: T): DeviceArray<DTypeOf<T>> {
    this.checkAlive();
    const array = this.allocate(uploadDType(data) as DTypeOf<T>, data.length);
    deviceMemory(array).u32.set(new Uint32Array(data.buffer, data.byteOffset, data.length));
    this.counter.upload(data.byteLength);
    return array;
  }

  alloc<D extends DType>(dtype: D, length: number): DeviceArray<D> {
    this.checkAlive();
    checkAllocArguments(dtype, length);
    if (length * bytesPerElement[dtype] > this.capabilities.maxStorageBufferBytes) {
      throw new SegkitUsageError(
        `alloc(length): ${length} ${dtype} elements exceed the backend's largest buffer of ${this.capabilities.maxStorageBufferBytes} bytes`,
      );
    }
    return this.allocate(dtype, length);
  }

  async download<D extends DType>(array: DeviceArray<D>): Promise<HostArrayOf<D>> {
    const data = await this.read(array);
    await this.hooks.settle();
    return data;
  }

  private async read<D extends DType>(array: DeviceArray<D>): Promise<HostArrayOf<D>> {
    this.checkAlive();
    checkDeviceArray(array, this, 'download(array)');
    const memory = deviceMemory(array);
    const bytes = array.length * bytesPerElement[array.dtype];
    this.counter.download(bytes);
    const copy = memory.u8.slice(0, bytes).buffer;
    switch (array.dtype) {
      case 'f32':
        return new Float32Array(copy) as HostArrayOf<D>;
      case 'i32':
        return new Int32Array(copy) as HostArrayOf<D>;
      case 'u32':
        return new Uint32Array(copy) as HostArrayOf<D>;
      default:
        return new Uint8Array(copy) as HostArrayOf<D>;
    }
  }

  launch<Params>(kernel: CpuKernel<Params>, numWorkgroups: number, params: Params): void {
    this.checkAlive();
    if (!this.compiledKernels.has(kernel.name)) {
      this.compiledKernels.add(kernel.name);
      this.counter.compiled();
    }
    this.counter.launch(kernel.name);
    let shared = this.sharedMemory.get(kernel.workgroupStorageBytes);
    if (shared === undefined) {
      shared = new WorkgroupMemory(kernel.workgroupStorageBytes);
      this.sharedMemory.set(kernel.workgroupStorageBytes, shared);
    }
    const parallel = kernel.parallel;
    if (
      this.pool !== undefined &&
      parallel !== undefined &&
      numWorkgroups > 1 &&
      parallel.workItems(numWorkgroups, params) >= this.parallelThreshold &&
      this.pool.usable()
    ) {
      this.pool.run(kernel, parallel, numWorkgroups, params, shared);
      return;
    }
    for (let workgroup = 0; workgroup < numWorkgroups; workgroup++) kernel.run(workgroup, numWorkgroups, shared, params);
  }

  /**
   * Launches run through the worker pool, and the workgroups worker threads ran.
   * @internal
   */
  workerStats(): { workers: number; parallelLaunches: number; workgroupsOnWorkers: number; rests: number } {
    const pool = this.pool;
    return { workers: pool?.size ?? 0, parallelLaunches: pool?.parallelLaunches ?? 0, workgroupsOnWorkers: pool?.workgroupsOnWorkers ?? 0, rests: pool?.rests ?? 0 };
  }

  async synchronize(): Promise<void> {
    this.checkAlive();
    await this.hooks.settle();
  }

  destroy(): void {
    if (!this.destroyedBackend) this.hooks.destroyed();
    this.destroyedBackend = true;
    this.sharedMemory.clear();
    this.pool?.destroy();
  }

  stats(): BackendStats {
    return this.counter.snapshot(this.live, this.liveBytes);
  }

  resetStats(): void {
    this.counter.reset();
  }
}

/**
 * The CPU emulator, segkit's embedded default backend. Device memory is kept apart from your arrays
 * exactly as on a GPU: `upload` and `download` copy, and kernels run as grids of workgroups.
 *
 * @example
 * ```ts
 * const cpu = cpuBackend();
 * const keys = cpu.upload(new Float32Array([0.5, 2, 1]));
 * ```
 */
export function cpuBackend(options: CpuBackendOptions = {}): CpuBackend {
  return new CpuBackendImpl(options);
}

/** True for the CPU emulator's backend. */
export function isCpuBackend(backend: Backend): backend is CpuBackend {
  return backend instanceof CpuBackendImpl;
}
