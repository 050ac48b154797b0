import type { DeviceArray } from '../../backends/backend.js';
import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { p } from '../../params/param.js';
import { checkFields } from '../../params/fields.js';
import { type GuaranteesOf, type TopKArgs, type TopKArgsShape, type TopKEntryPoint, type ValidateTopKArgs, topKFieldSets } from './args.js';
import { type TopKPlan, planTopK } from './plan.js';
import { cpuTopKExecutor } from './cpu/executor.js';
import { webgpuTopKExecutor } from './webgpu/executor.js';

registerExecutor('topk', 'cpu', cpuTopKExecutor);
registerExecutor('topk', 'webgpu', webgpuTopKExecutor);

/** Every field of top-k's args, in a fixed order (the environment API's call key). */
const argFields: readonly string[] = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems', 'weights', 'weightsOut'];

async function selectWith(userArgs: object, entry: string, env: Env | undefined, build: () => TopKArgs): Promise<void> {
  // The shorthands overwrite selectDirection (and the keys-only ones the values): a field they do not
  // take must be refused here, before it is silently replaced.
  const fieldSet: TopKEntryPoint = entry === 'select' ? 'select' : entry.endsWith('Pairs') ? 'pairs' : 'keys';
  if (typeof userArgs === 'object' && userArgs !== null) {
    checkFields(`${entry} args`, userArgs, topKFieldSets[fieldSet].fields, topKFieldSets[fieldSet].required);
  }
  const environment = environmentOf(env);
  await runInEnvironment(planFor(userArgs, entry, argFields, environment, () => planTopK(build(), environment)));
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
   * Plans and runs a call with temporary storage from the environment; resolves when the work is
   * submitted (a device-only guarantee violation rejects the next `backend.synchronize()` or
   * `backend.download()`: see `Plan.run`).
   *
   * Plans are kept per backend (the 32 most recently used) and reused for calls with the same
   * parameters, DeviceArrays and environment, whether or not the args object is the same: host
   * per-segment arrays are compared with the plan's copy on every call, and planned (and checked)
   * again when they changed. `backend.destroy()` frees the kept plans and temporary storage.
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
