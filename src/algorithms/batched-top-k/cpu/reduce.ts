import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { Segment, type TopKContext, type TopKKernelParams, f32Signed, resolveSegment, signBit, writeSegmentOutputs } from './common.js';

/*
 * The 'reduce' variant (kMax <= policy.reduceMaxK). Workgroup w handles chunk w % chunksPerSegment
 * of segment floor(w / chunksPerSegment), policy.reduceChunkItems keys. On a GPU each invocation
 * keeps a register top-k of its strided items and the workgroup merges them; on the CPU one bounded
 * insertion list (best first) with a threshold test is the vectorised equivalent: most keys are
 * rejected by one compare against the current k-th best.
 *
 * One chunk per segment: the workgroup writes the outputs. Several: it writes its list to slot
 * `partials` (pairs (orderedKey, index) per workgroup, kMax pairs, padded with the sentinel
 * (0, 0xFFFFFFFF)) and 'reduce-merge' (one workgroup per segment) merges the chunks' lists.
 *
 * k <= 2 keeps the list in locals (arg-max and top-2, common for routers).
 *
 * Segments of at most policy.reduceSmallSegmentItems keys (routers with 8 or 16 experts) get one
 * invocation each instead: workgroup w handles segments [w * workgroupSize, (w + 1) * workgroupSize).
 *
 * Workgroup memory: the list, keys in words [0, kMax), indices in words [kMax, 2 kMax).
 */

/** Workgroup memory of 'reduce' and 'reduce-merge'. */
export function reduceWorkgroupBytes(kMax: number): number {
  return Math.max(16, kMax * 8);
}

const segmentOfWorkgroup = new Segment();

/**
 * The best `take` of keys[from, to) into `list` (signed ordered keys at [0, take), segment-local
 * indices at [indexBase, indexBase + take)), best first; returns how many were kept.
 * Keys are scanned in ascending index order, so an equal key never displaces a kept one.
 */
function topOfRange(
  ctx: TopKContext,
  from: number,
  to: number,
  start: number,
  mask: number,
  take: number,
  list: Int32Array,
  indexBase: number,
): number {
  if (take <= 2 && to - from >= take) return topOneOrTwoOfRange(ctx, from, to, start, mask, take, list, indexBase);
  const keys = ctx.keys;
  const isF32 = ctx.isF32;
  const integerXor = ctx.integerKeyXor ^ mask;
  let count = 0;
  let p = from;
  for (; p < to && count < take; p++) {
    const s = isF32 ? f32Signed(keys[p]!) ^ mask : keys[p]! ^ integerXor;
    let at = count++;
    while (at > 0 && list[at - 1]! < s) {
      list[at] = list[at - 1]!;
      list[indexBase + at] = list[indexBase + at - 1]!;
      at--;
    }
    list[at] = s;
    list[indexBase + at] = p - start;
  }
  if (count < take) return count;
  const last = take - 1;
  let threshold = list[last]!;
  if (isF32) {
    // A branch-free pre-test rejects most keys: `rotated` is the 'max' sk without the NaN and -0
    // fixes, shifted so that every NaN ranks above every number. It orders numbers exactly (-0 just
    // below +0) and never rejects a key the exact test would take; survivors get the exact key.
    let rotatedThreshold = (((threshold ^ mask) - 0x7fffff) | 0) ^ mask;
    for (; p < to; p++) {
      const bits = keys[p]!;
      if (((((bits ^ ((bits >> 31) >>> 1)) - 0x7fffff) | 0) ^ mask) <= rotatedThreshold) continue;
      const s = f32Signed(bits) ^ mask;
      if (s > threshold) {
        let at = last;
        while (at > 0 && list[at - 1]! < s) {
          list[at] = list[at - 1]!;
          list[indexBase + at] = list[indexBase + at - 1]!;
          at--;
        }
        list[at] = s;
        list[indexBase + at] = p - start;
        threshold = list[last]!;
        rotatedThreshold = (((threshold ^ mask) - 0x7fffff) | 0) ^ mask;
      }
    }
  } else {
    for (; p < to; p++) {
      const s = keys[p]! ^ integerXor;
      if (s > threshold) {
        let at = last;
        while (at > 0 && list[at - 1]! < s) {
          list[at] = list[at - 1]!;
          list[indexBase + at] = list[indexBase + at - 1]!;
          at--;
        }
        list[at] = s;
        list[indexBase + at] = p - start;
        threshold = list[last]!;
      }
    }
  }
  return take;
}

/** {@link topOfRange} for take 1 or 2 (arg-max and top-2, common for routers), in locals instead of memory. */
function topOneOrTwoOfRange(
  ctx: TopKContext,
  from: number,
  to: number,
  start: number,
  mask: number,
  take: number,
  list: Int32Array,
  indexBase: number,
): number {
  const keys = ctx.keys;
  const isF32 = ctx.isF32;
  const integerXor = ctx.integerKeyXor ^ mask;
  let best = isF32 ? f32Signed(keys[from]!) ^ mask : keys[from]! ^ integerXor;
  let bestIndex = from - start;
  // With take 1 the second entry stays below every key: the threshold is the best itself.
  let second = signBit;
  let secondIndex = -1;
  let p = from + 1;
  if (take === 2) {
    const s = isF32 ? f32Signed(keys[p]!) ^ mask : keys[p]! ^ integerXor;
    if (s > best) {
      second = best;
      secondIndex = bestIndex;
      best = s;
      bestIndex = p - start;
    } else {
      second = s;
      secondIndex = p - start;
    }
    p++;
  }
  let threshold = take === 2 ? second : best;
  if (isF32) {
    let rotatedThreshold = (((threshold ^ mask) - 0x7fffff) | 0) ^ mask;
    for (; p < to; p++) {
      const bits = keys[p]!;
      if (((((bits ^ ((bits >> 31) >>> 1)) - 0x7fffff) | 0) ^ mask) <= rotatedThreshold) continue;
      const s = f32Signed(bits) ^ mask;
      if (s > threshold) {
        if (s > best) {
          second = best;
          secondIndex = bestIndex;
          best = s;
          bestIndex = p - start;
        } else {
          second = s;
          secondIndex = p - start;
        }
        threshold = take === 2 ? second : best;
        rotatedThreshold = (((threshold ^ mask) - 0x7fffff) | 0) ^ mask;
      }
    }
  } else {
    for (; p < to; p++) {
      const s = keys[p]! ^ integerXor;
      if (s > threshold) {
        if (s > best) {
          second = best;
          secondIndex = bestIndex;
          best = s;
          bestIndex = p - start;
        } else {
          second = s;
          secondIndex = p - start;
        }
        threshold = take === 2 ? second : best;
      }
    }
  }
  list[0] = best;
  list[indexBase] = bestIndex;
  if (take === 2) {
    list[1] = second;
    list[indexBase + 1] = secondIndex;
  }
  return take;
}

/** The 'reduce' kernel. */
export function runReduce(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  if (ctx.failed()) return;
  if (ctx.reduceSegmentsPerWorkgroup > 0) {
    runReducePerInvocation(ctx, workgroupId, shared);
    return;
  }
  const chunks = ctx.chunksPerSegment;
  const segment = chunks === 1 ? workgroupId : Math.floor(workgroupId / chunks);
  if (segment >= ctx.activeSegments()) return;
  const chunk = workgroupId - segment * chunks;
  const chunkItems = ctx.policy.reduceChunkItems;
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, chunks * chunkItems, seg);
  const kMax = ctx.kMax;
  const list = shared.i32;
  const from = chunk * chunkItems;
  const to = Math.min(from + chunkItems, seg.size);
  const count = from < to && seg.take > 0 ? topOfRange(ctx, seg.start + from, seg.start + to, seg.start, seg.mask, seg.take, list, kMax) : 0;
  if (chunks === 1) {
    writeSegmentOutputs(ctx, segment, seg, list, kMax, count);
    return;
  }
  const partials = ctx.temp;
  const base = ctx.partialsSlot + workgroupId * kMax * 2;
  for (let j = 0; j < count; j++) {
    partials[base + 2 * j] = list[j]! ^ signBit;
    partials[base + 2 * j + 1] = list[kMax + j]!;
  }
  for (let j = count; j < kMax; j++) {
    partials[base + 2 * j] = 0;
    partials[base + 2 * j + 1] = -1; // 0xFFFFFFFF
  }
}

/**
 * 'reduce' with one invocation per segment (short segments): workgroup w handles segments
 * [w * segmentsPerWorkgroup, (w + 1) * segmentsPerWorkgroup), each as a one-chunk workgroup would.
 */
function runReducePerInvocation(ctx: TopKContext, workgroupId: number, shared: WorkgroupMemory): void {
  const perWorkgroup = ctx.reduceSegmentsPerWorkgroup;
  const first = workgroupId * perWorkgroup;
  const end = Math.min(first + perWorkgroup, ctx.activeSegments());
  const kMax = ctx.kMax;
  const list = shared.i32;
  const seg = segmentOfWorkgroup;
  for (let segment = first; segment < end; segment++) {
    resolveSegment(ctx, segment, ctx.chunksPerSegment * ctx.policy.reduceChunkItems, seg);
    const count = seg.size > 0 && seg.take > 0 ? topOfRange(ctx, seg.start, seg.start + seg.size, seg.start, seg.mask, seg.take, list, kMax) : 0;
    writeSegmentOutputs(ctx, segment, seg, list, kMax, count);
  }
}

/** The 'reduce-merge' kernel: one workgroup per segment merges its chunks' lists. */
export function runReduceMerge(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  if (ctx.failed()) return;
  const segment = workgroupId;
  if (segment >= ctx.activeSegments()) return;
  const chunks = ctx.chunksPerSegment;
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, chunks * ctx.policy.reduceChunkItems, seg);
  const kMax = ctx.kMax;
  const take = seg.take;
  const list = shared.i32;
  const partials = ctx.temp;
  let count = 0;
  for (let chunk = 0; chunk < chunks; chunk++) {
    const base = ctx.partialsSlot + (segment * chunks + chunk) * kMax * 2;
    // Each chunk's list is best first: stop at its first entry that does not enter.
    for (let j = 0; j < take; j++) {
      const index = partials[base + 2 * j + 1]!;
      if (index === -1) break; // sentinel
      const s = partials[base + 2 * j]! ^ signBit;
      if (count === take) {
        const worst = list[take - 1]!;
        if (s < worst || (s === worst && index > list[kMax + take - 1]!)) break;
      } else {
        count++;
      }
      let at = count - 1;
      while (at > 0) {
        const prev = list[at - 1]!;
        if (prev > s || (prev === s && list[kMax + at - 1]! < index)) break;
        list[at] = prev;
        list[kMax + at] = list[kMax + at - 1]!;
        at--;
      }
      list[at] = s;
      list[kMax + at] = index;
    }
  }
  writeSegmentOutputs(ctx, segment, seg, list, kMax, count);
}
