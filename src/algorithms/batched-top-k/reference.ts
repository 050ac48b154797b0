import { type KeyType, type SelectDirection, indexBits, keyFillBits, orderedKey, valueFillBits } from './keys.js';

/** Host inputs of the reference top-k. */
export interface ReferenceTopKInput {
  keyType: KeyType;
  /** All keys, as bits. */
  keys: Uint32Array;
  /** Payload bits, one per key, if any. */
  values?: Uint32Array;
  /** Value type of the output values; with no payload, outputs are segment-local indices. */
  valueType?: 'f32' | 'i32' | 'u32';
  segmentStarts: ArrayLike<number>;
  segmentSizes: ArrayLike<number>;
  k: ArrayLike<number>;
  directions: ArrayLike<SelectDirection>;
  kMax: number;
  /** Whether to produce values at all. */
  withValues: boolean;
}

/**
 * A small, obviously correct top-k: for each segment, sort its indices by (ordered key descending,
 * index ascending) with the language's sort and take the first `min(k, size)`. Test oracle only.
 */
export function referenceTopK(input: ReferenceTopKInput): { keys: Uint32Array; values: Uint32Array } {
  const numSegments = input.segmentSizes.length;
  const keysOut = new Uint32Array(numSegments * input.kMax);
  const valuesOut = new Uint32Array(input.withValues ? numSegments * input.kMax : 0);
  const valueType = input.valueType ?? 'i32';
  const scratch = new Float32Array(1);
  const scratchBits = new Uint32Array(scratch.buffer);
  for (let segment = 0; segment < numSegments; segment++) {
    const start = input.segmentStarts[segment]!;
    const size = input.segmentSizes[segment]!;
    const direction = input.directions[segment]!;
    const order = Array.from({ length: size }, (_, i) => i);
    const rank = (i: number) => orderedKey(input.keys[start + i]!, input.keyType, direction);
    order.sort((a, b) => rank(b) - rank(a) || a - b);
    const taken = Math.min(input.k[segment]!, size, input.kMax);
    for (let slot = 0; slot < input.kMax; slot++) {
      const out = segment * input.kMax + slot;
      if (slot < taken) {
        const i = order[slot]!;
        keysOut[out] = input.keys[start + i]!;
        if (input.withValues) valuesOut[out] = input.values ? input.values[start + i]! : indexBits(i, valueType, scratch, scratchBits);
      } else {
        keysOut[out] = keyFillBits(input.keyType, direction);
        if (input.withValues) valuesOut[out] = valueFillBits(valueType);
      }
    }
  }
  return { keys: keysOut, values: valuesOut };
}
