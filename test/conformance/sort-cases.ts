import { type Backend, type DeviceArray, type Env, type SegmentedSortPlan, type SegmentedSortVariant, type SortOrder, DeviceSegmentedSort, env, referenceSegmentedSort } from '../../src/index.js';
import { rng } from '../rng.js';
import { bits, P, runWithOwnTemp, starts, typedFromBits, untouchedBits } from './common.js';
import { type NumericKind, type OptionKind, makeKeys } from './topk-cases.js';

export { bits, untouchedBits };
export type { NumericKind, OptionKind };

/** What a case writes as values. */
export type SortValueMode = 'none' | 'indices-u32' | 'indices-i32' | 'indices-f32' | 'payload';

/** A sort problem described on the host. */
export interface SortCase {
  name: string;
  keyType: 'f32' | 'i32' | 'u32';
  /** Key bits. */
  keys: Uint32Array;
  sizes: number[];
  /** Strided layout when set. */
  stride?: number;
  orders: SortOrder[];
  sizeKind: NumericKind;
  orderKind: OptionKind;
  numSegmentsKind: 'constant' | 'uniform' | 'device';
  values: SortValueMode;
  /** Static bounds of the segment sizes for uniform/per-segment kinds. */
  sizeBounds?: { min: number; max: number };
  /** A totalNumItems guarantee. */
  totalNumItems?: number;
}

/** Everything a case uploads, its arguments and the reference's outputs. */
export interface BuiltSortCase {
  args: Record<string, unknown>;
  keysOut: DeviceArray;
  valuesOut: DeviceArray | undefined;
  owned: DeviceArray[];
  expected: { keys: Uint32Array; values: Uint32Array };
}

export function buildSortCase(backend: Backend, c: SortCase): BuiltSortCase {
  const n = c.sizes.length;
  const owned: DeviceArray[] = [];
  const up = (data: Float32Array | Int32Array | Uint32Array) => {
    const a = backend.upload(data);
    owned.push(a);
    return a;
  };
  const length = c.keys.length;
  const keysIn = up(typedFromBits(c.keyType, c.keys));
  const fill = new Uint32Array(length).fill(untouchedBits);
  const keysOut = up(typedFromBits(c.keyType, fill));
  let valuesIn: DeviceArray | undefined;
  let valuesOut: DeviceArray | undefined;
  let payload: Uint32Array | undefined;
  let valueType: 'f32' | 'i32' | 'u32' = 'u32';
  if (c.values === 'payload') {
    payload = new Uint32Array(length);
    for (let i = 0; i < length; i++) payload[i] = (i * 2654435761) >>> 0;
    valuesIn = up(payload);
    valuesOut = up(new Uint32Array(fill));
  } else if (c.values !== 'none') {
    valueType = c.values.slice(8) as 'f32' | 'i32' | 'u32';
    valuesOut = up(typedFromBits(valueType, fill));
  }
  const sizeBounds = c.sizeBounds ?? { min: 0, max: Math.max(0, ...c.sizes, c.stride ?? 0) };
  const first = c.sizes[0] ?? sizeBounds.min;
  let segmentSizes: unknown;
  switch (c.sizeKind) {
    case 'constant':
      segmentSizes = P.constant!(first);
      break;
    case 'uniform':
      segmentSizes = P.uniform!(first, sizeBounds);
      break;
    case 'uniform-device':
      segmentSizes = P.uniform!(up(new Uint32Array([first])), sizeBounds);
      break;
    case 'perSegment':
      segmentSizes = P.perSegment!(c.sizes, sizeBounds);
      break;
    case 'perSegment-device':
      segmentSizes = P.perSegment!(up(new Uint32Array(n ? c.sizes : [0])), sizeBounds);
      break;
    case 'perSegment-device-bounds': {
      const lo = n ? Math.min(...c.sizes) : sizeBounds.min;
      const hi = n ? Math.max(...c.sizes) : sizeBounds.min;
      segmentSizes = P.perSegment!(up(new Uint32Array(n ? c.sizes : [0])), sizeBounds, up(new Uint32Array([lo, hi])));
      break;
    }
  }
  // Device option indices use the options in the other order, so an index must be mapped.
  const reversed = ['descending', 'ascending'];
  const indices = () => new Uint32Array(n ? c.orders.map((o) => reversed.indexOf(o)) : [0]);
  const order =
    c.orderKind === 'constant'
      ? P.constantOption!(c.orders[0] ?? 'ascending')
      : c.orderKind === 'uniform'
        ? P.uniformOption!(c.orders[0] ?? 'ascending', ['ascending', 'descending'])
        : c.orderKind === 'uniform-device'
          ? P.uniformOption!(up(indices().slice(0, 1)), reversed)
          : c.orderKind === 'perSegment'
            ? P.perSegmentOption!(c.orders, ['ascending', 'descending'])
            : P.perSegmentOption!(up(indices()), reversed);
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
    segmentSizes,
    segmentStride: c.stride === undefined ? undefined : P.uniform!(c.stride, { min: 0, max: c.stride }),
    order,
    numSegments,
    totalNumItems: c.totalNumItems === undefined ? undefined : P.guarantee!({ min: 0, max: c.totalNumItems }),
  };
  const expected = referenceSegmentedSort({
    keyType: c.keyType,
    keys: c.keys,
    values: payload,
    valueType,
    segmentStarts: starts(c),
    segmentSizes: c.sizes,
    orders: c.orders,
    withValues: c.values !== 'none',
    keysOut: fill,
    valuesOut: fill,
  });
  return { args, keysOut, valuesOut, owned, expected };
}

/** Plans a case (optionally forcing a variant) and runs it with fresh temporary storage. */
export async function runSortCase(
  backend: Backend,
  built: BuiltSortCase,
  options: { variant?: SegmentedSortVariant; policy?: Record<string, number> } = {},
): Promise<{ plan: SegmentedSortPlan; keys: Uint32Array; values: Uint32Array | undefined }> {
  const environment: Env = env({ backend, tuning: { ...(options.variant ? { variant: options.variant } : {}), ...(options.policy ? { policy: options.policy } : {}) } });
  const plan = (DeviceSegmentedSort.plan as unknown as (a: unknown, e: Env) => SegmentedSortPlan)(built.args, environment);
  await runWithOwnTemp(backend, plan);
  const keys = bits(await backend.download(built.keysOut));
  const values = built.valuesOut ? bits(await backend.download(built.valuesOut)) : undefined;
  return { plan, keys, values };
}

/** A case in a few words; omitted fields take the common defaults. */
export interface SortCaseOptions {
  name: string;
  keyType?: 'f32' | 'i32' | 'u32';
  flavour?: 'random' | 'ties' | 'special';
  sizes: number[];
  stride?: number;
  orders?: SortOrder | SortOrder[];
  sizeKind?: NumericKind;
  orderKind?: OptionKind;
  numSegmentsKind?: 'constant' | 'uniform' | 'device';
  values?: SortValueMode;
  sizeBounds?: { min: number; max: number };
  totalNumItems?: number;
  seed?: number;
}

/** Builds a case with random keys (seeded) from its description. */
export function makeSortCase(o: SortCaseOptions): SortCase {
  const random = rng(o.seed ?? 7);
  const n = o.sizes.length;
  const keyType = o.keyType ?? 'f32';
  const span = o.stride !== undefined ? (n === 0 ? 0 : (n - 1) * o.stride + o.sizes[n - 1]!) : o.sizes.reduce((a, b) => a + b, 0);
  const orders = Array.isArray(o.orders) ? o.orders : Array.from({ length: n }, () => (o.orders as SortOrder | undefined) ?? 'ascending');
  return {
    name: o.name,
    keyType,
    keys: makeKeys(keyType, Math.max(span, 1), o.flavour ?? 'random', random),
    sizes: o.sizes,
    stride: o.stride,
    orders,
    sizeKind: o.sizeKind ?? 'perSegment',
    orderKind: o.orderKind ?? (Array.isArray(o.orders) ? 'perSegment' : 'constant'),
    numSegmentsKind: o.numSegmentsKind ?? 'uniform',
    values: o.values ?? 'indices-u32',
    sizeBounds: o.sizeBounds,
    totalNumItems: o.totalNumItems,
  };
}
