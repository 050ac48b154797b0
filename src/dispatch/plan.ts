import { type Backend, type DeviceArray, checkDeviceArray } from '../backends/backend.js';
import type { Env } from '../env/env.js';
import { SegkitUsageError } from '../errors.js';
import type { NumericFacts, OptionFacts } from '../params/resolve.js';
import { deviceChecks, throwOnViolation } from './device-checks.js';
import { type Explanation, renderExplanation } from './explain.js';
import type { SegmentFacts, SegmentedInput } from './geometry.js';
import { type DeviceCheck, type Launch, type ScalarSource, type SegmentSource, type SegmentedProblem, type SegmentedRun, statusWords } from './problem.js';
import { executorFor } from './registry.js';
import type { TempStorageLayout, TempStorageLayoutBuilder } from './temp-storage.js';
import type { VariantSelection } from './variants.js';

/*
 * The plan every algorithm returns: built on the host from the resolved facts (no device work),
 * run with caller-owned temporary storage. The algorithm supplies what is its own (facts, the
 * selection, its launches, how to build its problem from the parameter sources); this module adds
 * the prologue launches, the device checks, the uploads of host per-segment arrays, the run through
 * the backend's registered executor, the status check, explain() and destroy().
 */

/** A planned call: host facts, the chosen variant, its launches and temporary storage. */
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
  /**
   * Runs the plan. `tempStorage` is a `'u8'` DeviceArray of at least `tempStorageBytes`, required
   * iff `tempStorageBytes > 0`. Resolves when the work is submitted and, under 'validate' with
   * device-only values, checked.
   */
  run(tempStorage?: DeviceArray<'u8'>): Promise<void>;
  /** Frees the device memory the plan owns (its status words); a destroyed plan cannot run. */
  destroy(): void;
}

/** The kernels every segmented algorithm may launch before its own. */
export type PrologueKernel = 'validate' | 'segment-offsets';

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

/**
 * The launches every segmented algorithm starts with: 'validate' when device-only values are
 * checked, and 'segment-offsets' (with its temporary-storage slot) when packed segments have
 * per-segment sizes, so that every later kernel finds segment starts in slot `offsets`.
 */
export function prologueLaunches(algorithm: string, segments: SegmentFacts, maxSegments: number, validation: Validation, layout: TempStorageLayoutBuilder): Launch<PrologueKernel>[] {
  const launches: Launch<PrologueKernel>[] = [];
  if (validation.validates) {
    launches.push({ kernel: 'validate', variant: undefined, name: `${algorithm}/validate`, grid: 1, pass: 0, purpose: 'check device-only values against their bounds before anything is written' });
  }
  if (segments.segmentStride === undefined && segments.segmentSizes.kind === 'perSegment') {
    layout.add('offsets', (maxSegments + 1) * 4);
    launches.push({ kernel: 'segment-offsets', variant: undefined, name: `${algorithm}/segment-offsets`, grid: 1, pass: 0, purpose: 'exclusive scan of the segment sizes into segment starts' });
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
 * A parameter as a kernel reads it per segment, uploading a host per-segment array for the call
 * (pushed to `uploads`, freed after the run). Option parameters give option indices.
 */
export function segmentSource(facts: NumericFacts | OptionFacts, backend: Backend, uploads: DeviceArray[], hostDtype: 'u32' | 'f32' = 'u32'): SegmentSource {
  if ('options' in facts) {
    if (facts.exact !== undefined && facts.kind !== 'perSegment') {
      return { kind: facts.kind === 'constant' ? 'constant' : 'uniform', value: facts.options.indexOf(facts.exact) };
    }
    if (facts.deviceValues !== undefined) return facts.kind === 'perSegment' ? { kind: 'perSegment', array: facts.deviceValues } : { kind: 'device', array: facts.deviceValues };
    const values = facts.hostValues!;
    const indices = new Uint32Array(Math.max(1, values.length));
    for (let i = 0; i < values.length; i++) indices[i] = facts.options.indexOf(values[i]!);
    const array = backend.upload(indices);
    uploads.push(array);
    return { kind: 'perSegment', array };
  }
  if (facts.kind !== 'perSegment') return scalarSource(facts);
  if (facts.deviceValues !== undefined) return { kind: 'perSegment', array: facts.deviceValues };
  const array = backend.upload(hostValues(facts.hostValues!, hostDtype));
  uploads.push(array);
  return { kind: 'perSegment', array };
}

/** What an algorithm gives {@link makePlan}. */
export interface PlanParts<Variant extends string, Facts, Problem extends SegmentedProblem, Policy> {
  /** The algorithm's name as executors are registered and kernels are named (`topk`, `reduce`). */
  readonly algorithm: string;
  readonly environment: Env;
  /** Where the call runs (`backendForCall`). */
  readonly backend: Backend;
  readonly facts: Facts;
  readonly segments: SegmentFacts;
  /** The segmented input, for messages. */
  readonly input: SegmentedInput;
  /** The algorithm's own parameters (after the segment parameters), for explain() and the checks. */
  readonly parameters: readonly (NumericFacts | OptionFacts | undefined)[];
  readonly validation: Validation;
  readonly selection: VariantSelection<Variant, Policy & object>;
  readonly variants: readonly Variant[];
  readonly launches: readonly Launch[];
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
}

/** Builds the plan object of a segmented call. */
export function makePlan<Variant extends string, Facts, Problem extends SegmentedProblem, Policy>(
  parts: PlanParts<Variant, Facts, Problem, Policy>,
): Plan<Variant, Facts> {
  const { environment, backend, selection, layout, launches, validation, segments } = parts;
  let status: DeviceArray<'u32'> | undefined;
  let destroyed = false;
  /** Executors' per-plan cache key (see SegmentedRun.cache). */
  const runCache = {};

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

  /** Runs `runLaunches` (all of the plan's, or a prefix for the twin test) with the plan's checks. */
  const execute = async (tempStorage: DeviceArray<'u8'> | undefined, runLaunches: readonly Launch[]): Promise<void> => {
    if (destroyed) throw new SegkitUsageError('plan: this plan was destroyed (plan.destroy()); make a new one');
    parts.checkArrays();
    checkTemp(tempStorage);
    const executor = executorFor(parts.algorithm, backend);
    // Host per-segment values go to the device for the duration of the call.
    const uploads: DeviceArray[] = [];
    try {
      const sources: Record<string, SegmentSource> = {};
      for (const f of parts.parameters) {
        if (f !== undefined) sources[f.name] = segmentSource(f, backend, uploads, parts.hostDtypes?.[f.name]);
      }
      const problem = parts.problem({
        segmentSizes: segmentSource(segments.segmentSizes, backend, uploads),
        numSegments: scalarSource(segments.numSegments),
        segmentStride: segments.segmentStride === undefined ? undefined : scalarSource(segments.segmentStride),
        parameters: sources,
      });
      if (validation.validates && status === undefined) status = backend.alloc('u32', statusWords);
      const segmentedRun: SegmentedRun<Problem, Policy> = {
        backend,
        algorithm: parts.algorithm,
        problem,
        policy: selection.policy,
        launches: runLaunches,
        layout,
        temp: layout.totalBytes > 0 ? tempStorage : undefined,
        status: validation.validates ? status : undefined,
        checks: validation.checks,
        parameterNames: validation.parameterNames,
        totalNumItems: segments.totalNumItems?.staticBounds,
        arrays: parts.arrays,
        ...(runLaunches === launches ? { cache: runCache } : {}),
      };
      executor.execute(segmentedRun);
      if (validation.validates) await throwOnViolation(backend, status!, validation.parameterNames, parts.input);
    } finally {
      for (const array of uploads) array.destroy();
    }
  };

  const plan: Plan<Variant, Facts> = Object.freeze({
    backend,
    variant: selection.variant,
    reachableVariants: Object.freeze([...selection.reachable]),
    tempStorageBytes: layout.totalBytes,
    facts: parts.facts,
    launches: Object.freeze([...launches]),
    explain: () => renderExplanation(explanation),
    run: (tempStorage?: DeviceArray<'u8'>) => execute(tempStorage, launches),
    destroy() {
      destroyed = true;
      status?.destroy();
      status = undefined;
    },
  });
  internals.set(plan, { layout, runPrefix: (tempStorage, count) => execute(tempStorage, launches.slice(0, count)) });
  return plan;
}

/** What tests may see of a plan beyond its public surface. */
export interface PlanInternals {
  /** The temporary-storage layout (slot names, offsets, sizes). */
  readonly layout: TempStorageLayout;
  /** Runs only the first `count` launches (under 'validate' the status check still runs). */
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
