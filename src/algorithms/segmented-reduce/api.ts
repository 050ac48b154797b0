import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { SegkitUsageError } from '../../errors.js';
import { p } from '../../params/param.js';
import type {
  SegmentedReduceArgs,
  SegmentedReduceArgsShape,
  SegmentedReduceArgsShapeWithoutOp,
  SegmentedReduceArgsWithoutOp,
  ValidateSegmentedReduceArgs,
} from './args.js';
import { cpuSegmentedReduceExecutor } from './cpu/executor.js';
import type { ReduceOp } from './ops.js';
import { type SegmentedReducePlan, planSegmentedReduce, segmentedReduceFields } from './plan.js';
import { webgpuSegmentedReduceExecutor } from './webgpu/executor.js';

registerExecutor('reduce', 'cpu', cpuSegmentedReduceExecutor);
registerExecutor('reduce', 'webgpu', webgpuSegmentedReduceExecutor);

/** The guarantees type of an environment. */
type GuaranteesOf<E> = E extends { guarantees: infer G } ? G : {};

/** A plan that read a host per-segment array is not reused: the array may have changed. */
const reusable = (plan: SegmentedReducePlan) => {
  const { segmentSizes, op, initialValue } = plan.facts;
  return segmentSizes.hostValues === undefined && op.hostValues === undefined && initialValue?.hostValues === undefined;
};

async function reduceWith(userArgs: object, entry: string, env: Env | undefined, build: () => SegmentedReduceArgs): Promise<void> {
  const environment = environmentOf(env);
  await runInEnvironment(planFor(userArgs, entry, segmentedReduceFields, environment, () => planSegmentedReduce(build(), environment), reusable));
}

const withOp = (args: SegmentedReduceArgsWithoutOp, op: ReduceOp): SegmentedReduceArgs => {
  if (typeof args === 'object' && args !== null && 'op' in args) throw new SegkitUsageError(`op: ${op}() fixes the op; leave the field out or call reduce()`);
  return { ...args, op: p.constantOption(op) };
};

/**
 * Segmented reduction (CUB's `DeviceSegmentedReduce`): for each segment, the sum, the minimum or
 * the maximum of its values, or the extreme and its segment-local index (`argMin`, `argMax`).
 * Parameters are typed (constant, uniform or per-segment, with static bounds), the op may differ
 * per segment, and under the default `determinism: 'run-to-run'` an f32 sum has the same bits on
 * every backend and every run (one fixed summation order, described in the README).
 *
 * An empty segment gives `initialValue`, else the identity (0; +Infinity / -Infinity for f32 min /
 * max; the type's largest / smallest integer) and the index -1 (0xFFFFFFFF as u32). Ties go to the
 * smaller index; NaN orders above +Infinity; -0 equals +0; integer sums wrap modulo 2^32.
 *
 * @example
 * ```ts
 * const plan = DeviceSegmentedReduce.plan({
 *   valuesIn, valuesOut, indicesOut,
 *   segmentSizes: p.perSegment(rowLengths, { max: 4096 }),
 *   op: p.constantOption('argMax'),
 *   numSegments: p.uniform(rows),
 * });
 * console.log(plan.variant, plan.explain());
 * await plan.run(plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined);
 * ```
 */
export const DeviceSegmentedReduce = {
  /** Plans a call on the host (no device work); run it with `plan.run(tempStorage?)`. */
  plan<const Args extends SegmentedReduceArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>, env?: E): SegmentedReducePlan {
    return planSegmentedReduce(args as unknown as SegmentedReduceArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-segment arrays).
   *
   * @example
   * ```ts
   * await DeviceSegmentedReduce.reduce({ valuesIn, valuesOut, segmentSizes: p.constant(128), op: p.constantOption('sum'), numSegments: p.uniform(rows) });
   * ```
   */
  async reduce<const Args extends SegmentedReduceArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await reduceWith(args, 'reduce', env, () => args as unknown as SegmentedReduceArgs);
  },

  /** `reduce` with `op` fixed to `'sum'`. */
  async sum<const Args extends SegmentedReduceArgsShapeWithoutOp, const E extends Env = Env<{}>>(args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await reduceWith(args, 'sum', env, () => withOp(args as unknown as SegmentedReduceArgsWithoutOp, 'sum'));
  },

  /** `reduce` with `op` fixed to `'min'`. */
  async min<const Args extends SegmentedReduceArgsShapeWithoutOp, const E extends Env = Env<{}>>(args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await reduceWith(args, 'min', env, () => withOp(args as unknown as SegmentedReduceArgsWithoutOp, 'min'));
  },

  /** `reduce` with `op` fixed to `'max'`. */
  async max<const Args extends SegmentedReduceArgsShapeWithoutOp, const E extends Env = Env<{}>>(args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await reduceWith(args, 'max', env, () => withOp(args as unknown as SegmentedReduceArgsWithoutOp, 'max'));
  },

  /** `reduce` with `op` fixed to `'argMin'`: the smallest value and its index (`indicesOut` required). */
  async argMin<const Args extends SegmentedReduceArgsShapeWithoutOp & { indicesOut: object }, const E extends Env = Env<{}>>(
    args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>,
    env?: E,
  ): Promise<void> {
    await reduceWith(args, 'argMin', env, () => withOp(args as unknown as SegmentedReduceArgsWithoutOp, 'argMin'));
  },

  /** `reduce` with `op` fixed to `'argMax'`: the largest value and its index (`indicesOut` required). */
  async argMax<const Args extends SegmentedReduceArgsShapeWithoutOp & { indicesOut: object }, const E extends Env = Env<{}>>(
    args: Args & ValidateSegmentedReduceArgs<Args, GuaranteesOf<E>>,
    env?: E,
  ): Promise<void> {
    await reduceWith(args, 'argMax', env, () => withOp(args as unknown as SegmentedReduceArgsWithoutOp, 'argMax'));
  },
} as const;
