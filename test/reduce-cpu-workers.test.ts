import { describe, expect, it } from 'vitest';
import { DeviceSegmentedReduce, cpuBackend, env, p } from '../src/index.js';
import { defineReduceConformance } from './conformance/reduce.suite.js';

interface WorkerStats {
  workgroupsOnWorkers: number;
}
const workerStats = (backend: unknown) => (backend as { workerStats(): WorkerStats }).workerStats();

/** A CPU backend whose worker thread has joined a reduce launch (workers start, and load the kernels, asynchronously). */
async function warmedUp(options: Parameters<typeof cpuBackend>[0]) {
  const backend = cpuBackend(options);
  const rows = 512;
  const valuesIn = backend.upload(Float32Array.from({ length: rows * 256 }, (_, i) => Math.sin(i)));
  const valuesOut = backend.alloc('f32', rows);
  const args = { valuesIn, valuesOut, segmentSizes: p.constant(256), op: p.constantOption('sum'), numSegments: p.constant(rows) };
  const environment = env({ backend });
  const deadline = Date.now() + 30_000;
  while (workerStats(backend).workgroupsOnWorkers === 0 && Date.now() < deadline) {
    await DeviceSegmentedReduce.reduce(args, environment);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  valuesIn.destroy();
  valuesOut.destroy();
  return backend;
}

// The conformance suite with every launch of more than one workgroup split between the calling
// thread and a worker thread (parallelThreshold 0).
defineReduceConformance('cpu, 1 worker, every launch parallel', () => warmedUp({ workers: 1, parallelThreshold: 0 }));

describe('reduce on CPU workers', () => {
  it('workers run reduce workgroups, with the bits of the single-threaded backend, run after run', async () => {
    const parallel = await warmedUp({ workers: 1, parallelThreshold: 0 });
    expect(workerStats(parallel).workgroupsOnWorkers).toBeGreaterThan(0);
    const single = cpuBackend({ workers: 0 });
    const values = Float32Array.from({ length: 400_000 }, (_, i) => Math.sin(i * 78.233) * 10 ** (i % 7));
    const shapes: [number, number][] = [[1, 400_000], [64, 6000], [4000, 100], [40_000, 10]];
    for (const [rows, cols] of shapes) {
      const outputs: string[] = [];
      for (const backend of [single, parallel, parallel]) {
        const valuesIn = backend.upload(values.subarray(0, rows * cols));
        const valuesOut = backend.alloc('f32', rows);
        const indicesOut = backend.alloc('u32', rows);
        const ops = Array.from({ length: rows }, (_, i) => (['sum', 'argMax', 'min'] as const)[i % 3]!);
        await DeviceSegmentedReduce.reduce({ valuesIn, valuesOut, indicesOut, segmentSizes: p.uniform(cols), op: p.perSegmentOption(ops, ['sum', 'argMax', 'min']), numSegments: p.uniform(rows) }, env({ backend }));
        outputs.push(JSON.stringify([Array.from(new Uint32Array((await backend.download(valuesOut)).buffer)), Array.from(await backend.download(indicesOut))]));
        valuesIn.destroy();
        valuesOut.destroy();
        indicesOut.destroy();
      }
      expect(outputs[1]).toBe(outputs[0]);
      expect(outputs[2]).toBe(outputs[0]);
    }
    single.destroy();
    parallel.destroy();
  }, 120_000);
});
