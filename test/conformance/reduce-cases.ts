import {
  type Backend,
  type DeviceArray,
  type Env,
  type Requirements as EnvRequirements,
  type ReduceOp,
  type SegmentedReducePlan,
  type SegmentedReducePolicy,
  type SegmentedReduceVariant,
  DeviceSegmentedReduce,
  env,
  referenceSegmentedReduce,
} from '../../src/index.js';
import { rng } from '../rng.js';
import { bits, bitsOf, f32Of, P, runWithOwnTemp, starts, typedFromBits, untouchedBits } from './common.js';
export { bits, bitsOf, f32Of, starts, untouchedBits } from './common.js';

/** How a parameter is given in a case. */
export type NumericKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device' | 'perSegment-device-bounds';
export type OptionKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device';
export type ValueType = 'f32' | 'i32' | 'u32';
export type Flavour = 'random' | 'ties' | 'special' | 'wrap' | 'tiny';

/** A reduce problem described on the host. */
export interface ReduceCase {
  name: string;
  valueType: ValueType;
  /** Value bits. */
  values: Uint32Array;
  sizes: number[];
  /** Strided layout when set. */
  stride?: number;
  ops: ReduceOp[];
  /** The op set the parameter declares (its device indices index it). */
  opOptions: ReduceOp[];
  /** Each segment's initial value as a host number, or undefined for none. */
  initial: number[] | undefined;
  sizeKind: NumericKind;
  opKind: OptionKind;
  initialKind: Exclude<NumericKind, 'perSegment-device-bounds'>;
  numSegmentsKind: 'constant' | 'uniform' | 'device';
  indices: 'i32' | 'u32' | 'none';
  sizeBounds?: { min: number; max: number };
}

/** f32 specials: NaNs with different payloads and signs, signed zeros, infinities, extremes, subnormals. */
export const specialF32Bits = [
  0x7fc00000, 0x7f800001, 0xffc00001, 0x80000000, 0x00000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x00800000,
];
const specialIntBits = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0x80000001, 0x7ffffffe];

/**
 * Value bits of a type: 'random'; 'ties' (few distinct values, -0 among them); 'special' (NaN, ±0,
 * ±Infinity, subnormals, extremes mixed in; integer extremes); 'wrap' (integers near the ends, so
 * sums wrap; f32 values near the largest, so sums overflow to Infinity); 'tiny' (f32 around the
 * smallest normal, so partial sums fall into the subnormal range).
 */
export function makeValues(valueType: ValueType, count: number, flavour: Flavour, random: () => number): Uint32Array {
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const r = random();
    if (flavour === 'ties') {
      const v = Math.floor(random() * 5) - 2;
      out[i] = valueType === 'f32' ? (r < 0.1 ? 0x80000000 : bitsOf(v)) : valueType === 'i32' ? v >>> 0 : (v + 2) >>> 0;
    } else if (flavour === 'special' && r < 0.3) {
      out[i] = valueType === 'f32' ? specialF32Bits[Math.floor(random() * specialF32Bits.length)]! : specialIntBits[Math.floor(random() * specialIntBits.length)]!;
    } else if (flavour === 'wrap') {
      out[i] = valueType === 'f32' ? bitsOf((random() < 0.5 ? -1 : 1) * 3.3e38 * (0.9 + random() * 0.1)) : (0x7fffff00 + Math.floor(random() * 0x200)) >>> 0;
    } else if (flavour === 'tiny' && valueType === 'f32') {
      out[i] = bitsOf((random() - 0.5) * 2 ** -124);
    } else if (valueType === 'f32') {
      // Magnitudes over six decades, so rounding differs between summation orders.
      out[i] = bitsOf((random() - 0.5) * 10 ** Math.floor(random() * 6));
    } else {
      out[i] = Math.floor(random() * 4294967296) >>> 0;
    }
  }
  return out;
}

/** Everything a case uploads, and its arguments. */
export interface BuiltCase {
  args: Record<string, unknown>;
  valuesOut: DeviceArray;
  indicesOut: DeviceArray | undefined;
  owned: DeviceArray[];
  expected: { values: Uint32Array; indices: Uint32Array };
  /** The float64 sum of each segment's items plus its initial value (NaN where an item is not finite). */
  exactSums: number[];
}

/** The bits of an initial value in a value type. */
export function initialBits(value: number, valueType: ValueType): number {
  return valueType === 'f32' ? bitsOf(value) : value >>> 0;
}

export function buildCase(backend: Backend, c: ReduceCase): BuiltCase {
  const n = c.sizes.length;
  const owned: DeviceArray[] = [];
  const up = (data: Float32Array | Int32Array | Uint32Array) => {
    const a = backend.upload(data);
    owned.push(a);
    return a;
  };
  const valuesIn = up(typedFromBits(c.valueType, c.values));
  const fill = new Uint32Array(Math.max(1, n)).fill(untouchedBits);
  const valuesOut = up(typedFromBits(c.valueType, fill));
  const indicesOut = c.indices === 'none' ? undefined : up(c.indices === 'i32' ? new Int32Array(fill.buffer.slice(0)) : new Uint32Array(fill));

  const sizeBounds = c.sizeBounds ?? { min: 0, max: Math.max(0, ...c.sizes, c.stride ?? 0) };
  const sizes = (kind: NumericKind) => {
    const first = c.sizes[0] ?? sizeBounds.min;
    const words = () => up(new Uint32Array(c.sizes.length ? c.sizes : [0]));
    switch (kind) {
      case 'constant':
        return P.constant!(first);
      case 'uniform':
        return P.uniform!(first, sizeBounds);
      case 'uniform-device':
        return P.uniform!(up(new Uint32Array([first])), sizeBounds);
      case 'perSegment':
        return P.perSegment!(c.sizes, sizeBounds);
      case 'perSegment-device':
        return P.perSegment!(words(), sizeBounds);
      case 'perSegment-device-bounds': {
        const lo = c.sizes.length ? Math.min(...c.sizes) : sizeBounds.min;
        const hi = c.sizes.length ? Math.max(...c.sizes) : sizeBounds.min;
        return P.perSegment!(words(), sizeBounds, up(new Uint32Array([lo, hi])));
      }
    }
  };
  const initialArray = (values: number[]) => (c.valueType === 'f32' ? new Float32Array(values) : c.valueType === 'i32' ? new Int32Array(values) : new Uint32Array(values));
  const initialParam = () => {
    const values = c.initial!;
    const first = values[0] ?? 0;
    switch (c.initialKind) {
      case 'constant':
        return P.constant!(first);
      case 'uniform':
        return P.uniform!(first);
      case 'uniform-device':
        return P.uniform!(up(initialArray([first])));
      case 'perSegment':
        return P.perSegment!(values);
      case 'perSegment-device':
        return P.perSegment!(up(initialArray(values.length ? values : [0])));
    }
  };
  const optionIndices = () => new Uint32Array(c.ops.length ? c.ops.map((o) => c.opOptions.indexOf(o)) : [0]);
  let op: unknown;
  switch (c.opKind) {
    case 'constant':
      op = P.constantOption!(c.ops[0] ?? c.opOptions[0]);
      break;
    case 'uniform':
      op = P.uniformOption!(c.ops[0] ?? c.opOptions[0], c.opOptions);
      break;
    case 'uniform-device':
      op = P.uniformOption!(up(optionIndices().slice(0, 1)), c.opOptions);
      break;
    case 'perSegment':
      op = P.perSegmentOption!(c.ops, c.opOptions);
      break;
    case 'perSegment-device':
      op = P.perSegmentOption!(up(optionIndices()), c.opOptions);
      break;
  }
  const numSegments =
    c.numSegmentsKind === 'constant'
      ? P.constant!(n)
      : c.numSegmentsKind === 'uniform'
        ? P.uniform!(n, { min: 0, max: Math.max(n, 1) })
        : P.uniform!(up(new Uint32Array([n])), { min: 0, max: Math.max(n, 1) });
  const args: Record<string, unknown> = {
    valuesIn,
    valuesOut,
    segmentSizes: sizes(c.sizeKind),
    op,
    numSegments,
  };
  if (indicesOut !== undefined) args.indicesOut = indicesOut;
  if (c.stride !== undefined) args.segmentStride = P.uniform!(c.stride, { min: 0, max: c.stride });
  if (c.initial !== undefined) args.initialValue = initialParam();
  const segmentStarts = starts(c);
  const initialOf = (s: number) => (c.initial === undefined ? undefined : c.initialKind === 'constant' || c.initialKind === 'uniform' || c.initialKind === 'uniform-device' ? c.initial[0] : c.initial[s]);
  const expected = referenceSegmentedReduce({
    valueType: c.valueType,
    values: c.values,
    segmentStarts,
    segmentSizes: c.sizes,
    ops: c.ops,
    ...(c.initial === undefined ? {} : { initialValues: c.sizes.map((_, s) => initialBits(initialOf(s)!, c.valueType)) }),
  });
  const exactSums = c.sizes.map((size, s) => {
    let sum = c.initial === undefined ? 0 : (c.valueType === 'f32' ? Math.fround(initialOf(s)!) : initialOf(s)!);
    for (let i = 0; i < size; i++) {
      const bits = c.values[segmentStarts[s]! + i]!;
      sum += c.valueType === 'f32' ? f32Of(bits) : c.valueType === 'i32' ? bits | 0 : bits;
    }
    return sum;
  });
  return { args, valuesOut, indicesOut, owned, expected, exactSums };
}

/** Gives a built case new outputs filled with {@link untouchedBits} (so one case runs on several variants, each seen writing everything). */
export function freshOutputs(backend: Backend, built: BuiltCase): void {
  const n = Math.max(1, built.expected.values.length);
  const fill = new Uint32Array(n).fill(untouchedBits);
  const replace = (old: DeviceArray | undefined) => {
    if (old === undefined) return undefined;
    const array = backend.upload(old.dtype === 'f32' ? new Float32Array(fill.buffer.slice(0)) : old.dtype === 'i32' ? new Int32Array(fill.buffer.slice(0)) : new Uint32Array(fill));
    built.owned.splice(built.owned.indexOf(old), 1, array);
    old.destroy();
    return array;
  };
  built.valuesOut = replace(built.valuesOut)!;
  built.indicesOut = replace(built.indicesOut);
  built.args.valuesOut = built.valuesOut;
  if (built.indicesOut !== undefined) built.args.indicesOut = built.indicesOut;
}

export type Requirements = Partial<EnvRequirements>;

/** Plans a case (optionally forcing a variant) and runs it with fresh temporary storage. */
export async function runCase(
  backend: Backend,
  built: BuiltCase,
  options: { variant?: SegmentedReduceVariant; policy?: Partial<SegmentedReducePolicy>; requirements?: Requirements; guaranteeChecks?: 'validate' | 'trust' } = {},
): Promise<{ plan: SegmentedReducePlan; values: Uint32Array; indices: Uint32Array | undefined }> {
  const tuning = { ...(options.variant ? { variant: options.variant } : {}), ...(options.policy ? { policy: options.policy } : {}) };
  const environment: Env = env({ backend, tuning, requirements: options.requirements });
  const plan = (DeviceSegmentedReduce.plan as unknown as (a: unknown, e: Env) => SegmentedReducePlan)(built.args, environment);
  await runWithOwnTemp(backend, plan);
  const values = bits(await backend.download(built.valuesOut));
  const indices = built.indicesOut ? bits(await backend.download(built.indicesOut)) : undefined;
  return { plan, values, indices };
}

/** A case in a few words; omitted fields take the common defaults. */
export interface CaseOptions {
  name: string;
  valueType?: ValueType;
  flavour?: Flavour;
  sizes: number[];
  stride?: number;
  /** One op for every segment, or one per segment. */
  ops?: ReduceOp | ReduceOp[];
  opOptions?: ReduceOp[];
  /** One initial value for every segment, or one per segment. */
  initial?: number | number[];
  sizeKind?: NumericKind;
  opKind?: OptionKind;
  initialKind?: ReduceCase['initialKind'];
  numSegmentsKind?: 'constant' | 'uniform' | 'device';
  indices?: 'i32' | 'u32' | 'none';
  seed?: number;
}

/** Every op, cycled over the segments. */
export const cycleOps = (n: number, ops: readonly ReduceOp[] = ['sum', 'min', 'max', 'argMin', 'argMax']) => Array.from({ length: n }, (_, i) => ops[i % ops.length]!);

/** Builds a case with random values (seeded) from its description. */
export function makeCase(o: CaseOptions): ReduceCase {
  const random = rng(o.seed ?? 7);
  const n = o.sizes.length;
  const valueType = o.valueType ?? 'f32';
  const span = o.stride !== undefined ? (n === 0 ? 0 : (n - 1) * o.stride + o.sizes[n - 1]!) : o.sizes.reduce((a, b) => a + b, 0);
  const ops = Array.isArray(o.ops) ? o.ops : Array.from({ length: n }, () => (o.ops as ReduceOp | undefined) ?? 'sum');
  const initial = o.initial === undefined ? undefined : Array.isArray(o.initial) ? o.initial : Array.from({ length: Math.max(1, n) }, () => o.initial as number);
  return {
    name: o.name,
    valueType,
    values: makeValues(valueType, Math.max(span, 1), o.flavour ?? 'random', random),
    sizes: o.sizes,
    stride: o.stride,
    ops,
    opOptions: o.opOptions ?? ['argMax', 'sum', 'min', 'max', 'argMin'],
    initial,
    sizeKind: o.sizeKind ?? 'perSegment',
    opKind: o.opKind ?? (Array.isArray(o.ops) ? 'perSegment' : 'constant'),
    initialKind: o.initialKind ?? (Array.isArray(o.initial) ? 'perSegment' : 'uniform'),
    numSegmentsKind: o.numSegmentsKind ?? 'uniform',
    indices: o.indices ?? 'i32',
  };
}
