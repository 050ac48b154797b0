import type { KernelParams } from '../../../backends/cpu/segments.js';
import { mergePassesFor } from '../problem.js';
import type { SortContext } from './context.js';
import type { MergeSortSource } from './kernels.js';
import { indexValue, orderedBits } from './keys.js';
import { RadixSegment } from './radix.js';

/*
 * 'merge-pass', the twin of webgpu/merge.ts: workgroup g of a segment writes places
 * [g * tile, (g + 1) * tile) of the merge of its pair of runs (tile << pass keys each, in buffer
 * pass % 2) into buffer (pass + 1) % 2, or into the outputs in the segment's last pass. Where the
 * range starts and ends on the merge path is the same least-m search as the WGSL's (the result does
 * not depend on how it is searched); ties take the first run.
 */

const segment = new RadixSegment();

/** The places of the first run among the first `d` of the merge of a = keys[aAt, aAt + lenA) and b = keys[bAt, bAt + lenB), sort keys compared. */
function splitAt(keys: Uint32Array, aAt: number, lenA: number, bAt: number, lenB: number, d: number, kind: 0 | 1 | 2, mask: number): number {
  let lo = d > lenB ? d - lenB : 0;
  let hi = d < lenA ? d : lenA;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if ((orderedBits(keys[aAt + m]!, kind) ^ mask) >>> 0 <= (orderedBits(keys[bAt + d - 1 - m]!, kind) ^ mask) >>> 0) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** 'merge-pass' (grid: maxSegments * mergeTiles; `pass` the launch's) over any source of segments. */
export function mergePass(ctx: MergeSortSource, workgroupId: number, pass: number): void {
  const { tile, tilesPerSegment } = ctx.merge;
  const i = Math.floor(workgroupId / tilesPerSegment);
  const g = workgroupId - i * tilesPerSegment;
  if (!ctx.enterMerge(i, segment)) return;
  const { start, size, mask } = segment;
  const passes = mergePassesFor(size, tile);
  if (passes <= pass || g * tile >= size) return;
  const kind = ctx.keyKind;
  const run = tile * 2 ** pass;
  const outLo = g * tile;
  const pairStart = Math.floor(outLo / (2 * run)) * 2 * run;
  const lenA = Math.min(run, size - pairStart);
  const lenB = Math.min(run, size - pairStart - lenA);
  const temp = ctx.tempU32;
  const src = ctx.keysSlots[pass & 1]!;
  const srcValues = ctx.valuesSlots[pass & 1]!;
  const aAt = src + start + pairStart;
  const bAt = aAt + lenA;
  const d0 = outLo - pairStart;
  const d1 = Math.min(d0 + tile, lenA + lenB);
  let ia = splitAt(temp, aAt, lenA, bAt, lenB, d0, kind, mask);
  const aEnd = splitAt(temp, aAt, lenA, bAt, lenB, d1, kind, mask);
  let ib = d0 - ia;
  const bEnd = d1 - aEnd;
  const last = pass + 1 === passes;
  const dst = ctx.keysSlots[(pass + 1) & 1]!;
  const dstValues = ctx.valuesSlots[(pass + 1) & 1]!;
  const valueMode = ctx.valueMode;
  let keyA = ia < aEnd ? (orderedBits(temp[aAt + ia]!, kind) ^ mask) >>> 0 : 0;
  let keyB = ib < bEnd ? (orderedBits(temp[bAt + ib]!, kind) ^ mask) >>> 0 : 0;
  for (let at = start + outLo, end = start + pairStart + d1; at < end; at++) {
    const takeA = ia < aEnd && (ib >= bEnd || keyA <= keyB);
    const from = takeA ? aAt + ia : bAt + ib;
    const bits = temp[from]!;
    const value = valueMode === 0 ? 0 : temp[from - src + srcValues]!;
    if (last) {
      ctx.keysOut[at] = bits;
      if (valueMode === 1) ctx.valuesOut![at] = value;
      else if (valueMode === 2) ctx.valuesOut![at] = indexValue(value, ctx.indexAsF32);
    } else {
      temp[dst + at] = bits;
      if (valueMode !== 0) temp[dstValues + at] = value;
    }
    if (takeA) {
      ia++;
      if (ia < aEnd) keyA = (orderedBits(temp[aAt + ia]!, kind) ^ mask) >>> 0;
    } else {
      ib++;
      if (ib < bEnd) keyB = (orderedBits(temp[bAt + ib]!, kind) ^ mask) >>> 0;
    }
  }
}

/** The sort's 'merge-pass' kernel. */
export function runMergePass(workgroupId: number, _n: number, _shared: unknown, { ctx, pass }: KernelParams<SortContext>): void {
  mergePass(ctx, workgroupId, pass);
}
