import { type KeyType, indexBits } from '../batched-top-k/keys.js';
import { type SortOrder, sortKey } from './keys.js';

/** Host inputs of the reference sort. */
export interface ReferenceSegmentedSortInput {
  keyType: KeyType;
  /** All keys, as bits. */
  keys: Uint32Array;
  /** Payload bits, one per key, if any; without them values are segment-local indices. */
  values?: Uint32Array;
  /** Value type of the output values (indices are written in it). */
  valueType?: 'f32' | 'i32' | 'u32';
  segmentStarts: ArrayLike<number>;
  segmentSizes: ArrayLike<number>;
  orders: ArrayLike<SortOrder>;
  /** Whether to produce values at all. */
  withValues: boolean;
  /** The outputs before the call (bits): what no segment covers stays as it was. */
  keysOut: Uint32Array;
  valuesOut?: Uint32Array;
}

/**
 * A small, obviously correct segmented sort: for each segment, sort its indices by (sort key, index)
 * with the language's sort and write the keys (and payloads or indices) in that order at the
 * segment's own start. Test oracle only.
 */
export function referenceSegmentedSort(input: ReferenceSegmentedSortInput): { keys: Uint32Array; values: Uint32Array } {
  const keysOut = input.keysOut.slice();
  const valuesOut = input.valuesOut?.slice() ?? new Uint32Array(0);
  const valueType = input.valueType ?? 'u32';
  const scratch = new Float32Array(1);
  const scratchBits = new Uint32Array(scratch.buffer);
  for (let segment = 0; segment < input.segmentSizes.length; segment++) {
    const start = input.segmentStarts[segment]!;
    const size = input.segmentSizes[segment]!;
    const descending = input.orders[segment] === 'descending';
    const order = Array.from({ length: size }, (_, i) => i);
    const rank = (i: number) => sortKey(input.keys[start + i]!, input.keyType, descending);
    order.sort((a, b) => rank(a) - rank(b) || a - b);
    order.forEach((i, slot) => {
      keysOut[start + slot] = input.keys[start + i]!;
      if (input.withValues) valuesOut[start + slot] = input.values ? input.values[start + i]! : indexBits(i, valueType, scratch, scratchBits);
    });
  }
  return { keys: keysOut, values: valuesOut };
}
