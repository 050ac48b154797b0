import type { Backend, DeviceArray } from '../backends/backend.js';
import { type Env, env as makeEnv } from '../env/env.js';
import type { Plan } from './plan.js';

/*
 * The environment API (CUB's `Algorithm(..., env)`): one call that plans, takes temporary storage
 * from the environment and runs. Plans are reused per args object while nothing they were made from
 * changed; temporary storage is kept per backend and grows as needed.
 */

/** Grow-only temporary storage per backend. */
const tempStorageCache = new WeakMap<object, DeviceArray<'u8'>>();

/** Temporary storage of at least `bytes` on `backend` (none for 0 bytes). */
export function tempStorageFor(backend: Backend, bytes: number): DeviceArray<'u8'> | undefined {
  if (bytes === 0) return undefined;
  const cached = tempStorageCache.get(backend);
  if (cached !== undefined && !cached.destroyed && cached.length >= bytes) return cached;
  cached?.destroy();
  // Grow by half again so a slowly rising size does not reallocate every call.
  const fresh = backend.alloc('u8', Math.ceil(Math.max(bytes, (cached?.length ?? 0) * 1.5) / 256) * 256);
  tempStorageCache.set(backend, fresh);
  return fresh;
}

let defaultEnvironment: Env | undefined;

/** The environment of a call that names none. */
export function environmentOf(env: Env | undefined): Env {
  return env ?? (defaultEnvironment ??= makeEnv());
}

interface CachedPlan {
  readonly environment: Env;
  readonly entry: string;
  readonly fields: readonly unknown[];
  readonly plan: Plan;
}

/** The last plan made for an args object by the environment API. */
const planCache = new WeakMap<object, CachedPlan>();

/**
 * The plan for `userArgs` under `environment`: a later call with the same args object, entry point,
 * the same values in `fields` (parameters are frozen, so the same parameter object means the same
 * facts) and the same environment reuses it. `reusable` says whether a fresh plan may be kept (a
 * plan that read a host per-segment array is not: the array may have changed).
 */
export function planFor<P extends Plan>(
  userArgs: object,
  entry: string,
  fields: readonly string[],
  environment: Env,
  build: () => P,
  reusable: (plan: P) => boolean,
): P {
  const values = fields.map((field) => (userArgs as Record<string, unknown>)[field]);
  const cached = planCache.get(userArgs);
  if (cached !== undefined && cached.environment === environment && cached.entry === entry && cached.fields.every((f, i) => f === values[i])) {
    return cached.plan as P;
  }
  const plan = build();
  if (reusable(plan)) planCache.set(userArgs, { environment, entry, fields: values, plan });
  return plan;
}

/** Runs a plan with temporary storage kept for its backend. */
export async function runInEnvironment(plan: Plan): Promise<void> {
  await plan.run(tempStorageFor(plan.backend, plan.tempStorageBytes));
}
