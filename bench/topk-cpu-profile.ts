/**
 * Where a CPU top-k call's time goes, for one dense shape: the environment API with the downloads of
 * both outputs (what bench/topk-cpu.ts times), `plan.run` alone, and each launch's kernel alone over
 * its whole grid on the calling thread (no framework, no workers), with and without worker threads.
 * Imports segkit's sources (the kernels are internal). Median of 15 batches of 10 calls after 20
 * warm-up calls, ms per call.
 *
 *   SHAPE=4096x256x8 node --import tsx bench/topk-cpu-profile.ts     (rows x columns x k)
 *   VARIANT=reduce ... forces a variant; WORKERS=0,1 picks the pools (default: both)
 *   CLOCK=cpu ... times with the process's CPU time (all threads) instead of the wall clock: with
 *   WORKERS=0 that is the calling thread's, steadier on a machine other work shares
 */
import { type SegmentedRun } from '../src/dispatch/problem.js';
import { WorkgroupMemory } from '../src/backends/cpu/kernel.js';
import { type CpuBackend, cpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { DeviceBatchedTopK } from '../src/algorithms/batched-top-k/api.js';
import { cpuTopKExecutor } from '../src/algorithms/batched-top-k/cpu/executor.js';
import { TopKContext } from '../src/algorithms/batched-top-k/cpu/common.js';
import { runReduce, runReduceMerge } from '../src/algorithms/batched-top-k/cpu/reduce.js';
import { runRadixFallback, runRadixFilter, runRadixFinalize, runRadixHistogram, runRadixInit } from '../src/algorithms/batched-top-k/cpu/radix-select.js';
import { runSingleTile } from '../src/algorithms/batched-top-k/cpu/single-tile.js';
import { runRowRadix } from '../src/algorithms/batched-top-k/cpu/row-radix.js';
import { env } from '../src/env/env.js';
import { p } from '../src/params/param.js';
import type { TopKRun } from '../src/algorithms/batched-top-k/problem.js';

const [rows, cols, k] = (process.env.SHAPE ?? '4096x256x8').split('x').map(Number) as [number, number, number];
const variant = process.env.VARIANT;
const pools = (process.env.WORKERS ?? '0,1').split(',').map(Number);
const now =
  process.env.CLOCK === 'cpu'
    ? () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1000;
      }
    : () => performance.now();

const bodies: Record<string, (w: number, n: number, shared: WorkgroupMemory, params: { ctx: TopKContext; pass: number }) => void> = {
  reduce: runReduce,
  'reduce-merge': runReduceMerge,
  'single-tile': runSingleTile,
  'radix-init': runRadixInit,
  'radix-histogram': runRadixHistogram,
  'radix-fallback': runRadixFallback,
  'radix-filter': runRadixFilter,
  'radix-finalize': runRadixFinalize,
  'row-radix': runRowRadix,
};

async function median(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  const times: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t0 = now();
    for (let i = 0; i < 10; i++) await fn();
    times.push((now() - t0) / 10);
  }
  times.sort((a, b) => a - b);
  return times[7]!;
}

const data = new Float32Array(rows * cols).map(() => Math.random() * 2 - 1);
for (const workers of pools) {
  const backend: CpuBackend = cpuBackend({ workers });
  const keysIn = backend.upload(data);
  const keysOut = backend.alloc('f32', rows * k);
  const valuesOut = backend.alloc('i32', rows * k);
  const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) };
  const environment = env({ backend, tuning: variant === undefined ? {} : { variant: variant as never } });
  const plan = DeviceBatchedTopK.plan(args as never, environment);
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  const select = await median(async () => {
    await DeviceBatchedTopK.select(args as never, environment);
    await backend.download(keysOut);
    await backend.download(valuesOut);
  });
  const run = await median(() => plan.run(temp));
  // The run the executor gets, captured once, then each launch's body over its grid on this thread.
  let captured: SegmentedRun | undefined;
  const execute = cpuTopKExecutor.execute;
  (cpuTopKExecutor as { execute: typeof execute }).execute = (r) => {
    captured = r;
    execute.call(cpuTopKExecutor, r);
  };
  await plan.run(temp);
  (cpuTopKExecutor as { execute: typeof execute }).execute = execute;
  const ctx = new TopKContext(captured as TopKRun);
  // The launches in order (radix kernels carry state from one to the next), each timed on its own.
  const shared = new WorkgroupMemory(65536);
  const spent = new Float64Array(plan.launches.length);
  const sequence = () => {
    plan.launches.forEach((launch, i) => {
      const body = bodies[launch.kernel];
      if (body === undefined) throw new Error(`no body for ${launch.kernel}`);
      const params = { ctx, pass: launch.pass };
      const t0 = now();
      for (let w = 0; w < launch.grid; w++) body(w, launch.grid, shared, params);
      spent[i]! += now() - t0;
    });
  };
  const kernelTotal = await median(sequence);
  const calls = 20 + 150;
  const kernelTimes = plan.launches.map((launch, i) => `${launch.name}${launch.pass > 0 ? `#${launch.pass}` : ''} x${launch.grid}: ${(spent[i]! / calls).toFixed(3)}`);
  console.log(`${rows}x${cols} k=${k} ${plan.variant}, workers ${workers}: select+downloads ${select.toFixed(3)} ms, plan.run ${run.toFixed(3)} ms, kernels alone ${kernelTotal.toFixed(3)} ms (${kernelTimes.join(', ')})`);
  plan.destroy();
  backend.destroy();
}
