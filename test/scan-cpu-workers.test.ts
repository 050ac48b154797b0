import { describe, expect, it } from 'vitest';
import { type Backend, DeviceSegmentedScan, cpuBackend, env, p } from '../src/index.js';
import { defineScanConformance } from './conformance/scan.suite.js';

interface WorkerStats {
  workers: number;
  workgroupsOnWorkers: number;
}
const workerStats = (backend: unknown) => (backend as { workerStats(): WorkerStats }).workerStats();

/** A CPU backend whose worker thread has run scan workgroups (workers load the kernels asynchronously). */
async function warmedUp(options: Parameters<typeof cpuBackend>[0]): Promise<Backend> {
  const backend = cpuBackend(options);
  const valuesIn = backend.upload(new Float32Array(1 << 16).map((_, i) => i % 3));
  const valuesOut = backend.alloc('f32', 1 << 16);
  const args = { valuesIn, valuesOut, segmentSizes: p.constant(256), numSegments: p.constant(256) };
  const environment = env({ backend });
  const deadline = Date.now() + 30_000;
  while (workerStats(backend).workgroupsOnWorkers === 0 && Date.now() < deadline) {
    await DeviceSegmentedScan.inclusiveSum(args, environment);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  valuesIn.destroy();
  valuesOut.destroy();
  return backend;
}

// The conformance suite with every launch of more than one workgroup split between the calling
// thread and a worker thread (parallelThreshold 0).
defineScanConformance('cpu, 1 worker, every launch parallel', () => warmedUp({ workers: 1, parallelThreshold: 0 }));

describe('scan on cpuBackend workers', () => {
  it('workers take workgroups, and every variant gives the bits of the single-threaded backend, run after run', async () => {
    const parallel = await warmedUp({ workers: 1, parallelThreshold: 0 });
    const single = cpuBackend({ workers: 0 });
    const values = new Float32Array(300_000).map((_, i) => Math.sin(i * 0.37) * 1000);
    // Workgroups are taken from a shared counter by the calling thread and the worker alike, so a
    // short launch may end before the worker takes any (seen in CI): the worker must have taken part
    // over the whole test, as in the reduce and top-k worker tests.
    const onWorkersBefore = workerStats(parallel).workgroupsOnWorkers;
    for (const [rows, cols] of [[1, 300_000], [300, 1000], [30_000, 10]] as const) {
      for (const variant of ['thread', 'workgroup', 'multi-workgroup'] as const) {
        const outputs: string[] = [];
        for (const backend of [single, parallel, parallel]) {
          const valuesIn = backend.upload(values);
          const valuesOut = backend.alloc('f32', values.length);
          await DeviceSegmentedScan.inclusiveSum({ valuesIn, valuesOut, segmentSizes: p.uniform(cols), numSegments: p.uniform(rows) }, env({ backend, tuning: { variant } }));
          outputs.push(Buffer.from((await backend.download(valuesOut)).buffer).toString('base64'));
          valuesIn.destroy();
          valuesOut.destroy();
        }
        expect(outputs[1]).toBe(outputs[0]);
        expect(outputs[2]).toBe(outputs[0]);
      }
    }
    expect(workerStats(parallel).workgroupsOnWorkers).toBeGreaterThan(onWorkersBefore);
    single.destroy();
    parallel.destroy();
  }, 120_000);
});
