/** The input of {@link referenceBatchedCopy}: both arrays as 32-bit words and every buffer's numbers. */
export interface ReferenceBatchedCopyInput {
  /** The source's words (an element's bits, whatever its dtype). */
  readonly source: Uint32Array;
  /** The destination's words before the copy. */
  readonly destination: Uint32Array;
  readonly sourceOffsets: ArrayLike<number>;
  readonly destinationOffsets: ArrayLike<number>;
  readonly sizes: ArrayLike<number>;
}

/**
 * A small, obviously correct batched copy on the host, for tests: the destination's words after
 * buffer `i` copied `sizes[i]` words from `sourceOffsets[i]` to `destinationOffsets[i]`, one word at
 * a time. It assumes a well-formed call (ranges within their arrays, destinations apart).
 *
 * @example
 * ```ts
 * referenceBatchedCopy({ source: new Uint32Array([1, 2, 3]), destination: new Uint32Array(4), sourceOffsets: [1], destinationOffsets: [2], sizes: [2] });
 * // Uint32Array [0, 0, 2, 3]
 * ```
 */
export function referenceBatchedCopy(input: ReferenceBatchedCopyInput): Uint32Array {
  const out = Uint32Array.from(input.destination);
  for (let i = 0; i < input.sizes.length; i++) {
    for (let k = 0; k < input.sizes[i]!; k++) out[input.destinationOffsets[i]! + k] = input.source[input.sourceOffsets[i]! + k]!;
  }
  return out;
}
