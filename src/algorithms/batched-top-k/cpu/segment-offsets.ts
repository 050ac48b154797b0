import { type TopKKernelParams, countOf, readSource } from './common.js';

/*
 * 'segment-offsets' (grid 1, packed layout with per-segment sizes): the exclusive scan of the sizes
 * into slot `offsets` (maxSegments + 1 words; entry maxSegments is the total). Segments at or past
 * numSegments count as empty. A sum past 2^32 - 1 (only under 'trust') saturates, so starts stay
 * past the keys rather than wrapping into them.
 */

/** The 'segment-offsets' kernel. */
export function runSegmentOffsets(workgroupId: number, _numWorkgroups: number, _shared: unknown, params: TopKKernelParams): void {
  if (workgroupId !== 0) return;
  const ctx = params.ctx;
  if (ctx.failed()) return;
  if (ctx.offsetsSlot < 0) throw new Error("internal: segment-offsets launched without the 'offsets' slot");
  const offsets = ctx.tempU32;
  const base = ctx.offsetsSlot;
  const segments = ctx.activeSegments();
  const maxSegments = ctx.maxSegments;
  const sizes = ctx.sizes;
  let sum = 0;
  for (let i = 0; i < segments; i++) {
    offsets[base + i] = sum;
    sum += countOf(readSource(sizes, i));
    if (sum > 4294967295) sum = 4294967295;
  }
  offsets.fill(sum, base + segments, base + maxSegments + 1);
}
