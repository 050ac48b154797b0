import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import type { KernelParams } from '../../../backends/cpu/segments.js';
import { SegmentExtent, type SortContext } from './context.js';
import { orderedBits } from './kernels.js';

/*
 * 'workgroup-radix' on the CPU, the twin of webgpu/workgroup-radix.ts slot for slot: workgroup i
 * sorts segment i with an LSD radix sort over the four 8-bit digits of its sort key. The four digit
 * histograms come from one read; a digit that every key of the segment shares is skipped (it would
 * keep the order); every other digit is a stable counting scatter in index order, the k-th that runs
 * into buffer k % 2, the last into the outputs. The WGSL twin ranks tile by tile in workgroup memory;
 * the places, and so every word of the buffers, are the same.
 */

const segment = new SegmentExtent();

/** Workgroup memory of 'workgroup-radix' on the CPU: the four histograms and the 256 digit places. */
export const workgroupRadixCpuBytes = 5 * 256 * 4;

/** 'workgroup-radix' (grid: maxSegments): segment `workgroupId`, whole. */
export function runWorkgroupRadix(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx }: KernelParams<SortContext>): void {
  if (!ctx.enter(workgroupId, 'workgroup-radix', segment)) return;
  const { start, size } = segment;
  if (size === 0) return;
  const mask = ctx.orderMaskOf(workgroupId);
  const kind = ctx.keyKind;
  const keysIn = ctx.keysIn;
  const histograms = shared.u32;
  histograms.fill(0, 0, 1024);
  for (let j = 0; j < size; j++) {
    const key = (orderedBits(keysIn[start + j]!, kind) ^ mask) >>> 0;
    histograms[key & 255]!++;
    histograms[256 + ((key >>> 8) & 255)]!++;
    histograms[512 + ((key >>> 16) & 255)]!++;
    histograms[768 + (key >>> 24)]!++;
  }
  const active: number[] = [];
  for (let digit = 0; digit < 4; digit++) {
    let constant = false;
    for (let d = 0; d < 256 && !constant; d++) constant = histograms[digit * 256 + d] === size;
    if (!constant) active.push(digit);
  }
  const temp = ctx.tempU32;
  const hasValues = ctx.hasValues;
  const valueAt = (source: number, j: number) => (source < 0 ? ctx.sourceValue(start, j) : temp[ctx.valuesSlots[source]! + start + j]!);
  if (active.length === 0) {
    for (let j = 0; j < size; j++) ctx.write(start, j, keysIn[start + j]!, hasValues ? ctx.sourceValue(start, j) : 0);
    return;
  }
  const next = shared.u32.subarray(1024, 1280);
  // -1: the inputs; else the buffer the previous pass wrote.
  let source = -1;
  active.forEach((digit, k) => {
    const last = k === active.length - 1;
    const to = k & 1;
    let sum = 0;
    for (let d = 0; d < 256; d++) {
      next[d] = sum;
      sum += histograms[digit * 256 + d]!;
    }
    const shift = 8 * digit;
    const fromKeys = source < 0 ? -1 : ctx.keysSlots[source]!;
    for (let j = 0; j < size; j++) {
      const bits = fromKeys < 0 ? keysIn[start + j]! : temp[fromKeys + start + j]!;
      const value = hasValues ? valueAt(source, j) : 0;
      const d = (((orderedBits(bits, kind) ^ mask) >>> shift) & 255) >>> 0;
      const at = next[d]!;
      next[d] = at + 1;
      if (last) ctx.write(start, at, bits, value);
      else {
        temp[ctx.keysSlots[to]! + start + at] = bits;
        if (hasValues) temp[ctx.valuesSlots[to]! + start + at] = value;
      }
    }
    source = to;
  });
}
