import type { Bounds } from '../../params/param.js';
import { boundsWords } from '../../dispatch/device-checks.js';
import { type DeviceCheck, StatusCode, noSegment, sizeOrderClass, sizeOrderClasses, statusWords } from '../../dispatch/problem.js';
import { deviceMemory } from './memory.js';
import { type KernelParams, countOf, numericView, readSource } from './segments.js';

/*
 * The kernels every segmented algorithm may launch before its own (dispatch/plan.ts
 * `prologueLaunches`), on the CPU emulator. Their WGSL twins are webgpu/prologue.ts.
 *
 * 'validate' (all in its first workgroup; the WebGPU twin may spread the segments over more) checks
 * every device-only value before anything is written and reports the first violation in the status
 * words (dispatch/problem.ts `StatusCode`); all zeros when everything holds. Order of the checks,
 * so the reported violation is deterministic on every backend:
 * 1. scalar checks (`kind: 'scalar'`) in `run.checks` order, then a device `numSegments` against
 *    `maxSegments`, then `device-bounds` checks in `run.checks` order (none of these has a segment);
 * 2. segments in ascending order (the lowest failing segment wins), each through: its per-segment
 *    checks in `run.checks` order (static bounds, then device bounds), its extent within the items
 *    (`PastItems`), and its size within the stride (`LargerThanStride`);
 * 3. the sum of the sizes within `run.totalNumItems` (`TotalOutside`).
 *
 * Status words: value = the element's raw 32 bits for an array element, else the computed number
 * clamped to [0, 2^32 - 1]; a check's bounds as words of its array's dtype (device-checks.ts
 * `boundsWords`), other bounds clamped to [0, 2^32 - 1] (an infinite bound reads 0 or 0xFFFFFFFF),
 * except for `BadDeviceBounds`, whose bound words are the device bounds' raw bits [min, max] and whose
 * value is the failing one of them. `PastItems`: value = the segment's end, bounds [0, itemsLength];
 * `LargerThanStride`: value = the size, bounds [0, stride]; both name 'segmentSizes'.
 *
 * 'segment-offsets' (grid 1, packed layout with per-segment sizes): the exclusive scan of the sizes
 * into slot `offsets` (maxSegments + 1 words; entry maxSegments is the total). Segments at or past
 * numSegments count as empty. A sum past 2^32 - 1 (only under 'trust') saturates, so starts stay
 * past the items rather than wrapping into them.
 */

function word(value: number): number {
  return value > 0 ? (value >= 4294967295 ? 4294967295 : Math.floor(value)) : 0;
}

function report(status: Uint32Array, code: StatusCode, parameter: number, segment: number, valueBits: number, bounds: Bounds): true {
  status[0] = code;
  status[1] = parameter;
  status[2] = segment;
  status[3] = valueBits >>> 0;
  status[4] = word(bounds.min);
  status[5] = word(bounds.max);
  status[6] = 0;
  status[7] = 0;
  return true;
}

/** A failed check: its bound words are the check's bounds in the array's dtype (device-checks.ts `boundsWords`), as the WGSL twin writes them. */
function reportCheck(status: Uint32Array, check: DeviceCheck, segment: number, valueBits: number): true {
  report(status, StatusCode.OutsideStatic, check.parameter, segment, valueBits, check.bounds);
  const [lo, hi] = boundsWords(check.bounds, check.array.dtype);
  status[4] = lo;
  status[5] = hi;
  return true;
}

interface DeviceArray32 {
  readonly values: Int32Array | Uint32Array | Float32Array;
  readonly bits: Uint32Array;
  readonly length: number;
}

function view32(array: DeviceCheck['array']): DeviceArray32 {
  return { values: numericView(array), bits: deviceMemory(array).u32, length: array.length };
}

/** Raw bits of element `i` of a device array (0 past its end). */
function bitsAt(array: DeviceArray32, i: number): number {
  return i < array.length ? array.bits[i]! : 0;
}

function valueAt(array: DeviceArray32, i: number): number {
  return i < array.length ? array.values[i]! : 0;
}

const outside = (value: number, bounds: Bounds) => !(value >= bounds.min && value <= bounds.max);

function checkScalars({ ctx }: KernelParams, status: Uint32Array, parameterOf: (name: string) => number): boolean {
  const run = ctx.run;
  for (const check of run.checks) {
    if (check.kind !== 'scalar') continue;
    const array = view32(check.array);
    const value = valueAt(array, 0);
    if (outside(value, check.bounds)) return reportCheck(status, check, noSegment, bitsAt(array, 0));
  }
  const numSegments = run.problem.numSegments;
  if (numSegments.kind === 'device') {
    const array = view32(numSegments.array);
    const value = valueAt(array, 0);
    const bounds = { min: 0, max: ctx.maxSegments };
    if (outside(value, bounds)) return report(status, StatusCode.OutsideStatic, parameterOf('numSegments'), noSegment, bitsAt(array, 0), bounds);
  }
  for (const check of run.checks) {
    if (check.kind !== 'device-bounds') continue;
    const array = view32(check.deviceBounds ?? check.array);
    const min = valueAt(array, 0);
    const max = valueAt(array, 1);
    if (outside(min, check.bounds) || outside(max, check.bounds) || !(min <= max)) {
      report(status, StatusCode.BadDeviceBounds, check.parameter, noSegment, bitsAt(array, outside(min, check.bounds) || !(min <= max) ? 0 : 1), check.bounds);
      // The bound words carry the device bounds themselves (the host's message names them).
      status[4] = bitsAt(array, 0);
      status[5] = bitsAt(array, 1);
      return true;
    }
  }
  return false;
}

function validate(params: KernelParams, status: Uint32Array): void {
  status.fill(0, 0, statusWords);
  const { ctx } = params;
  const run = ctx.run;
  const parameterOf = (name: string) => run.parameterNames.indexOf(name);
  if (checkScalars(params, status, parameterOf)) return;
  const segments = ctx.activeSegments();
  const perSegment = run.checks
    .filter((check) => check.kind === 'per-segment')
    .map((check) => ({ check, array: view32(check.array), device: check.deviceBounds === undefined ? undefined : view32(check.deviceBounds) }));
  const strided = ctx.startMode === 2;
  const stride = strided ? countOf(readSource(ctx.stride!, 0)) : 0;
  const itemsLength = run.problem.itemsLength;
  const itemsBounds = { min: 0, max: itemsLength };
  const strideBounds = { min: 0, max: stride };
  const sizesParameter = parameterOf('segmentSizes');
  let start = 0;
  let total = 0;
  for (let i = 0; i < segments; i++) {
    for (const { check, array, device } of perSegment) {
      const value = valueAt(array, i);
      if (outside(value, check.bounds)) {
        reportCheck(status, check, i, bitsAt(array, i));
        return;
      }
      if (device !== undefined) {
        const deviceBounds = { min: valueAt(device, 0), max: valueAt(device, 1) };
        if (outside(value, deviceBounds)) {
          report(status, StatusCode.OutsideDevice, check.parameter, i, bitsAt(array, i), deviceBounds);
          return;
        }
      }
    }
    const size = countOf(readSource(ctx.sizes, i));
    if (strided) start = i * stride;
    else if (!ctx.sizes.perSegment) start = i * size;
    // Saturating, as the WGSL twin's addSat: an end past 2^32 - 1 reads 2^32 - 1 on every backend.
    const end = Math.min(start + size, 4294967295);
    if (end > itemsLength) {
      report(status, StatusCode.PastItems, sizesParameter, i, word(end), itemsBounds);
      return;
    }
    if (strided && size > stride) {
      report(status, StatusCode.LargerThanStride, sizesParameter, i, size, strideBounds);
      return;
    }
    if (!strided) start = end;
    total += size;
  }
  const totalBounds = run.totalNumItems;
  if (totalBounds !== undefined && outside(total, totalBounds)) {
    report(status, StatusCode.TotalOutside, parameterOf('totalNumItems'), noSegment, word(total), totalBounds);
  }
}

/** The 'validate' kernel: its first workgroup checks everything (dispatch/plan.ts validateForm may give it more). */
export function runValidate(workgroupId: number, _numWorkgroups: number, _shared: unknown, params: KernelParams): void {
  if (workgroupId !== 0) return;
  const status = params.ctx.status;
  if (status === undefined) throw new Error('internal: validate launched without a status slot');
  validate(params, status);
}

/** The 'segment-offsets' kernel (grid 1). */
export function runSegmentOffsets(workgroupId: number, _numWorkgroups: number, _shared: unknown, { ctx }: KernelParams): void {
  if (workgroupId !== 0) return;
  if (ctx.failed()) return;
  if (ctx.offsetsSlot < 0) throw new Error("internal: segment-offsets launched without the 'offsets' slot");
  const offsets = ctx.tempU32;
  const base = ctx.offsetsSlot;
  const segments = ctx.activeSegments();
  const sizes = ctx.sizes;
  let sum = 0;
  for (let i = 0; i < segments; i++) {
    offsets[base + i] = sum;
    sum += countOf(readSource(sizes, i));
    if (sum > 4294967295) sum = 4294967295;
  }
  offsets.fill(sum, base + segments, base + ctx.maxSegments + 1);
  if (ctx.sizeOrder) writeSizeOrder(ctx, offsets, base + ctx.maxSegments + 1, segments);
}

/**
 * The segments' indices by size class (dispatch/problem.ts `sizeOrderClass`), class 0 first and by
 * index within a class, from word `at` (the WGSL twin: webgpu/prologue.ts `sizeOrderWgsl`).
 */
function writeSizeOrder(ctx: KernelParams['ctx'], words: Uint32Array, at: number, segments: number): void {
  const classOf = (i: number) => sizeOrderClass(countOf(readSource(ctx.sizes, i)), ctx.maxSegmentSize);
  const starts = new Array<number>(sizeOrderClasses).fill(0);
  for (let i = 0; i < segments; i++) starts[classOf(i)]!++;
  for (let c = 0, sum = 0; c < sizeOrderClasses; c++) [starts[c], sum] = [sum, sum + starts[c]!];
  for (let i = 0; i < segments; i++) words[at + starts[classOf(i)]!++] = i;
}

/** The prologue kernels' CPU entries, for an algorithm's CPU kernel table. */
export const prologueCpuKernels = {
  validate: { body: runValidate, bytes: () => 16 },
  'segment-offsets': { body: runSegmentOffsets, bytes: () => 16 },
} as const;
