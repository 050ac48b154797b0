import { SegkitRangeError, SegkitUsageError } from '../errors.js';
import type { Bounds } from '../params/param.js';
import { type NumericFacts, type OptionFacts, effectiveBounds } from '../params/resolve.js';
import { largerThanStride, outsideStaticBounds, pastTheItems } from '../types/messages.js';

/*
 * The segment geometry every segmented algorithm shares: where segment i starts and how long it
 * is, from `segmentSizes`, `segmentStride` (or packed), `numSegments` and `totalNumItems`; the
 * host-side checks of it where the values are known on the host, and the bounds the policies read.
 */

/** The resolved segment parameters. */
export interface SegmentFacts {
  readonly segmentSizes: NumericFacts;
  readonly segmentStride: NumericFacts | undefined;
  readonly numSegments: NumericFacts;
  readonly totalNumItems: NumericFacts | undefined;
}

/** Where the segmented input lives, for messages and bounds: its name and element count. */
export interface SegmentedInput {
  /** The argument's name, e.g. `keysIn`. */
  readonly name: string;
  /** What its elements are called in messages, e.g. `keys`. */
  readonly noun: string;
  readonly length: number;
}

/**
 * Host-side checks of the segment geometry where the sizes are known on the host: every segment
 * within the input, no size above the stride, the sum of the sizes within `totalNumItems`.
 */
export function checkGeometry(facts: SegmentFacts, input: SegmentedInput): void {
  const { segmentSizes, segmentStride, numSegments, totalNumItems } = facts;
  const n = numSegments.exact;
  if (n === undefined) return;
  if (segmentSizes.hostValues === undefined && segmentSizes.exact === undefined) return;
  const sizeAt = (i: number) => (segmentSizes.hostValues !== undefined ? (segmentSizes.hostValues[i] as number) : (segmentSizes.exact as number));
  let total = 0;
  // A device-only stride leaves the extents to the device check.
  const strideKnown = segmentStride === undefined || segmentStride.exact !== undefined;
  const stride = segmentStride?.exact;
  for (let i = 0; i < n; i++) {
    const size = sizeAt(i);
    if (stride !== undefined && size > stride) {
      throw new SegkitRangeError('segmentSizes', largerThanStride(size, stride), { segment: i, value: size });
    }
    const start = stride !== undefined ? i * stride : total;
    if (strideKnown && start + size > input.length) {
      throw new SegkitRangeError('segmentSizes', `segment ${i} ${pastTheItems(start + size, input.length, input.noun, input.name)}`, { segment: i, value: size });
    }
    total += size;
  }
  if (totalNumItems !== undefined) {
    const bounds = totalNumItems.staticBounds;
    if (total < bounds.min || total > bounds.max) {
      throw new SegkitRangeError('totalNumItems', outsideStaticBounds(total, bounds.min, bounds.max), { value: total, bounds });
    }
  }
}

/** Per-segment values, on the host or the device, must cover every one of a host-known numSegments. */
export function checkPerSegmentLengths(numSegments: NumericFacts, perSegment: readonly (NumericFacts | OptionFacts | undefined)[]): void {
  const n = numSegments.exact;
  if (n === undefined) return;
  for (const f of perSegment) {
    if (f === undefined || f.kind !== 'perSegment') continue;
    const noun = 'options' in f ? 'options' : 'values';
    if (f.hostValues !== undefined && f.hostValues.length < n) {
      throw new SegkitUsageError(`${f.name}: ${f.hostValues.length} per-segment ${noun} for numSegments ${n}`);
    }
    if (f.deviceValues !== undefined && f.deviceValues.length < n) {
      throw new SegkitUsageError(`${f.name}: a device array of ${f.deviceValues.length} ${noun} for numSegments ${n}`);
    }
  }
}

/** The segment-size bounds that hold on the host, for the policy selectors: a segment never holds more items than its stride. */
export function segmentSizeBounds(facts: SegmentFacts): Bounds {
  const bounds = effectiveBounds(facts.segmentSizes);
  const stride = facts.segmentStride === undefined ? undefined : effectiveBounds(facts.segmentStride);
  return stride === undefined ? bounds : { min: bounds.min, max: Math.min(bounds.max, stride.max) };
}

/** The largest segment size the host can promise; no segment holds more items than the input has. */
export function maxSegmentSizeOf(facts: SegmentFacts, input: SegmentedInput): number {
  return Math.min(segmentSizeBounds(facts).max, input.length);
}

/**
 * The grid bound on segments: the host value of numSegments, or as many segments as the outputs can
 * hold (`outputSegments`: the most segments the outputs' length allows).
 */
export function maxSegmentsOf(facts: SegmentFacts, outputSegments: number): number {
  return facts.numSegments.exact ?? Math.min(facts.numSegments.staticBounds.max, outputSegments);
}

/**
 * The extent of the segments within the input, for buffers that mirror it (a segment's scratch at
 * its own start): packed, at most totalNumItems; strided, the last segment's start plus its size.
 */
export function segmentsExtent(facts: SegmentFacts, input: SegmentedInput, maxSegments: number): number {
  const maxSegmentSize = maxSegmentSizeOf(facts, input);
  const strideMax = facts.segmentStride === undefined ? undefined : effectiveBounds(facts.segmentStride).max;
  const extent = strideMax === undefined ? (facts.totalNumItems?.staticBounds.max ?? Infinity) : Math.max(0, maxSegments - 1) * strideMax + maxSegmentSize;
  return Math.min(input.length, extent);
}
