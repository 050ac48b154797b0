import { type Backend, type DeviceArray, type Env, type Requirements, type TopKPlan, type TopKPolicy, type TopKVariant, DeviceBatchedTopK, env, referenceTopK } from '../../src/index.js';
import { orderedKey } from '../../src/algorithms/batched-top-k/keys.js';
import { rng } from '../rng.js';
import { bits, bitsOf, P, runWithOwnTemp, starts, typedFromBits, untouchedBits } from './common.js';
export { bits, bitsOf, starts, untouchedBits } from './common.js';

/** How a parameter is given in a case. */
export type NumericKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device' | 'perSegment-device-bounds';
export type OptionKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device';
export type ValueMode = 'none' | 'indices-u32' | 'indices-i32' | 'indices-f32' | 'payload';

/** A top-k problem described on the host. */
export interface TopKCase {
  name: string;
  keyType: 'f32' | 'i32' | 'u32';
  /** Key bits. */
  keys: Uint32Array;
  sizes: number[];
  /** Strided layout when set. */
  stride?: number;
  k: number[];
  /** Static upper bound of k for uniform/per-segment kinds. */
  kBound: number;
  directions: ('max' | 'min')[];
  sizeKind: NumericKind;
  kKind: NumericKind;
  directionKind: OptionKind;
  numSegmentsKind: 'constant' | 'uniform' | 'device';
  values: ValueMode;
  /** Static bounds of the segment sizes for uniform/per-segment kinds. */
  sizeBounds?: { min: number; max: number };
}

/** Special f32 values: NaNs with different payloads, signed zeros, infinities, extremes. */
export const specialF32Bits = [
  0x7fc00000, 0x7f800001, 0xffc00001, 0x80000000, 0x00000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff,
];

/** Random keys of a type: 'random', 'ties' (few distinct values) or 'special' (NaN, -0, inf mixed in). */
export function makeKeys(keyType: 'f32' | 'i32' | 'u32', count: number, flavour: 'random' | 'ties' | 'special', random: () => number): Uint32Array {
  const keys = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    if (flavour === 'ties') {
      const v = Math.floor(random() * 5) - 2;
      keys[i] = keyType === 'f32' ? bitsOf(v) : keyType === 'i32' ? v >>> 0 : (v + 2) >>> 0;
    } else if (flavour === 'special' && random() < 0.3) {
      if (keyType === 'f32') keys[i] = specialF32Bits[Math.floor(random() * specialF32Bits.length)]!;
      else keys[i] = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff][Math.floor(random() * 5)]!;
    } else {
      keys[i] = keyType === 'f32' ? bitsOf((random() - 0.5) * 1000) : Math.floor(random() * 4294967296) >>> 0;
    }
  }
  return keys;
}

/** kMax of a case, as docs/top-k.md defines it. */
export function kMaxOf(c: TopKCase): number {
  return c.kKind === 'constant' || c.kKind === 'uniform' ? (c.k[0] ?? c.kBound) : c.kBound;
}

/** Everything a case uploads, and its arguments. */
export interface BuiltCase {
  args: Record<string, unknown>;
  keysOut: DeviceArray;
  valuesOut: DeviceArray | undefined;
  owned: DeviceArray[];
  expected: { keys: Uint32Array; values: Uint32Array };
  kMax: number;
  /** The payload bits per key, when the case has a payload. */
  payload: Uint32Array | undefined;
}

export function buildCase(backend: Backend, c: TopKCase): BuiltCase {
  const n = c.sizes.length;
  const kMax = kMaxOf(c);
  const owned: DeviceArray[] = [];
  const up = (data: Float32Array | Int32Array | Uint32Array) => {
    const a = backend.upload(data);
    owned.push(a);
    return a;
  };
  const totalKeys = c.keys.length;
  const keysIn = up(typedFromBits(c.keyType, c.keys));
  const fill = new Uint32Array(Math.max(1, n * kMax)).fill(untouchedBits);
  const keysOut = up(typedFromBits(c.keyType, fill));
  let valuesIn: DeviceArray | undefined;
  let valuesOut: DeviceArray | undefined;
  let payload: Uint32Array | undefined;
  let valueType: 'f32' | 'i32' | 'u32' = 'i32';
  if (c.values === 'payload') {
    payload = new Uint32Array(totalKeys);
    for (let i = 0; i < totalKeys; i++) payload[i] = (i * 2654435761) >>> 0;
    valuesIn = up(payload);
    valuesOut = up(new Uint32Array(fill));
    valueType = 'u32';
  } else if (c.values !== 'none') {
    valueType = c.values.slice(8) as 'f32' | 'i32' | 'u32';
    valuesOut = up(typedFromBits(valueType, fill));
  }

  const sizeBounds = c.sizeBounds ?? { min: 0, max: Math.max(0, ...c.sizes, c.stride ?? 0) };
  // With no segments, a uniform value still has to lie in its bounds.
  const numeric = (kind: NumericKind, values: number[], bounds: { min: number; max: number }) => {
    const first = values[0] ?? bounds.min;
    switch (kind) {
      case 'constant':
        return P.constant!(first);
      case 'uniform':
        return P.uniform!(first, bounds);
      case 'uniform-device':
        return P.uniform!(up(new Uint32Array([first])), bounds);
      case 'perSegment':
        return P.perSegment!(values, bounds);
      case 'perSegment-device':
        return P.perSegment!(up(new Uint32Array(values.length ? values : [0])), bounds);
      case 'perSegment-device-bounds': {
        const lo = values.length ? Math.min(...values) : bounds.min;
        const hi = values.length ? Math.max(...values) : bounds.min;
        return P.perSegment!(up(new Uint32Array(values.length ? values : [0])), bounds, up(new Uint32Array([lo, hi])));
      }
    }
  };
  const optionIndices = (options: readonly string[]) => new Uint32Array(c.directions.length ? c.directions.map((d) => options.indexOf(d)) : [0]);
  let selectDirection: unknown;
  switch (c.directionKind) {
    case 'constant':
      selectDirection = P.constantOption!(c.directions[0] ?? 'max');
      break;
    case 'uniform':
      selectDirection = P.uniformOption!(c.directions[0] ?? 'max', ['max', 'min']);
      break;
    case 'uniform-device':
      // Options in the other order: index 0 is 'min', so the device index must be mapped.
      selectDirection = P.uniformOption!(up(optionIndices(['min', 'max']).slice(0, 1)), ['min', 'max']);
      break;
    case 'perSegment':
      selectDirection = P.perSegmentOption!(c.directions, ['max', 'min']);
      break;
    case 'perSegment-device':
      selectDirection = P.perSegmentOption!(up(optionIndices(['min', 'max'])), ['min', 'max']);
      break;
  }
  const numSegments =
    c.numSegmentsKind === 'constant'
      ? P.constant!(n)
      : c.numSegmentsKind === 'uniform'
        ? P.uniform!(n, { min: 0, max: Math.max(n, 1) })
        : P.uniform!(up(new Uint32Array([n])), { min: 0, max: Math.max(n, 1) });
  const args: Record<string, unknown> = {
    keysIn,
    keysOut,
    valuesIn,
    valuesOut,
    segmentSizes: numeric(c.sizeKind, c.sizes, sizeBounds),
    segmentStride: c.stride === undefined ? undefined : P.uniform!(c.stride, { min: 0, max: c.stride }),
    k: numeric(c.kKind, c.k, { min: 1, max: c.kBound }),
    selectDirection,
    numSegments,
  };
  const expected = referenceTopK({
    keyType: c.keyType,
    keys: c.keys,
    values: payload,
    valueType,
    segmentStarts: starts(c),
    segmentSizes: c.sizes,
    k: c.k,
    directions: c.directions,
    kMax,
    withValues: c.values !== 'none',
  });
  return { args, keysOut, valuesOut, owned, expected, kMax, payload };
}

/** What a relaxed check allows: which tied items (`ties`) and the order within a segment (`order`). */
export interface Allowed {
  /** 'index': the smaller indices win ties; 'any': any of the items tied with the last one taken. */
  readonly ties: 'index' | 'any';
  /** 'sorted': best first; 'any': any order. */
  readonly order: 'sorted' | 'any';
}

/**
 * Every way the outputs of a case break the contract, given what `allowed` relaxes; empty when they
 * are a valid top-k. Per segment: each result is an item of the segment (its index or payload names
 * it, and the key is that item's), no item twice, the ordered keys are the reference's as a multiset
 * (so the set is a top-k: only items tied with the reference's can stand in for them), best first
 * when sorted, the reference's items exactly when ties go by index, and the fills past min(k, size).
 */
export function topKViolations(c: TopKCase, built: BuiltCase, keys: Uint32Array, values: Uint32Array | undefined, allowed: Allowed): string[] {
  const problems: string[] = [];
  const { kMax, expected } = built;
  const segmentStarts = starts(c);
  const payloadIndex = new Map<number, number>();
  if (built.payload !== undefined) built.payload.forEach((bits, i) => payloadIndex.set(bits, i));
  const indexOfValue = (bits: number, start: number): number => {
    if (c.values === 'payload') return (payloadIndex.get(bits) ?? -1) - start;
    if (c.values === 'indices-f32') return new Float32Array(new Uint32Array([bits]).buffer)[0]!;
    return bits | 0;
  };
  const sortedNumbers = (a: number[]) => [...a].sort((x, y) => x - y);
  for (let s = 0; s < c.sizes.length; s++) {
    const start = segmentStarts[s]!;
    const size = c.sizes[s]!;
    const direction = c.directions[s]!;
    const take = Math.min(c.k[s]!, size, kMax);
    const at = (j: number) => s * kMax + j;
    const rank = (bits: number) => orderedKey(bits, c.keyType, direction);
    const problem = (what: string) => problems.push(`segment ${s}: ${what}`);
    const ranks: number[] = [];
    for (let j = 0; j < take; j++) ranks.push(rank(keys[at(j)]!));
    const expectedRanks = Array.from({ length: take }, (_, j) => rank(expected.keys[at(j)]!));
    if (sortedNumbers(ranks).join() !== sortedNumbers(expectedRanks).join()) problem('the keys are not the top-k keys');
    if (allowed.order === 'sorted' && ranks.some((r, j) => j > 0 && r > ranks[j - 1]!)) problem('the keys are not best first');
    if (values !== undefined) {
      const seen = new Set<number>();
      for (let j = 0; j < take; j++) {
        const index = indexOfValue(values[at(j)]!, start);
        if (!Number.isInteger(index) || index < 0 || index >= size) problem(`slot ${j}: value ${values[at(j)]} names no item of the segment`);
        else if (seen.has(index)) problem(`slot ${j}: item ${index} is taken twice`);
        else if (keys[at(j)] !== c.keys[start + index]) problem(`slot ${j}: key ${keys[at(j)]} is not item ${index}'s key ${c.keys[start + index]}`);
        seen.add(index);
      }
      if (allowed.ties === 'index') {
        const expectedIndices = Array.from({ length: take }, (_, j) => indexOfValue(expected.values[at(j)]!, start));
        if (sortedNumbers([...seen]).join() !== sortedNumbers(expectedIndices).join()) problem('the items are not the smallest indices among ties');
      }
    } else {
      // Keys only: each key's bits must be those of as many of the segment's items.
      const available = new Map<number, number>();
      for (let i = 0; i < size; i++) available.set(c.keys[start + i]!, (available.get(c.keys[start + i]!) ?? 0) + 1);
      for (let j = 0; j < take; j++) {
        const left = available.get(keys[at(j)]!) ?? 0;
        if (left === 0) problem(`slot ${j}: key ${keys[at(j)]} is not a key of the segment's items`);
        available.set(keys[at(j)]!, left - 1);
      }
    }
    if (allowed.order === 'sorted' && allowed.ties === 'index') {
      for (let j = 0; j < take; j++) {
        if (keys[at(j)] !== expected.keys[at(j)] || (values !== undefined && values[at(j)] !== expected.values[at(j)])) {
          problem(`slot ${j}: not the reference's result`);
          break;
        }
      }
    }
    for (let j = take; j < kMax; j++) {
      if (keys[at(j)] !== expected.keys[at(j)]) problem(`slot ${j}: key fill ${keys[at(j)]}, expected ${expected.keys[at(j)]}`);
      if (values !== undefined && values[at(j)] !== expected.values[at(j)]) problem(`slot ${j}: value fill ${values[at(j)]}, expected ${expected.values[at(j)]}`);
    }
  }
  return problems;
}

/** Plans a case (optionally forcing a variant) and runs it with fresh temporary storage. */
export async function runCase(
  backend: Backend,
  built: BuiltCase,
  options: {
    variant?: TopKVariant;
    requirements?: Partial<Requirements>;
    policy?: Partial<TopKPolicy>;
  } = {},
): Promise<{ plan: TopKPlan; keys: Uint32Array; values: Uint32Array | undefined }> {
  const tuning = { ...(options.variant ? { variant: options.variant } : {}), ...(options.policy ? { policy: options.policy } : {}) };
  const environment: Env = env({ backend, tuning, requirements: options.requirements });
  const plan = (DeviceBatchedTopK.plan as unknown as (a: unknown, e: Env) => TopKPlan)(built.args, environment);
  await runWithOwnTemp(backend, plan);
  const keys = bits(await backend.download(built.keysOut));
  const values = built.valuesOut ? bits(await backend.download(built.valuesOut)) : undefined;
  return { plan, keys, values };
}

/** A case in a few words; omitted fields take the common defaults. */
export interface CaseOptions {
  name: string;
  keyType?: 'f32' | 'i32' | 'u32';
  flavour?: 'random' | 'ties' | 'special';
  sizes: number[];
  stride?: number;
  k: number | number[];
  kBound?: number;
  directions?: 'max' | 'min' | ('max' | 'min')[];
  sizeKind?: NumericKind;
  kKind?: NumericKind;
  directionKind?: OptionKind;
  numSegmentsKind?: 'constant' | 'uniform' | 'device';
  values?: ValueMode;
  seed?: number;
}

/** Builds a case with random keys (seeded) from its description. */
export function makeCase(o: CaseOptions): TopKCase {
  const random = rng(o.seed ?? 7);
  const n = o.sizes.length;
  const keyType = o.keyType ?? 'f32';
  const span = o.stride !== undefined ? (n === 0 ? 0 : (n - 1) * o.stride + o.sizes[n - 1]!) : o.sizes.reduce((a, b) => a + b, 0);
  const ks = Array.isArray(o.k) ? o.k : Array.from({ length: n }, () => o.k as number);
  const directions = Array.isArray(o.directions) ? o.directions : Array.from({ length: n }, () => (o.directions as 'max' | 'min' | undefined) ?? 'max');
  return {
    name: o.name,
    keyType,
    keys: makeKeys(keyType, Math.max(span, 1), o.flavour ?? 'random', random),
    sizes: o.sizes,
    stride: o.stride,
    k: ks,
    kBound: o.kBound ?? Math.max(1, ...ks),
    directions,
    sizeKind: o.sizeKind ?? 'perSegment',
    kKind: o.kKind ?? (Array.isArray(o.k) ? 'perSegment' : 'uniform'),
    directionKind: o.directionKind ?? (Array.isArray(o.directions) ? 'perSegment' : 'constant'),
    numSegmentsKind: o.numSegmentsKind ?? 'uniform',
    values: o.values ?? 'indices-i32',
  };
}
