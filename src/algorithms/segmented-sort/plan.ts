import { type Backend, type BackendCapabilities, checkDeviceArray } from '../../backends/backend.js';
import { type SegmentFacts, type SegmentedInput, checkGeometry, checkPerSegmentLengths, maxSegmentSizeOf, maxSegmentsOf, segmentSizeBounds, segmentsExtent } from '../../dispatch/geometry.js';
import { type OptionParameterSpec, type ParameterSpec, numericFacts, optionFacts, resolveParameters, segmentParameters } from '../../dispatch/parameters.js';
import { type Plan, type Validation, makePlan, planValidation, prologueLaunches } from '../../dispatch/plan.js';
import { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type Env, type Requirements, backendForCall, env as makeEnv } from '../../env/env.js';
import { SegkitUsageError } from '../../errors.js';
import { checkArgsObject, checkFields } from '../../params/fields.js';
import type { NumericFacts, OptionFacts } from '../../params/resolve.js';
import { type SegmentedSortArgs, segmentedSortFields, segmentedSortRequired } from './args.js';
import { type SortOrder, sortOrders } from './keys.js';
import {
  type SegmentedSortPolicy,
  type SegmentedSortSelection,
  type SegmentedSortVariant,
  defaultSizeOrderMinSegments,
  defaultSizeOrderSegmentsPerWorkgroup,
  segmentedSortPolicyFor,
  segmentedSortVariants,
  selectSegmentedSortVariant,
  sizeOrderMaxSegments,
} from './policy.js';
import { type SegmentedSortLaunch, type SegmentedSortProblem, groupSegments, mergePassesFor, mergeTileFor, radixCountsWords, radixLaunchPass, radixPasses, radixScanShape, radixScansInScatter, defaultRadixScanLaunchMinTiles, segmentedSortKernels, type SingleTileShape, singleTileShape, tilesPerSegment } from './problem.js';
import { tileRadixFor } from './webgpu/tile-radix.js';

const orderParameter: OptionParameterSpec = { type: 'option', name: 'order', options: sortOrders, required: true };

/** Every parameter of the sort, in the order facts are resolved and explained. */
const sortParameters: readonly ParameterSpec[] = [
  segmentParameters.segmentSizes,
  segmentParameters.numSegments,
  segmentParameters.segmentStride,
  segmentParameters.totalNumItems,
  orderParameter,
];

/** The facts of every sort parameter, after every host-side check. */
export interface SegmentedSortFacts extends SegmentFacts {
  readonly order: OptionFacts<SortOrder>;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/** A planned sort call: host facts, the chosen variant, its launches and temporary storage. */
export type SegmentedSortPlan = Plan<SegmentedSortVariant, SegmentedSortFacts>;

/** The length of a per-segment parameter's values (host or device), or undefined for other kinds. */
function perSegmentLength(f: NumericFacts | OptionFacts | undefined): number | undefined {
  if (f === undefined || f.kind !== 'perSegment') return undefined;
  return f.hostValues?.length ?? f.deviceValues?.length;
}

function resolveFacts(args: SegmentedSortArgs, environment: Env, backend: Backend): SegmentedSortFacts {
  const resolved = resolveParameters(sortParameters, args as unknown as Record<string, unknown>, environment, backend);
  const segments: SegmentFacts = {
    segmentSizes: numericFacts(resolved, 'segmentSizes'),
    segmentStride: resolved.segmentStride === undefined ? undefined : numericFacts(resolved, 'segmentStride'),
    numSegments: numericFacts(resolved, 'numSegments'),
    totalNumItems: resolved.totalNumItems === undefined ? undefined : numericFacts(resolved, 'totalNumItems'),
  };
  const order = optionFacts<SortOrder>(resolved, 'order');
  // Where numSegments is not known on the host: the per-segment arrays' length, else one segment per
  // key (a segment past the keys is empty and does nothing).
  const lengths = [segments.segmentSizes, order].map(perSegmentLength).filter((n) => n !== undefined);
  const bound = lengths.length > 0 ? Math.min(...lengths) : Math.max(1, args.keysIn.length);
  return { ...segments, order, maxSegments: maxSegmentsOf(segments, bound) };
}

function checkArrays(args: SegmentedSortArgs, backend: Backend): void {
  checkDeviceArray(args.keysIn, backend, 'keysIn', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.keysOut, backend, 'keysOut', [args.keysIn.dtype]);
  if (args.keysOut.length < args.keysIn.length) {
    throw new SegkitUsageError(`keysOut: needs as many elements as keysIn (${args.keysIn.length}), in the same layout; has ${args.keysOut.length}`);
  }
  if (args.valuesIn !== undefined) {
    checkDeviceArray(args.valuesIn, backend, 'valuesIn', ['f32', 'i32', 'u32']);
    if (args.valuesIn.length < args.keysIn.length) throw new SegkitUsageError(`valuesIn: needs one value per key (${args.keysIn.length}); has ${args.valuesIn.length}`);
    if (args.valuesOut === undefined) throw new SegkitUsageError('valuesOut: required when valuesIn is given');
  }
  if (args.valuesOut !== undefined) {
    checkDeviceArray(args.valuesOut, backend, 'valuesOut', args.valuesIn === undefined ? ['u32', 'i32', 'f32'] : [args.valuesIn.dtype]);
    if (args.valuesOut.length < args.keysIn.length) {
      throw new SegkitUsageError(`valuesOut: needs as many elements as keysIn (${args.keysIn.length}), in the same layout; has ${args.valuesOut.length}`);
    }
  }
  const arrays = [args.keysIn, args.keysOut, args.valuesIn, args.valuesOut].filter((a) => a !== undefined);
  if (new Set(arrays).size !== arrays.length) throw new SegkitUsageError('keysIn, keysOut, valuesIn and valuesOut must be distinct arrays (the sort does not run in place)');
}

function specialization(facts: SegmentedSortFacts, keyType: string, valueMode: string): string {
  const order = facts.order;
  return [keyType, order.kind === 'constant' ? order.exact! : `order=${order.kind === 'uniform' ? 'uniform' : 'per-segment'}`, `values=${valueMode}`].join(',');
}

/**
 * What explain() adds to the single-tile launch where its segments may be ranked by digits instead
 * of the bitonic network (webgpu/tile-radix.ts `tileRadixFor`, decided where the kernel is built,
 * from the device's subgroups: the capabilities give their smallest width).
 */
function tileRadixNote(shape: SingleTileShape, leastSegmentSize: number, capabilities: BackendCapabilities): string {
  const radix = tileRadixFor({ shape, leastSegmentSize }, capabilities, capabilities.subgroupSize);
  if (radix === undefined) return '';
  return `; on WebGPU, where the device's subgroups all have one width, by radix ranks in workgroup memory instead of the network (every segment longer than half the tile: one segment a workgroup of ${radix.workgroupSize} invocations, four passes of 8-bit digits, ${radix.items} keys a lane, ranked by subgroup ballots)`;
}

/** The launches of the chosen variant (after the prologue's) and their temporary-storage slots. */
function variantLaunches(
  selection: SegmentedSortSelection,
  withSingleTile: boolean,
  facts: SegmentedSortFacts,
  maxSegmentSize: number,
  itemsBound: number,
  spec: string,
  withValues: boolean,
  layout: TempStorageLayoutBuilder,
  capabilities: BackendCapabilities,
): SegmentedSortLaunch[] {
  const { policy } = selection;
  const geometry = { maxSegments: facts.maxSegments, maxSegmentSize };
  const launch = (kernel: keyof typeof segmentedSortKernels, variant: SegmentedSortVariant, name: string, purpose: string, pass = 0, grid = segmentedSortKernels[kernel].grid(geometry, policy)): SegmentedSortLaunch => ({
    kernel,
    variant,
    name: `sort/${name}[${spec}]`,
    grid,
    pass,
    purpose,
  });
  const launches: SegmentedSortLaunch[] = [];
  if (selection.variant === 'single-tile' || withSingleTile) {
    const which = selection.variant === 'single-tile' ? '' : ` (segments of at most ${policy.tileItems} keys; ${selection.variant} takes the rest)`;
    const shape = singleTileShape(maxSegmentSize, policy);
    const per = shape.segmentsPerWorkgroup === 1 ? 'one workgroup per segment' : `${shape.segmentsPerWorkgroup} segments per workgroup`;
    launches.push(
      launch('single-tile', 'single-tile', 'single-tile', `${per} (tiles of ${shape.tile} keys, ${shape.itemsPerInvocation} per invocation in registers): load, bitonic sort by (sort key, index), write${which}${tileRadixNote(shape, segmentSizeBounds(facts).min, capabilities)}`),
    );
  }
  if (selection.variant === 'merge') {
    for (const slot of withValues ? ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] : ['sortKeys0', 'sortKeys1']) layout.add(slot, itemsBound * 4);
    const tile = mergeTileFor(geometry, policy);
    const passes = mergePassesFor(maxSegmentSize, tile);
    const which = withSingleTile ? ` longer than ${policy.tileItems} keys` : '';
    launches.push(
      launch(
        'merge-blocks',
        'merge',
        'merge/blocks',
        `each tile of ${tile} keys of the segments${which}: load, bitonic sort by (sort key, index), write to buffer 0 (the outputs where a segment is one tile)`,
      ),
    );
    for (let pass = 0; pass < passes; pass++) {
      const run = tile * 2 ** pass;
      launches.push(
        launch(
          'merge-pass',
          'merge',
          'merge/pass',
          `pass ${pass}: merge the sorted runs of ${run} keys in pairs (stable), ${tile} places a workgroup, buffer ${pass % 2} into ${pass === passes - 1 ? 'the outputs' : `buffer ${(pass + 1) % 2} (a segment's last pass writes the outputs)`}`,
          pass,
        ),
      );
    }
  }
  if (selection.variant === 'workgroup-radix') {
    for (const slot of withValues ? ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] : ['sortKeys0', 'sortKeys1']) layout.add(slot, itemsBound * 4);
    const rank = policy.workgroupSize * policy.workgroupRadixItemsPerInvocation;
    launches.push(
      launch(
        'workgroup-radix',
        'workgroup-radix',
        'workgroup-radix',
        `one workgroup per segment${withSingleTile ? ` longer than ${policy.tileItems} keys` : ''}: the four digit histograms in one read, then per 8-bit digit (skipping a digit every key of the segment shares) a stable scatter, tile by tile of ${rank} keys ranked in workgroup memory, between the double buffers; the last pass writes the outputs`,
      ),
    );
  }
  if (selection.variant === 'radix') {
    const tiles = tilesPerSegment(geometry, policy);
    const perGroup = groupSegments(geometry, policy);
    const groups = Math.ceil(facts.maxSegments / perGroup);
    const scanWorkgroups = radixScanShape(tiles, policy.workgroupSize).workgroups;
    const inScatter = radixScansInScatter(tiles, policy);
    layout.add('sortCounts', radixCountsWords(Math.min(facts.maxSegments, perGroup), tiles) * 4);
    for (const slot of withValues ? ['sortKeys0', 'sortValues0', 'sortKeys1', 'sortValues1'] : ['sortKeys0', 'sortKeys1']) layout.add(slot, itemsBound * 4);
    for (let group = 0; group < groups; group++) {
      const segments = Math.min(perGroup, facts.maxSegments - group * perGroup);
      const which = groups === 1 ? '' : `segments ${group * perGroup}..${group * perGroup + segments - 1}, `;
      for (let digit = 0; digit < radixPasses; digit++) {
        const from = digit === 0 ? 'the keys' : `buffer ${(digit - 1) % 2}`;
        const to = digit === radixPasses - 1 ? 'the outputs' : `buffer ${digit % 2}`;
        const pass = radixLaunchPass(group, digit);
        launches.push(launch('radix-histogram', 'radix', 'radix/histogram', `${which}pass ${digit}: histogram of digit ${digit} of ${from} (${tiles} tiles per segment)`, pass, segments * tiles));
        if (!inScatter) launches.push(launch('radix-scan', 'radix', 'radix/scan', `${which}pass ${digit}: where each tile's digits go in its segment (${scanWorkgroups} workgroups per segment)`, pass, segments * scanWorkgroups));
        const placing = inScatter ? `add up where its digits go from the ${tiles} tiles' counts (fewer than radixScanLaunchMinTiles ${policy.radixScanLaunchMinTiles ?? defaultRadixScanLaunchMinTiles}: no scan launch), ` : '';
        launches.push(launch('radix-scatter', 'radix', 'radix/scatter', `${which}pass ${digit}: ${placing}rank each tile by digit ${digit} in workgroup memory (stable), then write each digit's run of ${from} into ${to}`, pass, segments * tiles));
      }
    }
  }
  return launches;
}

/** explain()'s account of the requirements the sort reads (none is ignored silently). */
function requirementNotes(requirements: Requirements): string[] {
  const notes: string[] = [];
  if (requirements.tieBreak === 'any') notes.push("tieBreak 'any': equal keys still keep their input order: every kernel ranks by index at no extra cost, so results are those of the defaults");
  if (requirements.outputOrdering === 'unsorted') notes.push("outputOrdering 'unsorted': a sort's output is sorted; the requirement changes nothing");
  if (requirements.determinism === 'not-guaranteed') notes.push("determinism 'not-guaranteed': a stable sort fixes every output slot, so results repeat anyway");
  return notes;
}

/**
 * Whether the workgroups that sort segments of their own take them largest first
 * (SegmentedProblem.sizeOrder): packed segments with per-segment sizes, from the policy's
 * `sizeOrderMinSegments` to {@link sizeOrderMaxSegments} of them, where the variant is
 * 'workgroup-radix' (a segment a workgroup) or 'single-tile' with at most the policy's
 * `sizeOrderSegmentsPerWorkgroup` segments a workgroup (policy.ts has the measurements).
 */
function sortsBySize(facts: SegmentedSortFacts, selection: SegmentedSortSelection, maxSegmentSize: number): boolean {
  const { variant, policy } = selection;
  const perWorkgroup = policy.sizeOrderSegmentsPerWorkgroup ?? defaultSizeOrderSegmentsPerWorkgroup;
  const ownSegments = variant === 'workgroup-radix' || (variant === 'single-tile' && singleTileShape(maxSegmentSize, policy).segmentsPerWorkgroup <= perWorkgroup);
  const minSegments = policy.sizeOrderMinSegments ?? defaultSizeOrderMinSegments;
  return ownSegments && facts.segmentStride === undefined && facts.segmentSizes.kind === 'perSegment' && facts.maxSegments >= minSegments && facts.maxSegments <= sizeOrderMaxSegments;
}

/**
 * Plans a sort call on the host: resolves and checks every parameter, chooses the variant, lays
 * out temporary storage and lists the launches. No device work.
 */
export function planSegmentedSort(args: SegmentedSortArgs, environment: Env = makeEnv()): SegmentedSortPlan {
  checkArgsObject(args, segmentedSortFields, segmentedSortRequired, ['keysIn', 'keysOut']);
  const backend = backendForCall(environment, args);
  checkDeviceArray(args.keysIn, backend, 'keysIn', ['f32', 'i32', 'u32']);
  const facts = resolveFacts(args, environment, backend);
  checkArrays(args, backend);
  checkPerSegmentLengths(facts.numSegments, [facts.segmentSizes, facts.order]);
  const input: SegmentedInput = { name: 'keysIn', noun: 'keys', length: args.keysIn.length };
  checkGeometry(facts, input);

  const { policy: policyTuning, variant: forced } = environment.tuning as { variant?: SegmentedSortVariant; policy?: Partial<SegmentedSortPolicy> };
  if (typeof policyTuning === 'object' && policyTuning !== null) checkFields('env.tuning.policy', policyTuning, Object.keys(segmentedSortPolicyFor(backend.capabilities)));
  const sizeBounds = segmentSizeBounds(facts);
  const maxSegmentSize = maxSegmentSizeOf(facts, input);
  const selection = selectSegmentedSortVariant({ segmentSize: { min: sizeBounds.min, max: Math.max(maxSegmentSize, sizeBounds.min) }, segments: facts.maxSegments }, backend.capabilities, {
    ...(forced === undefined ? {} : { variant: forced }),
    ...(policyTuning === undefined ? {} : { policy: policyTuning }),
  });
  // Radix or workgroup-radix chosen by the selector (not forced) leaves the segments that fit a tile to single-tile.
  const withSingleTile = selection.variant !== 'single-tile' && forced === undefined && sizeBounds.min <= selection.policy.tileItems;

  const parameters = [facts.order];
  const validation: Validation = planValidation(environment, facts, parameters);
  const valueMode = args.valuesOut === undefined ? 'none' : args.valuesIn === undefined ? 'indices' : 'payload';
  const layoutBuilder = new TempStorageLayoutBuilder();
  const sizeOrder = sortsBySize(facts, selection, maxSegmentSize);
  const launches = [
    ...prologueLaunches('sort', facts, facts.maxSegments, validation, layoutBuilder, { sizeOrder }),
    // A segment's items live at its own start in the double buffer, so it spans the segments' extent
    // (packed: at most totalNumItems).
    ...variantLaunches(selection, withSingleTile, facts, maxSegmentSize, segmentsExtent(facts, input, facts.maxSegments), specialization(facts, args.keysIn.dtype, valueMode), valueMode !== 'none', layoutBuilder, backend.capabilities),
  ];
  const layout = layoutBuilder.build();
  const orderOfOption = facts.order.options.map((o) => (o === 'ascending' ? 0 : 1));
  const segmentsText = facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`;
  const tiles = selection.variant === 'radix' ? tilesPerSegment({ maxSegments: facts.maxSegments, maxSegmentSize }, selection.policy) : 1;
  const perGroup = selection.variant === 'radix' ? groupSegments({ maxSegments: facts.maxSegments, maxSegmentSize }, selection.policy) : 1;
  const orderText = facts.order.exact ?? `per ${facts.order.kind === 'uniform' ? 'call' : 'segment'}`;

  return makePlan<SegmentedSortVariant, SegmentedSortFacts, SegmentedSortProblem, SegmentedSortPolicy>({
    algorithm: 'sort',
    environment,
    backend,
    facts,
    segments: facts,
    input,
    parameters,
    validation,
    selection,
    variants: segmentedSortVariants,
    launches,
    kernels: segmentedSortKernels,
    layout,
    summary: `DeviceSegmentedSort on ${backend.name}: ${segmentsText} segments, ${args.keysIn.dtype} keys, order ${orderText}, values: ${valueMode}`,
    requirementNotes: requirementNotes(environment.requirements),
    arrays: { keysIn: args.keysIn, keysOut: args.keysOut, valuesIn: args.valuesIn, valuesOut: args.valuesOut },
    checkArrays: () => checkArrays(args, backend),
    problem: (sources) => ({
      maxSegments: facts.maxSegments,
      maxSegmentSize,
      itemsLength: args.keysIn.length,
      numSegments: sources.numSegments,
      segmentSizes: sources.segmentSizes,
      layout: sources.segmentStride === undefined ? { kind: 'packed' } : { kind: 'strided', stride: sources.segmentStride },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
      sizeOrder,
      sources: { order: sources.parameters.order! },
      keyType: args.keysIn.dtype as SegmentedSortProblem['keyType'],
      valueMode,
      valueType: (args.valuesOut?.dtype ?? 'u32') as SegmentedSortProblem['valueType'],
      orderOfOption,
      tilesPerSegment: tiles,
      groupSegments: perGroup,
      leastSegmentSize: sizeBounds.min,
    }),
  });
}
