/**
 * Compile-time rule: a missing required field is named (`numSegments`, `keysOut`, `valuesOut` of
 * `maxPairs`), and a mistake in one field is reported on that field only: the correct fields keep
 * their own types instead of reading as wrong. Mirror of `ValidateFields` (src/types/fields.ts); the
 * compiler's own diagnostics are pinned in test/fixtures/compile-errors/missing-field.ts.
 */
import { expectError, expectType } from 'tsd';
import { type ConstantParam, type DeviceArray, type ValidateTopKArgs, DeviceBatchedTopK, p } from 'segkit';
import { type MissingField, missingField } from '../src/types/messages.js';

declare const keysIn: DeviceArray<'f32'>;
declare const keysOut: DeviceArray<'f32'>;
declare const valuesOut: DeviceArray<'u32'>;
const base = { keysIn, keysOut, segmentSizes: p.constant(256), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.uniform(10) };
const { numSegments, ...withoutNumSegments } = base;
const { keysOut: _keysOut, ...withoutKeysOut } = base;
const { selectDirection, ...withoutDirection } = base;

// Failing: each required field left out.
expectError(DeviceBatchedTopK.plan(withoutNumSegments));
expectError(DeviceBatchedTopK.select(withoutKeysOut));
expectError(DeviceBatchedTopK.maxPairs(withoutDirection));
expectError(DeviceBatchedTopK.minPairs(withoutDirection));
// An explicit undefined is missing too where the field is required.
expectError(DeviceBatchedTopK.maxPairs({ ...withoutDirection, valuesOut: undefined }));
// Passing: the same with the field.
DeviceBatchedTopK.maxPairs({ ...withoutDirection, valuesOut });
DeviceBatchedTopK.maxKeys(withoutDirection);

// The exact text, and no blame on the fields that are right.
type NoNumSegments = ValidateTopKArgs<typeof withoutNumSegments>;
expectType<"(Error) missing required field 'numSegments'">(null! as NoNumSegments['numSegments']);
expectType<ConstantParam<2>>(null! as NoNumSegments['k']);
expectType<ConstantParam<256>>(null! as NoNumSegments['segmentSizes']);
expectType<(typeof base)['selectDirection']>(null! as NoNumSegments['selectDirection']);
expectType<"(Error) missing required field 'keysOut'">(null! as ValidateTopKArgs<typeof withoutKeysOut>['keysOut']);
expectType<"(Error) missing required field 'valuesOut'">(null! as ValidateTopKArgs<typeof withoutDirection, {}, 'pairs'>['valuesOut']);
expectType<'(Error) valuesOut: expected a DeviceArray of f32, i32 or u32 values'>(
  null! as ValidateTopKArgs<typeof withoutDirection & { valuesOut: undefined }, {}, 'pairs'>['valuesOut'],
);
// A plain type error in one field (a number for keysIn) is named there; the rest stay as written.
type WrongKeys = ValidateTopKArgs<Omit<typeof base, 'keysIn'> & { keysIn: number }>;
expectType<'(Error) keysIn: expected a DeviceArray of f32, i32 or u32 keys'>(null! as WrongKeys['keysIn']);
expectType<ConstantParam<2>>(null! as WrongKeys['k']);
// A valid object is its own type (the parameter costs one comparison).
expectType<typeof base>(null! as ValidateTopKArgs<typeof base>);

// One message source.
expectType<MissingField<'numSegments'>>(missingField('numSegments'));
expectType<"missing required field 'numSegments'">(missingField('numSegments'));
