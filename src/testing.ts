/**
 * `segkit/testing`: write a test once and run it on every backend this machine has (the CPU
 * emulator, the CPU emulator with worker threads, WebGPU where an adapter answers), then compare
 * the outputs bit for bit and name the first difference.
 *
 * It depends on no test runner: enumeration gives plain objects with a skip reason, comparison
 * returns a value or throws a plain `Error`, so it works from vitest, node:test, or a script.
 *
 * @example
 * ```ts
 * import { testBackends } from 'segkit/testing';
 *
 * const backends = await testBackends();
 * for (const entry of backends.entries) console.log(entry.name, entry.skip ?? 'runs here');
 * await backends.assertSame(async (backend, run) => {
 *   const keysIn = run.track(backend.upload(scores));
 *   const keysOut = run.track(backend.alloc('f32', rows * 2));
 *   await DeviceBatchedTopK.select({ keysIn, keysOut, segmentSizes: p.constant(cols), k: p.constant(2),
 *     selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) }, env({ backend }));
 *   return { keysOut };
 * }, { slotsPerSegment: 2 });
 * backends.destroy();
 * ```
 *
 * @packageDocumentation
 */
import type { Backend, DeviceArray } from './backends/backend.js';
import type { WebGpuBackendOptions } from './backends/webgpu/webgpu-backend.js';
import { DeviceBatchedTopK } from './algorithms/batched-top-k/api.js';
import { isDeviceArray } from './backends/backend.js';
import { cpuBackend } from './backends/cpu/cpu-backend.js';
import { hostParallelism, workersSupported } from './backends/cpu/pool.js';
import { webgpuBackend } from './backends/webgpu/webgpu-backend.js';
import { env } from './env/env.js';
import { p } from './params/param.js';

/**
 * The backends a test can run on: `'cpu'` is the CPU emulator on the calling thread; `'cpu-workers'`
 * the CPU emulator with worker threads, every launch of more than one workgroup split between
 * threads (so that small test inputs take the parallel path too); `'webgpu'` the WebGPU backend
 * (`navigator.gpu` in browsers, Dawn through the `webgpu` package in Node).
 */
export type TestBackendName = 'cpu' | 'cpu-workers' | 'webgpu';

/** Every {@link TestBackendName}, in the order backends are enumerated and compared. */
export const testBackendNames: readonly TestBackendName[] = Object.freeze(['cpu', 'cpu-workers', 'webgpu']);

/** Options of {@link testBackends}. */
export interface TestBackendsOptions {
  /** The backends to enumerate, in this order; default: all of {@link testBackendNames}. */
  only?: readonly TestBackendName[];
  /**
   * Backends that must be available: `testBackends` rejects, with the reason, when one is not (for
   * CI, where a missing WebGPU driver should fail the run instead of skipping it).
   */
  required?: readonly TestBackendName[];
  /** Worker threads of `'cpu-workers'`; default: the host's threads minus one, between 1 and 3. */
  workers?: number;
  /** Options of the `'webgpu'` backend, e.g. `{ device }` to test on a device you already have. */
  webgpu?: WebGpuBackendOptions;
}

/** One backend that a test may run on, available here or skipped with the reason. */
export interface TestBackend {
  /** Which backend. */
  readonly name: TestBackendName;
  /** Why this backend cannot run here (no WebGPU adapter, no worker threads), or `undefined` when it can. */
  readonly skip: string | undefined;
  /**
   * The backend shared by every test that uses this set, created on first use; {@link TestBackends.destroy}
   * destroys it. Rejects with the skip reason when the backend is skipped.
   */
  backend(): Promise<Backend>;
  /** A new backend of this kind that the caller owns and destroys. Rejects with the skip reason when skipped. */
  create(): Promise<Backend>;
  /**
   * Runs `test` on the shared backend and downloads its outputs. Rejects with the skip reason when
   * skipped.
   */
  run<Outputs extends TestOutputs>(test: BackendTest<Outputs>): Promise<BackendRun<keyof Outputs & string>>;
}

/** Host copies of device outputs, as `backend.download` gives them. */
export type HostOutput = Float32Array | Int32Array | Uint32Array | Uint8Array;

/**
 * What a test function returns: named outputs, as DeviceArrays (downloaded for it) or host arrays.
 * An output that is `undefined` is left out (e.g. `valuesOut` of a keys-only call).
 */
export type TestOutputs = Readonly<Record<string, DeviceArray | HostOutput | undefined>>;

/** The outputs of one backend's run, downloaded. */
export interface BackendRun<Names extends string = string> {
  /** The backend that produced them (or any label, for runs you add yourself, e.g. `'reference'`). */
  readonly name: string;
  /** Each named output as a host array. */
  readonly outputs: Readonly<Record<Names, HostOutput>>;
}

/** What a test function gets besides its backend. */
export interface RunContext {
  /** The backend's name. */
  readonly name: TestBackendName;
  /** Destroys the given DeviceArrays once the run's outputs are downloaded; returns the first one. */
  track<A extends DeviceArray>(array: A, ...more: DeviceArray[]): A;
}

/** A test function: does its work on `backend` and returns the outputs to compare. */
export type BackendTest<Outputs extends TestOutputs> = (backend: Backend, run: RunContext) => Promise<Outputs> | Outputs;

/** Options of a comparison. */
export interface CompareOptions {
  /**
   * Output slots per segment (top-k: `kMax`), so that a difference is reported as a segment and a
   * slot; one number for every output, or one per output name. Without it, only the element index is
   * reported.
   */
  slotsPerSegment?: number | Readonly<Record<string, number>>;
}

/** One side of a difference: which run, and what it holds at that element. */
export interface DifferingValue {
  /** The run's name, e.g. `'cpu'` or `'webgpu'`. */
  readonly backend: string;
  /** The element read as its type (`undefined` past the end of a shorter output). */
  readonly value: number | undefined;
  /** The element's bits (for 4-byte types the 32-bit pattern, so NaN payloads and -0 show). */
  readonly bits: number | undefined;
  /** The output's element type. */
  readonly dtype: 'f32' | 'i32' | 'u32' | 'u8';
  /** The output's length. */
  readonly length: number;
}

/** The first place where two runs' outputs differ. */
export interface OutputDifference {
  /** The output's name, as the test function returned it. */
  readonly output: string;
  /** `'value'`: different bits; `'length'` or `'dtype'`: the arrays do not have the same shape; `'missing'`: one run lacks the output. */
  readonly kind: 'value' | 'length' | 'dtype' | 'missing';
  /** Element index of the first difference (for `'length'`, the end of the shorter output). */
  readonly index: number;
  /** `Math.floor(index / slotsPerSegment)`, when `slotsPerSegment` was given. */
  readonly segment: number | undefined;
  /** `index % slotsPerSegment`, when `slotsPerSegment` was given. */
  readonly slot: number | undefined;
  /** The first run (the reference of the comparison). */
  readonly reference: DifferingValue;
  /** The run that differs from it. */
  readonly other: DifferingValue;
  /** How many elements of this output differ between the two runs (over their common length). */
  readonly differingElements: number;
  /** The difference in one sentence. */
  readonly message: string;
}

/** The outcome of running one test on every available backend. */
export interface Comparison<Names extends string = string> {
  /** Each available backend's outputs, in enumeration order. */
  readonly runs: readonly BackendRun<Names>[];
  /** The backends that did not run, with the reason. */
  readonly skipped: readonly { readonly name: TestBackendName; readonly reason: string }[];
  /** The first difference from the first run, or `undefined` when every run gave the same bits. */
  readonly difference: OutputDifference | undefined;
}

/** Thrown by {@link TestBackends.assertSame} when two backends' outputs differ. */
export class BackendMismatchError extends Error {
  /** Where and how they differ. */
  readonly difference: OutputDifference;
  /** Every run's outputs, for a closer look. */
  readonly runs: readonly BackendRun[];

  constructor(difference: OutputDifference, runs: readonly BackendRun[]) {
    super(difference.message);
    this.name = 'BackendMismatchError';
    this.difference = difference;
    this.runs = runs;
  }
}

/** The backends of this machine, and the ways to run one test on each of them. */
export interface TestBackends {
  /** Every backend asked for, available or not, in enumeration order. */
  readonly entries: readonly TestBackend[];
  /** The entries that can run here. */
  readonly available: readonly TestBackend[];
  /** Runs `test` on each available backend, in order, and downloads its outputs. */
  run<Outputs extends TestOutputs>(test: BackendTest<Outputs>): Promise<BackendRun<keyof Outputs & string>[]>;
  /** Runs `test` on each available backend and compares every run with the first, bit for bit. */
  compare<Outputs extends TestOutputs>(test: BackendTest<Outputs>, options?: CompareOptions): Promise<Comparison<keyof Outputs & string>>;
  /** {@link TestBackends.compare}, throwing a {@link BackendMismatchError} that names the first difference. */
  assertSame<Outputs extends TestOutputs>(test: BackendTest<Outputs>, options?: CompareOptions): Promise<Comparison<keyof Outputs & string>>;
  /** Destroys the shared backends (worker threads and GPU devices included, so a Node process can exit). */
  destroy(): void;
}

function dtypeOf(array: HostOutput): DifferingValue['dtype'] {
  if (array instanceof Float32Array) return 'f32';
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Uint32Array) return 'u32';
  return 'u8';
}

/** The element bits: 4-byte types as 32-bit patterns, u8 as bytes. */
function bitsView(array: HostOutput): Uint32Array | Uint8Array {
  return array instanceof Uint8Array ? array : new Uint32Array(array.buffer, array.byteOffset, array.length);
}

const hex = (bits: number, dtype: DifferingValue['dtype']) => `0x${bits.toString(16).padStart(dtype === 'u8' ? 2 : 8, '0')}`;

function side(backend: string, array: HostOutput | undefined, index: number): DifferingValue {
  if (array === undefined) return { backend, value: undefined, bits: undefined, dtype: 'u8', length: 0 };
  const inside = index < array.length;
  return {
    backend,
    value: inside ? array[index] : undefined,
    bits: inside ? bitsView(array)[index] : undefined,
    dtype: dtypeOf(array),
    length: array.length,
  };
}

function describeSide(s: DifferingValue): string {
  if (s.value === undefined || s.bits === undefined) return `${s.backend} has no element there (length ${s.length})`;
  // Object.is shows -0, which String() prints as 0.
  const value = Object.is(s.value, -0) ? '-0' : String(s.value);
  return `${s.backend} has ${value} (bits ${hex(s.bits, s.dtype)})`;
}

function slotsFor(options: CompareOptions, output: string): number | undefined {
  const slots = options.slotsPerSegment;
  const value = typeof slots === 'number' ? slots : slots?.[output];
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`slotsPerSegment${typeof slots === 'number' ? '' : `.${output}`}: ${String(value)} is not a positive integer`);
  }
  return value;
}

function differenceOf(
  output: string,
  kind: OutputDifference['kind'],
  index: number,
  reference: { name: string; array: HostOutput | undefined },
  other: { name: string; array: HostOutput | undefined },
  differingElements: number,
  options: CompareOptions,
): OutputDifference {
  const slots = kind === 'missing' || kind === 'dtype' ? undefined : slotsFor(options, output);
  const segment = slots === undefined ? undefined : Math.floor(index / slots);
  const slot = slots === undefined ? undefined : index % slots;
  const a = side(reference.name, reference.array, index);
  const b = side(other.name, other.array, index);
  const between = `${output} differs between ${reference.name} and ${other.name}`;
  let message: string;
  if (kind === 'missing') {
    message = `${between}: ${reference.array === undefined ? reference.name : other.name} returned no output '${output}'`;
  } else if (kind === 'dtype') {
    message = `${between}: ${reference.name} gave ${a.dtype}, ${other.name} gave ${b.dtype}`;
  } else {
    const where = segment === undefined ? `element ${index}` : `segment ${segment}, slot ${slot} (element ${index})`;
    const lengths = kind === 'length' ? `; lengths ${a.length} and ${b.length}` : '';
    message = `${between} at ${where}: ${describeSide(a)}, ${describeSide(b)}; ${differingElements} element${differingElements === 1 ? '' : 's'} differ${lengths}`;
  }
  return { output, kind, index, segment, slot, reference: a, other: b, differingElements, message };
}

/**
 * The first difference between runs, each compared with the first run bit for bit (so `-0` and `+0`,
 * or two NaNs with different payloads, differ). Outputs are compared in the order the first run
 * lists them; within an output, the lowest element index comes first. `undefined` when all agree.
 * Runs may come from {@link TestBackends.run} or from anywhere else (e.g. a reference on the host).
 *
 * @example
 * ```ts
 * const runs = await backends.run(myTest);
 * const difference = firstDifference([...runs, { name: 'reference', outputs: expected }], { slotsPerSegment: k });
 * if (difference) throw new Error(difference.message);
 * ```
 */
export function firstDifference(runs: readonly BackendRun[], options: CompareOptions = {}): OutputDifference | undefined {
  const [first, ...rest] = runs;
  if (first === undefined) return undefined;
  for (const other of rest) {
    const names = [...new Set([...Object.keys(first.outputs), ...Object.keys(other.outputs)])];
    for (const output of names) {
      const a = (first.outputs as Record<string, HostOutput | undefined>)[output];
      const b = (other.outputs as Record<string, HostOutput | undefined>)[output];
      const reference = { name: first.name, array: a };
      const against = { name: other.name, array: b };
      if (a === undefined || b === undefined) return differenceOf(output, 'missing', 0, reference, against, 0, options);
      if (dtypeOf(a) !== dtypeOf(b)) return differenceOf(output, 'dtype', 0, reference, against, 0, options);
      const aBits = bitsView(a);
      const bBits = bitsView(b);
      const common = Math.min(aBits.length, bBits.length);
      let firstIndex = -1;
      let differing = 0;
      for (let i = 0; i < common; i++) {
        if (aBits[i] !== bBits[i]) {
          if (firstIndex < 0) firstIndex = i;
          differing++;
        }
      }
      if (firstIndex >= 0) return differenceOf(output, aBits.length === bBits.length ? 'value' : 'length', firstIndex, reference, against, differing, options);
      if (aBits.length !== bBits.length) return differenceOf(output, 'length', common, reference, against, differing, options);
    }
  }
  return undefined;
}

/** Enough runs of a small parallel top-k for the worker threads to have joined a launch. */
async function warmUpWorkers(backend: Backend): Promise<void> {
  const stats = (backend as unknown as { workerStats?: () => { workgroupsOnWorkers: number } }).workerStats;
  if (typeof stats !== 'function') throw new Error("internal: segkit/testing: the CPU backend has no workerStats()");
  const rows = 64;
  const cols = 256;
  const keys = new Float32Array(rows * cols).map((_, i) => (i * 2654435761) % 1000);
  const keysIn = backend.upload(keys);
  const keysOut = backend.alloc('f32', rows * 4);
  const args = { keysIn, keysOut, segmentSizes: p.constant(cols), k: p.constant(4), selectDirection: p.constantOption('max'), numSegments: p.constant(rows) };
  const environment = env({ backend });
  // Workers start, and import the kernels, asynchronously; until then the calling thread takes every workgroup.
  const deadline = Date.now() + 30_000;
  try {
    while (stats.call(backend).workgroupsOnWorkers === 0) {
      if (Date.now() > deadline) throw new Error('cpu-workers: the worker threads did not join a launch within 30 s');
      await DeviceBatchedTopK.select(args, environment);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    keysIn.destroy();
    keysOut.destroy();
  }
}

interface Maker {
  readonly name: TestBackendName;
  /** Why it cannot run, found without side effects, or undefined. */
  probe(): Promise<string | undefined>;
  create(): Promise<Backend>;
}

function makers(options: TestBackendsOptions): Record<TestBackendName, Maker> {
  const workers = options.workers ?? Math.min(3, Math.max(1, hostParallelism() - 1));
  return {
    cpu: { name: 'cpu', probe: async () => undefined, create: async () => cpuBackend({ workers: 0 }) },
    'cpu-workers': {
      name: 'cpu-workers',
      probe: async () =>
        workersSupported()
          ? undefined
          : 'this runtime has no worker threads with shared memory (node:worker_threads and SharedArrayBuffer); the CPU backend runs every launch on the calling thread here',
      create: async () => {
        const backend = cpuBackend({ workers, parallelThreshold: 0 });
        try {
          await warmUpWorkers(backend);
        } catch (error) {
          backend.destroy();
          throw error;
        }
        return backend;
      },
    },
    webgpu: {
      name: 'webgpu',
      // Only a device proves that WebGPU runs here: an adapter can exist and still refuse one.
      probe: async () => {
        try {
          (await webgpuBackend(options.webgpu)).destroy();
          return undefined;
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      },
      create: () => webgpuBackend(options.webgpu),
    },
  };
}

class TestBackendEntry implements TestBackend {
  private shared: Promise<Backend> | undefined;
  private readonly created: Backend[] = [];

  constructor(
    private readonly maker: Maker,
    readonly skip: string | undefined,
  ) {}

  get name(): TestBackendName {
    return this.maker.name;
  }

  create(): Promise<Backend> {
    if (this.skip !== undefined) return Promise.reject(new Error(`${this.name} is skipped here: ${this.skip}`));
    return this.maker.create();
  }

  backend(): Promise<Backend> {
    if (this.shared === undefined) {
      this.shared = this.create().then((backend) => {
        this.created.push(backend);
        return backend;
      });
      // A failed creation is not cached: the next call tries again.
      this.shared.catch(() => (this.shared = undefined));
    }
    return this.shared;
  }

  async run<Outputs extends TestOutputs>(test: BackendTest<Outputs>): Promise<BackendRun<keyof Outputs & string>> {
    const backend = await this.backend();
    const tracked: DeviceArray[] = [];
    const context: RunContext = {
      name: this.name,
      track(array, ...more) {
        tracked.push(array, ...more);
        return array;
      },
    };
    try {
      const returned = await test(backend, context);
      const outputs: Record<string, HostOutput> = {};
      for (const [name, output] of Object.entries(returned)) {
        if (output === undefined) continue;
        outputs[name] = isDeviceArray(output) ? await backend.download(output) : output.slice();
      }
      return { name: this.name, outputs: outputs as Record<keyof Outputs & string, HostOutput> };
    } finally {
      for (const array of tracked) array.destroy();
    }
  }

  destroy(): void {
    for (const backend of this.created.splice(0)) backend.destroy();
    this.shared = undefined;
  }
}

class TestBackendSet implements TestBackends {
  readonly available: readonly TestBackendEntry[];

  constructor(readonly entries: readonly TestBackendEntry[]) {
    this.available = entries.filter((entry) => entry.skip === undefined);
  }

  async run<Outputs extends TestOutputs>(test: BackendTest<Outputs>): Promise<BackendRun<keyof Outputs & string>[]> {
    const runs: BackendRun<keyof Outputs & string>[] = [];
    for (const entry of this.available) runs.push(await entry.run(test));
    return runs;
  }

  async compare<Outputs extends TestOutputs>(test: BackendTest<Outputs>, options: CompareOptions = {}): Promise<Comparison<keyof Outputs & string>> {
    const runs = await this.run(test);
    const skipped = this.entries.filter((entry) => entry.skip !== undefined).map((entry) => ({ name: entry.name, reason: entry.skip! }));
    return { runs, skipped, difference: firstDifference(runs, options) };
  }

  async assertSame<Outputs extends TestOutputs>(test: BackendTest<Outputs>, options: CompareOptions = {}): Promise<Comparison<keyof Outputs & string>> {
    const comparison = await this.compare(test, options);
    if (comparison.difference !== undefined) throw new BackendMismatchError(comparison.difference, comparison.runs);
    return comparison;
  }

  destroy(): void {
    for (const entry of this.entries) entry.destroy();
  }
}

/**
 * The backends this machine has, each available or skipped with the reason. Probing WebGPU creates
 * and destroys one device; nothing else is created until a test asks for it.
 *
 * @example
 * ```ts
 * // vitest
 * const backends = await testBackends();
 * afterAll(() => backends.destroy());
 * for (const entry of backends.entries) {
 *   it.skipIf(entry.skip !== undefined)(`routes tokens on ${entry.name}`, async () => {
 *     const backend = await entry.backend();
 *     // ...
 *   });
 * }
 * ```
 */
export async function testBackends(options: TestBackendsOptions = {}): Promise<TestBackends> {
  const names = options.only ?? testBackendNames;
  for (const name of [...names, ...(options.required ?? [])]) {
    if (!testBackendNames.includes(name)) {
      throw new TypeError(`testBackends: '${String(name)}' is not a backend name; expected ${testBackendNames.map((n) => `'${n}'`).join(', ')}`);
    }
  }
  const all = makers(options);
  const entries: TestBackendEntry[] = [];
  for (const name of new Set(names)) {
    const maker = all[name];
    entries.push(new TestBackendEntry(maker, await maker.probe()));
  }
  for (const name of options.required ?? []) {
    const entry = entries.find((e) => e.name === name);
    if (entry === undefined) throw new TypeError(`testBackends: '${name}' is required but not among the backends asked for (only)`);
    if (entry.skip !== undefined) throw new Error(`testBackends: '${name}' is required but cannot run here: ${entry.skip}`);
  }
  return new TestBackendSet(entries);
}
