import type { Backend } from '../backends/backend.js';
import { SegkitUsageError } from '../errors.js';
import type { Executor, SegmentedRun } from './problem.js';

/*
 * Executors by algorithm and backend kind. Each algorithm's API module registers its executors
 * (its CPU kernels, its WGSL programs); the dispatch layer looks them up by the backend's name, so
 * no algorithm imports a backend's internals into its plan and no backend knows any algorithm.
 */

const executors = new Map<string, Executor<never>>();

const key = (algorithm: string, backendName: string) => `${algorithm}@${backendName}`;

/** Makes `executor` run `algorithm`'s plans on backends named `backendName`. */
export function registerExecutor<Run extends SegmentedRun>(algorithm: string, backendName: Backend['name'], executor: Executor<Run>): void {
  executors.set(key(algorithm, backendName), executor as Executor<never>);
}

/** The executor of `algorithm` for `backend`, or a usage error naming both. */
export function executorFor(algorithm: string, backend: Backend): Executor<SegmentedRun> {
  const executor = executors.get(key(algorithm, backend.name));
  if (executor === undefined) throw new SegkitUsageError(`no ${algorithm} executor is registered for the '${backend.name}' backend`);
  return executor as unknown as Executor<SegmentedRun>;
}
