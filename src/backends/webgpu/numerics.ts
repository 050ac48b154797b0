/*
 * WGSL value semantics every algorithm's kernels share: the twins of cpu/numerics.ts, bit for bit.
 *
 * - `orderedBits(bits)`: a value's bits as an unsigned key whose order is the value order of min/max
 *   and top-k (NaN above +Infinity, all NaNs equal; -0 equal to +0; i32 by sign; u32 as is);
 *   `orderKeyWgsl`, the same order in fewer operations, for keys that are compared, never written.
 * - Canonical f32 addition (`flushF32`, `addF32`): WebGPU lets a device flush subnormals to zero and
 *   leaves a NaN's payload open, so a reproducible sum flushes its inputs and its result itself (on
 *   the bits, which no device rounds) and writes a NaN as `CANONICAL_NAN`. A device that flushes in
 *   hardware gives the same zero (the zero of the result's sign); WGSL requires `a + b` on f32 to be
 *   correctly rounded, as `Math.fround(a + b)` is on the CPU.
 */

/** `fn orderedBits(bits: u32) -> u32` for a value type. */
export function orderedBitsWgsl(valueType: 'f32' | 'i32' | 'u32'): string {
  if (valueType === 'f32') {
    // Branch-free (selects, no early returns): scanning kernels call it once per key, and random
    // signs would make the branches diverge within a subgroup.
    return `fn orderedBits(bits: u32) -> u32 {
  let flipped = bits ^ (bitcast<u32>(bitcast<i32>(bits) >> 31u) | 0x80000000u); // negatives: ~bits; positives: bits | sign
  let zeroed = select(flipped, 0x80000000u, bits == 0x80000000u); // -0 is +0
  return select(zeroed, 0xffffffffu, (bits & 0x7fffffffu) > 0x7f800000u); // NaN ranks above +Infinity
}`;
  }
  return valueType === 'i32' ? 'fn orderedBits(bits: u32) -> u32 { return bits ^ 0x80000000u; }' : 'fn orderedBits(bits: u32) -> u32 { return bits; }';
}

/**
 * `fn <name>(bits: T) -> T` (T u32, or a vector of u32 with IT its signed twin): an ordered key with
 * orderedBits' order and ties, in fewer operations, for loops that compute one per item and only
 * compare keys (reduce's lanes, top-k's register lists). Not orderedBits' numbers: where a key is
 * written out, write orderedBits of the bits.
 *
 * For f32, four operations: s is all ones for a negative value; (bits ^ (s | sign)) - s makes the
 * sign-magnitude bits two's complement (a negative value's bits negated, so -0 lands on +0, and a
 * positive value's sign bit set); adding 0xff800000 maps -Infinity .. +Infinity onto
 * 0 .. 0xff000000 and wraps a negative NaN past +Infinity, beside the positive ones; the min makes
 * every NaN 0xff000001. Integer compares only: a float compare would take fewer, but WGSL lets a
 * device flush subnormals to zero and assume there is no NaN, and these keys must order exactly on
 * every device. i32 and u32 as orderedBits.
 */
export function orderKeyWgsl(valueType: 'f32' | 'i32' | 'u32', name: string, t: string, it = 'i32'): string {
  const body =
    valueType === 'f32'
      ? `let s = bitcast<${t}>(bitcast<${it}>(bits) >> ${t}(31u));
  return min((bits ^ (s | ${t}(0x80000000u))) - s + ${t}(0xff800000u), ${t}(0xff000001u));`
      : valueType === 'i32'
        ? `return bits ^ ${t}(0x80000000u);`
        : 'return bits;';
  return `fn ${name}(bits: ${t}) -> ${t} {
  ${body}
}`;
}

/**
 * `fn <name>(key: u32) -> u32`: the bits whose orderKeyWgsl key is `key`, exact wherever one value has
 * that key: every i32 and u32 key, and every f32 key but two, -0 and +0's (0x7f800000, given as +0)
 * and every NaN's (0xff000001, given as 0x7f800001). Callers that must write the first of those ties'
 * bits find it among the items. For f32 it undoes the four operations: u = key - 0xff800000 is the
 * two's complement form, u >= 2^31 a non-negative value's bits with the sign set, else a negative
 * value's bits negated.
 */
export function orderKeyInverseWgsl(valueType: 'f32' | 'i32' | 'u32', name: string): string {
  const body =
    valueType === 'f32'
      ? `let u = key + 0x00800000u;
  return select(0u - u, u & 0x7fffffffu, u >= 0x80000000u);`
      : valueType === 'i32'
        ? 'return key ^ 0x80000000u;'
        : 'return key;';
  return `fn ${name}(key: u32) -> u32 {
  ${body}
}`;
}

/**
 * `fn indexValue(i: u32) -> u32`: a segment-local index as an output value of `valueType`; for f32,
 * f32(i) rounded to nearest even by hand (WGSL leaves the rounding of inexact conversions open), as a
 * Float32Array store rounds on the CPU.
 */
export function indexValueWgsl(valueType: 'f32' | 'i32' | 'u32'): string {
  if (valueType !== 'f32') return 'fn indexValue(i: u32) -> u32 { return i; }';
  return `fn indexValue(i: u32) -> u32 {
  if (i < 0x1000000u) { return bitcast<u32>(f32(i)); }
  var drop = 8u - countLeadingZeros(i);
  var mantissa = i >> drop;
  let rest = i & ((1u << drop) - 1u);
  let half = 1u << (drop - 1u);
  if (rest > half || (rest == half && (mantissa & 1u) == 1u)) { mantissa += 1u; }
  if (mantissa == 0x1000000u) { mantissa = 0x800000u; drop += 1u; }
  return ((127u + 23u + drop) << 23u) | (mantissa & 0x7fffffu);
}`;
}

/**
 * `flushF32(bits) -> u32` (a subnormal becomes the zero of its sign), `addF32(a, b) -> u32` (the
 * canonical sum of two flushed f32 values, as bits), `canonicalF32(bits) -> u32` (NaN as
 * `CANONICAL_NAN`), and `addF32Fast`, the plain sum for callers that need no reproducibility.
 */
export const f32SumWgsl = `const CANONICAL_NAN: u32 = 0x7fc00000u;
fn flushF32(bits: u32) -> u32 { return select(bits, bits & 0x80000000u, (bits & 0x7f800000u) == 0u); }
fn addF32(a: u32, b: u32) -> u32 { return flushF32(bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b))); }
fn addF32Fast(a: u32, b: u32) -> u32 { return bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b)); }
fn canonicalF32(bits: u32) -> u32 { return select(bits, CANONICAL_NAN, (bits & 0x7fffffffu) > 0x7f800000u); }`;
