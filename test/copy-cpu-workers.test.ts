import { DeviceBatchedCopy, cpuBackend, env, p } from '../src/index.js';
import { defineCopyConformance } from './conformance/copy.suite.js';

interface WorkerStats {
  workgroupsOnWorkers: number;
}
const workerStats = (backend: unknown) => (backend as { workerStats(): WorkerStats }).workerStats();

/** A CPU backend whose worker thread has joined a copy launch (workers start, and load the kernels, asynchronously). */
async function warmedUp() {
  const backend = cpuBackend({ workers: 1, parallelThreshold: 0 });
  const source = backend.upload(Float32Array.from({ length: 512 * 64 }, (_, i) => Math.sin(i)));
  const destination = backend.alloc('f32', 512 * 64);
  const args = { source, destination, sizes: p.constant(64), sourceOffsets: p.perSegment(Array.from({ length: 512 }, (_, i) => i * 64)), destinationOffsets: p.perSegment(Array.from({ length: 512 }, (_, i) => (511 - i) * 64)), numBuffers: p.constant(512) };
  const environment = env({ backend });
  const deadline = Date.now() + 30_000;
  while (workerStats(backend).workgroupsOnWorkers === 0 && Date.now() < deadline) {
    await DeviceBatchedCopy.copy(args, environment);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (workerStats(backend).workgroupsOnWorkers === 0) throw new Error('the worker never took a copy workgroup');
  source.destroy();
  destination.destroy();
  return backend;
}

// The conformance suite with every launch of more than one workgroup split between the calling
// thread and a worker thread (parallelThreshold 0).
defineCopyConformance('cpu, 1 worker, every launch parallel', warmedUp);
