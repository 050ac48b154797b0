import type { Backend, DeviceArray } from '../backends/backend.js';
import { GuaranteeViolationError } from '../errors.js';
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
    if (f.deviceValues !== undefined) checks.push({ parameter, kind, array: f.deviceValues, bounds, deviceBounds: f.deviceBounds });
  }
  return checks;
}

/** The violation the status words describe, or undefined when they say all is well. */
export function violationOf(words: Uint32Array, names: readonly string[], input: SegmentedInput): GuaranteeViolationError | undefined {
  const code = words[StatusWord.code]!;
  if (code === StatusCode.Ok) return undefined;
  const parameter = names[words[StatusWord.parameter]!] ?? 'unknown';
  const segment = words[StatusWord.segment] === noSegment ? undefined : words[StatusWord.segment];
  const value = words[StatusWord.value]!;
  const bounds = { min: words[StatusWord.min]!, max: words[StatusWord.max]! };
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

/** Reads the status words once the work that writes them is done, and throws the violation they report. */
export async function throwOnViolation(backend: Backend, status: DeviceArray<'u32'>, names: readonly string[], input: SegmentedInput): Promise<void> {
  const violation = violationOf(await backend.download(status), names, input);
  if (violation !== undefined) throw violation;
}
