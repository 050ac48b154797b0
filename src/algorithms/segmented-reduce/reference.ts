import { type ReduceOp, type ReduceValueType, canonicalNaN, identityBits, noIndex, opCode, sumOrder } from './ops.js';

/*
 * A small, obviously correct reduce, written from the contract (ops.ts) rather than from the
 * kernels: values as numbers, the canonical summation order spelled out with whole arrays (every
 * lane, every -0 of the padding), and min/max by plain comparison with NaN as the largest value.
 */

/** One reduce problem on the host: every value's bits and each segment's place, op and initial value. */
export interface ReferenceSegmentedReduceInput {
  readonly valueType: ReduceValueType;
  /** The values' bits (an f32 value's IEEE bits; integers as u32). */
  readonly values: Uint32Array;
  readonly segmentStarts: readonly number[];
  readonly segmentSizes: readonly number[];
  readonly ops: readonly ReduceOp[];
  /** Each segment's initial value as bits of `valueType`, or absent. */
  readonly initialValues?: readonly number[];
  /** f32 sums in the canonical order (default), or in float64 left to right, rounded once (the CPU's 'not-guaranteed' without WebAssembly SIMD). */
  readonly canonical?: boolean;
}

/** The reference's outputs: each segment's result bits and index (0xFFFFFFFF for none). */
export interface ReferenceSegmentedReduceOutput {
  readonly values: Uint32Array;
  readonly indices: Uint32Array;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const valueOf = (bits: number, type: ReduceValueType) => {
  if (type === 'f32') {
    u32[0] = bits;
    return f32[0]!;
  }
  return type === 'i32' ? bits | 0 : bits >>> 0;
};
const bitsOf = (value: number) => {
  f32[0] = value;
  return u32[0]!;
};

/** An f32 value with a subnormal replaced by the zero of its sign. */
function flushed(x: number): number {
  return x !== 0 && Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x;
}

/** The canonical addition: correctly rounded to f32, subnormals flushed. */
function plus(a: number, b: number): number {
  return flushed(Math.fround(flushed(a) + flushed(b)));
}

/** The canonical f32 sum of `items` (ops.ts, steps 1 to 5). */
export function canonicalSum(items: readonly number[]): number {
  const chunkTotals: number[] = [];
  for (let c = 0; c < items.length; c += sumOrder.chunkItems) {
    const chunk = items.slice(c, c + sumOrder.chunkItems);
    const lane = new Array<number>(sumOrder.lanes).fill(-0);
    for (let i = 0; i < chunk.length; i++) lane[i % sumOrder.lanes] = plus(lane[i % sumOrder.lanes]!, chunk[i]!);
    for (let half = sumOrder.lanes / 2; half >= 1; half /= 2) {
      for (let j = 0; j < half; j++) lane[j] = plus(lane[j]!, lane[j + half]!);
    }
    chunkTotals.push(lane[0]!);
  }
  let level = chunkTotals.length === 0 ? [-0] : chunkTotals;
  let width = 1;
  while (width < level.length) width *= 2;
  level = [...level, ...new Array<number>(width - level.length).fill(-0)];
  while (level.length > 1) {
    const next: number[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(plus(level[j]!, level[j + 1]!));
    level = next;
  }
  return level[0]!;
}

/** -1, 0 or 1: how `a` compares with `b` as values, NaN above everything, -0 equal to +0. */
function compare(a: number, b: number): number {
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN && bNaN ? 0 : aNaN ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Segmented reduce on the host, per the contract. */
export function referenceSegmentedReduce(input: ReferenceSegmentedReduceInput): ReferenceSegmentedReduceOutput {
  const { valueType } = input;
  const n = input.segmentSizes.length;
  const values = new Uint32Array(n);
  const indices = new Uint32Array(n).fill(noIndex);
  for (let s = 0; s < n; s++) {
    const op = input.ops[s]!;
    const start = input.segmentStarts[s]!;
    const size = input.segmentSizes[s]!;
    const initialBits = input.initialValues?.[s];
    const items = Array.from({ length: size }, (_, i) => valueOf(input.values[start + i]!, valueType));
    if (op === 'sum') {
      if (valueType !== 'f32') {
        let sum = 0;
        for (const item of items) sum = (sum + item) % 2 ** 32;
        if (initialBits !== undefined) sum = (sum + valueOf(initialBits, valueType)) % 2 ** 32;
        values[s] = sum >>> 0;
      } else if (size === 0) {
        values[s] = initialBits ?? 0;
      } else {
        const total = input.canonical === false ? Math.fround(items.reduce((a, b) => a + b, 0)) : canonicalSum(items);
        const withInitial =
          initialBits === undefined ? total : input.canonical === false ? Math.fround(total + valueOf(initialBits, 'f32')) : plus(total, valueOf(initialBits, 'f32'));
        values[s] = Number.isNaN(withInitial) ? canonicalNaN : bitsOf(withInitial);
      }
      continue;
    }
    const wantMin = op === 'min' || op === 'argMin';
    let best = -1;
    for (let i = 0; i < size; i++) {
      const c = compare(items[i]!, items[best] ?? NaN);
      if (best < 0 || (wantMin ? c < 0 : c > 0)) best = i;
    }
    const initialWins =
      initialBits !== undefined && (best < 0 || (wantMin ? compare(valueOf(initialBits, valueType), items[best]!) < 0 : compare(valueOf(initialBits, valueType), items[best]!) > 0));
    if (best < 0 || initialWins) {
      values[s] = initialBits ?? identityBits(opCode(op), valueType);
    } else {
      values[s] = input.values[start + best]!;
      indices[s] = best;
    }
  }
  return { values, indices };
}
