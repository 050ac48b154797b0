import type { DeviceArray } from '../../backends/backend.js';
import { environmentOf, planFor, runInEnvironment } from '../../dispatch/environment.js';
import { registerExecutor } from '../../dispatch/registry.js';
import { type Env, env as makeEnv } from '../../env/env.js';
import { p } from '../../params/param.js';
import { checkFields } from '../../params/fields.js';
import {
  type GuaranteesOf,
  type TopKArgs,
  type TopKArgsShape,
  type TopKEntryPoint,
  type TopKOptions,
  type TopKResult,
  type ValidateTopKArgs,
  type ValidateTopKOptions,
  type WeightsOf,
  topKFieldSets,
  topKOptionFields,
  topKOptionRequired,
} from './args.js';
import { describe } from '../../backends/backend.js';
import { SegkitUsageError } from '../../errors.js';
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

/** Checks the one-call form's options on the host, naming the field; returns the row length. */
function rowLengthOf(scores: DeviceArray, options: TopKOptions): number {
  if (typeof options !== 'object' || options === null) throw new SegkitUsageError(`topk options: expected an object; got ${describe(options)}`);
  checkFields('topk options', options, topKOptionFields, topKOptionRequired);
  for (const name of ['rows', 'k'] as const) {
    const value = options[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 4294967295) {
      throw new SegkitUsageError(`${name}: expected an integer in [1, 4294967295]; got ${describe(value)}`);
    }
  }
  if (options.largest !== undefined && typeof options.largest !== 'boolean') throw new SegkitUsageError(`largest: expected true or false; got ${describe(options.largest)}`);
  if (scores.length % options.rows !== 0) {
    throw new SegkitUsageError(`rows: ${options.rows} rows do not divide scores' ${scores.length} elements into equal rows`);
  }
  return scores.length / options.rows;
}

/** p.constant of a value known only at run time (checked by rowLengthOf): the plan specializes on it, as for a literal. */
const constantOf = p.constant as unknown as (value: number) => TopKArgs['k'];

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

  /**
   * The common case in one call, as `torch.topk(scores, k)`: the top `k` of each of `rows` equal
   * rows of `scores`, with their indices and (optionally) MoE routing weights. Outputs not given in
   * `options` are allocated on `scores`' backend and returned; the caller owns them (`destroy()`).
   * It plans and runs as {@link DeviceBatchedTopK.select} does (plans kept per backend); a call
   * with new output arrays plans afresh, so in a loop pass `keysOut`/`indicesOut`/`weightsOut`,
   * or use `plan` and `run`.
   *
   * @example
   * ```ts
   * const { keys, indices, weights } = await DeviceBatchedTopK.topk(scores, { rows: tokens, k: 2, weights: 'softmax' });
   * ```
   */
  async topk<const D extends 'f32' | 'i32' | 'u32', const Options extends Partial<Record<keyof TopKOptions, unknown>> | object>(
    scores: DeviceArray<D>,
    options: ValidateTopKOptions<Options>,
    env?: Env,
  ): Promise<TopKResult<DeviceArray<D>, WeightsOf<Options>>> {
    const opts = options as TopKOptions;
    const rowLength = rowLengthOf(scores, opts);
    const weights = typeof opts.weights === 'string' ? { kind: opts.weights } : opts.weights;
    const backend = scores.backend;
    const allocated: DeviceArray[] = [];
    const output = <A extends DeviceArray>(given: A | undefined, make: () => A): A => {
      if (given !== undefined) return given;
      const made = make();
      allocated.push(made);
      return made;
    };
    try {
      const length = opts.rows * opts.k;
      const keysOut = output(opts.keysOut as DeviceArray<D> | undefined, () => backend.alloc(scores.dtype, length));
      const indicesOut = output(opts.indicesOut, () => backend.alloc('u32', length));
      const weightsOut = weights === undefined ? opts.weightsOut : output(opts.weightsOut, () => backend.alloc('f32', length));
      const args: TopKArgs = {
        keysIn: scores,
        keysOut,
        valuesOut: indicesOut,
        weights,
        weightsOut,
        segmentSizes: constantOf(rowLength),
        k: constantOf(opts.k),
        selectDirection: p.constantOption(opts.largest === false ? 'min' : 'max'),
        numSegments: p.uniform(opts.rows),
      };
      await selectWith(args, 'select', env, () => args);
      return { keys: keysOut, indices: indicesOut, weights: weightsOut as WeightsOf<Options> };
    } catch (error) {
      for (const array of allocated) array.destroy();
      throw error;
    }
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
