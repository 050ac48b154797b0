import { SegkitUsageError } from '../errors.js';

/** Element types a DeviceArray can hold. `'u8'` is for temporary storage. */
export type DType = 'f32' | 'i32' | 'u32' | 'u8';

/** The typed array that holds a dtype's elements on the host. */
export type HostArrayOf<D extends DType> = D extends 'f32'
  ? Float32Array
  : D extends 'i32'
    ? Int32Array
    : D extends 'u32'
      ? Uint32Array
      : Uint8Array;

/** Host arrays that `upload` accepts. */
export type UploadableArray = Float32Array | Int32Array | Uint32Array;

/** The dtype of an uploadable host array. */
export type DTypeOf<T extends UploadableArray> = T extends Float32Array ? 'f32' : T extends Int32Array ? 'i32' : 'u32';

/**
 * Memory on a backend's device. There is no synchronous way to read it on the host: use
 * `backend.download(array)`.
 *
 * @example
 * ```ts
 * const keys = cpu.upload(new Float32Array([3, 1, 2]));
 * console.log(keys.dtype, keys.length); // 'f32' 3
 * ```
 */
export interface DeviceArray<D extends DType = DType> {
  /** Element type. */
  readonly dtype: D;
  /** Number of elements. */
  readonly length: number;
  /** The backend whose device holds this array. */
  readonly backend: Backend;
  /** True once `destroy()` was called. */
  readonly destroyed: boolean;
  /** Frees the device memory; any later use is rejected. */
  destroy(): void;
}

/**
 * What policies may read about a backend, the analogue of CUDA's compute capability.
 */
export interface BackendCapabilities {
  /** Most invocations in one workgroup. */
  readonly maxWorkgroupSize: number;
  /** Bytes of workgroup (shared) memory a workgroup may use. */
  readonly workgroupStorageBytes: number;
  /** Subgroup (warp) width when subgroups are available, else `undefined`. */
  readonly subgroupSize: number | undefined;
  /** Largest storage buffer binding, in bytes: the most of one array (or of temporary storage) a kernel reads or writes. */
  readonly maxStorageBufferBytes: number;
  /** Largest single allocation (`upload` or `alloc`), in bytes; may exceed what one binding holds (WebGPU's `maxBufferSize`). */
  readonly maxBufferBytes: number;
  /** Most workgroups in one dispatch dimension. */
  readonly maxWorkgroupsPerDimension: number;
  /** Number of host threads (CPU) or an estimate of parallel workgroup slots (GPU). */
  readonly parallelism: number;
}

/** Counters of every copy between host and device, and of every kernel launch, since the last `resetStats()`. */
export interface BackendStats {
  /** Host-to-device copies (`upload`, and any copy an algorithm makes). */
  uploads: number;
  /** Device-to-host copies (`download`, and any read-back an algorithm makes). */
  downloads: number;
  /** Bytes copied from host to device. */
  bytesUploaded: number;
  /** Bytes copied from device to host. */
  bytesDownloaded: number;
  /** Kernel launches (dispatches). */
  launches: number;
  /** Distinct kernels compiled (WebGPU pipelines; on the CPU, distinct kernel names first launched). */
  kernelsCompiled: number;
  /** Launches per kernel name, e.g. `{ 'topk/reduce[k<=8]': 2 }`. */
  launchesByKernel: Record<string, number>;
  /**
   * DeviceArrays alive now: made by `upload` or `alloc` (yours, or an algorithm's) and not destroyed.
   * A state, not a counter: `resetStats()` leaves it. A long loop that destroys what it makes keeps it flat.
   */
  liveArrays: number;
  /** Bytes of the {@link BackendStats.liveArrays} (length times bytes per element). */
  liveBytes: number;
}

/**
 * A place where segkit's algorithms run: the CPU emulator (`cpuBackend()`) or WebGPU
 * (`webgpuBackend()`).
 *
 * @example
 * ```ts
 * const cpu = cpuBackend();
 * const a = cpu.upload(new Int32Array([1, 2, 3]));
 * console.log(await cpu.download(a)); // Int32Array [1, 2, 3]
 * ```
 */
export interface Backend {
  /** Which kind of backend this is. */
  readonly name: 'cpu' | 'webgpu';
  /** The facts policies choose from. */
  readonly capabilities: BackendCapabilities;
  /** Copies `data` to a new DeviceArray; later changes to `data` do not reach the device. */
  upload<T extends UploadableArray>(data: T): DeviceArray<DTypeOf<T>>;
  /** A new zero-filled DeviceArray. */
  alloc<D extends DType>(dtype: D, length: number): DeviceArray<D>;
  /**
   * Copies a DeviceArray to the host once all work that writes it is done: into a new typed array,
   * or into `into` (a typed array of the array's dtype and length, returned) so that a loop of
   * calls reuses one host buffer. Like `synchronize()`, rejects with `GuaranteeViolationError` when
   * a run submitted before it broke a device-only guarantee (then `into` is left as it was).
   */
  download<D extends DType>(array: DeviceArray<D>, into?: HostArrayOf<D>): Promise<HostArrayOf<D>>;
  /**
   * Resolves once all submitted work is done. Rejects with `GuaranteeViolationError` when a run
   * submitted before it broke a device-only guarantee (see `Plan.run`); each violation is
   * reported once.
   */
  synchronize(): Promise<void>;
  /**
   * Frees every resource, including what plans and the environment API keep on this backend; the
   * backend is unusable afterwards.
   */
  destroy(): void;
  /** A snapshot of the counters. */
  stats(): BackendStats;
  /** Zeroes the counters. */
  resetStats(): void;
}

/** Bytes per element of a dtype. */
export const bytesPerElement: Readonly<Record<DType, number>> = { f32: 4, i32: 4, u32: 4, u8: 1 };

/** The dtype of a host array, or undefined when segkit cannot upload it. */
export function dtypeOfHostArray(data: unknown): DType | undefined {
  if (data instanceof Float32Array) return 'f32';
  if (data instanceof Int32Array) return 'i32';
  if (data instanceof Uint32Array) return 'u32';
  return undefined;
}

/** The dtype of data given to `upload`; rejects anything else with the message every backend uses. */
export function uploadDType(data: unknown): Exclude<DType, 'u8'> {
  const dtype = dtypeOfHostArray(data);
  if (dtype === undefined || dtype === 'u8') {
    throw new SegkitUsageError(`upload(data): data must be a Float32Array, Int32Array or Uint32Array; got ${describe(data)}`);
  }
  return dtype;
}

/** Rejects `alloc` arguments that no backend accepts: an unknown dtype, a length that is not a count. */
export function checkAllocArguments(dtype: unknown, length: unknown): void {
  if (typeof dtype !== 'string' || !(dtype in bytesPerElement)) {
    throw new SegkitUsageError(`alloc(dtype): '${String(dtype)}' is not a dtype; expected 'f32', 'i32', 'u32' or 'u8'`);
  }
  if (!Number.isSafeInteger(length) || (length as number) < 0) {
    throw new SegkitUsageError(`alloc(length): ${String(length)} is not a non-negative integer`);
  }
}

/**
 * Rejects an allocation larger than the backend's largest buffer, with the message every backend
 * uses. `what` names the call, e.g. `upload(data)`.
 */
export function checkAllocationSize(what: string, dtype: DType, length: number, capabilities: BackendCapabilities): void {
  const bytes = length * bytesPerElement[dtype];
  if (bytes > capabilities.maxBufferBytes) {
    throw new SegkitUsageError(`${what}: ${length} ${dtype} elements (${bytes} bytes) exceed the backend's largest buffer of ${capabilities.maxBufferBytes} bytes (maxBufferBytes)`);
  }
}

/** True when `value` looks like a DeviceArray of any backend. */
export function isDeviceArray(value: unknown): value is DeviceArray {
  return (
    typeof value === 'object' &&
    value !== null &&
    'dtype' in value &&
    'backend' in value &&
    'destroyed' in value &&
    typeof (value as { destroy?: unknown }).destroy === 'function'
  );
}

/**
 * Rejects a DeviceArray that belongs to another backend, was destroyed, or has a dtype outside
 * `dtypes`. `what` names the argument in the message, e.g. `keysIn`.
 */
export function checkDeviceArray(
  array: DeviceArray,
  backend: Backend,
  what: string,
  dtypes?: readonly DType[],
): void {
  if (!isDeviceArray(array)) throw new SegkitUsageError(`${what}: expected a DeviceArray, got ${describe(array)}`);
  if (array.destroyed) throw new SegkitUsageError(`${what}: the DeviceArray was destroyed and cannot be used`);
  if (array.backend !== backend) {
    throw new SegkitUsageError(
      array.backend.name === backend.name
        ? `${what}: the DeviceArray belongs to another ${backend.name} backend instance than the one running this call; upload the data to this backend`
        : `${what}: the DeviceArray belongs to the ${array.backend.name} backend, but this call runs on the ${backend.name} backend; upload the data to this backend`,
    );
  }
  if (dtypes !== undefined && !dtypes.includes(array.dtype)) {
    throw new SegkitUsageError(
      `${what}: dtype '${array.dtype}' is not accepted here; expected ${dtypes.map((d) => `'${d}'`).join(' or ')}`,
    );
  }
}

const hostArrayNames: Record<DType, string> = { f32: 'Float32Array', i32: 'Int32Array', u32: 'Uint32Array', u8: 'Uint8Array' };

/** Rejects a `download` target that is not a typed array of `array`'s dtype and length. */
export function checkDownloadTarget(array: DeviceArray, into: unknown): void {
  const name = hostArrayNames[array.dtype];
  if (!ArrayBuffer.isView(into) || into.constructor.name !== name) {
    throw new SegkitUsageError(`download(array, into): into must be a ${name} for a DeviceArray of dtype '${array.dtype}', got ${describe(into)}`);
  }
  const length = (into as unknown as { length: number }).length;
  if (length !== array.length) {
    throw new SegkitUsageError(`download(array, into): into holds ${length} elements; the DeviceArray holds ${array.length}`);
  }
}

/** A short description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'Object'})`;
  return `${typeof value} ${String(value)}`;
}

/** Shared counters bookkeeping for backends. */
export class StatsCounter {
  private counters: BackendStats = StatsCounter.empty();

  private liveArrays = 0;
  private liveBytes = 0;

  private static empty(): BackendStats {
    return { uploads: 0, downloads: 0, bytesUploaded: 0, bytesDownloaded: 0, launches: 0, kernelsCompiled: 0, launchesByKernel: {}, liveArrays: 0, liveBytes: 0 };
  }

  /** A DeviceArray of `bytes` bytes was made. */
  arrayMade(bytes: number): void {
    this.liveArrays++;
    this.liveBytes += bytes;
  }

  /** A DeviceArray of `bytes` bytes was destroyed. */
  arrayDestroyed(bytes: number): void {
    this.liveArrays--;
    this.liveBytes -= bytes;
  }

  upload(bytes: number): void {
    this.counters.uploads++;
    this.counters.bytesUploaded += bytes;
  }

  download(bytes: number): void {
    this.counters.downloads++;
    this.counters.bytesDownloaded += bytes;
  }

  launch(kernel: string): void {
    this.counters.launches++;
    this.counters.launchesByKernel[kernel] = (this.counters.launchesByKernel[kernel] ?? 0) + 1;
  }

  compiled(): void {
    this.counters.kernelsCompiled++;
  }

  snapshot(): BackendStats {
    return { ...this.counters, launchesByKernel: { ...this.counters.launchesByKernel }, liveArrays: this.liveArrays, liveBytes: this.liveBytes };
  }

  reset(): void {
    this.counters = StatsCounter.empty();
  }
}

/**
 * A check of submitted work whose result stays on the device until the host asks: the validation
 * status words of plans' runs (dispatch/status-reports.ts), read back at the next `synchronize()`/`download()` instead of after
 * every call (a read-back per call would stall back-to-back launches).
 * @internal
 */
export interface DeferredCheck {
  /**
   * Reads what the check needs with `read` (a download that does not settle checks itself) and
   * returns what it found, each with the order of the run that found it (earliest first wins).
   */
  collect(read: DeviceRead): Promise<readonly { readonly order: number; readonly error: Error }[]>;
  /** Frees what the check holds without reading it (its backend is being destroyed). */
  discard(): void;
}

/** A download that settles no deferred checks. @internal */
export type DeviceRead = <D extends DType>(array: DeviceArray<D>) => Promise<HostArrayOf<D>>;

/**
 * What every backend keeps for algorithms beyond the public interface: deferred checks, settled at
 * `synchronize()`/`download()`, and what to free when the backend is destroyed (plans and storage
 * the environment API keeps). Each backend owns one and calls `settle` and `destroyed`.
 * @internal
 */
export class BackendHooks {
  private readonly pending = new Set<DeferredCheck>();
  private readonly onDestroy = new Set<() => void>();
  private settling: Promise<void> | undefined;

  constructor(
    /** The backend's download without settling checks. */
    readonly read: DeviceRead,
  ) {}

  /** Settles `check` at the next `synchronize()`/`download()` (once, however often it is deferred). */
  defer(check: DeferredCheck): void {
    this.pending.add(check);
  }

  /** Takes `check` back to settle it elsewhere (`plan.checked()`); true when it was pending. */
  withdraw(check: DeferredCheck): boolean {
    return this.pending.delete(check);
  }

  /**
   * Reads every pending check and throws the earliest run's error. Checks are taken before their
   * reads start, so work submitted meanwhile is left for the next settle; a settle already under
   * way is awaited too, so no caller resolves before an earlier violation was looked at.
   */
  async settle(): Promise<void> {
    const earlier = this.settling;
    if (this.pending.size === 0) {
      if (earlier !== undefined) await earlier.catch(() => undefined);
      return;
    }
    const checks = [...this.pending];
    this.pending.clear();
    const found = Promise.all(checks.map((check) => check.collect(this.read)));
    const current = found.then(() => undefined);
    this.settling = current;
    try {
      const errors = (await found).flat();
      if (errors.length > 0) throw errors.reduce((a, b) => (b.order < a.order ? b : a)).error;
    } finally {
      if (this.settling === current) this.settling = undefined;
      if (earlier !== undefined) await earlier.catch(() => undefined);
    }
  }

  /** Calls `free` when the backend is destroyed; returns a function that cancels it. */
  whenDestroyed(free: () => void): () => void {
    this.onDestroy.add(free);
    return () => this.onDestroy.delete(free);
  }

  /** Runs the destroy callbacks and drops pending checks; the backend calls it first in `destroy()`. */
  destroyed(): void {
    for (const free of [...this.onDestroy]) free();
    this.onDestroy.clear();
    for (const check of this.pending) check.discard();
    this.pending.clear();
  }
}

/** The hooks of a segkit backend. @internal */
export function hooksOf(backend: Backend): BackendHooks {
  const hooks = (backend as { hooks?: unknown }).hooks;
  if (!(hooks instanceof BackendHooks)) throw new Error(`internal: the ${backend.name} backend has no hooks`);
  return hooks;
}
