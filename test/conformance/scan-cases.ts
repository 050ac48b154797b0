import {
  type Backend,
  type DeviceArray,
  type Env,
  type Requirements,
  type ScanMode,
  type ScanOp,
  type ScanPlan,
  type ScanPolicy,
  type ScanValueType,
  type ScanVariant,
  DeviceSegmentedScan,
  env,
  referenceScan,
} from '../../src/index.js';
import { rng } from '../rng.js';
import { bits, bitsOf, P, runWithOwnTemp, starts, untouchedBits } from './common.js';
export { bits, bitsOf, starts, untouchedBits } from './common.js';

/** How a numeric parameter is given in a case. */
export type NumericKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device' | 'perSegment-device-bounds';
/** How an option parameter is given in a case. */
export type OptionKind = 'constant' | 'uniform' | 'uniform-device' | 'perSegment' | 'perSegment-device';
/** Value flavours: 'special' mixes NaNs (with payloads), ±0, ±Inf, subnormals and extremes; 'wrap' makes integer sums wrap. */
export type Flavour = 'random' | 'ties' | 'special' | 'wrap';

/** A scan problem described on the host. */
export interface ScanCase {
  name: string;
  valueType: ScanValueType;
  /** Value bits. */
  values: Uint32Array;
  sizes: number[];
  /** Strided layout when set. */
  stride?: number;
  ops: ScanOp[];
  modes: ScanMode[];
  /** Host initial values, one per segment (numbers of the value type), or undefined for none. */
  initial: number[] | undefined;
  sizeKind: NumericKind;
  opKind: OptionKind;
  modeKind: OptionKind;
  initialKind: Exclude<NumericKind, 'perSegment-device-bounds'>;
  numSegmentsKind: 'constant' | 'uniform' | 'device';
  /** Static bounds of the segment sizes for uniform/per-segment kinds. */
  sizeBounds?: { min: number; max: number };
}

/** Special f32 values: NaNs with payloads, signed zeros, infinities, subnormals, extremes. */
export const specialF32Bits = [
  0x7fc00000, 0x7f800001, 0xffc00001, 0x80000000, 0x00000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
];

/** Random values of a type in a flavour. */
export function makeValues(valueType: ScanValueType, count: number, flavour: Flavour, random: () => number): Uint32Array {
  const values = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    if (flavour === 'ties') {
      const v = Math.floor(random() * 5) - 2;
      values[i] = valueType === 'f32' ? bitsOf(v) : valueType === 'i32' ? v >>> 0 : (v + 2) >>> 0;
    } else if (flavour === 'special' && random() < 0.2) {
      if (valueType === 'f32') values[i] = specialF32Bits[Math.floor(random() * specialF32Bits.length)]!;
      else values[i] = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff][Math.floor(random() * 5)]!;
    } else if (flavour === 'wrap' && valueType !== 'f32') {
      values[i] = (0x7ffffff0 + Math.floor(random() * 64)) >>> 0;
    } else {
      values[i] = valueType === 'f32' ? bitsOf((random() - 0.5) * 2000) : Math.floor(random() * 4294967296) >>> 0;
    }
  }
  return values;
}

/** A host initial value of a type: extremes and ordinary values, never NaN (a host NaN is rejected). */
function makeInitial(valueType: ScanValueType, random: () => number): number {
  const pick = random();
  if (valueType === 'f32') return pick < 0.1 ? -Infinity : pick < 0.2 ? -0 : pick < 0.3 ? 1e-40 : Math.fround((random() - 0.5) * 100);
  if (valueType === 'i32') return pick < 0.2 ? -2147483648 : pick < 0.3 ? 2147483647 : Math.floor((random() - 0.5) * 2000);
  return pick < 0.2 ? 4294967295 : Math.floor(random() * 4294967296);
}

const typed = (valueType: ScanValueType, bits: Uint32Array) =>
  valueType === 'f32' ? new Float32Array(bits.buffer.slice(0)) : valueType === 'i32' ? new Int32Array(bits.buffer.slice(0)) : new Uint32Array(bits.buffer.slice(0));

/** Host numbers of a type as typed values (for device initial values). */
const typedNumbers = (valueType: ScanValueType, numbers: number[]) =>
  valueType === 'f32' ? new Float32Array(numbers) : valueType === 'i32' ? new Int32Array(numbers) : new Uint32Array(numbers);

/** The bits of a host number of a type. */
const numberBits = (valueType: ScanValueType, x: number) => new Uint32Array(typedNumbers(valueType, [x]).buffer)[0]!;

/** Everything a case uploads, and its arguments. */
export interface BuiltCase {
  args: Record<string, unknown>;
  valuesOut: DeviceArray;
  owned: DeviceArray[];
  expected: Uint32Array;
}

export function buildCase(backend: Backend, c: ScanCase): BuiltCase {
  const n = c.sizes.length;
  const owned: DeviceArray[] = [];
  const up = (data: Float32Array | Int32Array | Uint32Array) => {
    const a = backend.upload(data);
    owned.push(a);
    return a;
  };
  const valuesIn = up(typed(c.valueType, c.values));
  const before = new Uint32Array(Math.max(1, c.values.length)).fill(untouchedBits);
  const valuesOut = up(typed(c.valueType, before));
  const sizeBounds = c.sizeBounds ?? { min: 0, max: Math.max(0, ...c.sizes, c.stride ?? 0) };

  const numeric = (kind: NumericKind, values: number[], bounds: { min?: number; max?: number } | undefined, device: (values: number[]) => Float32Array | Int32Array | Uint32Array) => {
    const first = values[0] ?? bounds?.min ?? 0;
    switch (kind) {
      case 'constant':
        return P.constant!(first);
      case 'uniform':
        return P.uniform!(first, bounds);
      case 'uniform-device':
        return P.uniform!(up(device([first])), bounds);
      case 'perSegment':
        return P.perSegment!(values, bounds);
      case 'perSegment-device':
        return P.perSegment!(up(device(values.length ? values : [0])), bounds);
      case 'perSegment-device-bounds': {
        const lo = values.length ? Math.min(...values) : 0;
        const hi = values.length ? Math.max(...values) : 0;
        return P.perSegment!(up(device(values.length ? values : [0])), bounds, up(new Uint32Array([lo, hi])));
      }
    }
  };
  const option = <O extends string>(kind: OptionKind, chosen: O[], options: readonly O[]) => {
    // Device option indices refer to the options listed in reverse, so the index must be mapped.
    const reversed = [...options].reverse();
    const indices = () => new Uint32Array(chosen.length ? chosen.map((o) => reversed.indexOf(o)) : [0]);
    switch (kind) {
      case 'constant':
        return P.constantOption!(chosen[0] ?? options[0]);
      case 'uniform':
        return P.uniformOption!(chosen[0] ?? options[0], options);
      case 'uniform-device':
        return P.uniformOption!(up(indices().slice(0, 1)), reversed);
      case 'perSegment':
        return P.perSegmentOption!(chosen, options);
      case 'perSegment-device':
        return P.perSegmentOption!(up(indices()), reversed);
    }
  };
  const numSegments =
    c.numSegmentsKind === 'constant'
      ? P.constant!(n)
      : c.numSegmentsKind === 'uniform'
        ? P.uniform!(n, { min: 0, max: Math.max(n, 1) })
        : P.uniform!(up(new Uint32Array([n])), { min: 0, max: Math.max(n, 1) });
  const args: Record<string, unknown> = {
    valuesIn,
    valuesOut,
    segmentSizes: numeric(c.sizeKind, c.sizes, sizeBounds, (v) => new Uint32Array(v)),
    numSegments,
    op: option(c.opKind, c.ops, ['sum', 'min', 'max'] as const),
    mode: option(c.modeKind, c.modes, ['inclusive', 'exclusive'] as const),
  };
  if (c.stride !== undefined) args.segmentStride = P.uniform!(c.stride, { min: 0, max: c.stride });
  if (c.initial !== undefined) args.initialValue = numeric(c.initialKind, c.initial, undefined, (v) => typedNumbers(c.valueType, v));

  // Constant and uniform kinds give every segment the first segment's op, mode and initial value.
  const uniformKinds = ['constant', 'uniform', 'uniform-device'];
  const each = <T>(kind: string, values: T[]) => (uniformKinds.includes(kind) ? values.map(() => values[0]!) : values);
  const initial = c.initial === undefined ? undefined : each(c.initialKind, c.initial).map((x) => numberBits(c.valueType, x));
  const expected = referenceScan({
    valueType: c.valueType,
    values: c.values,
    segmentStarts: starts(c),
    segmentSizes: c.sizes,
    ops: each(c.opKind, c.ops),
    modes: each(c.modeKind, c.modes),
    initialValues: initial,
    outputBefore: before,
  });
  return { args, valuesOut, owned, expected };
}

/** Plans a case (optionally forcing a variant) and runs it with fresh temporary storage. */
export async function runCase(
  backend: Backend,
  built: BuiltCase,
  options: { variant?: ScanVariant; policy?: Partial<ScanPolicy>; requirements?: Partial<Requirements> } = {},
): Promise<{ plan: ScanPlan; out: Uint32Array }> {
  const tuning = { ...(options.variant ? { variant: options.variant } : {}), ...(options.policy ? { policy: options.policy } : {}) };
  const environment: Env = env({ backend, tuning, requirements: options.requirements });
  const plan = (DeviceSegmentedScan.plan as unknown as (a: unknown, e: Env) => ScanPlan)(built.args, environment);
  await runWithOwnTemp(backend, plan);
  return { plan, out: bits(await backend.download(built.valuesOut)) };
}

/** A case in a few words; omitted fields take the common defaults. */
export interface CaseOptions {
  name: string;
  valueType?: ScanValueType;
  flavour?: Flavour;
  sizes: number[];
  stride?: number;
  ops?: ScanOp | ScanOp[];
  modes?: ScanMode | ScanMode[];
  /** true: a random initial value per segment. */
  initial?: boolean | number | number[];
  sizeKind?: NumericKind;
  opKind?: OptionKind;
  modeKind?: OptionKind;
  initialKind?: Exclude<NumericKind, 'perSegment-device-bounds'>;
  numSegmentsKind?: 'constant' | 'uniform' | 'device';
  sizeBounds?: { min: number; max: number };
  seed?: number;
}

const cycle = <T>(values: readonly T[], n: number) => Array.from({ length: n }, (_, i) => values[i % values.length]!);

/** Builds a case with random values (seeded) from its description. */
export function makeCase(o: CaseOptions): ScanCase {
  const random = rng(o.seed ?? 7);
  const n = o.sizes.length;
  const valueType = o.valueType ?? 'f32';
  const span = o.stride !== undefined ? (n === 0 ? 0 : (n - 1) * o.stride + o.sizes[n - 1]!) : o.sizes.reduce((a, b) => a + b, 0);
  const ops = Array.isArray(o.ops) ? o.ops : cycle([o.ops ?? 'sum'], n);
  const modes = Array.isArray(o.modes) ? o.modes : cycle([o.modes ?? 'inclusive'], n);
  const initial =
    o.initial === undefined || o.initial === false
      ? undefined
      : o.initial === true
        ? Array.from({ length: n }, () => makeInitial(valueType, random))
        : Array.isArray(o.initial)
          ? o.initial
          : cycle([o.initial], n);
  return {
    name: o.name,
    valueType,
    values: makeValues(valueType, Math.max(span, 1), o.flavour ?? 'random', random),
    sizes: o.sizes,
    stride: o.stride,
    ops: cycle(ops, n),
    modes: cycle(modes, n),
    initial: initial === undefined ? undefined : cycle(initial, Math.max(n, 1)).slice(0, Math.max(n, 1)),
    sizeKind: o.sizeKind ?? 'perSegment',
    opKind: o.opKind ?? (Array.isArray(o.ops) ? 'perSegment' : 'constant'),
    modeKind: o.modeKind ?? (Array.isArray(o.modes) ? 'perSegment' : 'constant'),
    initialKind: o.initialKind ?? (Array.isArray(o.initial) || o.initial === true ? 'perSegment' : 'uniform'),
    numSegmentsKind: o.numSegmentsKind ?? 'uniform',
    sizeBounds: o.sizeBounds,
  };
}
