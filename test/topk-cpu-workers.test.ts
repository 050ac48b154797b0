import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, cpuBackend, env, p } from '../src/index.js';
import { testBackends } from '../src/testing.js';
import { deviceMemory } from '../src/backends/cpu/memory.js';
import { referenceTopK } from '../src/algorithms/batched-top-k/reference.js';
import { defineTopKConformance } from './conformance/topk.suite.js';

interface WorkerStats {
  workers: number;
  parallelLaunches: number;
  workgroupsOnWorkers: number;
}
const workerStats = (backend: unknown) => (backend as { workerStats(): WorkerStats }).workerStats();

/**
 * A CPU backend with one worker thread that has joined a launch, every launch of more than one
 * workgroup split between threads: segkit/testing's 'cpu-workers' (workers start, and load the
 * kernels, asynchronously; it waits for them).
 */
const [cpuWorkers] = (await testBackends({ only: ['cpu-workers'], workers: 1 })).entries;
const warmedUp = () => cpuWorkers!.create();

// The conformance suite with every launch of more than one workgroup split between the calling
// thread and a worker thread (parallelThreshold 0), so the atomics and staging paths run.
defineTopKConformance(`${cpuWorkers!.name}, 1 worker, every launch parallel`, warmedUp);

describe('cpuBackend workers', () => {
  it('reports parallelism; workers: 0 runs on the calling thread with unshared memory', () => {
    const single = cpuBackend({ workers: 0 });
    expect(single.capabilities.parallelism).toBe(1);
    expect(workerStats(single).workers).toBe(0);
    single.destroy();
    const two = cpuBackend({ workers: 2 });
    expect(two.capabilities.parallelism).toBe(3);
    two.destroy();
  });

  it('rejects a bad worker count', () => {
    expect(() => cpuBackend({ workers: -1 })).toThrow(/workers/);
    expect(() => cpuBackend({ workers: 1.5 })).toThrow(/workers/);
  });

  it('workers run workgroups, and results match the single-threaded backend bit for bit, sorted and unsorted, run after run', async () => {
    const parallel = await warmedUp();
    expect(workerStats(parallel).workgroupsOnWorkers).toBeGreaterThan(0);
    const single = cpuBackend({ workers: 0 });
    // One long segment (many radix tiles updating one segment's counters) and many rows.
    const shapes: [number, number, number][] = [[1, 200_000, 300], [64, 9000, 100], [300, 700, 8]];
    for (const [rows, cols, k] of shapes) {
      const keys = new Float32Array(rows * cols);
      for (let i = 0; i < keys.length; i++) keys[i] = Math.round(Math.sin(i * 78.233) * 1000) / 7; // many ties
      for (const ordering of ['sorted', 'unsorted'] as const) {
        const outputs: string[] = [];
        for (const backend of [single, parallel, parallel]) {
          const keysIn = backend.upload(keys);
          const keysOut = backend.alloc('f32', rows * k);
          const valuesOut = backend.alloc('i32', rows * k);
          const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) };
          await DeviceBatchedTopK.select(args, env({ backend, requirements: { outputOrdering: ordering } }));
          outputs.push(JSON.stringify([Array.from(await backend.download(keysOut)), Array.from(await backend.download(valuesOut))]));
          keysIn.destroy();
          keysOut.destroy();
          valuesOut.destroy();
        }
        expect(outputs[1]).toBe(outputs[0]);
        expect(outputs[2]).toBe(outputs[0]);
      }
    }
    single.destroy();
    parallel.destroy();
  }, 60_000);
});

describe('radix-select launches on the worker pool', () => {
  it('stay on the calling thread below a million key reads (128x4096 k=64), and split past it', async () => {
    const backend = cpuBackend({ workers: 1 });
    const run = async (rows: number, cols: number, k: number) => {
      const keysIn = backend.upload(Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 12.9898) * 43758.5453 % 1));
      const keysOut = backend.alloc('f32', rows * k);
      const valuesOut = backend.alloc('i32', rows * k);
      const environment = env({ backend, tuning: { variant: 'radix-select' } });
      const before = workerStats(backend).parallelLaunches;
      await DeviceBatchedTopK.select({ keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) }, environment);
      keysIn.destroy();
      keysOut.destroy();
      valuesOut.destroy();
      return workerStats(backend).parallelLaunches - before;
    };
    expect(await run(128, 4096, 64)).toBe(0);
    // Pass 0 over 2M keys (the pool takes it whether or not the worker has joined yet).
    expect(await run(512, 4096, 64)).toBeGreaterThan(0);
    backend.destroy();
  });
});

describe('a top-k plan run again on the CPU', () => {
  for (const workers of [0, 1]) {
    it(`reads the keys anew, and takes other temporary storage (never the last run's) (${workers} workers)`, async () => {
      const backend = cpuBackend({ workers, parallelThreshold: 0 });
      const [rows, cols, k] = [3, 5000, 40];
      const keysFor = (seed: number) => Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 12.9898 + seed) * 43758.5453 % 1);
      const keysIn = backend.upload(keysFor(1));
      const keysOut = backend.alloc('f32', rows * k);
      const valuesOut = backend.alloc('i32', rows * k);
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) },
        env({ backend, tuning: { variant: 'radix-select' } }),
      );
      expect(plan.tempStorageBytes).toBeGreaterThan(0);
      const expectResults = async (keys: Float32Array) => {
        const expected = referenceTopK({
          keyType: 'f32',
          keys: new Uint32Array(keys.buffer),
          segmentStarts: [0, cols, 2 * cols],
          segmentSizes: [cols, cols, cols],
          k: [k, k, k],
          directions: ['max', 'max', 'max'],
          kMax: k,
          withValues: true,
        });
        expect(Array.from(new Uint32Array((await backend.download(keysOut)).buffer))).toEqual(Array.from(expected.keys));
        expect(Array.from(await backend.download(valuesOut))).toEqual(Array.from(expected.values, (v) => v | 0));
      };
      const firstTemp = backend.alloc('u8', plan.tempStorageBytes);
      await plan.run(firstTemp);
      await expectResults(keysFor(1));

      // New keys in the same array and another temporary storage array, then the first one again.
      deviceMemory(keysIn).f32.set(keysFor(2));
      const secondTemp = backend.alloc('u8', plan.tempStorageBytes);
      await plan.run(secondTemp);
      await expectResults(keysFor(2));
      deviceMemory(keysIn).f32.set(keysFor(3));
      await plan.run(firstTemp);
      await expectResults(keysFor(3));

      // A run never touches temporary storage it was not given: the first array's memory, once
      // destroyed, goes to the next allocation (with workers, device memory is reused).
      firstTemp.destroy();
      const pattern = Uint32Array.from({ length: Math.ceil(plan.tempStorageBytes / 4) }, (_, i) => 0x5eed0000 + i);
      const bystander = backend.upload(pattern);
      await plan.run(secondTemp);
      await expectResults(keysFor(3));
      expect(Array.from(await backend.download(bystander))).toEqual(Array.from(pattern));
      backend.destroy();
    });
  }
});
