import { checkArgsObject } from '../../params/fields.js';
import { type Backend, checkDeviceArray, isDeviceArray } from '../../backends/backend.js';
import { type SegmentFacts, type SegmentedInput, checkGeometry, checkPerSegmentLengths, maxSegmentSizeOf, maxSegmentsOf, segmentSizeBounds } from '../../dispatch/geometry.js';
import { type NumericParameterSpec, type OptionParameterSpec, type ParameterSpec, numericFacts, optionFacts, resolveParameters, segmentParameters } from '../../dispatch/parameters.js';
import { type Plan, type Validation, makePlan, planValidation, prologueLaunches } from '../../dispatch/plan.js';
import type { SegmentSource } from '../../dispatch/problem.js';
import { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type Env, type Requirements, backendForCall, env as makeEnv } from '../../env/env.js';
import { SegkitUsageError } from '../../errors.js';
import type { NumericFacts, OptionFacts } from '../../params/resolve.js';
import { requiredWhen } from '../../types/messages.js';
import type { SegmentedReduceArgs } from './args.js';
import { type ReduceOp, type ReduceValueType, argOps, initialValueDomain, opCode, reduceOps, sumOrder, valueBits } from './ops.js';
import {
  type SegmentedReducePolicy,
  type SegmentedReduceSelection,
  type SegmentedReduceVariant,
  segmentedReduceVariants,
  selectSegmentedReduceVariant,
} from './policy.js';
import { type SegmentedReduceLaunch, type SegmentedReduceProblem, chunkGroupsPerSegment, chunksPerSegment, partialWords, publishedPartialWords, segmentedReduceKernels } from './problem.js';

/** The fields of the reduce arguments; any other is a mistake (a typo must never change a result). */
export const segmentedReduceFields = [
  'valuesIn',
  'valuesOut',
  'indicesOut',
  'segmentSizes',
  'segmentStride',
  'numSegments',
  'totalNumItems',
  'op',
  'initialValue',
] as const;
/** The fields a call must give. */
export const segmentedReduceRequired = ['valuesIn', 'valuesOut', 'segmentSizes', 'numSegments', 'op'] as const;

const opParameter: OptionParameterSpec = { type: 'option', name: 'op', options: reduceOps, required: true };

/** The initial value's row: its domain is its value type's (any number but NaN for f32), and a device value has that dtype. */
function initialValueParameter(valueType: ReduceValueType): NumericParameterSpec {
  const { min, max, integer } = initialValueDomain(valueType);
  return { type: 'numeric', name: 'initialValue', kinds: ['constant', 'uniform', 'perSegment'], domain: { min, max }, integer, required: false, deviceDtypes: [valueType] };
}

/** Every parameter of reduce, in the order facts are resolved and explained. */
function reduceParameters(valueType: ReduceValueType): readonly ParameterSpec[] {
  return [
    segmentParameters.segmentSizes,
    segmentParameters.numSegments,
    segmentParameters.segmentStride,
    segmentParameters.totalNumItems,
    opParameter,
    initialValueParameter(valueType),
  ];
}

/** The facts of every reduce parameter, after every host-side check. */
export interface SegmentedReduceFacts extends SegmentFacts {
  readonly op: OptionFacts<ReduceOp>;
  /** Absent when no initial value was given. */
  readonly initialValue: NumericFacts | undefined;
  readonly valueType: ReduceValueType;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/** A planned reduce call: host facts, the chosen variant, its launches and temporary storage. */
export type SegmentedReducePlan = Plan<SegmentedReduceVariant, SegmentedReduceFacts>;

function resolveFacts(args: SegmentedReduceArgs, valueType: ReduceValueType, environment: Env, backend: Backend): SegmentedReduceFacts {
  const initial = args.initialValue as { kind?: unknown; runtimeBounds?: unknown } | undefined;
  if (initial?.kind === 'perSegment' && isDeviceArray(initial.runtimeBounds)) {
    throw new SegkitUsageError('initialValue: device runtime bounds prune kernels by counts and sizes; an initial value takes host bounds only');
  }
  const resolved = resolveParameters(reduceParameters(valueType), args as unknown as Record<string, unknown>, environment, backend);
  const segments: SegmentFacts = {
    segmentSizes: numericFacts(resolved, 'segmentSizes'),
    segmentStride: resolved.segmentStride === undefined ? undefined : numericFacts(resolved, 'segmentStride'),
    numSegments: numericFacts(resolved, 'numSegments'),
    totalNumItems: resolved.totalNumItems === undefined ? undefined : numericFacts(resolved, 'totalNumItems'),
  };
  const outputSegments = Math.min(args.valuesOut.length, args.indicesOut?.length ?? Infinity);
  return {
    ...segments,
    op: optionFacts<ReduceOp>(resolved, 'op'),
    initialValue: resolved.initialValue === undefined ? undefined : numericFacts(resolved, 'initialValue'),
    valueType,
    maxSegments: maxSegmentsOf(segments, outputSegments),
  };
}

function checkArrays(args: SegmentedReduceArgs, facts: SegmentedReduceFacts, backend: Backend): void {
  checkDeviceArray(args.valuesIn, backend, 'valuesIn', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.valuesOut, backend, 'valuesOut', [args.valuesIn.dtype]);
  const n = facts.numSegments.exact;
  if (n !== undefined && args.valuesOut.length < n) throw new SegkitUsageError(`valuesOut: needs one value per segment (numSegments ${n}); has ${args.valuesOut.length}`);
  if (args.indicesOut !== undefined) {
    checkDeviceArray(args.indicesOut, backend, 'indicesOut', ['u32', 'i32']);
    if (n !== undefined && args.indicesOut.length < n) throw new SegkitUsageError(`indicesOut: needs one index per segment (numSegments ${n}); has ${args.indicesOut.length}`);
  } else if (facts.op.options.some((o) => argOps.includes(o))) {
    throw new SegkitUsageError(`indicesOut: ${requiredWhen('op', "'argMin' or 'argMax'")}`);
  }
  const arrays = [args.valuesIn, args.valuesOut, args.indicesOut].filter((a) => a !== undefined);
  if (new Set(arrays).size !== arrays.length) throw new SegkitUsageError('valuesIn, valuesOut and indicesOut must be distinct arrays');
}

function specialization(selection: SegmentedReduceSelection, facts: SegmentedReduceFacts, canonical: boolean): string {
  const op = facts.op;
  const parts = [facts.valueType, op.kind === 'constant' ? op.exact! : op.kind === 'uniform' ? 'op=uniform' : 'op=per-segment'];
  if (facts.initialValue !== undefined) parts.push('init');
  if (selection.variant === 'thread') parts.push(`items<=${selection.policy.threadMaxItems}`);
  if (selection.variant === 'subgroup') parts.push(`team=${selection.policy.subgroupSize}`);
  if (!canonical && facts.valueType === 'f32' && op.options.includes('sum')) parts.push('fast-sum');
  return parts.join(',');
}

/** The launches of the chosen variant (after the prologue's) and their temporary-storage slots. */
function variantLaunches(selection: SegmentedReduceSelection, facts: SegmentedReduceFacts, maxSegmentSize: number, canonical: boolean, layout: TempStorageLayoutBuilder): SegmentedReduceLaunch[] {
  const { policy, variant } = selection;
  const geometry = { maxSegments: facts.maxSegments, maxSegmentSize };
  const spec = specialization(selection, facts, canonical);
  const launch = (kernel: keyof typeof segmentedReduceKernels, name: string, purpose: string): SegmentedReduceLaunch => ({
    kernel,
    variant,
    name: `reduce/${name}[${spec}]`,
    grid: segmentedReduceKernels[kernel].grid(geometry, policy),
    pass: 0,
    purpose,
  });
  switch (variant) {
    case 'thread':
      return [launch('thread', 'thread', `one invocation per segment, ${policy.workgroupSize} segments per workgroup`)];
    case 'subgroup':
      return [launch('subgroup', 'subgroup', `${policy.subgroupSize} invocations per segment, ${policy.workgroupSize / policy.subgroupSize} segments per workgroup`)];
    case 'workgroup':
      return [launch('workgroup', 'workgroup', 'one workgroup per segment, chunk by chunk')];
    case 'multi-workgroup': {
      const chunks = chunksPerSegment(maxSegmentSize);
      const groups = chunkGroupsPerSegment(maxSegmentSize, policy);
      const teamChunks = policy.chunkRounds === 1 ? 'chunk' : `${policy.chunkRounds} chunks`;
      if (policy.lastChunkMerges === true) {
        layout.add('partials', facts.maxSegments * chunks * publishedPartialWords * 4, { zeroed: true });
        layout.add('arrivals', facts.maxSegments * 4, { zeroed: true });
        return [
          launch(
            'chunk-merge',
            'multi-workgroup/chunk-merge',
            `${chunks} chunks of ${sumOrder.chunkItems} items per segment, ${groups} workgroups per segment (a team of ${policy.chunkTeamSize} invocations per ${teamChunks}); the last workgroup of a segment to finish combines its partials in order and writes`,
          ),
        ];
      }
      layout.add('partials', facts.maxSegments * chunks * partialWords * 4);
      return [
        launch(
          'chunk',
          'multi-workgroup/chunk',
          `${chunks} chunks of ${sumOrder.chunkItems} items per segment, ${groups} workgroups per segment (a team of ${policy.chunkTeamSize} invocations per ${teamChunks}), into partials`,
        ),
        launch('merge', 'multi-workgroup/merge', "combine each segment's chunk partials in order and write"),
      ];
    }
  }
}

/**
 * explain()'s account of the requirements reduce reads (none is ignored silently): determinism picks
 * the f32 summation order; ties and output order have nothing to relax, since every segment has one
 * result and the arg ops find the smaller index at no cost.
 */
function requirementNotes(requirements: Requirements): string[] {
  const notes: string[] = [];
  if (requirements.determinism === 'not-guaranteed') notes.push("determinism 'not-guaranteed': f32 sums on the CPU take the faster of its two ways: the canonical order's WebAssembly SIMD loops where the runtime has them, else float64 left to right, rounded once (WebGPU keeps the canonical order); bits may differ between backends");
  if (requirements.tieBreak === 'any') notes.push("tieBreak 'any': argMin/argMax still take the smaller index: the scan finds it at no cost, so results are those of the defaults");
  if (requirements.outputOrdering === 'unsorted') notes.push("outputOrdering 'unsorted': each segment has one result, in segment order; nothing to reorder");
  return notes;
}

/**
 * Plans a reduce call on the host: resolves and checks every parameter, chooses the variant, lays
 * out temporary storage and lists the launches. No device work.
 */
export function planSegmentedReduce(args: SegmentedReduceArgs, environment: Env = makeEnv()): SegmentedReducePlan {
  checkArgsObject(args, segmentedReduceFields, segmentedReduceRequired, ['valuesIn', 'valuesOut']);
  const { requirements } = environment;
  const backend = backendForCall(environment, args);
  checkDeviceArray(args.valuesIn, backend, 'valuesIn', ['f32', 'i32', 'u32']);
  const valueType = args.valuesIn.dtype as ReduceValueType;
  const facts = resolveFacts(args, valueType, environment, backend);
  checkArrays(args, facts, backend);
  checkPerSegmentLengths(facts.numSegments, [facts.segmentSizes, facts.op, facts.initialValue]);
  const input: SegmentedInput = { name: 'valuesIn', noun: 'values', length: args.valuesIn.length };
  checkGeometry(facts, input);

  const sizeBounds = segmentSizeBounds(facts);
  const maxSegmentSize = maxSegmentSizeOf(facts, input);
  // No segment is shorter than the static minimum: where the input cannot hold one (only numSegments 0
  // can run), the selector still sees that minimum, so it never picks a variant the types ruled out.
  const selection = selectSegmentedReduceVariant(
    {
      segmentSize: { min: sizeBounds.min, max: Math.max(maxSegmentSize, sizeBounds.min) },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds !== undefined,
      ops: facts.op.occurring,
    },
    backend.capabilities,
    environment.tuning as { variant?: SegmentedReduceVariant; policy?: Partial<SegmentedReducePolicy> },
  );
  const canonical = requirements.determinism === 'run-to-run';
  const parameters = [facts.op, facts.initialValue];
  const validation: Validation = planValidation(environment, facts, parameters);
  const layoutBuilder = new TempStorageLayoutBuilder();
  const launches = [
    ...prologueLaunches('reduce', facts, facts.maxSegments, validation, layoutBuilder),
    ...variantLaunches(selection, facts, maxSegmentSize, canonical, layoutBuilder),
  ];
  const layout = layoutBuilder.build();
  const opOfOption = facts.op.options.map(opCode);
  const segmentsText = facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`;
  const bitsOf = (source: SegmentSource): SegmentSource =>
    source.kind === 'constant' || source.kind === 'uniform' ? { kind: source.kind, value: valueBits(source.value, valueType) } : source;

  return makePlan<SegmentedReduceVariant, SegmentedReduceFacts, SegmentedReduceProblem, SegmentedReducePolicy>({
    algorithm: 'reduce',
    environment,
    backend,
    facts,
    segments: facts,
    input,
    parameters,
    validation,
    selection,
    variants: segmentedReduceVariants,
    launches,
    kernels: segmentedReduceKernels,
    layout,
    summary: `DeviceSegmentedReduce on ${backend.name}: ${segmentsText} segments, ${valueType} values, op ${facts.op.exact ?? `per ${facts.op.kind === 'uniform' ? 'call' : 'segment'} from [${facts.op.options.join(', ')}]`}, ${facts.initialValue === undefined ? 'no initial value' : 'initial value'}, indices: ${args.indicesOut === undefined ? 'none' : args.indicesOut.dtype}, f32 sums: ${canonical ? 'canonical order' : 'fast order'}`,
    requirementNotes: requirementNotes(requirements),
    arrays: { valuesIn: args.valuesIn, valuesOut: args.valuesOut, indicesOut: args.indicesOut },
    checkArrays: () => checkArrays(args, facts, backend),
    hostDtypes: { initialValue: valueType === 'f32' ? 'f32' : 'u32' },
    problem: (sources) => {
      const initialValue = sources.parameters.initialValue;
      return {
        maxSegments: facts.maxSegments,
        maxSegmentSize,
        itemsLength: args.valuesIn.length,
        numSegments: sources.numSegments,
        segmentSizes: sources.segmentSizes,
        layout: sources.segmentStride === undefined ? { kind: 'packed' } : { kind: 'strided', stride: sources.segmentStride },
        segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
        sources: initialValue === undefined ? { op: sources.parameters.op! } : { op: sources.parameters.op!, initialValue: bitsOf(initialValue) },
        valueType,
        opOfOption,
        indices: args.indicesOut !== undefined,
        canonical,
      };
    },
  });
}
