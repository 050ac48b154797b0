/**
 * The Dawn device the WebGPU benches time on, and GPU time from timestamp queries.
 *
 * `benchDevice()` creates a Dawn instance (exact timestamps: Dawn quantizes them by default), asks
 * for the high-performance adapter and a device with the adapter's largest buffers and workgroups,
 * `subgroups` and `timestamp-query` where there are. Pass the device to `webgpuBackend({ device })`.
 *
 * `passTimer(device)` wraps the command encoder so that, while a capture is on, each compute pass a
 * call records gets timestamps; `gpuTimeMs(call, sync)` is the median over `runs` calls of the sum of
 * their compute passes' spans (nothing in segkit changes).
 */
/// <reference types="@webgpu/types" />
import { create, globals } from 'webgpu';

export interface BenchDevice {
  readonly gpu: ReturnType<typeof create>;
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  readonly features: readonly GPUFeatureName[];
}

/** `toggles`: more Dawn instance flags (e.g. 'enable-dawn-features=skip_validation'). */
export async function benchDevice(options: { toggles?: readonly string[]; features?: readonly GPUFeatureName[] } = {}): Promise<BenchDevice> {
  Object.assign(globalThis, globals);
  let gpu: ReturnType<typeof create>;
  try {
    gpu = create(['disable-dawn-features=timestamp_quantization', ...(options.toggles ?? [])]);
  } catch {
    gpu = create([...(options.toggles ?? [])]);
  }
  // If the create() result is garbage-collected, dawn.node crashes: keep it reachable.
  const kept = ((globalThis as Record<string, unknown>).__segkitBenchGpus ??= []) as unknown[];
  kept.push(gpu);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no WebGPU adapter (VK_ICD_FILENAMES?)');
  const L = adapter.limits;
  const features = (['subgroups', 'timestamp-query', ...(options.features ?? [])] as GPUFeatureName[]).filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: {
      maxComputeWorkgroupStorageSize: L.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupsPerDimension: L.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: L.maxStorageBufferBindingSize,
      maxBufferSize: L.maxBufferSize,
      maxComputeWorkgroupSizeX: L.maxComputeWorkgroupSizeX,
      maxComputeInvocationsPerWorkgroup: L.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: L.maxStorageBuffersPerShaderStage,
    },
  });
  return { gpu, adapter, device, features };
}

const median = (a: readonly number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

export interface PassTimer {
  /** Median GPU ms (sum of the compute passes' timestamp spans) of `call`, or undefined without timestamps. */
  gpuTimeMs(call: () => Promise<unknown>, sync: () => Promise<unknown>, runs: number): Promise<{ ms: number; passes: number } | undefined>;
}

/** At most this many compute passes per timed call. */
const maxPasses = 32;

export function passTimer(device: GPUDevice): PassTimer {
  if (!device.features.has('timestamp-query')) return { gpuTimeMs: async () => undefined };
  const capture = { on: false, passes: 0, resolved: false };
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * maxPasses });
  const resolve = device.createBuffer({ size: 2 * maxPasses * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 2 * maxPasses * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const proto = Object.getPrototypeOf(device.createCommandEncoder()) as GPUCommandEncoder;
  const begin = proto.beginComputePass;
  const finish = proto.finish;
  proto.beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor) {
    if (capture.on && capture.passes < maxPasses && !capture.resolved && desc?.timestampWrites === undefined) {
      const i = capture.passes++;
      desc = { ...(desc ?? {}), timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } };
    }
    return begin.call(this, desc);
  };
  proto.finish = function (this: GPUCommandEncoder, desc?: GPUCommandBufferDescriptor) {
    if (capture.on && capture.passes > 0 && !capture.resolved) {
      this.resolveQuerySet(querySet, 0, 2 * capture.passes, resolve, 0);
      this.copyBufferToBuffer(resolve, 0, read, 0, 16 * capture.passes);
      capture.resolved = true;
    }
    return finish.call(this, desc);
  };
  return {
    async gpuTimeMs(call, sync, runs) {
      const samples: number[] = [];
      let passes = 0;
      for (let r = 0; r < runs; r++) {
        Object.assign(capture, { on: true, passes: 0, resolved: false });
        await call();
        capture.on = false;
        await sync();
        if (!capture.resolved) return undefined;
        passes = capture.passes;
        await read.mapAsync(GPUMapMode.READ);
        const t = new BigUint64Array(read.getMappedRange().slice(0, 16 * passes));
        read.unmap();
        let ns = 0;
        for (let i = 0; i < passes; i++) ns += Number(t[2 * i + 1]! - t[2 * i]!);
        samples.push(ns / 1e6);
      }
      return { ms: median(samples), passes };
    },
  };
}

export interface LaunchTimer {
  /** Median GPU ms of each dispatch of `call` (in the order the call records them), over `runs` calls. */
  launchTimesMs(call: () => Promise<unknown>, sync: () => Promise<unknown>, runs: number): Promise<number[]>;
}

/** At most this many dispatches per call timed by a launch timer. */
const maxDispatches = 64;

/**
 * GPU time per launch: WebGPU timestamps only passes and segkit records a call's launches in one
 * pass, so while a capture is on, the encoder hands out a stand-in pass that records each dispatch
 * in a timed pass of its own (same pipeline, bind groups and grid). Dawn puts the same barrier
 * between two passes as between two dispatches of one pass that share a buffer, so each launch runs
 * as it does in the plan. Use one timer per device, not beside `passTimer` (both wrap the encoder).
 */
export function launchTimer(device: GPUDevice): LaunchTimer {
  if (!device.features.has('timestamp-query')) throw new Error('launchTimer: the device has no timestamp-query');
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * maxDispatches });
  const resolve = device.createBuffer({ size: 2 * maxDispatches * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 2 * maxDispatches * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const capture = { on: false, dispatches: 0 };
  const proto = Object.getPrototypeOf(device.createCommandEncoder()) as GPUCommandEncoder;
  const begin = proto.beginComputePass;
  const finish = proto.finish;
  proto.beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor) {
    if (!capture.on) return begin.call(this, desc);
    const encoder = this;
    let pipeline: GPUComputePipeline | undefined;
    const groups = new Map<number, GPUBindGroup | null>();
    const split = {
      label: '',
      setPipeline(x: GPUComputePipeline) {
        pipeline = x;
      },
      setBindGroup(index: number, group: GPUBindGroup | null) {
        groups.set(index, group);
      },
      dispatchWorkgroups(x: number, y = 1, z = 1) {
        const i = capture.dispatches++;
        if (i >= maxDispatches) throw new Error(`launchTimer: more than ${maxDispatches} dispatches in one call`);
        const pass = begin.call(encoder, { timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
        pass.setPipeline(pipeline!);
        for (const [index, group] of groups) pass.setBindGroup(index, group);
        pass.dispatchWorkgroups(x, y, z);
        pass.end();
      },
      end() {},
      pushDebugGroup() {},
      popDebugGroup() {},
      insertDebugMarker() {},
    };
    return split as unknown as GPUComputePassEncoder;
  };
  proto.finish = function (this: GPUCommandEncoder, desc?: GPUCommandBufferDescriptor) {
    if (capture.on && capture.dispatches > 0) {
      this.resolveQuerySet(querySet, 0, 2 * capture.dispatches, resolve, 0);
      this.copyBufferToBuffer(resolve, 0, read, 0, 16 * capture.dispatches);
    }
    return finish.call(this, desc);
  };
  return {
    async launchTimesMs(call, sync, runs) {
      const samples: number[][] = [];
      for (let r = 0; r < runs; r++) {
        Object.assign(capture, { on: true, dispatches: 0 });
        await call();
        capture.on = false;
        await sync();
        const n = capture.dispatches;
        await read.mapAsync(GPUMapMode.READ);
        const t = new BigUint64Array(read.getMappedRange().slice(0, 16 * n));
        read.unmap();
        samples.push(Array.from({ length: n }, (_, i) => Number(t[2 * i + 1]! - t[2 * i]!) / 1e6));
      }
      return samples[0]!.map((_, i) => median(samples.map((s) => s[i]!)));
    },
  };
}
