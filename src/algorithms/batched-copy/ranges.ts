import { SegkitRangeError } from '../../errors.js';

/*
 * What makes a batched copy well-formed, said once for the host check (plan time, host-known values)
 * and the device check (the 'check-*' kernels, device-only values), with one wording for both:
 * 1. every non-empty buffer's source range lies in `source` and its destination range in
 *    `destination` (an empty buffer reads and writes nothing, so its offsets are free); the lowest
 *    such buffer is reported, its source range before its destination range;
 * 2. then no two non-empty destination ranges overlap. Reported: the lowest buffer i whose
 *    destination range [a_i, b_i) holds the start of another non-empty buffer's range, with the
 *    lowest such other buffer j. (Two ranges overlap iff one holds the other's start, so a
 *    well-formed call has no such i; and this choice is what a bitmap of starts finds on a device.)
 */

/** The message of a range past its array. */
export function rangePastEnd(array: 'source' | 'destination', start: number, end: number, length: number): string {
  return `the ${array} range [${start}, ${end}) ends past the ${array}'s ${length} elements`;
}

/** The message of two overlapping destination ranges. */
export function rangesOverlap(start: number, end: number, other: number, otherStart: number, otherEnd: number): string {
  return `the destination range [${start}, ${end}) overlaps buffer ${other}'s destination range [${otherStart}, ${otherEnd})`;
}

/** One buffer of a copy, as the checks read it. */
export interface BufferRanges {
  readonly count: number;
  size(i: number): number;
  sourceOffset(i: number): number;
  destinationOffset(i: number): number;
}

/** The first violation of rule 1, or undefined. */
export function firstRangePastEnd(buffers: BufferRanges, sourceLength: number, destinationLength: number): SegkitRangeError | undefined {
  for (let i = 0; i < buffers.count; i++) {
    const size = buffers.size(i);
    if (size === 0) continue;
    const s = buffers.sourceOffset(i);
    if (s + size > sourceLength) return new SegkitRangeError('sourceOffsets', rangePastEnd('source', s, s + size, sourceLength), { segment: i, value: s, bounds: { min: 0, max: sourceLength - size } });
    const d = buffers.destinationOffset(i);
    if (d + size > destinationLength) {
      return new SegkitRangeError('destinationOffsets', rangePastEnd('destination', d, d + size, destinationLength), { segment: i, value: d, bounds: { min: 0, max: destinationLength - size } });
    }
  }
  return undefined;
}

/**
 * The first violation of rule 2, or undefined: O(n log n) (the non-empty buffers sorted by
 * destination start; a buffer's range holds another start iff at least two starts lie in it).
 */
export function firstOverlap(buffers: BufferRanges): SegkitRangeError | undefined {
  const order: number[] = [];
  for (let i = 0; i < buffers.count; i++) if (buffers.size(i) > 0) order.push(i);
  const starts = Float64Array.from(order, (i) => buffers.destinationOffset(i));
  const sorted = Float64Array.from(starts).sort();
  const lowerBound = (x: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (const i of order) {
    const a = buffers.destinationOffset(i);
    const b = a + buffers.size(i);
    if (lowerBound(b) - lowerBound(a) < 2) continue;
    let other = -1;
    for (const j of order) {
      const c = buffers.destinationOffset(j);
      if (j !== i && c >= a && c < b) {
        other = j;
        break;
      }
    }
    const c = buffers.destinationOffset(other);
    return new SegkitRangeError('destinationOffsets', rangesOverlap(a, b, other, c, c + buffers.size(other)), { segment: i, value: a });
  }
  return undefined;
}
