import { type Backend, checkDeviceArray, describe, isDeviceArray } from '../../backends/backend.js';
import { type SegmentFacts, type SegmentedInput, checkGeometry, checkPerSegmentLengths, maxSegmentSizeOf, maxSegmentsOf, segmentSizeBounds, segmentsExtent } from '../../dispatch/geometry.js';
import { type NumericParameterSpec, type OptionParameterSpec, type ParameterSpec, numericFacts, optionFacts, resolveParameters, segmentParameters } from '../../dispatch/parameters.js';
import { type Plan, type Validation, makePlan, planValidation, prologueLaunches } from '../../dispatch/plan.js';
import { TempStorageLayoutBuilder, type TempStorageLayout } from '../../dispatch/temp-storage.js';
import { type Env, type Requirements, backendForCall, env as makeEnv } from '../../env/env.js';
import { SegkitRangeError, SegkitUsageError } from '../../errors.js';
import { checkArgsObject, checkFields } from '../../params/fields.js';
import { type NumericFacts, type OptionFacts, effectiveBounds } from '../../params/resolve.js';
import { type TopKArgs, topKFieldSets } from './args.js';
import { type SelectDirection, selectDirections } from './keys.js';
import { radixSelectLaunches } from './radix-plan.js';
import { type RadixPick, type TopKPolicy, type TopKSelection, type TopKVariant, radixPickOf, reduceMergesInChunks, reducePerInvocation, rowRadixCandidateRoom, selectTopKVariant, topKPolicyFor, topKVariants } from './policy.js';
import { type SelectionSort, type TopKLaunch, type TopKProblem, chooseSelectionSort, publishedEntryWords, reduceChunks, topKKernels } from './problem.js';
import { mergePassesFor, radixCountsWords, radixLaunchPass, radixScanShape, radixPasses as sortRadixPasses } from '../segmented-sort/problem.js';
import { routingWeightsKinds } from './routing.js';
import { requiredWith } from '../../types/messages.js';

const u32Max = 4294967295;

/** Top-k's own parameters; the segment parameters come from the framework's table. */
const kParameter: NumericParameterSpec = {
  type: 'numeric',
  name: 'k',
  kinds: ['constant', 'uniform', 'perSegment'],
  domain: { min: 1, max: u32Max },
  integer: true,
  guarantees: { max: 'maxK' },
  required: true,
};
const directionParameter: OptionParameterSpec = { type: 'option', name: 'selectDirection', options: selectDirections, required: true };

/** Every parameter of top-k, in the order facts are resolved and explained. */
const topKParameters: readonly ParameterSpec[] = [
  segmentParameters.segmentSizes,
  kParameter,
  segmentParameters.numSegments,
  segmentParameters.segmentStride,
  segmentParameters.totalNumItems,
  directionParameter,
];

/** The facts of every top-k parameter, after every host-side check. */
export interface TopKFacts extends SegmentFacts {
  readonly k: NumericFacts;
  readonly selectDirection: OptionFacts<SelectDirection>;
  /** Output slots per segment. */
  readonly kMax: number;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/** Where a top-k plan writes its results. */
export interface TopKOutputLayout {
  /**
   * Output slots per segment: segment `i`'s results occupy `[i * kMax, i * kMax + min(k_i, size_i))`
   * of `keysOut`/`valuesOut`, and the rest of its slots are filled. It is `k`'s upper bound: the
   * constant, the host uniform value, or the declared (host runtime, else static) max of `k`.
   */
  readonly kMax: number;
  /**
   * Elements of `keysOut` (and `valuesOut`) the plan may write: `kMax` times the segments its grid
   * covers (the host value of `numSegments`, else as many as the outputs hold up to its static max).
   */
  readonly outputLength: number;
}

/**
 * A planned top-k call: host facts, the chosen variant, its launches, temporary storage and output
 * layout (see {@link Plan} for host arrays, deferred checks and `destroy()`).
 *
 * @example
 * ```ts
 * const plan = DeviceBatchedTopK.plan(args, env({ backend }));
 * const keysOut = backend.alloc('f32', plan.outputLength);   // segment i's results at [i * plan.kMax, ...)
 * ```
 */
export type TopKPlan = Plan<TopKVariant, TopKFacts> & TopKOutputLayout;

function resolveFacts(args: TopKArgs, environment: Env, backend: Backend): TopKFacts {
  const resolved = resolveParameters(topKParameters, args as unknown as Record<string, unknown>, environment, backend);
  const k = numericFacts(resolved, 'k');
  // kMax: the constant, the host uniform value, or the declared (runtime, else static) max.
  const declaredK = args.k.kind === 'perSegment' && args.k.runtimeBounds !== undefined && !isDeviceArray(args.k.runtimeBounds) ? args.k.runtimeBounds.max : k.staticBounds.max;
  const kMax = k.exact ?? declaredK;
  // k's domain ends at 2^32 - 1: a kMax that large means no bound was given, and no output holds it.
  if (!Number.isFinite(kMax) || kMax >= u32Max) {
    const example = args.k.kind === 'perSegment' ? 'p.perSegment(ks, { min: 1, max: 8 })' : 'p.uniform(kOnDevice, { min: 1, max: 8 })';
    throw new SegkitRangeError(
      'k',
      `has no upper bound (${kMax}), and the output width kMax (slots per segment in keysOut/valuesOut) is k's upper bound: add one, e.g. ${example}, host runtime bounds as the third argument of p.perSegment, or env({ guarantees: { maxK: 8 } })`,
      { bounds: k.staticBounds },
    );
  }
  const segments: SegmentFacts = {
    segmentSizes: numericFacts(resolved, 'segmentSizes'),
    segmentStride: resolved.segmentStride === undefined ? undefined : numericFacts(resolved, 'segmentStride'),
    numSegments: numericFacts(resolved, 'numSegments'),
    totalNumItems: resolved.totalNumItems === undefined ? undefined : numericFacts(resolved, 'totalNumItems'),
  };
  // The grid covers the host value of numSegments, or as many segments as the outputs can hold.
  const maxSegments = maxSegmentsOf(segments, Math.floor(args.keysOut.length / kMax));
  return { ...segments, k, selectDirection: optionFacts<SelectDirection>(resolved, 'selectDirection'), kMax, maxSegments };
}

/** Where kMax came from, for messages. */
function kMaxSource(args: TopKArgs, facts: TopKFacts): string {
  if (facts.k.kind === 'constant') return 'the constant k';
  if (facts.k.exact !== undefined) return "k's host value";
  if (args.k.kind === 'perSegment' && args.k.runtimeBounds !== undefined && !isDeviceArray(args.k.runtimeBounds)) return "k's host runtime max";
  return "k's static max";
}

function checkArrays(args: TopKArgs, facts: TopKFacts, backend: Backend): void {
  checkDeviceArray(args.keysIn, backend, 'keysIn', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.keysOut, backend, 'keysOut', [args.keysIn.dtype]);
  const needed = facts.maxSegments * facts.kMax;
  if (facts.numSegments.exact !== undefined && args.keysOut.length < needed) {
    throw new SegkitUsageError(
      `keysOut: needs numSegments * kMax = ${facts.numSegments.exact} * ${facts.kMax} = ${needed} elements (kMax: ${kMaxSource(args, facts)}; plan.outputLength); has ${args.keysOut.length}`,
    );
  }
  if (args.valuesIn !== undefined) {
    checkDeviceArray(args.valuesIn, backend, 'valuesIn', ['f32', 'i32', 'u32']);
    if (args.valuesIn.length < args.keysIn.length) throw new SegkitUsageError(`valuesIn: needs one value per key (${args.keysIn.length}); has ${args.valuesIn.length}`);
    if (args.valuesOut === undefined) throw new SegkitUsageError('valuesOut: required when valuesIn is given');
  }
  if (args.valuesOut !== undefined) {
    checkDeviceArray(args.valuesOut, backend, 'valuesOut', args.valuesIn === undefined ? ['u32', 'i32', 'f32'] : [args.valuesIn.dtype]);
    if (args.valuesOut.length < needed) {
      throw new SegkitUsageError(`valuesOut: needs numSegments * kMax = ${facts.maxSegments} * ${facts.kMax} = ${needed} elements (plan.outputLength); has ${args.valuesOut.length}`);
    }
  }
  if (args.weightsOut !== undefined) {
    checkDeviceArray(args.weightsOut, backend, 'weightsOut', ['f32']);
    if (args.weightsOut.length < needed) {
      throw new SegkitUsageError(`weightsOut: needs numSegments * kMax = ${facts.maxSegments} * ${facts.kMax} = ${needed} elements (plan.outputLength); has ${args.weightsOut.length}`);
    }
  }
  const arrays = [args.keysIn, args.keysOut, args.valuesIn, args.valuesOut, args.weightsOut].filter((a) => a !== undefined);
  for (let i = 0; i < arrays.length; i++) {
    for (let j = i + 1; j < arrays.length; j++) {
      if (arrays[i] === arrays[j]) throw new SegkitUsageError('keysIn, keysOut, valuesIn, valuesOut and weightsOut must be distinct arrays (top-k does not run in place)');
    }
  }
}

/** The routing-weights epilogue of a call, checked (each message names the parameter), or undefined. */
function checkWeights(args: TopKArgs): TopKProblem['weights'] {
  const weights: unknown = args.weights;
  if (weights === undefined) {
    if (args.weightsOut !== undefined) throw new SegkitUsageError("weightsOut: given without weights; say which weights to write, e.g. weights: { kind: 'softmax' }");
    return undefined;
  }
  if (typeof weights !== 'object' || weights === null) {
    throw new SegkitUsageError(`weights: expected { kind: 'softmax' or 'sigmoid-renormalize', scale?: number }; got ${describe(weights)}`);
  }
  checkFields('weights', weights, ['kind', 'scale'], ['kind']);
  const { kind, scale = 1 } = weights as { kind: unknown; scale?: unknown };
  const index = routingWeightsKinds.indexOf(kind as never);
  if (index < 0) throw new SegkitUsageError(`weights.kind: expected 'softmax' or 'sigmoid-renormalize'; got ${describe(kind)}`);
  const f32 = new Float32Array(1);
  f32[0] = typeof scale === 'number' ? scale : Number.NaN;
  if (typeof scale !== 'number' || !Number.isFinite(scale) || !(f32[0]! >= 2 ** -126) || !Number.isFinite(f32[0]!)) {
    throw new SegkitUsageError(`weights.scale: expected a positive finite f32, at least 2^-126 (the weights are multiplied by it); got ${describe(scale)}`);
  }
  if (args.weightsOut === undefined) throw new SegkitUsageError(`weightsOut: ${requiredWith('weights')}`);
  if (isDeviceArray(args.keysIn) && args.keysIn.dtype !== 'f32') throw new SegkitUsageError(`weights: routing weights need f32 keys; keysIn holds ${args.keysIn.dtype}`);
  return { kind: index, scaleBits: new Uint32Array(f32.buffer)[0]! };
}

function specialization(selection: TopKSelection, facts: TopKFacts, keyType: string): string {
  const parts: string[] = [keyType];
  // Only constants are baked into a kernel; a uniform value is a kernel parameter.
  if (selection.variant === 'reduce') parts.unshift(facts.k.kind === 'constant' ? `k=${facts.k.exact}` : `k<=${Math.min(facts.kMax, selection.policy.reduceMaxK)}`);
  if (selection.variant === 'single-tile') parts.push(`tile=${selection.policy.tileItems}`);
  const dir = facts.selectDirection;
  parts.push(dir.kind === 'constant' ? dir.exact! : dir.kind === 'uniform' ? 'dir=uniform' : 'dir=per-segment');
  return parts.join(',');
}

/**
 * What the requirements let the kernels skip. Both relaxations need `determinism: 'not-guaranteed'`:
 * the kernels' parallel appends (GPU atomics, CPU worker threads) find items in an order that may
 * change from run to run, so a choice or an order that must repeat has to be put in index (or rank)
 * order first, and that costs what the 'prefer-smaller-index' rule costs.
 */
interface Relaxations {
  /** Tied items of the threshold bucket are taken as found ('any' ties, allowed to change between runs). */
  readonly tiesAsFound: boolean;
  /** An unsorted selection is written as found ('unsorted', allowed to change between runs). */
  readonly orderAsFound: boolean;
}

function relaxationsOf(requirements: Requirements): Relaxations {
  const mayChange = requirements.determinism === 'not-guaranteed';
  return {
    tiesAsFound: mayChange && requirements.tieBreak === 'any',
    orderAsFound: mayChange && requirements.outputOrdering === 'unsorted',
  };
}

/** explain()'s account of what tieBreak and determinism change in this plan (none is ignored silently). */
function describeRelaxations(requirements: Requirements, relaxed: Relaxations, launches: readonly TopKLaunch[]): string[] {
  const finalize = launches.find((l) => l.kernel === 'radix-finalize' || l.kernel === 'radix-filter-finalize');
  // Only radix-select collects its selection through parallel appends; single-tile and reduce find
  // items in index order, so index order costs them nothing and they keep it.
  const inIndexOrder = "this plan's kernels find items in index order at no cost, so results are those of the defaults";
  const lines: string[] = [];
  if (requirements.tieBreak === 'any') {
    if (!relaxed.tiesAsFound) {
      lines.push("tieBreak 'any': ties still go to the smaller index: under determinism 'run-to-run' the choice must repeat, and a repeatable choice costs what index order costs; add determinism 'not-guaranteed' to let radix-select take tied items as found");
    } else if (finalize !== undefined) {
      lines.push(`tieBreak 'any' (not-guaranteed): ${finalize.name} takes the tied items of the threshold key in the order the filter appended them (no select by index); which tied items come back may change between runs`);
    } else {
      lines.push(`tieBreak 'any' (not-guaranteed): ${inIndexOrder}`);
    }
  }
  if (requirements.determinism === 'not-guaranteed') {
    if (relaxed.orderAsFound) {
      lines.push(
        finalize !== undefined
          ? `determinism 'not-guaranteed' (unsorted): ${finalize.name} writes the selection in the order it was found (no sort); the order may change between runs`
          : `determinism 'not-guaranteed' (unsorted): ${inIndexOrder}`,
      );
    } else if (!relaxed.tiesAsFound) {
      lines.push("determinism 'not-guaranteed': 'sorted' output with ties by index fixes every output slot, so results repeat anyway");
    }
  }
  return lines;
}

/** The launches of the chosen variant (after the prologue's) and their temporary-storage slots. */
function variantLaunches(
  selection: TopKSelection,
  facts: TopKFacts,
  maxSegmentSize: number,
  itemsBound: number,
  keyType: string,
  relaxed: Relaxations,
  selectionSort: SelectionSort | undefined,
  withValues: boolean,
  layout: TempStorageLayoutBuilder,
  weights: TopKProblem['weights'],
  pick: RadixPick,
): TopKLaunch[] {
  const { policy } = selection;
  const geometry = { maxSegments: facts.maxSegments, maxSegmentSize };
  const spec = specialization(selection, facts, keyType);
  const n = facts.maxSegments;
  const launch = (kernel: Exclude<TopKLaunch['kernel'], 'validate' | 'segment-offsets'>, variant: TopKVariant, name: string, purpose: string, pass = 0, extra = ''): TopKLaunch => ({
    kernel,
    variant,
    name: `topk/${name}[${spec}${extra}]`,
    grid: topKKernels[kernel].grid(geometry, policy),
    pass,
    purpose,
  });
  const launches: TopKLaunch[] = [];
  // With device-only size bounds that may admit a tile, single-tile runs first and radix-select takes the rest (a device-side branch).
  const general = selection.variant === 'radix-select' || selection.variant === 'row-radix';
  const variantsToRun: TopKVariant[] = general && selection.reachable.includes('single-tile') ? ['single-tile', selection.variant] : [selection.variant];
  for (const variant of variantsToRun) {
    if (variant === 'single-tile') {
      launches.push(launch('single-tile', variant, 'single-tile', 'one workgroup per segment: load the tile, select in workgroup memory, sort, write'));
    } else if (variant === 'reduce') {
      if (reducePerInvocation(policy, maxSegmentSize)) {
        launches.push(launch('reduce', variant, 'reduce', `one invocation per segment (${policy.workgroupSize} segments per workgroup): register top-k, write`, 0, ',per-invocation'));
        continue;
      }
      const chunks = reduceChunks(maxSegmentSize, policy);
      const merging = reduceMergesInChunks(policy, facts.kMax);
      if (chunks > 1 && merging.merges) {
        // Published entries (four words each) and arrival counts, zeroed at the start of every run.
        layout.add('partials', n * chunks * facts.kMax * publishedEntryWords * 4, { zeroed: true });
        layout.add('arrivals', n * 4, { zeroed: true });
        launches.push(
          launch(
            'reduce-chunk-merge',
            variant,
            'reduce-chunk-merge',
            `${chunks} workgroups per segment (chunks of ${policy.reduceChunkItems} keys, vec4 reads): register top-k of each chunk, published; the last of a segment's workgroups to finish merges the lists and writes (${merging.why})`,
          ),
        );
        continue;
      }
      launches.push(launch('reduce', variant, 'reduce', chunks === 1 ? 'one workgroup per segment: register top-k, merge, write' : `${chunks} workgroups per segment (chunks of ${policy.reduceChunkItems} keys, vec4 reads): register top-k of each chunk into partials`));
      if (chunks > 1) {
        layout.add('partials', n * chunks * facts.kMax * 8);
        launches.push(launch('reduce-merge', variant, 'reduce-merge', `merge the chunks' lists per segment and write (${merging.why})`));
      }
    } else if (variant === 'row-radix') {
      // Candidates past the workgroup's room go to temporary storage, at each segment's own start.
      layout.add('rowCandidates', maxSegmentSize > rowRadixCandidateRoom(policy) ? itemsBound * 4 : 4);
      const order = selectionSort !== undefined ? 'the selection in index order (sorted after it)' : 'the selection in index order (sorted in workgroup memory for sorted output)';
      launches.push(
        launch(
          'row-radix',
          variant,
          'row-radix',
          `one workgroup per segment, every digit pass over its row (${policy.radixBits}-bit digits, histograms in workgroup memory; the threshold bucket's keys compacted after digit 0, in workgroup memory up to ${rowRadixCandidateRoom(policy)} keys, else in temporary storage), then one pass collecting ${order}, write`,
        ),
      );
      if (selectionSort !== undefined) launches.push(...selectionSortLaunches(facts, Math.min(facts.kMax, maxSegmentSize), selectionSort, policy, spec, layout, withValues, variant));
    } else {
      launches.push(...radixSelectLaunches(layout, { policy, spec, maxSegments: n, maxSegmentSize, kMax: facts.kMax, kMin: effectiveBounds(facts.k).min, candidateWords: itemsBound, relaxed, sortAfter: selectionSort !== undefined, pick }));
      if (selectionSort !== undefined) launches.push(...selectionSortLaunches(facts, Math.min(facts.kMax, maxSegmentSize), selectionSort, policy, spec, layout, withValues, variant));
    }
  }
  if (weights !== undefined) {
    const kind = routingWeightsKinds[weights.kind]!;
    // Its own launch in the same pass and submit: it reads the segment's results from keysOut.
    launches.push(launch('weights', selection.variant, 'weights', `routing weights (${kind}) of each segment's selected keys from keysOut into weightsOut, one invocation per segment`, 0, `,${kind}`));
  }
  return launches;
}

/**
 * Sorted output past a tile: the segmented sort's merge or radix programs over each segment's
 * selection in place (keysOut and valuesOut at segment * kMax, the selection in index order), best
 * first and stable, so ties stay in index order (problem.ts chooseSelectionSort picks the programs).
 * They run before the routing-weights epilogue, which reads the sorted keysOut.
 */
function selectionSortLaunches(facts: TopKFacts, selected: number, sort: SelectionSort, policy: TopKPolicy, spec: string, layout: TempStorageLayoutBuilder, withValues: boolean, variant: TopKVariant): TopKLaunch[] {
  const outputWords = facts.maxSegments * facts.kMax;
  const buffers = () => {
    for (const slot of withValues ? ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] : ['sortKeys0', 'sortKeys1']) layout.add(slot, outputWords * 4);
  };
  const launches: TopKLaunch[] = [];
  if (sort.variant === 'merge') {
    // A block launch sorts each tile in workgroup memory into buffer 0, or in place where the
    // selection is one tile (its block gathers the tile before writing); each pass merges runs in
    // pairs, buffer p % 2 into (p + 1) % 2, a selection's last pass writing the outputs.
    buffers();
    const { tile, blocks } = sort.layout;
    const passes = mergePassesFor(selected, tile);
    const geometry = { maxSegments: facts.maxSegments, maxSegmentSize: selected };
    const per = blocks.segmentsPerWorkgroup === 1 ? '' : `, ${blocks.segmentsPerWorkgroup} selections a workgroup`;
    launches.push({
      variant,
      pass: 0,
      kernel: 'sort-merge-blocks',
      name: `topk/sort-selection/merge-blocks[${spec}]`,
      grid: topKKernels['sort-merge-blocks'].grid(geometry, policy),
      purpose: `sort the selection (up to ${selected} keys) by the segmented sort's merge: each tile of ${tile} keys${per} in workgroup memory by (sort key, index), into buffer 0 (a selection of one tile in place, into the outputs)`,
    });
    for (let pass = 0; pass < passes; pass++) {
      const into = pass === passes - 1 ? 'the outputs, best first' : `buffer ${(pass + 1) % 2} (a selection's last pass writes the outputs)`;
      launches.push({
        variant,
        pass,
        kernel: 'sort-merge-pass',
        name: `topk/sort-selection/merge-pass[${spec}]`,
        grid: topKKernels['sort-merge-pass'].grid(geometry, policy),
        purpose: `sort the selection, pass ${pass}: merge the sorted runs of ${tile * 2 ** pass} keys in pairs (stable), ${tile} places a workgroup, buffer ${pass % 2} into ${into}`,
      });
    }
    return launches;
  }
  // Groups of segments reuse the counts (segmented-sort/problem.ts).
  const { tiles, groupSegments, scanInScatter: inScatter } = sort;
  const groups = Math.ceil(facts.maxSegments / groupSegments);
  const scanWorkgroups = radixScanShape(tiles, policy.workgroupSize).workgroups;
  layout.add('sortCounts', radixCountsWords(Math.min(facts.maxSegments, groupSegments), tiles) * 4);
  buffers();
  for (let group = 0; group < groups; group++) {
    const segments = Math.min(groupSegments, facts.maxSegments - group * groupSegments);
    const which = groups === 1 ? '' : `segments ${group * groupSegments}..${group * groupSegments + segments - 1}, `;
    for (let digit = 0; digit < sortRadixPasses; digit++) {
      const at = { variant, pass: radixLaunchPass(group, digit) };
      launches.push({ ...at, kernel: 'sort-histogram', name: `topk/sort-selection/histogram[${spec}]`, grid: segments * tiles, purpose: `${which}sort the selection (up to ${selected} keys) by the segmented sort's radix sort, pass ${digit}: digit histogram (${tiles} tiles per segment)` });
      if (!inScatter) launches.push({ ...at, kernel: 'sort-scan', name: `topk/sort-selection/scan[${spec}]`, grid: segments * scanWorkgroups, purpose: `${which}sort the selection, pass ${digit}: where each tile's digits go` });
      const placing = inScatter ? `, each tile adding up where its digits go from the ${tiles} tiles' counts (no scan launch: fewer than the sort policy's radixScanLaunchMinTiles)` : '';
      launches.push({ ...at, kernel: 'sort-scatter', name: `topk/sort-selection/scatter[${spec}]`, grid: segments * tiles, purpose: `${which}sort the selection, pass ${digit}: stable scatter${placing}${digit === sortRadixPasses - 1 ? ' into the outputs, best first' : ''}` });
    }
  }
  return launches;
}

/**
 * Plans a top-k call on the host: resolves and checks every parameter, chooses the variant, lays
 * out temporary storage and lists the launches. No device work.
 */
export function planTopK(args: TopKArgs, environment: Env = makeEnv()): TopKPlan {
  checkArgsObject(args, topKFieldSets.select.fields, topKFieldSets.select.required, ['keysIn', 'keysOut']);
  const { requirements } = environment;
  const backend = backendForCall(environment, args);
  const facts = resolveFacts(args, environment, backend);
  checkArrays(args, facts, backend);
  checkPerSegmentLengths(facts.numSegments, [facts.segmentSizes, facts.k, facts.selectDirection]);
  const input: SegmentedInput = { name: 'keysIn', noun: 'keys', length: args.keysIn.length };
  checkGeometry(facts, input);
  const weights = checkWeights(args);

  const { policy } = environment.tuning;
  if (typeof policy === 'object' && policy !== null) checkFields('env.tuning.policy', policy, Object.keys(topKPolicyFor(backend.capabilities)));
  const sizeBounds = segmentSizeBounds(facts);
  const maxSegmentSize = maxSegmentSizeOf(facts, input);
  const kBounds = effectiveBounds(facts.k);
  const relaxed = relaxationsOf(requirements);
  const selection = selectTopKVariant(
    {
      k: { min: kBounds.min, max: facts.kMax },
      segmentSize: { min: sizeBounds.min, max: maxSegmentSize },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds !== undefined,
      maxSegments: facts.maxSegments,
      tiesAsFound: relaxed.tiesAsFound,
    },
    backend.capabilities,
    environment.tuning as { variant?: TopKVariant; policy?: Partial<TopKPolicy> },
  );
  // Radix-select's finalize sorts a segment's selection in one tile of workgroup memory; a larger
  // sorted selection is written in index order and sorted after it by the segmented sort's merge or
  // radix kernels, in the same submit (only where a selection can exceed the tile). The framework
  // checks bindings and dispatch sizes in makePlan.
  const selected = Math.min(facts.kMax, maxSegmentSize);
  const sortAfter = (selection.variant === 'radix-select' || selection.variant === 'row-radix') && requirements.outputOrdering === 'sorted' && selected > selection.policy.tileItems;
  const selectionSort = sortAfter ? chooseSelectionSort(facts.maxSegments, selected, selection.policy, backend.capabilities) : undefined;

  const parameters = [facts.k, facts.selectDirection];
  const validation: Validation = planValidation(environment, facts, parameters);
  // Radix-select's filter pass 0 carries its pick where every segment the host can see samples a
  // threshold (or as the policy forces): the least size from host values or runtime bounds, else
  // the static bounds (a device-only size has only those).
  const pick: RadixPick =
    selection.variant === 'radix-select' ? radixPickOf(selection.policy, { sizeMin: sizeBounds.min, kMin: kBounds.min, kMax: facts.kMax }, relaxed.tiesAsFound) : { built: false, why: 'no radix-select launches' };
  const layoutBuilder = new TempStorageLayoutBuilder();
  const launches = [
    ...prologueLaunches('topk', facts, facts.maxSegments, validation, layoutBuilder),
    // Candidates of a segment live at its own start, so the double buffer spans the segments' extent.
    ...variantLaunches(selection, facts, maxSegmentSize, segmentsExtent(facts, input, facts.maxSegments), args.keysIn.dtype, relaxed, selectionSort?.sort, args.valuesOut !== undefined, layoutBuilder, weights, pick),
  ];
  const layout: TempStorageLayout = layoutBuilder.build();
  const directionOfOption = facts.selectDirection.options.map((o) => (o === 'max' ? 0 : 1));
  const valueMode = args.valuesOut === undefined ? 'none' : args.valuesIn === undefined ? 'indices' : 'payload';
  const segmentsText = facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`;

  const outputLength = facts.maxSegments * facts.kMax;
  return makePlan<TopKVariant, TopKFacts, TopKProblem, TopKPolicy, TopKOutputLayout>({
    algorithm: 'topk',
    environment,
    backend,
    facts,
    segments: facts,
    input,
    parameters,
    validation,
    selection,
    variants: topKVariants,
    launches,
    kernels: topKKernels,
    layout,
    summary: `DeviceBatchedTopK on ${backend.name}: ${segmentsText} segments, kMax ${facts.kMax}, ${args.keysIn.dtype} keys, values: ${valueMode}${weights === undefined ? '' : `, weights: ${routingWeightsKinds[weights.kind]}`}`,
    details: [
      ...(selectionSort === undefined ? [] : [`Sorted output past the tile: each selection (up to ${selected} keys) is sorted after it is selected by DeviceSegmentedSort's ${selectionSort.why}`]),
      `Outputs: ${outputLength} elements of keysOut${args.valuesOut === undefined ? '' : ' and valuesOut'}${weights === undefined ? '' : ' and weightsOut'}; segment i's results at [i * ${facts.kMax}, i * ${facts.kMax} + min(k_i, size_i)), the rest of its slots filled${weights === undefined ? '' : ' (weights: 0)'}`,
    ],
    requirementNotes: describeRelaxations(requirements, relaxed, launches as TopKLaunch[]),
    arrays: { keysIn: args.keysIn, keysOut: args.keysOut, valuesIn: args.valuesIn, valuesOut: args.valuesOut, weightsOut: weights === undefined ? undefined : args.weightsOut },
    checkArrays: () => checkArrays(args, facts, backend),
    problem: (sources) => ({
      maxSegments: facts.maxSegments,
      maxSegmentSize,
      itemsLength: args.keysIn.length,
      numSegments: sources.numSegments,
      segmentSizes: sources.segmentSizes,
      layout: sources.segmentStride === undefined ? { kind: 'packed' } : { kind: 'strided', stride: sources.segmentStride },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
      sources: { k: sources.parameters.k!, selectDirection: sources.parameters.selectDirection! },
      keyType: args.keysIn.dtype as TopKProblem['keyType'],
      valueMode,
      valueType: (args.valuesOut?.dtype ?? 'i32') as TopKProblem['valueType'],
      kMax: facts.kMax,
      directionOfOption,
      sorted: requirements.outputOrdering === 'sorted' && !sortAfter,
      selectionSort: selectionSort?.sort,
      tiesAsFound: relaxed.tiesAsFound,
      orderAsFound: relaxed.orderAsFound,
      radixPick: pick.built,
      weights,
    }),
  }, { kMax: facts.kMax, outputLength });
}
