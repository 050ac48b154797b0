import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import type { KernelParams } from '../../../backends/cpu/segments.js';
import type { MergeLayout } from '../problem.js';
import { SegmentExtent, type SortContext } from './context.js';
import { indexValue, orderedBits } from './keys.js';
import { RadixSegment } from './radix.js';
import { digitPlaces } from './workgroup-radix.js';

/*
 * The sort's CPU kernels, each the twin of a WGSL program (webgpu/programs.ts) launch for launch and
 * slot for slot: 'single-tile' sorts a segment by (sort key, index) in workgroup memory; the radix
 * kernels are cpu/radix.ts's over the sort's input (SortContext as their source).
 */

const segment = new SegmentExtent();

/**
 * What a tile sort reads and writes: the sort's input and outputs (SortContext), or top-k's
 * selection, sorted in place in its outputs (batched-top-k/cpu/sorted.ts).
 */
export interface TileSortSource {
  /** Items of workgroup memory a tile sort is sized for (the policy's tileItems, a power of two). */
  readonly tileItems: number;
  /** 0 f32, 1 i32, 2 u32: how key bits order (keys.ts `orderedBits`). */
  readonly keyKind: 0 | 1 | 2;
  /** Item j of the segment at `start` is `sourceKeys[start + j]`. */
  readonly sourceKeys: Uint32Array;
  /** Payloads (valueMode 1), as the keys. */
  readonly sourceValues: Uint32Array | undefined;
  /** 0: no values; 1: payloads; 2: segment-local indices. */
  readonly valueMode: 0 | 1 | 2;
  /** Indices are written as f32 values. */
  readonly indexAsF32: boolean;
  readonly keysOut: Uint32Array;
  readonly valuesOut: Uint32Array | undefined;
  readonly tempU32: Uint32Array;
  /** Word offsets of the double buffer. */
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  /**
   * The source is the outputs (top-k's selection): a tile written to the outputs is staged in
   * workgroup memory first (`tileSortCpuWorkgroupBytes`), since its writes land where it reads.
   */
  readonly inPlace: boolean;
}

/** What the 'merge' kernels read and write: a tile sort's source, 'merge''s layout and the segments. */
export interface MergeSortSource extends TileSortSource {
  readonly merge: MergeLayout;
  /** Resolves segment `i` into `out`; false when the merge kernels have nothing to do for it. */
  enterMerge(i: number, out: RadixSegment): boolean;
}

/** Where a sorted tile goes: the outputs, or (`base` >= 0) buffer 0 for 'merge-blocks'. */
const toOutputs = -1;

/** Where a tile's items are read when it writes them: the source, or the tile staged in workgroup memory (in place). */
class TileItems {
  keys: Uint32Array = new Uint32Array(0);
  keysAt = 0;
  values: Uint32Array | undefined = undefined;
  valuesAt = 0;
}

const tileItems = new TileItems();

/**
 * Writes output slot `at` of a segment starting at `start` from its item `index` (read from `items`);
 * with `base` >= 0 (a 'merge-blocks' tile that is not its segment's only one) buffer 0's instead: key
 * bits, and values as u32 (payloads, or indices in the segment from the tile's `base`).
 */
function writeItem(src: TileSortSource, items: TileItems, start: number, at: number, index: number, base: number): void {
  const bits = items.keys[items.keysAt + index]!;
  const mode = src.valueMode;
  if (base >= 0) {
    const temp = src.tempU32;
    temp[src.keysSlots[0] + start + at] = bits;
    if (mode === 1) temp[src.valuesSlots[0] + start + at] = items.values![items.valuesAt + index]!;
    else if (mode === 2) temp[src.valuesSlots[0] + start + at] = base + index;
    return;
  }
  src.keysOut[start + at] = bits;
  if (mode === 1) src.valuesOut![start + at] = items.values![items.valuesAt + index]!;
  else if (mode === 2) src.valuesOut![start + at] = indexValue(index, src.indexAsF32);
}

const f64Views = new WeakMap<ArrayBufferLike, Float64Array>();

/**
 * Segments of at least this many items 'single-tile' sorts by LSD radix (`radixSortTile`, in
 * workgroup memory), shorter ones with a float64 sort: the radix sort's fixed work (four histograms
 * of 256 counts to clear and scan) outweighs its linear passes below about a hundred keys. 1M f32
 * keys with indices in segments of n, one thread (dev timing of DeviceSegmentedSort.sort and both
 * downloads, workers: 0, 2026-11-28 16:30 UTC, two rounds), float64 sort / radix, ms: n = 64 54.3,
 * 53.7 / 61.8, 64.4; 96 56.6, 55.3 / 52.0, 56.4; 128 59.4, 54.8 / 44.2, 48.0; 160 68.7, 61.3 /
 * 41.8, 45.8; 256 72.9, 61.2 / 41.7, 42.6.
 */
const singleTileRadixItems = 128;

/** Words of workgroup memory ahead of the radix sort's buffers: its four histograms (then places). */
const radixHistogramWords = 1024;

/** Workgroup memory bytes of 'single-tile' on the CPU, one segment at a time: a sort key and an index per item (as one float64), or the radix sort's four histograms and two buffers of sort keys and indices. */
export const singleTileCpuWorkgroupBytes = (tileItems: number) => Math.max(tileItems * 8, (radixHistogramWords + 4 * tileItems) * 4);

/** Workgroup memory bytes of a tile sort of `source`: single-tile's, and in place the tile's key bits and values staged after them. */
export const tileSortCpuWorkgroupBytes = (source: Pick<TileSortSource, 'tileItems' | 'inPlace'>) => singleTileCpuWorkgroupBytes(source.tileItems) + (source.inPlace ? source.tileItems * 8 : 0);

/**
 * 'single-tile' (grid: maxSegments / segmentsPerWorkgroup): segments [w * s, (w + 1) * s) of
 * workgroup w, each sorted in workgroup memory (at most `tile` items: problem.ts `singleTileShape`).
 * The WGSL twin bitonic-sorts (sort key, index) pairs; here a segment of `singleTileRadixItems` or
 * more is radix-sorted (stable, so the same order), a shorter one sorted as the exact float64s
 * `key * tileItems + index` (key < 2^32, index < tileItems <= 2^21), which a numeric sort orders the
 * same way.
 */
export function runSingleTile(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx }: KernelParams<SortContext>): void {
  const { tile, segmentsPerWorkgroup } = ctx.singleTile;
  for (let q = 0; q < segmentsPerWorkgroup; q++) sortSegment(ctx, ctx.segmentAt(workgroupId * segmentsPerWorkgroup + q), tile, shared);
}

function sortSegment(ctx: SortContext, i: number, tileCapacity: number, shared: WorkgroupMemory): void {
  if (!ctx.enter(i, 'single-tile', segment)) return;
  sortTile(ctx, segment.start, Math.min(segment.size, tileCapacity), ctx.orderMaskOf(i), shared, toOutputs);
}

const mergeSegment = new RadixSegment();

/**
 * 'merge-blocks' (grid: maxSegments * mergeTiles / segmentsPerWorkgroup): block w is tile
 * w % mergeTiles of segment w / mergeTiles (of the segments past a tile where the plan has
 * single-tile too), sorted as single-tile sorts a segment, into buffer 0, or into the outputs when it
 * is the segment's only tile (webgpu/programs.ts, blocks mode).
 */
export function mergeBlocks(src: MergeSortSource, workgroupId: number, shared: WorkgroupMemory): void {
  const { tile, tilesPerSegment, blocks } = src.merge;
  const perWorkgroup = blocks.segmentsPerWorkgroup;
  const seg = mergeSegment;
  for (let q = 0; q < perWorkgroup; q++) {
    const w = workgroupId * perWorkgroup + q;
    const i = Math.floor(w / tilesPerSegment);
    if (!src.enterMerge(i, seg)) continue;
    const base = (w - i * tilesPerSegment) * tile;
    if (base >= seg.size) continue;
    sortTile(src, seg.start + base, Math.min(seg.size - base, tile), seg.mask, shared, seg.size <= tile ? toOutputs : base);
  }
}

/** The sort's 'merge-blocks' kernel. */
export function runMergeBlocks(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx }: KernelParams<SortContext>): void {
  mergeBlocks(ctx, workgroupId, shared);
}

/**
 * Sorts `size` items (at most a tile) from `start` by (sort key, index) and writes them from `start`
 * (`base`: see {@link writeItem}). In place, a tile going to the outputs is staged first (the WGSL
 * twin gathers it into workgroup memory before its first write).
 */
function sortTile(src: TileSortSource, start: number, size: number, mask: number, shared: WorkgroupMemory, base: number): void {
  if (size === 0) return;
  const tile = src.tileItems;
  const items = tileItems;
  items.keys = src.sourceKeys;
  items.keysAt = start;
  items.values = src.sourceValues;
  items.valuesAt = start;
  if (src.inPlace && base < 0) {
    const staged = singleTileCpuWorkgroupBytes(tile) >>> 2;
    const words = shared.u32;
    words.set(src.sourceKeys.subarray(start, start + size), staged);
    if (src.valueMode === 1) words.set(src.sourceValues!.subarray(start, start + size), staged + tile);
    items.keys = words;
    items.keysAt = staged;
    items.values = words;
    items.valuesAt = staged + tile;
  }
  if (size >= singleTileRadixItems) {
    radixSortTile(src, items, start, size, mask, shared.u32, base);
    return;
  }
  let scratch = f64Views.get(shared.u32.buffer);
  if (scratch === undefined) {
    scratch = new Float64Array(shared.u32.buffer, 0, shared.bytes >>> 3);
    f64Views.set(shared.u32.buffer, scratch);
  }
  const keys = src.sourceKeys;
  const kind = src.keyKind;
  for (let j = 0; j < size; j++) scratch[j] = ((orderedBits(keys[start + j]!, kind) ^ mask) >>> 0) * tile + j;
  const sorted = scratch.subarray(0, size).sort();
  // The index is the composite's remainder by the tile, a power of two: exact in float64 arithmetic (faster than %).
  for (let j = 0; j < size; j++) {
    const composite = sorted[j]!;
    writeItem(src, items, start, j, composite - Math.floor(composite / tile) * tile, base);
  }
}

/**
 * Sorts a segment of `size` items (at most the tile) at `start` by LSD radix in workgroup memory
 * `words`: each item's sort key, computed once, and its index go through two buffers digit by digit
 * (the four histograms, then places, ahead of them), and the last digit's pass writes each item's key
 * bits and value by its index. Stable, so the order of the (sort key, index) pairs.
 */
function radixSortTile(src: TileSortSource, items: TileItems, start: number, size: number, mask: number, words: Uint32Array, base: number): void {
  const tile = src.tileItems;
  const keysAt = [radixHistogramWords, radixHistogramWords + tile];
  const indicesAt = [radixHistogramWords + 2 * tile, radixHistogramWords + 3 * tile];
  // The sort keys go to buffer 1: the first pass reads them there and writes buffer 0.
  const keys = src.sourceKeys;
  const kind = src.keyKind;
  const first = keysAt[1]!;
  words.fill(0, 0, radixHistogramWords);
  for (let j = 0; j < size; j++) {
    const key = (orderedBits(keys[start + j]!, kind) ^ mask) >>> 0;
    words[first + j] = key;
    words[key & 255]!++;
    words[256 + ((key >>> 8) & 255)]!++;
    words[512 + ((key >>> 16) & 255)]!++;
    words[768 + (key >>> 24)]!++;
  }
  const active = digitPlaces(words, size);
  if (active.length === 0) {
    for (let j = 0; j < size; j++) writeItem(src, items, start, j, j, base);
    return;
  }
  let from = first;
  // -1 while the items are in index order (the first pass).
  let fromIndices = -1;
  for (let k = 0; k < active.length; k++) {
    const digit = active[k]!;
    const places = digit * 256;
    const shift = 8 * digit;
    if (k === active.length - 1) {
      for (let j = 0; j < size; j++) {
        const d = places + ((words[from + j]! >>> shift) & 255);
        const at = words[d]!;
        words[d] = at + 1;
        writeItem(src, items, start, at, fromIndices < 0 ? j : words[fromIndices + j]!, base);
      }
      return;
    }
    const to = keysAt[k & 1]!;
    const toIndices = indicesAt[k & 1]!;
    for (let j = 0; j < size; j++) {
      const key = words[from + j]!;
      const d = places + ((key >>> shift) & 255);
      const at = words[d]!;
      words[d] = at + 1;
      words[to + at] = key;
      words[toIndices + at] = fromIndices < 0 ? j : words[fromIndices + j]!;
    }
    from = to;
    fromIndices = toIndices;
  }
}
