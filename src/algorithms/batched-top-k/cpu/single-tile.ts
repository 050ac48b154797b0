import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { Segment, type TopKKernelParams, f32Signed, resolveSegment, sortByRank, writeSegmentOutputs } from './common.js';

/*
 * The 'single-tile' variant: one workgroup per segment (grid maxSegments), the whole segment in one
 * tile of workgroup memory, no temporary storage.
 *
 * Workgroup memory (policy.tileItems * 8 + 4096 bytes), in words with T = tileItems:
 *   [0, T)        signed ordered keys of the tile, by segment-local index
 *   [T, 2T)       candidate indices (then the selection's indices)
 *   [2T, 2T+256)  the digit histogram
 *
 * Selection is an in-tile radix select over the ordered key, 8-bit digits MSB first: histogram the
 * candidates' digit, find the digit b whose bucket holds the `remaining`-th best, keep the bucket's
 * members as the next candidates (in index order). It ends when a whole bucket is taken or after the
 * last digit, with bounds [lo, hi] of the threshold bucket: the selection is every key above hi plus
 * the first `ties` keys within [lo, hi] in index order. One pass collects it (in index order), which
 * is then sorted best first when `sorted`.
 *
 * With device-only size bounds the plan also launches radix-select; this kernel exits when the
 * device bounds' max exceeds the tile (a uniform branch, no host read-back).
 */

/** Workgroup memory of 'single-tile'. */
export function singleTileWorkgroupBytes(tileItems: number): number {
  return tileItems * 8 + 4096;
}

const segmentOfWorkgroup = new Segment();

/** The 'single-tile' kernel. */
export function runSingleTile(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  if (ctx.failed() || !ctx.singleTileBranch()) return;
  const segment = workgroupId;
  if (segment >= ctx.activeSegments()) return;
  const tile = ctx.policy.tileItems;
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, tile, seg);
  const { start, size, take, mask } = seg;
  const memory = shared.i32;
  if (take === 0) {
    writeSegmentOutputs(ctx, segment, seg, memory, tile, 0);
    return;
  }
  const indexBase = tile;
  const histogram = 2 * tile;
  memory.fill(0, histogram, histogram + 256);

  // Load the tile and histogram the first digit (bins by the top byte of sk: digit = bin ^ 128).
  const keys = ctx.keys;
  if (ctx.isF32) {
    for (let j = 0; j < size; j++) {
      const s = f32Signed(keys[start + j]!) ^ mask;
      memory[j] = s;
      memory[histogram + (s >>> 24)]!++;
    }
  } else {
    const xor = ctx.integerKeyXor ^ mask;
    for (let j = 0; j < size; j++) {
      const s = keys[start + j]! ^ xor;
      memory[j] = s;
      memory[histogram + (s >>> 24)]!++;
    }
  }

  let remaining = take;
  let candidates = size; // pass 0: every key, implicitly
  let prefix = 0; // bits of sk fixed so far
  let lo = 0;
  let hi = 0;
  let ties = 0;
  for (let pass = 0; pass < 4; pass++) {
    const shift = 24 - 8 * pass;
    if (pass > 0) {
      memory.fill(0, histogram, histogram + 256);
      for (let c = 0; c < candidates; c++) memory[histogram + ((memory[memory[indexBase + c]!]! >>> shift) & 255)]!++;
    }
    // Walk digits from the best down (pass 0 bins are permuted by the sign bit).
    const binXor = pass === 0 ? 128 : 0;
    let above = 0;
    let digit = 255;
    let inBucket = 0;
    for (; digit >= 0; digit--) {
      inBucket = memory[histogram + (digit ^ binXor)]!;
      if (above + inBucket >= remaining) break;
      above += inBucket;
    }
    const bin = digit ^ binXor;
    prefix |= bin << shift;
    lo = prefix;
    hi = prefix | ((1 << shift) - 1);
    remaining -= above;
    if (inBucket === remaining || pass === 3) {
      ties = remaining;
      break;
    }
    // The bucket's members are the next candidates, kept in index order (writes never pass reads).
    // Branch-free compaction: every item is written, the count advances for members only.
    let kept = 0;
    if (pass === 0) {
      for (let j = 0; j < size; j++) {
        memory[indexBase + kept] = j;
        kept += +(memory[j]! >>> 24 === bin);
      }
    } else {
      for (let c = 0; c < candidates; c++) {
        const j = memory[indexBase + c]!;
        memory[indexBase + kept] = j;
        kept += +(((memory[j]! >>> shift) & 255) === bin);
      }
    }
    candidates = kept;
  }

  // Collect the selection in index order into the front of the tile (writes never pass reads).
  let selected = 0;
  for (let j = 0; j < size; j++) {
    const s = memory[j]!;
    const tie = +(s >= lo) & +(s <= hi) & +(ties > 0);
    ties -= tie;
    memory[selected] = s;
    memory[indexBase + selected] = j;
    selected += +(s > hi) | tie;
  }
  if (ctx.sorted) sortByRank(memory, memory, 0, indexBase, selected);
  writeSegmentOutputs(ctx, segment, seg, memory, indexBase, selected);
}
