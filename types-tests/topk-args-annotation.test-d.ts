/**
 * `TopKArgs` (and `TopKKeysArgs`, `TopKPairsArgs` for the shorthands) annotate a user's own args
 * object, and `plan`/`select` accept it: what the widened types no longer tell the compiler is
 * checked at run time. `satisfies TopKArgs` keeps the literal types and so the compile-time checks.
 * A wrapper generic over the args forwards the check with `ValidateTopKArgs`.
 */
import { expectError, expectType } from 'tsd';
import {
  type DeviceArray,
  type TopKArgs,
  type TopKArgsShape,
  type TopKKeysArgs,
  type TopKPairsArgs,
  type TopKPlan,
  type ValidateTopKArgs,
  DeviceBatchedTopK,
  env,
  p,
} from 'segkit';

declare const keysIn: DeviceArray<'f32'>;
declare const keysOut: DeviceArray<'f32'>;
declare const valuesOut: DeviceArray<'u32'>;
declare const k: number;
declare const direction: 'max' | 'min';

// Annotated: every parameter kind and option kind, accepted by plan and select.
const annotated: TopKArgs = {
  keysIn,
  keysOut,
  valuesOut,
  segmentSizes: p.perSegment([256, 128], { min: 1, max: 256 }),
  k: p.uniform(k, { min: 1, max: 8 }),
  selectDirection: p.uniformOption(direction, ['max', 'min']),
  numSegments: p.constant(2),
  segmentStride: p.uniform(300),
  totalNumItems: p.guarantee({ max: 1 << 20 }),
};
expectType<TopKPlan>(DeviceBatchedTopK.plan(annotated));
expectType<TopKPlan>(DeviceBatchedTopK.plan(annotated, env({ guarantees: { maxK: 4 } })));
expectType<Promise<void>>(DeviceBatchedTopK.select(annotated));
const constantDirection: TopKArgs = { ...annotated, selectDirection: p.constantOption('min') };
expectType<TopKPlan>(DeviceBatchedTopK.plan(constantDirection));

// The shorthands' annotation types.
const keysOnly: TopKKeysArgs = { keysIn, keysOut, segmentSizes: p.constant(256), k: p.uniform(k, { min: 1, max: 8 }), numSegments: p.uniform(4) };
expectType<Promise<void>>(DeviceBatchedTopK.maxKeys(keysOnly));
expectType<Promise<void>>(DeviceBatchedTopK.minKeys(keysOnly));
const pairs: TopKPairsArgs = { ...keysOnly, valuesOut };
expectType<Promise<void>>(DeviceBatchedTopK.maxPairs(pairs));
expectType<Promise<void>>(DeviceBatchedTopK.minPairs(pairs));
// A keys-only object is not a pairs call, and TopKArgs is not a shorthand's (it has a direction).
expectError(DeviceBatchedTopK.maxPairs(keysOnly));
expectError(DeviceBatchedTopK.maxKeys(annotated));

// `satisfies` keeps the literal types, so the static bounds are still checked at compile time.
const satisfied = {
  keysIn,
  keysOut,
  segmentSizes: p.constant(256),
  k: p.uniform(k, { min: 8, max: 16 }),
  selectDirection: p.constantOption('max'),
  numSegments: p.uniform(4),
} satisfies TopKArgs;
expectType<TopKPlan>(DeviceBatchedTopK.plan(satisfied));
expectError(DeviceBatchedTopK.plan(satisfied, env({ guarantees: { maxK: 4 } })));

// A wrapper generic over the args forwards the check; its callers get the messages.
function planTopK<const Args extends TopKArgsShape | object>(args: ValidateTopKArgs<Args>): TopKPlan {
  return DeviceBatchedTopK.plan(args);
}
expectType<TopKPlan>(planTopK(satisfied));
expectError(planTopK({ ...satisfied, segmentStrid: p.constant(13) }));
