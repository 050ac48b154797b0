import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import type { KernelParams } from '../../../backends/cpu/segments.js';
import { SegmentExtent, type SortContext } from './context.js';
import { indexValue, orderedF32 } from './keys.js';
import { ScatterBuffers, scatterDigit } from './radix.js';

/*
 * 'workgroup-radix' on the CPU, the twin of webgpu/workgroup-radix.ts slot for slot: workgroup i
 * sorts segment i with an LSD radix sort over the four 8-bit digits of its sort key. The four digit
 * histograms come from one read; a digit that every key of the segment shares is skipped (it would
 * keep the order); every other digit is a stable counting scatter in index order, the k-th that runs
 * into buffer k % 2, the last into the outputs. The WGSL twin ranks tile by tile in workgroup memory;
 * the places, and so every word of the buffers, are the same.
 */

const segment = new SegmentExtent();
const scatterBuffers = new ScatterBuffers();

/** Workgroup memory of 'workgroup-radix' on the CPU: the four histograms (each turned into its digit's places). */
export const workgroupRadixCpuBytes = 4 * 256 * 4;

/** 'workgroup-radix' (grid: maxSegments): the segment at place `workgroupId` (its index, or by size: SegmentContext.segmentAt), whole. */
export function runWorkgroupRadix(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx }: KernelParams<SortContext>): void {
  const i = ctx.segmentAt(workgroupId);
  if (!ctx.enter(i, 'workgroup-radix', segment)) return;
  const { start, size } = segment;
  if (size === 0) return;
  const mask = ctx.orderMaskOf(i);
  const kind = ctx.keyKind;
  const histograms = shared.u32;
  histograms.fill(0, 0, 1024);
  countAllDigits(histograms, ctx.keysIn, start, start + size, kind, mask);
  const active = digitPlaces(histograms, size);
  const temp = ctx.tempU32;
  const hasValues = ctx.hasValues;
  const scatter = scatterBuffers;
  scatter.keys = ctx.keysIn;
  scatter.keysFrom = start;
  scatter.values = hasValues ? ctx.sourceValues : undefined;
  scatter.valuesFrom = start;
  if (active.length === 0) {
    // Every digit constant: the keys all equal, so the inputs in index order are the outputs.
    scatter.keysTo = ctx.keysOut;
    scatter.keysAt = start;
    scatter.valuesTo = ctx.valuesOut;
    scatter.valuesAt = start;
    copyItems(scatter, size, ctx.indexAsF32);
    return;
  }
  for (let k = 0; k < active.length; k++) {
    const digit = active[k]!;
    const last = k === active.length - 1;
    const to = k & 1;
    scatter.keysTo = last ? ctx.keysOut : temp;
    scatter.keysAt = last ? start : ctx.keysSlots[to]! + start;
    scatter.valuesTo = !hasValues ? undefined : last ? ctx.valuesOut : temp;
    scatter.valuesAt = last ? start : ctx.valuesSlots[to]! + start;
    scatterDigit(histograms.subarray(digit * 256, digit * 256 + 256), scatter, 0, size, kind, mask, 8 * digit, ctx.indexAsF32);
    // The next pass reads what this one wrote.
    scatter.keys = temp;
    scatter.keysFrom = ctx.keysSlots[to]! + start;
    scatter.values = hasValues ? temp : undefined;
    scatter.valuesFrom = ctx.valuesSlots[to]! + start;
  }
}

/**
 * Turns each of the four digit histograms of `size` keys (`histograms[256 * k]` on) into its
 * digit's first places (exclusive sums, in place); returns the digits that not every key shares,
 * in order (a digit every key shares would keep the order).
 */
export function digitPlaces(histograms: Uint32Array, size: number): number[] {
  const active: number[] = [];
  for (let digit = 0; digit < 4; digit++) {
    let constant = false;
    let sum = 0;
    for (let d = digit * 256; d < digit * 256 + 256; d++) {
      const count = histograms[d]!;
      constant ||= count === size;
      histograms[d] = sum;
      sum += count;
    }
    if (!constant) active.push(digit);
  }
  return active;
}

/** The four digit histograms of the sort keys of key bits `keys[lo..hi)`, in one read: digit k's at `histograms[256 * k]`. */
function countAllDigits(histograms: Uint32Array, keys: Uint32Array, lo: number, hi: number, keyKind: number, mask: number): void {
  const m = mask | 0;
  const f32 = keyKind === 0;
  // An integer's sort key is its bits XOR one word: the sign bit for i32, and the order mask.
  const xor = keyKind === 1 ? m ^ 0x80000000 : m;
  for (let i = lo; i < hi; i++) {
    const bits = keys[i]!;
    const key = f32 ? orderedF32(bits) ^ m : bits ^ xor;
    histograms[key & 255]!++;
    histograms[256 + ((key >>> 8) & 255)]!++;
    histograms[512 + ((key >>> 16) & 255)]!++;
    histograms[768 + (key >>> 24)]!++;
  }
}

/** Items [0, size) of a segment to places [0, size), as `buffers` says. */
function copyItems(buffers: ScatterBuffers, size: number, indexAsF32: boolean): void {
  const { keys, keysFrom, values, valuesFrom, keysTo, keysAt, valuesTo, valuesAt } = buffers;
  keysTo.set(keys.subarray(keysFrom, keysFrom + size), keysAt);
  if (valuesTo === undefined) return;
  if (values !== undefined) valuesTo.set(values.subarray(valuesFrom, valuesFrom + size), valuesAt);
  else for (let j = 0; j < size; j++) valuesTo[valuesAt + j] = indexValue(j, indexAsF32);
}
