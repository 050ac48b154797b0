import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';

/*
 * The radix sort's CPU kernels over any source of segments (the sort's own input, or top-k's
 * selection): one LSD pass over 8 bits of the sort key per launch triple (histogram, scan, scatter),
 * stable because each tile scatters its items in index order after the items of earlier tiles. The
 * double buffer carries each item's key bits and value, so the last pass writes them without a
 * gather and a source may be its own destination (top-k sorts its outputs in place).
 *
 * A launch's `pass` is `group * 4 + digit` (problem.ts `radixLaunchPass`): histogram and scatter
 * workgroup w is tile w % tiles of segment group * groupSegments + w / tiles; the counts slot holds
 * one group's counts (problem.ts), which every group reuses. WGSL twin: webgpu/radix.ts.
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
  /** Digits one radix-scan workgroup covers (problem.ts `radixScanShape`). */
  readonly scanDigits: number;
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

/** Word offset of the counts of segment `s` of a group (problem.ts `radixCountsWords`). */
const countsBase = (src: RadixSortSource, s: number) => src.countsSlot + s * (src.tiles + 1) * 256;

/** 'radix-histogram': the digit counts of one tile into `sortCounts` (digit-major: digit d of tile t at d * tiles + t). */
export function radixHistogram(src: RadixSortSource, workgroupId: number, shared: WorkgroupMemory, launchPass: number): void {
  const tiles = src.tiles;
  const digit = launchPass & 3;
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + Math.floor(workgroupId / tiles), segment)) return;
  const { start, size, mask } = segment;
  const histogram = shared.u32;
  histogram.fill(0, 0, 256);
  const tile = workgroupId % tiles;
  const [lo, hi] = tileRange(size, tiles, tile);
  const shift = 8 * digit;
  for (let j = lo; j < hi; j++) histogram[(((src.radixOrderedKey(bitsAt(src, digit, start, j)) ^ mask) >>> shift) & 255)]!++;
  const at = countsBase(src, Math.floor(workgroupId / tiles)) + tile;
  for (let d = 0; d < 256; d++) src.tempU32[at + d * tiles] = histogram[d]!;
}

/**
 * 'radix-scan': workgroup w covers digits [b * scanDigits, (b + 1) * scanDigits) of its segment
 * (b = w % scanWorkgroups): each digit's tile counts into the items of that digit in earlier tiles, and
 * the digit's total.
 */
export function radixScan(src: RadixSortSource, workgroupId: number, _shared: WorkgroupMemory, launchPass: number): void {
  const perSegment = Math.ceil(256 / src.scanDigits);
  const inGroup = Math.floor(workgroupId / perSegment);
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + inGroup, segment)) return;
  const tiles = src.tiles;
  const counts = src.tempU32;
  const base = countsBase(src, inGroup);
  const first = (workgroupId % perSegment) * src.scanDigits;
  for (let d = first; d < Math.min(256, first + src.scanDigits); d++) {
    let running = 0;
    for (let t = 0; t < tiles; t++) {
      const at = base + d * tiles + t;
      const count = counts[at]!;
      counts[at] = running;
      running += count;
    }
    counts[base + 256 * tiles + d] = running;
  }
}

/**
 * 'radix-scatter': one tile's items, in index order, to their digit's next place: buffer `digit % 2`,
 * or the outputs in the last pass. Digit d's first place is the totals of smaller digits plus the
 * items of digit d in earlier tiles. (The WGSL twin ranks the tile in workgroup memory first; the
 * places are the same.)
 */
export function radixScatter(src: RadixSortSource, workgroupId: number, shared: WorkgroupMemory, launchPass: number): void {
  const tiles = src.tiles;
  const digit = launchPass & 3;
  if (!src.enterRadix((launchPass >>> 2) * src.groupSegments + Math.floor(workgroupId / tiles), segment)) return;
  const { start, size, mask } = segment;
  const next = shared.u32;
  const temp = src.tempU32;
  const tile = workgroupId % tiles;
  const base = countsBase(src, Math.floor(workgroupId / tiles));
  let smaller = 0;
  for (let d = 0; d < 256; d++) {
    next[d] = smaller + temp[base + d * tiles + tile]!;
    smaller += temp[base + 256 * tiles + d]!;
  }
  const [lo, hi] = tileRange(size, tiles, tile);
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
