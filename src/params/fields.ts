import { SegkitUsageError } from '../errors.js';
import { missingField, unknownField } from '../types/messages.js';
import { describe as describeValue, isDeviceArray } from '../backends/backend.js';

/**
 * The runtime twin of `ValidateFields` (src/types/fields.ts), for callers without types or through
 * `any`: throws a `SegkitUsageError` naming the first own field of `value` that is not in `known`
 * (with the closest known name, if one is close), then the first of `required` that is absent or
 * `undefined`. `where` prefixes the message (`'args'`, `'env.requirements'`). A misspelled field must
 * never be read as an absent one: `segmentStrid` would otherwise run as if segments were packed.
 *
 * @example `checkFields('args', { segmentStrid: 13 }, ['segmentStride'])` throws
 * `args: unknown field 'segmentStrid' (did you mean 'segmentStride'?)`.
 */
export function checkFields(where: string, value: object, known: readonly string[], required: readonly string[] = []): void {
  for (const field of Object.keys(value)) {
    if (!known.includes(field)) throw new SegkitUsageError(`${where}: ${unknownField(field, known)}`);
  }
  for (const field of required) {
    if ((value as Record<string, unknown>)[field] === undefined) throw new SegkitUsageError(`${where}: ${missingField(field)}`);
  }
}

/**
 * What every algorithm's planner checks first, for callers without types or through `any`: `args` is
 * an object, each field is one the algorithm has (a misspelled one is named, with the closest name)
 * and each required one is there, and the fields named in `arrays` hold DeviceArrays.
 */
export function checkArgsObject<Args>(args: Args, known: readonly string[], required: readonly string[], arrays: readonly (keyof Args & string)[]): void {
  if (typeof args !== 'object' || args === null) throw new SegkitUsageError(`args: expected an object; got ${describeValue(args)}`);
  checkFields('args', args, known, required);
  for (const name of arrays) {
    if (!isDeviceArray(args[name])) throw new SegkitUsageError(`${name}: expected a DeviceArray; got ${describeValue(args[name])}`);
  }
}
