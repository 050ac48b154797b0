/*
 * A randomized differential fuzzer for segkit's five algorithms: each iteration builds one random
 * case (algorithm, dtypes, segment layout, parameter kinds and bounds, special values, requirements,
 * sometimes a forced variant or policy value, sometimes a bad input), runs it through the public API
 * on each chosen backend and compares every output bit for bit with the exported reference
 * (referenceTopK, referenceSegmentedReduce, referenceScan, referenceSegmentedSort,
 * referenceBatchedCopy), and, between backends, with each other. A bad input must be refused with
 * the documented error naming the parameter, the outputs left untouched.
 *
 *   node --import tsx bench/fuzz.ts --seed=N --iterations=M --backend=cpu|cpu0|cpuh|cpus|webgpu|all|cpuall
 *     [--start=I] [--only=I] [--algorithms=topk,reduce,scan,sort,copy] [--bad=0.15] [--scale=cpu|gpu]
 *     [--time-limit=S] [--list=I,J,...] [--strict] [--verbose]
 *
 * Backends: cpu = cpuBackend() (worker threads), cpu0 = cpuBackend({ workers: 0 }), cpuh = the CPU
 * emulator given an H200-like GPU's capabilities (so the GPU policies' variants run), cpus = the CPU
 * emulator given a small GPU's capabilities (16 KiB of workgroup memory, 128 invocations), webgpu =
 * webgpuBackend(); all = cpu,cpu0,webgpu; cpuall = cpu,cpu0,cpuh,cpus; or a comma-separated list.
 * Each iteration's case depends only on --seed, the iteration number and --scale (default: gpu when
 * webgpu is among the backends, else cpu), so `--seed=S --only=I` with the same --scale replays it.
 *
 * On lavapipe (no GPU):
 *   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp LP_NUM_THREADS=1 \
 *     MESA_SHADER_CACHE_DIR=/tmp/fuzz-mesa-cache node --import tsx bench/fuzz.ts --backend=webgpu ...
 *
 * Where the documentation allows outputs to differ (f32 sums under determinism 'not-guaranteed',
 * top-k's relaxed tie-break or order), those slots are checked for what is promised instead (top-k:
 * a valid top-k; sums: skipped). Routing weights are checked within 1 ulp of a float64 reference and
 * bit for bit across backends.
 */
import {
  type Backend,
  type DeviceArray,
  type Env,
  DeviceBatchedCopy,
  DeviceBatchedTopK,
  DeviceSegmentedReduce,
  DeviceSegmentedScan,
  DeviceSegmentedSort,
  GuaranteeViolationError,
  SegkitRangeError,
  SegkitUsageError,
  cpuBackend,
  env,
  p,
  referenceBatchedCopy,
  referenceScan,
  referenceSegmentedReduce,
  referenceSegmentedSort,
  referenceTopK,
  webgpuBackend,
} from '../src/index.js';

// ---------------------------------------------------------------------------------------------
// Command line

const argv = new Map<string, string>();
for (const a of process.argv.slice(2)) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
  if (m) argv.set(m[1]!, m[2] ?? 'true');
}
const seed = argv.has('seed') ? Number(argv.get('seed')) >>> 0 : (Date.now() % 1_000_000_007) >>> 0;
const only = argv.has('only') ? Number(argv.get('only')) : undefined;
const start = only ?? Number(argv.get('start') ?? 0);
const iterations = only !== undefined ? 1 : Number(argv.get('iterations') ?? 100);
const backendArg = argv.get('backend') ?? 'cpu';
const backendNames = (backendArg === 'all' ? 'cpu,cpu0,webgpu' : backendArg === 'cpuall' ? 'cpu,cpu0,cpuh,cpus' : backendArg).split(',') as BackendName[];
const algorithms = (argv.get('algorithms') ?? 'topk,reduce,scan,sort,copy').split(',') as Algo[];
const badRate = Number(argv.get('bad') ?? 0.15);
const scale = (argv.get('scale') ?? (backendNames.includes('webgpu') ? 'gpu' : 'cpu')) as 'cpu' | 'gpu';
const timeLimit = Number(argv.get('time-limit') ?? Infinity);
const verbose = argv.has('verbose');
const gpuScale = scale === 'gpu';

type BackendName = 'cpu' | 'cpu0' | 'cpuh' | 'cpus' | 'webgpu';
type Algo = 'topk' | 'reduce' | 'scan' | 'sort' | 'copy';
type DT = 'f32' | 'i32' | 'u32';

// ---------------------------------------------------------------------------------------------
// Random numbers

function mulberry32(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  readonly next: () => number;
  constructor(s: number) {
    this.next = mulberry32(s);
    for (let i = 0; i < 4; i++) this.next();
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.next() * a.length)]!;
  }
  /** A value by weight: [[weight, value], ...]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let x = this.next() * total;
    for (const [w, v] of choices) {
      if ((x -= w) < 0) return v;
    }
    return choices.at(-1)![1];
  }
  shuffle<T>(a: T[]): T[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

/** A 32-bit mix (murmur3's finalizer). */
const mix32 = (x: number) => {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
};
const caseSeed = (iteration: number) => mix32(mix32(seed + 0x9e3779b9) ^ mix32(iteration * 0x27d4eb2f + 0x165667b1));

// ---------------------------------------------------------------------------------------------
// Bits and values

const F = new Float32Array(1);
const U = new Uint32Array(F.buffer);
const I = new Int32Array(F.buffer);
const bitsOfF32 = (x: number) => ((F[0] = x), U[0]!);
const f32OfBits = (b: number) => ((U[0] = b), F[0]!);
/** A word as a number of a dtype. */
const valueOfBits = (b: number, dt: DT) => (dt === 'f32' ? f32OfBits(b) : dt === 'i32' ? ((U[0] = b), I[0]!) : b >>> 0);
/** A number of a dtype as its word. */
const bitsOfValue = (x: number, dt: DT) => (dt === 'f32' ? bitsOfF32(x) : dt === 'i32' ? (x | 0) >>> 0 : x >>> 0);
const isNaNBits = (b: number) => (b & 0x7fffffff) > 0x7f800000;

function typedOf(dt: DT, bits: Uint32Array): Float32Array | Int32Array | Uint32Array {
  const copy = bits.slice();
  return dt === 'f32' ? new Float32Array(copy.buffer) : dt === 'i32' ? new Int32Array(copy.buffer) : copy;
}
const wordsOf = (a: Float32Array | Int32Array | Uint32Array | Uint8Array) => new Uint32Array(a.buffer, a.byteOffset, a.byteLength >>> 2);

/** Bits that prefill outputs, to see what a call wrote. */
const SENTINEL = 0x5eed5eed;

const F32_SPECIAL = [
  0x7fc00000, 0x7f800001, 0xffc00001, 0x7fffffff, 0xffffffff, 0x80000000, 0x00000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000,
  0x80800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
];
const INT_SPECIAL = [0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0x80000001, 0x7ffffffe, 0xfffffffe];

type Flavour = 'random' | 'ties' | 'special' | 'equal' | 'ascending' | 'descending' | 'small' | 'wrap' | 'tiny' | 'zeros' | 'nan-heavy';
const flavours: readonly (readonly [number, Flavour])[] = [
  [4, 'random'],
  [3, 'ties'],
  [3, 'special'],
  [1, 'equal'],
  [1, 'ascending'],
  [1, 'descending'],
  [1, 'small'],
  [1, 'wrap'],
  [1, 'tiny'],
  [1, 'zeros'],
  [1, 'nan-heavy'],
];

function genValues(r: Rng, dt: DT, count: number, flavour: Flavour): Uint32Array {
  const out = new Uint32Array(count);
  const randomWord = () => (dt === 'f32' ? bitsOfF32((r.next() - 0.5) * 10 ** r.int(0, 6)) : r.u32());
  const special = () => (dt === 'f32' ? r.pick(F32_SPECIAL) : r.pick(INT_SPECIAL));
  switch (flavour) {
    case 'random':
      for (let i = 0; i < count; i++) out[i] = randomWord();
      break;
    case 'ties': {
      const pool = Array.from({ length: r.int(1, 5) }, () =>
        dt === 'f32' ? r.pick([bitsOfF32(-2), bitsOfF32(-1), 0x80000000, 0, bitsOfF32(1), bitsOfF32(2), 0x7fc00000, 0x7f800000]) : bitsOfValue(r.int(-2, 2), dt),
      );
      for (let i = 0; i < count; i++) out[i] = r.pick(pool);
      break;
    }
    case 'special':
      for (let i = 0; i < count; i++) out[i] = r.chance(0.3) ? special() : randomWord();
      break;
    case 'equal': {
      const v = r.chance(0.5) ? special() : randomWord();
      out.fill(v);
      break;
    }
    case 'ascending':
    case 'descending': {
      const step = r.int(0, 3);
      for (let i = 0; i < count; i++) {
        const j = flavour === 'ascending' ? i : count - i;
        out[i] = dt === 'f32' ? bitsOfF32(j * step - count) : bitsOfValue(j * step, dt);
      }
      break;
    }
    case 'small':
      for (let i = 0; i < count; i++) out[i] = bitsOfValue(r.int(-8, 8), dt);
      break;
    case 'wrap':
      for (let i = 0; i < count; i++) out[i] = dt === 'f32' ? bitsOfF32((r.chance(0.5) ? -1 : 1) * 3.3e38 * (0.9 + r.next() * 0.1)) : r.pick([0x7fffff00 + r.int(0, 0x1ff), 0xffffff00 + r.int(0, 0xff), r.int(0, 0xff)]) >>> 0;
      break;
    case 'tiny':
      for (let i = 0; i < count; i++) out[i] = dt === 'f32' ? bitsOfF32((r.next() - 0.5) * 2 ** -124) : r.u32();
      break;
    case 'zeros':
      for (let i = 0; i < count; i++) out[i] = dt === 'f32' ? (r.chance(0.05) ? 0x7fc00000 : r.chance(0.5) ? 0x80000000 : 0) : r.chance(0.5) ? 0 : 0x80000000;
      break;
    case 'nan-heavy':
      for (let i = 0; i < count; i++) out[i] = r.chance(0.5) ? (dt === 'f32' ? r.pick([0x7fc00000, 0x7f800001, 0xffc00001, 0xffffffff]) : special()) : randomWord();
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parameter descriptions (serializable; built into `p` parameters per backend)

interface B {
  min?: number;
  max?: number;
}
type NumSpec =
  | { kind: 'constant'; value: number }
  | { kind: 'uniform'; value: number; bounds?: B }
  | { kind: 'uniform-device'; value: number; bounds?: B; dtype: DT }
  | { kind: 'perSegment'; values: number[]; bounds?: B; runtime?: B; typed?: DT }
  | { kind: 'perSegment-device'; values: number[]; bounds?: B; runtimeDevice?: [number, number]; dtype: DT }
  | { kind: 'guarantee'; bounds: B };
type OptSpec =
  | { kind: 'constantOption'; option: string }
  | { kind: 'uniformOption'; option: string; options: string[] }
  | { kind: 'uniformOption-device'; index: number; options: string[] }
  | { kind: 'perSegmentOption'; values: string[]; options: string[] }
  | { kind: 'perSegmentOption-device'; indices: number[]; options: string[] };
type Spec = NumSpec | OptSpec;

const P = p as unknown as Record<string, (...args: unknown[]) => unknown>;

function numberArray(dt: DT, values: number[]): Float32Array | Int32Array | Uint32Array {
  const v = values.length ? values : [0];
  return dt === 'f32' ? Float32Array.from(v) : dt === 'i32' ? Int32Array.from(v) : Uint32Array.from(v.map((x) => x >>> 0));
}

/** Builds a parameter on a backend; `up` uploads (and tracks) a device array; host arrays are copies, returned in `hostArrays`. */
function buildParam(s: Spec, up: (a: Float32Array | Int32Array | Uint32Array) => DeviceArray, hostArrays: (number[] | string[])[]): unknown {
  switch (s.kind) {
    case 'constant':
      return P.constant!(s.value);
    case 'uniform':
      return s.bounds ? P.uniform!(s.value, s.bounds) : P.uniform!(s.value);
    case 'uniform-device':
      return s.bounds ? P.uniform!(up(numberArray(s.dtype, [s.value])), s.bounds) : P.uniform!(up(numberArray(s.dtype, [s.value])));
    case 'perSegment': {
      // A host array, sometimes a typed one (its values exactly representable in that type).
      const dt = s.typed;
      const fits = dt !== undefined && s.values.every((v) => (dt === 'f32' ? Object.is(Math.fround(v), v) : dt === 'i32' ? (v | 0) === v && !Object.is(v, -0) : v >>> 0 === v));
      // A value a bad-input case put out of the type's range goes in a plain array, unconverted.
      const copy = fits ? numberArray(dt, s.values) : s.values.slice();
      if (fits && s.values.length === 0) return s.runtime ? P.perSegment!(new Uint32Array(0), s.bounds ?? {}, s.runtime) : P.perSegment!(new Uint32Array(0), s.bounds ?? {});
      hostArrays.push(copy as unknown as number[]);
      if (s.runtime) return P.perSegment!(copy, s.bounds ?? {}, s.runtime);
      return s.bounds ? P.perSegment!(copy, s.bounds) : P.perSegment!(copy);
    }
    case 'perSegment-device': {
      const arr = up(numberArray(s.dtype, s.values));
      if (s.runtimeDevice) return P.perSegment!(arr, s.bounds ?? {}, up(Uint32Array.from(s.runtimeDevice)));
      return s.bounds ? P.perSegment!(arr, s.bounds) : P.perSegment!(arr);
    }
    case 'guarantee':
      return P.guarantee!(s.bounds);
    case 'constantOption':
      return P.constantOption!(s.option);
    case 'uniformOption':
      return P.uniformOption!(s.option, s.options);
    case 'uniformOption-device':
      return P.uniformOption!(up(Uint32Array.from([s.index])), s.options);
    case 'perSegmentOption': {
      const copy = s.values.slice();
      hostArrays.push(copy);
      return P.perSegmentOption!(copy, s.options);
    }
    case 'perSegmentOption-device':
      return P.perSegmentOption!(up(Uint32Array.from(s.indices.length ? s.indices : [0])), s.options);
  }
}

/** Each segment's value of a numeric spec (uniform kinds repeat their one value). */
function perSegmentValues(s: NumSpec, n: number): number[] {
  switch (s.kind) {
    case 'constant':
    case 'uniform':
    case 'uniform-device':
      return new Array<number>(n).fill(s.value);
    case 'perSegment':
    case 'perSegment-device':
      return s.values.slice(0, n);
    case 'guarantee':
      return [];
  }
}
const isUniformNum = (s: NumSpec) => s.kind === 'constant' || s.kind === 'uniform' || s.kind === 'uniform-device';

const nextPow2 = (x: number) => (x <= 1 ? 1 : 2 ** Math.ceil(Math.log2(x)));

/** Static bounds that hold values in [lo, hi]: sometimes tight, sometimes loose, sometimes the domain. */
function boundsFor(r: Rng, lo: number, hi: number, domainMin: number, opts: { needMax?: boolean; maxCap?: number } = {}): B | undefined {
  if (!opts.needMax && r.chance(0.15)) return undefined;
  const min = r.weighted<number | undefined>([
    [2, undefined],
    [2, domainMin],
    [3, lo],
    [1, Math.max(domainMin, lo - r.int(1, 3))],
  ]);
  let max = r.weighted<number | undefined>([
    [4, hi],
    [2, hi + r.int(1, 100)],
    [2, nextPow2(hi)],
    [opts.needMax ? 0 : 1, undefined],
  ]);
  if (max !== undefined && opts.maxCap !== undefined) max = Math.max(hi, Math.min(max, opts.maxCap));
  const b: B = {};
  if (min !== undefined) b.min = min;
  if (max !== undefined) b.max = max;
  return b;
}

/** Narrower runtime bounds within `b` around [lo, hi]. */
function runtimeFor(r: Rng, lo: number, hi: number, b: B | undefined, domainMin: number): B {
  const smin = b?.min ?? domainMin;
  const smax = b?.max ?? 4294967295;
  const min = r.chance(0.5) ? lo : Math.max(smin, lo - r.int(0, 2));
  const max = r.chance(0.5) ? hi : Math.min(smax, hi + r.int(0, 5));
  return { min, max };
}

type NumKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-rt' | 'perSegment-device' | 'perSegment-device-rt';

/** A numeric spec of `kind` for these values (all equal for the uniform kinds). */
const minOf = (a: readonly number[]) => a.reduce((m, x) => (x < m ? x : m), Infinity);
const maxOf = (a: readonly number[]) => a.reduce((m, x) => (x > m ? x : m), -Infinity);

function numSpec(r: Rng, kind: NumKind, values: number[], domainMin: number, opts: { needMax?: boolean; maxCap?: number; dtype?: DT; noBounds?: boolean } = {}): NumSpec {
  const lo = values.length ? minOf(values) : domainMin;
  const hi = values.length ? maxOf(values) : domainMin;
  const bounds = opts.noBounds ? undefined : boundsFor(r, lo, hi, domainMin, opts);
  const dtype = opts.dtype ?? 'u32';
  switch (kind) {
    case 'constant':
      return { kind: 'constant', value: values[0] ?? domainMin };
    case 'uniform':
      return { kind: 'uniform', value: values[0] ?? Math.max(domainMin, bounds?.min ?? domainMin), bounds };
    case 'uniform-device':
      return { kind: 'uniform-device', value: values[0] ?? Math.max(domainMin, bounds?.min ?? domainMin), bounds, dtype };
    case 'perSegment':
    case 'perSegment-rt': {
      const spec: NumSpec = { kind: 'perSegment', values, bounds };
      if (kind === 'perSegment-rt') spec.runtime = runtimeFor(r, lo, hi, bounds, domainMin);
      if (r.chance(0.25)) {
        const dt = opts.dtype ?? 'u32';
        const fits = values.every((v) => (dt === 'f32' ? Object.is(Math.fround(v), v) : dt === 'i32' ? (v | 0) === v && !Object.is(v, -0) : v >>> 0 === v));
        if (fits) spec.typed = dt;
      }
      return spec;
    }
    case 'perSegment-device':
      return { kind: 'perSegment-device', values, bounds, dtype };
    case 'perSegment-device-rt': {
      const rt = runtimeFor(r, lo, hi, bounds, domainMin);
      return { kind: 'perSegment-device', values, bounds, runtimeDevice: [rt.min!, rt.max!], dtype };
    }
  }
}

type OptKind = 'constantOption' | 'uniformOption' | 'uniformOption-device' | 'perSegmentOption' | 'perSegmentOption-device';

/** An option spec: per-segment choices from `options` (all equal for the uniform kinds). */
function optSpec(kind: OptKind, chosen: string[], options: string[]): OptSpec {
  switch (kind) {
    case 'constantOption':
      return { kind, option: chosen[0] ?? options[0]! };
    case 'uniformOption':
      return { kind, option: chosen[0] ?? options[0]!, options };
    case 'uniformOption-device':
      return { kind, index: options.indexOf(chosen[0] ?? options[0]!), options };
    case 'perSegmentOption':
      return { kind, values: chosen, options };
    case 'perSegmentOption-device':
      return { kind, indices: chosen.map((c) => options.indexOf(c)), options };
  }
}

/** Chooses an option kind and the per-segment choices; returns the spec and each segment's option. */
function genOption(r: Rng, n: number, all: string[], gpu: boolean): { spec: OptSpec; each: string[] } {
  const kind = r.weighted<OptKind>([
    [3, 'constantOption'],
    [2, 'uniformOption'],
    [1.5, 'uniformOption-device'],
    [3, 'perSegmentOption'],
    [1.5, 'perSegmentOption-device'],
  ]);
  const options = kind === 'constantOption' ? all : r.shuffle(all.slice()).slice(0, r.int(kind.startsWith('uniform') ? 1 : 1, all.length));
  const uniform = kind !== 'perSegmentOption' && kind !== 'perSegmentOption-device';
  const one = r.pick(options);
  const each = Array.from({ length: n }, () => (uniform ? one : r.pick(options)));
  void gpu;
  return { spec: optSpec(kind, each, kind === 'constantOption' ? [one] : options), each: uniform ? new Array<string>(n).fill(one) : each };
}

// ---------------------------------------------------------------------------------------------
// Segment layouts

const BOUNDARY = [
  0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193,
  16383, 16384, 16385, 32767, 32768, 32769, 65535, 65536, 65537, 131072, 262143, 262144, 262145,
];

function pickSize(r: Rng, cap: number): number {
  const w = r.next();
  if (w < 0.3) {
    const c = BOUNDARY.filter((b) => b <= cap);
    return r.pick(c.length ? c : [0]);
  }
  if (w < 0.55) return r.int(0, Math.min(cap, 300));
  if (w < 0.7) return r.int(0, cap);
  if (w < 0.76) return 0;
  if (w < 0.86) return Math.min(1, cap);
  const e = r.int(0, Math.floor(Math.log2(Math.max(cap, 1))));
  return Math.min(cap, Math.max(0, 2 ** e + r.int(-1, 1)));
}

interface Layout {
  sizes: number[];
  equal: boolean;
  stride?: number;
  /** Length of the input array. */
  length: number;
  starts: number[];
}

/** The case description's fields every segmented algorithm shares: the layout and the segment parameters. */
function segmentedDesc(c: FuzzCase, L: Layout, flavour: string): Record<string, unknown> {
  const spec = (s: unknown) => (s === undefined ? undefined : summarizeSpec(s as Spec));
  return {
    flavour,
    n: L.sizes.length,
    sizes: summarize(L.sizes),
    stride: L.stride,
    inputLength: L.length,
    segmentSizes: spec(c.params.segmentSizes),
    numSegments: spec(c.params.numSegments),
    segmentStride: spec(c.params.segmentStride),
    totalNumItems: spec(c.params.totalNumItems),
  };
}

function genLayout(r: Rng, budget: number, opts: { allowStride?: boolean; minSize?: number } = {}): Layout {
  const mode = r.weighted<string>([
    [3, 'zero'],
    [20, 'one'],
    [35, 'few'],
    [20, 'tens'],
    [14, 'hundreds'],
    [budget >= 150_000 ? 4 : 0, 'many-tiny'],
  ]);
  const n = mode === 'zero' ? 0 : mode === 'one' ? 1 : mode === 'few' ? r.int(2, 8) : mode === 'tens' ? r.int(9, 64) : mode === 'hundreds' ? r.int(100, 999) : r.int(Math.min(100_000, Math.floor(budget / 2)), Math.min(150_000, budget));
  const cap = mode === 'many-tiny' ? 3 : Math.max(0, Math.floor(budget / Math.max(n, 1)));
  const equal = n <= 1 || r.chance(0.35);
  const minSize = opts.minSize ?? 0;
  let sizes: number[];
  if (equal) {
    const s = Math.max(minSize, pickSize(r, cap));
    sizes = new Array<number>(n).fill(s);
  } else {
    const ragged = r.chance(0.5);
    const rcap = r.int(0, cap);
    sizes = Array.from({ length: n }, () => Math.max(minSize, ragged ? r.int(0, rcap) : pickSize(r, cap)));
  }
  let stride: number | undefined;
  if (opts.allowStride !== false && n > 0 && r.chance(0.25)) {
    const max = maxOf(sizes);
    stride = max + r.pick([0, 0, 1, 3, 7, 64, nextPow2(max) - max]);
  }
  const starts: number[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    starts.push(stride !== undefined ? i * stride : at);
    at += sizes[i]!;
  }
  const span = n === 0 ? 0 : stride !== undefined ? (n - 1) * stride + sizes[n - 1]! : at;
  const slack = r.chance(0.3) ? r.int(1, 100) : 0;
  return { sizes, equal, stride, length: Math.max(1, span + slack), starts };
}

function sizeKindFor(r: Rng, equal: boolean, gpu: boolean): NumKind {
  return r.weighted<NumKind>([
    [equal ? (gpu ? 0.3 : 2) : 0, 'constant'],
    [equal ? 2 : 0, 'uniform'],
    [equal ? 1.5 : 0, 'uniform-device'],
    [3, 'perSegment'],
    [1.5, 'perSegment-rt'],
    [2, 'perSegment-device'],
    [1, 'perSegment-device-rt'],
  ]);
}

/** A numSegments spec for n segments. */
function numSegmentsSpec(r: Rng, n: number, gpu: boolean): NumSpec {
  const kind = r.weighted<'constant' | 'uniform' | 'uniform-device'>([
    [gpu ? 0.5 : 2, 'constant'],
    [4, 'uniform'],
    [2, 'uniform-device'],
  ]);
  if (kind === 'constant') return { kind, value: n };
  const max = r.weighted<number | undefined>([
    [4, Math.max(n, 1)],
    [1, n + r.int(1, 10)],
    [kind === 'uniform' ? 1 : 0, undefined],
  ]);
  const bounds: B | undefined = r.chance(0.2) && kind === 'uniform' ? undefined : max === undefined ? { min: 0 } : { min: 0, max };
  return kind === 'uniform' ? { kind, value: n, bounds } : { kind, value: n, bounds, dtype: 'u32' };
}

// ---------------------------------------------------------------------------------------------
// Cases

interface OutSpec {
  name: string;
  dtype: DT;
  before: Uint32Array;
  /** Expected words after the call (defaults to `before` for bad inputs). */
  expected?: Uint32Array;
  /** Elements whose exact value the documentation leaves open. */
  inexact?: (i: number) => boolean;
}
interface InSpec {
  name: string;
  dtype: DT;
  bits: Uint32Array;
}
interface BadSpec {
  what: string;
  /** 'range-or-guarantee': host values whose check needs a device-only count (numSegments), so the device may make it. */
  type: 'range' | 'usage' | 'guarantee' | 'trust' | 'any' | 'range-or-guarantee';
  parameter?: string;
  segment?: number;
  /** Text the message must contain. */
  text?: string;
  /** Alternative texts: any one must be contained. */
  texts?: string[];
}

interface FuzzCase {
  algo: Algo;
  desc: Record<string, unknown>;
  inputs: InSpec[];
  outputs: OutSpec[];
  params: Record<string, Spec | undefined>;
  /** Plain fields (weights). */
  extra?: Record<string, unknown>;
  entry: string;
  requirements?: Record<string, string>;
  tuning?: { variant?: string; policy?: Record<string, unknown> };
  guarantees?: Record<string, number>;
  bad?: BadSpec;
  /** Expected plan.kMax (top-k). */
  kMax?: number;
  /** A check of the outputs other than bit equality (top-k relaxed, weights). Returns problems. */
  check?: (out: Record<string, Uint32Array>, variant: string | undefined) => string[];
  /** Whether outputs must be bit-identical across backends (default: true when no slot is inexact). */
  crossExact?: boolean;
  /** A change to the built args (bad usage). */
  mutate?: (args: Record<string, unknown>, arrays: Record<string, DeviceArray>, backend: Backend, track: (a: DeviceArray) => DeviceArray) => void;
  /** One-call top-k options. */
  topkOptions?: { rows: number; k: number; largest?: boolean; weights?: unknown; passOutputs: boolean };
  /** A second env-API call with this host per-segment array's values changed in place (expected outputs are the second call's). */
  second?: { param: string; values: string[] };
  /** The env options misspelled (bad usage). */
  envExtra?: Record<string, unknown>;
}

const variantsOf: Record<Algo, string[]> = {
  topk: ['reduce', 'single-tile', 'row-radix', 'radix-select'],
  reduce: ['thread', 'subgroup', 'workgroup', 'multi-workgroup'],
  scan: ['thread', 'workgroup', 'multi-workgroup'],
  sort: ['single-tile', 'merge', 'workgroup-radix', 'radix'],
  copy: ['team', 'workgroup', 'chunked'],
};

const policiesOf: Record<Algo, Record<string, unknown>[]> = {
  topk: [
    { reduceChunkItems: 1000 },
    { reduceLastChunkMerges: 'always' },
    { reduceLastChunkMerges: 'never' },
    { reduceSmallSegmentItems: 0 },
    { reduceSmallSegmentItems: 300 },
    { radixCompactPastTile: true },
    { radixCompactPastTile: false },
    { radixCandidateSelect: false },
    { radixBits: 8 },
    { reduceChunkWorkgroups: 7 },
  ],
  reduce: [{ lastChunkMerges: true }, { lastChunkMerges: false }, { chunkRounds: 2 }, { extremeChunkRounds: 2 }, { extremeChunkRounds: 8 }, { loadWords: 1 }, { multiWorkgroupMinItems: 9000 }],
  scan: [
    { passes: 1, lookbackPolls: 1 },
    { passes: 1 },
    { spineCarries: 'parallel' },
    { loadWords: 1 },
    { storeWords: 1 },
    { tilesPerStep: 4 },
    { scanTilesPerStep: 2 },
    { tileWorkgroups: 3 },
  ],
  sort: [{ radixLoads: 1 }, { radixLoads: 2 }, { tileLoadBatch: 1 }, { radixScanLaunchMinTiles: 1 }, { radixMinTiles: 1 }],
  copy: [{ chunkItems: 1024 }, { teamMaxItems: 64 }],
};

function genRequirementsAndTuning(r: Rng, algo: Algo, c: FuzzCase, gpu: boolean): void {
  if (r.chance(gpu ? 0.08 : 0.2)) c.tuning = { variant: r.pick(variantsOf[algo]) };
  if (!gpu && r.chance(0.08)) c.tuning = { ...(c.tuning ?? {}), policy: r.pick(policiesOf[algo]) };
  if (r.chance(0.1)) c.requirements = { ...(c.requirements ?? {}), guaranteeChecks: 'trust' };
}

/** For an env-API call with a host per-segment option array: new options for a second call. */
function flipOptions(r: Rng, c: FuzzCase, param: string, each: string[]): string[] | undefined {
  const s = c.params[param];
  if (!s || s.kind !== 'perSegmentOption' || s.options.length < 2 || each.length === 0 || c.entry === 'plan' || c.bad || !r.chance(0.35)) return undefined;
  const opts = s.options;
  const flipped = each.map((o) => (r.chance(0.5) ? r.pick(opts.filter((x) => x !== o)) : o));
  if (flipped.every((o, i) => o === each[i])) flipped[0] = opts.find((x) => x !== each[0])!;
  c.second = { param, values: flipped };
  return flipped;
}

// --- top-k -----------------------------------------------------------------------------------

function rankOf(bits: number, dt: DT, dir: string): number {
  let v: number;
  if (dt === 'f32') {
    if (isNaNBits(bits)) v = 4e38;
    else {
      const x = f32OfBits(bits);
      v = x === Infinity ? 3.5e38 : x === -Infinity ? -3.5e38 : x === 0 ? 0 : x;
    }
  } else v = valueOfBits(bits, dt);
  return dir === 'min' ? -v : v;
}

function pickK(r: Rng, maxSize: number): number {
  return Math.max(
    1,
    r.weighted<number>([
      [25, 1],
      [30, r.int(2, 8)],
      [12, r.int(9, 64)],
      [10, maxSize + r.int(-1, 1)],
      [10, maxSize + r.int(1, 50)],
      [8, r.pick([255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097])],
      [5, r.int(1, Math.min(maxSize + 1, 20000))],
    ]),
  );
}

function genTopK(r: Rng, budget: number, gpu: boolean): FuzzCase {
  const keyType = r.pick<DT>(['f32', 'f32', 'i32', 'u32']);
  const L = genLayout(r, budget);
  const n = L.sizes.length;
  const maxSize = Math.max(0, maxOf(L.sizes));
  const flavour = r.weighted(flavours);
  const keys = genValues(r, keyType, L.length, flavour);

  // k
  const kKind = r.weighted<NumKind>([
    [gpu ? 0.5 : 2, 'constant'],
    [3, 'uniform'],
    [1.5, 'uniform-device'],
    [3, 'perSegment'],
    [1.5, 'perSegment-rt'],
    [2, 'perSegment-device'],
    [1, 'perSegment-device-rt'],
  ]);
  const outCap = gpu ? 400_000 : 2_000_000;
  const uniformK = kKind === 'constant' || kKind === 'uniform' || kKind === 'uniform-device';
  const kv = pickK(r, maxSize);
  let ks = Array.from({ length: n }, () => (uniformK ? kv : r.chance(0.5) ? kv : pickK(r, maxSize)));
  const capK = Math.max(1, Math.floor(outCap / Math.max(n, 1)) - 110);
  ks = ks.map((k) => Math.min(k, capK));
  const kValue = uniformK ? Math.min(kv, capK) : undefined;
  const needMax = kKind !== 'constant' && kKind !== 'uniform';
  const useEnvMaxK = needMax && r.chance(0.15);
  const kSpec = numSpec(r, kKind, uniformK ? new Array<number>(Math.max(n, 1)).fill(kValue!) : ks, 1, { needMax: needMax && !useEnvMaxK, maxCap: capK + 100, dtype: 'u32' });
  if (uniformK) ks = new Array<number>(n).fill(kValue!);
  const guarantees: Record<string, number> = {};
  if (useEnvMaxK) {
    guarantees.maxK = Math.max(1, maxOf(ks), kValue ?? 1) + r.pick([0, 0, 3]);
    // Runtime bounds must lie within the effective static bounds (static bounds and guarantees).
    if (kSpec.kind === 'perSegment' && kSpec.runtime?.max !== undefined) kSpec.runtime.max = Math.min(kSpec.runtime.max, guarantees.maxK);
    if (kSpec.kind === 'perSegment-device' && kSpec.runtimeDevice) kSpec.runtimeDevice[1] = Math.min(kSpec.runtimeDevice[1], guarantees.maxK);
  }
  // kMax per docs/top-k.md
  let kMax: number;
  if (kSpec.kind === 'constant' || kSpec.kind === 'uniform') kMax = kSpec.value;
  else {
    const uppers: number[] = [];
    if (kSpec.kind !== 'guarantee' && kSpec.bounds?.max !== undefined) uppers.push(kSpec.bounds.max);
    if (kSpec.kind === 'perSegment' && kSpec.runtime?.max !== undefined) uppers.push(kSpec.runtime.max);
    if (guarantees.maxK !== undefined) uppers.push(guarantees.maxK);
    kMax = Math.min(...uppers);
  }

  const dir = genOption(r, n, ['max', 'min'], gpu);
  const directions = dir.each;

  const valueMode = r.weighted<string>([
    [2, 'none'],
    [2, 'indices-u32'],
    [2, 'indices-i32'],
    [1, 'indices-f32'],
    [2, 'payload'],
  ]);
  const outLen = Math.max(1, n * kMax + (r.chance(0.2) ? r.int(1, 2 * kMax + 3) : 0));
  const inputs: InSpec[] = [{ name: 'keysIn', dtype: keyType, bits: keys }];
  const outputs: OutSpec[] = [{ name: 'keysOut', dtype: keyType, before: new Uint32Array(outLen).fill(SENTINEL) }];
  let payload: Uint32Array | undefined;
  let valueType: DT = 'i32';
  if (valueMode === 'payload') {
    valueType = r.pick<DT>(['f32', 'i32', 'u32']);
    payload = new Uint32Array(L.length);
    for (let i = 0; i < L.length; i++) payload[i] = Math.imul(i + 1, 2654435761) >>> 0;
    inputs.push({ name: 'valuesIn', dtype: valueType, bits: payload });
  } else if (valueMode !== 'none') valueType = valueMode.slice(8) as DT;
  if (valueMode !== 'none') outputs.push({ name: 'valuesOut', dtype: valueType, before: new Uint32Array(outLen).fill(SENTINEL) });

  const c: FuzzCase = {
    algo: 'topk',
    desc: {},
    inputs,
    outputs,
    params: {},
    entry: 'plan',
    guarantees,
    kMax,
  };
  const sizeKind = sizeKindFor(r, L.equal, gpu);
  c.params.segmentSizes = numSpec(r, sizeKind, L.sizes, 0, { maxCap: L.length });
  if (L.stride !== undefined) c.params.segmentStride = r.chance(gpu ? 0.2 : 0.4) ? { kind: 'constant', value: L.stride } : { kind: 'uniform', value: L.stride, bounds: r.chance(0.5) ? { min: 0, max: L.stride } : undefined };
  c.params.k = kSpec;
  c.params.selectDirection = dir.spec;
  c.params.numSegments = numSegmentsSpec(r, n, gpu);
  if (L.stride === undefined && r.chance(0.15)) c.params.totalNumItems = { kind: 'guarantee', bounds: { max: L.sizes.reduce((a, b) => a + b, 0) + r.pick([0, 0, 17]) } };
  if (r.chance(0.1) && n > 0) {
    // At least the sizes' runtime bounds (runtime bounds must lie within the effective static bounds).
    const ss = c.params.segmentSizes as NumSpec;
    const rt = ss.kind === 'perSegment' ? (ss.runtime?.max ?? 0) : ss.kind === 'perSegment-device' ? (ss.runtimeDevice?.[1] ?? 0) : 0;
    guarantees.maxSegmentSize = Math.max(maxSize, rt) + r.pick([0, 5]);
  }
  if (r.chance(0.05)) guarantees.maxNumSegments = n + r.pick([0, 2]);
  if (r.chance(0.05)) guarantees.minSegmentSize = Math.min(minOf(L.sizes), 0);

  // requirements
  const relaxed = r.chance(0.2);
  if (relaxed)
    c.requirements = r.pick<Record<string, string>>([
      { tieBreak: 'any' },
      { tieBreak: 'any', determinism: 'not-guaranteed' },
      { outputOrdering: 'unsorted' },
      { outputOrdering: 'unsorted', determinism: 'not-guaranteed' },
      { outputOrdering: 'unsorted', tieBreak: 'any', determinism: 'not-guaranteed' },
      { determinism: 'not-guaranteed' },
    ]);
  genRequirementsAndTuning(r, 'topk', c, gpu);

  // weights
  let weights: { kind: string; scale?: number } | undefined;
  if (keyType === 'f32' && r.chance(0.12)) {
    weights = { kind: r.pick(['softmax', 'sigmoid-renormalize']) };
    if (r.chance(0.5)) weights.scale = r.pick([1, 2.5, 0.5, 16]);
    c.extra = { weights };
    outputs.push({ name: 'weightsOut', dtype: 'f32', before: new Uint32Array(outLen).fill(SENTINEL) });
    // Logits for weights: modest spreads so the float64 reference is meaningful.
    if (flavour === 'random') for (let i = 0; i < keys.length; i++) keys[i] = bitsOfF32((r.next() - 0.5) * r.pick([4, 20, 250]));
  }

  // entry
  const constantDir = dir.spec.kind === 'constantOption' ? dir.spec.option : undefined;
  c.entry = r.weighted<string>([
    [5, 'plan'],
    [3, 'select'],
    [constantDir !== undefined && valueMode === 'none' && !weights ? 1.5 : 0, constantDir === 'min' ? 'minKeys' : 'maxKeys'],
    [constantDir !== undefined && valueMode !== 'none' ? 1.5 : 0, constantDir === 'min' ? 'minPairs' : 'maxPairs'],
    [L.equal && L.stride === undefined && n >= 1 && L.sizes[0]! >= 1 && L.length === n * L.sizes[0]! && !relaxed ? 1.5 : 0, 'topk'],
  ]);
  if (c.entry.endsWith('Keys') || c.entry.endsWith('Pairs')) delete c.params.selectDirection;
  if (c.entry === 'topk') {
    // torch.topk's form: equal packed rows, constant k, indices u32.
    const k = Math.max(1, Math.min(kv, capK));
    const largest = r.chance(0.7);
    ks = new Array<number>(n).fill(k);
    kMax = k;
    c.kMax = k;
    for (let i = 0; i < n; i++) directions[i] = largest ? 'max' : 'min';
    valueType = 'u32';
    payload = undefined;
    const passOutputs = r.chance(0.6);
    c.inputs = [{ name: 'keysIn', dtype: keyType, bits: keys }];
    const len = n * k;
    c.outputs = [
      { name: 'keysOut', dtype: keyType, before: new Uint32Array(len).fill(SENTINEL) },
      { name: 'indicesOut', dtype: 'u32', before: new Uint32Array(len).fill(SENTINEL) },
    ];
    if (weights) c.outputs.push({ name: 'weightsOut', dtype: 'f32', before: new Uint32Array(len).fill(SENTINEL) });
    const asString = r.chance(0.5);
    c.topkOptions = { rows: n, k, ...(largest && r.chance(0.5) ? {} : { largest }), ...(weights ? { weights: asString ? weights.kind : weights } : {}), passOutputs };
    if (weights && asString) delete weights.scale;
    c.params = {};
    c.requirements = undefined;
    c.tuning = r.chance(0.2) ? { variant: r.pick(variantsOf.topk) } : undefined;
    c.guarantees = undefined;
  }

  const withValues = c.outputs.length > 1 && c.outputs[1]!.name !== 'weightsOut';
  const flippedDirections = flipOptions(r, c, 'selectDirection', directions);
  if (flippedDirections) flippedDirections.forEach((d, i) => (directions[i] = d));
  const expected = referenceTopK({
    keyType,
    keys,
    values: payload,
    valueType,
    segmentStarts: L.starts,
    segmentSizes: L.sizes,
    k: ks,
    directions: directions as ('max' | 'min')[],
    kMax,
    withValues,
  });
  const keysOutSpec = c.outputs[0]!;
  keysOutSpec.expected = keysOutSpec.before.slice();
  keysOutSpec.expected.set(expected.keys);
  if (withValues) {
    const v = c.outputs[1]!;
    v.expected = v.before.slice();
    v.expected.set(expected.values);
  }
  const req = c.requirements ?? {};
  const unsorted = req.outputOrdering === 'unsorted';
  const tieAny = req.tieBreak === 'any';
  const notGuaranteed = req.determinism === 'not-guaranteed';
  const exactDefault = !unsorted && (!tieAny || !notGuaranteed);
  const weightsSpec = c.outputs.find((o) => o.name === 'weightsOut');
  const valuesName = withValues ? c.outputs[1]!.name : undefined;
  if (!exactDefault) {
    // Not bit-exact: check that each segment's results are a valid top-k (unsorted + run-to-run: the documented fixed order per variant).
    for (const o of c.outputs) o.inexact = () => true;
    c.crossExact = !notGuaranteed;
  }
  if (weightsSpec) weightsSpec.inexact = () => true;
  c.check = (out, variant) => {
    const problems: string[] = [];
    const keysGot = out.keysOut!;
    const valuesGot = valuesName ? out[valuesName] : undefined;
    if (!exactDefault) {
      const ordering = unsorted && !notGuaranteed && variant !== undefined ? (variant === 'reduce' ? 'best' : 'index') : unsorted ? 'any' : 'best';
      problems.push(...topKValidity(keyType, keys, payload, valueType, L, ks, directions, kMax, expected, keysGot, valuesGot, withValues, ordering, tieAny && notGuaranteed ? 'any' : 'index'));
    }
    if (weightsSpec) problems.push(...checkWeights(out.weightsOut!, keysGot, L.sizes, ks, kMax, weights!.kind, weights!.scale ?? 1, weightsSpec.before));
    return problems;
  };
  c.desc = {
    ...segmentedDesc(c, L, flavour),
    keyType,
    k: summarizeSpec(kSpec),
    kMax,
    selectDirection: summarizeSpec(dir.spec),
    values: valueMode === 'payload' ? `payload-${valueType}` : valueMode,
    weights,
    outLen,
    topkOptions: c.topkOptions,
  };
  return c;
}

function topKValidity(
  dt: DT,
  keys: Uint32Array,
  payload: Uint32Array | undefined,
  valueType: DT,
  L: Layout,
  ks: number[],
  directions: string[],
  kMax: number,
  expected: { keys: Uint32Array; values: Uint32Array },
  keysGot: Uint32Array,
  valuesGot: Uint32Array | undefined,
  withValues: boolean,
  ordering: 'best' | 'index' | 'any',
  ties: 'index' | 'any',
): string[] {
  const problems: string[] = [];
  const payloadIndex = new Map<number, number>();
  if (payload) payload.forEach((b, i) => payloadIndex.set(b, i));
  const indexOf = (bits: number, startAt: number) => (payload ? (payloadIndex.get(bits) ?? -1) - startAt : valueType === 'f32' ? f32OfBits(bits) : valueType === 'i32' ? bits | 0 : bits >>> 0);
  for (let s = 0; s < L.sizes.length && problems.length < 3; s++) {
    const st = L.starts[s]!;
    const size = L.sizes[s]!;
    const take = Math.min(ks[s]!, size, kMax);
    const at = (j: number) => s * kMax + j;
    const rank = (b: number) => rankOf(b, dt, directions[s]!);
    const got = Array.from({ length: take }, (_, j) => rank(keysGot[at(j)]!));
    const want = Array.from({ length: take }, (_, j) => rank(expected.keys[at(j)]!));
    const sortedNum = (a: number[]) => [...a].sort((x, y) => x - y).join();
    if (sortedNum(got) !== sortedNum(want)) problems.push(`segment ${s}: keys are not the top-k keys`);
    if (ordering === 'best' && got.some((g, j) => j > 0 && g > got[j - 1]!)) problems.push(`segment ${s}: keys not best first`);
    if (withValues && valuesGot) {
      const seen: number[] = [];
      for (let j = 0; j < take; j++) {
        const idx = indexOf(valuesGot[at(j)]!, st);
        if (!Number.isInteger(idx) || idx < 0 || idx >= size) {
          problems.push(`segment ${s} slot ${j}: value ${valuesGot[at(j)]} names no item`);
          break;
        }
        if (keysGot[at(j)] !== keys[st + idx]) problems.push(`segment ${s} slot ${j}: key bits ${hex(keysGot[at(j)]!)} are not item ${idx}'s ${hex(keys[st + idx]!)}`);
        if (seen.includes(idx)) problems.push(`segment ${s} slot ${j}: item ${idx} twice`);
        seen.push(idx);
      }
      if (ties === 'index') {
        const wantIdx = Array.from({ length: take }, (_, j) => indexOf(expected.values[at(j)]!, st));
        if (sortedNum(seen) !== sortedNum(wantIdx)) problems.push(`segment ${s}: items are not the smallest indices among ties`);
        if (ordering === 'index' && seen.some((x, j) => j > 0 && x < seen[j - 1]!)) problems.push(`segment ${s}: unsorted output under run-to-run is not in index order`);
      }
    }
    for (let j = take; j < kMax; j++) {
      if (keysGot[at(j)] !== expected.keys[at(j)]) {
        problems.push(`segment ${s} slot ${j}: key fill ${hex(keysGot[at(j)]!)}, expected ${hex(expected.keys[at(j)]!)}`);
        break;
      }
      if (withValues && valuesGot && valuesGot[at(j)] !== expected.values[at(j)]) {
        problems.push(`segment ${s} slot ${j}: value fill ${hex(valuesGot[at(j)]!)}, expected ${hex(expected.values[at(j)]!)}`);
        break;
      }
    }
  }
  for (let i = L.sizes.length * kMax; i < keysGot.length; i++)
    if (keysGot[i] !== SENTINEL) {
      problems.push(`keysOut[${i}] past numSegments * kMax was written`);
      break;
    }
  return problems;
}

/** Routing weights within 1 ulp of the float64 formulas; +0 past the take; untouched past the segments. */
function checkWeights(w: Uint32Array, keysGot: Uint32Array, sizes: number[], ks: number[], kMax: number, kind: string, scale: number, before: Uint32Array): string[] {
  const problems: string[] = [];
  const ulps = (a: number, b: number) => {
    const na = isNaNBits(a);
    const nb = isNaNBits(b);
    if (na || nb) return na && nb ? 0 : Infinity;
    if (a >>> 31 !== b >>> 31) return a === b || (a | b) === 0x80000000 ? 0 : Infinity;
    return Math.abs(a - b);
  };
  for (let s = 0; s < sizes.length && problems.length < 3; s++) {
    const take = Math.min(ks[s]!, sizes[s]!, kMax);
    const x = Array.from({ length: take }, (_, j) => f32OfBits(keysGot[s * kMax + j]!));
    let terms: number[] = [];
    if (take > 0) {
      if (kind === 'softmax') {
        const m = x.some(Number.isNaN) ? NaN : maxOf(x);
        terms = x.map((v) => Math.exp(v - m));
      } else {
        // log s = -log1p(exp(-x)); s is 0 for x <= -2^19 (docs/top-k.md); scaled by the largest log s
        // so that keys far below -745 (s exact but below float64's range) keep their ratios.
        const logS = x.map((v) => (Number.isNaN(v) ? NaN : v <= -(2 ** 19) ? -Infinity : v >= 0 ? -Math.log1p(Math.exp(-v)) : v - Math.log1p(Math.exp(v))));
        const top = logS.some(Number.isNaN) ? NaN : maxOf(logS);
        terms = top === -Infinity ? logS.map(() => 0) : logS.map((l) => Math.exp(l - top));
      }
    }
    const sum = terms.reduce((a, b) => a + b, 0);
    for (let j = 0; j < kMax; j++) {
      const got = w[s * kMax + j]!;
      let want = 0;
      if (j < take) {
        const v = Math.fround((terms[j]! / sum) * scale);
        want = Number.isNaN(v) ? 0x7fc00000 : Math.abs(v) < 2 ** -126 ? 0 : bitsOfF32(v);
      }
      if (j >= take ? got !== 0 : ulps(got, want) > 1) {
        problems.push(`weightsOut${take >= 1500 ? ' [long selection]' : ''} segment ${s} slot ${j} (take ${take}): got ${f32OfBits(got)} (${hex(got)}), float64 reference ${f32OfBits(want)} (${hex(want)}); keys ${x.slice(0, 8).join(',')}`);
        break;
      }
    }
  }
  for (let i = sizes.length * kMax; i < w.length; i++)
    if (w[i] !== before[i]) {
      problems.push(`weightsOut[${i}] past numSegments * kMax was written`);
      break;
    }
  return problems;
}

// --- segmented reduce --------------------------------------------------------------------------

const REDUCE_OPS = ['sum', 'min', 'max', 'argMin', 'argMax'];

function genInitialNumbers(r: Rng, dt: DT, n: number, uniform: boolean): number[] {
  const one = () => {
    if (dt === 'f32') return r.weighted<number>([
      [1, -Infinity],
      [1, Infinity],
      [1, -0],
      [1, 0],
      [1, Math.fround(1e-40)],
      [1, Math.fround(-1e-40)],
      [1, 3.4028234663852886e38],
      [4, Math.fround((r.next() - 0.5) * 10 ** r.int(0, 5))],
    ]);
    if (dt === 'i32') return r.weighted<number>([
      [1, -2147483648],
      [1, 2147483647],
      [1, 0],
      [4, r.int(-2000, 2000)],
      [2, (r.u32() | 0)],
    ]);
    return r.weighted<number>([
      [1, 4294967295],
      [1, 0],
      [4, r.int(0, 4000)],
      [2, r.u32()],
    ]);
  };
  const v = one();
  return Array.from({ length: Math.max(n, 1) }, () => (uniform ? v : one()));
}

function genReduce(r: Rng, budget: number, gpu: boolean): FuzzCase {
  const dt = r.pick<DT>(['f32', 'f32', 'i32', 'u32']);
  const L = genLayout(r, budget);
  const n = L.sizes.length;
  const flavour = r.weighted(flavours);
  const values = genValues(r, dt, L.length, flavour);
  const op = genOption(r, n, REDUCE_OPS, gpu);
  const optionSet = op.spec.kind === 'constantOption' ? [op.spec.option] : op.spec.options;
  const needIndices = optionSet.includes('argMin') || optionSet.includes('argMax');
  const indicesType: DT | undefined = needIndices || r.chance(0.5) ? r.pick<DT>(['u32', 'i32']) : undefined;
  const outLen = Math.max(1, n + (r.chance(0.2) ? r.int(1, 10) : 0));
  const c: FuzzCase = {
    algo: 'reduce',
    desc: {},
    inputs: [{ name: 'valuesIn', dtype: dt, bits: values }],
    outputs: [{ name: 'valuesOut', dtype: dt, before: new Uint32Array(outLen).fill(SENTINEL) }],
    params: {},
    entry: 'plan',
  };
  if (indicesType) c.outputs.push({ name: 'indicesOut', dtype: indicesType, before: new Uint32Array(outLen).fill(SENTINEL) });
  c.params.segmentSizes = numSpec(r, sizeKindFor(r, L.equal, gpu), L.sizes, 0, { maxCap: L.length });
  if (L.stride !== undefined) c.params.segmentStride = r.chance(gpu ? 0.2 : 0.4) ? { kind: 'constant', value: L.stride } : { kind: 'uniform', value: L.stride, bounds: r.chance(0.5) ? { min: 0, max: L.stride } : undefined };
  c.params.numSegments = numSegmentsSpec(r, n, gpu);
  c.params.op = op.spec;
  if (L.stride === undefined && r.chance(0.1)) c.params.totalNumItems = { kind: 'guarantee', bounds: { max: L.sizes.reduce((a, b) => a + b, 0) + r.pick([0, 9]) } };
  let initial: number[] | undefined;
  if (r.chance(0.4)) {
    const kind = r.weighted<NumKind>([
      [gpu ? 0.3 : 1, 'constant'],
      [2, 'uniform'],
      [1, 'uniform-device'],
      [2, 'perSegment'],
      [1.5, 'perSegment-device'],
    ]);
    initial = genInitialNumbers(r, dt, n, kind === 'constant' || kind === 'uniform' || kind === 'uniform-device');
    c.params.initialValue = numSpec(r, kind, initial, dt === 'i32' ? -2147483648 : dt === 'u32' ? 0 : -Infinity, { dtype: dt, noBounds: true });
  }
  if (r.chance(0.2)) c.requirements = { determinism: 'not-guaranteed' };
  genRequirementsAndTuning(r, 'reduce', c, gpu);
  const constantOp0 = op.spec.kind === 'constantOption' ? op.spec.option : undefined;
  c.entry = r.weighted<string>([
    [5, 'plan'],
    [3, 'reduce'],
    [constantOp0 !== undefined && (indicesType !== undefined || !constantOp0.startsWith('arg')) ? 2 : 0, constantOp0 ?? ''],
  ]);
  const ops = flipOptions(r, c, 'op', op.each) ?? op.each;
  const ref = referenceSegmentedReduce({
    valueType: dt,
    values,
    segmentStarts: L.starts,
    segmentSizes: L.sizes,
    ops: ops as never,
    ...(initial ? { initialValues: L.sizes.map((_, s) => bitsOfValue(initial![s]!, dt)) } : {}),
  });
  const vo = c.outputs[0]!;
  vo.expected = vo.before.slice();
  vo.expected.set(ref.values);
  if (c.requirements?.determinism === 'not-guaranteed' && dt === 'f32') {
    vo.inexact = (i) => i < n && ops[i] === 'sum';
    c.crossExact = false;
  }
  if (indicesType) {
    const io = c.outputs[1]!;
    io.expected = io.before.slice();
    io.expected.set(ref.indices);
  }
  if (c.entry !== 'plan' && c.entry !== 'reduce') delete c.params.op;
  c.desc = {
    ...segmentedDesc(c, L, flavour),
    valueType: dt,
    op: summarizeSpec(op.spec),
    indicesOut: indicesType,
    initialValue: c.params.initialValue ? summarizeSpec(c.params.initialValue) : undefined,
    outLen,
  };
  return c;
}

// --- segmented scan ----------------------------------------------------------------------------

function genScan(r: Rng, budget: number, gpu: boolean): FuzzCase {
  const dt = r.pick<DT>(['f32', 'f32', 'i32', 'u32']);
  const L = genLayout(r, budget);
  const n = L.sizes.length;
  const flavour = r.weighted(flavours);
  const values = genValues(r, dt, L.length, flavour);
  const op = genOption(r, n, ['sum', 'min', 'max'], gpu);
  const mode = genOption(r, n, ['inclusive', 'exclusive'], gpu);
  const outLen = L.length + (r.chance(0.2) ? r.int(1, 10) : 0);
  const before = new Uint32Array(outLen).fill(SENTINEL);
  const c: FuzzCase = {
    algo: 'scan',
    desc: {},
    inputs: [{ name: 'valuesIn', dtype: dt, bits: values }],
    outputs: [{ name: 'valuesOut', dtype: dt, before }],
    params: {},
    entry: 'plan',
  };
  c.params.segmentSizes = numSpec(r, sizeKindFor(r, L.equal, gpu), L.sizes, 0, { maxCap: L.length });
  if (L.stride !== undefined) c.params.segmentStride = r.chance(gpu ? 0.2 : 0.4) ? { kind: 'constant', value: L.stride } : { kind: 'uniform', value: L.stride, bounds: r.chance(0.5) ? { min: 0, max: L.stride } : undefined };
  c.params.numSegments = numSegmentsSpec(r, n, gpu);
  c.params.op = op.spec;
  c.params.mode = mode.spec;
  if (L.stride === undefined && r.chance(0.1)) c.params.totalNumItems = { kind: 'guarantee', bounds: { max: L.sizes.reduce((a, b) => a + b, 0) + r.pick([0, 9]) } };
  let initialBits: number[] | undefined;
  if (r.chance(0.4)) {
    const kind = r.weighted<NumKind>([
      [gpu ? 0.3 : 1, 'constant'],
      [2, 'uniform'],
      [1, 'uniform-device'],
      [2, 'perSegment'],
      [1.5, 'perSegment-device'],
    ]);
    const uniform = kind === 'constant' || kind === 'uniform' || kind === 'uniform-device';
    const nums = genInitialNumbers(r, dt, n, uniform);
    // A device-only f32 initial value may be NaN (any value of the type).
    if (dt === 'f32' && (kind === 'uniform-device' || kind === 'perSegment-device') && r.chance(0.2)) nums[0] = NaN;
    c.params.initialValue = numSpec(r, kind, nums, dt === 'i32' ? -2147483648 : dt === 'u32' ? 0 : -Infinity, { dtype: dt, noBounds: true });
    initialBits = L.sizes.map((_, s) => bitsOfValue(nums[uniform ? 0 : s]!, dt));
  }
  if (r.chance(0.2)) c.requirements = { determinism: 'not-guaranteed' };
  genRequirementsAndTuning(r, 'scan', c, gpu);
  const constOp = op.spec.kind === 'constantOption' ? op.spec.option : undefined;
  const constMode = mode.spec.kind === 'constantOption' ? mode.spec.option : undefined;
  const shorthand =
    constOp === 'sum' && constMode === 'inclusive'
      ? 'inclusiveSum'
      : constOp === 'sum' && constMode === 'exclusive'
        ? 'exclusiveSum'
        : constOp === 'min' && constMode === 'inclusive'
          ? 'inclusiveMin'
          : constOp === 'max' && constMode === 'inclusive'
            ? 'inclusiveMax'
            : undefined;
  c.entry = r.weighted<string>([
    [5, 'plan'],
    [3, 'scan'],
    [shorthand ? 2 : 0, shorthand ?? ''],
  ]);
  const scanOps = (r.chance(0.5) ? flipOptions(r, c, 'op', op.each) : undefined) ?? op.each;
  const scanModes = (c.second ? undefined : flipOptions(r, c, 'mode', mode.each)) ?? mode.each;
  const expected = referenceScan({
    valueType: dt,
    values,
    segmentStarts: L.starts,
    segmentSizes: L.sizes,
    ops: scanOps as never,
    modes: scanModes as never,
    initialValues: initialBits,
    outputBefore: before,
  });
  c.outputs[0]!.expected = expected;
  if (c.requirements?.determinism === 'not-guaranteed' && dt === 'f32') {
    const inexact = new Uint8Array(outLen);
    void 0;
    L.sizes.forEach((size, s) => {
      if (scanOps[s] === 'sum') inexact.fill(1, L.starts[s]!, L.starts[s]! + size);
    });
    c.outputs[0]!.inexact = (i) => inexact[i] === 1;
    c.crossExact = false;
  }
  if (c.entry !== 'plan' && c.entry !== 'scan') {
    delete c.params.op;
    delete c.params.mode;
  }
  c.desc = {
    ...segmentedDesc(c, L, flavour),
    valueType: dt,
    op: summarizeSpec(op.spec),
    mode: summarizeSpec(mode.spec),
    initialValue: c.params.initialValue ? summarizeSpec(c.params.initialValue) : undefined,
    outLen,
  };
  return c;
}

// --- segmented sort ----------------------------------------------------------------------------

function genSort(r: Rng, budget: number, gpu: boolean): FuzzCase {
  const keyType = r.pick<DT>(['f32', 'f32', 'i32', 'u32']);
  const L = genLayout(r, budget);
  const n = L.sizes.length;
  const flavour = r.weighted(flavours);
  const keys = genValues(r, keyType, L.length, flavour);
  const order = genOption(r, n, ['ascending', 'descending'], gpu);
  const valueMode = r.weighted<string>([
    [2, 'none'],
    [2, 'indices-u32'],
    [1, 'indices-i32'],
    [1, 'indices-f32'],
    [2, 'payload'],
  ]);
  const outLen = L.length + (r.chance(0.2) ? r.int(1, 10) : 0);
  const before = new Uint32Array(outLen).fill(SENTINEL);
  const c: FuzzCase = {
    algo: 'sort',
    desc: {},
    inputs: [{ name: 'keysIn', dtype: keyType, bits: keys }],
    outputs: [{ name: 'keysOut', dtype: keyType, before }],
    params: {},
    entry: 'plan',
  };
  let payload: Uint32Array | undefined;
  let valueType: DT = 'u32';
  if (valueMode === 'payload') {
    valueType = r.pick<DT>(['f32', 'i32', 'u32']);
    payload = new Uint32Array(L.length);
    for (let i = 0; i < L.length; i++) payload[i] = r.chance(0.1) ? r.pick(F32_SPECIAL) : Math.imul(i + 7, 2654435761) >>> 0;
    c.inputs.push({ name: 'valuesIn', dtype: valueType, bits: payload });
  } else if (valueMode !== 'none') valueType = valueMode.slice(8) as DT;
  if (valueMode !== 'none') c.outputs.push({ name: 'valuesOut', dtype: valueType, before: before.slice() });
  c.params.segmentSizes = numSpec(r, sizeKindFor(r, L.equal, gpu), L.sizes, 0, { maxCap: L.length });
  if (L.stride !== undefined) c.params.segmentStride = r.chance(gpu ? 0.2 : 0.4) ? { kind: 'constant', value: L.stride } : { kind: 'uniform', value: L.stride, bounds: r.chance(0.5) ? { min: 0, max: L.stride } : undefined };
  c.params.numSegments = numSegmentsSpec(r, n, gpu);
  c.params.order = order.spec;
  if (L.stride === undefined && r.chance(0.15)) c.params.totalNumItems = { kind: 'guarantee', bounds: { max: L.sizes.reduce((a, b) => a + b, 0) + r.pick([0, 9]) } };
  genRequirementsAndTuning(r, 'sort', c, gpu);
  c.entry = r.chance(0.6) ? 'plan' : 'sort';
  const orders = flipOptions(r, c, 'order', order.each) ?? order.each;
  const ref = referenceSegmentedSort({
    keyType,
    keys,
    values: payload,
    valueType,
    segmentStarts: L.starts,
    segmentSizes: L.sizes,
    orders: orders as never,
    withValues: valueMode !== 'none',
    keysOut: before,
    valuesOut: before,
  });
  c.outputs[0]!.expected = ref.keys;
  if (valueMode !== 'none') c.outputs[1]!.expected = ref.values;
  c.desc = {
    ...segmentedDesc(c, L, flavour),
    keyType,
    order: summarizeSpec(order.spec),
    values: valueMode === 'payload' ? `payload-${valueType}` : valueMode,
    outLen,
  };
  return c;
}

// --- batched copy ------------------------------------------------------------------------------

function genCopy(r: Rng, budget: number, gpu: boolean): FuzzCase {
  const dt = r.pick<DT>(['f32', 'i32', 'u32']);
  const mode = r.weighted<string>([
    [3, 'zero'],
    [15, 'one'],
    [35, 'few'],
    [25, 'tens'],
    [17, 'hundreds'],
    [budget >= 150_000 ? 5 : 0, 'many'],
  ]);
  const nb = mode === 'zero' ? 0 : mode === 'one' ? 1 : mode === 'few' ? r.int(2, 8) : mode === 'tens' ? r.int(9, 64) : mode === 'hundreds' ? r.int(100, 999) : r.int(5000, 30000);
  const cap = Math.max(0, Math.floor(budget / 2 / Math.max(nb, 1)));
  const equal = nb <= 1 || r.chance(0.3);
  const s0 = pickSize(r, cap);
  const align = r.chance(0.3) ? 4 : 1;
  const roundA = (x: number) => Math.floor(x / align) * align;
  const sizes = Array.from({ length: nb }, () => roundA(equal ? s0 : r.chance(0.1) ? 0 : pickSize(r, cap)));
  // Destination: buffers in a shuffled order with gaps.
  const order = r.shuffle(sizes.map((_, i) => i));
  const dstOff = new Array<number>(nb).fill(0);
  let at = 0;
  const gaps = r.chance(0.5);
  for (const i of order) {
    if (gaps) at += align * r.int(0, 2);
    dstOff[i] = at;
    at += sizes[i]!;
  }
  const maxSize = Math.max(0, maxOf(sizes));
  const srcLen = Math.max(1, maxSize * 2 + 7 * align + (r.chance(0.3) ? r.int(0, 50) : 0));
  const srcUniform = r.chance(0.15);
  const su = roundA(r.int(0, Math.max(0, srcLen - maxSize)));
  const srcOff = sizes.map((size) => (srcUniform ? su : roundA(r.int(0, Math.max(0, srcLen - size)))));
  const dstLen = Math.max(1, at + (r.chance(0.5) ? r.int(0, 9) : 0));
  const source = genValues(r, dt, srcLen, r.weighted(flavours));
  const destination = genValues(r, dt, dstLen, 'random');
  const c: FuzzCase = {
    algo: 'copy',
    desc: {},
    inputs: [{ name: 'source', dtype: dt, bits: source }],
    outputs: [{ name: 'destination', dtype: dt, before: destination }],
    params: {},
    entry: r.chance(0.6) ? 'plan' : 'copy',
  };
  const nonEmpty = sizes.filter((s) => s > 0).length;
  const kindOf = (uniformOk: boolean): NumKind =>
    r.weighted<NumKind>([
      [uniformOk ? (gpu ? 0.3 : 1) : 0, 'constant'],
      [uniformOk ? 2 : 0, 'uniform'],
      [uniformOk ? 1 : 0, 'uniform-device'],
      [4, 'perSegment'],
      [1, 'perSegment-rt'],
      [2, 'perSegment-device'],
      [0.7, 'perSegment-device-rt'],
    ]);
  const sizesKind = kindOf(equal);
  c.params.sizes = numSpec(r, sizesKind, equal ? new Array<number>(Math.max(nb, 1)).fill(sizes[0] ?? s0) : sizes, 0, {});
  if (nb === 0 && isUniformNum(c.params.sizes as NumSpec)) (c.params.sizes as { value: number }).value = sizes[0] ?? s0;
  c.params.sourceOffsets = numSpec(r, kindOf(srcUniform), srcUniform ? new Array<number>(Math.max(nb, 1)).fill(su) : srcOff, 0, {});
  const dstUniformOk = nonEmpty <= 1 && nb >= 1 && new Set(dstOff.filter((_, i) => sizes[i]! > 0)).size <= 1;
  let dstSpec: NumSpec;
  if (dstUniformOk && r.chance(0.3)) {
    const d = dstOff.find((_, i) => sizes[i]! > 0) ?? 0;
    for (let i = 0; i < nb; i++) dstOff[i] = d;
    dstSpec = numSpec(r, r.pick<NumKind>(['uniform', 'uniform-device', 'constant']), new Array<number>(nb).fill(d), 0, {});
  } else dstSpec = numSpec(r, kindOf(false), dstOff, 0, {});
  c.params.destinationOffsets = dstSpec;
  c.params.numBuffers = numSegmentsSpec(r, nb, gpu);
  if (r.chance(0.1)) c.params.totalNumItems = { kind: 'guarantee', bounds: { max: sizes.reduce((a, b) => a + b, 0) + r.pick([0, 9]) } };
  genRequirementsAndTuning(r, 'copy', c, gpu);
  if (c.requirements?.guaranteeChecks === 'trust' && r.chance(0.5)) delete c.requirements;
  c.outputs[0]!.expected = referenceBatchedCopy({ source, destination, sourceOffsets: srcOff, destinationOffsets: dstOff, sizes });
  c.desc = {
    dtype: dt,
    nb,
    sizes: summarize(sizes),
    align,
    srcLen,
    dstLen,
    sizesSpec: summarizeSpec(c.params.sizes as Spec),
    sourceOffsets: summarizeSpec(c.params.sourceOffsets as Spec),
    destinationOffsets: summarizeSpec(dstSpec),
    numBuffers: summarizeSpec(c.params.numBuffers as Spec),
  };
  (c as FuzzCase & { copyLayout?: unknown }).copyLayout = { sizes, srcOff, dstOff, srcLen, dstLen };
  return c;
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: a mutation of a valid case, with the error it must raise

const MISSPELL = (r: Rng, name: string) => {
  const how = r.int(0, 3);
  if (how === 0) return name.slice(0, -1);
  if (how === 1) return name + 's';
  if (how === 2) return name.slice(0, 1) + name.slice(2);
  return name.toLowerCase() === name ? name + 'X' : name.toLowerCase();
};

const requiredOf: Record<Algo, string[]> = {
  topk: ['keysIn', 'keysOut', 'segmentSizes', 'k', 'selectDirection', 'numSegments'],
  reduce: ['valuesIn', 'valuesOut', 'segmentSizes', 'numSegments', 'op'],
  scan: ['valuesIn', 'valuesOut', 'segmentSizes', 'numSegments', 'op', 'mode'],
  sort: ['keysIn', 'keysOut', 'segmentSizes', 'numSegments', 'order'],
  copy: ['source', 'destination', 'sizes', 'sourceOffsets', 'destinationOffsets', 'numBuffers'],
};

function untouched(c: FuzzCase): void {
  for (const o of c.outputs) {
    o.expected = o.before;
    o.inexact = undefined;
  }
  c.check = undefined;
  c.crossExact = true;
}

/** Applies one applicable bad-input mutation; returns false when none applies. */
function makeBad(r: Rng, c: FuzzCase): boolean {
  c.second = undefined;
  const options: (() => boolean)[] = [];
  const paramNames = Object.keys(c.params).filter((k) => c.params[k] !== undefined);
  const n = segmentCount(c);
  const trust = c.requirements?.guaranteeChecks === 'trust';
  const deviceCount = ((c.params.numSegments ?? c.params.numBuffers) as NumSpec | undefined)?.kind === 'uniform-device';
  if (c.entry === 'topk') return false;

  // A misspelled field in the args.
  options.push(() => {
    const fields = [...c.inputs.map((i) => i.name), ...c.outputs.map((o) => o.name), ...paramNames];
    const name = r.pick(fields);
    const bad = MISSPELL(r, name);
    if (bad === name || fields.includes(bad)) return false;
    c.mutate = (args) => {
      args[bad] = args[name];
      delete args[name];
    };
    c.bad = { what: `misspelled field ${name} -> ${bad}`, type: 'usage', texts: [`'${bad}'`] };
    return true;
  });
  // A required field left out.
  options.push(() => {
    const req = requiredOf[c.algo].filter((f) => f in c.params || c.inputs.some((i) => i.name === f) || c.outputs.some((o) => o.name === f));
    if (!req.length) return false;
    const name = r.pick(req);
    c.mutate = (args) => {
      if (r.chance(0.5)) delete args[name];
      else args[name] = undefined;
    };
    c.bad = { what: `missing ${name}`, type: 'usage', texts: [`'${name}'`, name] };
    return true;
  });
  // A misspelled env field.
  options.push(() => {
    const which = r.pick(['requirements', 'guarantees', 'tuning', 'top']);
    if (which === 'requirements') c.envExtra = { requirements: { outputOrder: 'sorted' } };
    else if (which === 'guarantees') c.envExtra = { guarantees: { maxSegmentSizes: 10 } };
    else if (which === 'tuning') c.envExtra = { tuning: { variants: 'reduce' } };
    else c.envExtra = { requirement: {} };
    const bad = which === 'requirements' ? 'outputOrder' : which === 'guarantees' ? 'maxSegmentSizes' : which === 'tuning' ? 'variants' : 'requirement';
    c.bad = { what: `env misspelled ${bad}`, type: 'usage', texts: [`'${bad}'`] };
    return true;
  });
  // An output too short.
  options.push(() => {
    if (deviceCount) return false;
    const o = r.pick(c.outputs);
    const needed = requiredLength(c, o.name);
    if (needed === undefined || needed < 2) return false;
    const len = r.int(Math.max(1, Math.floor(needed / 2)), needed - 1);
    if (len < 1) return false;
    o.before = o.before.slice(0, len);
    c.bad = { what: `${o.name} shortened to ${len} (needs ${needed})`, type: 'usage', texts: [o.name] };
    return true;
  });
  // An output of the wrong dtype.
  options.push(() => {
    const o = r.pick(c.outputs);
    const allowed = allowedDtypes(c, o.name);
    const wrong = (['f32', 'i32', 'u32'] as DT[]).filter((d) => !allowed.includes(d));
    if (!wrong.length) return false;
    o.dtype = r.pick(wrong);
    c.bad = { what: `${o.name} as ${o.dtype}`, type: 'usage', texts: [o.name] };
    return true;
  });
  // An output aliasing an input.
  options.push(() => {
    const o = r.pick(c.outputs);
    const i = c.inputs.find((x) => x.dtype === o.dtype && x.bits.length >= o.before.length);
    if (!i) return false;
    c.mutate = (args) => {
      args[o.name] = args[i.name];
    };
    // Any usage error will do: the aliased array may also be too short or long for its new role.
    c.bad = { what: `${o.name} is ${i.name}`, type: 'usage' };
    return true;
  });
  // A destroyed input.
  options.push(() => {
    const i = r.pick(c.inputs);
    c.mutate = (_args, arrays) => {
      arrays[i.name]!.destroy();
    };
    c.bad = { what: `${i.name} destroyed`, type: 'usage', texts: [i.name] };
    return true;
  });
  // A per-segment host array shorter than numSegments.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return (s.kind === 'perSegment' || s.kind === 'perSegmentOption') && n > 0;
    });
    if (!names.length) return false;
    const name = r.pick(names);
    const s = c.params[name] as { values: unknown[] };
    s.values = s.values.slice(0, r.int(0, n - 1));
    if (deviceCount && trust) return false;
    c.bad = { what: `${name} has ${s.values.length} values for ${n} segments`, type: deviceCount ? 'any' : 'usage', texts: [name] };
    return true;
  });
  // A host value outside its static bounds.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return (s.kind === 'perSegment' || s.kind === 'uniform') && s.bounds?.max !== undefined && s.bounds.max < 4294967295 && (s.kind === 'uniform' || n > 0) && k !== 'initialValue' && k !== 'numSegments' && k !== 'numBuffers';
    });
    if (!names.length) return false;
    const name = r.pick(names);
    const s = c.params[name] as NumSpec & { bounds: B };
    const v = s.bounds.max! + r.int(1, 3);
    let seg: number | undefined;
    if (s.kind === 'perSegment') {
      seg = r.int(0, n - 1);
      s.values = s.values.slice();
      s.values[seg] = v;
      if (s.runtime && r.chance(0.5)) s.runtime = undefined;
    } else (s as { value: number }).value = v;
    if (name === 'k') padOutputs(c, n * v);
    c.bad = { what: `${name}${seg === undefined ? '' : `[${seg}]`} = ${v} > static max ${s.bounds.max}`, type: 'range', parameter: name, segment: seg };
    return true;
  });
  // A host value outside its host runtime bounds.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return s.kind === 'perSegment' && s.runtime?.max !== undefined && n > 0 && (s.bounds?.max === undefined || s.runtime.max < s.bounds.max);
    });
    if (!names.length) return false;
    const name = r.pick(names);
    const s = c.params[name] as NumSpec & { kind: 'perSegment'; runtime: B };
    const seg = r.int(0, n - 1);
    s.values = s.values.slice();
    s.values[seg] = s.runtime.max! + 1;
    c.bad = { what: `${name}[${seg}] = ${s.values[seg]} > runtime max ${s.runtime.max}`, type: 'range', parameter: name, segment: seg };
    return true;
  });
  // A device value outside its static bounds (validate: GuaranteeViolationError; trust: no error, no crash).
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return (s.kind === 'perSegment-device' || s.kind === 'uniform-device') && s.bounds?.max !== undefined && s.bounds.max < 4294967295 && (s.kind === 'uniform-device' || n > 0) && k !== 'initialValue';
    });
    if (!names.length) return false;
    const name = r.pick(names);
    const s = c.params[name] as NumSpec & { bounds: B };
    const v = s.bounds.max! + r.int(1, 3);
    let seg: number | undefined;
    if (s.kind === 'perSegment-device') {
      seg = r.int(0, n - 1);
      s.values = s.values.slice();
      s.values[seg] = v;
    } else (s as { value: number }).value = v;
    // With sizes past the input the run may also fail that check; both name segmentSizes.
    c.bad = trust
      ? { what: `${name}${seg === undefined ? '' : `[${seg}]`} = ${v} past static max ${s.bounds.max} under trust`, type: 'trust' }
      : { what: `${name}${seg === undefined ? '' : `[${seg}]`} = ${v} > static max ${s.bounds.max} (device)`, type: 'guarantee', parameter: name, segment: name === 'numSegments' ? undefined : seg };
    return true;
  });
  // A device value outside its device runtime bounds.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return s.kind === 'perSegment-device' && s.runtimeDevice !== undefined && n > 0 && s.runtimeDevice[0] > 0;
    });
    if (!names.length || trust) return false;
    const name = r.pick(names);
    const s = c.params[name] as NumSpec & { kind: 'perSegment-device'; runtimeDevice: [number, number] };
    const seg = r.int(0, n - 1);
    s.values = s.values.slice();
    s.values[seg] = s.runtimeDevice[0] - 1;
    if (s.bounds?.min !== undefined && s.values[seg]! < s.bounds.min) return false;
    c.bad = { what: `${name}[${seg}] = ${s.values[seg]} < device runtime min ${s.runtimeDevice[0]}`, type: 'guarantee', parameter: name, segment: seg };
    return true;
  });
  // A device option index past its set.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return s.kind === 'uniformOption-device' || (s.kind === 'perSegmentOption-device' && n > 0);
    });
    if (!names.length || trust) return false;
    const name = r.pick(names);
    const s = c.params[name] as OptSpec;
    let seg: number | undefined;
    if (s.kind === 'uniformOption-device') s.index = s.options.length + r.int(0, 2);
    else if (s.kind === 'perSegmentOption-device') {
      seg = r.int(0, n - 1);
      s.indices = s.indices.slice();
      s.indices[seg] = s.options.length + r.int(0, 5);
    }
    c.bad = { what: `${name}${seg === undefined ? '' : `[${seg}]`} option index past ${(s as { options: string[] }).options.length} options (device)`, type: 'guarantee', parameter: name, segment: seg };
    return true;
  });
  // A host option not in the set.
  options.push(() => {
    const names = paramNames.filter((k) => {
      const s = c.params[k]!;
      return s.kind === 'uniformOption' || (s.kind === 'perSegmentOption' && n > 0);
    });
    if (!names.length) return false;
    const name = r.pick(names);
    const s = c.params[name] as OptSpec;
    const bogus = r.pick(['median', 'MAX', 'product', 'none']);
    let seg: number | undefined;
    if (s.kind === 'uniformOption') s.option = bogus;
    else if (s.kind === 'perSegmentOption') {
      seg = r.int(0, n - 1);
      s.values = s.values.slice();
      s.values[seg] = bogus;
    }
    c.bad = { what: `${name}${seg === undefined ? '' : `[${seg}]`} = '${bogus}'`, type: 'range', parameter: name, segment: seg };
    return true;
  });
  // Segments past the end of the input (host or device sizes).
  options.push(() => {
    const s = c.params.segmentSizes as NumSpec | undefined;
    if (!s || n === 0 || c.algo === 'copy' || c.params.segmentStride) return false;
    const inputLen = c.inputs[0]!.bits.length;
    const sizes = perSegmentValues(s, n);
    const total = sizes.reduce((a, b) => a + b, 0);
    const extra = inputLen - total + r.int(1, 3);
    if (s.kind !== 'perSegment' && s.kind !== 'perSegment-device') return false;
    const seg = n - 1;
    const v = sizes[seg]! + extra;
    if (s.bounds?.max !== undefined && v > s.bounds.max) s.bounds = { ...s.bounds, max: v };
    s.values = s.values.slice();
    s.values[seg] = v;
    // Outputs sized from the input (scan, sort) are then short too: lengthen them so the error is the segment's.
    for (const o of c.outputs) {
      const need = requiredLength(c, o.name);
      if (need !== undefined && o.before.length < need) {
        const b = new Uint32Array(need).fill(SENTINEL);
        b.set(o.before);
        o.before = b;
      }
    }
    if (s.kind === 'perSegment-device' && trust) {
      c.bad = { what: `segmentSizes[${seg}] = ${v}: packed segments end ${extra} past the input under trust`, type: 'trust' };
      return true;
    }
    c.bad = {
      what: `segmentSizes[${seg}] = ${v}: packed segments end past the input (${s.kind})`,
      type: s.kind === 'perSegment' ? (deviceCount ? (trust ? 'trust' : 'range-or-guarantee') : 'range') : 'guarantee',
      parameter: 'segmentSizes',
      segment: seg,
    };
    return true;
  });
  // A size larger than the stride.
  options.push(() => {
    const s = c.params.segmentSizes as NumSpec | undefined;
    const st = c.params.segmentStride as NumSpec | undefined;
    if (!s || !st || n < 2 || (s.kind !== 'perSegment' && s.kind !== 'perSegment-device') || trust) return false;
    const stride = (st as { value: number }).value;
    const seg = r.int(0, n - 2);
    const v = stride + 1;
    if (s.bounds?.max !== undefined && v > s.bounds.max) s.bounds = { ...s.bounds, max: v };
    s.values = s.values.slice();
    s.values[seg] = v;
    c.bad = { what: `segmentSizes[${seg}] = ${v} > stride ${stride} (${s.kind})`, type: s.kind === 'perSegment' ? (deviceCount ? (trust ? 'trust' : 'range-or-guarantee') : 'range') : 'guarantee', parameter: 'segmentSizes', segment: seg };
    return true;
  });
  // top-k: k = 0 on the host.
  if (c.algo === 'topk')
    options.push(() => {
      const s = c.params.k as NumSpec | undefined;
      if (!s || (s.kind !== 'perSegment' && s.kind !== 'uniform' && s.kind !== 'constant')) return false;
      let seg: number | undefined;
      if (s.kind === 'perSegment') {
        if (n === 0) return false;
        seg = r.int(0, n - 1);
        s.values = s.values.slice();
        s.values[seg] = 0;
      } else s.value = 0;
      c.bad = { what: `k${seg === undefined ? '' : `[${seg}]`} = 0`, type: 'range', parameter: 'k', segment: seg };
      return true;
    });
  // reduce / scan: an initial value outside the values' type.
  if (c.algo === 'reduce' || c.algo === 'scan')
    options.push(() => {
      const s = c.params.initialValue as NumSpec | undefined;
      const dt = c.inputs[0]!.dtype;
      if (!s) return false;
      if (s.kind === 'perSegment-device' || s.kind === 'uniform-device') {
        if (c.algo !== 'reduce' || dt !== 'f32' || trust) return false;
        let seg: number | undefined;
        if (s.kind === 'perSegment-device') {
          if (n === 0) return false;
          seg = r.int(0, n - 1);
          s.values = s.values.slice();
          s.values[seg] = NaN;
        } else s.value = NaN;
        c.bad = { what: `initialValue${seg === undefined ? '' : `[${seg}]`} = NaN (device)`, type: 'guarantee', parameter: 'initialValue', segment: seg };
        return true;
      }
      const v = dt === 'f32' ? NaN : dt === 'i32' ? r.pick([2147483648, -2147483649, 1.5]) : r.pick([-1, 4294967296, 2.5]);
      let seg: number | undefined;
      if (s.kind === 'perSegment') {
        if (n === 0) return false;
        seg = r.int(0, n - 1);
        s.values = s.values.slice();
        s.values[seg] = v;
      } else if (s.kind !== 'guarantee') s.value = v;
      c.bad = { what: `initialValue${seg === undefined ? '' : `[${seg}]`} = ${v} (${dt}, host)`, type: 'range', parameter: 'initialValue', segment: seg };
      return true;
    });
  // copy: a range past its array, or overlapping destinations.
  if (c.algo === 'copy')
    options.push(() => {
      const lay = (c as FuzzCase & { copyLayout?: { sizes: number[]; srcOff: number[]; dstOff: number[]; srcLen: number; dstLen: number } }).copyLayout!;
      const ne = lay.sizes.map((s, i) => (s > 0 ? i : -1)).filter((i) => i >= 0);
      if (!ne.length) return false;
      const which = r.pick(['src', 'dst', 'overlap']);
      const dstSpec = c.params.destinationOffsets as NumSpec;
      const srcSpec = c.params.sourceOffsets as NumSpec;
      const onHost = (x: NumSpec) => x.kind !== 'uniform-device' && x.kind !== 'perSegment-device';
      // docs/batched-copy.md: with any of sizes and offsets device-only, the device makes the checks.
      const sizesOnHost = onHost(c.params.sizes as NumSpec) && onHost(srcSpec) && onHost(dstSpec);
      if (which === 'overlap') {
        if (ne.length < 2 || (dstSpec.kind !== 'perSegment' && dstSpec.kind !== 'perSegment-device')) return false;
        const a = r.pick(ne);
        const b = r.pick(ne.filter((i) => i !== a));
        const d = dstSpec.values.slice();
        d[b] = d[a]! + r.int(0, lay.sizes[a]! - 1);
        if (d[b]! + lay.sizes[b]! > lay.dstLen) return false;
        dstSpec.values = d;
        if (dstSpec.kind === 'perSegment' && dstSpec.runtime) dstSpec.runtime = undefined;
        if (dstSpec.kind === 'perSegment-device' && dstSpec.runtimeDevice) dstSpec.runtimeDevice = undefined;
        if (dstSpec.bounds?.max !== undefined) dstSpec.bounds = { ...dstSpec.bounds, max: Math.max(dstSpec.bounds.max, maxOf(d)) };
        if (dstSpec.bounds?.min !== undefined) dstSpec.bounds = { ...dstSpec.bounds, min: Math.min(dstSpec.bounds.min, minOf(d)) };
        // The lowest buffer whose destination range holds another non-empty buffer's start.
        let named = -1;
        for (const i of ne) {
          if (ne.some((j) => j !== i && d[j]! >= d[i]! && d[j]! < d[i]! + lay.sizes[i]!)) {
            named = i;
            break;
          }
        }
        if (dstSpec.kind === 'perSegment-device' && trust) {
          c.bad = { what: `destination ranges of buffers ${a} and ${b} overlap under trust`, type: 'trust' };
          return true;
        }
        const host = dstSpec.kind === 'perSegment' && sizesOnHost;
        if (!host && trust) {
          c.bad = { what: `destination ranges of buffers ${a} and ${b} overlap under trust`, type: 'trust' };
          return true;
        }
        if (host && deviceCount && trust) {
          c.bad = { what: `destination ranges of buffers ${a} and ${b} overlap under trust`, type: 'trust' };
          return true;
        }
        c.bad = { what: `destination ranges of buffers ${a} and ${b} overlap`, type: host ? (deviceCount ? 'range-or-guarantee' : 'range') : 'guarantee', parameter: 'destinationOffsets', segment: named, text: 'overlaps' };
        return true;
      }
      const spec = which === 'src' ? srcSpec : dstSpec;
      if (spec.kind !== 'perSegment' && spec.kind !== 'perSegment-device') return false;
      const i = r.pick(ne);
      const len = which === 'src' ? lay.srcLen : lay.dstLen;
      const v = len - lay.sizes[i]! + r.int(1, 3);
      const vals = spec.values.slice();
      vals[i] = v;
      spec.values = vals;
      if (spec.kind === 'perSegment' && spec.runtime) spec.runtime = undefined;
      if (spec.kind === 'perSegment-device' && spec.runtimeDevice) spec.runtimeDevice = undefined;
      if (spec.bounds?.max !== undefined) spec.bounds = { ...spec.bounds, max: Math.max(spec.bounds.max, v) };
      const param = which === 'src' ? 'sourceOffsets' : 'destinationOffsets';
      void i;
      const host = spec.kind === 'perSegment' && sizesOnHost;
      if ((!host || deviceCount) && trust) {
        c.bad = { what: `${param}[${i}] = ${v}: range past the ${which === 'src' ? 'source' : 'destination'} under trust`, type: 'trust' };
        return true;
      }
      // Other buffers' ranges were within their arrays, so the lowest failing buffer is i -- unless a
      // lower one now overlaps (destination moved): then accept an overlap report too.
      c.bad = {
        what: `${param}[${i}] = ${v}: range past the ${which === 'src' ? 'source' : 'destination'} (${spec.kind})`,
        type: host ? (deviceCount ? 'range-or-guarantee' : 'range') : 'guarantee',
        parameter: param,
        segment: i,
        text: 'ends past',
      };
      return true;
    });

  for (let tries = 0; tries < 8; tries++) {
    const before = JSON.stringify({ p: c.params, o: c.outputs.map((o) => [o.name, o.dtype, o.before.length]) });
    const f = r.pick(options);
    const saved = structuredCloneCase(c);
    if (f()) {
      if (c.bad?.type !== 'trust') untouched(c);
      else {
        // Unspecified outputs: only that the run completes and the inputs are untouched.
        for (const o of c.outputs) o.inexact = () => true;
        c.check = undefined;
        c.crossExact = false;
      }
      return true;
    }
    restoreCase(c, saved);
    void before;
  }
  return false;
}

function structuredCloneCase(c: FuzzCase): { params: Record<string, Spec | undefined>; outputs: { dtype: DT; before: Uint32Array }[] } {
  return { params: structuredClone(c.params), outputs: c.outputs.map((o) => ({ dtype: o.dtype, before: o.before })) };
}
function restoreCase(c: FuzzCase, s: { params: Record<string, Spec | undefined>; outputs: { dtype: DT; before: Uint32Array }[] }): void {
  c.params = s.params;
  c.outputs.forEach((o, i) => {
    o.dtype = s.outputs[i]!.dtype;
    o.before = s.outputs[i]!.before;
  });
  c.mutate = undefined;
  c.envExtra = undefined;
  c.bad = undefined;
}

/** Lengthens the outputs to at least `length` (so that a bad value, not a short output, is what fails). */
function padOutputs(c: FuzzCase, length: number): void {
  for (const o of c.outputs) {
    if (o.before.length < length) {
      const b = new Uint32Array(length).fill(SENTINEL);
      b.set(o.before);
      o.before = b;
    }
  }
}

function segmentCount(c: FuzzCase): number {
  const s = (c.params.numSegments ?? c.params.numBuffers) as NumSpec | undefined;
  return s && s.kind !== 'guarantee' && 'value' in s ? s.value : 0;
}

/** The length an output needs (for the short-output mutation). */
function requiredLength(c: FuzzCase, name: string): number | undefined {
  const n = segmentCount(c);
  switch (c.algo) {
    case 'topk':
      return name === 'keysOut' || name === 'valuesOut' || name === 'weightsOut' ? n * (c.kMax ?? 0) : undefined;
    case 'reduce':
      return n;
    case 'scan':
    case 'sort':
      return c.inputs[0]!.bits.length;
    case 'copy':
      return undefined;
  }
}

function allowedDtypes(c: FuzzCase, name: string): DT[] {
  const kt = c.inputs[0]!.dtype;
  switch (c.algo) {
    case 'topk':
      if (name === 'keysOut') return [kt];
      if (name === 'weightsOut') return ['f32'];
      return c.inputs[1] ? [c.inputs[1].dtype] : ['f32', 'i32', 'u32'];
    case 'reduce':
      return name === 'indicesOut' ? ['u32', 'i32'] : [kt];
    case 'scan':
      return [kt];
    case 'sort':
      if (name === 'keysOut') return [kt];
      return c.inputs[1] ? [c.inputs[1].dtype] : ['f32', 'i32', 'u32'];
    case 'copy':
      return [kt];
  }
}

// ---------------------------------------------------------------------------------------------
// Descriptions

const hex = (b: number) => `0x${(b >>> 0).toString(16).padStart(8, '0')}`;

function summarize(a: readonly number[]): unknown {
  if (a.length <= 12) return a;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const x of a) {
    min = Math.min(min, x);
    max = Math.max(max, x);
    sum += x;
  }
  return { length: a.length, min, max, sum, head: a.slice(0, 8) };
}
function summarizeSpec(s: Spec): unknown {
  const o: Record<string, unknown> = { ...s };
  for (const k of ['values', 'indices'] as const) if (k in o) o[k] = summarize((o[k] as number[]).map((x) => (typeof x === 'string' ? x : x)) as number[]);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Backends

interface BackendEntry {
  name: BackendName;
  backend: Backend;
  temp?: DeviceArray;
}

async function makeBackend(name: BackendName): Promise<Backend> {
  switch (name) {
    case 'cpu':
      return cpuBackend();
    case 'cpu0':
      return cpuBackend({ workers: 0 });
    case 'cpuh':
      return cpuBackend({ workers: 1, capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, subgroupSize: 32, parallelism: 1024 } });
    case 'cpus':
      return cpuBackend({ workers: 0, capabilities: { workgroupStorageBytes: 16384, maxWorkgroupSize: 128, subgroupSize: 16, parallelism: 8 } });
    case 'webgpu':
      return webgpuBackend();
  }
}

// ---------------------------------------------------------------------------------------------
// Running a case

interface RunResult {
  outputs?: Record<string, Uint32Array>;
  variant?: string;
  failure?: string;
  refused?: string;
}

type Planner = (a: unknown, e: Env) => { variant: string; kMax?: number; tempStorageBytes: number; run(t?: DeviceArray): Promise<void>; checked(): Promise<void>; destroy(): void };
type Caller = (a: unknown, e?: Env) => Promise<void>;

const planners: Record<Algo, Planner> = {
  topk: DeviceBatchedTopK.plan as unknown as Planner,
  reduce: DeviceSegmentedReduce.plan as unknown as Planner,
  scan: DeviceSegmentedScan.plan as unknown as Planner,
  sort: DeviceSegmentedSort.plan as unknown as Planner,
  copy: DeviceBatchedCopy.plan as unknown as Planner,
};
const apis: Record<Algo, Record<string, unknown>> = {
  topk: DeviceBatchedTopK as unknown as Record<string, unknown>,
  reduce: DeviceSegmentedReduce as unknown as Record<string, unknown>,
  scan: DeviceSegmentedScan as unknown as Record<string, unknown>,
  sort: DeviceSegmentedSort as unknown as Record<string, unknown>,
  copy: DeviceBatchedCopy as unknown as Record<string, unknown>,
};

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

function tempFor(be: BackendEntry, bytes: number, r: Rng, owned: DeviceArray[]): DeviceArray | undefined {
  if (bytes <= 0) return r.chance(0.1) && be.temp ? be.temp : undefined;
  if (r.chance(0.3)) {
    const t = be.backend.alloc('u8', bytes + (r.chance(0.5) ? 0 : r.int(1, 64)));
    owned.push(t);
    return t;
  }
  if (!be.temp || be.temp.length < bytes) {
    be.temp?.destroy();
    be.temp = be.backend.alloc('u8', Math.max(bytes, 1 << 16));
  }
  return be.temp;
}

async function runOn(be: BackendEntry, c: FuzzCase, r: Rng): Promise<RunResult> {
  const backend = be.backend;
  const owned: DeviceArray[] = [];
  const track = (a: DeviceArray) => (owned.push(a), a);
  const up = (a: Float32Array | Int32Array | Uint32Array) => track(backend.upload(a));
  const arrays: Record<string, DeviceArray> = {};
  let plan: ReturnType<Planner> | undefined;
  const result: RunResult = {};
  try {
    for (const i of c.inputs) arrays[i.name] = up(typedOf(i.dtype, i.bits));
    for (const o of c.outputs) arrays[o.name] = up(typedOf(o.dtype, o.before));
    const hostArrays: (number[] | string[])[] = [];
    const hostByName: Record<string, (number[] | string[]) | undefined> = {};
    const args: Record<string, unknown> = {};
    for (const i of c.inputs) args[i.name] = arrays[i.name];
    for (const o of c.outputs) args[o.name] = arrays[o.name];
    for (const [k, s] of Object.entries(c.params)) {
      if (s === undefined) continue;
      const before = hostArrays.length;
      args[k] = buildParam(s, up, hostArrays);
      if (hostArrays.length > before) hostByName[k] = hostArrays[before];
    }
    if (c.extra) Object.assign(args, c.extra);
    c.mutate?.(args, arrays, backend, track);
    const envOptions: Record<string, unknown> = { backend };
    if (c.requirements) envOptions.requirements = c.requirements;
    if (c.tuning) envOptions.tuning = c.tuning;
    if (c.guarantees && Object.keys(c.guarantees).length) envOptions.guarantees = c.guarantees;
    if (c.envExtra) for (const [k, v] of Object.entries(c.envExtra)) envOptions[k] = typeof v === 'object' && v !== null && typeof envOptions[k] === 'object' ? { ...(envOptions[k] as object), ...v } : v;

    let error: unknown;
    let returned: Record<string, DeviceArray> | undefined;
    try {
      const e = (env as unknown as (o: unknown) => Env)(envOptions);
      if (c.entry === 'plan') {
        plan = planners[c.algo](args, e);
        result.variant = plan.variant;
        if (c.kMax !== undefined && plan.kMax !== c.kMax && !c.bad) result.failure = `plan.kMax ${plan.kMax}, docs/top-k.md gives ${c.kMax}`;
        // Host per-segment arrays are copied when planned: scribbling on ours must not reach the run.
        if (r.chance(0.15)) for (const h of hostArrays) for (let i = 0; i < h.length; i++) (h as unknown[])[i] = typeof h[i] === 'string' ? 'bogus' : 999_999_999;
        const temp = tempFor(be, plan.tempStorageBytes, r, owned);
        await plan.run(temp);
        if (r.chance(0.2)) await plan.run(temp);
        if (r.chance(0.4)) await plan.checked();
      } else if (c.entry === 'topk') {
        const o = c.topkOptions!;
        const options: Record<string, unknown> = { rows: o.rows, k: o.k };
        if (o.largest !== undefined) options.largest = o.largest;
        if (o.weights !== undefined) options.weights = o.weights;
        if (o.passOutputs) {
          options.keysOut = arrays.keysOut;
          options.indicesOut = arrays.indicesOut;
          if (arrays.weightsOut) options.weightsOut = arrays.weightsOut;
        }
        const fn = apis.topk.topk as (s: DeviceArray, o: unknown, e?: Env) => Promise<{ keys: DeviceArray; indices: DeviceArray; weights?: DeviceArray }>;
        const res = await fn(arrays.keysIn!, options, c.tuning ? e : r.chance(0.5) ? e : undefined);
        if (!o.passOutputs) {
          returned = { keysOut: track(res.keys), indicesOut: track(res.indices) };
          if (res.weights) returned.weightsOut = track(res.weights);
        }
      } else {
        const fn = apis[c.algo][c.entry] as Caller;
        await fn(args, e);
        if (c.second) {
          // The same args object again, its host per-segment array changed in place: the kept plan
          // must see the change (docs/concepts.md, Environment).
          const h = hostByName[c.second.param] as unknown[];
          c.second.values.forEach((v, i) => (h[i] = v));
          await fn(args, e);
        } else if (r.chance(0.2)) await fn(args, e);
      }
      const outs: Record<string, Uint32Array> = {};
      for (const o of c.outputs) outs[o.name] = wordsOf(await backend.download((returned?.[o.name] ?? arrays[o.name])!));
      result.outputs = outs;
    } catch (err) {
      error = err;
    }

    if (c.bad && c.bad.type !== 'trust') {
      if (c.tuning && error instanceof SegkitUsageError && /cannot run for these parameters|tuning\./.test(error.message)) {
        result.refused = errorText(error);
        return result;
      }
      if (error === undefined) {
        result.failure = `bad input accepted (${c.bad.what}): no error`;
      } else {
        const problem = checkBadError(c.bad, error);
        if (problem) result.failure = `bad input (${c.bad.what}): ${problem}`;
      }
      // Outputs must be untouched (download again: the error is reported once).
      const outs: Record<string, Uint32Array> = {};
      for (const o of c.outputs) {
        const a = arrays[o.name];
        if (!a || a.destroyed) continue;
        try {
          outs[o.name] = wordsOf(await backend.download(a));
        } catch (err2) {
          result.failure = (result.failure ? result.failure + '; ' : '') + `download after the rejected call failed again: ${errorText(err2)}`;
          break;
        }
      }
      result.outputs = outs;
      const changed = await inputsChanged(backend, c, arrays);
      if (changed) result.failure = (result.failure ? result.failure + '; ' : '') + changed;
      return result;
    }
    if (error !== undefined) {
      const text = errorText(error);
      if (c.tuning && error instanceof SegkitUsageError && /cannot run for these parameters|tuning\.|policy|workgroup memory/.test(text)) {
        result.refused = text;
        return result;
      }
      // A documented limit (docs/top-k.md, Limits): temporary storage or an input past one binding.
      if (error instanceof SegkitUsageError && /maxStorageBufferBytes|maxBufferBytes|maxWorkgroupsPerDimension/.test(text)) {
        result.refused = text;
        return result;
      }
      result.failure = `unexpected ${text}`;
      if (verbose && error instanceof Error && error.stack) console.log(error.stack);
      return result;
    }
    // Inputs untouched.
    if (r.chance(0.3) || c.bad?.type === 'trust') {
      const changed = await inputsChanged(backend, c, arrays);
      if (changed) result.failure = changed;
    }
    return result;
  } catch (err) {
    result.failure = `harness: ${errorText(err)}`;
    return result;
  } finally {
    try {
      await backend.synchronize();
    } catch (err) {
      if (!result.failure) result.failure = `stray error at synchronize: ${errorText(err)}`;
    }
    plan?.destroy();
    for (const a of owned) if (!a.destroyed) a.destroy();
  }
}

async function inputsChanged(backend: Backend, c: FuzzCase, arrays: Record<string, DeviceArray>): Promise<string | undefined> {
  for (const i of c.inputs) {
    const a = arrays[i.name]!;
    if (a.destroyed) continue;
    const got = wordsOf(await backend.download(a));
    const d = firstDiff(i.bits, got);
    if (d >= 0) return `input ${i.name} changed at ${d}: ${hex(i.bits[d]!)} -> ${hex(got[d]!)}`;
  }
  return undefined;
}

function checkBadError(bad: BadSpec, error: unknown): string | undefined {
  const text = errorText(error);
  const want = bad.type === 'range' ? SegkitRangeError : bad.type === 'guarantee' ? GuaranteeViolationError : bad.type === 'usage' ? SegkitUsageError : undefined;
  if (want && !(error instanceof want)) return `expected ${want.name}, got ${text}`;
  if (bad.type === 'range-or-guarantee' && !(error instanceof SegkitRangeError) && !(error instanceof GuaranteeViolationError)) return `expected SegkitRangeError or GuaranteeViolationError, got ${text}`;
  if (bad.parameter !== undefined) {
    const e = error as { parameter?: string; segment?: number };
    if (e.parameter !== bad.parameter) return `expected parameter '${bad.parameter}', got '${e.parameter}' (${text})`;
    if (bad.segment !== undefined && e.segment !== bad.segment) return `expected segment ${bad.segment}, got ${e.segment} (${text})`;
    if (!text.includes(bad.parameter)) return `message does not name ${bad.parameter}: ${text}`;
  }
  if (bad.text !== undefined && !text.includes(bad.text)) return `message lacks '${bad.text}': ${text}`;
  if (bad.texts !== undefined && !bad.texts.some((t) => text.includes(t))) return `message names none of ${JSON.stringify(bad.texts)}: ${text}`;
  return undefined;
}

function firstDiff(a: Uint32Array, b: Uint32Array, skip?: (i: number) => boolean): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(skip && skip(i))) return i;
  return -1;
}
function countDiff(a: Uint32Array, b: Uint32Array, skip?: (i: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i] && !(skip && skip(i))) n++;
  return n;
}

const fmtWord = (b: number | undefined, dt: DT) => (b === undefined ? 'none' : `${valueOfBits(b, dt)} (${hex(b)})`);

// ---------------------------------------------------------------------------------------------
// Main loop

interface Tally {
  runs: number;
  ok: number;
  fail: number;
  bad: number;
  refused: number;
  known: number;
}
const tallies = new Map<string, Tally>();
const tally = (algo: string, be: string) => {
  const key = `${algo}/${be}`;
  let t = tallies.get(key);
  if (!t) tallies.set(key, (t = { runs: 0, ok: 0, fail: 0, bad: 0, refused: 0, known: 0 }));
  return t;
};
let failures = 0;
const refusals = new Map<string, number>();
const variantsRun = new Map<string, number>();
let crossFailures = 0;

/**
 * Defects already reduced to a minimal repro and recorded for a fix (the K lines below):
 * their occurrences are counted and printed on one line each, not as failures. --strict counts them
 * as failures.
 */
function knownDefect(c: FuzzCase, message: string): string | undefined {
  if (argv.has('strict')) return undefined;
  const countParam = c.params.numSegments ?? c.params.numBuffers;
  const deviceCount = (countParam as NumSpec | undefined)?.kind === 'uniform-device';
  if (c.bad && deviceCount && /has \d+ values for \d+ segments/.test(c.bad.what)) return 'K1 per-segment host values fewer than a device-only numSegments: accepted (top-k, reduce) or a self-contradictory numSegments message';
  const m = /(numSegments|numBuffers): (\d+) is outside the static bounds \[0, (\d+)\]/.exec(message);
  if (!c.bad && deviceCount && m && Number(m[2]) <= Number(m[3])) return 'K2 numSegments (device-only) within its bounds rejected: more segments than items';
  if (/^weightsOut \[long selection\]/.test(message)) return 'K3 routing weights more than 1 ulp off over long selections';
  return undefined;
}
const known = new Map<string, number>();

/** Prints a failure; returns false for a known defect (printed on one line, not counted). */
function report(iteration: number, c: FuzzCase, backendName: string, message: string): boolean {
  const k = knownDefect(c, message);
  if (k) {
    known.set(k, (known.get(k) ?? 0) + 1);
    console.log(`known ${k.slice(0, 2)}: seed=${seed} iteration=${iteration} ${c.algo} on ${backendName}`);
    return false;
  }
  failures++;
  const descr = JSON.stringify({
    algo: c.algo,
    entry: c.entry,
    requirements: c.requirements,
    tuning: c.tuning,
    guarantees: c.guarantees,
    bad: c.bad,
    ...c.desc,
  });
  console.log(`FAIL seed=${seed} iteration=${iteration} algo=${c.algo} backend=${backendName}: ${message}`);
  console.log(`  case: ${descr}`);
  console.log(`  replay: node --import tsx bench/fuzz.ts --seed=${seed} --only=${iteration} --backend=${backendName.split('-vs-')[0]} --scale=${scale} --verbose`);
  return true;
}

function compareOutputs(c: FuzzCase, res: RunResult): string | undefined {
  const problems: string[] = [];
  for (const o of c.outputs) {
    const got = res.outputs?.[o.name];
    const want = o.expected ?? o.before;
    if (!got) {
      if (c.bad && c.bad.type !== 'trust') continue;
      problems.push(`${o.name}: not downloaded`);
      continue;
    }
    if (got.length !== want.length) {
      problems.push(`${o.name}: length ${got.length}, expected ${want.length}`);
      continue;
    }
    const d = firstDiff(want, got, o.inexact);
    if (d >= 0) problems.push(`${o.name}[${d}]: expected ${fmtWord(want[d], o.dtype)}, got ${fmtWord(got[d], o.dtype)}; ${countDiff(want, got, o.inexact)} elements differ`);
  }
  if (!problems.length && c.check && res.outputs) problems.push(...c.check(res.outputs, res.variant));
  return problems.length ? problems.slice(0, 4).join(' | ') : undefined;
}

async function main(): Promise<void> {
  console.log(`segkit fuzz: seed=${seed} iterations=${start}..${start + iterations - 1} backends=${backendNames.join(',')} scale=${scale} algorithms=${algorithms.join(',')} bad=${badRate}`);
  const entries: BackendEntry[] = [];
  for (const name of backendNames) entries.push({ name, backend: await makeBackend(name) });
  const t0 = Date.now();
  let done = 0;
  let current = '';
  const watchdog = setInterval(() => {
    if (current && Date.now() - currentSince > 300_000) console.log(`WATCHDOG: ${current} running for ${Math.round((Date.now() - currentSince) / 1000)} s`);
  }, 60_000);
  let currentSince = Date.now();
  try {
    const list = argv.has('list') ? argv.get('list')!.split(',').map(Number) : Array.from({ length: iterations }, (_, i) => start + i);
    for (const it of list) {
      if ((Date.now() - t0) / 1000 > timeLimit) {
        console.log(`time limit reached after ${done} iterations`);
        break;
      }
      const r = new Rng(caseSeed(it));
      const algo = r.pick(algorithms);
      const budget = gpuScale
        ? r.weighted<number>([
            [60, 3000],
            [28, 40_000],
            [10, 150_000],
            [2, 300_000],
          ])
        : r.weighted<number>([
            [55, 6000],
            [27, 70_000],
            [15, 300_000],
            [3, 1_200_000],
          ]);
      let c: FuzzCase;
      try {
        c = algo === 'topk' ? genTopK(r, budget, gpuScale) : algo === 'reduce' ? genReduce(r, budget, gpuScale) : algo === 'scan' ? genScan(r, budget, gpuScale) : algo === 'sort' ? genSort(r, budget, gpuScale) : genCopy(r, budget, gpuScale);
        if (r.chance(badRate)) makeBad(r, c);
      } catch (err) {
        console.log(`GENERATOR ERROR seed=${seed} iteration=${it} ${algo}: ${errorText(err)}`);
        if (err instanceof Error) console.log(err.stack);
        continue;
      }
      if (verbose) console.log(`iteration ${it}: ${algo} ${c.entry} ${JSON.stringify({ req: c.requirements, tuning: c.tuning, bad: c.bad, ...c.desc })}`);
      const results: [BackendEntry, RunResult][] = [];
      for (const be of entries) {
        const rr = new Rng(caseSeed(it) ^ 0x5bd1e995);
        current = `iteration ${it} ${algo} on ${be.name}`;
        currentSince = Date.now();
        const t = tally(algo, be.name);
        t.runs++;
        if (c.bad) t.bad++;
        const res = await runOn(be, c, rr);
        const ms = Date.now() - currentSince;
        if (verbose) console.log(`  ${be.name}: ${ms} ms, variant ${res.variant ?? '-'}${res.refused ? `, refused: ${res.refused}` : ''}`);
        if (res.refused) {
          t.refused++;
          const key = `${algo}: ${res.refused.replace(/\d+/g, 'N').slice(0, 160)}`;
          refusals.set(key, (refusals.get(key) ?? 0) + 1);
          continue;
        }
        if (res.variant) {
          const key = `${algo}/${be.name}: ${res.variant}${c.tuning?.variant ? ' (forced)' : ''}`;
          variantsRun.set(key, (variantsRun.get(key) ?? 0) + 1);
        }
        const problem = res.failure ?? compareOutputs(c, res);
        if (problem) {
          if (report(it, c, be.name, `${problem}${res.variant ? ` [variant ${res.variant}]` : ''}`)) t.fail++;
          else t.known++;
        } else t.ok++;
        results.push([be, res]);
      }
      // Across backends, bit for bit where the documentation promises it.
      if (results.length > 1 && c.crossExact !== false && !(c.bad && c.bad.type !== 'trust')) {
        const [firstBe, first] = results[0]!;
        for (const [be, res] of results.slice(1)) {
          if (!first.outputs || !res.outputs) continue;
          if (c.crossExact === undefined && c.outputs.some((o) => o.inexact && !o.name.startsWith('weights'))) continue;
          if (c.algo === 'topk' && c.requirements?.outputOrdering === 'unsorted' && first.variant !== res.variant) continue;
          for (const o of c.outputs) {
            const a = first.outputs[o.name];
            const b = res.outputs[o.name];
            if (!a || !b) continue;
            const d = firstDiff(a, b);
            if (d >= 0) {
              crossFailures++;
              void report(it, c, `${firstBe.name}-vs-${be.name}`, `${o.name}[${d}]: ${firstBe.name} ${fmtWord(a[d], o.dtype)}, ${be.name} ${fmtWord(b[d], o.dtype)}; ${countDiff(a, b)} differ [variants ${first.variant}/${res.variant}]`);
              break;
            }
          }
        }
      }
      done++;
      if (!verbose && done % 25 === 0) console.log(`... ${done} iterations, ${failures} failures, ${Math.round((Date.now() - t0) / 1000)} s`);
    }
  } finally {
    clearInterval(watchdog);
    current = '';
    for (const be of entries) {
      be.temp?.destroy();
      be.backend.destroy();
    }
  }
  console.log(`\nsummary: seed=${seed} iterations ${done} in ${Math.round((Date.now() - t0) / 1000)} s, ${failures} failures (${crossFailures} across backends)`);
  console.log('algorithm/backend   runs    ok  fail  known  bad-input  refused');
  for (const [k, t] of [...tallies.entries()].sort())
    console.log(`${k.padEnd(18)} ${String(t.runs).padStart(5)} ${String(t.ok).padStart(5)} ${String(t.fail).padStart(5)} ${String(t.known).padStart(6)} ${String(t.bad).padStart(10)} ${String(t.refused).padStart(8)}`);
  if (known.size) {
    console.log('\nknown defects met (not counted as failures):');
    for (const [k, v] of known) console.log(`  ${String(v).padStart(4)} x ${k}`);
  }
  console.log('\nplans run by variant (plan API only):');
  for (const [k, v] of [...variantsRun.entries()].sort()) console.log(`  ${String(v).padStart(5)} x ${k}`);
  if (refusals.size) {
    console.log('\nrefused forced variants / policies (a clear refusal, not a failure):');
    for (const [k, v] of [...refusals.entries()].sort()) console.log(`  ${String(v).padStart(4)} x ${k}`);
  }
  process.exitCode = failures > 0 ? 1 : 0;
}

await main();
