import type { DeviceArray } from '../../backends/backend.js';
import type { Guarantees } from '../../env/env.js';
import type { GuaranteeParam, InferOptions, OptionParam } from '../../params/param.js';
import type { CheckDomain, CheckFieldKind, ReachableAbove, ReachableUpTo, ScalarParam, SegmentDomains, SegmentParam, StaticMax, StaticMin } from '../../types/domains.js';
import type { OptionNotInSet, RequiredWith } from '../../types/messages.js';
import type { KnownGreater, KnownLess } from '../../types/numeric.js';
import type { ErrorMessage } from '../../types/validate.js';
import type { FieldsShape, ValidateFields } from '../../types/fields.js';
import type { SelectDirection } from './keys.js';
import type { TopKVariant } from './policy.js';
import type { RoutingWeightsKind } from './routing.js';

export type { RoutingWeightsKind };

/**
 * MoE routing weights, written by an epilogue of top-k into `weightsOut` (f32, the layout of
 * `keysOut`): for each segment, `'softmax'` over its selected keys (max-subtracted), or
 * `'sigmoid-renormalize'` (DeepSeek-V3: the sigmoid of each selected key, divided by their sum),
 * times `scale` (the routed scaling factor, default 1). Slots past a segment's results get 0.
 * docs/top-k.md states the rules for NaN and infinite keys and the accuracy (within 1 ulp of the
 * exact value, the same bits on every backend).
 */
export interface RoutingWeights {
  /** `'softmax'` or `'sigmoid-renormalize'`. */
  readonly kind: RoutingWeightsKind;
  /** Multiplies every weight: a positive f32 (at least 2^-126); default 1. */
  readonly scale?: number | undefined;
}


/**
 * The arguments of {@link DeviceBatchedTopK}'s `plan` and `select` (docs/top-k.md states their contract),
 * and the type to annotate your own args object with: `const args: TopKArgs = { ... }` is accepted by `plan(args)` and `select(args)`.
 * An annotation widens each parameter to its kind (`UniformParam<number, number>`), so the static
 * bounds are then checked when planning rather than by the compiler; to keep the compile-time checks,
 * write `{ ... } satisfies TopKArgs` (the literal types stay) or pass the object inline.
 *
 * @example
 * ```ts
 * function topKOfRows(keysIn: DeviceArray<'f32'>, keysOut: DeviceArray<'f32'>, rows: number, k: number) {
 *   const args: TopKArgs = {
 *     keysIn, keysOut,
 *     segmentSizes: p.constant(256),
 *     k: p.uniform(k, { min: 1, max: 256 }),
 *     selectDirection: p.constantOption('max'),
 *     numSegments: p.uniform(rows),
 *   };
 *   return DeviceBatchedTopK.plan(args);
 * }
 * ```
 */
export interface TopKArgs {
  /** All segments' keys: `f32`, `i32` or `u32`. */
  readonly keysIn: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** `numSegments * kMax` keys of the same dtype. */
  readonly keysOut: DeviceArray<'f32' | 'i32' | 'u32'>;
  /** A payload, one per key. Without it, `valuesOut` receives segment-local indices. */
  readonly valuesIn?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** `numSegments * kMax` values (`u32`, `i32` or `f32`). */
  readonly valuesOut?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** Segment sizes: constant, uniform or per-segment. */
  readonly segmentSizes: SegmentParam;
  /** Segment `i` starts at `i * stride`; without it segments are packed. */
  readonly segmentStride?: ScalarParam | undefined;
  /** How many keys to select per segment, `k >= 1`. */
  readonly k: SegmentParam;
  /** `'max'` or `'min'`: constant, uniform or per-segment. */
  readonly selectDirection: OptionParam;
  /** Number of segments: constant or uniform (a number, or a 1-element DeviceArray). */
  readonly numSegments: ScalarParam;
  /** A guarantee on the total number of keys, which sizes temporary storage. */
  readonly totalNumItems?: GuaranteeParam | undefined;
  /** MoE routing weights of the selected keys (f32 keys only), written into `weightsOut`. */
  readonly weights?: RoutingWeights | undefined;
  /** `numSegments * kMax` f32 weights, the layout of `keysOut`; required with `weights`. */
  readonly weightsOut?: DeviceArray<'f32'> | undefined;
}

/** The arguments of `maxKeys` and `minKeys` (keys only, direction fixed); annotates as {@link TopKArgs} does. */
export type TopKKeysArgs = Omit<TopKArgs, 'selectDirection' | 'valuesIn' | 'valuesOut'>;

/** The arguments of `maxPairs` and `minPairs` (direction fixed, `valuesOut` required); annotates as {@link TopKArgs} does. */
export type TopKPairsArgs = Omit<TopKArgs, 'selectDirection' | 'valuesOut'> & {
  /** `numSegments * kMax` values (`u32`, `i32` or `f32`). */
  readonly valuesOut: DeviceArray<'f32' | 'i32' | 'u32'>;
};

/**
 * The fields each entry point of top-k accepts, in the order the messages list them (and the order
 * that breaks ties between equally close "did you mean" suggestions), and those it requires. The
 * runtime check (`topKFieldSets`) is typed by this, so the two cannot drift apart.
 */
export interface TopKFieldSets {
  /** `plan` and `select`. */
  readonly select: {
    readonly fields: readonly ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'];
    readonly required: readonly ['keysIn', 'keysOut', 'segmentSizes', 'k', 'selectDirection', 'numSegments'];
  };
  /** `maxPairs` and `minPairs`. */
  readonly pairs: {
    readonly fields: readonly ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'];
    readonly required: readonly ['keysIn', 'keysOut', 'valuesOut', 'segmentSizes', 'k', 'numSegments'];
  };
  /** `maxKeys` and `minKeys`. */
  readonly keys: {
    readonly fields: readonly ['keysIn', 'keysOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'];
    readonly required: readonly ['keysIn', 'keysOut', 'segmentSizes', 'k', 'numSegments'];
  };
}

/** Which of {@link TopKFieldSets} an entry point checks its args against. */
export type TopKEntryPoint = keyof TopKFieldSets;

/** The runtime lists of {@link TopKFieldSets}. */
export const topKFieldSets: TopKFieldSets = {
  select: {
    fields: ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'],
    required: ['keysIn', 'keysOut', 'segmentSizes', 'k', 'selectDirection', 'numSegments'],
  },
  pairs: {
    fields: ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'],
    required: ['keysIn', 'keysOut', 'valuesOut', 'segmentSizes', 'k', 'numSegments'],
  },
  keys: {
    fields: ['keysIn', 'keysOut', 'segmentSizes', 'segmentStride', 'k', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'],
    required: ['keysIn', 'keysOut', 'segmentSizes', 'k', 'numSegments'],
  },
};

/** Every field of {@link TopKArgs} is in the `select` list (the list type already admits no other name). */
const everyFieldListed: Exclude<keyof TopKArgs, TopKFieldSets['select']['fields'][number]> extends never ? true : false = true;
void everyFieldListed;

/**
 * The constraint of the API's type parameter (with `| object`): every field the entry point takes,
 * optional and of any type (see `FieldsShape`); {@link ValidateTopKArgs} checks each field. A
 * parameter written inline, `k: p.uniform(v, { min: 1, max: 8 })`, keeps its literal bounds:
 * `unknown` gives it no contextual type to widen to.
 */
export type TopKArgsShape<Entry extends TopKEntryPoint = 'select'> = FieldsShape<TopKFieldSets[Entry]['fields']>;

/** What each parameter of top-k may be, for the messages. */
interface ExpectedKinds {
  keysIn: 'a DeviceArray of f32, i32 or u32 keys';
  keysOut: 'a DeviceArray of f32, i32 or u32 keys';
  valuesIn: 'a DeviceArray of f32, i32 or u32 values';
  valuesOut: 'a DeviceArray of f32, i32 or u32 values';
  k: 'p.constant, p.uniform or p.perSegment';
  segmentSizes: 'p.constant, p.uniform or p.perSegment';
  numSegments: 'p.constant or p.uniform';
  segmentStride: 'p.constant or p.uniform';
  totalNumItems: 'p.guarantee';
  selectDirection: 'p.constantOption, p.uniformOption or p.perSegmentOption';
  weights: "{ kind: 'softmax' or 'sigmoid-renormalize', scale?: number }";
  weightsOut: 'a DeviceArray of f32 weights';
}

/** The natural domain of each numeric parameter of top-k, as literal types (the runtime uses the same numbers). */
export interface TopKDomains extends SegmentDomains {
  k: { min: 1; max: 4294967295; guaranteeMin: never; guaranteeMax: 'maxK' };
}

/**
 * Checks the direction's option set against `'max' | 'min'`. A set that is not literal (`string`, as
 * in an args object annotated with {@link TopKArgs}) is left to the runtime check.
 */
type ValidateDirection<Param> = string extends InferOptions<Param>
  ? Param
  : [Exclude<InferOptions<Param>, SelectDirection>] extends [never]
    ? Param
    : ErrorMessage<`selectDirection: ${OptionNotInSet<Exclude<InferOptions<Param>, SelectDirection> & string, `'max', 'min'`>}`>;

/** A field's type as the entry point requires it: a required field may not be `undefined`. */
type ExpectedType<Key extends keyof TopKArgs, Entry extends TopKEntryPoint> = Key extends TopKFieldSets[Entry]['required'][number]
  ? Exclude<TopKArgs[Key], undefined>
  : TopKArgs[Key];

/** One known field: its own type when it is right, else the message in words. */
type CheckTopKField<Value, Key extends keyof TopKArgs, G, Entry extends TopKEntryPoint> = CheckFieldKind<
  Value,
  Key,
  ExpectedType<Key, Entry>,
  ExpectedKinds[Key],
  Key extends 'selectDirection' ? ValidateDirection<Value> : CheckDomain<Value, Key, TopKDomains, G>
>;

/** The fields of {@link RoutingWeights}, in message order. */
type WeightsFields = readonly ['kind', 'scale'];

/** `weightsOut` surely absent (an optional one, as in an args object annotated with {@link TopKArgs}, is left to the runtime check). */
type WeightsOutMissing<Args> = 'weightsOut' extends keyof Args ? ([Extract<Args['weightsOut' & keyof Args], DeviceArray>] extends [never] ? true : false) : true;

/**
 * The `weights` field, which needs the whole args: its own fields (unknown ones named), then
 * `weightsOut` beside it, then f32 keys (a dtype that is not a literal is left to the runtime check).
 */
type CheckWeights<Args, Value, Entry extends TopKEntryPoint> =
  unknown extends Value
    ? Value
    : [Value] extends [undefined]
      ? Value
      : [Value] extends [ExpectedType<'weights', Entry>]
        ? ValidateFields<Value, WeightsFields, 'kind', {}> extends infer Checked
          ? [Value] extends [Checked]
            ? WeightsOutMissing<Args> extends false
              ? Args extends { keysIn: DeviceArray<infer D> }
                ? [D] extends ['f32']
                  ? Value
                  : 'f32' extends D
                    ? Value
                    : ErrorMessage<`weights: routing weights need f32 keys; keysIn holds ${D & string}`>
                : Value
              : ErrorMessage<`weightsOut: ${RequiredWith<'weights'>}`>
            : Checked
          : never
        : ErrorMessage<`weights: expected ${ExpectedKinds['weights']}`>;

/**
 * `Args` itself when it is a valid call of top-k's entry point `Entry` under the environment's
 * guarantees `G`; otherwise a type with the message in words on each offending field alone:
 *
 * - an unknown field: `segmentStrid: "(Error) unknown field 'segmentStrid' (did you mean 'segmentStride'?)"`;
 * - a missing one: `numSegments: "(Error) missing required field 'numSegments'"`;
 * - a parameter of the wrong kind: `numSegments: '(Error) numSegments: expected p.constant or p.uniform'`;
 * - static facts that top-k or the guarantees rule out: `k: '(Error) k: 0 is outside the static bounds [1, 4294967295]'`;
 * - routing weights without their output: `weights: "(Error) weightsOut: required when weights is given"`, or
 *   with a field that {@link RoutingWeights} has not: `weights: { scal: "(Error) unknown field 'scal' (did you mean 'scale'?)" }`.
 *
 * Parameters whose bounds or options are not literal (`UniformParam<number, number>`, from an
 * annotation with {@link TopKArgs}) and `any` are left to the runtime checks, which use the same text.
 */
export type ValidateTopKArgs<Args, G = {}, Entry extends TopKEntryPoint = 'select'> = ValidateFields<
  Args,
  TopKFieldSets[Entry]['fields'],
  TopKFieldSets[Entry]['required'][number],
  { [Key in keyof Args & keyof TopKArgs]: Key extends 'weights' ? CheckWeights<Args, Args[Key], Entry> : CheckTopKField<Args[Key], Key, G, Entry> }
>;

/** The literal numbers `TopKVariantsFor` reasons with; the same as `topKPolicyLimits`. */
interface StaticLimits {
  reduceMaxK: 8;
  reduceShortListMaxK: 4;
  reduceShortRowMaxItems: 65535;
  minTileItems: 1024;
  maxTileItems: 4096;
}

type ReduceReachable<KMin> = ReachableUpTo<'reduce', KMin, StaticLimits['reduceMaxK']>;
type OnlyReduce<KMax> = KnownGreater<KMax, StaticLimits['reduceMaxK']> extends true ? false : number extends KMax ? false : true;
// Where reduce alone could run (kMax at most reduceMaxK): the radix selects take its place for kMax
// past reduceShortListMaxK over rows longer than reduceShortRowMaxItems (when the call holds many
// keys), with single-tile for the segments that fit a tile where the sizes are known on the device only.
type ReduceGivesWay<KMax, SizeMin, SizeMax> = KnownGreater<KMax, StaticLimits['reduceShortListMaxK']> extends true
  ? ReachableAbove<'row-radix' | 'radix-select' | TileReachable<SizeMin>, SizeMax, StaticLimits['reduceShortRowMaxItems']>
  : never;
type TileReachable<SizeMin> = ReachableUpTo<'single-tile', SizeMin, StaticLimits['maxTileItems']>;
type RadixReachable<SizeMax> = ReachableAbove<'radix-select', SizeMax, StaticLimits['minTileItems']>;
// Row-radix serves what radix-select serves, up to bounds (rows, keys in all) the static types do not see.
type RowReachable<SizeMax> = ReachableAbove<'row-radix', SizeMax, StaticLimits['minTileItems']>;

/**
 * The variants any built-in policy could pick for the static bounds in `Args` (a sound
 * over-approximation of `plan.reachableVariants` on every built-in backend). A forced variant
 * (tuning) is outside this set's promise.
 *
 * @example with `k: p.uniform(k, { min: 1, max: 4 })`: `'reduce'` (and with `max: 8` over rows of fewer
 * than 65536 keys; longer rows add `'row-radix' | 'radix-select'`); with `k: p.uniform(k, { min: 1, max: 64 })`
 * and `segmentSizes: p.uniform(n, { min: 5000, max: 90000 })`: `'row-radix' | 'radix-select'`.
 */
export type TopKVariantsFor<Args> = Args extends { k: infer K; segmentSizes: infer Sizes }
  ?
      | ReduceReachable<StaticMin<K, 1>>
      | (OnlyReduce<StaticMax<K>> extends true
          ? ReduceGivesWay<StaticMax<K>, StaticMin<Sizes>, StaticMax<Sizes>>
          : TileReachable<StaticMin<Sizes>> | RowReachable<StaticMax<Sizes>> | RadixReachable<StaticMax<Sizes>>)
  : TopKVariant;

/** The guarantees type of an environment. */
export type GuaranteesOf<E> = E extends { guarantees: infer G } ? G : {};
export type { Guarantees };

/**
 * The options of {@link DeviceBatchedTopK}'s one-call form `topk(scores, options)`: the rows of
 * `scores` (equal lengths, packed), `k` per row, and optionally routing weights and outputs.
 */
export interface TopKOptions {
  /** Rows in `scores`: each row is `scores.length / rows` elements and gets its own top k. */
  readonly rows: number;
  /** How many elements to take per row (at least 1; a row shorter than k gets fills past its length). */
  readonly k: number;
  /** `false` for the k smallest (as torch.topk's `largest`); default `true`. */
  readonly largest?: boolean | undefined;
  /** Routing weights of the selected elements: a kind (scale 1), or `{ kind, scale }`. */
  readonly weights?: RoutingWeightsKind | RoutingWeights | undefined;
  /** Where to write the keys (`rows * k`, scores' dtype); allocated when not given. */
  readonly keysOut?: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  /** Where to write the indices within each row (`rows * k` u32); allocated when not given. */
  readonly indicesOut?: DeviceArray<'u32'> | undefined;
  /** Where to write the weights (`rows * k` f32); allocated when weights are asked for and this is not given. */
  readonly weightsOut?: DeviceArray<'f32'> | undefined;
}

/** The fields of {@link TopKOptions}, in message order, and those it requires. */
export const topKOptionFields = ['rows', 'k', 'largest', 'weights', 'keysOut', 'indicesOut', 'weightsOut'] as const;
export const topKOptionRequired = ['rows', 'k'] as const;

/** Checks one literal count of the options: an integer at least `Min` (a `number` is left to the runtime check). */
type ValidateCount<Value, Name extends string, Min extends number> = number extends Value
  ? Value
  : Value extends number
    ? `${Value}` extends `${string}.${string}`
      ? ErrorMessage<`${Name}: ${Value} is not an integer`>
      : KnownLess<Value, Min> extends true
        ? ErrorMessage<`${Name}: ${Value} is outside the static bounds [${Min}, 4294967295]`>
        : Value
    : ErrorMessage<`${Name}: expected a number`>;

/** What each option must be, for the messages (the rest are checked by their types). */
interface OptionTypes {
  largest: boolean | undefined;
  weights: RoutingWeightsKind | RoutingWeights | undefined;
  keysOut: DeviceArray<'f32' | 'i32' | 'u32'> | undefined;
  indicesOut: DeviceArray<'u32'> | undefined;
  weightsOut: DeviceArray<'f32'> | undefined;
}

type CheckOption<Options, Key> = Key extends 'rows'
  ? ValidateCount<Options[Key & keyof Options], 'rows', 1>
  : Key extends 'k'
    ? ValidateCount<Options[Key & keyof Options], 'k', 1>
    : Key extends 'weights'
      ? Options[Key & keyof Options] extends infer W
        ? W extends object
          ? ValidateFields<W, WeightsFields, 'kind', {}>
          : [W] extends [OptionTypes['weights']]
            ? W
            : ErrorMessage<`weights: expected 'softmax', 'sigmoid-renormalize' or ${ExpectedKinds['weights']}`>
        : never
      : Key extends keyof OptionTypes
        ? [Options[Key & keyof Options]] extends [OptionTypes[Key]]
          ? Options[Key & keyof Options]
          : OptionTypes[Key]
        : Options[Key & keyof Options];

/**
 * `Options` itself when it is a valid {@link TopKOptions}, else with the message in words on each
 * offending field: `k: '(Error) k: 0 is outside the static bounds [1, 4294967295]'`, an unknown
 * field named (`rowz: "(Error) unknown field 'rowz' (did you mean 'rows'?)"`), a missing `rows` or `k`.
 */
export type ValidateTopKOptions<Options> = ValidateFields<
  Options,
  typeof topKOptionFields,
  (typeof topKOptionRequired)[number],
  { [Key in keyof Options]: CheckOption<Options, Key> }
>;

/** What the one-call form resolves to: the outputs, those it allocated owned by the caller. */
export interface TopKResult<Keys extends DeviceArray, Weights extends DeviceArray<'f32'> | undefined> {
  /** Each row's k keys at `[row * k, row * k + k)`, best first. */
  readonly keys: Keys;
  /** Their indices within the row. */
  readonly indices: DeviceArray<'u32'>;
  /** Their routing weights, when asked for. */
  readonly weights: Weights;
}

/** The `weights` output type of a call with these options. */
export type WeightsOf<Options> = Options extends { weights: infer W } ? ([W] extends [undefined] ? undefined : DeviceArray<'f32'>) : undefined;
