import { describe, expect, it } from 'vitest';
import type { DeviceArray } from '../src/backends/backend.js';
import { type CpuBackend, cpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { deviceMemory } from '../src/backends/cpu/memory.js';
import { TempStorageLayoutBuilder } from '../src/dispatch/temp-storage.js';
import { cpuTopKExecutor } from '../src/algorithms/batched-top-k/cpu/executor.js';
import { type KeyType, keyFillBits, selectDirections } from '../src/algorithms/batched-top-k/keys.js';
import { type TopKPolicy, type TopKVariant, radixPasses, reducePerInvocation, rowRadixCandidateRoom } from '../src/algorithms/batched-top-k/policy.js';
import { radixSelectLaunches } from '../src/algorithms/batched-top-k/radix-plan.js';
import type { DeviceCheck, ScalarSource, SegmentSource } from '../src/dispatch/problem.js';
import { type TopKKernelId, type TopKLaunch, type TopKProblem, type TopKRun, reduceChunks, topKKernels } from '../src/algorithms/batched-top-k/problem.js';
import { referenceTopK } from '../src/algorithms/batched-top-k/reference.js';
import { rng } from './helpers.js';

/*
 * The CPU kernels of every top-k variant, driven through hand-built TopKRun objects (the plan is not
 * involved) and compared bit for bit with referenceTopK.
 */

/** The parameter names a top-k plan's status words index (dispatch/plan.ts planValidation). */
const parameterNames = ['segmentSizes', 'numSegments', 'segmentStride', 'totalNumItems', 'k', 'selectDirection'] as const;
/** A device check as the tests write it: with the parameter's name. */
type NamedCheck = Omit<DeviceCheck, 'parameter'> & { parameter: (typeof parameterNames)[number] };

// ------------------------------------------------------------------------------------------------
// Inputs

const f32Bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!;
const f32Specials = [
  0x7fc00000, // NaN
  0xffc00001, // negative NaN with payload
  0x7f800001, // signalling NaN
  0x80000000, // -0
  0x00000000, // +0
  0x7f800000, // +Infinity
  0xff800000, // -Infinity
  0x00000001, // smallest denormal
  0x80000001, // its negative
  0x7f7fffff, // largest finite
  0xff7fffff,
];

type KeyStyle = 'random' | 'ties' | 'specials' | 'sorted' | 'equal';

function makeKeys(keyType: KeyType, n: number, style: KeyStyle, random: () => number): Uint32Array {
  const keys = new Uint32Array(n);
  const pool = Array.from({ length: 5 }, () => (random() * 4294967296) >>> 0);
  for (let i = 0; i < n; i++) {
    let bits: number;
    if (style === 'equal') bits = pool[0]!;
    else if (style === 'ties') bits = pool[Math.floor(random() * pool.length)]!;
    else if (style === 'sorted') bits = keyType === 'f32' ? f32Bits(i - n / 2) : (i * 7919) >>> 0;
    else if (keyType === 'f32') {
      const r = random();
      if (style === 'specials' && r < 0.3) bits = f32Specials[Math.floor(random() * f32Specials.length)]!;
      else if (r < 0.5) bits = f32Bits((random() - 0.5) * 1000);
      else if (r < 0.7) bits = f32Bits(Math.round((random() - 0.5) * 8)); // ties among small integers
      else bits = (random() * 4294967296) >>> 0; // any bits, NaNs included
    } else {
      const r = random();
      if (style === 'specials' && r < 0.3) bits = [0, 0xffffffff, 0x80000000, 0x7fffffff, 1][Math.floor(random() * 5)]!;
      else if (r < 0.4) bits = Math.floor(random() * 16) >>> 0;
      else bits = (random() * 4294967296) >>> 0;
    }
    keys[i] = bits;
  }
  return keys;
}

// ------------------------------------------------------------------------------------------------
// Hand-built runs

type Kind = 'constant' | 'uniform' | 'device' | 'perSegment';

interface Case {
  keyType: KeyType;
  keys: Uint32Array;
  /** One size per segment (maxSegments of them); scalar kinds use sizes[0] for every segment. */
  sizes: number[];
  sizeKind: Kind;
  stride?: { value: number; kind: 'constant' | 'uniform' | 'device' };
  k: number[];
  kKind: Kind;
  kMax: number;
  /** Option indices, one per segment; scalar kinds use dirs[0]. */
  dirs: number[];
  dirKind: Kind;
  directionOfOption: number[];
  numSegments: number;
  numSegmentsKind: 'constant' | 'uniform' | 'device';
  maxSegments: number;
  valueMode: 'none' | 'payload' | 'indices';
  valueType: 'f32' | 'i32' | 'u32';
  payload?: Uint32Array;
  sorted: boolean;
  /** The requirements' relaxations (TopKProblem); default false. */
  tiesAsFound?: boolean;
  orderAsFound?: boolean;
  /** Radix-select's filter pass 0 may pick among the sampled candidates (TopKProblem); default true. */
  radixPick?: boolean;
  variant: TopKVariant | 'single-tile+radix' | 'single-tile+row';
  policy: TopKPolicy;
  /** Device runtime bounds of the sizes (for the single-tile/radix device branch). */
  deviceBounds?: [number, number];
  /** Validate device-only values (status slot + checks). */
  checks?: (arrays: { sizes?: DeviceArray; k?: DeviceArray; dirs?: DeviceArray; numSegments?: DeviceArray }) => NamedCheck[];
  totalNumItems?: { min: number; max: number };
}

const smallPolicy: TopKPolicy = {
  workgroupSize: 4,
  tileItems: 64,
  reduceMaxK: 8,
  reduceChunkItems: 16,
  reduceSmallSegmentItems: 1,
  reduceWorkgroups: 1024,
  reduceChunkWorkgroups: 1024,
  reduceLastChunkMerges: 'never',
  reduceLongListRadixItems: 2 ** 52,
  radixTileItems: 16,
  radixBits: 8,
  radixWideDigitItems: 65536,
  radixFilterWorkgroups: 5,
  radixWideWorkgroupSize: 4,
  radixWideWorkgroupMinK: 2048,
  // Fewer pass-0 workgroups than tiles: each takes several tiles of its segment.
  radixHistogramWorkgroups: 3,
  radixFoldFallbackMaxItems: 1 << 20,
  radixInitWorkgroups: 8,
  rowRadixMaxItems: 65536,
  rowRadixPastTileMaxItems: 65536,
  rowRadixMaxTotalItems: 16777216,
  rowRadixWorkgroupSize: 4,
  rowRadixWideItems: 16384,
  rowRadixWideMinK: 1024,
  rowRadixFewRows: 128,
  rowRadixFewRowsMaxItems: 65536,
  radixCandidateSelect: true,
  radixCandidateSelectSorted: false,
  radixCompactPastTile: false,
  radixFinalizeInFilter: 'auto',
  radixPick: 'always',
  radixPickSpread: 8,
  rankSortMinItems: 2048,
  selectionSortVariant: 'auto',
};

function uploadU32(cpu: CpuBackend, values: ArrayLike<number>): DeviceArray {
  return cpu.upload(Uint32Array.from(values));
}

function scalarSource(cpu: CpuBackend, value: number, kind: 'constant' | 'uniform' | 'device'): ScalarSource {
  return kind === 'device' ? { kind: 'device', array: uploadU32(cpu, [value]) } : { kind, value };
}

function segmentSource(cpu: CpuBackend, values: number[], kind: Kind): { source: SegmentSource; array?: DeviceArray } {
  if (kind === 'perSegment') {
    const array = uploadU32(cpu, values);
    return { source: { kind: 'perSegment', array }, array };
  }
  const source = scalarSource(cpu, values[0] ?? 0, kind);
  return { source, ...(source.kind === 'device' ? { array: source.array } : {}) };
}

const launch = (kernel: TopKKernelId, variant: TopKVariant | undefined, grid: number, pass = 0): TopKLaunch => ({
  kernel,
  variant,
  name: `topk/${variant ?? 'prologue'}/${kernel}`,
  grid,
  pass,
  purpose: 'test',
});

interface Built {
  cpu: CpuBackend;
  run: TopKRun;
  /** Segment i: start, size, k, direction (as the reference reads them). */
  starts: number[];
  sizes: number[];
  ks: number[];
  directions: ('max' | 'min')[];
  active: number;
}

const poison = 0xa5a5a5a5;

function build(c: Case): Built {
  const cpu = cpuBackend();
  const maxSegments = c.maxSegments;
  const perSegment = (values: number[], kind: Kind) => Array.from({ length: maxSegments }, (_, i) => (kind === 'perSegment' ? values[i]! : values[0]!));
  const sizeValues = perSegment(c.sizes, c.sizeKind);
  const kValues = perSegment(c.k, c.kKind);
  const dirValues = perSegment(c.dirs, c.dirKind);
  const sizes = segmentSource(cpu, sizeValues, c.sizeKind);
  const k = segmentSource(cpu, kValues, c.kKind);
  const dirs = segmentSource(cpu, dirValues, c.dirKind);
  const numSegments = scalarSource(cpu, c.numSegments, c.numSegmentsKind);
  const stride = c.stride === undefined ? undefined : scalarSource(cpu, c.stride.value, c.stride.kind);
  const maxSegmentSize = Math.max(0, ...sizeValues);
  const deviceBounds = c.deviceBounds === undefined ? undefined : uploadU32(cpu, c.deviceBounds);
  const problem: TopKProblem = {
    weights: undefined,
    selectionSort: undefined,
    keyType: c.keyType,
    valueMode: c.valueMode,
    valueType: c.valueType,
    kMax: c.kMax,
    maxSegments,
    maxSegmentSize,
    itemsLength: c.keys.length,
    numSegments,
    segmentSizes: sizes.source,
    layout: stride === undefined ? { kind: 'packed' } : { kind: 'strided', stride },
    sources: { k: k.source, selectDirection: dirs.source },
    directionOfOption: c.directionOfOption,
    sorted: c.sorted,
    tiesAsFound: c.tiesAsFound ?? false,
    orderAsFound: c.orderAsFound ?? false,
    radixPick: c.radixPick ?? true,
    segmentSizeDeviceBounds: deviceBounds,
  };
  const policy = c.policy;
  const chunks = reduceChunks(maxSegmentSize, policy);
  const perInvocation = reducePerInvocation(policy, maxSegmentSize);
  const needsOffsets = stride === undefined && c.sizeKind === 'perSegment';
  const useRadix = c.variant === 'radix-select' || c.variant === 'single-tile+radix';
  const useRow = c.variant === 'row-radix' || c.variant === 'single-tile+row';
  const useTile = c.variant === 'single-tile' || c.variant === 'single-tile+radix' || c.variant === 'single-tile+row';
  const layout = new TempStorageLayoutBuilder()
    .add('offsets', needsOffsets ? (maxSegments + 1) * 4 : 0)
    .add('partials', c.variant === 'reduce' && chunks > 1 && !perInvocation ? maxSegments * chunks * c.kMax * 8 : 0);
  if (useRow) layout.add('rowCandidates', maxSegmentSize > rowRadixCandidateRoom(policy) ? c.keys.length * 4 : 4);
  const radixLaunches = useRadix
    ? radixSelectLaunches(layout, {
        policy,
        spec: 'test',
        maxSegments,
        maxSegmentSize,
        kMax: c.kMax,
        candidateWords: c.keys.length,
        relaxed: { tiesAsFound: c.tiesAsFound ?? false, orderAsFound: c.orderAsFound ?? false },
      })
    : [];
  const status = c.checks === undefined ? undefined : cpu.alloc('u32', 8);
  const launches: TopKLaunch[] = [];
  if (status !== undefined) launches.push(launch('validate', undefined, 1));
  if (needsOffsets) launches.push(launch('segment-offsets', undefined, 1));
  if (useTile) launches.push(launch('single-tile', 'single-tile', maxSegments));
  if (c.variant === 'reduce') {
    launches.push(launch('reduce', 'reduce', topKKernels.reduce.grid({ maxSegments, maxSegmentSize }, policy)));
    if (chunks > 1 && !perInvocation) launches.push(launch('reduce-merge', 'reduce', maxSegments));
  }
  launches.push(...radixLaunches);
  if (useRow) launches.push(launch('row-radix', 'row-radix', maxSegments));
  const builtLayout = layout.build();
  const temp = builtLayout.totalBytes > 0 ? cpu.alloc('u8', builtLayout.totalBytes) : undefined;
  const keyArray = c.keyType === 'f32' ? cpu.upload(new Float32Array(c.keys.buffer.slice(0))) : c.keyType === 'i32' ? cpu.upload(new Int32Array(c.keys.buffer.slice(0))) : cpu.upload(c.keys.slice());
  const outLength = maxSegments * c.kMax;
  const keysOut = cpu.upload(new Uint32Array(outLength).fill(poison));
  const valuesIn = c.valueMode === 'payload' ? cpu.upload(c.payload!.slice()) : undefined;
  const valuesOut = c.valueMode === 'none' ? undefined : cpu.upload(new Uint32Array(outLength).fill(poison));
  const run: TopKRun = {
    backend: cpu,
    problem,
    policy,
    launches,
    layout: builtLayout,
    temp,
    status,
    algorithm: 'topk',
    checks: (c.checks?.({ ...(sizes.array ? { sizes: sizes.array } : {}), ...(k.array ? { k: k.array } : {}), ...(dirs.array ? { dirs: dirs.array } : {}), ...(numSegments.kind === 'device' ? { numSegments: numSegments.array } : {}) }) ?? []).map(
      (check) => ({ ...check, parameter: parameterNames.indexOf(check.parameter) }),
    ),
    parameterNames,
    totalNumItems: c.totalNumItems,
    arrays: { keysIn: keyArray, keysOut, valuesIn, valuesOut, weightsOut: undefined },
  };
  const active = Math.min(c.numSegments, maxSegments);
  const starts: number[] = [];
  let offset = 0;
  for (let i = 0; i < maxSegments; i++) {
    starts.push(stride !== undefined ? i * c.stride!.value : offset);
    offset += sizeValues[i]!;
  }
  const optionDir = (option: number) => selectDirections[c.directionOfOption[Math.min(option, c.directionOfOption.length - 1)]!]!;
  return {
    cpu,
    run,
    starts: starts.slice(0, active),
    sizes: sizeValues.slice(0, active),
    ks: kValues.slice(0, active).map((v) => Math.min(v, c.kMax)),
    directions: dirValues.slice(0, active).map(optionDir),
    active,
  };
}

async function execute(c: Case): Promise<{ built: Built; keys: Uint32Array; values: Uint32Array | undefined; status: Uint32Array | undefined }> {
  const built = build(c);
  cpuTopKExecutor.execute(built.run);
  const cpu = built.cpu;
  const keys = new Uint32Array((await cpu.download(built.run.arrays.keysOut)).buffer);
  const values = built.run.arrays.valuesOut === undefined ? undefined : new Uint32Array((await cpu.download(built.run.arrays.valuesOut)).buffer);
  const status = built.run.status === undefined ? undefined : await cpu.download(built.run.status);
  return { built, keys, values, status };
}

/** Runs a case and checks every output word against the reference (and the untouched tail). */
async function check(c: Case): Promise<void> {
  const { built, keys, values } = await execute(c);
  const expected = referenceTopK({
    keyType: c.keyType,
    keys: c.keys,
    ...(c.valueMode === 'payload' ? { values: c.payload! } : {}),
    valueType: c.valueType,
    segmentStarts: built.starts,
    segmentSizes: built.sizes,
    k: built.ks,
    directions: built.directions,
    kMax: c.kMax,
    withValues: c.valueMode !== 'none',
  });
  const written = built.active * c.kMax;
  const describeCase = `${c.variant} ${c.keyType} sizes=${JSON.stringify(built.sizes)} k=${JSON.stringify(built.ks)} dirs=${JSON.stringify(built.directions)} kMax=${c.kMax} sorted=${c.sorted} values=${c.valueMode}/${c.valueType}`;
  if (c.sorted) {
    expect(Array.from(keys.subarray(0, written)), describeCase).toEqual(Array.from(expected.keys));
    if (values !== undefined) expect(Array.from(values.subarray(0, written)), describeCase).toEqual(Array.from(expected.values));
  } else {
    // Any order within a segment: compare the (key, value) pairs as multisets.
    for (let s = 0; s < built.active; s++) {
      const pairs = (keysArr: Uint32Array, valuesArr: Uint32Array | undefined) =>
        Array.from({ length: c.kMax }, (_, j) => `${keysArr[s * c.kMax + j]}:${valuesArr?.[s * c.kMax + j] ?? ''}`).sort();
      expect(pairs(keys, values), `${describeCase} segment ${s}`).toEqual(pairs(expected.keys, c.valueMode === 'none' ? undefined : expected.values));
    }
  }
  expect(keys.subarray(written).every((v) => v === poison), 'keys past numSegments * kMax untouched').toBe(true);
  if (values !== undefined) expect(values.subarray(written).every((v) => v === poison), 'values past numSegments * kMax untouched').toBe(true);
}

// ------------------------------------------------------------------------------------------------
// Random cases

interface RandomOptions {
  variant: Case['variant'];
  policy?: TopKPolicy;
  maxSize: number;
  kMax: number;
}

function randomCase(seed: number, options: RandomOptions): Case {
  const random = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const policy = options.policy ?? smallPolicy;
  const keyType = pick<KeyType>(['f32', 'f32', 'i32', 'u32']);
  const maxSegments = pick([0, 1, 2, 3, 5, 9]);
  const numSegmentsKind = pick<'constant' | 'uniform' | 'device'>(['constant', 'uniform', 'device']);
  const numSegments = numSegmentsKind === 'device' && random() < 0.5 ? Math.floor(random() * (maxSegments + 1)) : maxSegments;
  const sizeKind = pick<Kind>(['constant', 'uniform', 'device', 'perSegment', 'perSegment']);
  const boundary = pick([policy.tileItems, policy.reduceChunkItems, policy.radixTileItems, options.maxSize]);
  const sizeOf = () => {
    const r = random();
    if (r < 0.15) return 0;
    if (r < 0.5) return Math.max(0, Math.min(options.maxSize, boundary + Math.floor(random() * 5) - 2));
    return Math.floor(random() * (options.maxSize + 1));
  };
  const sizes = Array.from({ length: maxSegments }, sizeOf);
  const sizeValues = sizeKind === 'perSegment' ? sizes : sizes.map(() => sizes[0] ?? 0);
  const strided = random() < 0.35;
  const stride = strided ? Math.max(0, ...sizeValues) + Math.floor(random() * 3) : undefined;
  const keysLength = strided ? stride! * maxSegments : sizeValues.reduce((a, b) => a + b, 0);
  const kMax = options.kMax;
  const kKind = pick<Kind>(['constant', 'uniform', 'device', 'perSegment']);
  const k = Array.from({ length: maxSegments }, () => 1 + Math.floor(random() * kMax));
  if (kKind !== 'perSegment' && random() < 0.3 && k.length > 0) k[0] = kMax;
  const dirKind = pick<Kind>(['constant', 'uniform', 'device', 'perSegment']);
  const directionOfOption = pick([[0], [1], [0, 1], [1, 0]]);
  const dirs = Array.from({ length: maxSegments }, () => Math.floor(random() * directionOfOption.length));
  const valueMode = pick<Case['valueMode']>(['none', 'payload', 'indices', 'indices']);
  const valueType = pick<Case['valueType']>(['f32', 'i32', 'u32']);
  const style = pick<KeyStyle>(['random', 'random', 'ties', 'specials', 'sorted', 'equal']);
  const keys = makeKeys(keyType, keysLength, style, random);
  const payload = Uint32Array.from({ length: keysLength }, () => (random() * 4294967296) >>> 0);
  return {
    keyType,
    keys,
    sizes,
    sizeKind,
    ...(strided ? { stride: { value: stride!, kind: pick<'constant' | 'uniform' | 'device'>(['constant', 'uniform', 'device']) } } : {}),
    k,
    kKind,
    kMax,
    dirs,
    dirKind,
    directionOfOption,
    numSegments,
    numSegmentsKind,
    maxSegments,
    valueMode,
    valueType,
    payload,
    sorted: random() < 0.8,
    variant: options.variant,
    policy,
  };
}

function baseCase(overrides: Partial<Case> & Pick<Case, 'keys' | 'sizes' | 'k' | 'kMax' | 'variant'>): Case {
  const segments = overrides.sizes.length;
  return {
    keyType: 'f32',
    sizeKind: 'perSegment',
    kKind: overrides.k.length === segments && segments > 1 ? 'perSegment' : 'constant',
    dirs: Array.from({ length: segments }, () => 0),
    dirKind: 'constant',
    directionOfOption: [0, 1],
    numSegments: segments,
    numSegmentsKind: 'constant',
    maxSegments: segments,
    valueMode: 'indices',
    valueType: 'i32',
    sorted: true,
    policy: smallPolicy,
    ...overrides,
  };
}

// ------------------------------------------------------------------------------------------------

describe('CPU top-k kernels agree with the reference bit for bit', () => {
  const variants: { variant: Case['variant']; maxSize: number; kMax: number[]; policy?: TopKPolicy }[] = [
    { variant: 'single-tile', maxSize: smallPolicy.tileItems, kMax: [1, 3, 8, 17, 64, 70] },
    { variant: 'reduce', maxSize: 80, kMax: [1, 2, 5, 8] },
    { variant: 'reduce', maxSize: 300, kMax: [3, 4, 8], policy: { ...smallPolicy, reduceChunkItems: 128 } },
    { variant: 'radix-select', maxSize: 90, kMax: [1, 4, 9, 33, 100] },
    { variant: 'reduce', maxSize: 24, kMax: [1, 2, 8], policy: { ...smallPolicy, reduceSmallSegmentItems: 24 } },
    { variant: 'radix-select', maxSize: 50, kMax: [2, 7, 40], policy: { ...smallPolicy, radixBits: 4 } },
    { variant: 'radix-select', maxSize: 40, kMax: [3, 20], policy: { ...smallPolicy, radixBits: 11, radixFilterWorkgroups: 1 } },
    { variant: 'radix-select', maxSize: 70, kMax: [5, 30], policy: { ...smallPolicy, radixBits: 7, radixFilterWorkgroups: 100 } },
    // Row-radix: rows past its candidate room (2 tiles: 128 keys) keep the bucket in temporary storage.
    { variant: 'row-radix', maxSize: 300, kMax: [1, 4, 9, 33, 100, 300] },
    { variant: 'row-radix', maxSize: 100, kMax: [2, 7, 40], policy: { ...smallPolicy, radixBits: 4 } },
    { variant: 'row-radix', maxSize: 200, kMax: [3, 20], policy: { ...smallPolicy, radixBits: 11 } },
  ];
  for (const { variant, maxSize, kMax, policy } of variants) {
    it(`${variant}${policy ? ` (${variant === 'reduce' ? `reduceChunkItems ${policy.reduceChunkItems}, reduceSmallSegmentItems ${policy.reduceSmallSegmentItems}` : `radixBits ${policy.radixBits}, radixFilterWorkgroups ${policy.radixFilterWorkgroups}`})` : ''}: random and adversarial cases`, async () => {
      for (let seed = 1; seed <= Number(process.env.TOPK_SEEDS ?? 300); seed++) {
        const seeds = policy ? 100 : 300;
        if (seed > seeds && process.env.TOPK_SEEDS === undefined) break;
        await check(randomCase(seed * 7919 + variant.length + (policy?.radixBits ?? 0) + (policy?.reduceChunkItems ?? 0) + (policy?.reduceSmallSegmentItems ?? 0), { variant, maxSize, kMax: kMax[seed % kMax.length]!, ...(policy ? { policy } : {}) }));
      }
    });
  }

  it('single-tile and radix-select with the device-side branch on the size bounds', async () => {
    for (let seed = 1; seed <= 120; seed++) {
      const c = randomCase(seed * 104729, { variant: 'single-tile+radix', maxSize: 100, kMax: [3, 12, 40][seed % 3]! });
      const sizes = c.sizeKind === 'perSegment' ? c.sizes : c.sizes.map(() => c.sizes[0] ?? 0);
      const max = Math.max(0, ...sizes);
      await check({ ...c, deviceBounds: [0, max] });
    }
  });

  it('single-tile and row-radix with the device-side branch on the size bounds', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const c = randomCase(seed * 15485863, { variant: 'single-tile+row', maxSize: 200, kMax: [3, 12, 40][seed % 3]! });
      const sizes = c.sizeKind === 'perSegment' ? c.sizes : c.sizes.map(() => c.sizes[0] ?? 0);
      await check({ ...c, deviceBounds: [0, Math.max(0, ...sizes)] });
    }
  });

  it('the device-side branch: single-tile does the work when the device max fits the tile, radix-select otherwise', async () => {
    const random = rng(5);
    const keys = makeKeys('f32', 3 * 40, 'random', random);
    const fits = baseCase({ keys, sizes: [40, 40, 40], k: [10], kMax: 10, variant: 'single-tile+radix', deviceBounds: [40, 40] });
    await check(fits);
    // Make the radix kernels' trace visible: with the max above the tile, they run, and single-tile exits.
    const big = makeKeys('f32', 2 * 100, 'random', random);
    await check(baseCase({ keys: big, sizes: [100, 100], k: [7], kMax: 12, variant: 'single-tile+radix', deviceBounds: [0, 100] }));
    const { built } = await execute(fits);
    const temp = await built.cpu.download(built.run.temp!);
    const state = new Uint32Array(temp.buffer, built.run.layout.slot('segmentState').offset, 8);
    expect(Array.from(state), 'radix-init exited: its state was never written').toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('reduce with several chunks per segment merges through partials', async () => {
    const random = rng(11);
    for (const keyType of ['f32', 'i32', 'u32'] as const) {
      const sizes = [0, 1, 15, 16, 17, 33, 100, 47];
      const keys = makeKeys(keyType, sizes.reduce((a, b) => a + b, 0), 'ties', random);
      for (const kMax of [1, 3, 8]) {
        await check(baseCase({ keyType, keys, sizes, k: sizes.map((_, i) => 1 + (i % kMax)), kMax, variant: 'reduce', dirs: sizes.map((_, i) => i & 1), dirKind: 'perSegment' }));
      }
    }
  });

  it('NaN, -0/+0 and infinities rank as the SPEC says, in every variant', async () => {
    const keys = Uint32Array.from([
      f32Bits(1), 0x7fc00000, f32Bits(-0), f32Bits(0), f32Bits(Infinity), f32Bits(-Infinity), 0xffc00001, f32Bits(-0), f32Bits(2), f32Bits(0),
    ]);
    for (const variant of ['single-tile', 'reduce', 'radix-select'] as const) {
      for (const dir of [0, 1]) {
        for (const k of [1, 3, 4, 8]) {
          await check(baseCase({ keys, sizes: [10], k: [k], kMax: 8, variant, dirs: [dir], directionOfOption: [0, 1] }));
        }
      }
    }
    // With 'max': NaNs first (smaller index first), then +Infinity, 2, 1, then the zeros by index.
    const { keys: out } = await execute(baseCase({ keys, sizes: [10], k: [8], kMax: 8, variant: 'radix-select' }));
    expect(Array.from(out)).toEqual([0x7fc00000, 0xffc00001, f32Bits(Infinity), f32Bits(2), f32Bits(1), 0x80000000, 0, 0x80000000]);
  });

  it('reduce on long segments: ties of -0 with +0 and of NaNs with NaNs keep index order (the rotated pre-test)', async () => {
    const random = rng(42);
    const pool = [0x80000000, 0, 0x7fc00000, 0xffc00001, 0x7f800001, 0xffffffff, f32Bits(1), f32Bits(-1), 0x7f800000, 0xff800000];
    for (const weights of [[0, 1], [2, 3], [0, 1, 2, 3, 4, 5], [0, 1, 6, 7]]) {
      const sizes = [100, 64, 37, 128];
      const keys = Uint32Array.from({ length: 329 }, () => pool[weights[Math.floor(random() * weights.length)]!]!);
      for (const dir of [0, 1]) {
        for (const kMax of [3, 5, 8]) {
          await check(baseCase({ keys, sizes, k: [kMax], kMax, variant: 'reduce', dirs: [dir], policy: { ...smallPolicy, reduceChunkItems: 128 } }));
        }
      }
    }
  });

  it('k > size, empty segments and numSegments = 0 fill or leave the outputs as specified', async () => {
    const keys = Uint32Array.from([5, 3, 9].map(f32Bits));
    for (const variant of ['single-tile', 'reduce', 'radix-select'] as const) {
      const { keys: out, values } = await execute(baseCase({ keys, sizes: [3, 0], k: [5], kMax: 5, variant, valueType: 'f32' }));
      const ninf = keyFillBits('f32', 'max');
      expect(Array.from(out)).toEqual([f32Bits(9), f32Bits(5), f32Bits(3), ninf, ninf, ninf, ninf, ninf, ninf, ninf]);
      expect(Array.from(values!)).toEqual([f32Bits(2), f32Bits(0), f32Bits(1), ...Array.from({ length: 7 }, () => f32Bits(-1))]);
      const none = await execute(baseCase({ keys, sizes: [3, 0], k: [5], kMax: 5, variant, numSegments: 0, numSegmentsKind: 'device' }));
      expect(none.keys.every((v) => v === poison)).toBe(true);
      expect(none.values!.every((v) => v === poison)).toBe(true);
    }
  });

  it('every key equal: ties go to the smallest indices (long tie runs through all radix passes)', async () => {
    const random = rng(3);
    for (const keyType of ['f32', 'i32', 'u32'] as const) {
      const keys = makeKeys(keyType, 200, 'equal', random);
      for (const variant of ['radix-select', 'row-radix', 'single-tile'] as const) {
        const sizes = variant === 'single-tile' ? [64, 64, 64, 8] : [100, 37, 63];
        await check(baseCase({ keyType, keys, sizes, k: [50], kMax: 50, variant, valueMode: 'payload', valueType: 'u32', payload: Uint32Array.from({ length: 200 }, (_, i) => i * 3) }));
      }
    }
  });

  it('runs with the default-sized policy on larger segments (several radix tiles, long sorts)', async () => {
    const policy: TopKPolicy = {
      workgroupSize: 256,
      tileItems: 2048,
      reduceMaxK: 8,
      reduceChunkItems: 4096,
      reduceSmallSegmentItems: 32,
      reduceWorkgroups: 1024,
      reduceChunkWorkgroups: 1024,
      reduceLastChunkMerges: 'never',
      reduceLongListRadixItems: 2 ** 52,
      radixTileItems: 4096,
      radixBits: 8,
      radixWideDigitItems: 65536,
      radixFilterWorkgroups: 4,
      radixWideWorkgroupSize: 256,
      radixWideWorkgroupMinK: 2048,
      radixHistogramWorkgroups: 16,
      // A launch of its own for a misleading sampled threshold (smallPolicy has pass 0 take it).
      radixFoldFallbackMaxItems: 1,
      radixInitWorkgroups: 8,
      rowRadixMaxItems: 65536,
      rowRadixPastTileMaxItems: 65536,
      rowRadixMaxTotalItems: 16777216,
      rowRadixWorkgroupSize: 1024,
      rowRadixWideItems: 16384,
      rowRadixWideMinK: 1024,
      rowRadixFewRows: 128,
      rowRadixFewRowsMaxItems: 65536,
      radixCandidateSelect: true,
      radixCandidateSelectSorted: false,
      radixCompactPastTile: false,
  radixFinalizeInFilter: 'auto',
      radixPick: 'always',
      radixPickSpread: 8,
      rankSortMinItems: 2048,
      selectionSortVariant: 'auto',
    };
    const random = rng(99);
    const sizes = [10000, 2048, 1, 9000];
    const keys = makeKeys('f32', sizes.reduce((a, b) => a + b, 0), 'random', random);
    await check(baseCase({ keys, sizes, k: [300, 2048, 5, 1000], kMax: 2048, variant: 'radix-select', policy }));
    await check(baseCase({ keys, sizes, k: [300, 2048, 5, 1000], kMax: 2048, variant: 'radix-select', policy: { ...policy, radixBits: 11 } }));
    // Sampled thresholds (segments of >= 1024 keys, k <= size / 4), one or several filter workgroups.
    await check(baseCase({ keys, sizes, k: [30, 200, 1, 7], kMax: 200, variant: 'radix-select', policy: { ...policy, radixBits: 11 } }));
    await check(baseCase({ keys, sizes, k: [30, 200, 1, 7], kMax: 200, variant: 'radix-select', policy: { ...policy, radixFilterWorkgroups: 64 } }));
    // Without filter pass 0's pick (problem.radixPick false), the digit passes take the sampled candidates: the same outputs, sorted and not.
    for (const sorted of [true, false]) {
      await check(baseCase({ keys, sizes, k: [30, 200, 1, 7], kMax: 200, variant: 'radix-select', policy, sorted, radixPick: false }));
      await check(baseCase({ keys, sizes, k: [30, 200, 1, 7], kMax: 200, variant: 'radix-select', policy: { ...policy, radixFilterWorkgroups: 64 }, sorted, radixPick: false }));
    }
    await check(baseCase({ keys, sizes, k: [8, 1, 5, 3], kMax: 8, variant: 'reduce', policy }));
    const tileKeys = makeKeys('i32', 4 * 2048, 'ties', random);
    await check(baseCase({ keyType: 'i32', keys: tileKeys, sizes: [2048, 2047, 2048, 2048], k: [1000, 2048, 64, 1], kMax: 2048, variant: 'single-tile', policy }));
  });

  it('counts each launch under its name', async () => {
    const keys = makeKeys('u32', 40, 'random', rng(1));
    const { built } = await execute(baseCase({ keyType: 'u32', keys, sizes: [20, 20], k: [4], kMax: 4, variant: 'radix-select' }));
    const stats = built.cpu.stats();
    // 8-bit digits: four digits, a filter launch for each but the last, which finalize takes: in the
    // last filter's launch, where the pick is built (radixFinalizeInFilter 'auto').
    expect(stats.launchesByKernel['topk/radix-select/filter[test]']).toBe(2);
    expect(stats.launchesByKernel['topk/radix-select/filter-finalize[test]']).toBe(1);
    expect(stats.launchesByKernel['topk/radix-select/finalize[test]']).toBeUndefined();
    expect(stats.launchesByKernel['topk/radix-select/histogram[test]']).toBe(1);
    // No launch of its own for a sampled threshold that misleads (radixFoldFallbackMaxItems): pass 0's last workgroup takes it.
    expect(Object.keys(stats.launchesByKernel).filter((name) => name.includes('fallback'))).toEqual([]);
    expect(stats.launchesByKernel['topk/prologue/segment-offsets']).toBe(1);
    expect(stats.downloads).toBe(2); // the test's own downloads only: kernels read device values directly
  });
});

describe("radix-select finalize and the requirements' relaxations", () => {
  /*
   * Worker threads append a segment's tied candidates and its selection in whatever order their tiles
   * ran. Finalize alone, on a state left that way: the last digit's candidates [5, 3, 1, 4] (all keys
   * equal, so all tied), or a selection [2, 0] already complete.
   */
  async function finalizeOn(state: { selected: number[]; candidates: number[] }, relaxed: { sorted: boolean; tiesAsFound: boolean; orderAsFound: boolean }): Promise<number[]> {
    const keys = new Uint32Array(6).fill(f32Bits(1));
    // Finalize's own launch (not folded into the last filter's: radixFinalizeInFilter).
    const built = build(baseCase({ keys, sizes: [6], k: [2], kMax: 2, variant: 'radix-select', ...relaxed, policy: { ...smallPolicy, radixFinalizeInFilter: 'never' } }));
    const { run, cpu } = built;
    const temp = deviceMemory(run.temp!).i32;
    const word = (slot: string) => run.layout.slot(slot).offset >>> 2;
    // 8-bit digits: four passes; the last (3) reads candidate buffer 3 & 1 = candidates1.
    const last = radixPasses(run.policy.radixBits) - 1;
    temp.set(state.selected, word('selected'));
    temp.set(state.candidates, word(`candidates${last & 1}`));
    // State words (problem.ts): [8 + p] selected by digit p, [16 + p] candidates kept by digit p.
    const stateAt = word('segmentState');
    temp[stateAt + 8] = state.selected.length;
    temp[stateAt + 16 + last - 1] = state.candidates.length;
    // The last digit's histogram: every candidate in the bin of 1.0's ordered key.
    const lastDigit = ((f32Bits(1) | 0x80000000) >>> 0) & 255;
    temp[word('histogram') + last * 256 + lastDigit] = state.candidates.length;
    cpuTopKExecutor.execute({ ...run, launches: run.launches.filter((l) => l.kernel === 'radix-finalize') });
    return Array.from(await cpu.download(run.arrays.valuesOut!));
  }

  it('by default takes the smallest tied indices and writes a fixed order', async () => {
    const ties = { selected: [], candidates: [5, 3, 1, 4] };
    expect(await finalizeOn(ties, { sorted: true, tiesAsFound: false, orderAsFound: false })).toEqual([1, 3]);
    expect(await finalizeOn(ties, { sorted: false, tiesAsFound: false, orderAsFound: false })).toEqual([1, 3]);
    expect(await finalizeOn({ selected: [2, 0], candidates: [] }, { sorted: false, tiesAsFound: false, orderAsFound: false })).toEqual([0, 2]);
  });

  it("tiesAsFound ('any', 'not-guaranteed') takes the first tied candidates appended", async () => {
    const ties = { selected: [], candidates: [5, 3, 1, 4] };
    expect(await finalizeOn(ties, { sorted: true, tiesAsFound: true, orderAsFound: false })).toEqual([3, 5]);
    expect(await finalizeOn(ties, { sorted: false, tiesAsFound: true, orderAsFound: true })).toEqual([5, 3]);
  });

  it("orderAsFound ('unsorted', 'not-guaranteed') keeps the selection as appended", async () => {
    expect(await finalizeOn({ selected: [2, 0], candidates: [] }, { sorted: false, tiesAsFound: false, orderAsFound: true })).toEqual([2, 0]);
  });
});

describe('validate kernel', () => {
  const params = (name: (typeof parameterNames)[number]) => parameterNames.indexOf(name);

  async function statusOf(c: Case): Promise<{ status: number[]; untouched: boolean }> {
    const { keys, values, status } = await execute(c);
    return { status: Array.from(status!), untouched: keys.every((v) => v === poison) && (values === undefined || values.every((v) => v === poison)) };
  }

  const keys = makeKeys('f32', 30, 'random', rng(8));

  it('all zeros when every device value holds, and the results are written', async () => {
    const c = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2, 3, 4],
      kMax: 4,
      variant: 'radix-select',
      checks: ({ k }) => [{ parameter: 'k', kind: 'per-segment', array: k!, bounds: { min: 1, max: 4 }, deviceBounds: undefined }],
    });
    expect((await statusOf(c)).status).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    await check(c);
  });

  it('the lowest failing segment wins; outputs untouched', async () => {
    const c = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2, 9, 0],
      kMax: 4,
      variant: 'reduce',
      checks: ({ k }) => [{ parameter: 'k', kind: 'per-segment', array: k!, bounds: { min: 1, max: 4 }, deviceBounds: undefined }],
    });
    expect(await statusOf(c)).toEqual({ status: [1, params('k'), 1, 9, 1, 4, 0, 0], untouched: true });
  });

  it('device runtime bounds: values outside them, and bad bounds themselves', async () => {
    const outsideDevice = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2, 3, 4],
      kMax: 4,
      variant: 'single-tile',
      checks: ({ k }) => [{ parameter: 'k', kind: 'per-segment', array: k!, bounds: { min: 1, max: 4 }, deviceBounds: k!.backend.upload(new Uint32Array([2, 3])) }],
    });
    expect(await statusOf(outsideDevice)).toEqual({ status: [2, params('k'), 2, 4, 2, 3, 0, 0], untouched: true });
    const badBounds = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2],
      kMax: 4,
      variant: 'single-tile',
      checks: ({ sizes }) => [{ parameter: 'segmentSizes', kind: 'device-bounds', array: sizes!.backend.upload(new Uint32Array([5, 3])), bounds: { min: 0, max: 64 }, deviceBounds: undefined }],
    });
    expect(await statusOf(badBounds)).toEqual({ status: [3, params('segmentSizes'), 0xffffffff, 5, 5, 3, 0, 0], untouched: true });
  });

  it('device sizes past the keys, larger than the stride, or a total outside totalNumItems', async () => {
    const pastKeys = baseCase({ keys, sizes: [10, 15, 10], k: [2], kMax: 4, variant: 'radix-select', checks: () => [] });
    expect(await statusOf(pastKeys)).toEqual({ status: [4, params('segmentSizes'), 2, 35, 0, 30, 0, 0], untouched: true });
    const strided = baseCase({ keys, sizes: [10, 11, 5], k: [2], kMax: 4, variant: 'radix-select', stride: { value: 10, kind: 'device' }, checks: () => [] });
    expect(await statusOf(strided)).toEqual({ status: [6, params('segmentSizes'), 1, 11, 0, 10, 0, 0], untouched: true });
    const total = baseCase({ keys, sizes: [10, 10, 9], k: [2], kMax: 4, variant: 'reduce', checks: () => [], totalNumItems: { min: 0, max: 28 } });
    expect(await statusOf(total)).toEqual({ status: [5, params('totalNumItems'), 0xffffffff, 29, 0, 28, 0, 0], untouched: true });
  });

  it('a device numSegments above maxSegments or outside its bounds; values past numSegments are not checked', async () => {
    const tooMany = baseCase({ keys, sizes: [10, 10, 10], k: [2], kMax: 4, variant: 'reduce', numSegments: 4, numSegmentsKind: 'device', checks: () => [] });
    expect(await statusOf(tooMany)).toEqual({ status: [1, params('numSegments'), 0xffffffff, 4, 0, 3, 0, 0], untouched: true });
    const scalar = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2],
      kMax: 4,
      variant: 'reduce',
      numSegments: 2,
      numSegmentsKind: 'device',
      checks: ({ numSegments }) => [{ parameter: 'numSegments', kind: 'scalar', array: numSegments!, bounds: { min: 3, max: 3 }, deviceBounds: undefined }],
    });
    expect(await statusOf(scalar)).toEqual({ status: [1, params('numSegments'), 0xffffffff, 2, 3, 3, 0, 0], untouched: true });
    const ignoredTail = baseCase({
      keys,
      sizes: [10, 10, 10],
      k: [2, 3, 99],
      kMax: 4,
      variant: 'reduce',
      numSegments: 2,
      numSegmentsKind: 'device',
      checks: ({ k }) => [{ parameter: 'k', kind: 'per-segment', array: k!, bounds: { min: 1, max: 4 }, deviceBounds: undefined }],
    });
    expect((await statusOf(ignoredTail)).status).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    await check(ignoredTail);
  });
});

describe("under 'trust', broken guarantees never write outside the outputs", () => {
  it('sizes past the keys, k past kMax, a device numSegments past maxSegments', async () => {
    const keys = makeKeys('f32', 50, 'random', rng(21));
    for (const variant of ['single-tile', 'reduce', 'radix-select'] as const) {
      const c = baseCase({ keys, sizes: [30, 30, 30], k: [2, 100, 3], kMax: 4, variant, numSegments: 7, numSegmentsKind: 'device', maxSegments: 3 });
      const { keys: out } = await execute(c);
      expect(out.length).toBe(12);
      // Segment 0 is intact and valid.
      const expected = referenceTopK({ keyType: 'f32', keys, segmentStarts: [0], segmentSizes: [30], k: [2], directions: ['max'], kMax: 4, withValues: false });
      expect(Array.from(out.subarray(0, 4))).toEqual(Array.from(expected.keys));
    }
  });
});
