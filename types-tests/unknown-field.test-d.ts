/**
 * Compile-time rule (docs/top-k.md, "Arguments"): an unknown field in top-k's args, in `env(...)` options and in their
 * `requirements`, `guarantees` and `tuning` does not compile; the message names it and the closest
 * known field. Mirror of `ValidateFields` (src/types/fields.ts) as `ValidateTopKArgs` and
 * `ValidateEnvOptions` use it; the runtime twin (`checkFields`) is tested in the conformance suite
 * and test/env.test.ts, the compiler's own diagnostics in test/fixtures/compile-errors/unknown-field.ts.
 */
import { expectError, expectType } from 'tsd';
import {
  type ConstantParam,
  type DeviceArray,
  type Env,
  type TopKPlan,
  type ValidateTopKArgs,
  DeviceBatchedTopK,
  env,
  p,
} from 'segkit';
import type { ValidateEnvOptions } from '../src/env/env.js';
import { type UnknownField, unknownField } from '../src/types/messages.js';

declare const keysIn: DeviceArray<'f32'>;
declare const keysOut: DeviceArray<'f32'>;
declare const valuesOut: DeviceArray<'u32'>;
const base = { keysIn, keysOut, segmentSizes: p.constant(256), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.uniform(10) };
const { selectDirection, ...withoutDirection } = base;

// Passing: every field known.
expectType<TopKPlan>(DeviceBatchedTopK.plan({ ...base, segmentStride: p.constant(300) }));
expectType<Env<{ readonly maxK: 8 }>>(env({ requirements: { outputOrdering: 'unsorted' }, guarantees: { maxK: 8 }, tuning: { variant: 'reduce' } }));

// Failing: a misspelled field in args (typed or not), in each shorthand, in env at every level.
expectError(DeviceBatchedTopK.plan({ ...base, segmentStrid: p.constant(13) }));
expectError(DeviceBatchedTopK.select({ ...base, segmentStrides: p.constant(13) }));
expectError(DeviceBatchedTopK.plan({ ...base, segmentStrid: 13 }));
expectError(DeviceBatchedTopK.maxKeys({ ...withoutDirection, valuesOut }));
expectError(DeviceBatchedTopK.maxPairs({ ...base, valuesOut }));
expectError(env({ backnd: undefined }));
expectError(env({ requirements: { outputOrder: 'unsorted' } }));
expectError(env({ guarantees: { maxK: 8, maxk: 8 } }));
expectError(env({ tuning: { varient: 'reduce' } }));
// Through a variable (no excess-property check applies): still an error.
const options = { tunning: { variant: 'reduce' } };
expectError(env(options));

// The exact text, on the offending field alone: the correct fields keep their own types.
type Typo = ValidateTopKArgs<typeof base & { segmentStrid: ConstantParam<13> }>;
expectType<"(Error) unknown field 'segmentStrid' (did you mean 'segmentStride'?)">(null! as Typo['segmentStrid']);
expectType<ConstantParam<2>>(null! as Typo['k']);
expectType<"(Error) unknown field 'segmentStrides' (did you mean 'segmentStride'?)">(
  null! as ValidateTopKArgs<typeof base & { segmentStrides: 13 }>['segmentStrides'],
);
expectType<"(Error) unknown field 'speed'; the fields are 'keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'">(
  null! as ValidateTopKArgs<typeof base & { speed: 1 }>['speed'],
);
expectType<"(Error) unknown field 'valuesOut'; the fields are 'keysIn', 'keysOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'">(
  null! as ValidateTopKArgs<typeof withoutDirection & { valuesOut: DeviceArray<'u32'> }, {}, 'keys'>['valuesOut'],
);
expectType<"(Error) unknown field 'selectDirection'; the fields are 'keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'">(
  null! as ValidateTopKArgs<typeof base & { valuesOut: DeviceArray<'u32'> }, {}, 'pairs'>['selectDirection'],
);
expectType<"(Error) unknown field 'backnd' (did you mean 'backend'?)">(null! as ValidateEnvOptions<{ backnd: undefined }>['backnd']);
expectType<"(Error) unknown field 'outputOrder' (did you mean 'outputOrdering'?)">(
  null! as ValidateEnvOptions<{ requirements: { outputOrder: 'unsorted' } }>['requirements']['outputOrder'],
);
expectType<"(Error) unknown field 'maxk' (did you mean 'maxK'?)">(null! as ValidateEnvOptions<{ guarantees: { maxK: 8; maxk: 8 } }>['guarantees']['maxk']);
expectType<8>(null! as ValidateEnvOptions<{ guarantees: { maxK: 8; maxk: 8 } }>['guarantees']['maxK']);
expectType<"(Error) unknown field 'varient' (did you mean 'variant'?)">(null! as ValidateEnvOptions<{ tuning: { varient: 'reduce' } }>['tuning']['varient']);
expectType<"(Error) unknown field 'tunning' (did you mean 'tuning'?)">(null! as ValidateEnvOptions<typeof options>['tunning']);

// One message source: the type and the runtime function give the same text.
expectType<UnknownField<'segmentStrid', ['segmentStride']>>(unknownField('segmentStrid', ['segmentStride']));
