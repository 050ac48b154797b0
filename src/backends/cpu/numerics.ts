/*
 * Value semantics every algorithm's CPU kernels share, bit for bit with their WGSL twins
 * (webgpu/numerics.ts):
 *
 * - Ordered keys: a value's bits as a 32-bit key whose order is the value order of min/max and
 *   top-k: NaN above +Infinity (all NaNs equal), -0 equal to +0. The hot loops hold the key as a
 *   signed int32 (`sk`, the unsigned ordered key XOR the sign bit), so one int32 compare orders two
 *   values; `sk ^ signBit` read as u32 is the unsigned ordered key.
 * - Canonical f32 addition: WebGPU lets a device flush subnormal f32 values to zero (WGSL, "floating
 *   point evaluation"), and leaves a NaN's payload open. So that a sum has the same bits on every
 *   device and on the CPU, every f32 addition that must be reproducible flushes its inputs and its
 *   result (a subnormal becomes the zero of its sign) and a NaN is written as `canonicalNaNBits`.
 *   `Math.fround(a + b)` of two f32 values is their correctly rounded f32 sum (a double holds the
 *   exact sum to well within the bits that double rounding would need), as WGSL requires of `a + b`.
 */

/** int32 minimum: `sk ^ signBit` is the ordered key's bits. */
export const signBit = -0x80000000;

/**
 * Signed ordered key of an f32 value's bits (as int32) for 'max'; XOR with -1 for 'min'.
 * NaN -> int32 max, -0 -> +0, negatives -> `bits ^ 0x7fffffff` (branch-free for the sign; NaN and -0
 * are the rare path).
 */
export function f32Signed(bits: number): number {
  const s = bits ^ ((bits >> 31) >>> 1);
  // s is outside [-0x7f800001, 0x7f800000] only for NaN; s === -1 only for -0.
  if (s > 0x7f800000 || s < -0x7f800001 || s === -1) return s === -1 ? 0 : 0x7fffffff;
  return s;
}

/** The smallest normal f32, 2^-126: anything smaller in magnitude (and not zero) is subnormal. */
export const minNormalF32 = 1.1754943508222875e-38;

/**
 * The bits of 2^-103, the smallest magnitude at which a value cannot take part in a subnormal sum. A
 * nonzero f32 value with exponent e is a multiple of 2^(e - 23); if every value of a sum is zero or
 * at least 2^-103 in magnitude (infinities and NaN included), all are multiples of 2^-126, so is
 * every exact partial sum, and so is its rounding to f32 (a multiple of 2^-126 either lies on the f32
 * grid or rounds to a coarser grid point). Every nonzero partial sum is then at least 2^-126: normal.
 * None of the canonical order's flushes changes anything, and `Math.fround(a + b)` alone gives its
 * bits. As an exponent-field test on the bits: `(bits & 0x7f800000) - quietExponentBits` is negative
 * exactly for zeros and magnitudes below 2^-103.
 */
export const quietExponentBits = 24 << 23;

/** The bits every f32 NaN result of a canonical sum is written as (the quiet NaN WGSL and JS produce). */
export const canonicalNaNBits = 0x7fc00000;

/**
 * An f32 value with a subnormal flushed to the zero of its sign; zeros, normals, infinities and NaN
 * unchanged. (`x * 0` keeps the sign, and is NaN for NaN.)
 */
export function flushF32(x: number): number {
  return Math.abs(x) >= minNormalF32 ? x : x * 0;
}

/** The canonical f32 sum of two flushed f32 values: correctly rounded, then flushed. */
export function addF32(a: number, b: number): number {
  const sum = Math.fround(a + b);
  return Math.abs(sum) >= minNormalF32 ? sum : sum * 0;
}

/**
 * Writes a canonical f32 result: NaN as {@link canonicalNaNBits}, anything else as its value (a
 * Float32Array store may keep a NaN's payload).
 */
export function storeF32(f32: Float32Array, u32: Uint32Array, at: number, value: number): void {
  if (value === value) f32[at] = value;
  else u32[at] = canonicalNaNBits;
}
