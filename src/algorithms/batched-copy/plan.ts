import { type Backend, checkDeviceArray } from '../../backends/backend.js';
import { deviceChecks, violationOf } from '../../dispatch/device-checks.js';
import { type SegmentFacts, type SegmentedInput, checkPerSegmentLengths } from '../../dispatch/geometry.js';
import { type NumericParameterSpec, type ParameterSpec, numericFacts, resolveParameters, segmentParameters } from '../../dispatch/parameters.js';
import { type Plan, type Validation, makePlan, prologueLaunches } from '../../dispatch/plan.js';
import { StatusCode, StatusWord } from '../../dispatch/problem.js';
import { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type Env, type Requirements, backendForCall, env as makeEnv } from '../../env/env.js';
import { GuaranteeViolationError, SegkitUsageError } from '../../errors.js';
import { checkArgsObject, checkFields } from '../../params/fields.js';
import { type NumericFacts, effectiveBounds } from '../../params/resolve.js';
import { type BatchedCopyArgs, batchedCopyFields, batchedCopyRequired } from './args.js';
import { type BatchedCopyPolicy, type BatchedCopySelection, type BatchedCopyVariant, batchedCopyPolicyFor, batchedCopyVariants, selectBatchedCopyVariant } from './policy.js';
import { type BatchedCopyLaunch, type BatchedCopyProblem, batchedCopyKernels, checkSlotWords } from './problem.js';
import { type BufferRanges, firstOverlap, firstRangePastEnd, rangePastEnd, rangesOverlap } from './ranges.js';

const u32Max = 4294967295;

const offsetParameter = (name: string): NumericParameterSpec => ({ type: 'numeric', name, kinds: ['constant', 'uniform', 'perSegment'], domain: { min: 0, max: u32Max }, integer: true, required: true });

/** Every parameter of the copy, in the order facts are resolved and explained. */
const copyParameters: readonly ParameterSpec[] = [
  { ...segmentParameters.segmentSizes, name: 'sizes' },
  { ...segmentParameters.numSegments, name: 'numBuffers' },
  segmentParameters.totalNumItems,
  offsetParameter('sourceOffsets'),
  offsetParameter('destinationOffsets'),
];

/**
 * The names status words give parameters, by index: the shared validate kernel finds the sizes and
 * the count under their segment names, and errors name them as the call does ({@link userNames}).
 */
const statusNames = ['segmentSizes', 'numSegments', 'segmentStride', 'totalNumItems', 'sourceOffsets', 'destinationOffsets'] as const;
const userNames = ['sizes', 'numBuffers', 'segmentStride', 'totalNumItems', 'sourceOffsets', 'destinationOffsets'] as const;

/** The facts of every copy parameter, after every host-side check (`segmentSizes` are the sizes, `numSegments` the number of buffers). */
export interface BatchedCopyFacts extends SegmentFacts {
  readonly sourceOffsets: NumericFacts;
  readonly destinationOffsets: NumericFacts;
  readonly dtype: 'f32' | 'i32' | 'u32';
  /** Buffers the grid covers. */
  readonly maxSegments: number;
  /** 4 when every offset and size is a known multiple of 4 (kernels move four words at a time), else 1. */
  readonly vectorWidth: 1 | 4;
  /** Where the ranges and overlaps are checked: on the host (every value known there), on the device, or not at all ('trust'). */
  readonly rangeChecks: 'host' | 'device' | 'none';
}

/** A planned copy: host facts, the chosen variant, its launches and temporary storage. */
export type BatchedCopyPlan = Plan<BatchedCopyVariant, BatchedCopyFacts>;

const onDevice = (f: NumericFacts) => f.deviceValues !== undefined || f.deviceOnly;

/** The value of a host-known parameter for buffer `i`. */
const hostValue = (f: NumericFacts) => (f.hostValues !== undefined ? (i: number) => f.hostValues![i] as number : () => f.exact as number);

/** The length of a per-buffer parameter's values (host or device), or undefined for other kinds. */
function perBufferLength(f: NumericFacts): number | undefined {
  return f.kind === 'perSegment' ? (f.hostValues?.length ?? f.deviceValues?.length) : undefined;
}

function checkArrays(args: BatchedCopyArgs, backend: Backend): void {
  checkDeviceArray(args.source, backend, 'source', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.destination, backend, 'destination', [args.source.dtype]);
  if (args.source === args.destination) throw new SegkitUsageError('destination: must be another array than source (an in-place copy is not supported)');
}

/** Every value a multiple of 4, known on the host. */
function multipleOfFour(f: NumericFacts): boolean {
  if (f.hostValues !== undefined) return (f.hostValues as readonly number[]).every((v) => v % 4 === 0);
  return f.exact !== undefined && f.exact % 4 === 0;
}

function resolveFacts(args: BatchedCopyArgs, environment: Env, backend: Backend): BatchedCopyFacts {
  const resolved = resolveParameters(copyParameters, args as unknown as Record<string, unknown>, environment, backend);
  const sizes = numericFacts(resolved, 'sizes');
  const numBuffers = numericFacts(resolved, 'numBuffers');
  const sourceOffsets = numericFacts(resolved, 'sourceOffsets');
  const destinationOffsets = numericFacts(resolved, 'destinationOffsets');
  const perBuffer = [sizes, sourceOffsets, destinationOffsets].map(perBufferLength).filter((n) => n !== undefined);
  // Where numBuffers is not known on the host: the per-buffer arrays' length (a buffer past them reads
  // size 0), else as many buffers as the destination has elements (no more can be non-empty and apart).
  const maxSegments = numBuffers.exact ?? Math.min(numBuffers.staticBounds.max, ...(perBuffer.length > 0 ? perBuffer : [Math.max(1, args.destination.length)]));
  const hostKnown = ![sizes, numBuffers, sourceOffsets, destinationOffsets].some(onDevice);
  const validating = environment.requirements.guaranteeChecks === 'validate';
  return {
    segmentSizes: sizes,
    segmentStride: undefined,
    numSegments: numBuffers,
    totalNumItems: resolved.totalNumItems === undefined ? undefined : numericFacts(resolved, 'totalNumItems'),
    sourceOffsets,
    destinationOffsets,
    dtype: args.source.dtype as BatchedCopyFacts['dtype'],
    maxSegments,
    vectorWidth: [sizes, sourceOffsets, destinationOffsets].every(multipleOfFour) ? 4 : 1,
    rangeChecks: hostKnown ? 'host' : validating ? 'device' : 'none',
  };
}

/** The host checks of rule 1 and 2 (ranges.ts) and of totalNumItems, where every value is known on the host. */
function checkHostRanges(facts: BatchedCopyFacts, sourceLength: number, destinationLength: number): void {
  const size = hostValue(facts.segmentSizes);
  const buffers: BufferRanges = { count: facts.numSegments.exact!, size, sourceOffset: hostValue(facts.sourceOffsets), destinationOffset: hostValue(facts.destinationOffsets) };
  const error = firstRangePastEnd(buffers, sourceLength, destinationLength) ?? firstOverlap(buffers);
  if (error !== undefined) throw error;
}

/** The violation a run's status words describe, with the parameters named as the call names them. */
function copyViolation(words: Uint32Array, input: SegmentedInput, validation: Validation, lengths: { source: number; destination: number }): Error | undefined {
  const code = words[StatusWord.code];
  const buffer = words[StatusWord.segment]!;
  if (code === StatusCode.RangePastEnd) {
    const parameter = userNames[words[StatusWord.parameter]!] ?? 'unknown';
    const array = parameter === 'sourceOffsets' ? 'source' : 'destination';
    const [end, start] = [words[StatusWord.value]!, words[StatusWord.min]!];
    return new GuaranteeViolationError(parameter, rangePastEnd(array, start, end, lengths[array]), buffer, start, { min: 0, max: lengths[array] - (end - start) });
  }
  if (code === StatusCode.RangesOverlap) {
    const other = words[StatusWord.value]!;
    const [a, b, c, d] = [words[4]!, words[5]!, words[6]!, words[7]!];
    return new GuaranteeViolationError('destinationOffsets', rangesOverlap(a, b, other, c, d), buffer, a, { min: c, max: d });
  }
  return violationOf(words, userNames, input, validation.checks);
}

function specialization(facts: BatchedCopyFacts, selection: BatchedCopySelection): string {
  const parts: string[] = [facts.dtype, facts.vectorWidth === 4 ? 'vec4' : 'u32'];
  if (selection.variant === 'team') parts.push(`team=${selection.policy.teamSize}`);
  if (selection.variant === 'chunked') parts.push(`chunk=${selection.policy.chunkItems}`);
  return parts.join(',');
}

/**
 * explain()'s account of the requirements (none is ignored silently): a copy moves bits, so there is
 * no order, tie or rounding to relax; guaranteeChecks decides the range and overlap checks.
 */
function requirementNotes(requirements: Requirements, facts: BatchedCopyFacts): string[] {
  const notes = ["determinism, tieBreak and outputOrdering: a copy moves each element's bits once, to one place; every backend and run gives the same bits"];
  if (requirements.guaranteeChecks === 'trust' && facts.rangeChecks === 'none') {
    notes.push("guaranteeChecks 'trust': device-only offsets and sizes are not checked; a range past its array is cut at the array's end and overlapping ranges leave unspecified values there");
  }
  return notes;
}

/**
 * Plans a batched copy on the host: resolves and checks every parameter (ranges and overlaps too,
 * where every value is known on the host), chooses the variant, lays out temporary storage and lists
 * the launches. No device work.
 */
export function planBatchedCopy(args: BatchedCopyArgs, environment: Env = makeEnv()): BatchedCopyPlan {
  checkArgsObject(args, batchedCopyFields, batchedCopyRequired, ['source', 'destination']);
  const backend = backendForCall(environment, args);
  const policyTuning = (environment.tuning as { policy?: unknown }).policy;
  if (typeof policyTuning === 'object' && policyTuning !== null) checkFields('env.tuning.policy', policyTuning, Object.keys(batchedCopyPolicyFor(backend.capabilities)));
  checkArrays(args, backend);
  const facts = resolveFacts(args, environment, backend);
  checkPerSegmentLengths(facts.numSegments, [facts.segmentSizes, facts.sourceOffsets, facts.destinationOffsets]);
  const sourceLength = args.source.length;
  const destinationLength = args.destination.length;
  if (facts.rangeChecks === 'host') checkHostRanges(facts, sourceLength, destinationLength);

  const sizeBounds = effectiveBounds(facts.segmentSizes);
  const maxSegmentSize = Math.min(sizeBounds.max, sourceLength, destinationLength);
  const selection = selectBatchedCopyVariant(
    { bufferSize: { min: sizeBounds.min, max: Math.max(maxSegmentSize, sizeBounds.min) } },
    backend.capabilities,
    environment.tuning as { variant?: BatchedCopyVariant; policy?: Partial<BatchedCopyPolicy> },
  );
  const { policy, variant } = selection;

  // The sizes and the count under their segment names for the shared validate kernel; checks by index.
  const parameterFacts = [facts.segmentSizes, facts.numSegments, undefined, facts.totalNumItems, facts.sourceOffsets, facts.destinationOffsets];
  const checks = deviceChecks(parameterFacts, userNames);
  const validates = environment.requirements.guaranteeChecks === 'validate' && (checks.length > 0 || facts.rangeChecks === 'device');
  const validation: Validation = { validates, checks, parameterNames: statusNames };

  // Non-empty buffers within the destination and apart hold at most its length together.
  const maxTotalItems = Math.min(destinationLength, facts.totalNumItems?.staticBounds.max ?? Infinity, facts.maxSegments * maxSegmentSize);
  const geometry = { maxSegments: facts.maxSegments, maxSegmentSize, destinationLength, maxTotalItems };
  const spec = specialization(facts, selection);
  const layoutBuilder = new TempStorageLayoutBuilder();
  const launch = (kernel: keyof typeof batchedCopyKernels, purpose: string, owner: BatchedCopyVariant | undefined): BatchedCopyLaunch => ({
    kernel,
    variant: owner,
    name: `copy/${kernel}[${spec}]`,
    grid: batchedCopyKernels[kernel].grid(geometry as never, policy),
    pass: 0,
    purpose,
  });
  // Only 'chunked' needs the buffers' places in their concatenation (segment-offsets' scan): the
  // others copy each buffer from its own offsets (4096 buffers: ~8 us less of an H200's time a call).
  const prologue = prologueLaunches('copy', facts, facts.maxSegments, validation, layoutBuilder, { starts: variant === 'chunked' });
  const launches: BatchedCopyLaunch[] = [...(prologue as BatchedCopyLaunch[])];
  if (validates && facts.rangeChecks === 'device') {
    layoutBuilder.add('check', checkSlotWords(destinationLength) * 4);
    launches.push(
      launch('check-clear', 'clear the bitmaps of destination starts', undefined),
      launch('check-mark', "check each buffer's ranges against its arrays; mark each non-empty buffer's destination start (a start marked twice is shared)", undefined),
      launch('check-scan', "one workgroup per buffer: does its destination range hold another buffer's start? (reads size/32 bitmap words)", undefined),
      launch('check-report', 'write the lowest failing buffer to the status words; later kernels skip every write', undefined),
    );
  }
  const copyPurpose: Record<BatchedCopyVariant, string> = {
    team: `${policy.teamSize} invocations per buffer, ${policy.workgroupSize / policy.teamSize} buffers per workgroup`,
    workgroup: 'one workgroup per buffer',
    chunked: `chunks of ${policy.chunkItems} items of the concatenated buffers (prefix offsets), each workgroup finding its first buffer by binary search`,
  };
  launches.push(launch(variant, copyPurpose[variant], variant));
  const layout = layoutBuilder.build();
  const input: SegmentedInput = { name: 'source', noun: 'elements', length: sourceLength };
  const buffersText = facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`;
  const checkText =
    facts.rangeChecks === 'host'
      ? 'ranges and overlaps checked on the host when planned (O(n log n))'
      : facts.rangeChecks === 'device'
        ? `ranges and overlaps checked on the device (a bitmap of destination starts: ${checkSlotWords(destinationLength) * 4} bytes of temporary storage, O(numBuffers + total/32) work, no read-back)`
        : "ranges and overlaps not checked ('trust')";

  return makePlan<BatchedCopyVariant, BatchedCopyFacts, BatchedCopyProblem, BatchedCopyPolicy>({
    algorithm: 'copy',
    environment,
    backend,
    facts,
    segments: facts,
    input,
    parameters: [facts.sourceOffsets, facts.destinationOffsets],
    validation,
    selection,
    variants: batchedCopyVariants,
    launches,
    kernels: batchedCopyKernels,
    layout,
    summary: `DeviceBatchedCopy on ${backend.name}: ${buffersText} buffers of ${facts.dtype}, ${facts.vectorWidth === 4 ? 'vec4 moves (every offset and size a multiple of 4)' : 'word moves'}, ${checkText}`,
    requirementNotes: requirementNotes(environment.requirements, facts),
    arrays: { source: args.source, destination: args.destination },
    checkArrays: () => checkArrays(args, backend),
    violationOf: (words) => copyViolation(words, input, validation, { source: sourceLength, destination: destinationLength }),
    problem: (sources) => ({
      maxSegments: facts.maxSegments,
      maxSegmentSize,
      itemsLength: u32Max,
      numSegments: sources.numSegments,
      segmentSizes: sources.segmentSizes,
      layout: { kind: 'packed' },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
      sources: { sourceOffsets: sources.parameters.sourceOffsets!, destinationOffsets: sources.parameters.destinationOffsets! },
      sourceLength,
      destinationLength,
      vectorWidth: facts.vectorWidth,
      maxTotalItems,
      sourceOffsetsParameter: statusNames.indexOf('sourceOffsets'),
      destinationOffsetsParameter: statusNames.indexOf('destinationOffsets'),
    }),
  });
}
