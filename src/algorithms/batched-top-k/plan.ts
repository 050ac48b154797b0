import {
  type Backend,
  type BackendHooks,
  type DeferredCheck,
  type DeviceArray,
  type DeviceRead,
  checkDeviceArray,
  describe,
  hooksOf,
  isDeviceArray,
} from '../../backends/backend.js';
import { TempStorageLayoutBuilder, type TempStorageLayout, describeLayout } from '../../dispatch/temp-storage.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { GuaranteeViolationError, SegkitRangeError, SegkitUsageError } from '../../errors.js';
import { type Bounds, p } from '../../params/param.js';
import { type NumericFacts, type OptionFacts, effectiveBounds, resolveNumeric, resolveOption } from '../../params/resolve.js';
import { outsideStaticBounds } from '../../types/messages.js';
import type { TopKArgs } from './args.js';
import { type SelectDirection, selectDirections } from './keys.js';
import { type TopKSelection, type TopKVariant, selectTopKVariant, topKVariants } from './policy.js';
import {
  type DeviceCheck,
  type ScalarSource,
  type SegmentSource,
  type TopKExecutor,
  type TopKLaunch,
  type TopKProblem,
  type TopKRun,
  StatusCode,
  deviceCheckParameters,
} from './problem.js';

const u32Max = 4294967295;

/** Executors by backend name; each backend module registers its own. */
const executors = new Map<string, TopKExecutor>();

/** Makes `executor` run top-k plans on backends named `backendName`. */
export function registerTopKExecutor(backendName: Backend['name'], executor: TopKExecutor): void {
  executors.set(backendName, executor);
}

/** The facts of every top-k parameter, after every host-side check. */
export interface TopKFacts {
  readonly segmentSizes: NumericFacts;
  readonly k: NumericFacts;
  readonly selectDirection: OptionFacts<SelectDirection>;
  readonly numSegments: NumericFacts;
  readonly segmentStride: NumericFacts | undefined;
  readonly totalNumItems: NumericFacts | undefined;
  /** Output slots per segment. */
  readonly kMax: number;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/**
 * A planned top-k call: host facts, the chosen variant, its launches and temporary storage.
 *
 * Host per-segment arrays (`p.perSegment(values)` and `p.perSegmentOption(values)` with host
 * arrays) are copied when the plan is made, checked then, and uploaded once on the first run: later
 * changes to your array do not reach the plan (plan again to use them). A plan keeps a little device
 * memory (those copies and, under 'validate' with device-only values, its status words): free it
 * with `destroy()`.
 *
 * @example
 * ```ts
 * const plan = DeviceBatchedTopK.plan(args, env({ backend }));
 * const keysOut = backend.alloc('f32', plan.outputLength);   // segment i's results at [i * plan.kMax, ...)
 * const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
 * await plan.run(temp);
 * await plan.checked();   // only needed to see a device-only guarantee violation before a download
 * plan.destroy();
 * ```
 */
export interface TopKPlan {
  /** The variant the dispatcher chose. */
  readonly variant: TopKVariant;
  /** Variants not pruned by the known bounds, for this backend. */
  readonly reachableVariants: readonly TopKVariant[];
  /** Bytes of `'u8'` temporary storage `run` needs; 0 where none is needed. */
  readonly tempStorageBytes: number;
  /**
   * Output slots per segment: segment `i`'s results occupy `[i * kMax, i * kMax + min(k_i, size_i))`
   * of `keysOut`/`valuesOut`, the rest of its slots are filled. It is `k`'s upper bound: the
   * constant, the host uniform value, or the declared (runtime, else static) max of `k`.
   */
  readonly kMax: number;
  /**
   * Elements of `keysOut` (and `valuesOut`) the plan may write: `kMax` times the segments its grid
   * covers (the host value of `numSegments`, else as many as the outputs hold up to its static max).
   */
  readonly outputLength: number;
  /** The facts the choice was made from. */
  readonly facts: TopKFacts;
  /** The kernel launches `run` makes, in order. */
  readonly launches: readonly TopKLaunch[];
  /** True once `destroy()` was called. */
  readonly destroyed: boolean;
  /** Human-readable: facts per parameter, the chosen variant and why, the pruned ones and why, the temporary-storage layout and the launches. */
  explain(): string;
  /**
   * Runs the plan. `tempStorage` is a `'u8'` DeviceArray of at least `tempStorageBytes`, required
   * iff `tempStorageBytes > 0`. Resolves when the work is submitted; host-side misuse (a destroyed
   * array, missing temporary storage, a destroyed plan) rejects it.
   *
   * Under `guaranteeChecks: 'validate'` with device-only values, the device checks them before
   * anything is written and a violating run writes nothing. The result is not read back per run (that
   * would stall back-to-back calls): a violation rejects the next `backend.synchronize()` or
   * `backend.download()` on this backend, or `checked()`, with `GuaranteeViolationError` (parameter,
   * segment, value, bounds) — the earliest violating run's, each reported once.
   */
  run(tempStorage?: DeviceArray<'u8'>): Promise<void>;
  /**
   * Resolves once every run of this plan submitted so far was checked on the device; rejects with
   * the earliest run's `GuaranteeViolationError` not yet reported. Waits for those runs to finish.
   * Resolves at once where the plan checks nothing on the device.
   */
  checked(): Promise<void>;
  /**
   * Frees the plan's device memory (its copies of host per-segment arrays, its status words) once the
   * work submitted so far is done; a later `run` throws `SegkitUsageError`. Violations of runs
   * already submitted are still reported. Idempotent.
   */
  destroy(): void;
}

function numericDomain(min: number, max: number, integer = true) {
  return { domain: { min, max }, integer };
}

/** An environment guarantee as bounds within a domain, or nothing when it is absent. */
function guaranteeOf(name: string, min: number | undefined, max: number | undefined, domain: Bounds) {
  return min === undefined && max === undefined ? [] : [{ name, bounds: { min: min ?? domain.min, max: max ?? domain.max } }];
}

function resolveFacts(args: TopKArgs, environment: Env): TopKFacts {
  const { backend, guarantees } = environment;
  const sizeDomain = { min: 0, max: u32Max };
  const segmentSizes = resolveNumeric('segmentSizes', args.segmentSizes, {
    ...numericDomain(0, u32Max),
    guarantees: [
      ...guaranteeOf('minSegmentSize', guarantees.minSegmentSize, undefined, sizeDomain),
      ...guaranteeOf('maxSegmentSize', undefined, guarantees.maxSegmentSize, sizeDomain),
    ],
  }, backend);
  const k = resolveNumeric('k', args.k, {
    ...numericDomain(1, u32Max),
    guarantees: guaranteeOf('maxK', undefined, guarantees.maxK, { min: 1, max: u32Max }),
  }, backend);
  const numSegmentsKind = (args.numSegments as { kind?: string } | undefined)?.kind;
  if (numSegmentsKind !== 'constant' && numSegmentsKind !== 'uniform') {
    throw new SegkitUsageError(`numSegments: must be p.constant or p.uniform; got ${numSegmentsKind === undefined ? describe(args.numSegments) : `a ${numSegmentsKind} parameter`}`);
  }
  const numSegments = resolveNumeric('numSegments', args.numSegments, {
    ...numericDomain(0, u32Max),
    guarantees: guaranteeOf('maxNumSegments', undefined, guarantees.maxNumSegments, sizeDomain),
  }, backend);
  if (args.segmentStride !== undefined && args.segmentStride.kind !== 'constant' && args.segmentStride.kind !== 'uniform') {
    throw new SegkitUsageError(`segmentStride: must be p.constant or p.uniform; got a ${(args.segmentStride as { kind: string }).kind} parameter`);
  }
  const segmentStride = args.segmentStride === undefined ? undefined : resolveNumeric('segmentStride', args.segmentStride, numericDomain(0, u32Max), backend);
  if (args.totalNumItems !== undefined && args.totalNumItems.kind !== 'guarantee') {
    throw new SegkitUsageError('totalNumItems: must be p.guarantee({ min?, max? })');
  }
  const totalNumItems =
    args.totalNumItems === undefined && guarantees.maxTotalNumItems === undefined
      ? undefined
      : resolveNumeric('totalNumItems', args.totalNumItems ?? p.guarantee({}), {
          ...numericDomain(0, Number.MAX_SAFE_INTEGER),
          guarantees: guaranteeOf('maxTotalNumItems', undefined, guarantees.maxTotalNumItems, { min: 0, max: Number.MAX_SAFE_INTEGER }),
        }, backend);
  const selectDirection = resolveOption('selectDirection', args.selectDirection as never, selectDirections, backend);

  // kMax: the constant, the host uniform value, or the declared (runtime, else static) max.
  const declaredK = args.k.kind === 'perSegment' && args.k.runtimeBounds !== undefined && !isDeviceArray(args.k.runtimeBounds)
    ? args.k.runtimeBounds.max
    : k.staticBounds.max;
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

  // The grid covers the host value of numSegments, or as many segments as the outputs can hold.
  const outputCapacity = Math.floor(args.keysOut.length / kMax);
  const maxSegments = numSegments.exact ?? Math.min(numSegments.staticBounds.max, outputCapacity);
  return { segmentSizes, k, selectDirection, numSegments, segmentStride, totalNumItems, kMax, maxSegments };
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
    if (args.valuesIn.length < args.keysIn.length) {
      throw new SegkitUsageError(`valuesIn: needs one value per key (${args.keysIn.length}); has ${args.valuesIn.length}`);
    }
    if (args.valuesOut === undefined) throw new SegkitUsageError('valuesOut: required when valuesIn is given');
  }
  if (args.valuesOut !== undefined) {
    checkDeviceArray(args.valuesOut, backend, 'valuesOut', args.valuesIn === undefined ? ['u32', 'i32', 'f32'] : [args.valuesIn.dtype]);
    if (args.valuesOut.length < needed) {
      throw new SegkitUsageError(`valuesOut: needs numSegments * kMax = ${facts.maxSegments} * ${facts.kMax} = ${needed} elements (plan.outputLength); has ${args.valuesOut.length}`);
    }
  }
  const arrays = [args.keysIn, args.keysOut, args.valuesIn, args.valuesOut].filter((a) => a !== undefined);
  for (let i = 0; i < arrays.length; i++) {
    for (let j = i + 1; j < arrays.length; j++) {
      if (arrays[i] === arrays[j]) throw new SegkitUsageError('keysIn, keysOut, valuesIn and valuesOut must be distinct arrays (top-k does not run in place)');
    }
  }
}

/** Host-side checks of the segment geometry, where the sizes are known on the host. */
function checkGeometry(facts: TopKFacts, keysLength: number): void {
  const { segmentSizes, segmentStride, numSegments, totalNumItems } = facts;
  const n = numSegments.exact;
  if (n === undefined) return;
  if (segmentSizes.deviceOnly && segmentSizes.hostValues === undefined) return;
  const sizeAt = (i: number) =>
    segmentSizes.hostValues !== undefined ? (segmentSizes.hostValues[i] as number) : (segmentSizes.exact as number);
  if (segmentSizes.hostValues === undefined && segmentSizes.exact === undefined) return;
  let total = 0;
  // A device-only stride leaves the extents to the device check.
  const strideKnown = segmentStride === undefined || segmentStride.exact !== undefined;
  const stride = segmentStride?.exact;
  for (let i = 0; i < n; i++) {
    const size = sizeAt(i);
    if (stride !== undefined && size > stride) {
      throw new SegkitRangeError('segmentSizes', `${size} is larger than segmentStride ${stride}`, { segment: i, value: size });
    }
    const start = stride !== undefined ? i * stride : total;
    if (strideKnown && start + size > keysLength) {
      throw new SegkitRangeError('segmentSizes', `segment ${i} ends at ${start + size}, past the ${keysLength} keys of keysIn`, { segment: i, value: size });
    }
    total += size;
  }
  if (totalNumItems !== undefined) {
    const bounds = totalNumItems.staticBounds;
    if (total < bounds.min || total > bounds.max) {
      throw new SegkitRangeError('totalNumItems', outsideStaticBounds(total, bounds.min, bounds.max), { value: total, bounds });
    }
  }
}

/** Per-segment values, on the host or the device, must cover every one of a host-known numSegments. */
function checkPerSegmentLengths(facts: TopKFacts): void {
  const n = facts.numSegments.exact;
  if (n === undefined) return;
  const check = (name: string, f: NumericFacts | OptionFacts, noun: string) => {
    if (f.kind !== 'perSegment') return;
    if (f.hostValues !== undefined && f.hostValues.length < n) {
      throw new SegkitUsageError(`${name}: ${f.hostValues.length} per-segment ${noun} for numSegments ${n}`);
    }
    if (f.deviceValues !== undefined && f.deviceValues.length < n) {
      throw new SegkitUsageError(`${name}: a device array of ${f.deviceValues.length} ${noun} for numSegments ${n}`);
    }
  };
  check('segmentSizes', facts.segmentSizes, 'values');
  check('k', facts.k, 'values');
  check('selectDirection', facts.selectDirection, 'options');
}

/** The segment-size bounds that hold on the host, for the selector. */
function segmentSizeBounds(facts: TopKFacts): Bounds {
  const bounds = effectiveBounds(facts.segmentSizes);
  const stride = facts.segmentStride === undefined ? undefined : effectiveBounds(facts.segmentStride);
  // A segment never holds more keys than its stride.
  return stride === undefined ? bounds : { min: bounds.min, max: Math.min(bounds.max, stride.max) };
}

/** The largest segment size the host can promise; no segment holds more keys than keysIn has. */
function maxSegmentSizeOf(facts: TopKFacts, keysLength: number): number {
  return Math.min(segmentSizeBounds(facts).max, keysLength);
}

interface LaunchPlan {
  launches: TopKLaunch[];
  layout: TempStorageLayout;
  validates: boolean;
  checks: DeviceCheck[];
}

function specialization(selection: TopKSelection, facts: TopKFacts, keyType: string): string {
  const parts: string[] = [keyType];
  // Only constants are baked into a kernel; a uniform value is a kernel parameter.
  if (selection.variant === 'reduce') parts.unshift(facts.k.kind === 'constant' ? `k=${facts.k.exact}` : `k<=${selection.policy.reduceMaxK}`);
  if (selection.variant === 'single-tile') parts.push(`tile=${selection.policy.tileItems}`);
  const dir = facts.selectDirection;
  parts.push(dir.kind === 'constant' ? dir.exact! : dir.kind === 'uniform' ? 'dir=uniform' : 'dir=per-segment');
  return parts.join(',');
}

function buildLaunches(
  selection: TopKSelection,
  facts: TopKFacts,
  maxSegmentSize: number,
  guaranteeChecks: 'validate' | 'trust',
  totalItemsBound: number,
  keyType: string,
): LaunchPlan {
  const { policy } = selection;
  const layout = new TempStorageLayoutBuilder();
  const launches: TopKLaunch[] = [];
  const spec = specialization(selection, facts, keyType);
  const n = facts.maxSegments;
  const checks = deviceChecks(facts);
  const sizesOnDevice = facts.segmentSizes.deviceValues !== undefined;
  const validates = guaranteeChecks === 'validate' && (checks.length > 0 || sizesOnDevice || facts.numSegments.deviceOnly);
  if (validates) launches.push({ kernel: 'validate', variant: undefined, name: 'topk/validate', grid: 1, pass: 0, purpose: 'check device-only values against their bounds before anything is written' });
  const packedPerSegment = facts.segmentStride === undefined && facts.segmentSizes.kind === 'perSegment';
  if (packedPerSegment) {
    layout.add('offsets', (n + 1) * 4);
    launches.push({ kernel: 'segment-offsets', variant: undefined, name: 'topk/segment-offsets', grid: 1, pass: 0, purpose: 'exclusive scan of the segment sizes into segment starts' });
  }
  const variantsToRun: TopKVariant[] =
    selection.variant === 'radix-select' && selection.reachable.includes('single-tile') ? ['single-tile', 'radix-select'] : [selection.variant];
  for (const variant of variantsToRun) {
    if (variant === 'single-tile') {
      launches.push({ kernel: 'single-tile', variant, name: `topk/single-tile[${spec}]`, grid: n, pass: 0, purpose: 'one workgroup per segment: load the tile, select in workgroup memory, sort, write' });
    } else if (variant === 'reduce') {
      const chunks = Math.max(1, Math.ceil(maxSegmentSize / policy.reduceChunkItems));
      launches.push({ kernel: 'reduce', variant, name: `topk/reduce[${spec}]`, grid: n * chunks, pass: 0, purpose: chunks === 1 ? 'one workgroup per segment: register top-k, merge, write' : `${chunks} workgroups per segment: register top-k of each chunk into partials` });
      if (chunks > 1) {
        layout.add('partials', n * chunks * facts.kMax * 8);
        launches.push({ kernel: 'reduce-merge', variant, name: `topk/reduce-merge[${spec}]`, grid: n, pass: 0, purpose: 'merge the chunks\' lists per segment and write' });
      }
    } else {
      const tiles = Math.max(1, Math.ceil(maxSegmentSize / policy.radixTileItems));
      layout.add('segmentState', n * 8 * 4).add('histogram', n * 256 * 4).add('selected', n * facts.kMax * 4);
      layout.add('candidates0', totalItemsBound * 4).add('candidates1', totalItemsBound * 4);
      launches.push({ kernel: 'radix-init', variant, name: `topk/radix-select/init[${spec}]`, grid: n, pass: 0, purpose: 'zero histograms and per-segment state' });
      const passes = 32 / policy.radixBits;
      for (let pass = 0; pass < passes; pass++) {
        launches.push({ kernel: 'radix-histogram', variant, name: `topk/radix-select/histogram[${spec}]`, grid: n * tiles, pass, purpose: `pass ${pass}: histogram of digit ${pass} over ${pass === 0 ? 'the keys' : 'the candidates'}` });
        launches.push({ kernel: 'radix-choose', variant, name: `topk/radix-select/choose[${spec}]`, grid: n, pass, purpose: `pass ${pass}: find the threshold bucket` });
        launches.push({ kernel: 'radix-filter', variant, name: `topk/radix-select/filter[${spec}]`, grid: n * tiles, pass, purpose: `pass ${pass}: keep items above the threshold, carry the threshold bucket as candidates` });
      }
      launches.push({ kernel: 'radix-finalize', variant, name: `topk/radix-select/finalize[${spec}]`, grid: n, pass: passes - 1, purpose: 'resolve ties by index, sort the selection, write' });
    }
  }
  return { launches, layout: layout.build(), validates, checks };
}

/** The device checks for every device-only value. */
function deviceChecks(facts: TopKFacts): DeviceCheck[] {
  const checks: DeviceCheck[] = [];
  const numeric = [facts.segmentSizes, facts.k, facts.numSegments, facts.segmentStride].filter((f) => f !== undefined);
  for (const f of numeric) {
    const parameter = f.name as DeviceCheck['parameter'];
    const bounds = effectiveBounds(f);
    if (f.deviceBounds !== undefined) checks.push({ parameter, kind: 'device-bounds', array: f.deviceBounds, bounds, deviceBounds: undefined });
    if (f.deviceValues !== undefined) {
      checks.push({ parameter, kind: f.kind === 'perSegment' ? 'per-segment' : 'scalar', array: f.deviceValues, bounds, deviceBounds: f.deviceBounds });
    }
  }
  const dir = facts.selectDirection;
  if (dir.deviceValues !== undefined) {
    checks.push({
      parameter: 'selectDirection',
      kind: dir.kind === 'perSegment' ? 'per-segment' : 'scalar',
      array: dir.deviceValues,
      bounds: { min: 0, max: dir.options.length - 1 },
      deviceBounds: undefined,
    });
  }
  return checks;
}

function scalarSource(facts: NumericFacts): ScalarSource {
  if (facts.kind === 'constant') return { kind: 'constant', value: facts.exact! };
  if (facts.deviceValues !== undefined) return { kind: 'device', array: facts.deviceValues };
  return { kind: 'uniform', value: facts.exact! };
}

function describeNumeric(f: NumericFacts): string {
  const b = (x: Bounds) => `[${x.min}, ${x.max}]`;
  const parts = [`${f.kind}`];
  if (f.exact !== undefined) parts.push(`value ${f.exact}`);
  parts.push(`static bounds ${b(f.staticBounds)}`);
  if (f.runtimeBounds !== undefined && f.exact === undefined) parts.push(`host runtime bounds ${b(f.runtimeBounds)}`);
  if (f.deviceBounds !== undefined) parts.push('device-only runtime bounds');
  if (f.deviceValues !== undefined) parts.push('values device-only');
  return `${f.name}: ${parts.join(', ')}`;
}

function describeOption(f: OptionFacts): string {
  const parts = [f.kind, `options [${f.options.join(', ')}]`];
  if (f.exact !== undefined) parts.push(`value ${f.exact}`);
  else if (!f.deviceOnly) parts.push(`occurring [${f.occurring.join(', ')}]`);
  if (f.deviceOnly) parts.push('values device-only');
  return `${f.name}: ${parts.join(', ')}`;
}

/** Host per-segment values as a u32 array for upload. */
function hostU32(values: ArrayLike<number>, count: number): Uint32Array {
  const out = new Uint32Array(Math.max(1, count));
  for (let i = 0; i < count; i++) out[i] = values[i] as number;
  return out;
}

/** A host array a per-segment parameter may hold (anything else is left for the resolver to reject). */
function isHostArray(values: unknown): values is ArrayLike<unknown> {
  return typeof values === 'object' && values !== null && !isDeviceArray(values) && typeof (values as { length?: unknown }).length === 'number';
}

/** A host runtime-bounds object (not a DeviceArray). */
function isHostBounds(bounds: unknown): bounds is Bounds {
  return typeof bounds === 'object' && bounds !== null && !isDeviceArray(bounds);
}

/**
 * The per-segment fields whose host arrays a plan copies: the plan checks and runs the copies, so an
 * array changed after planning never reaches a run unchecked.
 */
const hostArrayFields = ['segmentSizes', 'k', 'selectDirection'] as const;

/** `args` with every host per-segment array (and host runtime bounds) replaced by a frozen copy. */
function snapshotHostArrays(args: TopKArgs): TopKArgs {
  let copy: Record<string, unknown> | undefined;
  for (const field of hostArrayFields) {
    const param = (args as unknown as Record<string, unknown>)[field] as { kind?: unknown; values?: unknown; runtimeBounds?: unknown } | undefined;
    if (param === undefined || (param.kind !== 'perSegment' && param.kind !== 'perSegmentOption') || !isHostArray(param.values)) continue;
    const snapshot: Record<string, unknown> = { ...param, values: Object.freeze(Array.from(param.values)) };
    if (param.kind === 'perSegment' && isHostBounds(param.runtimeBounds)) {
      snapshot.runtimeBounds = Object.freeze({ min: param.runtimeBounds.min, max: param.runtimeBounds.max });
    }
    copy ??= { ...args };
    copy[field] = Object.freeze(snapshot);
  }
  return copy === undefined ? args : (copy as unknown as TopKArgs);
}

/** A host per-segment array (and host runtime bounds) a plan copied, from which field. */
interface HostArrayCopy {
  readonly field: (typeof hostArrayFields)[number];
  readonly values: readonly unknown[];
  readonly runtimeBounds: Bounds | undefined;
}

/** What each plan copied, for `hostArraysUnchanged`. */
const hostArrayCopies = new WeakMap<TopKPlan, readonly HostArrayCopy[]>();

/**
 * True when the host per-segment arrays (and host runtime bounds) in `args` still hold what `plan`
 * copied when it was made: the environment API reuses a plan only then. Comparing is cheap next to
 * the checks and the upload it saves.
 * @internal
 */
export function hostArraysUnchanged(plan: TopKPlan, args: object): boolean {
  const copies = hostArrayCopies.get(plan);
  if (copies === undefined) return false;
  for (const copy of copies) {
    const param = (args as Record<string, { values?: unknown; runtimeBounds?: unknown } | undefined>)[copy.field];
    const now = param?.values;
    if (!isHostArray(now) || now.length !== copy.values.length) return false;
    for (let i = 0; i < now.length; i++) if (now[i] !== copy.values[i]) return false;
    const bounds = param!.runtimeBounds;
    if (copy.runtimeBounds === undefined ? isHostBounds(bounds) : !isHostBounds(bounds) || bounds.min !== copy.runtimeBounds.min || bounds.max !== copy.runtimeBounds.max) return false;
  }
  return true;
}

/** The copies `snapshotHostArrays` made into `args`. */
function copiesIn(args: TopKArgs, userArgs: TopKArgs): HostArrayCopy[] {
  const copies: HostArrayCopy[] = [];
  for (const field of hostArrayFields) {
    const param = (args as unknown as Record<string, { values?: unknown; runtimeBounds?: unknown } | undefined>)[field];
    if (param === undefined || param === (userArgs as unknown as Record<string, unknown>)[field]) continue;
    copies.push({ field, values: param.values as readonly unknown[], runtimeBounds: isHostBounds(param.runtimeBounds) ? param.runtimeBounds : undefined });
  }
  return copies;
}

/** Orders runs across plans, so the earliest violation is the one reported. */
let runOrder = 0;

/** Slots of a status-report array; the first holds 8 runs, each refill doubles up to the last. */
const reportSlots = { first: 8, most: 1024 } as const;

/** A plan's device copies of its host per-segment arrays. */
interface HostCopies {
  segmentSizes?: DeviceArray;
  k?: DeviceArray;
  selectDirection?: DeviceArray;
}

interface ReportChunk {
  readonly array: DeviceArray<'u32'>;
  /** The run order of each used slot, in slot order. */
  readonly orders: number[];
}

/**
 * The status words of a plan's validating runs, kept on the device: each run's executor copies its 8
 * status words into the next slot of a report array (in queue order), and the slots are read in one
 * download per array when the backend settles its deferred checks (`synchronize`, `download`) or the
 * plan's `checked()` is awaited.
 */
class StatusReports implements DeferredCheck {
  private filling: ReportChunk | undefined;
  private readonly full: ReportChunk[] = [];
  private spare: DeviceArray<'u32'> | undefined;
  private slots: number = reportSlots.first;
  private planDestroyed = false;
  private collecting: Promise<unknown> | undefined;

  constructor(
    private readonly backend: Backend,
    private readonly hooks: BackendHooks,
  ) {}

  /** A slot for the next run's status words; `undo` gives it back when the run was not submitted. */
  take(): { readonly array: DeviceArray<'u32'>; readonly word: number; undo(): void } {
    if (this.filling !== undefined && this.filling.orders.length * 8 >= this.filling.array.length) {
      this.full.push(this.filling);
      this.filling = undefined;
      // Runs outpace the checks: the next array holds more.
      this.slots = Math.min(reportSlots.most, this.slots * 2);
    }
    if (this.filling === undefined) {
      const spare = this.spare;
      this.spare = undefined;
      this.filling = { array: spare !== undefined && spare.length >= this.slots * 8 ? spare : this.backend.alloc('u32', this.slots * 8), orders: [] };
      if (spare !== undefined && this.filling.array !== spare) spare.destroy();
    }
    const chunk = this.filling;
    const word = chunk.orders.length * 8;
    chunk.orders.push(runOrder++);
    this.hooks.defer(this);
    return {
      array: chunk.array,
      word,
      undo: () => {
        chunk.orders.pop();
      },
    };
  }

  collect(read: DeviceRead): Promise<readonly { order: number; error: Error }[]> {
    const chunks = [...this.full];
    this.full.length = 0;
    if (this.filling !== undefined && this.filling.orders.length > 0) {
      chunks.push(this.filling);
      this.filling = undefined;
    }
    // Every read is submitted now, before any later run can reuse a slot.
    const found = Promise.all(
      chunks.map(async (chunk) => {
        try {
          const words = await read(chunk.array);
          for (let slot = 0; slot < chunk.orders.length; slot++) {
            if (words[slot * 8] !== StatusCode.Ok) return [{ order: chunk.orders[slot]!, error: violationOf(words.subarray(slot * 8, slot * 8 + 8)) }];
          }
          return [];
        } finally {
          this.recycle(chunk.array);
        }
      }),
    ).then((lists) => lists.flat());
    this.collecting = found;
    return found;
  }

  /** Settles this plan's runs alone (`plan.checked()`). */
  async checkNow(): Promise<void> {
    const elsewhere = this.collecting;
    const mine = this.hooks.withdraw(this) ? this.collect(this.hooks.read) : Promise.resolve([]);
    // Runs another settle is reading were reported there; wait for it all the same.
    await elsewhere?.catch(() => undefined);
    const errors = await mine;
    if (errors.length > 0) throw errors.reduce((a, b) => (b.order < a.order ? b : a)).error;
  }

  private recycle(array: DeviceArray<'u32'>): void {
    if (this.planDestroyed || this.spare !== undefined || array.destroyed) array.destroy();
    else this.spare = array;
  }

  discard(): void {
    for (const chunk of [...this.full, ...(this.filling === undefined ? [] : [this.filling])]) chunk.array.destroy();
    this.full.length = 0;
    this.filling = undefined;
    this.spare?.destroy();
    this.spare = undefined;
  }

  /** The plan was destroyed: free what holds no unread status; the rest goes once it is read. */
  destroy(): void {
    this.planDestroyed = true;
    this.spare?.destroy();
    this.spare = undefined;
    if (this.filling !== undefined && this.filling.orders.length === 0) {
      this.filling.array.destroy();
      this.filling = undefined;
    }
  }
}

/**
 * Plans a top-k call on the host: resolves and checks every parameter, chooses the variant, lays
 * out temporary storage and lists the launches. No device work.
 */
export function planTopK(userArgs: TopKArgs, environment: Env = makeEnv()): TopKPlan {
  if (typeof userArgs !== 'object' || userArgs === null) throw new SegkitUsageError(`args: expected an object; got ${describe(userArgs)}`);
  const { backend, requirements } = environment;
  for (const name of ['keysIn', 'keysOut'] as const) {
    if (!isDeviceArray(userArgs[name])) throw new SegkitUsageError(`${name}: expected a DeviceArray; got ${describe(userArgs[name])}`);
  }
  const args = snapshotHostArrays(userArgs);
  const facts = resolveFacts(args, environment);
  checkArrays(args, facts, backend);
  checkPerSegmentLengths(facts);
  const keysLength = args.keysIn.length;
  checkGeometry(facts, keysLength);

  const sizeBounds = segmentSizeBounds(facts);
  const maxSegmentSize = maxSegmentSizeOf(facts, keysLength);
  const kBounds = effectiveBounds(facts.k);
  const selection = selectTopKVariant(
    {
      k: { min: kBounds.min, max: facts.kMax },
      segmentSize: { min: sizeBounds.min, max: maxSegmentSize },
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds !== undefined,
    },
    backend.capabilities,
    environment.tuning as { variant?: TopKVariant },
  );
  if (selection.variant === 'radix-select' && requirements.outputOrdering === 'sorted' && backend.name === 'webgpu' && facts.kMax > selection.policy.tileItems) {
    throw new SegkitRangeError('k', `kMax ${facts.kMax} exceeds the largest sorted selection this backend holds in workgroup memory (${selection.policy.tileItems})`, {
      value: facts.kMax,
    });
  }
  // Candidates of a segment live at its own start, so the double buffer spans the segments' extent:
  // packed, at most totalNumItems; strided, the last segment's start plus its size.
  const strideMax = facts.segmentStride === undefined ? undefined : effectiveBounds(facts.segmentStride).max;
  const extent = strideMax === undefined ? (facts.totalNumItems?.staticBounds.max ?? Infinity) : Math.max(0, facts.maxSegments - 1) * strideMax + maxSegmentSize;
  const totalItemsBound = Math.min(keysLength, extent);
  const { launches, layout, validates, checks } = buildLaunches(
    selection,
    facts,
    maxSegmentSize,
    requirements.guaranteeChecks,
    totalItemsBound,
    args.keysIn.dtype,
  );

  const directionOfOption = facts.selectDirection.options.map((o) => (o === 'max' ? 0 : 1));
  const valueMode = args.valuesOut === undefined ? 'none' : args.valuesIn === undefined ? 'indices' : 'payload';
  const reports = validates ? new StatusReports(backend, hooksOf(backend)) : undefined;
  let status: DeviceArray<'u32'> | undefined;
  /** Device copies of the host per-segment arrays, uploaded on the first run. */
  let hostCopies: HostCopies | undefined;
  let destroyed = false;
  /** Executors' per-plan cache key (see TopKRun.cache). */
  const runCache = {};

  const explain = (): string => {
    const lines = [
      `DeviceBatchedTopK on ${backend.name}: ${facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`} segments, kMax ${facts.kMax}, ${args.keysIn.dtype} keys, values: ${valueMode}`,
      `Outputs: ${facts.maxSegments * facts.kMax} elements of keysOut${args.valuesOut === undefined ? '' : ' and valuesOut'}; segment i's results at [i * ${facts.kMax}, i * ${facts.kMax} + min(k_i, size_i)), the rest of its slots filled`,
      'Facts:',
      ...[facts.segmentSizes, facts.k, facts.numSegments, facts.segmentStride, facts.totalNumItems]
        .filter((f) => f !== undefined)
        .map((f) => `  ${describeNumeric(f)}`),
      `  ${describeOption(facts.selectDirection)}`,
      `  requirements: ${Object.entries(requirements).map(([k, v]) => `${k}=${v}`).join(', ')}`,
      `Chosen variant: ${selection.variant} (${selection.why})`,
      `Policy: ${Object.entries(selection.policy).map(([k, v]) => `${k}=${v}`).join(', ')}`,
      `Reachable variants: ${selection.reachable.join(', ')}`,
      'Variants:',
      ...topKVariants.map((v) => {
        const verdict = selection.verdicts.find((x) => x.variant === v)!;
        return `  ${v}: ${verdict.reachable ? 'reachable' : 'pruned'} (${verdict.reason})`;
      }),
      'Temporary storage:',
      ...describeLayout(layout).map((l) => `  ${l}`),
      `Launches (${launches.length}):`,
      ...launches.map((l, i) => `  ${i + 1}. ${l.name} x${l.grid} workgroups: ${l.purpose}`),
      validates
        ? 'Checks: device-only values are validated on the device; each run\'s status words are copied aside on the device and read back at the next synchronize()/download() or plan.checked(), not per run.'
        : `Checks: ${requirements.guaranteeChecks === 'trust' ? 'trusted (no device check)' : 'all values host-known, checked on the host'}.`,
    ];
    if (hostArrayFields.some((f) => facts[f].hostValues !== undefined)) {
      lines.push('Host per-segment arrays: copied when planned, uploaded once on the first run.');
    }
    return lines.join('\n');
  };

  /** The plan's device copies of its host per-segment arrays (made once: the copies never change). */
  const uploadHostArrays = (): HostCopies => {
    if (hostCopies !== undefined) return hostCopies;
    const copies: HostCopies = {};
    try {
      for (const f of [facts.segmentSizes, facts.k]) {
        if (f.kind === 'perSegment' && f.hostValues !== undefined) copies[f.name as 'segmentSizes' | 'k'] = backend.upload(hostU32(f.hostValues, f.hostValues.length));
      }
      const dir = facts.selectDirection;
      if (dir.kind === 'perSegment' && dir.hostValues !== undefined) {
        const indices = new Uint32Array(Math.max(1, dir.hostValues.length));
        for (let i = 0; i < dir.hostValues.length; i++) indices[i] = dir.options.indexOf(dir.hostValues[i]!);
        copies.selectDirection = backend.upload(indices);
      }
    } catch (error) {
      for (const array of Object.values(copies)) array.destroy();
      throw error;
    }
    hostCopies = copies;
    return copies;
  };

  const run = async (tempStorage?: DeviceArray<'u8'>): Promise<void> => {
    if (destroyed) throw new SegkitUsageError('plan: this plan was destroyed (plan.destroy()) and cannot run; make a new one with DeviceBatchedTopK.plan');
    // Arrays may have been destroyed since planning.
    checkArrays(args, facts, backend);
    if (layout.totalBytes > 0) {
      if (tempStorage === undefined) {
        throw new SegkitUsageError(`tempStorage: this plan needs ${layout.totalBytes} bytes of temporary storage (plan.tempStorageBytes); pass a 'u8' DeviceArray of at least that many`);
      }
      checkDeviceArray(tempStorage, backend, 'tempStorage', ['u8']);
      if (tempStorage.length < layout.totalBytes) {
        throw new SegkitUsageError(`tempStorage: has ${tempStorage.length} bytes; this plan needs ${layout.totalBytes}`);
      }
    } else if (tempStorage !== undefined) {
      checkDeviceArray(tempStorage, backend, 'tempStorage', ['u8']);
    }
    const executor = executors.get(backend.name);
    if (executor === undefined) throw new SegkitUsageError(`no top-k executor is registered for the '${backend.name}' backend`);

    const copies = uploadHostArrays();
    const perSegment = (f: NumericFacts): SegmentSource => {
      if (f.kind !== 'perSegment') return scalarSource(f);
      if (f.deviceValues !== undefined) return { kind: 'perSegment', array: f.deviceValues };
      return { kind: 'perSegment', array: copies[f.name as 'segmentSizes' | 'k']! };
    };
    const dir = facts.selectDirection;
    let direction: SegmentSource;
    if (dir.kind === 'constant' || (dir.kind === 'uniform' && dir.exact !== undefined)) {
      direction = { kind: dir.kind === 'constant' ? 'constant' : 'uniform', value: dir.options.indexOf(dir.exact!) };
    } else if (dir.deviceValues !== undefined) {
      direction = dir.kind === 'perSegment' ? { kind: 'perSegment', array: dir.deviceValues } : { kind: 'device', array: dir.deviceValues };
    } else {
      direction = { kind: 'perSegment', array: copies.selectDirection! };
    }
    const problem: TopKProblem = {
      keyType: args.keysIn.dtype as TopKProblem['keyType'],
      valueMode,
      valueType: (args.valuesOut?.dtype ?? 'i32') as TopKProblem['valueType'],
      kMax: facts.kMax,
      maxSegments: facts.maxSegments,
      maxSegmentSize,
      keysLength,
      numSegments: scalarSource(facts.numSegments),
      segmentSizes: perSegment(facts.segmentSizes),
      layout: facts.segmentStride === undefined ? { kind: 'packed' } : { kind: 'strided', stride: scalarSource(facts.segmentStride) },
      k: perSegment(facts.k),
      direction,
      directionOfOption,
      sorted: requirements.outputOrdering === 'sorted',
      segmentSizeDeviceBounds: facts.segmentSizes.deviceBounds,
    };
    if (validates && status === undefined) status = backend.alloc('u32', 8);
    const report = reports?.take();
    const totalBounds = facts.totalNumItems?.staticBounds;
    const topKRun: TopKRun = {
      backend,
      problem,
      policy: selection.policy,
      launches,
      layout,
      temp: layout.totalBytes > 0 ? tempStorage : undefined,
      status: validates ? status : undefined,
      statusReport: report === undefined ? undefined : { array: report.array, word: report.word },
      checks,
      totalNumItems: totalBounds,
      keysIn: args.keysIn,
      keysOut: args.keysOut,
      valuesIn: args.valuesIn,
      valuesOut: args.valuesOut,
      cache: runCache,
    };
    try {
      executor.execute(topKRun);
    } catch (error) {
      report?.undo();
      throw error;
    }
  };

  const destroy = (): void => {
    if (destroyed) return;
    destroyed = true;
    status?.destroy();
    status = undefined;
    for (const array of Object.values(hostCopies ?? {})) array.destroy();
    hostCopies = undefined;
    reports?.destroy();
  };
  const plan: TopKPlan = Object.freeze({
    variant: selection.variant,
    reachableVariants: Object.freeze([...selection.reachable]),
    tempStorageBytes: layout.totalBytes,
    kMax: facts.kMax,
    outputLength: facts.maxSegments * facts.kMax,
    facts,
    launches: Object.freeze(launches),
    get destroyed() {
      return destroyed;
    },
    explain,
    run,
    checked: async (): Promise<void> => {
      await reports?.checkNow();
    },
    destroy,
  });
  hostArrayCopies.set(plan, copiesIn(args, userArgs));
  return plan;
}

/** The error of one run's status words. */
function violationOf(words: Uint32Array): GuaranteeViolationError {
  const code = words[0]!;
  const parameter = deviceCheckParameters[words[1]!] ?? 'unknown';
  const segment = words[2] === 0xffffffff ? undefined : words[2];
  const value = words[3]!;
  const bounds = { min: words[4]!, max: words[5]! };
  const detail =
    code === StatusCode.OutsideStatic
      ? outsideStaticBounds(value, bounds.min, bounds.max)
      : code === StatusCode.OutsideDevice
        ? `${value} is outside the device runtime bounds [${bounds.min}, ${bounds.max}]`
        : code === StatusCode.BadDeviceBounds
          ? `device runtime bounds [${bounds.min}, ${bounds.max}] are empty or not within the static bounds`
          : code === StatusCode.PastKeys
            ? `the segment ends at ${value}, past the ${bounds.max} keys of keysIn`
            : code === StatusCode.TotalOutside
              ? outsideStaticBounds(value, bounds.min, bounds.max)
              : `${value} is larger than the segment stride ${bounds.max}`;
  return new GuaranteeViolationError(parameter, detail, segment, value, bounds);
}
