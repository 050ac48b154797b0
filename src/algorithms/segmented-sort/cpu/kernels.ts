import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import type { KernelParams } from '../../../backends/cpu/segments.js';
import { SegmentExtent, type SortContext } from './context.js';

/*
 * The sort's CPU kernels, each the twin of a WGSL program (webgpu/programs.ts) launch for launch and
 * slot for slot: 'single-tile' sorts a segment by (sort key, index) in workgroup memory; the radix
 * kernels are cpu/radix.ts's over the sort's input (SortContext as their source).
 */

const segment = new SegmentExtent();
const f32Scratch = new Float32Array(1);
const f32ScratchBits = new Uint32Array(f32Scratch.buffer);

/** The ordered key (top-k's, keys.ts) of a key's bits, by key kind: NaN above +Infinity, -0 equal to +0. */
export function orderedBits(bits: number, keyKind: number): number {
  if (keyKind === 2) return bits >>> 0;
  if (keyKind === 1) return (bits ^ 0x80000000) >>> 0;
  if ((bits & 0x7fffffff) > 0x7f800000) return 0xffffffff;
  if (bits >>> 0 === 0x80000000) return 0x80000000;
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

/** `orderedBits(bits, 0) | 0`, as an int32: for item loops, where it stays a machine word. */
export function orderedF32(bits: number): number {
  const b = bits | 0;
  if ((b & 0x7fffffff) > 0x7f800000) return -1;
  if (b === -0x80000000) return b;
  return b ^ ((b >> 31) | -0x80000000);
}

/** A segment-local index as the values output holds it. */
export function indexValue(index: number, asF32: boolean): number {
  if (!asF32) return index;
  f32Scratch[0] = index;
  return f32ScratchBits[0]!;
}

/** Writes output slot `at` of a segment starting at `start` from its item `index`. */
function writeItem(ctx: SortContext, start: number, at: number, index: number): void {
  ctx.keysOut[start + at] = ctx.keysIn[start + index]!;
  const mode = ctx.valueMode;
  if (mode === 1) ctx.valuesOut![start + at] = ctx.valuesIn![start + index]!;
  else if (mode === 2) ctx.valuesOut![start + at] = indexValue(index, ctx.indexAsF32);
}

const f64Views = new WeakMap<ArrayBufferLike, Float64Array>();

/** Workgroup memory bytes of 'single-tile' on the CPU: a sort key and an index per item (as one float64), one segment at a time. */
export const singleTileCpuWorkgroupBytes = (tileItems: number) => tileItems * 8;

/**
 * 'single-tile' (grid: maxSegments / segmentsPerWorkgroup): segments [w * s, (w + 1) * s) of
 * workgroup w, each sorted in workgroup memory (at most `tile` items: problem.ts `singleTileShape`).
 * The WGSL twin bitonic-sorts (sort key, index) pairs; here each pair is the exact float64
 * `key * tileItems + index` (key < 2^32, index < tileItems <= 2^21), so a numeric sort orders them
 * the same way.
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
  let scratch = f64Views.get(shared.u32.buffer);
  if (scratch === undefined) {
    scratch = new Float64Array(shared.u32.buffer, 0, shared.bytes >>> 3);
    f64Views.set(shared.u32.buffer, scratch);
  }
  const tile = ctx.tileItems;
  const mask = ctx.orderMaskOf(i);
  const keys = ctx.keysIn;
  const kind = ctx.keyKind;
  for (let j = 0; j < size; j++) scratch[j] = ((orderedBits(keys[start + j]!, kind) ^ mask) >>> 0) * tile + j;
  const sorted = scratch.subarray(0, size).sort();
  for (let j = 0; j < size; j++) writeItem(ctx, start, j, sorted[j]! % tile);
}
