import {
  type Backend,
  type DeviceArray,
  checkDeviceArray,
  describe,
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
import { radixSelectLaunches } from './radix-plan.js';
import { type TopKSelection, type TopKVariant, reducePerInvocation, selectTopKVariant, topKVariants } from './policy.js';
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

/** A planned top-k call: host facts, the chosen variant, its launches and temporary storage. */
export interface TopKPlan {
  /** The variant the dispatcher chose. */
  readonly variant: TopKVariant;
  /** Variants not pruned by the known bounds, for this backend. */
  readonly reachableVariants: readonly TopKVariant[];
  /** Bytes of `'u8'` temporary storage `run` needs; 0 where none is needed. */
  readonly tempStorageBytes: number;
  /** The facts the choice was made from. */
  readonly facts: TopKFacts;
  /** The kernel launches `run` makes, in order. */
  readonly launches: readonly TopKLaunch[];
  /** Human-readable: facts per parameter, the chosen variant and why, the pruned ones and why, the temporary-storage layout and the launches. */
  explain(): string;
  /**
   * Runs the plan. `tempStorage` is a `'u8'` DeviceArray of at least `tempStorageBytes`, required
   * iff `tempStorageBytes > 0`. Resolves when the work is submitted and, under 'validate' with
   * device-only values, checked.
   */
  run(tempStorage?: DeviceArray<'u8'>): Promise<void>;
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
  if (!Number.isFinite(kMax) || kMax > u32Max) {
    throw new SegkitRangeError('k', 'needs a finite upper bound (the output width kMax): give static bounds { max } or an environment guarantee maxK', {
      bounds: k.staticBounds,
    });
  }

  // The grid covers the host value of numSegments, or as many segments as the outputs can hold.
  const outputCapacity = Math.floor(args.keysOut.length / kMax);
  const maxSegments = numSegments.exact ?? Math.min(numSegments.staticBounds.max, outputCapacity);
  return { segmentSizes, k, selectDirection, numSegments, segmentStride, totalNumItems, kMax, maxSegments };
}

function checkArrays(args: TopKArgs, facts: TopKFacts, backend: Backend): void {
  checkDeviceArray(args.keysIn, backend, 'keysIn', ['f32', 'i32', 'u32']);
  checkDeviceArray(args.keysOut, backend, 'keysOut', [args.keysIn.dtype]);
  const needed = facts.maxSegments * facts.kMax;
  if (facts.numSegments.exact !== undefined && args.keysOut.length < needed) {
    throw new SegkitUsageError(`keysOut: needs numSegments * kMax = ${facts.numSegments.exact} * ${facts.kMax} = ${needed} elements; has ${args.keysOut.length}`);
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
      throw new SegkitUsageError(`valuesOut: needs numSegments * kMax = ${needed} elements; has ${args.valuesOut.length}`);
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
      if (reducePerInvocation(policy, maxSegmentSize)) {
        launches.push({ kernel: 'reduce', variant, name: `topk/reduce[${spec},per-invocation]`, grid: Math.ceil(n / policy.workgroupSize), pass: 0, purpose: `one invocation per segment (${policy.workgroupSize} segments per workgroup): register top-k, write` });
        continue;
      }
      launches.push({ kernel: 'reduce', variant, name: `topk/reduce[${spec}]`, grid: n * chunks, pass: 0, purpose: chunks === 1 ? 'one workgroup per segment: register top-k, merge, write' : `${chunks} workgroups per segment: register top-k of each chunk into partials` });
      if (chunks > 1) {
        layout.add('partials', n * chunks * facts.kMax * 8);
        launches.push({ kernel: 'reduce-merge', variant, name: `topk/reduce-merge[${spec}]`, grid: n, pass: 0, purpose: 'merge the chunks\' lists per segment and write' });
      }
    } else {
      launches.push(...radixSelectLaunches(layout, { policy, spec, maxSegments: n, maxSegmentSize, kMax: facts.kMax, candidateWords: totalItemsBound }));
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

/**
 * Plans a top-k call on the host: resolves and checks every parameter, chooses the variant, lays
 * out temporary storage and lists the launches. No device work.
 */
export function planTopK(args: TopKArgs, environment: Env = makeEnv()): TopKPlan {
  if (typeof args !== 'object' || args === null) throw new SegkitUsageError(`args: expected an object; got ${describe(args)}`);
  const { backend, requirements } = environment;
  for (const name of ['keysIn', 'keysOut'] as const) {
    if (!isDeviceArray(args[name])) throw new SegkitUsageError(`${name}: expected a DeviceArray; got ${describe(args[name])}`);
  }
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
  let status: DeviceArray<'u32'> | undefined;
  /** Executors' per-plan cache key (see TopKRun.cache). */
  const runCache = {};

  const explain = (): string => {
    const lines = [
      `DeviceBatchedTopK on ${backend.name}: ${facts.maxSegments === facts.numSegments.exact ? `${facts.maxSegments}` : `up to ${facts.maxSegments}`} segments, kMax ${facts.kMax}, ${args.keysIn.dtype} keys, values: ${valueMode}`,
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
      validates ? 'Checks: device-only values are validated on the device; one status word is read back.' : `Checks: ${requirements.guaranteeChecks === 'trust' ? 'trusted (no device check)' : 'all values host-known, checked on the host'}.`,
    ];
    return lines.join('\n');
  };

  const run = async (tempStorage?: DeviceArray<'u8'>): Promise<void> => {
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

    // Host per-segment values go to the device for the duration of the call.
    const uploads: DeviceArray[] = [];
    const perSegment = (f: NumericFacts): SegmentSource => {
      if (f.kind !== 'perSegment') return scalarSource(f);
      if (f.deviceValues !== undefined) return { kind: 'perSegment', array: f.deviceValues };
      const array = backend.upload(hostU32(f.hostValues!, f.hostValues!.length));
      uploads.push(array);
      return { kind: 'perSegment', array };
    };
    const dir = facts.selectDirection;
    let direction: SegmentSource;
    if (dir.kind === 'constant' || (dir.kind === 'uniform' && dir.exact !== undefined)) {
      direction = { kind: dir.kind === 'constant' ? 'constant' : 'uniform', value: dir.options.indexOf(dir.exact!) };
    } else if (dir.deviceValues !== undefined) {
      direction = dir.kind === 'perSegment' ? { kind: 'perSegment', array: dir.deviceValues } : { kind: 'device', array: dir.deviceValues };
    } else {
      const indices = new Uint32Array(Math.max(1, dir.hostValues!.length));
      for (let i = 0; i < dir.hostValues!.length; i++) indices[i] = dir.options.indexOf(dir.hostValues![i]!);
      const array = backend.upload(indices);
      uploads.push(array);
      direction = { kind: 'perSegment', array };
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
    const totalBounds = facts.totalNumItems?.staticBounds;
    const topKRun: TopKRun = {
      backend,
      problem,
      policy: selection.policy,
      launches,
      layout,
      temp: layout.totalBytes > 0 ? tempStorage : undefined,
      status: validates ? status : undefined,
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
      if (validates) await throwOnViolation(backend, status!);
    } finally {
      for (const array of uploads) array.destroy();
    }
  };

  return Object.freeze({
    variant: selection.variant,
    reachableVariants: Object.freeze([...selection.reachable]),
    tempStorageBytes: layout.totalBytes,
    facts,
    launches: Object.freeze(launches),
    explain,
    run,
  });
}

async function throwOnViolation(backend: Backend, status: DeviceArray<'u32'>): Promise<void> {
  const words = await backend.download(status);
  const code = words[0]!;
  if (code === StatusCode.Ok) return;
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
  throw new GuaranteeViolationError(parameter, detail, segment, value, bounds);
}
