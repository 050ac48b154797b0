/*
 * What DeviceSegmentedReduce computes, in one place for the host, the reference and both backends'
 * kernels: the ops, their identities, and the one summation order of f32 sums.
 *
 * Values are compared by their ordered keys (backends/cpu/numerics.ts and its WGSL twin, as top-k
 * ranks keys): NaN above
 * +Infinity (all NaNs equal), -0 equal to +0, i32 by sign, u32 as is. 'min'/'argMin' take the
 * smallest key, 'max'/'argMax' the largest; ties go to the smaller segment-local index, whose bits
 * are written. An initial value takes part as a candidate ranked after every item: it wins only when
 * strictly better (it has no index). 'min' and 'max' write the same index as 'argMin' and 'argMax'
 * when `indicesOut` is given; 'sum' writes no index (-1 / 0xFFFFFFFF).
 *
 * The canonical f32 summation order (determinism 'run-to-run'), a function of the segment's items
 * alone, followed by every variant on every backend:
 * 1. every addition is canonical (numerics.ts `addF32`): correctly rounded, with subnormal inputs
 *    and results flushed to the zero of their sign; items are flushed as they are read;
 * 2. the segment is cut into chunks of {@link sumOrder}.chunkItems consecutive items (the last may be
 *    shorter);
 * 3. within a chunk, lane j (0 <= j < {@link sumOrder}.lanes) sums the chunk's items j, j + lanes,
 *    j + 2 lanes, ... left to right, starting from -0 (the exact identity: -0 + x is x);
 * 4. the chunk's total is the pairwise tree over its lanes, halves first: for half = lanes / 2, ..., 1,
 *    lane[j] = lane[j] + lane[j + half] for every j < half; the total is lane[0];
 * 5. the segment's total is the pairwise tree over its chunk totals in order, neighbours first,
 *    padded with -0 to a power of two: ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + ...);
 * 6. an empty segment gives the initial value (else +0); otherwise the initial value, if any, is
 *    added last: total + initialValue;
 * 7. a NaN result is written as the canonical NaN 0x7FC00000.
 * Adding -0 changes nothing, so a variant may skip empty lanes and padding (a short segment's tree
 * over 256 lanes is its tree over the next power of two of its size). Integer sums wrap modulo 2^32
 * in any order; min and max are order-free.
 *
 * Under 'not-guaranteed', the CPU takes its faster sum: the canonical order's WebAssembly SIMD loops
 * (about half the time of a float64 chain) where the runtime has them, else float64 left to right,
 * rounded once (more accurate, not the canonical bits); WebGPU keeps the canonical order, which costs
 * it no extra memory traffic.
 */

/** The reductions of DeviceSegmentedReduce. */
export type ReduceOp = 'sum' | 'min' | 'max' | 'argMin' | 'argMax';
/** Every op, in the order of their codes. */
export const reduceOps: readonly ReduceOp[] = ['sum', 'min', 'max', 'argMin', 'argMax'];
/** The ops that need `indicesOut`. */
export const argOps: readonly ReduceOp[] = ['argMin', 'argMax'];

/** Op codes as kernels read them: 0 sum, 1 min, 2 max, 3 argMin, 4 argMax. */
export const enum OpCode {
  Sum = 0,
  Min = 1,
  Max = 2,
  ArgMin = 3,
  ArgMax = 4,
}

/** The code of an op. */
export function opCode(op: ReduceOp): OpCode {
  return reduceOps.indexOf(op) as OpCode;
}

/** Whether an op code takes the smallest key (min, argMin). */
export const takesMin = (code: number) => code === OpCode.Min || code === OpCode.ArgMin;

/** Element types DeviceSegmentedReduce reduces. */
export type ReduceValueType = 'f32' | 'i32' | 'u32';

/** The canonical f32 summation order's shape (see the comment at the top of this file). */
export const sumOrder = {
  /** Lanes of a chunk. */
  lanes: 256,
  /** Items of a chunk: 32 per lane. */
  chunkItems: 8192,
} as const;

/** The index written where there is none (an empty segment, an initial value that won, a sum): -1 as i32. */
export const noIndex = 0xffffffff;

/** The bits of canonical NaN, the f32 NaN every sum is written as. */
export const canonicalNaN = 0x7fc00000;

/**
 * Bits of an op's result for an empty segment without an initial value: 0 for sums, +Infinity /
 * -Infinity for f32 min / max, the type's largest / smallest value for integers.
 */
export function identityBits(code: number, valueType: ReduceValueType): number {
  if (code === OpCode.Sum) return 0;
  const min = takesMin(code);
  if (valueType === 'f32') return min ? 0x7f800000 : 0xff800000;
  if (valueType === 'i32') return min ? 0x7fffffff : 0x80000000;
  return min ? 0xffffffff : 0;
}

const scratch = new DataView(new ArrayBuffer(4));

/** The bits of a host number as a value of `valueType` (f32 rounds to nearest; integers wrap modulo 2^32). */
export function valueBits(value: number, valueType: ReduceValueType): number {
  if (valueType === 'f32') {
    scratch.setFloat32(0, value, true);
    return scratch.getUint32(0, true);
  }
  return value >>> 0;
}

/** The host number a value's bits stand for. */
export function bitsValue(bits: number, valueType: ReduceValueType): number {
  if (valueType === 'f32') {
    scratch.setUint32(0, bits >>> 0, true);
    return scratch.getFloat32(0, true);
  }
  return valueType === 'i32' ? bits | 0 : bits >>> 0;
}

/** The domain of an initial value for a value type: f32 any number but NaN; integers their type's range. */
export function initialValueDomain(valueType: ReduceValueType): { min: number; max: number; integer: boolean } {
  if (valueType === 'f32') return { min: -Infinity, max: Infinity, integer: false };
  if (valueType === 'i32') return { min: -2147483648, max: 2147483647, integer: true };
  return { min: 0, max: 4294967295, integer: true };
}
