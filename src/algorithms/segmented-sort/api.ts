import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { checkFields } from '../../params/fields.js';
import type { GuaranteesOf } from '../batched-top-k/args.js';
import { type SegmentedSortArgs, type SegmentedSortArgsShape, type ValidateSegmentedSortArgs, segmentedSortFields, segmentedSortRequired } from './args.js';
import { cpuSegmentedSortExecutor } from './cpu/executor.js';
import { type SegmentedSortPlan, planSegmentedSort } from './plan.js';
import { webgpuSegmentedSortExecutor } from './webgpu/executor.js';

registerExecutor('sort', 'cpu', cpuSegmentedSortExecutor);
registerExecutor('sort', 'webgpu', webgpuSegmentedSortExecutor);

/** A plan that read a host per-segment array is not reused: the array may have changed. */
const reusable = (plan: SegmentedSortPlan) => plan.facts.segmentSizes.hostValues === undefined && plan.facts.order.hostValues === undefined;

/**
 * Segmented sort: each segment's keys sorted ascending or descending (per call or per segment),
 * stable (equal keys keep their input order), NaN as the largest key, -0 equal to +0; with payloads,
 * or segment-local indices (an argsort: `valuesOut` without `valuesIn`). Outputs have the input's
 * layout, packed or strided. Parameters are typed as for every segkit algorithm: what the bounds rule
 * out does not compile, and the dispatcher prunes variants that can never run.
 *
 * @example
 * ```ts
 * const plan = DeviceSegmentedSort.plan({
 *   keysIn, keysOut, valuesOut, // valuesOut without valuesIn: indices
 *   segmentSizes: p.perSegment(sizes, { max: 2048 }),
 *   order: p.constantOption('descending'),
 *   numSegments: p.uniform(sizes.length),
 * });
 * console.log(plan.variant, plan.explain());
 * await plan.run();
 * ```
 */
export const DeviceSegmentedSort = {
  /** Plans a call on the host (no device work); run it with `plan.run(tempStorage?)`. */
  plan<const Args extends SegmentedSortArgsShape | object, const E extends Env = Env<{}>>(args: ValidateSegmentedSortArgs<Args, GuaranteesOf<E>>, env?: E): SegmentedSortPlan {
    return planSegmentedSort(args as SegmentedSortArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-segment arrays).
   */
  async sort<const Args extends SegmentedSortArgsShape | object, const E extends Env = Env<{}>>(args: ValidateSegmentedSortArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    if (typeof args === 'object' && args !== null) checkFields('sort args', args, segmentedSortFields, segmentedSortRequired);
    const environment = environmentOf(env);
    await runInEnvironment(planFor(args, 'sort', segmentedSortFields, environment, () => planSegmentedSort(args as SegmentedSortArgs, environment), reusable));
  },
} as const;
