/**
 * Compile-time rules of MoE routing weights and of the one-call form `DeviceBatchedTopK.topk`:
 * `weights` needs `weightsOut` beside it and f32 keys, its own unknown fields are named; the
 * options of `topk` name an unknown field, a missing `rows`/`k`, and a literal k below 1; the result
 * has `weights` only when weights were asked for. The runtime twins (same text where both exist) are
 * in test/conformance/topk-weights.suite.ts and test/topk-short-form.test.ts.
 */
import { expectError, expectType } from 'tsd';
import { type DeviceArray, type ValidateTopKArgs, type ValidateTopKOptions, DeviceBatchedTopK, p } from 'segkit';
import { type RequiredWith, requiredWith } from '../src/types/messages.js';

declare const keysIn: DeviceArray<'f32'>;
declare const intKeys: DeviceArray<'i32'>;
declare const keysOut: DeviceArray<'f32'>;
declare const intKeysOut: DeviceArray<'i32'>;
declare const weightsOut: DeviceArray<'f32'>;
declare const indicesOut: DeviceArray<'u32'>;
const base = { keysIn, keysOut, segmentSizes: p.constant(128), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.uniform(10) };

// Passing.
DeviceBatchedTopK.plan({ ...base, weights: { kind: 'softmax' }, weightsOut });
DeviceBatchedTopK.plan({ ...base, weights: { kind: 'sigmoid-renormalize', scale: 2.5 }, weightsOut });
DeviceBatchedTopK.maxKeys({ keysIn, keysOut, segmentSizes: p.constant(128), k: p.constant(2), numSegments: p.uniform(10), weights: { kind: 'softmax' }, weightsOut });

// Failing, each with its message on the field.
expectError(DeviceBatchedTopK.plan({ ...base, weights: { kind: 'softmax' } }));
expectType<'(Error) weightsOut: required when weights is given'>(null! as ValidateTopKArgs<typeof base & { weights: { kind: 'softmax' } }>['weights']);
expectError(DeviceBatchedTopK.plan({ ...base, weights: { kind: 'softmx' }, weightsOut }));
expectType<"(Error) weights: expected { kind: 'softmax' or 'sigmoid-renormalize', scale?: number }">(
  null! as ValidateTopKArgs<typeof base & { weights: { kind: 'softmx' }; weightsOut: typeof weightsOut }>['weights'],
);
expectError(DeviceBatchedTopK.plan({ ...base, weights: { kind: 'softmax', scal: 2 }, weightsOut }));
expectType<"(Error) unknown field 'scal' (did you mean 'scale'?)">(
  null! as ValidateTopKArgs<typeof base & { weights: { kind: 'softmax'; scal: 2 }; weightsOut: typeof weightsOut }>['weights']['scal'],
);
expectError(DeviceBatchedTopK.plan({ ...base, keysIn: intKeys, keysOut: intKeysOut, weights: { kind: 'softmax' }, weightsOut }));
expectType<'(Error) weights: routing weights need f32 keys; keysIn holds i32'>(
  null! as ValidateTopKArgs<Omit<typeof base, 'keysIn'> & { keysIn: typeof intKeys; weights: { kind: 'softmax' }; weightsOut: typeof weightsOut }>['weights'],
);
expectError(DeviceBatchedTopK.plan({ ...base, weights: { kind: 'softmax' }, weightsOut: indicesOut }));

// One message source.
expectType<RequiredWith<'weights'>>(requiredWith('weights'));
expectType<'required when weights is given'>(requiredWith('weights'));

// The one-call form.
const short = await DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 2, weights: 'softmax' });
expectType<DeviceArray<'f32'>>(short.keys);
expectType<DeviceArray<'u32'>>(short.indices);
expectType<DeviceArray<'f32'>>(short.weights);
const noWeights = await DeviceBatchedTopK.topk(intKeys, { rows: 10, k: 4, largest: false, indicesOut });
expectType<DeviceArray<'i32'>>(noWeights.keys);
expectType<undefined>(noWeights.weights);
await DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 2, weights: { kind: 'sigmoid-renormalize', scale: 2.5 }, weightsOut });
declare const rows: number;
declare const k: number;
await DeviceBatchedTopK.topk(keysIn, { rows, k }); // runtime values: checked when called

expectError(DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 0 }));
expectType<'(Error) k: 0 is outside the static bounds [1, 4294967295]'>(null! as ValidateTopKOptions<{ rows: 10; k: 0 }>['k']);
expectError(DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 1.5 }));
expectType<'(Error) k: 1.5 is not an integer'>(null! as ValidateTopKOptions<{ rows: 10; k: 1.5 }>['k']);
expectError(DeviceBatchedTopK.topk(keysIn, { rowz: 10, k: 2 }));
expectType<"(Error) unknown field 'rowz' (did you mean 'rows'?)">(null! as ValidateTopKOptions<{ rowz: 10; k: 2; rows: 1 }>['rowz']);
expectType<"(Error) missing required field 'rows'">(null! as ValidateTopKOptions<{ k: 2 }>['rows']);
expectError(DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 2, weights: 'softmx' }));
expectType<"(Error) weights: expected 'softmax', 'sigmoid-renormalize' or { kind: 'softmax' or 'sigmoid-renormalize', scale?: number }">(
  null! as ValidateTopKOptions<{ rows: 10; k: 2; weights: 'softmx' }>['weights'],
);
expectError(DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 2, weights: { kind: 'softmax', scal: 2 } }));
expectError(DeviceBatchedTopK.topk(keysIn, { rows: 10, k: 2, largest: 'no' }));
