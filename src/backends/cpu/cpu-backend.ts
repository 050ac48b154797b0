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
  checkDownloadTarget,
  checkAllocArguments,
  checkAllocationSize,
  uploadDType,
} from '../backend.js';
import type { CpuKernel } from './kernel.js';
import { WorkgroupMemory } from './kernel.js';
import { type HeapRange, SharedDeviceHeap, attachMemory, deviceMemory, detachMemory } from './memory.js';
import { type CpuWorkerPool, createWorkerPool, hostParallelism, parallelLaunchItems, workersSupported } from './pool.js';

/** Options of {@link cpuBackend}. */
export interface CpuBackendOptions {
  /**
   * Capabilities to report instead of the defaults, e.g. to see which variant a GPU with 16 KiB of
   * workgroup memory would get. The emulator then also enforces that GPU's limits (they are functions
   * of the capabilities, checked the same way on every backend): given `gpu.capabilities`, it
   * refuses what `gpu` refuses, with the same message.
   */
  capabilities?: Partial<BackendCapabilities>;
  /**
   * Worker threads that run large launches' workgroups alongside the calling thread. Default:
   * `os.availableParallelism() - 1`; 0 runs everything on the calling thread (as do runtimes without
   * `node:worker_threads`). Device memory is then shared WebAssembly memory (SharedArrayBuffers
   * that the kernels' SIMD loops read in place); launches stay synchronous, and results are the same
   * for every number of workers. With workers, device memory comes from slabs the backend keeps and
   * reuses: a destroyed array's memory goes to the next allocation, and `destroy()` of the backend
   * lets all of it go.
   */
  workers?: number;
  /**
   * Items (an estimate per launch) below which a launch stays on the calling thread; default 32768.
   * @internal
   */
  parallelThreshold?: number;
  /**
   * Whether kernels that have WebAssembly SIMD loops use them where the runtime can run them
   * (default true); false keeps every kernel on its scalar loops (the tests compare both).
   * @internal
   */
  simd?: boolean;
}

/**
 * Defaults of the CPU emulator, which are also its limits. Its kernels keep a workgroup's memory in
 * 32 KiB, as most desktop GPUs have: a tile of 2048 keys and indices plus 4 KiB, so sorted
 * radix-select sorts a selection of more than 2048 keys per segment after it, as such a GPU does
 * (with the segmented sort's radix kernels, which its policy keeps on a backend of few workgroup
 * slots, where a GPU's picks its merge). A buffer and a binding hold 2 GiB.
 */
const defaultCpuCapabilities: BackendCapabilities = {
  maxWorkgroupSize: 256,
  workgroupStorageBytes: 32768,
  subgroupSize: 32,
  maxStorageBufferBytes: 2 ** 31,
  maxBufferBytes: 2 ** 31,
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
  /**
   * Whether kernels may use their WebAssembly SIMD loops ({@link CpuBackendOptions}).
   * @internal
   */
  readonly simd: boolean;
}

class CpuDeviceArray<D extends DType> implements DeviceArray<D> {
  destroyed = false;
  /** Where the memory lies in the backend's shared heap (with workers). */
  range: HeapRange | undefined;
  constructor(
    readonly backend: CpuBackendImpl,
    readonly dtype: D,
    readonly length: number,
  ) {}

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    detachMemory(this);
    this.backend.arrayDestroyed(this);
  }
}

/** What an array dropped without `destroy()` gives back once it is garbage-collected. */
interface DroppedArray {
  readonly backend: CpuBackendImpl;
  readonly range: HeapRange;
  readonly bytes: number;
}

/**
 * Heap ranges of arrays garbage-collected without `destroy()` (as a GPU buffer is freed when its
 * handle is collected); ArrayBuffers without workers are collected with their arrays anyway.
 */
const droppedArrays = new FinalizationRegistry<DroppedArray>((dropped) => dropped.backend.arrayDropped(dropped));

class CpuBackendImpl implements CpuBackend {
  readonly name = 'cpu' as const;
  readonly capabilities: BackendCapabilities;
  /** @internal */
  readonly hooks = new BackendHooks((array) => this.read(array));
  private readonly counter = new StatsCounter();
  private readonly compiledKernels = new Set<string>();
  private readonly sharedMemory = new Map<number, WorkgroupMemory>();
  private destroyedBackend = false;
  private readonly pool: CpuWorkerPool | undefined;
  /** Device memory shared with the workers; undefined without workers (one ArrayBuffer per array). */
  private readonly heap: SharedDeviceHeap | undefined;
  private readonly parallelThreshold: number;
  readonly simd: boolean;

  constructor(options: CpuBackendOptions) {
    const requested = options.workers ?? hostParallelism() - 1;
    if (!Number.isSafeInteger(requested) || requested < 0) {
      throw new SegkitUsageError(`cpuBackend({ workers }): ${String(options.workers)} is not a non-negative integer`);
    }
    this.pool = requested > 0 && workersSupported() ? createWorkerPool(requested) : undefined;
    this.heap = this.pool === undefined ? undefined : new SharedDeviceHeap(this.pool.size + 1);
    this.parallelThreshold = options.parallelThreshold ?? parallelLaunchItems;
    this.simd = options.simd ?? true;
    const parallelism = (this.pool?.size ?? 0) + 1;
    this.capabilities = Object.freeze({ ...defaultCpuCapabilities, parallelism, ...options.capabilities });
  }

  private checkAlive(): void {
    if (this.destroyedBackend) throw new SegkitUsageError('the cpu backend was destroyed and cannot be used');
  }

  /** A new array; its memory is zero-filled when `zero` (an upload overwrites all of it). */
  private allocate<D extends DType>(dtype: D, length: number, zero: boolean): CpuDeviceArray<D> {
    const array = new CpuDeviceArray(this, dtype, length);
    const arrayBytes = length * bytesPerElement[dtype];
    // Round up to whole words so every allocation has u32/f32 views.
    const bytes = Math.ceil(arrayBytes / 4) * 4;
    if (this.heap === undefined) {
      attachMemory(array, new ArrayBuffer(bytes));
    } else {
      const range = this.heap.allocate(bytes, zero);
      array.range = range;
      attachMemory(array, range.buffer, range.offset, bytes, range.slab);
      droppedArrays.register(array, { backend: this, range, bytes: arrayBytes }, array);
    }
    this.counter.arrayMade(arrayBytes);
    return array;
  }

  arrayDestroyed(array: CpuDeviceArray<DType>): void {
    this.counter.arrayDestroyed(array.length * bytesPerElement[array.dtype]);
    if (array.range !== undefined) {
      droppedArrays.unregister(array);
      if (!this.destroyedBackend) this.heap!.release(array.range);
      array.range = undefined;
    }
  }

  arrayDropped(dropped: DroppedArray): void {
    this.counter.arrayDestroyed(dropped.bytes);
    if (!this.destroyedBackend) this.heap!.release(dropped.range);
  }

  upload<T extends UploadableArray>(data: T): DeviceArray<DTypeOf<T>> {
    this.checkAlive();
    const dtype = uploadDType(data) as DTypeOf<T>;
    checkAllocationSize('upload(data)', dtype, data.length, this.capabilities);
    const array = this.allocate(dtype, data.length, false);
    deviceMemory(array).u32.set(new Uint32Array(data.buffer, data.byteOffset, data.length));
    this.counter.upload(data.byteLength);
    return array;
  }

  alloc<D extends DType>(dtype: D, length: number): DeviceArray<D> {
    this.checkAlive();
    checkAllocArguments(dtype, length);
    checkAllocationSize('alloc(length)', dtype, length, this.capabilities);
    return this.allocate(dtype, length, true);
  }

  async download<D extends DType>(array: DeviceArray<D>, into?: HostArrayOf<D>): Promise<HostArrayOf<D>> {
    if (into === undefined) {
      const data = await this.read(array);
      await this.hooks.settle();
      return data;
    }
    this.checkAlive();
    checkDeviceArray(array, this, 'download(array)');
    checkDownloadTarget(array, into);
    // The checks settle first: a violation leaves `into` as it was.
    await this.hooks.settle();
    const bytes = array.length * bytesPerElement[array.dtype];
    this.counter.download(bytes);
    new Uint8Array(into.buffer, into.byteOffset, bytes).set(deviceMemory(array).u8.subarray(0, bytes));
    return into;
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
    this.heap?.clear();
  }

  /**
   * Bytes of the shared slabs device memory comes from (0 without workers), for leak checks.
   * @internal
   */
  heapBytes(): number {
    return this.heap?.reservedBytes ?? 0;
  }

  stats(): BackendStats {
    return this.counter.snapshot();
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
