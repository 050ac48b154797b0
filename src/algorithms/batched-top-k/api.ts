import type { DeviceArray } from '../../backends/backend.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { p } from '../../params/param.js';
import { checkFields } from '../../params/fields.js';
import { type GuaranteesOf, type TopKArgs, type TopKArgsShape, type TopKEntryPoint, type ValidateTopKArgs, topKFieldSets } from './args.js';
import { type TopKPlan, planTopK } from './plan.js';
import { cpuTopKExecutor } from './cpu/executor.js';
import { registerTopKExecutor } from './plan.js';
import { webgpuTopKExecutor } from './webgpu/executor.js';

registerTopKExecutor('cpu', cpuTopKExecutor);
registerTopKExecutor('webgpu', webgpuTopKExecutor);

/** Grow-only temporary storage per backend, for the environment API. */
const tempStorageCache = new WeakMap<object, DeviceArray<'u8'>>();

function tempStorageFor(environment: Env, bytes: number): DeviceArray<'u8'> | undefined {
  if (bytes === 0) return undefined;
  const { backend } = environment;
  const cached = tempStorageCache.get(backend);
  if (cached !== undefined && !cached.destroyed && cached.length >= bytes) return cached;
  cached?.destroy();
  // Grow by half again so a slowly rising size does not reallocate every call.
  const fresh = backend.alloc('u8', Math.ceil(Math.max(bytes, (cached?.length ?? 0) * 1.5) / 256) * 256);
  tempStorageCache.set(backend, fresh);
  return fresh;
}

/** Runs a plan with temporary storage from the environment. */
async function runWithEnvironment(plan: TopKPlan, environment: Env): Promise<void> {
  await plan.run(tempStorageFor(environment, plan.tempStorageBytes));
}

let defaultEnvironment: Env | undefined;

/** The fields a plan depends on, in a fixed order. */
const argFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems'] as const;

interface CachedPlan {
  readonly environment: Env;
  readonly variant: string;
  readonly fields: readonly unknown[];
  readonly plan: TopKPlan;
}

/** The last plan made for an args object by the environment API, per entry point. */
const planCache = new WeakMap<object, CachedPlan>();

/**
 * The environment API plans once per args object: a later call with the same object, the same
 * fields (parameters are frozen, so the same parameter object means the same facts) and the same
 * environment reuses the plan. A plan that read a host per-segment array is not kept: the array may
 * have changed. DeviceArrays are checked again by every run.
 */
function planFor(userArgs: object, variant: string, environment: Env, build: () => TopKArgs): TopKPlan {
  const fields = argFields.map((field) => (userArgs as Record<string, unknown>)[field]);
  const cached = planCache.get(userArgs);
  if (cached !== undefined && cached.environment === environment && cached.variant === variant && cached.fields.every((f, i) => f === fields[i])) {
    return cached.plan;
  }
  const plan = planTopK(build(), environment);
  const { segmentSizes, k, selectDirection } = plan.facts;
  if (segmentSizes.hostValues === undefined && k.hostValues === undefined && selectDirection.hostValues === undefined) {
    planCache.set(userArgs, { environment, variant, fields, plan });
  }
  return plan;
}

async function selectWith(userArgs: object, variant: string, env: Env | undefined, build: () => TopKArgs): Promise<void> {
  // The shorthands overwrite selectDirection (and the keys-only ones the values): a field they do not
  // take must be refused here, before it is silently replaced.
  const entry: TopKEntryPoint = variant === 'select' ? 'select' : variant.endsWith('Pairs') ? 'pairs' : 'keys';
  if (typeof userArgs === 'object' && userArgs !== null) {
    checkFields(`${variant} args`, userArgs, topKFieldSets[entry].fields, topKFieldSets[entry].required);
  }
  const environment = env ?? (defaultEnvironment ??= makeEnv());
  await runWithEnvironment(planFor(userArgs, variant, environment, build), environment);
}

const withDirection = (args: object, direction: 'max' | 'min'): TopKArgs => ({
  ...(args as Omit<TopKArgs, 'selectDirection'>),
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
  plan<const Args extends TopKArgsShape | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): TopKPlan {
    return planTopK(args as TopKArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-segment arrays).
   */
  async select<const Args extends TopKArgsShape | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await selectWith(args, 'select', env, () => args as TopKArgs);
  },

  /** `select` with `selectDirection` fixed to `'max'`, keys only. */
  async maxKeys<const Args extends TopKArgsShape<'keys'> | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>, 'keys'>, env?: E): Promise<void> {
    await selectWith(args, 'maxKeys', env, () => withDirection(args, 'max'));
  },

  /** `select` with `selectDirection` fixed to `'min'`, keys only. */
  async minKeys<const Args extends TopKArgsShape<'keys'> | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>, 'keys'>, env?: E): Promise<void> {
    await selectWith(args, 'minKeys', env, () => withDirection(args, 'min'));
  },

  /** `select` with `selectDirection` fixed to `'max'`, keys and values (payload or indices). */
  async maxPairs<const Args extends TopKArgsShape<'pairs'> | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>, 'pairs'>, env?: E): Promise<void> {
    await selectWith(args, 'maxPairs', env, () => withDirection(args, 'max'));
  },

  /** `select` with `selectDirection` fixed to `'min'`, keys and values (payload or indices). */
  async minPairs<const Args extends TopKArgsShape<'pairs'> | object, const E extends Env = Env<{}>>(args: ValidateTopKArgs<Args, GuaranteesOf<E>, 'pairs'>, env?: E): Promise<void> {
    await selectWith(args, 'minPairs', env, () => withDirection(args, 'min'));
  },
} as const;
