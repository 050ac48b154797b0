import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { rowRadixCandidateRoom } from '../policy.js';
import { Segment, type TopKContext, type TopKKernelParams, f32Signed, resolveSegment, signBit, sortByRank, writeSegmentOutputs } from './common.js';

/*
 * The 'row-radix' variant (grid maxSegments; the WGSL twin: webgpu/row-radix.ts): one workgroup per
 * segment does every digit pass of a radix select over its row itself, with no temporary state
 * between launches. Digits of policy.radixBits bits of the 32-bit ordered key, from the top:
 *
 *   digit 0   the histogram of every key of the row; the threshold bucket b0
 *   digit 1   a second pass over the row: the keys of bucket b0 compacted as candidates (their
 *             ordered keys, in workgroup memory up to rowRadixCandidateRoom keys, else at the
 *             segment's start in `rowCandidates`), with their digit-1 histogram
 *   digit p   (p >= 2) the histogram of the candidates that share the digits chosen so far
 *
 * It ends when a whole bucket is taken or after the last digit, with the bucket's bounds [lo, hi]
 * and `ties`, as single-tile does: the selection is every key above hi plus the first `ties` keys
 * within [lo, hi] by index. A last pass over the row collects it in index order; sorted output
 * sorts it in workgroup memory (a selection past the tile is written in index order and sorted after
 * by the selection sort, plan.ts). Candidates come in whatever order the invocations appended them:
 * only their keys are used, so the results never depend on it.
 *
 * Workgroup memory, in words with B = 2^radixBits and R = max(rowRadixCandidateRoom, 2 min(kMax,
 * maxSegmentSize)): [0, B) the digit histogram; [B, B + R) the candidates, then the selection's keys
 * and indices (or its indices alone when unsorted).
 */

/** Workgroup memory of 'row-radix' (the WGSL kernel keeps its unsorted selection in the outputs instead). */
export function rowRadixWorkgroupBytes(ctx: TopKContext): number {
  const selected = Math.min(ctx.kMax, ctx.tilesPerSegment * ctx.policy.radixTileItems);
  return 4 * (ctx.radixDigits + Math.max(rowRadixCandidateRoom(ctx.policy), 2 * selected));
}

const segmentOfWorkgroup = new Segment();

/** The ordered key (keys.ts, as an unsigned number) of a key's bits in a segment of direction mask `mask`. */
function orderedOf(ctx: TopKContext, bits: number, mask: number): number {
  const sk = ctx.isF32 ? f32Signed(bits) ^ mask : bits ^ ctx.integerKeyXor ^ mask;
  return (sk ^ signBit) >>> 0;
}

/** The 'row-radix' kernel. */
export function runRowRadix(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  if (ctx.failed() || ctx.singleTileBranch()) return;
  const segment = workgroupId;
  if (segment >= ctx.activeSegments()) return;
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, ctx.tilesPerSegment * ctx.policy.radixTileItems, seg);
  const { start, size, take, mask } = seg;
  const memory = shared.i32;
  const bins = ctx.radixDigits;
  const pool = bins;
  if (take === 0) {
    writeSegmentOutputs(ctx, segment, seg, memory, pool, 0);
    return;
  }
  const keys = ctx.keys;
  const bits = ctx.radixBits;
  const passes = ctx.radixPasses;
  const shiftOf = (p: number) => Math.max(0, 32 - bits * (p + 1));
  const widthMask = (p: number) => (1 << (32 - bits * p - shiftOf(p))) - 1;

  // Digit 0: the histogram of every key.
  memory.fill(0, 0, bins);
  const shift0 = shiftOf(0);
  for (let j = 0; j < size; j++) memory[orderedOf(ctx, keys[start + j]!, mask) >>> shift0]!++;
  let remaining = take;
  let prefix = 0;
  let lo = 0;
  let hi = 0;
  let ties = 0;
  let candidates = 0;
  let inTemp = false;
  const room = rowRadixCandidateRoom(ctx.policy);
  const temp = ctx.temp;
  const tempAt = ctx.rowCandidatesSlot + start;
  const tempRoom = Math.max(0, ctx.rowCandidateWords - start);
  for (let p = 0; p < passes; p++) {
    const shift = shiftOf(p);
    const digitMask = widthMask(p);
    if (p >= 2) {
      // The candidates that share the digits chosen so far, by digit p.
      memory.fill(0, 0, bins);
      // Digits < p fill the bits from 32 - bits * p up.
      const fixed = (-1 << (32 - bits * p)) >>> 0;
      for (let c = 0; c < candidates; c++) {
        const key = (inTemp ? temp[tempAt + c]! : memory[pool + c]!) >>> 0;
        if ((key & fixed) >>> 0 === prefix) memory[(key >>> shift) & digitMask]!++;
      }
    }
    // The digit whose bucket holds the remaining-th best key (digits from the highest down).
    let above = 0;
    let digit = bins - 1;
    let inBucket = 0;
    for (; digit >= 0; digit--) {
      inBucket = memory[digit]!;
      if (above + inBucket >= remaining) break;
      above += inBucket;
    }
    if (digit < 0) {
      // Fewer keys than take (only inconsistent input under 'trust'): every key is taken.
      digit = 0;
      above = 0;
      inBucket = remaining;
    }
    prefix = (prefix + digit * 2 ** shift) >>> 0;
    remaining -= above;
    if (inBucket === remaining || p === passes - 1) {
      lo = prefix;
      hi = prefix + 2 ** shift - 1;
      ties = remaining;
      break;
    }
    if (p === 0) {
      // Digit 1: the bucket's keys compacted as candidates, with their digit-1 histogram.
      inTemp = inBucket > room;
      memory.fill(0, 0, bins);
      const nextShift = shiftOf(1);
      const nextMask = widthMask(1);
      for (let j = 0; j < size; j++) {
        const key = orderedOf(ctx, keys[start + j]!, mask);
        if (key >>> shift !== digit) continue;
        if (!inTemp) memory[pool + candidates++] = key | 0;
        else if (candidates < tempRoom) temp[tempAt + candidates++] = key | 0;
        memory[(key >>> nextShift) & nextMask]!++;
      }
    }
  }

  // The selection in index order: keys above hi, and the first `ties` keys within [lo, hi].
  const sortInMemory = ctx.sorted;
  const keysAt = pool;
  const indicesAt = sortInMemory ? pool + take : pool;
  let selected = 0;
  for (let j = 0; j < size && selected < take; j++) {
    const key = orderedOf(ctx, keys[start + j]!, mask);
    if (key > hi || (key >= lo && ties > 0)) {
      if (key <= hi) ties--;
      if (sortInMemory) memory[keysAt + selected] = key ^ signBit;
      memory[indicesAt + selected++] = j;
    }
  }
  if (sortInMemory) sortByRank(memory, memory, keysAt, indicesAt - keysAt, selected);
  writeSegmentOutputs(ctx, segment, seg, memory, indicesAt, selected);
}
