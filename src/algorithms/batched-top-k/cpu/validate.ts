import { deviceMemory } from '../../../backends/cpu/memory.js';
import type { Bounds } from '../../../params/param.js';
import { type DeviceCheck, type DeviceCheckParameter, StatusCode, deviceCheckParameters } from '../problem.js';
import { type TopKContext, type TopKKernelParams, countOf, numericView, readSource } from './common.js';

/*
 * 'validate' (grid 1): checks every device-only value before anything is written and reports the
 * first violation in the 8 status words (problem.ts `StatusCode`); all zeros when everything holds.
 *
 * Order of the checks, so the reported violation is deterministic on every backend:
 * 1. scalar checks (`kind: 'scalar'`) in `run.checks` order, then a device `numSegments` against
 *    `maxSegments`, then `device-bounds` checks in `run.checks` order (none of these has a segment);
 * 2. segments in ascending order (the lowest failing segment wins), each through: its per-segment
 *    checks in `run.checks` order (static bounds, then device bounds), its extent within the keys
 *    (`PastKeys`), and its size within the stride (`LargerThanStride`);
 * 3. the sum of the sizes within `run.totalNumItems` (`TotalOutside`).
 *
 * Status words: value = the element's raw 32 bits for an array element, else the computed number
 * clamped to [0, 2^32 - 1]; bounds clamped to [0, 2^32 - 1] (an infinite bound reads 0 or 0xFFFFFFFF),
 * except for `BadDeviceBounds`, whose bound words are the device bounds' raw bits [min, max] and whose
 * value is the failing one of them. `PastKeys`: value = the segment's end, bounds [0, keysLength];
 * `LargerThanStride`: value = the size, bounds [0, stride]; both name 'segmentSizes'.
 */

const noSegment = 0xffffffff;

function word(value: number): number {
  return value > 0 ? (value >= 4294967295 ? 4294967295 : Math.floor(value)) : 0;
}

function parameterIndex(parameter: DeviceCheckParameter): number {
  return deviceCheckParameters.indexOf(parameter);
}

function report(
  status: Uint32Array,
  code: StatusCode,
  parameter: DeviceCheckParameter,
  segment: number,
  valueBits: number,
  bounds: Bounds,
): true {
  status[0] = code;
  status[1] = parameterIndex(parameter);
  status[2] = segment;
  status[3] = valueBits >>> 0;
  status[4] = word(bounds.min);
  status[5] = word(bounds.max);
  status[6] = 0;
  status[7] = 0;
  return true;
}

/** Raw bits of element `i` of a device array (0 past its end). */
function bitsAt(check: DeviceArray32, i: number): number {
  return i < check.length ? check.bits[i]! : 0;
}

interface DeviceArray32 {
  readonly values: Int32Array | Uint32Array | Float32Array;
  readonly bits: Uint32Array;
  readonly length: number;
}

function view32(array: DeviceCheck['array']): DeviceArray32 {
  return { values: numericView(array), bits: deviceMemory(array).u32, length: array.length };
}

function valueAt(array: DeviceArray32, i: number): number {
  return i < array.length ? array.values[i]! : 0;
}

const outside = (value: number, bounds: Bounds) => !(value >= bounds.min && value <= bounds.max);

function checkScalars(ctx: TopKContext, status: Uint32Array): boolean {
  const run = ctx.run;
  for (const check of run.checks) {
    if (check.kind !== 'scalar') continue;
    const array = view32(check.array);
    const value = valueAt(array, 0);
    if (outside(value, check.bounds)) return report(status, StatusCode.OutsideStatic, check.parameter, noSegment, bitsAt(array, 0), check.bounds);
  }
  const numSegments = run.problem.numSegments;
  if (numSegments.kind === 'device') {
    const array = view32(numSegments.array);
    const value = valueAt(array, 0);
    const bounds = { min: 0, max: ctx.maxSegments };
    if (outside(value, bounds)) return report(status, StatusCode.OutsideStatic, 'numSegments', noSegment, bitsAt(array, 0), bounds);
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

function validate(ctx: TopKContext, status: Uint32Array): void {
  status.fill(0, 0, 8);
  if (checkScalars(ctx, status)) return;
  const run = ctx.run;
  const segments = ctx.activeSegments();
  const perSegment = run.checks
    .filter((check) => check.kind === 'per-segment')
    .map((check) => ({
      check,
      array: view32(check.array),
      device: check.deviceBounds === undefined ? undefined : view32(check.deviceBounds),
    }));
  const strided = ctx.startMode === 2;
  const stride = strided ? countOf(readSource(ctx.stride!, 0)) : 0;
  const keysLength = run.problem.keysLength;
  const keysBounds = { min: 0, max: keysLength };
  const strideBounds = { min: 0, max: stride };
  let start = 0;
  let total = 0;
  for (let i = 0; i < segments; i++) {
    for (const { check, array, device } of perSegment) {
      const value = valueAt(array, i);
      if (outside(value, check.bounds)) {
        report(status, StatusCode.OutsideStatic, check.parameter, i, bitsAt(array, i), check.bounds);
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
    const end = start + size;
    if (end > keysLength) {
      report(status, StatusCode.PastKeys, 'segmentSizes', i, word(end), keysBounds);
      return;
    }
    if (strided && size > stride) {
      report(status, StatusCode.LargerThanStride, 'segmentSizes', i, size, strideBounds);
      return;
    }
    if (!strided) start = end;
    total += size;
  }
  const totalBounds = run.totalNumItems;
  if (totalBounds !== undefined && outside(total, totalBounds)) {
    report(status, StatusCode.TotalOutside, 'totalNumItems', noSegment, word(total), totalBounds);
  }
}

/** The 'validate' kernel (grid 1). */
export function runValidate(workgroupId: number, _numWorkgroups: number, _shared: unknown, params: TopKKernelParams): void {
  if (workgroupId !== 0) return;
  const ctx = params.ctx;
  if (ctx.status === undefined) throw new Error('internal: validate launched without a status slot');
  validate(ctx, ctx.status);
}
