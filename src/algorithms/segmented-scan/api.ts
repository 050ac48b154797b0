import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { SegkitUsageError } from '../../errors.js';
import { p } from '../../params/param.js';
import type { GuaranteesOf } from '../batched-top-k/args.js';
import type { ScanArgs, ScanArgsShape, ScanArgsShapeWithoutOpAndMode, ScanArgsWithoutOpAndMode, ValidateScanArgs } from './args.js';
import type { ScanMode, ScanOp } from './order.js';
import { type ScanPlan, planScan, scanArgFields } from './plan.js';
import { cpuScanExecutor } from './cpu/executor.js';
import { webgpuScanExecutor } from './webgpu/executor.js';

registerExecutor('scan', 'cpu', cpuScanExecutor);
registerExecutor('scan', 'webgpu', webgpuScanExecutor);

/** A plan that read a host per-segment array is not reused: the array may have changed. */
const reusable = (plan: ScanPlan) => {
  const { segmentSizes, op, mode, initialValue } = plan.facts;
  return segmentSizes.hostValues === undefined && op.hostValues === undefined && mode.hostValues === undefined && initialValue?.hostValues === undefined;
};

async function scanWith(userArgs: object, entry: string, env: Env | undefined, build: () => ScanArgs): Promise<void> {
  const environment = environmentOf(env);
  await runInEnvironment(planFor(userArgs, entry, scanArgFields, environment, () => planScan(build(), environment), reusable));
}

/** The shorthand with `op` and `mode` fixed. */
function shorthand(op: ScanOp, mode: ScanMode, entry: string) {
  return async <const Args extends ScanArgsShapeWithoutOpAndMode, const E extends Env = Env<{}>>(args: Args & ValidateScanArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> => {
    for (const field of ['op', 'mode'] as const) {
      if (typeof args === 'object' && args !== null && field in args) throw new SegkitUsageError(`args: unknown field '${field}' (${entry} fixes op and mode)`);
    }
    await scanWith(args, entry, env, () => ({ ...(args as ScanArgsWithoutOpAndMode), op: p.constantOption(op), mode: p.constantOption(mode) }));
  };
}

/**
 * Segmented scan (prefix sum, running min or max) of each segment of `valuesIn` into the same
 * positions of `valuesOut`: `'inclusive'` (output j combines items 0..j) or `'exclusive'` (output 0
 * is `initialValue` or the identity, output j the inclusive output j - 1). `op`, `mode` and
 * `initialValue` may be constant, uniform or per-segment, on the host or the device.
 *
 * Results are bit-identical on every backend and variant under the default
 * `determinism: 'run-to-run'`: f32 sums follow one association order fixed by the segment alone
 * (tiles of 2048 items, lanes of 8; subnormals flushed, NaN written as 0x7fc00000); min and max order
 * values as top-k does (NaN above +Infinity, -0 equal to +0, ties keep the earlier element's bits);
 * integer sums wrap modulo 2^32. `'not-guaranteed'` lets f32 sums take each backend's fastest order.
 *
 * @example A prefix sum of ragged rows:
 * ```ts
 * const plan = DeviceSegmentedScan.plan({
 *   valuesIn, valuesOut,
 *   segmentSizes: p.perSegment(rowLengths, { min: 0, max: 4096 }),
 *   numSegments: p.uniform(rowLengths.length),
 *   op: p.constantOption('sum'),
 *   mode: p.constantOption('exclusive'),
 * });
 * console.log(plan.variant, plan.explain());
 * await plan.run(plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined);
 * ```
 *
 * @example One segment whose item count an earlier kernel wrote on the device (no read-back):
 * ```ts
 * // count: a 1-element u32 DeviceArray written on the device, e.g. by a stream compaction
 * await DeviceSegmentedScan.inclusiveSum({
 *   valuesIn, valuesOut,
 *   numSegments: p.constant(1),
 *   segmentSizes: p.uniform(count, { max: valuesIn.length }),
 * }, env({ backend }));
 * ```
 */
export const DeviceSegmentedScan = {
  /** Plans a call on the host (no device work); run it with `plan.run(tempStorage?)`. */
  plan<const Args extends ScanArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateScanArgs<Args, GuaranteesOf<E>>, env?: E): ScanPlan {
    return planScan(args as ScanArgs, env ?? makeEnv());
  },

  /**
   * Plans and runs a call with temporary storage from the environment. Calls with the same args
   * object and environment reuse the plan (unless it read host per-segment arrays).
   */
  async scan<const Args extends ScanArgsShape, const E extends Env = Env<{}>>(args: Args & ValidateScanArgs<Args, GuaranteesOf<E>>, env?: E): Promise<void> {
    await scanWith(args, 'scan', env, () => args as ScanArgs);
  },

  /** `scan` with `op: 'sum'`, `mode: 'inclusive'`. */
  inclusiveSum: shorthand('sum', 'inclusive', 'inclusiveSum'),
  /** `scan` with `op: 'sum'`, `mode: 'exclusive'`. */
  exclusiveSum: shorthand('sum', 'exclusive', 'exclusiveSum'),
  /** `scan` with `op: 'min'`, `mode: 'inclusive'`: the running minimum. */
  inclusiveMin: shorthand('min', 'inclusive', 'inclusiveMin'),
  /** `scan` with `op: 'max'`, `mode: 'inclusive'`: the running maximum. */
  inclusiveMax: shorthand('max', 'inclusive', 'inclusiveMax'),
} as const;
