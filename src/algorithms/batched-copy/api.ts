import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { checkFields } from '../../params/fields.js';
import type { GuaranteesOf } from '../batched-top-k/args.js';
import { type BatchedCopyArgs, type BatchedCopyArgsShape, type ValidateBatchedCopyArgs, batchedCopyFields, batchedCopyRequired } from './args.js';
import { cpuBatchedCopyExecutor } from './cpu/executor.js';
import { type BatchedCopyPlan, planBatchedCopy } from './plan.js';
import { webgpuBatchedCopyExecutor } from './webgpu/executor.js';

registerExecutor('copy', 'cpu', cpuBatchedCopyExecutor);
registerExecutor('copy', 'webgpu', webgpuBatchedCopyExecutor);

/** A plan that read a host per-buffer array is not reused: the array may have changed. */
const reusable = (plan: BatchedCopyPlan) => {
  const { segmentSizes, sourceOffsets, destinationOffsets } = plan.facts;
  return segmentSizes.hostValues === undefined && sourceOffsets.hostValues === undefined && destinationOffsets.hostValues === undefined;
};

/**
 * Batched copy (CUB's `DeviceMemcpy::Batched` / `DeviceCopy::Batched`): buffer `i` copies `sizes[i]`
 * elements from `source[sourceOffsets[i]..]` to `destination[destinationOffsets[i]..]`, bit for bit.
 * Sizes and offsets are typed parameters (constant, uniform or per-buffer, host or device-only).
 * Under `guaranteeChecks: 'validate'` a range past its array or two overlapping destination ranges
 * are rejected, naming the parameter and the buffer, and nothing is written: on the host when
 * planned where every value is known there, else on the device (reported at the next
 * `synchronize()`, `download()` or `plan.checked()`).
 *
 * @example
 * ```ts
 * const plan = DeviceBatchedCopy.plan({
 *   source, destination,
 *   sourceOffsets: p.perSegment(from), destinationOffsets: p.perSegment(to),
 *   sizes: p.perSegment(lengths, { max: 256 }),
 *   numBuffers: p.uniform(lengths.length),
 * });
 * console.log(plan.variant, plan.explain());
 * await plan.run(plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined);
 * ```
 */
export const DeviceBatchedCopy = {
  /** Plans a call on the host (no device work); run it with `plan.run(tempStorage?)`. */
  plan<const Args extends BatchedCopyArgsShape | object, const E extends Env = Env<{}>>(args: ValidateBatchedCopyArgs<Args, GuaranteesOf<E>>, env?: E): BatchedCopyPlan {
    return planBatchedCopy(args as BatchedCopyArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-buffer arrays).
   *
   * @example
   * ```ts
   * await DeviceBatchedCopy.copy({ source, destination, sourceOffsets: p.constant(0), destinationOffsets: p.perSegment([0, 64]), sizes: p.constant(64), numBuffers: p.constant(2) });
   * ```
   */
  async copy<const Args extends BatchedCopyArgsShape | object, const E extends Env = Env<{}>>(args: ValidateBatchedCopyArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    if (typeof args === 'object' && args !== null) checkFields('args', args, batchedCopyFields, batchedCopyRequired);
    const environment = environmentOf(env);
    await runInEnvironment(planFor(args, 'copy', batchedCopyFields, environment, () => planBatchedCopy(args as BatchedCopyArgs, environment), reusable));
  },
} as const;
