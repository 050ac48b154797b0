/// <reference types="@webgpu/types" preserve="true" />
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
import { requestAdapter } from './gpu.js';
import { type WebGpuProgram, bindGroupLayoutEntries, makeShader } from './program.js';

/*
 * The WebGPU backend: DeviceArrays are GPUBuffers (STORAGE | COPY_SRC | COPY_DST), kernels are
 * compute pipelines compiled lazily from WGSL programs and cached by their key, and algorithms encode
 * a whole call into one command encoder, one compute pass and one submit (see the top-k executor).
 *
 * Lifetimes. Everything a submission uses stays referenced until the queue reports it done (Dawn in
 * Node crashes when objects of in-flight work are collected). A destroyed DeviceArray's buffer is
 * freed once the work submitted before its destroy() is done. Device loss rejects pending work and
 * makes every later call throw.
 */

/** GPUBufferUsage and GPUMapMode values (not every runtime defines the globals). */
const usage = { mapRead: 0x1, copySrc: 0x4, copyDst: 0x8, uniform: 0x40, storage: 0x80 } as const;
const mapModeRead = 0x1;

/**
 * The read-back buffers a backend keeps: two per size up to 16 MiB, 64 MiB in all (a few status
 * reports and the outputs a caller reads after every call; larger reads are dominated by the copy).
 */
const stagingPoolLimits = { perSize: 2, largestBytes: 16 << 20, totalBytes: 64 << 20 } as const;

/** The pooled size of a read of `bytes`: a power of two, at least 256. */
function stagingClass(bytes: number): number {
  let size = 256;
  while (size < bytes) size *= 2;
  return size;
}

/** Options of {@link webgpuBackend}. */
export interface WebGpuBackendOptions {
  /** Use this device instead of requesting one; `destroy()` then leaves it alive. */
  device?: GPUDevice;
  /** Passed to `requestAdapter`. */
  powerPreference?: GPUPowerPreference;
  /** Limits to request on top of the ones segkit requests (the adapter's best for workgroup storage, invocations and buffer sizes). */
  requiredLimits?: Record<string, number>;
  /**
   * `false`: no subgroup operations, as on an adapter without the `subgroups` feature (the device is
   * requested without it; a device you pass is used without it), so every kernel takes its path
   * without them. Tests and before/after measurements of the kernels that use subgroups.
   * @internal
   */
  subgroups?: boolean;
}

/**
 * The WebGPU backend. Its DeviceArrays are GPUBuffers; `gpuBuffer(array)` gives the buffer for your
 * own WebGPU work on the same `device`.
 *
 * @example
 * ```ts
 * const gpu = await webgpuBackend();
 * const keys = gpu.upload(new Float32Array([3, 1, 2]));
 * console.log(gpu.capabilities.workgroupStorageBytes);
 * gpu.destroy();
 * ```
 */
export interface WebGpuBackend extends Backend {
  readonly name: 'webgpu';
  /** The device the backend runs on. */
  readonly device: GPUDevice;
  /** The adapter's description (vendor, architecture, device, description), when known. */
  readonly adapterInfo: Readonly<Record<'vendor' | 'architecture' | 'device' | 'description', string>> | undefined;
  /** True once the device was lost or the backend destroyed. */
  readonly lost: boolean;
  /** The GPUBuffer behind a DeviceArray of this backend (its size is rounded up to 16 bytes). */
  gpuBuffer(array: DeviceArray): GPUBuffer;
  /**
   * GPUBuffers alive that this backend created (device arrays, its own scratch, reads under way), for
   * leak checks. The mappable buffers it keeps between reads for the next read of the same size (two
   * per size, 64 MiB in all) are not counted.
   */
  liveBuffers(): number;
}

/** Thrown (or rejected with) once the WebGPU device is lost; every later call on the backend throws it too. */
export class WebGpuDeviceLostError extends Error {
  /** `GPUDeviceLostInfo.reason`: `'destroyed'` or `'unknown'`. */
  readonly reason: string;
  constructor(message: string, reason: string) {
    super(message);
    this.name = 'WebGpuDeviceLostError';
    this.reason = reason;
  }
}

/** A WebGPU validation or out-of-memory error, reported at the next `download` or `synchronize`. */
export class WebGpuError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebGpuError';
  }
}

class WebGpuDeviceArray<D extends DType> implements DeviceArray<D> {
  destroyed = false;
  constructor(
    readonly backend: WebGpuBackendImpl,
    readonly dtype: D,
    readonly length: number,
    /** @internal */ readonly buffer: GPUBuffer,
  ) {}

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.backend.arrayDestroyed(this.length * bytesPerElement[this.dtype]);
    this.backend.release(this.buffer);
  }
}

/** A compiled kernel and its bind group layout. */
export interface CompiledProgram {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

/**
 * What algorithms' WebGPU executors use of the backend (not public API).
 * @internal
 */
export interface WebGpuRuntime {
  readonly device: GPUDevice;
  readonly maxStorageBufferBindingSize: number;
  readonly maxWorkgroupsPerDimension: number;
  readonly minUniformBufferOffsetAlignment: number;
  readonly minStorageBufferOffsetAlignment: number;
  readonly subgroups: boolean;
  /**
   * The subgroup width when shaders may use subgroup operations and every subgroup has it (the
   * adapter's subgroupMinSize equals its subgroupMaxSize), else undefined: kernels whose layout
   * depends on the width (the sort's radix scatter) are specialized on it only then.
   */
  readonly fixedSubgroupSize: number | undefined;
  /** Throws when the backend is lost or destroyed. */
  checkUsable(): void;
  bufferOf(array: DeviceArray): GPUBuffer;
  /** The pipeline of a program, compiled on first use (counted in `kernelsCompiled`). */
  compile(program: WebGpuProgram): CompiledProgram;
  countLaunch(kernelName: string): void;
  /** A persistent scratch buffer of at least `bytes`, grown as needed. Queue order makes reuse across calls safe. */
  scratch(kind: 'uniforms' | 'block', bytes: number): GPUBuffer;
  /**
   * The uniform scratch buffer holding `data`: written only when the last write was another
   * `owner`'s or other words (a plan run again with the same values writes nothing).
   */
  uniforms(data: Uint32Array, owner: object): GPUBuffer;
  /** Submits and keeps `keepAlive` referenced until the queue reports the work done. */
  submit(commands: GPUCommandBuffer, keepAlive: readonly unknown[]): void;
}

const wantedLimits = [
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

const align4 = (bytes: number) => Math.ceil(bytes / 4) * 4;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

class WebGpuBackendImpl implements WebGpuBackend, WebGpuRuntime {
  readonly name = 'webgpu' as const;
  readonly capabilities: BackendCapabilities;
  readonly maxStorageBufferBindingSize: number;
  readonly maxWorkgroupsPerDimension: number;
  readonly minUniformBufferOffsetAlignment: number;
  readonly minStorageBufferOffsetAlignment: number;
  private readonly counter = new StatsCounter();
  private readonly pipelines = new Map<string, CompiledProgram>();
  private readonly layouts = new Map<string, GPUBindGroupLayout>();
  private readonly scratchBuffers: Record<'uniforms' | 'block', GPUBuffer | undefined> = { uniforms: undefined, block: undefined };
  /** Objects of submitted work, by batch, until the queue reports the batch done. */
  private readonly inFlight = new Set<readonly unknown[]>();
  /** Objects of work submitted since the watch under way began; the next watch covers them. */
  private unwatched: unknown[] = [];
  private watching = false;
  /** The device's queue (a getter call into Dawn each time it is read from the device). */
  private readonly queue: GPUQueue;
  private readonly scratchSizes: Record<'uniforms' | 'block', number> = { uniforms: 0, block: 0 };
  /** What the uniform scratch buffer holds: whose words, and the words. */
  private uniformOwner: object | undefined;
  private uniformWords = new Uint32Array(0);
  /** Buffers waiting for earlier work to finish before they are destroyed. */
  private readonly pendingReleases = new Set<Promise<void>>();
  private live = 0;
  /** Mappable buffers of finished reads, by size, for the next read of that size (see `stagingFor`). */
  private readonly stagingPool = new Map<number, GPUBuffer[]>();
  private stagingPoolBytes = 0;
  /** An upload's writeBuffer waits for the next submit (Dawn keeps its staged copy until then). */
  private unsubmittedWrites = false;
  /** @internal */
  readonly hooks = new BackendHooks((array) => this.read(array));
  private lostError: WebGpuDeviceLostError | undefined;
  private deferredError: WebGpuError | undefined;
  private readonly lostSignal: Promise<never>;
  private rejectLost!: (error: Error) => void;
  private destroyedByUser = false;
  private onUncapturedError: ((event: Event) => void) | undefined;
  readonly fixedSubgroupSize: number | undefined;

  constructor(
    readonly device: GPUDevice,
    readonly adapterInfo: WebGpuBackend['adapterInfo'],
    readonly subgroups: boolean,
    subgroupSize: number | undefined,
    subgroupMaxSize: number | undefined,
    parallelism: number,
    private readonly ownsDevice: boolean,
  ) {
    const limits = device.limits;
    this.queue = device.queue;
    this.maxStorageBufferBindingSize = limits.maxStorageBufferBindingSize;
    this.maxWorkgroupsPerDimension = limits.maxComputeWorkgroupsPerDimension;
    this.minUniformBufferOffsetAlignment = limits.minUniformBufferOffsetAlignment;
    this.minStorageBufferOffsetAlignment = limits.minStorageBufferOffsetAlignment;
    this.fixedSubgroupSize = subgroupSize !== undefined && subgroupMaxSize === subgroupSize ? subgroupSize : undefined;
    this.capabilities = Object.freeze({
      maxWorkgroupSize: Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX),
      workgroupStorageBytes: limits.maxComputeWorkgroupStorageSize,
      subgroupSize,
      maxStorageBufferBytes: limits.maxStorageBufferBindingSize,
      maxBufferBytes: limits.maxBufferSize,
      maxWorkgroupsPerDimension: limits.maxComputeWorkgroupsPerDimension,
      parallelism,
    });
    this.lostSignal = new Promise<never>((_, reject) => {
      this.rejectLost = reject;
    });
    this.lostSignal.catch(() => undefined); // only observed through guard()
    void device.lost.then((info) => {
      const message = this.destroyedByUser
        ? 'the webgpu backend was destroyed; pending work was abandoned'
        : `the WebGPU device was lost (${info.reason}): ${info.message || 'no message'}`;
      this.lostError ??= new WebGpuDeviceLostError(message, this.destroyedByUser ? 'destroyed' : String(info.reason));
      this.rejectLost(this.lostError);
      this.inFlight.clear();
      this.unwatched = [];
    });
    const onError = (this.onUncapturedError = (event: Event) => {
      const error = (event as GPUUncapturedErrorEvent).error;
      this.deferredError ??= new WebGpuError(`WebGPU error: ${error?.message ?? String(error)}`);
      event.preventDefault?.();
    });
    if (typeof device.addEventListener === 'function') device.addEventListener('uncapturederror', onError);
    else (device as { onuncapturederror: unknown }).onuncapturederror = onError;
  }

  get lost(): boolean {
    return this.lostError !== undefined || this.destroyedByUser;
  }

  checkUsable(): void {
    if (this.destroyedByUser) throw new SegkitUsageError('the webgpu backend was destroyed and cannot be used');
    if (this.lostError !== undefined) throw this.lostError;
  }

  /** Resolves with `promise`, or rejects as soon as the device is lost (with the loss, not Dawn's abort). */
  private async guard<T>(promise: Promise<T>): Promise<T> {
    try {
      return await Promise.race([promise, this.lostSignal]);
    } catch (error) {
      // Dawn may reject a pending map before it reports the loss: give the loss a turn to arrive.
      if (this.lostError === undefined) await Promise.race([this.device.lost, new Promise((resolve) => setTimeout(resolve, 50))]);
      throw this.lostError ?? error;
    }
  }

  private throwDeferred(): void {
    const error = this.deferredError;
    if (error !== undefined) {
      this.deferredError = undefined;
      throw error;
    }
  }

  /**
   * A mappable buffer for a read of `size` bytes: one a finished read left in the pool (sizes are
   * rounded up to powers of two from 256 bytes), else a new one. Dawn on an H200 took ~0.5 ms to make
   * a mappable buffer and ~45 us for the whole read through a kept one (bench/webgpu-call-floor.ts),
   * so every download, and every settle of 'validate' status reports, paid that half millisecond.
   */
  private stagingFor(size: number): GPUBuffer {
    const pooled = size <= stagingPoolLimits.largestBytes ? stagingClass(size) : size;
    const kept = this.stagingPool.get(pooled)?.pop();
    if (kept !== undefined) {
      this.stagingPoolBytes -= pooled;
      this.live++;
      return kept;
    }
    return this.createBuffer(pooled, usage.mapRead | usage.copyDst, 'segkit download');
  }

  /** Puts a read's buffer (unmapped) back in the pool, or destroys it past the pool's limits. */
  private stagingDone(staging: GPUBuffer): void {
    const size = staging.size;
    const kept = this.stagingPool.get(size) ?? [];
    if (size > stagingPoolLimits.largestBytes || kept.length >= stagingPoolLimits.perSize || this.stagingPoolBytes + size > stagingPoolLimits.totalBytes) {
      staging.destroy();
      this.live--;
      return;
    }
    kept.push(staging);
    this.stagingPool.set(size, kept);
    this.stagingPoolBytes += size;
    this.live--;
  }

  /** The read-back buffers kept for reuse, and their bytes (bounded by `stagingPoolLimits`). @internal */
  stagingPoolHeld(): { buffers: number; bytes: number } {
    let buffers = 0;
    for (const kept of this.stagingPool.values()) buffers += kept.length;
    return { buffers, bytes: this.stagingPoolBytes };
  }

  private createBuffer(size: number, usageFlags: number, label: string): GPUBuffer {
    const buffer = this.device.createBuffer({ size, usage: usageFlags, label });
    this.live++;
    return buffer;
  }

  arrayDestroyed(bytes: number): void {
    this.counter.arrayDestroyed(bytes);
  }

  /**
   * Submits the uploads still pending. Dawn holds an upload's staged copy until the next submit,
   * even when its buffer is destroyed: a loop of upload and destroy with no work between them grew
   * the process by the bytes uploaded, without bound.
   */
  private flushWrites(): void {
    if (!this.unsubmittedWrites || this.lost) return;
    this.unsubmittedWrites = false;
    this.queue.submit([]);
  }

  /** Destroys `buffer` once the work submitted so far is done. */
  release(buffer: GPUBuffer): void {
    this.flushWrites();
    if ((this.inFlight.size === 0 && this.unwatched.length === 0) || this.lost) {
      buffer.destroy();
      this.live--;
      return;
    }
    const done = this.queue
      .onSubmittedWorkDone()
      .catch(() => undefined)
      .then(() => {
        buffer.destroy();
        this.live--;
        this.pendingReleases.delete(done);
      });
    this.pendingReleases.add(done);
  }

  private allocate<D extends DType>(dtype: D, length: number, what: string): WebGpuDeviceArray<D> {
    checkAllocationSize(what, dtype, length, this.capabilities);
    const bytes = length * bytesPerElement[dtype];
    // Whole 16-byte words: kernels may read the same buffer as vec4<u32> (top-k's long scans).
    const buffer = this.createBuffer(Math.max(16, align16(bytes)), usage.storage | usage.copySrc | usage.copyDst, `segkit ${dtype}[${length}]`);
    this.counter.arrayMade(bytes);
    return new WebGpuDeviceArray(this, dtype, length, buffer);
  }

  upload<T extends UploadableArray>(data: T): DeviceArray<DTypeOf<T>> {
    this.checkUsable();
    const array = this.allocate(uploadDType(data) as DTypeOf<T>, data.length, 'upload(data)');
    if (data.byteLength > 0) {
      this.queue.writeBuffer(array.buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      this.unsubmittedWrites = true;
    }
    this.counter.upload(data.byteLength);
    return array;
  }

  alloc<D extends DType>(dtype: D, length: number): DeviceArray<D> {
    this.checkUsable();
    checkAllocArguments(dtype, length);
    // WebGPU buffers start zero-filled.
    return this.allocate(dtype, length, 'alloc(length)');
  }

  async download<D extends DType>(array: DeviceArray<D>, into?: HostArrayOf<D>): Promise<HostArrayOf<D>> {
    // The array's copy is submitted first (before read's first await); the deferred checks' reads
    // follow it in the same turn.
    let settled: Promise<void> | undefined;
    const data = this.read(array, into === undefined ? undefined : { into, settled: () => settled! });
    settled = this.hooks.settle();
    const [result] = await Promise.all([data, settled]);
    return result;
  }

  /**
   * The array's bytes in a new typed array, or in `target.into` once `target.settled()` (the deferred
   * checks) has resolved: a violation leaves it as it was.
   */
  private async read<D extends DType>(array: DeviceArray<D>, target?: { into: HostArrayOf<D>; settled: () => Promise<void> }): Promise<HostArrayOf<D>> {
    this.checkUsable();
    checkDeviceArray(array, this, 'download(array)');
    const into = target?.into;
    if (into !== undefined) checkDownloadTarget(array, into);
    const source = (array as WebGpuDeviceArray<D>).buffer;
    const bytes = array.length * bytesPerElement[array.dtype];
    const size = Math.max(4, align4(bytes));
    const staging = this.stagingFor(size);
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, staging, 0, size);
    const commands = encoder.finish();
    this.submit(commands, [source, staging]);
    this.counter.download(bytes);
    let copy: ArrayBuffer;
    let mapped = false;
    try {
      await this.guard(staging.mapAsync(mapModeRead, 0, size));
      // The mapped range detaches on unmap: copy first.
      const range = staging.getMappedRange(0, size);
      copy = into === undefined ? range.slice(0, bytes) : range;
      if (into !== undefined) {
        try {
          await target!.settled();
        } catch (error) {
          staging.unmap();
          mapped = true;
          throw error;
        }
        new Uint8Array(into.buffer, into.byteOffset, bytes).set(new Uint8Array(range, 0, bytes));
      }
      staging.unmap();
      mapped = true;
    } finally {
      if (!this.lost) {
        if (mapped) this.stagingDone(staging);
        else {
          staging.destroy();
          this.live--;
        }
      }
    }
    this.throwDeferred();
    if (into !== undefined) return into;
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

  async synchronize(): Promise<void> {
    this.checkUsable();
    this.flushWrites();
    // The deferred checks' reads are submitted now, behind every earlier run, so waiting for the
    // queue and reading the status reports take one round trip, not two.
    const settled = this.hooks.settle();
    settled.catch(() => undefined); // awaited below, after the WebGPU errors take precedence
    await this.guard(this.queue.onSubmittedWorkDone());
    await this.guard(Promise.all([...this.pendingReleases]));
    this.throwDeferred();
    await settled;
  }

  destroy(): void {
    if (this.destroyedByUser) return;
    this.hooks.destroyed();
    this.destroyedByUser = true;
    for (const kind of ['uniforms', 'block'] as const) {
      this.scratchBuffers[kind]?.destroy();
      this.scratchBuffers[kind] = undefined;
      this.scratchSizes[kind] = 0;
    }
    this.uniformOwner = undefined;
    for (const kept of this.stagingPool.values()) for (const staging of kept) staging.destroy();
    this.stagingPool.clear();
    this.stagingPoolBytes = 0;
    this.pipelines.clear();
    this.layouts.clear();
    this.lostError ??= new WebGpuDeviceLostError('the webgpu backend was destroyed; pending work was abandoned', 'destroyed');
    this.rejectLost(this.lostError);
    this.inFlight.clear();
    this.unwatched = [];
    if (this.ownsDevice) this.device.destroy();
    else if (this.onUncapturedError !== undefined && typeof this.device.removeEventListener === 'function') {
      this.device.removeEventListener('uncapturederror', this.onUncapturedError);
    }
  }

  stats(): BackendStats {
    return this.counter.snapshot();
  }

  resetStats(): void {
    this.counter.reset();
  }

  gpuBuffer(array: DeviceArray): GPUBuffer {
    return this.bufferOf(array);
  }

  liveBuffers(): number {
    return this.live;
  }

  // ---- WebGpuRuntime

  bufferOf(array: DeviceArray): GPUBuffer {
    if (!(array instanceof WebGpuDeviceArray) || array.backend !== this) checkDeviceArray(array, this, 'array');
    if (array.destroyed) throw new SegkitUsageError('a DeviceArray was destroyed and cannot be used');
    return (array as WebGpuDeviceArray<DType>).buffer;
  }

  compile(program: WebGpuProgram): CompiledProgram {
    const cached = this.pipelines.get(program.cacheKey);
    if (cached !== undefined) return cached;
    const entries = bindGroupLayoutEntries(program);
    const layoutKey = JSON.stringify(entries);
    let layout = this.layouts.get(layoutKey);
    if (layout === undefined) {
      layout = this.device.createBindGroupLayout({ entries, label: `segkit layout ${program.bindings.length}` });
      this.layouts.set(layoutKey, layout);
    }
    const code = makeShader(program);
    this.device.pushErrorScope('validation');
    const module = this.device.createShaderModule({ code, label: program.name });
    const pipeline = this.device.createComputePipeline({
      label: program.name,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main' },
    });
    void this.device.popErrorScope().then(
      (error) => {
        if (error !== null) this.deferredError = new WebGpuError(`${program.name}: the kernel did not compile: ${error.message}`);
      },
      () => undefined,
    );
    const compiled = { pipeline, layout };
    this.pipelines.set(program.cacheKey, compiled);
    this.counter.compiled();
    return compiled;
  }

  countLaunch(kernelName: string): void {
    this.counter.launch(kernelName);
  }

  scratch(kind: 'uniforms' | 'block', bytes: number): GPUBuffer {
    const current = this.scratchBuffers[kind];
    if (current !== undefined && this.scratchSizes[kind] >= bytes) return current;
    if (current !== undefined) this.release(current);
    const size = Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(bytes, 1))));
    const buffer = this.createBuffer(size, (kind === 'uniforms' ? usage.uniform : usage.storage) | usage.copyDst, `segkit ${kind}`);
    this.scratchBuffers[kind] = buffer;
    this.scratchSizes[kind] = size;
    if (kind === 'uniforms') this.uniformOwner = undefined;
    return buffer;
  }

  uniforms(data: Uint32Array, owner: object): GPUBuffer {
    const buffer = this.scratch('uniforms', data.byteLength);
    const held = this.uniformWords;
    let same = this.uniformOwner === owner && held.length === data.length;
    for (let i = 0; same && i < data.length; i++) same = held[i] === data[i];
    if (!same) {
      this.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      this.uniformOwner = owner;
      this.uniformWords = data.slice();
    }
    return buffer;
  }

  submit(commands: GPUCommandBuffer, keepAlive: readonly unknown[]): void {
    this.queue.submit([commands]);
    this.unsubmittedWrites = false;
    this.unwatched.push(commands, keepAlive);
    if (!this.watching) this.watch();
  }

  /**
   * One onSubmittedWorkDone at a time (each is a promise and a native callback): it covers the work
   * submitted before it was asked for; work submitted meanwhile waits for the next one.
   */
  private watch(): void {
    const batch = this.unwatched;
    this.unwatched = [];
    this.inFlight.add(batch);
    this.watching = true;
    const done = () => {
      this.inFlight.delete(batch);
      this.watching = false;
      if (this.unwatched.length > 0 && !this.lost) this.watch();
    };
    void this.queue.onSubmittedWorkDone().then(done, done);
  }
}

/**
 * The WebGPU runtime behind a backend, for algorithms' executors.
 * @internal
 */
export function webgpuRuntime(backend: Backend): WebGpuRuntime {
  if (!(backend instanceof WebGpuBackendImpl)) throw new Error(`internal: expected the webgpu backend, got '${backend.name}'`);
  backend.checkUsable();
  return backend;
}

/** True for a backend made by {@link webgpuBackend}. */
export function isWebGpuBackend(backend: Backend): backend is WebGpuBackend {
  return backend instanceof WebGpuBackendImpl;
}

function infoOf(info: GPUAdapterInfo | undefined): WebGpuBackend['adapterInfo'] {
  if (info === undefined) return undefined;
  return Object.freeze({ vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description });
}

/** The adapter's smallest and largest subgroup widths (undefined without subgroups, or where the adapter does not say). */
function subgroupSizes(subgroups: boolean, info: GPUAdapterInfo | undefined): { min: number | undefined; max: number | undefined } {
  if (!subgroups) return { min: undefined, max: undefined };
  const sizes = info as { subgroupMinSize?: number; subgroupMaxSize?: number } | undefined;
  return { min: sizes?.subgroupMinSize || undefined, max: sizes?.subgroupMaxSize || undefined };
}

/** Workgroups the device runs at once, roughly; software adapters run one per host thread. */
function estimateParallelism(info: GPUAdapterInfo | undefined): number {
  const software = info !== undefined && ((info as { isFallbackAdapter?: boolean }).isFallbackAdapter === true || /llvmpipe|lavapipe|swiftshader/i.test(`${info.description} ${info.device} ${info.architecture}`));
  const threads = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 4;
  return software ? threads : 1024;
}

/**
 * The WebGPU backend. In browsers it uses `navigator.gpu`; in Node the `webgpu` package (Dawn), an
 * optional peer dependency loaded only here. It requests the adapter's best workgroup storage,
 * invocations per workgroup and buffer sizes, and the `subgroups` feature where there is one.
 * `destroy()` destroys the device (unless you passed one), which lets a Node process exit.
 *
 * @example
 * ```ts
 * const gpu = await webgpuBackend({ powerPreference: 'high-performance' });
 * await DeviceBatchedTopK.select(args, env({ backend: gpu }));
 * gpu.destroy();
 * ```
 */
export async function webgpuBackend(options: WebGpuBackendOptions = {}): Promise<WebGpuBackend> {
  if (options.device !== undefined) {
    const device = options.device;
    const info = (device as { adapterInfo?: GPUAdapterInfo }).adapterInfo;
    const subgroups = options.subgroups !== false && device.features.has('subgroups');
    const sizes = subgroupSizes(subgroups, info);
    return new WebGpuBackendImpl(device, infoOf(info), subgroups, sizes.min, sizes.max, estimateParallelism(info), false);
  }
  const adapter = await requestAdapter({ powerPreference: options.powerPreference });
  const requiredLimits: Record<string, number> = {};
  for (const name of wantedLimits) {
    const value = (adapter.limits as unknown as Record<string, number | undefined>)[name];
    if (typeof value === 'number') requiredLimits[name] = value;
  }
  Object.assign(requiredLimits, options.requiredLimits);
  const subgroups = options.subgroups !== false && adapter.features.has('subgroups');
  const device = await adapter.requestDevice({
    label: 'segkit',
    requiredFeatures: subgroups ? (['subgroups'] as GPUFeatureName[]) : [],
    requiredLimits,
  });
  const info = adapter.info;
  const sizes = subgroupSizes(subgroups, info);
  return new WebGpuBackendImpl(device, infoOf(info), subgroups, sizes.min, sizes.max, estimateParallelism(info), true);
}
