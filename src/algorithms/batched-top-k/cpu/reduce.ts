import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { publishedStatus, publishedValue, publishedWords } from '../../../dispatch/published-words.js';
import { publishedEntryStatus, publishedEntryWords } from '../problem.js';
import { Segment, type TopKContext, type TopKKernelParams, f32Signed, resolveSegment, signBit, writeSegmentOutputs } from './common.js';

/*
 * The 'reduce' variant (kMax <= policy.reduceMaxK). Workgroup w handles chunk w % chunksPerSegment
 * of segment floor(w / chunksPerSegment), policy.reduceChunkItems keys. On a GPU each invocation
 * keeps a register top-k of its strided items and the workgroup merges them; on the CPU one bounded
 * insertion list (best first) with a threshold test is the vectorised equivalent: most keys are
 * rejected by one compare against the current k-th best. For f32 keys that compare is made 32 keys at
 * a time into a mask, without a branch, and short ranges per result start from a sampled floor
 * (topOfRangeFloored), so that fewer keys reach the list's mispredicted branches.
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
  const size = to - from;
  const floored = ctx.isF32 && size >= maskedRangeMinItems && size <= flooredKeysPerTake * take;
  if (floored && topOfRangeFloored(ctx, from, to, start, mask, take, list, indexBase)) return take;
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
    // Keys that may enter, 32 at a time in a mask built without a branch (float compares against the
    // current last entry's value: a superset, exact for numbers, keeping every NaN for 'max', all keys
    // while the last entry is a NaN), then the exact test for each: a branch per key that the
    // threshold decides mispredicts at every entering key.
    const values = ctx.keysF32;
    const min = mask !== 0;
    let value = values[start + list[indexBase + last]!]!;
    for (; size >= maskedRangeMinItems && p + 32 <= to; p += 32) {
      let bits = value !== value ? -1 : min ? notAboveWord(values, p, value) : notBelowWord(values, p, value);
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const q = p + 31 - Math.clz32(low);
        const s = f32Signed(keys[q]!) ^ mask;
        if (s > threshold) {
          let at = last;
          while (at > 0 && list[at - 1]! < s) {
            list[at] = list[at - 1]!;
            list[indexBase + at] = list[indexBase + at - 1]!;
            at--;
          }
          list[at] = s;
          list[indexBase + at] = q - start;
          threshold = list[last]!;
          value = values[start + list[indexBase + last]!]!;
        }
      }
    }
    // The rest (and short ranges, where a word's mask costs more than it saves): a branch-free
    // pre-test rejects most keys. `rotated` is the 'max' sk without the NaN and -0 fixes, shifted so
    // that every NaN ranks above every number. It orders numbers exactly (-0 just below +0) and never
    // rejects a key the exact test would take; survivors get the exact key.
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

/** Ranges of at least this many keys take the word-mask scan (64 keys at k = 3 ran ~9% slower with it). */
const maskedRangeMinItems = 128;

/**
 * Ranges of at most this many keys per result take the sampled floor ({@link topOfRangeFloored}):
 * its sample is a serial chain of conditional moves, which pays where a list filled from the first
 * keys lets many through (on one thread against the plain word-mask scan: 4096x256 k = 8 -13%,
 * 2048x768 k = 8 -11%; 1024x1000 k = 5 +1%).
 */
const flooredKeysPerTake = 128;

/**
 * One key in this many is sampled for the floor of {@link topOfRangeFloored}, the second best sample:
 * ~30 keys reach it at random, fewer than k = 8 in ~6% of the ranges. Every 8th key's third best lets
 * ~23 through, short in ~4%, but its longer chain of conditional moves ran 4096x256 k = 8 ~13% slower.
 */
const sampleStride = 16;

/** The f32 value of a floor given as a 'max' signed ordered key. */
const floorF32 = new Float32Array(1);
const floorBits = new Int32Array(floorF32.buffer);

/**
 * The word-mask scan of {@link topOfRange} (f32 keys) from a sampled floor T (the second best of every
 * 16th key), so that from the first word on the masks pass only the ~30 keys at random that reach T,
 * of which fewer enter the list than the ~36 that a list filled from the range's first keys takes in
 * (k = 8 of 256). Only keys reaching T enter; when `take` did, the list is exact (every other key
 * ranks below T, so below every entry) and this returns true. Else (~6% at random for k = 8) it
 * returns false having written only `list`, and the caller scans again.
 */
function topOfRangeFloored(
  ctx: TopKContext,
  from: number,
  to: number,
  start: number,
  mask: number,
  take: number,
  list: Int32Array,
  indexBase: number,
): boolean {
  const keys = ctx.keys;
  // The two best samples, branch-free (int32 Math.max and Math.min compile to conditional moves).
  let first = signBit;
  let second = signBit;
  for (let p = from; p < to; p += sampleStride) {
    const s = f32Signed(keys[p]!) ^ mask;
    const firstOut = Math.min(first, s);
    first = Math.max(first, s);
    second = Math.max(second, firstOut);
  }
  const floor = second;
  // The floor's value (the 'max' ordered transform is its own inverse on numbers; a NaN's gives a NaN).
  const maxKey = floor ^ mask;
  floorBits[0] = maxKey ^ ((maxKey >> 31) >>> 1);
  const floorValue = floorF32[0]!;
  if (floorValue !== floorValue) return false;
  const values = ctx.keysF32;
  const min = mask !== 0;
  const last = take - 1;
  let count = 0;
  // While the list fills, keys must reach the floor; then they must beat its last entry (which does).
  let threshold = (floor - 1) | 0;
  let value = floorValue;
  let p = from;
  for (; p + 32 <= to; p += 32) {
    let bits = value !== value ? -1 : min ? notAboveWord(values, p, value) : notBelowWord(values, p, value);
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const q = p + 31 - Math.clz32(low);
      const s = f32Signed(keys[q]!) ^ mask;
      if (s > threshold) {
        let at = count < take ? count++ : last;
        while (at > 0 && list[at - 1]! < s) {
          list[at] = list[at - 1]!;
          list[indexBase + at] = list[indexBase + at - 1]!;
          at--;
        }
        list[at] = s;
        list[indexBase + at] = q - start;
        if (count === take) {
          threshold = list[last]!;
          value = values[start + list[indexBase + last]!]!;
        }
      }
    }
  }
  for (; p < to; p++) {
    const s = f32Signed(keys[p]!) ^ mask;
    if (s > threshold) {
      let at = count < take ? count++ : last;
      while (at > 0 && list[at - 1]! < s) {
        list[at] = list[at - 1]!;
        list[indexBase + at] = list[indexBase + at - 1]!;
        at--;
      }
      list[at] = s;
      list[indexBase + at] = p - start;
      if (count === take) threshold = list[last]!;
    }
  }
  return count === take;
}

/** Bit j set where keys[p + j] (j < 32) is not below `value` (a NaN compares false: it is set). */
function notBelowWord(keys: Float32Array, p: number, value: number): number {
  let bits = 0;
  for (let j = 0; j < 32; j += 4) {
    bits |=
      (+!(keys[p + j]! < value) << j) |
      (+!(keys[p + j + 1]! < value) << (j + 1)) |
      (+!(keys[p + j + 2]! < value) << (j + 2)) |
      (+!(keys[p + j + 3]! < value) << (j + 3));
  }
  return bits;
}

/** Bit j set where keys[p + j] (j < 32) is not above `value` (a NaN compares false: it is clear). */
function notAboveWord(keys: Float32Array, p: number, value: number): number {
  let bits = 0;
  for (let j = 0; j < 32; j += 4) {
    bits |=
      (+(keys[p + j]! <= value) << j) |
      (+(keys[p + j + 1]! <= value) << (j + 1)) |
      (+(keys[p + j + 2]! <= value) << (j + 2)) |
      (+(keys[p + j + 3]! <= value) << (j + 3));
  }
  return bits;
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
  const seg = segmentOfWorkgroup;
  const count = reduceChunk(ctx, workgroupId, segment, seg, shared.i32);
  if (chunks === 1) {
    writeSegmentOutputs(ctx, segment, seg, shared.i32, ctx.kMax, count);
    return;
  }
  storeChunkList(ctx, workgroupId, shared.i32, count, false);
}

/**
 * The 'reduce-chunk-merge' kernel: 'reduce''s chunk list, published, then the workgroup's arrival in
 * its segment's word of `arrivals`; the last to arrive merges as 'reduce-merge' does (webgpu/reduce.ts).
 * Stores before an `Atomics.add` are visible to the worker whose own add reads its result, so the
 * merging workgroup finds every list whole.
 */
export function runReduceChunkMerge(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  if (ctx.failed()) return;
  const chunks = ctx.chunksPerSegment;
  const segment = Math.floor(workgroupId / chunks);
  if (segment >= ctx.activeSegments()) return;
  const seg = segmentOfWorkgroup;
  storeChunkList(ctx, workgroupId, shared.i32, reduceChunk(ctx, workgroupId, segment, seg, shared.i32), true);
  if (Atomics.add(ctx.temp, ctx.arrivalsSlot + segment, 1) + 1 === chunks) mergeSegmentLists(ctx, segment, seg, shared.i32, true);
}

/** The best keys of workgroup `workgroupId`'s chunk of `segment` (resolved into `seg`) into `list`; returns how many. */
function reduceChunk(ctx: TopKContext, workgroupId: number, segment: number, seg: Segment, list: Int32Array): number {
  const chunks = ctx.chunksPerSegment;
  const chunk = workgroupId - segment * chunks;
  const chunkItems = ctx.policy.reduceChunkItems;
  resolveSegment(ctx, segment, chunks * chunkItems, seg);
  const from = chunk * chunkItems;
  const to = Math.min(from + chunkItems, seg.size);
  return from < to && seg.take > 0 ? topOfRange(ctx, seg.start + from, seg.start + to, seg.start, seg.mask, seg.take, list, ctx.kMax) : 0;
}

/**
 * Stores a chunk's list (its `count` best, then the sentinel (0, 0xFFFFFFFF) up to kMax) in slot
 * `partials`: pairs of words, or with `published` each word as two published words (problem.ts
 * publishedEntryWords an entry).
 */
function storeChunkList(ctx: TopKContext, workgroupId: number, list: Int32Array, count: number, published: boolean): void {
  const kMax = ctx.kMax;
  const partials = ctx.temp;
  const words = published ? publishedEntryWords : 2;
  const base = ctx.partialsSlot + workgroupId * kMax * words;
  for (let j = 0; j < kMax; j++) {
    const key = j < count ? (list[j]! ^ signBit) >>> 0 : 0;
    const index = j < count ? list[kMax + j]! >>> 0 : 0xffffffff;
    const at = base + j * words;
    if (!published) {
      partials[at] = key;
      partials[at + 1] = index;
      continue;
    }
    [partials[at], partials[at + 1]] = publishedWords(publishedEntryStatus, key);
    [partials[at + 2], partials[at + 3]] = publishedWords(publishedEntryStatus, index);
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
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, ctx.chunksPerSegment * ctx.policy.reduceChunkItems, seg);
  mergeSegmentLists(ctx, segment, seg, shared.i32, false);
}

/** Merges the chunk lists of `segment` (resolved in `seg`) from slot `partials` (plain or published words) and writes its outputs. */
function mergeSegmentLists(ctx: TopKContext, segment: number, seg: Segment, list: Int32Array, published: boolean): void {
  const chunks = ctx.chunksPerSegment;
  const kMax = ctx.kMax;
  const take = seg.take;
  const partials = ctx.temp;
  const words = published ? publishedEntryWords : 2;
  // Word w of entry j of a chunk's list from `base`: the key (w = 0) or the index (w = 1).
  const word = (base: number, j: number, w: number): number => {
    const at = base + j * words + w * (words / 2);
    if (!published) return partials[at]!;
    if (publishedStatus(partials[at]! >>> 0, partials[at + 1]! >>> 0) !== publishedEntryStatus) throw new Error(`internal: reduce-chunk-merge found entry ${j} of segment ${segment}'s lists unpublished`);
    return publishedValue(partials[at]! >>> 0, partials[at + 1]! >>> 0) | 0;
  };
  let count = 0;
  for (let chunk = 0; chunk < chunks; chunk++) {
    const base = ctx.partialsSlot + (segment * chunks + chunk) * kMax * words;
    // Each chunk's list is best first: stop at its first entry that does not enter.
    for (let j = 0; j < take; j++) {
      const index = word(base, j, 1);
      if (index === -1) break; // sentinel
      const s = word(base, j, 0) ^ signBit;
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
