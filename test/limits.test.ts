/**
 * Limits are a function of a backend's capabilities, enforced the same way on every backend: each
 * backend (the CPU emulator with and without workers, WebGPU with segkit's device and with WebGPU's
 * default limits) is paired with a CPU emulator given its capabilities, and the two must refuse the
 * same calls with the same error and message, and run the same calls to the same results. A CPU
 * given WebGPU's default limits (the most any adapter is sure to have) runs without a GPU too.
 *
 * No WebGPU adapter: in CI (process.env.CI set) that is a failure; elsewhere those pairs are skipped.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestAdapter } from '../src/backends/webgpu/gpu.js';
import { webgpuBackend } from '../src/backends/webgpu/webgpu-backend.js';
import {
  type Backend,
  type BackendCapabilities,
  type DeviceArray,
  type Env,
  type TopKPlan,
  DeviceBatchedCopy,
  DeviceBatchedTopK,
  DeviceSegmentedReduce,
  DeviceSegmentedScan,
  DeviceSegmentedSort,
  SegkitUsageError,
  cpuBackend,
  env,
  p,
  referenceTopK,
  topKPolicyFor,
} from '../src/index.js';
import { rng } from './helpers.js';

process.env.LP_NUM_THREADS ??= '1';
// Lavapipe compiles each radix-select pipeline through LLVM: with a cold shader cache (a fresh
// machine), the sorted selection's pipelines alone took over 120 s.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

/** WebGPU's default limits: what every adapter offers without asking for more. */
const webgpuDefaultCapabilities: BackendCapabilities = {
  maxWorkgroupSize: 256,
  workgroupStorageBytes: 16384,
  subgroupSize: undefined,
  maxStorageBufferBytes: 134217728,
  maxBufferBytes: 268435456,
  maxWorkgroupsPerDimension: 65535,
  parallelism: 1,
};

async function adapterMissing(): Promise<string | undefined> {
  try {
    (await webgpuBackend()).destroy();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
const missing = await adapterMissing();
if (missing !== undefined && process.env.CI) throw new Error(`the WebGPU limits tests cannot run in CI: ${missing}`);

/**
 * Backends under test. `runsAtLimits`: also run the calls just inside the limits (on lavapipe each
 * compiles radix-select's pipelines, a minute or more on a busy CI box: once per WebGPU kind).
 */
const subjects: { name: string; make: () => Promise<Backend>; webgpu: boolean; runsAtLimits: boolean }[] = [
  { name: 'cpu', make: async () => cpuBackend({ workers: 0 }), webgpu: false, runsAtLimits: true },
  { name: 'cpu with a worker', make: async () => cpuBackend({ workers: 1, parallelThreshold: 0 }), webgpu: false, runsAtLimits: true },
  { name: 'cpu with WebGPU default limits', make: async () => cpuBackend({ capabilities: webgpuDefaultCapabilities }), webgpu: false, runsAtLimits: true },
  { name: 'webgpu', make: () => webgpuBackend(), webgpu: true, runsAtLimits: true },
  {
    name: 'webgpu with default limits',
    make: async () => {
      const adapter = await requestAdapter({});
      if (adapter === null || adapter === undefined) throw new Error('no adapter');
      return webgpuBackend({ device: await adapter.requestDevice() });
    },
    webgpu: true,
    runsAtLimits: false,
  },
];

/** What a call came to: its error's class and message, or its outputs' bits. */
type Outcome = { error: string; message: string } | { keys: number[]; values: number[] };

const planOf = DeviceBatchedTopK.plan as unknown as (args: unknown, environment: Env) => TopKPlan;

/** Plans and runs `args(backend)` on `backend`; everything it allocated is destroyed. */
async function outcome(backend: Backend, make: (backend: Backend, owned: DeviceArray[]) => { args: Record<string, unknown>; environment?: Parameters<typeof env>[0] }): Promise<Outcome> {
  const owned: DeviceArray[] = [];
  try {
    const { args, environment } = make(backend, owned);
    const plan = planOf(args, env({ ...environment, backend }));
    const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
    if (temp !== undefined) owned.push(temp);
    await plan.run(temp);
    const keys = [...new Uint32Array((await backend.download(args.keysOut as DeviceArray)).buffer)];
    const values = args.valuesOut === undefined ? [] : [...new Uint32Array((await backend.download(args.valuesOut as DeviceArray)).buffer)];
    return { keys, values };
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return { error: error.name, message: error.message };
  } finally {
    for (const array of owned) array.destroy();
  }
}

/** Each segment's `width` output slots as a sorted set (unsorted output's order is the backend's). */
function asSets(result: Outcome, segments: number, width: number): Outcome {
  if (!('keys' in result)) return result;
  const sets = (a: number[]) => Array.from({ length: segments }, (_, s) => a.slice(s * width, (s + 1) * width).sort((x, y) => x - y)).flat();
  return { keys: sets(result.keys), values: sets(result.values) };
}

const random = rng(19);

/** Segments of `size` random f32 keys, top `k` of each ('max'), with indices. */
function topK(segments: number, size: number, k: { value: number; max: number }, options: { variant?: 'radix-select'; sorted?: boolean } = {}) {
  const keys = new Float32Array(segments * size).map(() => (random() - 0.5) * 1000);
  const expected = referenceTopK({
    keyType: 'f32',
    keys: new Uint32Array(keys.buffer),
    segmentStarts: Array.from({ length: segments }, (_, s) => s * size),
    segmentSizes: Array.from({ length: segments }, () => size),
    k: Array.from({ length: segments }, () => k.value),
    directions: Array.from({ length: segments }, () => 'max' as const),
    kMax: k.max,
    withValues: true,
  });
  const make = (backend: Backend, owned: DeviceArray[]) => {
    const keysIn = backend.upload(keys);
    const keysOut = backend.alloc('f32', segments * k.max);
    const valuesOut = backend.alloc('u32', segments * k.max);
    owned.push(keysIn, keysOut, valuesOut);
    return {
      args: {
        keysIn,
        keysOut,
        valuesOut,
        segmentSizes: p.uniform(size, { min: 0, max: size }),
        k: p.uniform(k.value, { min: 1, max: k.max }),
        selectDirection: p.constantOption('max'),
        numSegments: p.uniform(segments, { min: 0, max: segments }),
      },
      environment: {
        tuning: options.variant === undefined ? {} : { variant: options.variant },
        requirements: { outputOrdering: options.sorted === false ? ('unsorted' as const) : ('sorted' as const) },
      },
    };
  };
  return { make, expected };
}

/** One segment over keys of `length` elements that are only allocated (nothing is uploaded). */
function bigKeys(length: number, k: number) {
  return (backend: Backend, owned: DeviceArray[]) => {
    const keysIn = backend.alloc('f32', length);
    owned.push(keysIn);
    const keysOut = backend.alloc('f32', k);
    owned.push(keysOut);
    return {
      args: {
        keysIn,
        keysOut,
        segmentSizes: p.uniform(length, { min: 0, max: length }),
        k: p.uniform(k, { min: 1, max: k }),
        selectDirection: p.constantOption('max'),
        numSegments: p.uniform(1, { min: 1, max: 1 }),
      },
    };
  };
}

/** Every algorithm's plan, to check limits that apply to all of them alike. */
const planners: Record<string, (args: unknown, environment: Env) => { destroy(): void }> = {
  reduce: DeviceSegmentedReduce.plan as never,
  scan: DeviceSegmentedScan.plan as never,
  sort: DeviceSegmentedSort.plan as never,
  copy: DeviceBatchedCopy.plan as never,
};

/**
 * `segments` segments (buffers) of `size` allocated elements each, packed, for each algorithm but
 * top-k: the name of its input array and its args.
 */
function bigInput(algorithm: string, segments: number, size: number) {
  return (b: Backend, owned: DeviceArray[]): { input: string; args: Record<string, unknown> } => {
    const own = (array: DeviceArray) => (owned.push(array), array);
    const length = segments * size;
    const input = own(b.alloc('f32', length));
    const segment = { segmentSizes: p.uniform(size, { min: 0, max: size }), numSegments: p.uniform(segments, { min: 0, max: segments }) };
    if (algorithm === 'reduce') return { input: 'valuesIn', args: { valuesIn: input, valuesOut: own(b.alloc('f32', segments)), ...segment, op: p.constantOption('max') } };
    if (algorithm === 'scan') return { input: 'valuesIn', args: { valuesIn: input, valuesOut: own(b.alloc('f32', length)), ...segment, op: p.constantOption('max'), mode: p.constantOption('inclusive') } };
    if (algorithm === 'sort') return { input: 'keysIn', args: { keysIn: input, keysOut: own(b.alloc('f32', length)), ...segment, order: p.constantOption('ascending') } };
    // Each buffer copies 4 of its segment's elements into a small destination.
    const offsets = own(b.alloc('u32', segments));
    return {
      input: 'source',
      args: {
        source: input,
        destination: own(b.alloc('f32', 4 * segments)),
        sourceOffsets: p.uniform(0),
        destinationOffsets: p.perSegment(offsets, { max: 4 * segments }),
        sizes: p.uniform(4, { min: 0, max: 4 }),
        numBuffers: p.uniform(segments, { min: 0, max: segments }),
      },
    };
  };
}

/** Plans a call (limits are checked when planning) on `backend`: 'planned', or the error's class and message. */
function planOutcome(backend: Backend, algorithm: string, make: (b: Backend, owned: DeviceArray[]) => { args: Record<string, unknown> }): { error: string; message: string } | 'planned' {
  const owned: DeviceArray[] = [];
  try {
    planners[algorithm]!(make(backend, owned).args, env({ backend })).destroy();
    return 'planned';
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return { error: error.name, message: error.message };
  } finally {
    for (const array of owned) array.destroy();
  }
}

for (const subject of subjects) {
  const describeSubject = subject.webgpu && missing !== undefined ? describe.skip : describe;
  describeSubject(`limits on ${subject.name} and on a cpu given its capabilities`, () => {
    let backend: Backend;
    let twin: Backend;
    beforeAll(async () => {
      backend = await subject.make();
      twin = cpuBackend({ capabilities: backend.capabilities, workers: 0 });
    });
    afterAll(() => {
      backend?.destroy();
      twin?.destroy();
    });

    /** The outcome on the backend, after checking that the CPU given its capabilities agrees. */
    async function both(make: Parameters<typeof outcome>[1]): Promise<Outcome> {
      const onBackend = await outcome(backend, make);
      const onTwin = await outcome(twin, make);
      expect(onTwin).toEqual(onBackend);
      return onBackend;
    }


    it('sorted output past the tile a workgroup sorts runs, through the selection sort', async (context) => {
      if (!subject.runsAtLimits) return context.skip();
      const tile = topKPolicyFor(backend.capabilities).tileItems;
      for (const k of [tile, tile + 1]) {
        const sorted = topK(2, k + 5, { value: k, max: k });
        expect(await both(sorted.make)).toEqual({ keys: [...sorted.expected.keys], values: [...sorted.expected.values] });
      }
      // A larger kMax whose segments hold no more than the tile selects no more than that (finalize sorts it).
      const smallSegments = topK(2, tile, { value: tile + 1, max: tile + 1 }, { variant: 'radix-select' });
      expect(await both(smallSegments.make)).toEqual({ keys: [...smallSegments.expected.keys], values: [...smallSegments.expected.values] });
    });

    it("'unsorted' output past the tile", async (context) => {
      if (!subject.runsAtLimits) return context.skip();
      const over = topKPolicyFor(backend.capabilities).tileItems + 1;
      const unsorted = topK(2, over + 5, { value: over, max: over }, { sorted: false });
      // The same set per segment as the reference, in some order (which may differ by backend).
      const reference = asSets({ keys: [...unsorted.expected.keys], values: [...unsorted.expected.values] }, 2, over);
      expect(asSets(await outcome(backend, unsorted.make), 2, over)).toEqual(reference);
      expect(asSets(await outcome(twin, unsorted.make), 2, over)).toEqual(reference);
    });

    it('an allocation past the largest buffer', async () => {
      const { maxBufferBytes } = backend.capabilities;
      const length = Math.floor(maxBufferBytes / 4) + 1;
      const message = `alloc(length): ${length} f32 elements (${length * 4} bytes) exceed the backend's largest buffer of ${maxBufferBytes} bytes (maxBufferBytes)`;
      for (const b of [backend, twin]) {
        const error = (() => {
          try {
            b.alloc('f32', length);
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(SegkitUsageError);
        expect((error as Error).message).toBe(message);
      }
    });

    // Keys past one binding, or temporary storage past one binding: allocated, never written, so
    // only where a binding is small enough to allocate past in a test (WebGPU's 128 MiB).
    const bindingSmall = () => backend.capabilities.maxStorageBufferBytes <= 256 << 20 && backend.capabilities.maxBufferBytes > backend.capabilities.maxStorageBufferBytes;

    it('keys larger than one storage binding', async (context) => {
      if (!bindingSmall()) return context.skip();
      const binding = backend.capabilities.maxStorageBufferBytes;
      const length = binding / 4 + 1;
      expect(await both(bigKeys(length, 4))).toEqual({
        error: 'SegkitUsageError',
        message: `keysIn: ${length} elements (${length * 4} bytes) exceed the ${binding} bytes one storage binding of this backend holds (maxStorageBufferBytes); split the call into batches of segments`,
      });
    });

    it('every other algorithm refuses an input larger than one storage binding, as top-k does', async (context) => {
      if (!bindingSmall()) return context.skip();
      const binding = backend.capabilities.maxStorageBufferBytes;
      const length = binding / 4 + 1;
      for (const algorithm of Object.keys(planners)) {
        const make = bigInput(algorithm, 1, length);
        const result = planOutcome(backend, algorithm, make);
        expect(planOutcome(twin, algorithm, make), algorithm).toEqual(result);
        const input = make(twin, []).input;
        expect(result, algorithm).toEqual({
          error: 'SegkitUsageError',
          message: `${input}: ${length} elements (${length * 4} bytes) exceed the ${binding} bytes one storage binding of this backend holds (maxStorageBufferBytes); split the call into batches of segments`,
        });
      }
    });

    it('temporary storage one kernel binds larger than one storage binding', async (context) => {
      if (!bindingSmall()) return context.skip();
      const binding = backend.capabilities.maxStorageBufferBytes;
      // radix-select keeps two candidate buffers of the keys' size: more than a binding for keys of 53%.
      const length = Math.ceil((binding * 0.53) / 4);
      const result = await both(bigKeys(length, 100));
      expect(result).toMatchObject({ error: 'SegkitUsageError' });
      expect((result as { message: string }).message).toMatch(
        new RegExp(`^topk/radix-select/init\\[.*\\]: needs \\d+ bytes of temporary storage in one binding; this backend binds at most ${binding} bytes \\(maxStorageBufferBytes\\)\\. Bound the total number of items \\(totalNumItems\\) or use smaller segments$`),
      );
    });

    it('per-segment values of one call larger than one storage binding', async (context) => {
      if (!bindingSmall()) return context.skip();
      const binding = backend.capabilities.maxStorageBufferBytes;
      // Sizes, k and directions per segment, on the device: 3 words a segment, read through one binding.
      const segments = Math.floor((binding - 16) / 12) + 1;
      const manySegments = (b: Backend, owned: DeviceArray[]) => {
        const [keysIn, keysOut, sizes, ks, directions] = [b.alloc('f32', 1), b.alloc('f32', segments), b.alloc('u32', segments), b.alloc('u32', segments), b.alloc('u32', segments)];
        owned.push(keysIn, keysOut, sizes, ks, directions);
        return {
          args: {
            keysIn,
            keysOut,
            segmentSizes: p.perSegment(sizes, { min: 0, max: 0 }),
            k: p.perSegment(ks, { min: 1, max: 1 }),
            selectDirection: p.perSegmentOption(directions, ['max', 'min']),
            numSegments: p.uniform(segments, { min: 0, max: segments }),
          },
        };
      };
      expect(await both(manySegments)).toEqual({
        error: 'SegkitUsageError',
        message: `segmentSizes, k, selectDirection: per-segment and device-only values of one call take ${segments * 12 + 16} bytes, read through one storage binding of at most ${binding} bytes on this backend (maxStorageBufferBytes); split the call into batches of segments`,
      });
    });

    it('a tuned workgroup size past the backend maximum', async () => {
      const { maxWorkgroupSize } = backend.capabilities;
      const call = topK(1, 10, { value: 2, max: 2 });
      const tuned = (b: Backend, owned: DeviceArray[]) => {
        const made = call.make(b, owned);
        return { ...made, environment: { tuning: { policy: { workgroupSize: maxWorkgroupSize * 2 } } } };
      };
      expect(await both(tuned)).toEqual({
        error: 'SegkitUsageError',
        message: `tuning.policy.workgroupSize: ${maxWorkgroupSize * 2} exceeds the backend's maxWorkgroupSize ${maxWorkgroupSize}`,
      });
    });
  });
}

describe('limits that no real device shows in a test, on a cpu given small capabilities', () => {
  it('a launch past the dispatch limit', async () => {
    const backend = cpuBackend({ workers: 0, capabilities: { maxWorkgroupsPerDimension: 8 } });
    // Segments longer than reduce's per-invocation limit (32 keys): one workgroup each.
    const call = topK(65, 100, { value: 2, max: 2 });
    const result = await outcome(backend, call.make);
    expect(result).toEqual({
      error: 'SegkitUsageError',
      message: expect.stringMatching(/^topk\/[^:]*: 65 workgroups exceed this backend's dispatch limit of 8\^2 \(maxWorkgroupsPerDimension\); split the call into batches of segments$/),
    });
    const fits = topK(64, 100, { value: 2, max: 2 });
    expect(await outcome(backend, fits.make)).toEqual({ keys: [...fits.expected.keys], values: [...fits.expected.values] });
    backend.destroy();
  });

  it('a launch past the dispatch limit, for every other algorithm', () => {
    const backend = cpuBackend({ workers: 0, capabilities: { maxWorkgroupsPerDimension: 2 } });
    for (const algorithm of Object.keys(planners)) {
      // 4096 segments (buffers) of 64 items take more workgroups than 2^2 in every variant.
      const result = planOutcome(backend, algorithm, bigInput(algorithm, 4096, 64));
      expect(result, algorithm).toEqual({
        error: 'SegkitUsageError',
        message: expect.stringMatching(/: \d+ workgroups exceed this backend's dispatch limit of 2\^2 \(maxWorkgroupsPerDimension\); split the call into batches of segments$/),
      });
    }
    backend.destroy();
  });

  it('the CPU default sorts a selection past its 2048-key tile after radix-select, as a GPU with 32 KiB does', async () => {
    const backend = cpuBackend({ workers: 0 });
    expect(backend.capabilities.workgroupStorageBytes).toBe(32768);
    expect(topKPolicyFor(backend.capabilities).tileItems).toBe(2048);
    const over = topK(1, 3000, { value: 2049, max: 2049 });
    expect(await outcome(backend, over.make)).toEqual({ keys: [...over.expected.keys], values: [...over.expected.values] });
    backend.destroy();
  });
});
