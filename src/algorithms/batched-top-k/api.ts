import type { DeviceArray } from '../../backends/backend.js';
import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { p } from '../../params/param.js';
import type { GuaranteesOf, TopKArgs, TopKArgsShape, TopKArgsShapeWithoutDirection, TopKArgsWithoutDirection, ValidateTopKArgs } from './args.js';
import { type TopKPlan, planTopK } from './plan.js';
import { cpuTopKExecutor } from './cpu/executor.js';
import { webgpuTopKExecutor } from './webgpu/executor.js';

registerExecutor('topk', 'cpu', cpuTopKExecutor);
registerExecutor('topk', 'webgpu', webgpuTopKExecutor);

/** The fields a plan depends on, in a fixed order. */
const argFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems'] as const;

/** A plan that read a host per-segment array is not reused: the array may have changed. */
const reusable = (plan: TopKPlan) => {
  const { segmentSizes, k, selectDirection } = plan.facts;
  return segmentSizes.hostValues === undefined && k.hostValues === undefined && selectDirection.hostValues === undefined;
};

async function selectWith(userArgs: object, entry: string, env: Env | undefined, build: () => TopKArgs): Promise<void> {
  const environment = environmentOf(env);
  await runInEnvironment(planFor(userArgs, entry, argFields, environment, () => planTopK(build(), environment), reusable));
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
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-segment arrays).
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
