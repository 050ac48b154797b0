import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { indexValue, orderedF32 } from './keys.js';

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
 *
 * The source is plain arrays and numbers rather than per-item methods: the item loops (countDigits,
 * scatterDigit, which 'workgroup-radix' shares) index typed arrays directly, with the key kind, the
 * order and the buffers resolved once per tile.
 */

/** A segment as the radix and merge kernels see it. */
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
  /** The scatter adds up its digits' places from the tiles' counts: no scan launch (problem.ts `radixScansInScatter`). */
  readonly scanInScatter: boolean;
  readonly tempU32: Uint32Array;
  /** Word offsets of the slots. */
  readonly countsSlot: number;
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  /** 0 f32, 1 i32, 2 u32: how key bits order (keys.ts `orderedBits`). */
  readonly keyKind: 0 | 1 | 2;
  /** Pass 0's key bits: item j of the segment at `start` is `sourceKeys[start + j]`. */
  readonly sourceKeys: Uint32Array;
  readonly hasValues: boolean;
  /** Pass 0's values, as the keys; undefined with values: each item's segment-local index (as f32 with `indexAsF32`). */
  readonly sourceValues: Uint32Array | undefined;
  readonly indexAsF32: boolean;
  /** The last pass's outputs: slot `at` of the segment at `start` is `[start + at]`. */
  readonly keysOut: Uint32Array;
  readonly valuesOut: Uint32Array | undefined;
  /** Resolves segment `i` into `out`; false when the radix kernels have nothing to do for it. */
  enterRadix(i: number, out: RadixSegment): boolean;
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

/**
 * Counts the sort-key digit at `shift` of key bits `keys[lo..hi)` into `histogram`: one loop per key
 * kind, so that each item is a load, a few integer operations and a count.
 */
function countDigits(histogram: Uint32Array, keys: Uint32Array, lo: number, hi: number, keyKind: number, mask: number, shift: number): void {
  const m = mask | 0;
  if (keyKind === 0) {
    for (let i = lo; i < hi; i++) histogram[((orderedF32(keys[i]!) ^ m) >>> shift) & 255]!++;
    return;
  }
  // An integer's sort key is its bits XOR one word: the sign bit for i32, and the order mask.
  const xor = keyKind === 1 ? m ^ 0x80000000 : m;
  for (let i = lo; i < hi; i++) histogram[((keys[i]! ^ xor) >>> shift) & 255]!++;
}

/**
 * Where one scatter reads and writes: item j of a segment is `keys[keysFrom + j]` with value
 * `values[valuesFrom + j]` (its index j when `values` is undefined); place `at` is
 * `keysTo[keysAt + at]` and `valuesTo[valuesAt + at]` (no values when `valuesTo` is undefined).
 */
export class ScatterBuffers {
  keys: Uint32Array = new Uint32Array(0);
  keysFrom = 0;
  values: Uint32Array | undefined = undefined;
  valuesFrom = 0;
  keysTo: Uint32Array = new Uint32Array(0);
  keysAt = 0;
  valuesTo: Uint32Array | undefined = undefined;
  valuesAt = 0;
}

const scatterBuffers = new ScatterBuffers();

/**
 * Scatters items [lo, hi) of a segment, in index order, to the next place of their sort key's digit
 * at `shift` (`next`, advanced as it goes). Index values are written as f32 with `indexAsF32`.
 * One loop per value mode, on purpose: one loop branching on the mode per item ran 5-12% slower on
 * one thread (bench/sort-cpu.ts --workers=0, 2026-11-28 17:15 UTC, two alternating rounds: 256x4096
 * 42.7-43.0 against 45.3-47.7 ms, 16x65536 42.4 against 44.0-45.1).
 */
export function scatterDigit(next: Uint32Array, buffers: ScatterBuffers, lo: number, hi: number, keyKind: number, mask: number, shift: number, indexAsF32: boolean): void {
  const { keys, keysFrom, values, valuesFrom, keysTo, keysAt, valuesTo, valuesAt } = buffers;
  const f32 = keyKind === 0;
  const m = mask | 0;
  const xor = keyKind === 1 ? m ^ 0x80000000 : m;
  if (valuesTo === undefined) {
    for (let j = lo; j < hi; j++) {
      const bits = keys[keysFrom + j]!;
      const d = ((f32 ? orderedF32(bits) ^ m : bits ^ xor) >>> shift) & 255;
      const at = next[d]!;
      next[d] = at + 1;
      keysTo[keysAt + at] = bits;
    }
  } else if (values !== undefined) {
    for (let j = lo; j < hi; j++) {
      const bits = keys[keysFrom + j]!;
      const d = ((f32 ? orderedF32(bits) ^ m : bits ^ xor) >>> shift) & 255;
      const at = next[d]!;
      next[d] = at + 1;
      keysTo[keysAt + at] = bits;
      valuesTo[valuesAt + at] = values[valuesFrom + j]!;
    }
  } else {
    for (let j = lo; j < hi; j++) {
      const bits = keys[keysFrom + j]!;
      const d = ((f32 ? orderedF32(bits) ^ m : bits ^ xor) >>> shift) & 255;
      const at = next[d]!;
      next[d] = at + 1;
      keysTo[keysAt + at] = bits;
      valuesTo[valuesAt + at] = indexValue(j, indexAsF32);
    }
  }
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
  // Pass 0 reads the source, every later pass the buffer the previous pass wrote.
  const from = digit === 0 ? start : src.keysSlots[(digit - 1) & 1]! + start;
  countDigits(histogram, digit === 0 ? src.sourceKeys : src.tempU32, from + lo, from + hi, src.keyKind, mask, 8 * digit);
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
 * items of digit d in earlier tiles (as the scan left them, or added up here where no scan ran). (The WGSL twin ranks the tile in workgroup memory first; the
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
  if (src.scanInScatter) {
    // No scan launch: digit d's items in earlier tiles and its total, from the histogram's counts.
    for (let d = 0; d < 256; d++) {
      const at = base + d * tiles;
      let earlier = 0;
      for (let t = 0; t < tile; t++) earlier += temp[at + t]!;
      let total = earlier;
      for (let t = tile; t < tiles; t++) total += temp[at + t]!;
      next[d] = smaller + earlier;
      smaller += total;
    }
  } else {
    for (let d = 0; d < 256; d++) {
      next[d] = smaller + temp[base + d * tiles + tile]!;
      smaller += temp[base + 256 * tiles + d]!;
    }
  }
  const [lo, hi] = tileRange(size, tiles, tile);
  const buffers = scatterBuffers;
  const from = (digit - 1) & 1;
  buffers.keys = digit === 0 ? src.sourceKeys : temp;
  buffers.keysFrom = digit === 0 ? start : src.keysSlots[from]! + start;
  buffers.values = !src.hasValues ? undefined : digit === 0 ? src.sourceValues : temp;
  buffers.valuesFrom = digit === 0 ? start : src.valuesSlots[from]! + start;
  const last = digit === 3;
  buffers.keysTo = last ? src.keysOut : temp;
  buffers.keysAt = last ? start : src.keysSlots[digit & 1]! + start;
  buffers.valuesTo = !src.hasValues ? undefined : last ? src.valuesOut : temp;
  buffers.valuesAt = last ? start : src.valuesSlots[digit & 1]! + start;
  scatterDigit(next, buffers, lo, hi, src.keyKind, mask, 8 * digit, src.indexAsF32);
}
