import { type Backend, type DeviceArray, hooksOf, isDeviceArray } from '../backends/backend.js';
import { type Env, backendForCall, env as makeEnv } from '../env/env.js';
import { type Plan, hostArraysUnchanged } from './plan.js';

/*
 * The environment API (CUB's `Algorithm(..., env)`): one call that plans, takes temporary storage
 * from the environment and runs. What it keeps lives per backend and is freed with it: up to
 * `cachedPlansPerBackend` plans by call key, and one grow-only temporary storage.
 *
 * A call key names the algorithm's entry point, the environment (requirements, guarantees, tuning)
 * and every field of the args: DeviceArrays and host arrays by identity, every other value by
 * value. A plan found by key is reused only while every host per-segment array still holds what
 * the plan copied (compared element by element; cheap next to the checks and the upload it saves),
 * so a changed array is planned, and checked, again. The same args object with the same field
 * objects skips building the key.
 */

/** Plans kept per backend; the least recently used beyond this are destroyed. */
export const cachedPlansPerBackend = 32;

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
 * A field's part of a call key. Undefined for anything that is not a DeviceArray or a parameter:
 * such calls are planned afresh, and the planner names the problem.
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
      return plainKey(value);
  }
  return parts.some((part) => part === undefined) ? undefined : parts.join(':');
}

/**
 * A plain object of strings and numbers (an algorithm's options, as top-k's `weights`), by value;
 * undefined for anything else.
 */
function plainKey(value: object): string | undefined {
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!entries.every(([, v]) => typeof v === 'string' || typeof v === 'number' || v === undefined)) return undefined;
  return `o:${JSON.stringify(entries.map(([k, v]) => [k, typeof v === 'number' ? valueKey(v) : v]))}`;
}

/** Environments' parts of call keys; an Env is frozen, so one per object. */
const environmentKeys = new WeakMap<Env, string>();
function environmentKey(environment: Env): string {
  let key = environmentKeys.get(environment);
  if (key === undefined) {
    key = JSON.stringify([environment.requirements, environment.guarantees, environment.tuning]);
    environmentKeys.set(environment, key);
  }
  return key;
}

/** The call key, or undefined where the call cannot be keyed (a field not in `fields`, a value that is not a parameter). */
function callKey(userArgs: object, entry: string, fields: readonly string[], environment: Env): string | undefined {
  const parts = [entry, environmentKey(environment)];
  for (const field of Object.keys(userArgs)) if (!fields.includes(field)) return undefined;
  for (const field of fields) {
    const part = fieldKey((userArgs as Record<string, unknown>)[field]);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return parts.join('|');
}

/** The last call made with an args object: reused while the same field objects and environment come back. */
interface LastCall {
  readonly plan: Plan;
  readonly environment: Env;
  readonly entry: string;
  readonly fields: readonly string[];
  readonly values: readonly unknown[];
  readonly fieldCount: number;
}

/** What the environment API keeps on one backend; everything is freed when the backend is destroyed. */
class EnvironmentCache {
  private readonly plans = new Map<string, Plan>();
  private readonly lastCalls = new WeakMap<object, LastCall>();
  private temp: DeviceArray<'u8'> | undefined;

  constructor(private readonly backend: Backend) {}

  /**
   * The plan for a call, and whether the cache owns it (`owned: false`: the caller destroys it after
   * the run). The same args object with the same fields and environment is the fast path; else the
   * call key, so fresh args objects with the same parameters hit too.
   */
  planFor(userArgs: object, entry: string, fields: readonly string[], environment: Env, build: () => Plan): { plan: Plan; owned: boolean } {
    const last = this.lastCalls.get(userArgs);
    let found: Plan | undefined;
    let key: string | undefined;
    if (last !== undefined && !last.plan.destroyed && last.environment === environment && last.entry === entry && last.fields === fields && sameFields(last, userArgs)) {
      found = last.plan;
    } else {
      key = callKey(userArgs, entry, fields, environment);
      if (key === undefined) return { plan: build(), owned: false };
      found = this.plans.get(key);
      if (found !== undefined) {
        // Most recently used last.
        this.plans.delete(key);
        this.plans.set(key, found);
      }
    }
    if (found !== undefined && hostArraysUnchanged(found, userArgs)) {
      if (key !== undefined) this.remember(userArgs, found, environment, entry, fields);
      return { plan: found, owned: true };
    }
    key ??= callKey(userArgs, entry, fields, environment);
    if (key === undefined) return { plan: build(), owned: false };
    const fresh = build();
    if (fresh.backend !== this.backend) return { plan: fresh, owned: false };
    const stale = this.plans.get(key);
    if (stale !== undefined) {
      this.plans.delete(key);
      stale.destroy();
    }
    this.plans.set(key, fresh);
    while (this.plans.size > cachedPlansPerBackend) {
      const [oldestKey, oldest] = this.plans.entries().next().value!;
      this.plans.delete(oldestKey);
      oldest.destroy();
    }
    this.remember(userArgs, fresh, environment, entry, fields);
    return { plan: fresh, owned: true };
  }

  private remember(userArgs: object, plan: Plan, environment: Env, entry: string, fields: readonly string[]): void {
    const values = fields.map((field) => (userArgs as Record<string, unknown>)[field]);
    // Only frozen parameters (as p.* makes them) can be trusted unchanged by identity.
    if (values.every((v) => v === undefined || isDeviceArray(v) || Object.isFrozen(v))) {
      this.lastCalls.set(userArgs, { plan, environment, entry, fields, values, fieldCount: Object.keys(userArgs).length });
    }
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
    for (const plan of this.plans.values()) plan.destroy();
    this.plans.clear();
    this.temp?.destroy();
    this.temp = undefined;
  }
}

function sameFields(last: LastCall, userArgs: object): boolean {
  const record = userArgs as Record<string, unknown>;
  for (let i = 0; i < last.fields.length; i++) if (record[last.fields[i]!] !== last.values[i]) return false;
  // A field added since (a typo, say) must reach the planner.
  return Object.keys(userArgs).length === last.fieldCount;
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

/** The environment of a call that names none. */
export function environmentOf(env: Env | undefined): Env {
  return env ?? (defaultEnvironment ??= makeEnv());
}

/** Plans made for one call only (not kept by a cache): `runInEnvironment` destroys them after the run. */
const transient = new WeakSet<Plan>();

/**
 * The plan for `userArgs` under `environment`: kept per backend and reused for a later call with the
 * same entry point, environment and field values (DeviceArrays and host arrays by identity, the rest
 * by value) while the host per-segment arrays still hold what the plan copied. `fields` lists every
 * field of the algorithm's args (a call with any other field is planned afresh and not kept: the
 * planner names it); `entry` tells apart entry points that build different args from the same
 * object; `build` plans the call. Run the plan with {@link runInEnvironment}, which frees a plan
 * that is not kept.
 *
 * `_reusable` is ignored: plans copy host per-segment arrays, so every plan may be kept (it remains
 * for callers written when a plan that read a host array was not).
 */
export function planFor<P extends Plan>(userArgs: object, entry: string, fields: readonly string[], environment: Env, build: () => P, _reusable?: (plan: P) => boolean): P {
  let backend: Backend | undefined;
  try {
    backend = backendForCall(environment, userArgs);
  } catch {
    // Arrays on two backends: the planner says which.
  }
  if (backend === undefined) {
    const plan = build();
    transient.add(plan);
    return plan;
  }
  const { plan, owned } = environmentCacheOf(backend).planFor(userArgs, entry, fields, environment, build);
  if (!owned) transient.add(plan);
  return plan as P;
}

/**
 * Runs a plan from {@link planFor} with temporary storage kept for its backend; a plan the cache
 * does not keep is destroyed after the run (its status words stay until they are read).
 */
export async function runInEnvironment(plan: Plan): Promise<void> {
  try {
    await plan.run(environmentCacheOf(plan.backend).tempStorage(plan.tempStorageBytes));
  } finally {
    if (transient.has(plan)) plan.destroy();
  }
}
