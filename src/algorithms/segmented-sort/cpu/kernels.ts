import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import type { KernelParams } from '../../../backends/cpu/segments.js';
import { SegmentExtent, type SortContext } from './context.js';
import { indexValue, orderedBits } from './keys.js';
import { radixSortSegment } from './workgroup-radix.js';

/*
 * The sort's CPU kernels, each the twin of a WGSL program (webgpu/programs.ts) launch for launch and
 * slot for slot: 'single-tile' sorts a segment by (sort key, index) in workgroup memory; the radix
 * kernels are cpu/radix.ts's over the sort's input (SortContext as their source).
 */

const segment = new SegmentExtent();
/** Writes output slot `at` of a segment starting at `start` from its item `index`. */
function writeItem(ctx: SortContext, start: number, at: number, index: number): void {
  ctx.keysOut[start + at] = ctx.keysIn[start + index]!;
  const mode = ctx.valueMode;
  if (mode === 1) ctx.valuesOut![start + at] = ctx.valuesIn![start + index]!;
  else if (mode === 2) ctx.valuesOut![start + at] = indexValue(index, ctx.indexAsF32);
}

const f64Views = new WeakMap<ArrayBufferLike, Float64Array>();

/**
 * Segments of at least this many items 'single-tile' sorts by LSD radix (workgroup-radix.ts
 * `radixSortSegment`, its buffers in workgroup memory), shorter ones with a float64 sort: the radix
 * sort's fixed work (four histograms of 256 counts to clear and scan) outweighs its linear passes
 * only below a hundred-odd keys. 1M f32 keys with indices in segments of n, one thread (dev timing of
 * DeviceSegmentedSort.sort and both downloads, workers: 0, 2026-11-28 16:07 UTC, two rounds), float64
 * sort / radix, ms: n = 96 55.4, 57.0 / 67.5, 65.6; 128 60.5, 60.3 / 60.1, 61.5; 160 59.9, 60.6 /
 * 59.2, 54.5; 192 61.0, 61.4 / 52.7, 52.4; 256 62.1, 59.3 / 53.1, 46.6.
 */
const singleTileRadixItems = 160;

/** Words of workgroup memory ahead of the radix sort's buffers: its four histograms (then places). */
const radixHistogramWords = 1024;

/** Workgroup memory bytes of 'single-tile' on the CPU, one segment at a time: a sort key and an index per item (as one float64), or the radix sort's four histograms and two buffers of keys and values. */
export const singleTileCpuWorkgroupBytes = (tileItems: number) => Math.max(tileItems * 8, (radixHistogramWords + 4 * tileItems) * 4);

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
  for (let q = 0; q < segmentsPerWorkgroup; q++) sortSegment(ctx, workgroupId * segmentsPerWorkgroup + q, tile, shared);
}

function sortSegment(ctx: SortContext, i: number, tileCapacity: number, shared: WorkgroupMemory): void {
  if (!ctx.enter(i, 'single-tile', segment)) return;
  const start = segment.start;
  const size = Math.min(segment.size, tileCapacity);
  if (size === 0) return;
  const tile = ctx.tileItems;
  const mask = ctx.orderMaskOf(i);
  if (size >= singleTileRadixItems) {
    const words = shared.u32;
    const at = radixHistogramWords;
    radixSortSegment(ctx, start, size, mask, words, words, [at, at + tile], [at + 2 * tile, at + 3 * tile]);
    return;
  }
  let scratch = f64Views.get(shared.u32.buffer);
  if (scratch === undefined) {
    scratch = new Float64Array(shared.u32.buffer, 0, shared.bytes >>> 3);
    f64Views.set(shared.u32.buffer, scratch);
  }
  const keys = ctx.keysIn;
  const kind = ctx.keyKind;
  for (let j = 0; j < size; j++) scratch[j] = ((orderedBits(keys[start + j]!, kind) ^ mask) >>> 0) * tile + j;
  const sorted = scratch.subarray(0, size).sort();
  // The index is the composite's remainder by the tile, a power of two: exact in float64 arithmetic (faster than %).
  for (let j = 0; j < size; j++) {
    const composite = sorted[j]!;
    writeItem(ctx, start, j, composite - Math.floor(composite / tile) * tile);
  }
}
