import { GuaranteeViolationError } from '../errors.js';
import type { Bounds } from '../params/param.js';
import { type NumericFacts, type OptionFacts, effectiveBounds } from '../params/resolve.js';
import { badDeviceBounds, largerThanStride, outsideDeviceBounds, outsideStaticBounds, pastTheItems } from '../types/messages.js';
import type { SegmentedInput } from './geometry.js';
import { type DeviceCheck, StatusCode, StatusWord, noSegment } from './problem.js';

/*
 * Validation of device-only values (`guaranteeChecks: 'validate'`): the checks the validate kernel
 * runs, built from the parameters' facts, and the status words it writes turned into the
 * `GuaranteeViolationError` the host reports. Every backend's validate kernel reads the same list in
 * the same order, so the reported violation is the same everywhere.
 */

/** The checks of every device-only value among `parameters`, in order; `names` gives each check's parameter index. */
export function deviceChecks(parameters: readonly (NumericFacts | OptionFacts | undefined)[], names: readonly string[]): DeviceCheck[] {
  const checks: DeviceCheck[] = [];
  const indexOf = (name: string) => {
    const index = names.indexOf(name);
    if (index < 0) throw new Error(`internal: '${name}' is missing from the plan's parameter names`);
    return index;
  };
  for (const f of parameters) {
    if (f === undefined || f.deviceValues === undefined && !('deviceBounds' in f && f.deviceBounds !== undefined)) continue;
    const parameter = indexOf(f.name);
    const kind = f.kind === 'perSegment' ? 'per-segment' : 'scalar';
    if ('options' in f) {
      checks.push({ parameter, kind, array: f.deviceValues!, bounds: { min: 0, max: f.options.length - 1 }, deviceBounds: undefined });
      continue;
    }
    const bounds = effectiveBounds(f);
    if (f.deviceBounds !== undefined) checks.push({ parameter, kind: 'device-bounds', array: f.deviceBounds, bounds, deviceBounds: undefined });
    // A check that no value of the array's dtype can fail is left out (it would only cost a read-back).
    if (f.deviceValues !== undefined && (f.deviceBounds !== undefined || !coversDtype(bounds, f.deviceValues.dtype))) {
      checks.push({ parameter, kind, array: f.deviceValues, bounds, deviceBounds: f.deviceBounds });
    }
  }
  return checks;
}

/** Whether `bounds` hold every value of an integer dtype (f32 never: NaN is outside every bounds). */
function coversDtype(bounds: Bounds, dtype: string): boolean {
  if (dtype === 'u32') return bounds.min <= 0 && bounds.max >= 4294967295;
  if (dtype === 'i32') return bounds.min <= -2147483648 && bounds.max >= 2147483647;
  return false;
}

const wordView = new DataView(new ArrayBuffer(4));
const f32Bits = (x: number) => (wordView.setFloat32(0, x), wordView.getUint32(0));
const bitsF32 = (bits: number) => (wordView.setUint32(0, bits >>> 0), wordView.getFloat32(0));

/** The f32 next to `x` (an f32) towards +Infinity (`up`) or -Infinity. */
function nextF32(x: number, up: boolean): number {
  if (x === 0) return up ? 2 ** -149 : -(2 ** -149);
  const bits = f32Bits(x);
  return bitsF32(x > 0 === up ? bits + 1 : bits - 1);
}

/**
 * A check's bounds as two words in its array's dtype, `[lo, hi]`, so that a device compares an
 * element with them in its own type and finds exactly what `lo <= value <= hi` finds on the host:
 * integers rounded inward and clamped to the dtype's range, f32 bounds rounded inward to f32 (an
 * f32 value is at least `min` iff it is at least the smallest f32 not below `min`). Empty: `[1, 0]`
 * for integers, `[+Infinity, -Infinity]` for f32. The status words of a failed check hold these.
 */
export function boundsWords(bounds: Bounds, dtype: string): readonly [number, number] {
  if (dtype === 'f32') {
    let lo = Math.fround(bounds.min);
    if (lo < bounds.min) lo = nextF32(lo, true);
    let hi = Math.fround(bounds.max);
    if (hi > bounds.max) hi = nextF32(hi, false);
    return lo > hi ? [0x7f800000, 0xff800000] : [f32Bits(lo), f32Bits(hi)];
  }
  const [least, most] = dtype === 'i32' ? [-2147483648, 2147483647] : [0, 4294967295];
  const lo = Math.max(least, Math.ceil(bounds.min));
  const hi = Math.min(most, Math.floor(bounds.max));
  return lo > hi ? [1, 0] : [lo >>> 0, hi >>> 0];
}

/** An element's bits as the number it stands for in its dtype. */
function decode(bits: number, dtype: string): number {
  return dtype === 'f32' ? bitsF32(bits) : dtype === 'i32' ? bits | 0 : bits >>> 0;
}

/**
 * The violation the status words describe, or undefined when they say all is well. A value that
 * failed one of `checks` is read in its array's dtype and reported with the check's own bounds.
 */
export function violationOf(words: Uint32Array, names: readonly string[], input: SegmentedInput, checks: readonly DeviceCheck[] = []): GuaranteeViolationError | undefined {
  const code = words[StatusWord.code]!;
  if (code === StatusCode.Ok) return undefined;
  const parameterIndex = words[StatusWord.parameter]!;
  const parameter = names[parameterIndex] ?? 'unknown';
  const segment = words[StatusWord.segment] === noSegment ? undefined : words[StatusWord.segment];
  const check =
    code === StatusCode.OutsideStatic || code === StatusCode.OutsideDevice
      ? checks.find((c) => c.parameter === parameterIndex && c.kind === (segment === undefined ? 'scalar' : 'per-segment'))
      : undefined;
  const value = check === undefined ? words[StatusWord.value]! : decode(words[StatusWord.value]!, check.array.dtype);
  const bounds = check !== undefined && code === StatusCode.OutsideStatic ? check.bounds : { min: words[StatusWord.min]!, max: words[StatusWord.max]! };
  const detail =
    code === StatusCode.OutsideStatic || code === StatusCode.TotalOutside
      ? outsideStaticBounds(value, bounds.min, bounds.max)
      : code === StatusCode.OutsideDevice
        ? outsideDeviceBounds(value, bounds.min, bounds.max)
        : code === StatusCode.BadDeviceBounds
          ? badDeviceBounds(bounds.min, bounds.max)
          : code === StatusCode.PastItems
            ? `the segment ${pastTheItems(value, bounds.max, input.noun, input.name)}`
            : largerThanStride(value, bounds.max);
  return new GuaranteeViolationError(parameter, detail, segment, value, bounds);
}
