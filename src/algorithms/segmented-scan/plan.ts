import { checkArgsObject } from '../../params/fields.js';
import { type Backend, checkDeviceArray } from '../../backends/backend.js';
import { type SegmentFacts, type SegmentedInput, checkGeometry, checkPerSegmentLengths, maxSegmentSizeOf, maxSegmentsOf, segmentSizeBounds } from '../../dispatch/geometry.js';
import { type NumericParameterSpec, type OptionParameterSpec, type ParameterSpec, numericFacts, optionFacts, resolveParameters, segmentParameters } from '../../dispatch/parameters.js';
import { type Plan, makePlan, planValidation, prologueLaunches } from '../../dispatch/plan.js';
import { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type Env, type Requirements, backendForCall, env as makeEnv } from '../../env/env.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import type { NumericFacts, OptionFacts } from '../../params/resolve.js';
import type { ScanArgs } from './args.js';
import { OpCode, type ScanMode, type ScanOp, type ScanValueType, scanModes, scanOps, tileItems, tileLanes, valueBits } from './order.js';
import { type ScanPolicy, type ScanSelection, type ScanVariant, scanVariants, selectScanVariant } from './policy.js';
import { type ScanKernelId, type ScanLaunch, type ScanProblem, carryUnitTiles, carryUnitsPerSegment, lookbackWords, maxCarryUnits, scanKernels, spineForm, spineTilesPerSegment, tilesPerSegment } from './problem.js';

const u32Max = 4294967295;

/** The fields of a scan's arguments (an unknown one is an error: a typo must not change a result). */
export const scanArgFields = ['valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'numSegments', 'totalNumItems', 'op', 'mode', 'initialValue'] as const;
/** The fields a call must give. */
export const scanArgRequired = ['valuesIn', 'valuesOut', 'segmentSizes', 'numSegments', 'op', 'mode'] as const;

const opParameter: OptionParameterSpec = { type: 'option', name: 'op', options: scanOps, required: true };
const modeParameter: OptionParameterSpec = { type: 'option', name: 'mode', options: scanModes, required: true };

/** The domain of `initialValue`: the values' type (f32 values may be infinite). */
function initialValueParameter(valueType: ScanValueType): NumericParameterSpec {
  const domain: Bounds =
    valueType === 'u32' ? { min: 0, max: u32Max } : valueType === 'i32' ? { min: -2147483648, max: 2147483647 } : { min: -Infinity, max: Infinity };
  return { type: 'numeric', name: 'initialValue', kinds: ['constant', 'uniform', 'perSegment'], domain, integer: valueType !== 'f32', required: false, deviceDtypes: [valueType] };
}

/** Every parameter of the scan, in the order facts are resolved and explained. */
function scanParameters(valueType: ScanValueType): readonly ParameterSpec[] {
  return [
    segmentParameters.segmentSizes,
    segmentParameters.numSegments,
    segmentParameters.segmentStride,
    segmentParameters.totalNumItems,
    opParameter,
    modeParameter,
    initialValueParameter(valueType),
  ];
}

/** The facts of every scan parameter, after every host-side check. */
export interface ScanFacts extends SegmentFacts {
  readonly op: OptionFacts<ScanOp>;
  readonly mode: OptionFacts<ScanMode>;
  readonly initialValue: NumericFacts | undefined;
  readonly valueType: ScanValueType;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/** A planned scan: host facts, the chosen variant, its launches and temporary storage. */
export type ScanPlan = Plan<ScanVariant, ScanFacts>;

/** The length of a per-segment parameter's values (host or device), or undefined for other kinds. */
function perSegmentLength(f: NumericFacts | OptionFacts | undefined): number | undefined {
  if (f === undefined || f.kind !== 'perSegment') return undefined;
  return f.hostValues?.length ?? f.deviceValues?.length;
}

/**
 * The most segments a call can have where numSegments is not known on the host: the per-segment
 * arrays' length, else one per item (a segment past the items is empty, and does nothing).
 */
function segmentsBound(facts: SegmentFacts & { op: OptionFacts; mode: OptionFacts; initialValue: NumericFacts | undefined }, itemsLength: number): number {
  const lengths = [facts.segmentSizes, facts.op, facts.mode, facts.initialValue].map(perSegmentLength).filter((n) => n !== undefined);
  return lengths.length > 0 ? Math.min(...lengths) : Math.max(1, itemsLength);
}

function resolveFacts(args: ScanArgs, environment: Env, backend: Backend): ScanFacts {
  const valueType = args.valuesIn.dtype as ScanValueType;
  const resolved = resolveParameters(scanParameters(valueType), args as unknown as Record<string, unknown>, environment, backend);
  const segments: SegmentFacts = {
    segmentSizes: numericFacts(resolved, 'segmentSizes'),
    segmentStride: resolved.segmentStride === undefined ? undefined : numericFacts(resolved, 'segmentStride'),
    numSegments: numericFacts(resolved, 'numSegments'),
    totalNumItems: resolved.totalNumItems === undefined ? undefined : numericFacts(resolved, 'totalNumItems'),
  };
  const initialValue = resolved.initialValue === undefined ? undefined : numericFacts(resolved, 'initialValue');
  if (initialValue?.deviceValues !== undefined) {
    const { staticBounds } = initialValue;
    const domain = initialValueParameter(valueType).domain;
    // The device check reads counts (non-negative integers); an initial value is any value of its type.
    if (staticBounds.min > domain.min || staticBounds.max < domain.max) {
      throw new SegkitUsageError(
        `initialValue: bounds [${staticBounds.min}, ${staticBounds.max}] on a device-only initial value cannot be checked on the device; leave them out (the values' whole range)`,
      );
    }
  }
  const own = { ...segments, op: optionFacts<ScanOp>(resolved, 'op'), mode: optionFacts<ScanMode>(resolved, 'mode'), initialValue, valueType };
  return { ...own, maxSegments: maxSegmentsOf(segments, segmentsBound(own, args.valuesIn.length)) };
}

function checkArrays(args: ScanArgs, backend: Backend): void {
  checkDeviceArray(args.valuesIn, backend, 'valuesIn', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.valuesOut, backend, 'valuesOut', [args.valuesIn.dtype]);
  if (args.valuesOut === args.valuesIn) throw new SegkitUsageError('valuesOut: must not be valuesIn (the scan does not run in place)');
  if (args.valuesOut.length < args.valuesIn.length) {
    throw new SegkitUsageError(`valuesOut: needs as many elements as valuesIn (${args.valuesIn.length}), in the same layout; has ${args.valuesOut.length}`);
  }
}

const optionText = (f: OptionFacts, name: string) => (f.kind === 'constant' ? f.exact! : `${name}=${f.kind === 'uniform' ? 'uniform' : 'per-segment'}`);

function specialization(facts: ScanFacts, canonical: boolean): string {
  const parts: string[] = [facts.valueType, optionText(facts.op, 'op'), optionText(facts.mode, 'mode')];
  if (facts.initialValue !== undefined) parts.push('init');
  if (!canonical && facts.valueType === 'f32' && facts.op.occurring.includes('sum')) parts.push('fast');
  return parts.join(',');
}

/** The launches of the chosen variant (after the prologue's) and their temporary-storage slots. */
function variantLaunches(
  selection: ScanSelection,
  facts: ScanFacts,
  maxSegmentSize: number,
  spec: string,
  path: ScanPath,
  stores: ScanStores,
  layout: TempStorageLayoutBuilder,
): ScanLaunch[] {
  const { policy, variant } = selection;
  const geometry = { maxSegments: facts.maxSegments, maxSegmentSize };
  const launch = (kernel: Exclude<ScanKernelId, 'validate' | 'segment-offsets'>, name: string, purpose: string): ScanLaunch => ({
    kernel,
    variant,
    name: `scan/${name}[${spec}]`,
    grid: scanKernels[kernel].grid(geometry, policy),
    pass: 0,
    purpose,
  });
  if (variant === 'thread') return [launch('thread', 'thread', `one invocation per segment (${policy.workgroupSize} segments a workgroup): the scan in one pass`)];
  if (variant === 'workgroup') return [launch('workgroup', 'workgroup', 'one workgroup per segment: scan each tile, carry to the next')];
  const tiles = tilesPerSegment(maxSegmentSize);
  const spineTiles = spineTilesPerSegment(maxSegmentSize);
  const workgroups = (n: number) => `${n} workgroup${n === 1 ? '' : 's'} per segment`;
  if (path.singlePass) {
    // The counter and the words start at zero in every run (the executor clears the slot first).
    layout.add('lookback', lookbackWords(geometry) * 4, { zeroed: true });
    return [
      launch(
        'single-pass',
        'multi-workgroup/single-pass',
        `${workgroups(Math.ceil(tiles / policy.singlePassTiles))} of ${policy.singlePassTiles} tile${policy.singlePassTiles === 1 ? '' : 's'}, taken in the order workgroups start: each publishes its tiles' totals (and a group's or unit's where it holds its last tile), puts their carries together from the tile, group and unit totals before them (one not published after ${policy.lookbackPolls} polls is worked out from the input here) and writes their scans`,
      ),
    ];
  }
  layout.add('tileTotals', facts.maxSegments * tiles * 4);
  const launches = [launch('tile-reduce', 'multi-workgroup/tile-reduce', `${workgroups(tiles)}: each tile's total`)];
  const form = spineForm(geometry, policy);
  if (form === 'walk') {
    launches.push(launch('spine-walk', 'multi-workgroup/spine-walk', `one workgroup per segment: scan the tile totals in place, 2048 at a time (each tile's carry)`));
  } else if (form === 'lanes' || form === 'lanes-top') {
    layout.add('spineTotals', facts.maxSegments * spineTiles * 4);
    layout.add('spineLaneCarries', facts.maxSegments * spineTiles * tileLanes * 4);
    launches.push(
      launch(
        'spine-lanes',
        'multi-workgroup/spine-lanes',
        `${workgroups(spineTiles)}, all at once: of 2048 tile totals each, the lane prefixes (in place), the carry into each lane from the lanes before it, and their total`,
      ),
    );
    if (form === 'lanes-top') launches.push(launch('spine-top', 'multi-workgroup/spine-top', 'one workgroup per segment: scan the totals of the 2048 tile totals in place (the carry into each 2048)'));
  } else {
    if (form === 'three') {
      layout.add('spineTotals', facts.maxSegments * spineTiles * 4);
      launches.push(
        launch('spine-reduce', 'multi-workgroup/spine-reduce', `${workgroups(spineTiles)}: the totals of 2048 tile totals each`),
        launch('spine-top', 'multi-workgroup/spine-top', 'one workgroup per segment: scan those totals in place'),
      );
    }
    launches.push(launch('spine-scan', 'multi-workgroup/spine-scan', `${workgroups(spineTiles)}: scan the tile totals in place (each tile's carry)`));
  }
  const carry =
    form === 'lanes'
      ? ": scan each tile from its carry, added up from its total's lane prefix, its lane's carry and the totals of the 2048 tile totals before"
      : form === 'lanes-top'
        ? ": scan each tile from its carry, added up from its total's lane prefix, its lane's carry and the carry into its 2048 tile totals"
        : ': scan each tile from its carry';
  launches.push(launch('tile-scan', 'multi-workgroup/tile-scan', `${workgroups(tiles)}${carry}; ${stores.why}`));
  return launches;
}

/** How 'tile-scan' writes its outputs on a GPU: words per store (1 or 4), and why. */
interface ScanStores {
  readonly words: 1 | 4;
  readonly why: string;
}

/** Whether a host-known count is a multiple of 4: an exact value, or every host per-segment value. */
function knownMultipleOf4(f: NumericFacts | undefined): boolean {
  if (f === undefined) return false;
  if (f.kind !== 'perSegment') return f.exact !== undefined && f.exact % 4 === 0;
  const values = f.hostValues;
  if (values === undefined) return false;
  for (let i = 0; i < values.length; i++) if (values[i]! % 4 !== 0) return false;
  return true;
}

/**
 * 'tile-scan''s stores (policy `storeWords`): whole vec4s, a lane's outputs straight from registers,
 * for f32 values (integers measured faster staged), only where the plan knows every store is a
 * whole vec4 of one invocation: an inclusive scan (an exclusive one writes one word on), every
 * segment starting and ending at a multiple of 4 items (sizes, and a stride, known on the host), on
 * the vec4 path (`loadWords` 4). Otherwise a word at a time: with the output bound as vec4, a word's
 * store writes one component of a vector, which some WebGPU implementations compile as a
 * read-modify-write of all four. The CPU emulator writes words.
 */
function scanStores(facts: ScanFacts, selection: ScanSelection, path: ScanPath, backend: Backend): ScanStores {
  const { policy } = selection;
  const words = 'outputs a word at a time, staged through workgroup memory';
  // Only 'tile-scan' has the vec4 stores: every other kernel keeps the facts (and pipelines) of words.
  if (selection.variant !== 'multi-workgroup' || path.singlePass) return { words: 1, why: words };
  if (backend.name === 'cpu') return { words: 1, why: 'outputs a word at a time (the CPU emulator)' };
  if (policy.storeWords !== 4) return { words: 1, why: `${words} (policy storeWords ${policy.storeWords})` };
  if (policy.loadWords !== 4) return { words: 1, why: `${words} (policy loadWords ${policy.loadWords}: no vec4 path)` };
  // H200, one segment of 16M items (GPU ms, 2026-11-29, storeWords 4 / 1): f32 sums 0.1056-0.1075 /
  // 0.1082-0.1097, f32 max 0.177 / 0.187; but i32 sums 0.0928-0.0939 / 0.0894-0.0896 and i32 max
  // 0.0964 / 0.0916: the integers' cheap additions leave the barriers nothing to hide, and the
  // staged stores' whole lines win.
  if (facts.valueType !== 'f32') return { words: 1, why: `${words} (${facts.valueType} values: measured faster than from registers)` };
  if (facts.mode.occurring.some((m) => m !== 'inclusive')) return { words: 1, why: `${words} (an exclusive scan writes its outputs one word on)` };
  if (!knownMultipleOf4(facts.segmentSizes)) return { words: 1, why: `${words} (segment sizes not known on the host to be multiples of 4)` };
  if (facts.segmentStride !== undefined && !knownMultipleOf4(facts.segmentStride)) return { words: 1, why: `${words} (a segment stride not known on the host to be a multiple of 4)` };
  return { words: 4, why: "outputs as whole vec4s, a lane's from registers (an inclusive scan, every segment starting and ending at a multiple of 4 items)" };
}

/** How the multi-workgroup variant runs: one pass, or reduce-then-scan; and why. */
interface ScanPath {
  readonly singlePass: boolean;
  readonly why: string;
}

/**
 * The multi-workgroup variant's path: the single pass (policy `passes` 1) or reduce-then-scan. Both
 * put every carry together in the canonical order (order.ts), so both give the same bits for every
 * operator and determinism; the single pass needs one lane per invocation and reads the unit totals
 * before a tile with one invocation each (segments of up to 2^30 items, problem.ts `maxCarryUnits`).
 */
function scanPath(maxSegmentSize: number, policy: ScanPolicy): ScanPath {
  if (policy.passes !== 1) return { singlePass: false, why: `reduce-then-scan: policy passes ${policy.passes}` };
  if (policy.workgroupSize !== tileLanes) return { singlePass: false, why: `reduce-then-scan: the single pass needs workgroupSize ${tileLanes} (one lane per invocation), the policy has ${policy.workgroupSize}` };
  if (carryUnitsPerSegment(maxSegmentSize) > maxCarryUnits) {
    return { singlePass: false, why: `reduce-then-scan: the single pass takes segments of up to ${maxCarryUnits * carryUnitTiles * tileItems} items, a segment may hold ${maxSegmentSize}` };
  }
  return { singlePass: true, why: `single pass (policy passes 1): each tile's carry put together in the canonical order from the totals other tiles publish` };
}

/** The option index -> code table of an option parameter, as the kernels read option indices. */
const codesOf = <Option extends string>(f: OptionFacts<Option>, code: (option: Option) => number) => f.options.map(code);

/**
 * explain()'s account of the requirements scan reads (none is ignored silently): determinism picks
 * the f32 addition order; a scan has no ties and its outputs keep their items' places.
 */
function requirementNotes(requirements: Requirements): string[] {
  const notes: string[] = [];
  if (requirements.determinism === 'not-guaranteed') notes.push("determinism 'not-guaranteed': f32 sums take each backend's faster path (the CPU adds a tile left to right, and packed rows of 8 or 16 in the canonical order through its WebAssembly SIMD loops where the runtime has them; WebGPU keeps subnormals); bits may differ between backends");
  if (requirements.tieBreak === 'any') notes.push("tieBreak 'any': a scan compares no items for a choice, so there are no ties to break");
  if (requirements.outputOrdering === 'unsorted') notes.push("outputOrdering 'unsorted': each output keeps its item's place; nothing to reorder");
  return notes;
}

/**
 * Plans a scan on the host: resolves and checks every parameter, chooses the variant, lays out
 * temporary storage and lists the launches. No device work.
 */
export function planScan(args: ScanArgs, environment: Env = makeEnv()): ScanPlan {
  checkArgsObject(args, scanArgFields, scanArgRequired, ['valuesIn', 'valuesOut']);
  const { requirements } = environment;
  const backend = backendForCall(environment, args);
  checkArrays(args, backend);
  const facts = resolveFacts(args, environment, backend);
  checkPerSegmentLengths(facts.numSegments, [facts.segmentSizes, facts.op, facts.mode, facts.initialValue]);
  const input: SegmentedInput = { name: 'valuesIn', noun: 'values', length: args.valuesIn.length };
  checkGeometry(facts, input);

  const sizeBounds = segmentSizeBounds(facts);
  const maxSegmentSize = maxSegmentSizeOf(facts, input);
  // No segment is shorter than the static min: a bound below it (few items) could only pick a variant that no segment needs.
  const selection = selectScanVariant(
    { segmentSize: { min: sizeBounds.min, max: Math.max(sizeBounds.min, maxSegmentSize) }, maxSegments: facts.maxSegments },
    backend.capabilities,
    environment.tuning as { variant?: ScanVariant; policy?: Partial<ScanPolicy> },
  );
  const canonical = requirements.determinism === 'run-to-run';
  const path = scanPath(maxSegmentSize, selection.policy);
  const stores = scanStores(facts, selection, path, backend);

  // initialValue never takes part in the device checks: any value of its type is valid (resolveFacts).
  const validation = planValidation(environment, facts, [facts.op, facts.mode]);
  const layoutBuilder = new TempStorageLayoutBuilder();
  const launches = [
    ...prologueLaunches('scan', facts, facts.maxSegments, validation, layoutBuilder),
    ...variantLaunches(selection, facts, maxSegmentSize, specialization(facts, canonical), path, stores, layoutBuilder),
  ];
  const layout = layoutBuilder.build();
  const initial = facts.initialValue;
  const initialBits = initial?.exact !== undefined && initial.kind !== 'perSegment' ? valueBits(initial.exact, facts.valueType) : undefined;
  const segmentsText = facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`;
  const parameters = [facts.op, facts.mode, facts.initialValue];

  return makePlan<ScanVariant, ScanFacts, ScanProblem, ScanPolicy>({
    algorithm: 'scan',
    environment,
    backend,
    facts,
    segments: facts,
    input,
    parameters,
    validation,
    selection,
    variants: scanVariants,
    launches,
    kernels: scanKernels,
    layout,
    summary: `DeviceSegmentedScan on ${backend.name}: ${segmentsText} segment${facts.maxSegments === 1 ? '' : 's'}, ${args.valuesIn.dtype} values, max segment size ${maxSegmentSize}`,
    requirementNotes: [...requirementNotes(requirements), ...(selection.variant === 'multi-workgroup' ? [`multi-workgroup path: ${path.why}`] : [])],
    arrays: { valuesIn: args.valuesIn, valuesOut: args.valuesOut },
    checkArrays: () => checkArrays(args, backend),
    hostDtypes: { initialValue: facts.valueType === 'f32' ? 'f32' : 'u32' },
    problem: (sources) => ({
      maxSegments: facts.maxSegments,
      maxSegmentSize,
      itemsLength: args.valuesIn.length,
      numSegments: sources.numSegments,
      segmentSizes: sources.segmentSizes,
      layout: sources.segmentStride === undefined ? { kind: 'packed' } : { kind: 'strided', stride: sources.segmentStride },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
      sources: {
        op: sources.parameters.op!,
        mode: sources.parameters.mode!,
        ...(sources.parameters.initialValue === undefined ? {} : { initialValue: sources.parameters.initialValue }),
      },
      valueType: facts.valueType,
      opOfOption: codesOf(facts.op, (o) => OpCode[o]),
      modeOfOption: codesOf(facts.mode, (m) => (m === 'exclusive' ? 1 : 0)),
      initialBits,
      canonical,
      storeWords: stores.words,
    }),
  });
}
