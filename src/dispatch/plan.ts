import { type Backend, type DeviceArray, checkDeviceArray, hooksOf, isDeviceArray } from '../backends/backend.js';
import type { Env } from '../env/env.js';
import { SegkitUsageError } from '../errors.js';
import type { NumericFacts, OptionFacts } from '../params/resolve.js';
import { deviceChecks, violationOf } from './device-checks.js';
import { type Explanation, renderExplanation } from './explain.js';
import type { SegmentFacts, SegmentedInput } from './geometry.js';
import { checkLimits } from './limits.js';
import { type HostArrayCopy, hostArrayCopyOf } from './parameters.js';
import { type DeviceCheck, type KernelTable, type Launch, type ScalarSource, type SegmentSource, type SegmentedProblem, type SegmentedRun, statusWords } from './problem.js';
import { executorFor } from './registry.js';
import { type ReportSlot, StatusReports } from './status-reports.js';
import type { TempStorageLayout, TempStorageLayoutBuilder } from './temp-storage.js';
import type { VariantSelection } from './variants.js';

/*
 * The plan every algorithm returns: built on the host from the resolved facts (no device work),
 * run with caller-owned temporary storage. The algorithm supplies what is its own (facts, the
 * selection, its launches, how to build its problem from the parameter sources); this module adds
 * the prologue launches, the device checks, the one upload of the host per-segment arrays the plan
 * copied, the run through the backend's registered executor, the deferred status reports,
 * explain(), checked() and destroy().
 */

/**
 * A planned call: host facts, the chosen variant, its launches and temporary storage.
 *
 * Host per-segment arrays (`p.perSegment(values)`, `p.perSegmentOption(values)` with host arrays,
 * and host runtime bounds) are copied when the plan is made and checked then; the copies go to the
 * device once, on the first run. Later changes to your arrays do not reach the plan: plan again to
 * use them. A plan keeps a little device memory (those copies and, under 'validate' with device-only
 * values, its status words): free it with `destroy()`.
 *
 * @example
 * ```ts
 * const plan = DeviceBatchedTopK.plan(args, env({ backend }));
 * const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
 * await plan.run(temp);
 * await plan.checked();   // only to see a device-only guarantee violation before a download
 * plan.destroy();
 * ```
 */
export interface Plan<Variant extends string = string, Facts = unknown> {
  /**
   * The backend the plan runs on: the environment's, or, where `env()` names none, the one that holds
   * the call's DeviceArrays. Temporary storage for `run` comes from it.
   */
  readonly backend: Backend;
  /** The variant the dispatcher chose. */
  readonly variant: Variant;
  /** Variants not pruned by the known bounds, for this backend. */
  readonly reachableVariants: readonly Variant[];
  /** Bytes of `'u8'` temporary storage `run` needs; 0 where none is needed. */
  readonly tempStorageBytes: number;
  /** The facts the choice was made from. */
  readonly facts: Facts;
  /** The kernel launches `run` makes, in order. */
  readonly launches: readonly Launch[];
  /** Human-readable: facts per parameter, the chosen variant and why, the pruned ones and why, the temporary-storage layout and the launches. */
  explain(): string;
  /** True once `destroy()` was called. */
  readonly destroyed: boolean;
  /**
   * Runs the plan. `tempStorage` is a `'u8'` DeviceArray of at least `tempStorageBytes`, required
   * iff `tempStorageBytes > 0`. Resolves when the work is submitted; host-side misuse (a destroyed
   * array, missing temporary storage, a destroyed plan) rejects it.
   *
   * Under `guaranteeChecks: 'validate'` with device-only values, the device checks them before
   * anything is written, and a violating run writes nothing. The result is not read back per run
   * (that would stall back-to-back calls): a violation rejects the next `backend.synchronize()` or
   * `backend.download()` on this backend, or `checked()`, with `GuaranteeViolationError`
   * (parameter, segment, value, bounds): the earliest violating run's, each reported once.
   */
  run(tempStorage?: DeviceArray<'u8'>): Promise<void>;
  /**
   * Resolves once every run of this plan submitted so far was checked on the device; rejects with
   * the earliest such run's `GuaranteeViolationError` not yet reported. Waits for those runs to
   * finish. Resolves at once where the plan checks nothing on the device.
   */
  checked(): Promise<void>;
  /**
   * Frees the plan's device memory (its copies of host per-segment arrays, its status words) once
   * the work submitted so far is done; a later `run` throws `SegkitUsageError`. Violations of runs
   * already submitted are still reported. Idempotent.
   */
  destroy(): void;
}

/** The kernels every segmented algorithm may launch before its own. */
export type PrologueKernel = 'validate' | 'segment-offsets';

/** Temporary-storage slots of the prologue kernels (an algorithm's kernel table gives its own). */
export const prologueSlots: Readonly<Record<PrologueKernel, readonly string[]>> = { validate: [], 'segment-offsets': ['offsets'] };

/** Temporary-storage slots `kernel` binds: a prologue kernel's, or the algorithm's kernel table's. */
export function slotsOfKernel(kernels: KernelTable<string, never, never>, kernel: string): readonly string[] {
  const slots = prologueSlots[kernel as PrologueKernel] ?? kernels[kernel]?.slots;
  if (slots === undefined) throw new Error(`internal: '${kernel}' is not in the kernel table`);
  return slots;
}

/** Whether a plan validates device-only values on the device, and the checks it runs. */
export interface Validation {
  readonly validates: boolean;
  readonly checks: readonly DeviceCheck[];
  /** The parameter names a check's (and a status word's) parameter index refers to. */
  readonly parameterNames: readonly string[];
}

/**
 * The device checks of a call: every device-only value among `parameters` (the segment parameters
 * first), and whether a validate launch runs at all under the environment's `guaranteeChecks`.
 */
export function planValidation(environment: Env, segments: SegmentFacts, parameters: readonly (NumericFacts | OptionFacts | undefined)[]): Validation {
  const all = [segments.segmentSizes, segments.numSegments, segments.segmentStride, segments.totalNumItems, ...parameters];
  const parameterNames = ['segmentSizes', 'numSegments', 'segmentStride', 'totalNumItems', ...parameters.filter((f) => f !== undefined).map((f) => f.name)];
  const checks = deviceChecks(all, parameterNames);
  const sizesOnDevice = segments.segmentSizes.deviceValues !== undefined;
  const validates = environment.requirements.guaranteeChecks === 'validate' && (checks.length > 0 || sizesOnDevice || segments.numSegments.deviceOnly);
  return { validates, checks, parameterNames };
}

/** Segments one workgroup of a spread 'validate' checks: one per invocation of a 256-wide workgroup. */
export const validateSegmentsPerWorkgroup = 256;
/** The most workgroups a spread 'validate' has: the last one is found by a 16-bit count. */
const validateMaxWorkgroups = 65535;

/** How 'validate' runs: spread over workgroups or ordered in one, and its grid. */
export interface ValidateForm {
  readonly spread: boolean;
  readonly grid: number;
}

/**
 * The form of 'validate'. Where each segment's start follows from its index (one size for every
 * segment, or strided) and no sum of per-segment sizes is checked, the segments need no scan, and
 * 'validate' spreads them over ceil(maxSegments / 256) workgroups whose last one to finish reports
 * (a single workgroup took 4096 per-token ks in ~8 us of the H200's time, one chunk after another).
 * Packed per-segment sizes (starts from a scan) and a `totalNumItems` check over per-segment sizes
 * keep one workgroup walking the segments in order. The planner sizes the launch by it; backends
 * pick the kernel's form by it.
 */
export function validateForm(perSegmentSizes: boolean, strided: boolean, totalChecked: boolean, maxSegments: number): ValidateForm {
  const grid = Math.max(1, Math.ceil(maxSegments / validateSegmentsPerWorkgroup));
  const spread = !(perSegmentSizes && (!strided || totalChecked)) && grid <= validateMaxWorkgroups;
  return { spread, grid: spread ? grid : 1 };
}

/**
 * The launches every segmented algorithm starts with: 'validate' when device-only values are
 * checked, and 'segment-offsets' (with its temporary-storage slot) when packed segments have
 * per-segment sizes, so that every later kernel finds segment starts in slot `offsets` — unless the
 * plan's kernels never ask where a segment starts (`starts: false`: a batched copy's buffers carry
 * their own offsets, and only its 'chunked' walk needs their places in the concatenation). With
 * `sizeOrder` (the problem's {@link SegmentedProblem.sizeOrder}) the slot also holds, after the
 * `maxSegments + 1` starts, the segments' indices by size class, largest first.
 */
export function prologueLaunches(
  algorithm: string,
  segments: SegmentFacts,
  maxSegments: number,
  validation: Validation,
  layout: TempStorageLayoutBuilder,
  { starts = true, sizeOrder = false }: { readonly starts?: boolean; readonly sizeOrder?: boolean } = {},
): Launch<PrologueKernel>[] {
  const launches: Launch<PrologueKernel>[] = [];
  if (validation.validates) {
    const { grid } = validateForm(segments.segmentSizes.kind === 'perSegment', segments.segmentStride !== undefined, segments.totalNumItems !== undefined, maxSegments);
    const purpose =
      grid === 1
        ? 'check device-only values against their bounds before anything is written'
        : `check device-only values against their bounds before anything is written, ${validateSegmentsPerWorkgroup} segments per workgroup`;
    launches.push({ kernel: 'validate', variant: undefined, name: `${algorithm}/validate`, grid, pass: 0, purpose });
  }
  if (starts && segments.segmentStride === undefined && segments.segmentSizes.kind === 'perSegment') {
    // With the size order (SegmentedProblem.sizeOrder), the segments' indices by size follow the starts.
    layout.add('offsets', (maxSegments + 1 + (sizeOrder ? maxSegments : 0)) * 4);
    const purpose = `exclusive scan of the segment sizes into segment starts${sizeOrder ? ', and the segments in order of size, largest first' : ''}`;
    launches.push({ kernel: 'segment-offsets', variant: undefined, name: `${algorithm}/segment-offsets`, grid: 1, pass: 0, purpose });
  }
  return launches;
}

/** A numeric parameter as a kernel reads it for the whole call. */
export function scalarSource(facts: NumericFacts): ScalarSource {
  if (facts.kind === 'constant') return { kind: 'constant', value: facts.exact! };
  if (facts.deviceValues !== undefined) return { kind: 'device', array: facts.deviceValues };
  return { kind: 'uniform', value: facts.exact! };
}

/** Host per-segment values as a u32 array for upload (at least one element: a binding is never empty). */
function hostWords(values: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(Math.max(1, values.length));
  for (let i = 0; i < values.length; i++) out[i] = values[i] as number;
  return out;
}

/** Host per-segment values for upload in their own dtype (f32 parameters keep their fractions). */
function hostValues(values: ArrayLike<number>, dtype: 'u32' | 'f32'): Uint32Array | Float32Array {
  if (dtype === 'u32') return hostWords(values);
  const out = new Float32Array(Math.max(1, values.length));
  for (let i = 0; i < values.length; i++) out[i] = values[i] as number;
  return out;
}

/**
 * A parameter as a kernel reads it per segment. A host per-segment array goes to the device through
 * `upload` (the plan uploads each once and keeps it; `data` makes the values, called for that one
 * upload only). Option parameters give option indices.
 */
export function segmentSource(facts: NumericFacts | OptionFacts, upload: (facts: NumericFacts | OptionFacts, data: () => Uint32Array | Float32Array) => DeviceArray, hostDtype: 'u32' | 'f32' = 'u32'): SegmentSource {
  if ('options' in facts) {
    if (facts.exact !== undefined && facts.kind !== 'perSegment') {
      return { kind: facts.kind === 'constant' ? 'constant' : 'uniform', value: facts.options.indexOf(facts.exact) };
    }
    if (facts.deviceValues !== undefined) return facts.kind === 'perSegment' ? { kind: 'perSegment', array: facts.deviceValues } : { kind: 'device', array: facts.deviceValues };
    const values = facts.hostValues!;
    return {
      kind: 'perSegment',
      array: upload(facts, () => {
        const indices = new Uint32Array(Math.max(1, values.length));
        for (let i = 0; i < values.length; i++) indices[i] = facts.options.indexOf(values[i]!);
        return indices;
      }),
    };
  }
  if (facts.kind !== 'perSegment') return scalarSource(facts);
  if (facts.deviceValues !== undefined) return { kind: 'perSegment', array: facts.deviceValues };
  return { kind: 'perSegment', array: upload(facts, () => hostValues(facts.hostValues!, hostDtype)) };
}

/** What an algorithm gives {@link makePlan}. */
export interface PlanParts<Variant extends string, Facts, Problem extends SegmentedProblem, Policy> {
  /** The algorithm's name as executors are registered and kernels are named (`topk`, `reduce`). */
  readonly algorithm: string;
  readonly environment: Env;
  /** Where the call runs (`backendForCall`). */
  readonly backend: Backend;
  readonly facts: Facts;
  /** The segment parameters' facts, and the most segments one run handles (`maxSegmentsOf`). */
  readonly segments: SegmentFacts & { readonly maxSegments: number };
  /** The segmented input, for messages. */
  readonly input: SegmentedInput;
  /** The algorithm's own parameters (after the segment parameters), for explain() and the checks. */
  readonly parameters: readonly (NumericFacts | OptionFacts | undefined)[];
  readonly validation: Validation;
  readonly selection: VariantSelection<Variant, Policy & object>;
  readonly variants: readonly Variant[];
  readonly launches: readonly Launch[];
  /** The algorithm's kernel table (slots per kernel, for the limits of a binding). */
  readonly kernels: KernelTable<string, never, never>;
  readonly layout: TempStorageLayout;
  /** The first line of explain(). */
  readonly summary: string;
  /** What the requirements change in this plan, for explain() (none is ignored silently). */
  readonly requirementNotes?: readonly string[];
  /** The call's arrays by binding name; the first is the segmented input. */
  readonly arrays: Readonly<Record<string, DeviceArray | undefined>>;
  /** Checks the arrays again (they may have been destroyed since planning). */
  checkArrays(): void;
  /** The problem of one run, from the sources of the segment parameters and the algorithm's own. */
  problem(sources: { readonly segmentSizes: SegmentSource; readonly numSegments: ScalarSource; readonly segmentStride: ScalarSource | undefined; readonly parameters: Readonly<Record<string, SegmentSource>> }): Problem;
  /** dtype a host per-segment array of a parameter is uploaded as (default u32). */
  readonly hostDtypes?: Readonly<Record<string, 'u32' | 'f32'>>;
  /** Lines explain() adds after the summary (the algorithm's output layout, say). */
  readonly details?: readonly string[];
  /**
   * The error a run's failed status words describe, where the algorithm writes status codes of its
   * own or names its parameters its own way (default: `violationOf` of device-checks.ts).
   */
  violationOf?(words: Uint32Array): Error | undefined;
}

/**
 * Builds the plan object of a segmented call; `extra` adds the algorithm's own read-only
 * properties (top-k's `kMax`, say).
 */
export function makePlan<Variant extends string, Facts, Problem extends SegmentedProblem, Policy, Extra extends object = {}>(
  parts: PlanParts<Variant, Facts, Problem, Policy>,
  extra?: Extra,
): Plan<Variant, Facts> & Readonly<Extra> {
  const { environment, backend, selection, layout, launches, validation, segments } = parts;
  checkLimits(backend.capabilities, {
    arrays: parts.arrays,
    launches,
    slotsOf: (kernel) => slotsOfKernel(parts.kernels, kernel),
    layout,
    parameters: [segments.segmentSizes, segments.numSegments, segments.segmentStride, ...parts.parameters],
    maxSegments: segments.maxSegments,
  });
  let status: DeviceArray<'u32'> | undefined;
  let destroyed = false;
  /** Executors' per-plan cache key (see SegmentedRun.cache). */
  const runCache = {};
  const perSegmentFacts = [segments.segmentSizes, ...parts.parameters];
  /** The host per-segment arrays the parameters were resolved from, as copied when planned. */
  const hostCopies = perSegmentFacts.map(hostArrayCopyOf).filter((c) => c !== undefined);
  /** Device copies of those arrays, uploaded on the first run and kept: the copies never change. */
  let uploaded = new Map<NumericFacts | OptionFacts, DeviceArray>();
  const reports = validation.validates ? new StatusReports(backend, hooksOf(backend), parts.violationOf ?? ((words) => violationOf(words, validation.parameterNames, parts.input, validation.checks))) : undefined;

  const explanation: Explanation = {
    summary: parts.summary,
    parameters: [segments.segmentSizes, segments.numSegments, segments.segmentStride, segments.totalNumItems, ...parts.parameters],
    requirements: environment.requirements,
    requirementNotes: parts.requirementNotes ?? [],
    selection,
    variants: parts.variants,
    layout,
    launches,
    validates: validation.validates,
    details: [...(parts.details ?? []), ...(hostCopies.length > 0 ? [`Host per-segment arrays (${hostCopies.map((c) => c.field).join(', ')}): copied when planned, uploaded once on the first run.`] : [])],
  };

  const checkTemp = (tempStorage: DeviceArray<'u8'> | undefined) => {
    if (layout.totalBytes > 0) {
      if (tempStorage === undefined) {
        throw new SegkitUsageError(`tempStorage: this plan needs ${layout.totalBytes} bytes of temporary storage (plan.tempStorageBytes); pass a 'u8' DeviceArray of at least that many`);
      }
      checkDeviceArray(tempStorage, backend, 'tempStorage', ['u8']);
      if (tempStorage.length < layout.totalBytes) throw new SegkitUsageError(`tempStorage: has ${tempStorage.length} bytes; this plan needs ${layout.totalBytes}`);
    } else if (tempStorage !== undefined) {
      checkDeviceArray(tempStorage, backend, 'tempStorage', ['u8']);
    }
  };

  // The host values are converted only for the first upload: a run after it reuses the device copy.
  const upload = (facts: NumericFacts | OptionFacts, data: () => Uint32Array | Float32Array): DeviceArray => {
    let array = uploaded.get(facts);
    if (array === undefined) uploaded.set(facts, (array = backend.upload(data())));
    return array;
  };

  /** Runs `runLaunches` (all of the plan's, or a prefix for the twin test) with the plan's checks. */
  const execute = async (tempStorage: DeviceArray<'u8'> | undefined, runLaunches: readonly Launch[]): Promise<void> => {
    if (destroyed) throw new SegkitUsageError('plan: this plan was destroyed (plan.destroy()) and cannot run; make a new one');
    parts.checkArrays();
    checkTemp(tempStorage);
    const executor = executorFor(parts.algorithm, backend);
    const sources: Record<string, SegmentSource> = {};
    for (const f of parts.parameters) {
      if (f !== undefined) sources[f.name] = segmentSource(f, upload, parts.hostDtypes?.[f.name]);
    }
    const problem = parts.problem({
      segmentSizes: segmentSource(segments.segmentSizes, upload),
      numSegments: scalarSource(segments.numSegments),
      segmentStride: segments.segmentStride === undefined ? undefined : scalarSource(segments.segmentStride),
      parameters: sources,
    });
    if (validation.validates && status === undefined) status = backend.alloc('u32', statusWords);
    const report: ReportSlot | undefined = reports?.take();
    try {
      const segmentedRun: SegmentedRun<Problem, Policy> = {
        backend,
        algorithm: parts.algorithm,
        problem,
        policy: selection.policy,
        launches: runLaunches,
        layout,
        temp: layout.totalBytes > 0 ? tempStorage : undefined,
        status: validation.validates ? status : undefined,
        statusReport: report === undefined ? undefined : { array: report.array, word: report.word },
        checks: validation.checks,
        parameterNames: validation.parameterNames,
        totalNumItems: segments.totalNumItems?.staticBounds,
        arrays: parts.arrays,
        ...(runLaunches === launches ? { cache: runCache } : {}),
      };
      executor.execute(segmentedRun);
    } catch (error) {
      report?.undo();
      throw error;
    }
  };

  const plan = Object.freeze({
    ...(extra ?? {}),
    backend,
    variant: selection.variant,
    reachableVariants: Object.freeze([...selection.reachable]),
    tempStorageBytes: layout.totalBytes,
    facts: parts.facts,
    launches: Object.freeze([...launches]),
    get destroyed() {
      return destroyed;
    },
    explain: () => renderExplanation(explanation),
    run: (tempStorage?: DeviceArray<'u8'>) => execute(tempStorage, launches),
    checked: async (): Promise<void> => {
      await reports?.checkNow();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      // Buffers are released once the work submitted so far is done (the backends' destroy()).
      status?.destroy();
      status = undefined;
      for (const array of uploaded.values()) array.destroy();
      uploaded = new Map();
      reports?.destroy();
    },
  }) as Plan<Variant, Facts> & Readonly<Extra>;
  internals.set(plan, { layout, hostCopies, runPrefix: (tempStorage, count) => execute(tempStorage, launches.slice(0, count)) });
  return plan;
}

/**
 * True when the host per-segment arrays (and host runtime bounds) in `args`, by field, still hold
 * what `plan` copied when it was made: the environment API reuses a plan only then. Comparing is
 * cheap next to the checks and the upload it saves.
 */
export function hostArraysUnchanged(plan: Plan, args: object): boolean {
  const copies = internals.get(plan)?.hostCopies;
  if (copies === undefined) return false;
  for (const copy of copies) {
    const param = (args as Record<string, { values?: unknown; runtimeBounds?: unknown } | undefined>)[copy.field];
    const now = param?.values as ArrayLike<unknown> | null | undefined;
    if (typeof now !== 'object' || now === null || now.length !== copy.values.length) return false;
    if (!(copy.numbers === undefined ? sameElements(now, copy.values) : sameElements(now, copy.numbers))) return false;
    const bounds = param!.runtimeBounds as { min?: unknown; max?: unknown } | undefined;
    if (copy.runtimeBounds === undefined) {
      if (bounds !== undefined && !isDeviceArray(bounds)) return false;
    } else if (bounds === undefined || bounds.min !== copy.runtimeBounds.min || bounds.max !== copy.runtimeBounds.max) return false;
  }
  return true;
}

/** Element by element with `===` (NaN is never the same, so a NaN is planned and rejected again). */
function sameElements(now: ArrayLike<unknown>, copy: ArrayLike<unknown>): boolean {
  const n = copy.length;
  for (let i = 0; i < n; i++) if (now[i] !== copy[i]) return false;
  return true;
}

/** What tests may see of a plan beyond its public surface. */
export interface PlanInternals {
  /** The temporary-storage layout (slot names, offsets, sizes). */
  readonly layout: TempStorageLayout;
  /** The host per-segment arrays the plan copied. */
  readonly hostCopies: readonly HostArrayCopy[];
  /** Runs only the first `count` launches (under 'validate' the status is still reported). */
  runPrefix(tempStorage: DeviceArray<'u8'> | undefined, count: number): Promise<void>;
}

const internals = new WeakMap<Plan, PlanInternals>();

/**
 * A plan's layout and a way to run a prefix of its launches: the twin test compares the backends'
 * temporary storage after each launch.
 * @internal
 */
export function planInternals(plan: Plan): PlanInternals {
  const found = internals.get(plan);
  if (found === undefined) throw new Error('internal: not a plan made by makePlan');
  return found;
}
