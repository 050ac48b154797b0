import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';

/*
 * The radix sort's CPU kernels over any source of segments (the sort's own input, or top-k's
 * selection): one LSD pass over 8 bits of the sort key per launch triple (histogram, scan, scatter),
 * stable because each tile scatters its items in index order after the items of earlier tiles. The
 * double buffer carries each item's key bits and value, so the last pass writes them without a
 * gather and a source may be its own destination (top-k sorts its outputs in place).
 *
 * A launch's `pass` is `group * 4 + digit` (problem.ts `radixLaunchPass`): workgroup w is tile
 * w % tiles of segment group * groupSegments + w / tiles, and its counts are the w-th 256 words of
 * the counts slot, which every group reuses. WGSL twin: webgpu/radix.ts.
 */

/** A segment as the radix kernels see it. */
export class RadixSegment {
  /** Where its items are in the source and in the double buffer. */
  start = 0;
  size = 0;
  /** XOR turning an ordered key into the sort key (0 ascending, 0xFFFFFFFF descending). */
  mask = 0;
}

/** What the radix kernels read and write. */
export interface RadixSortSource {
  readonly tiles: number;
  readonly groupSegments: number;
  readonly tempU32: Uint32Array;
  /** Word offsets of the slots. */
  readonly countsSlot: number;
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  readonly hasValues: boolean;
  /** Resolves segment `i` into `out`; false when the radix kernels have nothing to do for it. */
  enterRadix(i: number, out: RadixSegment): boolean;
  /** Pass 0's key bits and value of item `j` of the segment at `start`. */
  sourceKey(start: number, j: number): number;
  sourceValue(start: number, j: number): number;
  /** The ordered key (unsigned) of key bits. */
  radixOrderedKey(bits: number): number;
  /** The last pass's write of output slot `at`. */
  write(start: number, at: number, bits: number, value: number): void;
}

const segment = new RadixSegment();

/** Workgroup memory of the radix kernels: 256 counters. */
export const radixWorkgroupBytes = 256 * 4;

/** Tile `t` of a segment of `size` items: items [lo, hi). */
function tileRange(size: number, tiles: number, t: number): [number, number] {
  const chunk = Math.ceil(size / tiles);
  const lo = Math.min(size, t * chunk);
  return [lo, Math.min(size, lo + chunk)];
}

/** Key bits of item j in `digit`'s pass: from the source (pass 0) or the buffer the previous pass wrote. */
function bitsAt(src: RadixSortSource, digit: number, start: number, j: number): number {
  return digit === 0 ? src.sourceKey(start, j) : src.tempU32[src.keysSlots[(digit - 1) & 1]! + start + j]!;
}

/** 'radix-histogram': the digit counts of one tile into `sortCounts`. */
export function radixHistogram(src: RadixSortSource, workgroupId: number, shared: WorkgroupMemory, launchPass: number): void {
  const tiles = src.tiles;
  const digit = launchPass & 3;
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + Math.floor(workgroupId / tiles), segment)) return;
  const { start, size, mask } = segment;
  const histogram = shared.u32;
  histogram.fill(0, 0, 256);
  const [lo, hi] = tileRange(size, tiles, workgroupId % tiles);
  const shift = 8 * digit;
  for (let j = lo; j < hi; j++) histogram[(((src.radixOrderedKey(bitsAt(src, digit, start, j)) ^ mask) >>> shift) & 255)]!++;
  const at = src.countsSlot + workgroupId * 256;
  for (let d = 0; d < 256; d++) src.tempU32[at + d] = histogram[d]!;
}

/** 'radix-scan': a segment's tile histograms into where each tile's first item of each digit goes (digits in order, tiles in order within a digit). */
export function radixScan(src: RadixSortSource, workgroupId: number, shared: WorkgroupMemory, launchPass: number): void {
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + workgroupId, segment)) return;
  const tiles = src.tiles;
  const counts = src.tempU32;
  const base = src.countsSlot + workgroupId * tiles * 256;
  const totals = shared.u32;
  for (let d = 0; d < 256; d++) {
    let total = 0;
    for (let t = 0; t < tiles; t++) total += counts[base + t * 256 + d]!;
    totals[d] = total;
  }
  let offset = 0;
  for (let d = 0; d < 256; d++) {
    let running = offset;
    offset += totals[d]!;
    for (let t = 0; t < tiles; t++) {
      const at = base + t * 256 + d;
      const count = counts[at]!;
      counts[at] = running;
      running += count;
    }
  }
}

/** 'radix-scatter': one tile's items, in index order, to their digit's next place: buffer `digit % 2`, or the outputs in the last pass. */
export function radixScatter(src: RadixSortSource, workgroupId: number, shared: WorkgroupMemory, launchPass: number): void {
  const tiles = src.tiles;
  const digit = launchPass & 3;
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + Math.floor(workgroupId / tiles), segment)) return;
  const { start, size, mask } = segment;
  const next = shared.u32;
  const temp = src.tempU32;
  const at = src.countsSlot + workgroupId * 256;
  for (let d = 0; d < 256; d++) next[d] = temp[at + d]!;
  const [lo, hi] = tileRange(size, tiles, workgroupId % tiles);
  const shift = 8 * digit;
  const hasValues = src.hasValues;
  const fromValues = src.valuesSlots[(digit - 1) & 1]!;
  const last = digit === 3;
  const toKeys = src.keysSlots[digit & 1]!;
  const toValues = src.valuesSlots[digit & 1]!;
  for (let j = lo; j < hi; j++) {
    const bits = bitsAt(src, digit, start, j);
    const value = !hasValues ? 0 : digit === 0 ? src.sourceValue(start, j) : temp[fromValues + start + j]!;
    const d = ((src.radixOrderedKey(bits) ^ mask) >>> shift) & 255;
    const to = next[d]!;
    next[d] = to + 1;
    if (last) src.write(start, to, bits, value);
    else {
      temp[toKeys + start + to] = bits;
      if (hasValues) temp[toValues + start + to] = value;
    }
  }
}
