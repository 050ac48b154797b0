import { type Backend, type DeviceArray, hooksOf, isDeviceArray } from '../../backends/backend.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { p } from '../../params/param.js';
import type { GuaranteesOf, TopKArgs, TopKArgsShape, TopKArgsShapeWithoutDirection, TopKArgsWithoutDirection, ValidateTopKArgs } from './args.js';
import { type TopKPlan, hostArraysUnchanged, planTopK } from './plan.js';
import { cpuTopKExecutor } from './cpu/executor.js';
import { registerTopKExecutor } from './plan.js';
import { webgpuTopKExecutor } from './webgpu/executor.js';

registerTopKExecutor('cpu', cpuTopKExecutor);
registerTopKExecutor('webgpu', webgpuTopKExecutor);

/** Plans the environment API keeps per backend; the least recently used beyond this are destroyed. */
const cachedPlansPerBackend = 32;

/** The fields a plan depends on, in a fixed order. */
const argFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems'] as const;
const knownFields: ReadonlySet<string> = new Set(argFields);

/** Identities of DeviceArrays and host arrays, for cache keys (a WeakMap keeps nothing alive). */
const identities = new WeakMap<object, number>();
let nextIdentity = 1;
function identityOf(object: object): string {
  let id = identities.get(object);
  if (id === undefined) identities.set(object, (id = nextIdentity++));
  return `#${id}`;
}

function valueKey(value: unknown): string | undefined {
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return identityOf(value);
  return undefined;
}

function boundsKey(bounds: unknown): string | undefined {
  if (bounds === undefined) return '';
  if (isDeviceArray(bounds)) return identityOf(bounds);
  if (typeof bounds !== 'object' || bounds === null) return undefined;
  const { min, max } = bounds as { min?: unknown; max?: unknown };
  return typeof min === 'number' && typeof max === 'number' ? `${min},${max}` : undefined;
}

/**
 * A field's part of a plan's cache key: DeviceArrays and host arrays by identity (a host array's
 * contents are compared against the plan's copy on every hit), every other value by value. Undefined
 * for anything that is not a parameter: such calls are planned afresh, and the planner names the
 * problem.
 */
function fieldKey(value: unknown): string | undefined {
  if (value === undefined) return '';
  if (isDeviceArray(value)) return identityOf(value);
  if (typeof value !== 'object' || value === null) return undefined;
  const param = value as { kind?: unknown; value?: unknown; values?: unknown; option?: unknown; options?: unknown; bounds?: unknown; runtimeBounds?: unknown };
  const options = Array.isArray(param.options) ? param.options.map((o) => JSON.stringify(o)).join(',') : undefined;
  const parts: (string | undefined)[] = [];
  switch (param.kind) {
    case 'constant':
      parts.push('c', valueKey(param.value));
      break;
    case 'uniform':
      parts.push('u', valueKey(param.value), boundsKey(param.bounds));
      break;
    case 'perSegment':
      parts.push('s', valueKey(param.values), boundsKey(param.bounds), boundsKey(param.runtimeBounds));
      break;
    case 'guarantee':
      parts.push('g', boundsKey(param.bounds));
      break;
    case 'constantOption':
      parts.push('co', valueKey(param.option), options);
      break;
    case 'uniformOption':
      parts.push('uo', valueKey(param.value), options);
      break;
    case 'perSegmentOption':
      parts.push('so', valueKey(param.values), options);
      break;
    default:
      return undefined;
  }
  return parts.some((part) => part === undefined) ? undefined : parts.join(':');
}

/** Environments' parts of cache keys; an Env is frozen, so one per object. */
const environmentKeys = new WeakMap<Env, string>();
function environmentKey(environment: Env): string {
  let key = environmentKeys.get(environment);
  if (key === undefined) {
    key = JSON.stringify([environment.requirements, environment.guarantees, environment.tuning]);
    environmentKeys.set(environment, key);
  }
  return key;
}

/** The cache key of a call, or undefined where it cannot be keyed (an unknown field, a value that is not a parameter). */
function callKey(userArgs: object, entry: string, environment: Env): string | undefined {
  const parts = [entry, environmentKey(environment)];
  for (const field of Object.keys(userArgs)) if (!knownFields.has(field)) return undefined;
  for (const field of argFields) {
    const part = fieldKey((userArgs as Record<string, unknown>)[field]);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return parts.join('|');
}

interface CachedPlan {
  readonly plan: TopKPlan;
}

/** The last call made with an args object: reused while the same fields and environment come back. */
interface LastCall {
  readonly cached: CachedPlan;
  readonly environment: Env;
  readonly entry: string;
  readonly fields: readonly unknown[];
  readonly fieldCount: number;
}

/**
 * What the environment API keeps on one backend: up to `cachedPlansPerBackend` plans by call key
 * (least recently used out first, and destroyed), and one grow-only temporary storage. Everything is
 * freed when the backend is destroyed.
 */
class EnvironmentCache {
  private readonly plans = new Map<string, CachedPlan>();
  private readonly lastCalls = new WeakMap<object, LastCall>();
  private temp: DeviceArray<'u8'> | undefined;

  constructor(private readonly backend: Backend) {}

  /**
   * The plan for a call: the same args object with the same fields and environment is the fast path;
   * else the call key (fresh args objects with the same parameters hit too). A hit is reused only if
   * every host per-segment array still holds what the plan copied; otherwise the call is planned
   * again, which checks the new values. Returns `owned: false` for a plan the caller must destroy.
   */
  planFor(userArgs: object, entry: string, environment: Env, build: () => TopKArgs): { plan: TopKPlan; owned: boolean } {
    const last = this.lastCalls.get(userArgs);
    let cached: CachedPlan | undefined;
    let key: string | undefined;
    if (last !== undefined && !last.cached.plan.destroyed && last.environment === environment && last.entry === entry && this.sameFields(last, userArgs)) {
      cached = last.cached;
    } else {
      key = callKey(userArgs, entry, environment);
      if (key === undefined) return { plan: planTopK(build(), environment), owned: false };
      cached = this.plans.get(key);
      if (cached !== undefined) {
        // Most recently used last.
        this.plans.delete(key);
        this.plans.set(key, cached);
      }
    }
    if (cached !== undefined && hostArraysUnchanged(cached.plan, userArgs)) {
      if (key !== undefined) this.remember(userArgs, cached, environment, entry);
      return { plan: cached.plan, owned: true };
    }
    key ??= callKey(userArgs, entry, environment);
    if (key === undefined) return { plan: planTopK(build(), environment), owned: false };
    const stale = this.plans.get(key);
    if (stale !== undefined) {
      this.plans.delete(key);
      stale.plan.destroy();
    }
    const fresh: CachedPlan = { plan: planTopK(build(), environment) };
    this.plans.set(key, fresh);
    while (this.plans.size > cachedPlansPerBackend) {
      const [oldestKey, oldest] = this.plans.entries().next().value!;
      this.plans.delete(oldestKey);
      oldest.plan.destroy();
    }
    this.remember(userArgs, fresh, environment, entry);
    return { plan: fresh.plan, owned: true };
  }

  private remember(userArgs: object, cached: CachedPlan, environment: Env, entry: string): void {
    const fields = argFields.map((field) => (userArgs as Record<string, unknown>)[field]);
    // Only frozen parameters (as p.* makes them) can be trusted unchanged by identity.
    if (fields.every((f) => f === undefined || isDeviceArray(f) || Object.isFrozen(f))) {
      this.lastCalls.set(userArgs, { cached, environment, entry, fields, fieldCount: Object.keys(userArgs).length });
    }
  }

  private sameFields(last: LastCall, userArgs: object): boolean {
    const record = userArgs as Record<string, unknown>;
    for (let i = 0; i < argFields.length; i++) if (record[argFields[i]!] !== last.fields[i]) return false;
    // A field added since (a typo, say) must reach the planner's check.
    return Object.keys(userArgs).length === last.fieldCount;
  }

  /** Temporary storage of at least `bytes`, grown by half again so a slowly rising size does not reallocate every call. */
  tempStorage(bytes: number): DeviceArray<'u8'> | undefined {
    if (bytes === 0) return undefined;
    const current = this.temp;
    if (current !== undefined && !current.destroyed && current.length >= bytes) return current;
    current?.destroy();
    this.temp = this.backend.alloc('u8', Math.ceil(Math.max(bytes, (current?.length ?? 0) * 1.5) / 256) * 256);
    return this.temp;
  }

  /** Destroys every plan and the temporary storage (the backend is being destroyed). */
  clear(): void {
    for (const cached of this.plans.values()) cached.plan.destroy();
    this.plans.clear();
    this.temp?.destroy();
    this.temp = undefined;
  }
}

const environmentCaches = new WeakMap<Backend, EnvironmentCache>();

function environmentCacheOf(backend: Backend): EnvironmentCache {
  let cache = environmentCaches.get(backend);
  if (cache === undefined) {
    const fresh = (cache = new EnvironmentCache(backend));
    environmentCaches.set(backend, fresh);
    hooksOf(backend).whenDestroyed(() => {
      fresh.clear();
      environmentCaches.delete(backend);
    });
  }
  return cache;
}

let defaultEnvironment: Env | undefined;

async function selectWith(userArgs: object, entry: string, env: Env | undefined, build: () => TopKArgs): Promise<void> {
  const environment = env ?? (defaultEnvironment ??= makeEnv());
  const cache = environmentCacheOf(environment.backend);
  const { plan, owned } = cache.planFor(userArgs, entry, environment, build);
  try {
    await plan.run(cache.tempStorage(plan.tempStorageBytes));
  } finally {
    // Its status words stay until they are read; the rest is freed once the run is done.
    if (!owned) plan.destroy();
  }
}

const withDirection = (args: TopKArgsWithoutDirection, direction: 'max' | 'min'): TopKArgs => ({
  ...args,
  selectDirection: p.constantOption(direction),
});

/**
 * Batched top-k: for each segment, the `k` largest (or smallest) keys, with their payloads or
 * indices. Parameters are typed (constant, uniform or per-segment, with static bounds); what the
 * bounds rule out does not compile, and the dispatcher prunes variants that can never run.
 *
 * @example
 * ```ts
 * const plan = DeviceBatchedTopK.plan({
 *   keysIn, keysOut, valuesOut,
 *   segmentSizes: p.constant(256),
 *   k: p.uniform(8, { min: 1, max: 8 }),
 *   selectDirection: p.constantOption('max'),
 *   numSegments: p.uniform(4096),
 * });
 * console.log(plan.variant, plan.explain());
 * await plan.run();
 * ```
 */
export const DeviceBatchedTopK = {
  /** Plans a call on the host (no device work); run it with `plan.run(tempStorage?)`. */
  plan<const Args extends TopKArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): TopKPlan {
    return planTopK(args as TopKArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment; resolves when the work is
   * submitted (see `TopKPlan.run` for when a device-only guarantee violation is reported: at the next
   * `backend.synchronize()` or `backend.download()`).
   *
   * Plans are kept per backend (the 32 most recently used) and reused for calls with the same
   * parameters, DeviceArrays and environment, whether or not the args object is the same: host
   * per-segment arrays are compared with the plan's copy on every call and planned (and checked)
   * again when they changed. `backend.destroy()` frees the kept plans and temporary storage.
   */
  async select<const Args extends TopKArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await selectWith(args, 'select', env, () => args as TopKArgs);
  },

  /** `select` with `selectDirection` fixed to `'max'`, keys only. */
  async maxKeys<const Args extends TopKArgsShapeWithoutDirection, const E extends Env = Env<{}>>(args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await selectWith(args, 'maxKeys', env, () => withDirection({ ...(args as TopKArgsWithoutDirection), valuesIn: undefined, valuesOut: undefined }, 'max'));
  },

  /** `select` with `selectDirection` fixed to `'min'`, keys only. */
  async minKeys<const Args extends TopKArgsShapeWithoutDirection, const E extends Env = Env<{}>>(args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await selectWith(args, 'minKeys', env, () => withDirection({ ...(args as TopKArgsWithoutDirection), valuesIn: undefined, valuesOut: undefined }, 'min'));
  },

  /** `select` with `selectDirection` fixed to `'max'`, keys and values (payload or indices). */
  async maxPairs<const Args extends TopKArgsShapeWithoutDirection & { valuesOut: DeviceArray }, const E extends Env = Env<{}>>(
    args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>,
    env?: E,
  ): Promise<void> {
    await selectWith(args, 'maxPairs', env, () => withDirection(args as TopKArgsWithoutDirection, 'max'));
  },

  /** `select` with `selectDirection` fixed to `'min'`, keys and values (payload or indices). */
  async minPairs<const Args extends TopKArgsShapeWithoutDirection & { valuesOut: DeviceArray }, const E extends Env = Env<{}>>(
    args: Args & ValidateTopKArgs<Args, GuaranteesOf<E>>,
    env?: E,
  ): Promise<void> {
    await selectWith(args, 'minPairs', env, () => withDirection(args as TopKArgsWithoutDirection, 'min'));
  },
} as const;
