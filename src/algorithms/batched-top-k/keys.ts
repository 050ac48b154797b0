/**
 * The one ordering every variant and backend uses, so that results are bit-identical.
 *
 * A key's bits become an unsigned 32-bit "ordered key" whose unsigned order is the selection order
 * for `'max'`: larger is better. NaN ranks above +Infinity (as in PyTorch) and all NaNs are equal;
 * `-0` and `+0` are equal. For `'min'` the ordered key is complemented, so selection is always
 * "largest ordered key first, then smaller index". Outputs carry the original key bits.
 */

/** Key element types top-k accepts. */
export type KeyType = 'f32' | 'i32' | 'u32';
/** Selection directions. */
export type SelectDirection = 'max' | 'min';
/** The directions top-k supports, in the order their device indices use (0 = max, 1 = min). */
export const selectDirections: readonly SelectDirection[] = ['max', 'min'];

/** Ordered key of an f32 key's bits for `'max'`. */
export function orderedF32(bits: number): number {
  if ((bits & 0x7fffffff) > 0x7f800000) return 0xffffffff; // NaN
  if (bits === 0x80000000 || bits === -0x80000000) return 0x80000000; // -0 is +0
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

/** Ordered key of a key's bits (read as u32) for a key type and direction. */
export function orderedKey(bits: number, keyType: KeyType, direction: SelectDirection): number {
  const ordered = keyType === 'f32' ? orderedF32(bits) : keyType === 'i32' ? (bits ^ 0x80000000) >>> 0 : bits >>> 0;
  return direction === 'max' ? ordered : ~ordered >>> 0;
}

/** Bits written into unused key slots: the worst key of the direction. */
export function keyFillBits(keyType: KeyType, direction: SelectDirection): number {
  if (keyType === 'f32') return direction === 'max' ? 0xff800000 : 0x7f800000; // -Infinity / +Infinity
  if (keyType === 'i32') return direction === 'max' ? 0x80000000 : 0x7fffffff;
  return direction === 'max' ? 0 : 0xffffffff;
}

/** Bits written into unused value slots: -1 for i32 and f32, 0xFFFFFFFF for u32. */
export function valueFillBits(valueType: 'f32' | 'i32' | 'u32'): number {
  return valueType === 'f32' ? 0xbf800000 : 0xffffffff;
}

/** Bits of a segment-local index written as a value of `valueType`. */
export function indexBits(index: number, valueType: 'f32' | 'i32' | 'u32', scratch: Float32Array, scratchBits: Uint32Array): number {
  if (valueType !== 'f32') return index >>> 0;
  scratch[0] = index;
  return scratchBits[0]!;
}
