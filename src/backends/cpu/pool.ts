/*
 * Worker threads of the CPU emulator: a launch's workgroups are split between the main thread and a
 * small pool of workers, in chunks taken from a shared counter (so a worker still starting, or busy,
 * simply takes fewer). The launch stays synchronous: the main thread runs chunks itself, then waits
 * with Atomics.wait on the launch's completion counter.
 *
 * A worker rebuilds a kernel from its module (`CpuKernelParallel.module`, imported once per worker),
 * which exports `cpuWorkerLaunch(kernelId, shared, local)`. Device memory is in SharedArrayBuffers,
 * so the typed arrays inside `shared` are the same memory on every thread. `shared` (one object for
 * all launches of a run) is sent to a worker only when it differs from the last one it got.
 *
 * A worker keeps what it was sent until it collects garbage, which an idle worker hardly ever does
 * (shared memory adds no pressure to collect): device memory therefore comes from the backend's
 * SharedDeviceHeap (memory.ts), whose slabs outlive every array, so what a worker keeps holds no
 * memory that destroyed arrays gave back.
 *
 * Where `node:worker_threads` or SharedArrayBuffer is missing (browsers), there is no pool and every
 * launch runs on the calling thread.
 */
import type { CpuKernel, CpuKernelParallel } from './kernel.js';

/*
 * The parts of `node:worker_threads` and `node:os` used here, typed locally so that compiling segkit
 * needs no Node type declarations (browser builds).
 */
interface NodeWorker {
  unref(): void;
  on(event: 'error' | 'exit', listener: (value: unknown) => void): void;
  terminate(): Promise<number>;
}
interface NodeMessagePort {
  postMessage(value: unknown): void;
  close(): void;
  unref(): void;
}
interface WorkerThreads {
  Worker: new (
    code: string,
    options: { eval: boolean; workerData: unknown; transferList: NodeMessagePort[]; execArgv: string[] },
  ) => NodeWorker;
  MessageChannel: new () => { port1: NodeMessagePort; port2: NodeMessagePort };
  receiveMessageOnPort(port: NodeMessagePort): { message: unknown } | undefined;
}
interface NodeOs {
  availableParallelism?(): number;
  cpus(): unknown[];
}

/** `node:worker_threads`, when this runtime has it (synchronously, through process.getBuiltinModule). */
function workerThreads(): WorkerThreads | undefined {
  try {
    const processObject = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown; versions?: { node?: string } } }).process;
    if (typeof SharedArrayBuffer === 'undefined' || processObject?.versions?.node === undefined) return undefined;
    const module = processObject.getBuiltinModule?.('node:worker_threads') as WorkerThreads | undefined;
    return module;
  } catch {
    return undefined;
  }
}

/** Host threads available (node's availableParallelism), 1 where unknown. */
export function hostParallelism(): number {
  try {
    const processObject = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const os = processObject?.getBuiltinModule?.('node:os') as NodeOs | undefined;
    if (os !== undefined) return Math.max(1, os.availableParallelism !== undefined ? os.availableParallelism() : os.cpus().length);
  } catch {
    // fall through
  }
  const hardware = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return typeof hardware === 'number' && hardware > 0 ? hardware : 1;
}

/** Whether worker threads with shared memory can run here. */
export function workersSupported(): boolean {
  return workerThreads() !== undefined;
}

/** The worker's code (CommonJS, run with `eval: true`, so no file has to sit next to the build). */
const workerSource = String.raw`
'use strict';
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { signal, port } = workerData;
const modules = new Map();
const memories = new Map();
let shared = undefined;
let sharedId = -1;
function memoryOf(bytes) {
  let memory = memories.get(bytes);
  if (memory === undefined) {
    const buffer = new ArrayBuffer(Math.max(4, bytes));
    memory = { bytes, u32: new Uint32Array(buffer), i32: new Int32Array(buffer), f32: new Float32Array(buffer) };
    memories.set(bytes, memory);
  }
  return memory;
}
async function load(url) {
  let module = modules.get(url);
  if (module === undefined) {
    if (/\.[cm]?ts$/.test(url)) {
      // Running from TypeScript sources (tests, tsx): compile them in this worker too.
      // (tsx/esm/api resolves to its CommonJS build from here; its ES module build sits beside it.)
      const path = require('node:path');
      const { fileURLToPath, pathToFileURL } = require('node:url');
      const resolved = require.resolve('tsx/esm/api', { paths: [path.dirname(fileURLToPath(url)), process.cwd()] });
      const esm = resolved.replace(/\.cjs$/, '.mjs');
      const api = require('node:fs').existsSync(esm) ? await import(pathToFileURL(esm).href) : require(resolved);
      api.register();
    }
    module = await import(url);
    modules.set(url, module);
  }
  return module;
}
async function handle(job) {
  if (job.shared !== undefined) {
    shared = job.shared;
    sharedId = job.sharedId;
  }
  const control = job.control;
  const n = job.numWorkgroups;
  if (Atomics.load(control, 0) >= n) return; // the launch is taken already
  let module;
  try {
    module = modules.get(job.module) ?? (await load(job.module));
  } catch (error) {
    port.postMessage({ error: String(error && error.stack || error), fatal: true });
    throw error;
  }
  if (sharedId !== job.sharedId) throw new Error('internal: cpu worker without the launch context');
  const launch = module.cpuWorkerLaunch(job.kernel, shared, job.local);
  const memory = memoryOf(job.bytes);
  for (;;) {
    // Guided self-scheduling: chunks shrink with the work left, so no thread ends holding a big one.
    const first = Atomics.load(control, 0);
    if (first >= n) break;
    const end = Math.min(n, first + Math.max(job.chunk, Math.ceil((n - first) / job.split)));
    if (Atomics.compareExchange(control, 0, first, end) !== first) continue;
    try {
      for (let w = first; w < end; w++) launch.run(w, n, memory, launch.params);
    } catch (error) {
      if (Atomics.compareExchange(control, 2, 0, 1) === 0) port.postMessage({ error: String(error && error.stack || error) });
    }
    Atomics.add(control, 3, end - first);
    Atomics.add(control, 1, end - first);
    Atomics.notify(control, 1);
  }
}
async function main() {
  let seen = 0;
  for (;;) {
    Atomics.wait(signal, 0, seen);
    seen = Atomics.load(signal, 0);
    if (Atomics.load(signal, 1) !== 0) return;
    for (;;) {
      const message = receiveMessageOnPort(port);
      if (message === undefined) break;
      await handle(message.message);
    }
  }
}
main().then(() => process.exit(0), (error) => {
  try { port.postMessage({ error: String(error && error.stack || error), fatal: true }); } catch {}
  process.exit(1);
});
`;

interface PoolWorker {
  readonly worker: NodeWorker;
  readonly port: NodeMessagePort;
  /** Id of the last `shared` object this worker got. */
  sharedId: number;
  dead: boolean;
}

/** A launch's work in items below which it stays on the calling thread (measured on 2-core machines: a launch handed to a worker costs ~20-40 us). */
export const parallelLaunchItems = 1 << 15;

const sharedIds = new WeakMap<object, number>();
let nextSharedId = 1;

/** A pool of worker threads that run launches' workgroups alongside the calling thread. */
export class CpuWorkerPool {
  private readonly threads: WorkerThreads;
  private readonly workers: PoolWorker[] = [];
  private readonly signal: Int32Array;
  private destroyed = false;
  /** Launches that went through the pool, and the workgroups worker threads ran (for tests and benchmarks). */
  parallelLaunches = 0;
  workgroupsOnWorkers = 0;

  constructor(
    threads: WorkerThreads,
    readonly size: number,
  ) {
    this.threads = threads;
    this.signal = new Int32Array(new SharedArrayBuffer(8));
  }

  private started = false;

  /**
   * Whether launches can use the pool: starts the workers on first use (they join launches as soon
   * as they are up); false where they cannot be started, or have all stopped.
   */
  usable(): boolean {
    if (this.destroyed) return false;
    if (this.restUntil !== 0) {
      if (performance.now() < this.restUntil) return false;
      this.restUntil = 0;
    }
    if (!this.started) {
      this.started = true;
      try {
        this.start();
      } catch {
        this.destroy();
        return false;
      }
    }
    return this.workers.some((entry) => !entry.dead);
  }

  private start(): void {
    const { Worker, MessageChannel } = this.threads;
    for (let i = 0; i < this.size; i++) {
      const channel = new MessageChannel();
      const worker = new Worker(workerSource, {
        eval: true,
        workerData: { signal: this.signal, port: channel.port2 },
        transferList: [channel.port2],
        // Workers inherit no loader flags: they register one themselves where needed.
        execArgv: [],
      });
      worker.unref();
      const entry: PoolWorker = { worker, port: channel.port1, sharedId: -1, dead: false };
      channel.port1.unref();
      worker.on('error', () => {
        entry.dead = true;
      });
      worker.on('exit', () => {
        entry.dead = true;
      });
      this.workers.push(entry);
    }
  }

  /**
   * Runs workgroups [0, numWorkgroups) of `kernel` on this thread and the workers; returns when all
   * are done.
   */
  run<Params>(kernel: CpuKernel<Params>, parallel: CpuKernelParallel<Params>, numWorkgroups: number, params: Params, shared: import('./kernel.js').WorkgroupMemory): void {
    const control = new Int32Array(new SharedArrayBuffer(16));
    const threads = this.size + 1;
    // Guided self-scheduling: a thread takes (work left) / split workgroups, at least `chunk`.
    const chunk = Math.max(1, Math.floor(numWorkgroups / (threads * 32)));
    const split = threads * 2;
    const sharedObject = parallel.shared(params);
    let sharedId = sharedIds.get(sharedObject);
    if (sharedId === undefined) {
      sharedId = nextSharedId++;
      sharedIds.set(sharedObject, sharedId);
    }
    const job = {
      control,
      module: parallel.module,
      kernel: parallel.kernelId,
      sharedId,
      shared: undefined as unknown,
      local: parallel.local(params),
      numWorkgroups,
      chunk,
      split,
      bytes: kernel.workgroupStorageBytes,
    };
    let posted = 0;
    for (const entry of this.workers) {
      if (entry.dead) continue;
      job.shared = entry.sharedId === sharedId ? undefined : sharedObject;
      entry.sharedId = sharedId;
      entry.port.postMessage(job);
      posted++;
    }
    if (posted > 0) {
      Atomics.add(this.signal, 0, 1);
      Atomics.notify(this.signal, 0);
    }
    const begin = performance.now();
    for (;;) {
      const first = Atomics.load(control, 0);
      if (first >= numWorkgroups) break;
      const end = Math.min(numWorkgroups, first + Math.max(chunk, Math.ceil((numWorkgroups - first) / split)));
      if (Atomics.compareExchange(control, 0, first, end) !== first) continue;
      for (let w = first; w < end; w++) kernel.run(w, numWorkgroups, shared, params);
      Atomics.add(control, 1, end - first);
    }
    const busy = performance.now();
    let waited = false;
    for (;;) {
      const done = Atomics.load(control, 1);
      if (done >= numWorkgroups) {
        if (waited) this.noteWait(busy - begin, performance.now() - busy);
        else this.strikes = 0;
        break;
      }
      waited = true;
      Atomics.wait(control, 1, done, 20);
      if (Atomics.load(control, 1) === done && this.workers.every((entry) => entry.dead)) {
        throw new Error(`internal: the CPU worker threads stopped during ${kernel.name}`);
      }
    }
    this.workgroupsOnWorkers += Atomics.load(control, 3);
    this.parallelLaunches++;
    if (Atomics.load(control, 2) !== 0) {
      let message = 'unknown error';
      for (const entry of this.workers) {
        const received = this.threads.receiveMessageOnPort(entry.port);
        if (received !== undefined) message = String((received.message as { error?: string }).error);
      }
      throw new Error(`internal: a CPU worker thread failed running ${kernel.name}: ${message}`);
    }
  }

  /** Consecutive launches whose end waited long on a worker, and the time until which the pool rests. */
  private strikes = 0;
  private restUntil = 0;

  /**
   * Contention: on a machine whose cores are busy with other work, a worker may be descheduled
   * holding workgroups, and the calling thread waits for it. After 3 launches in a row that waited
   * over half as long as they ran, and over 0.2 ms, launches stay on the calling thread for a second
   * (then the pool is tried again).
   */
  private noteWait(ranMs: number, waitedMs: number): void {
    if (waitedMs > 0.2 && waitedMs * 2 > ranMs) {
      if (++this.strikes >= 3) {
        this.strikes = 0;
        this.restUntil = performance.now() + 1000;
        this.rests++;
      }
    } else {
      this.strikes = 0;
    }
  }

  /** Times the pool rested because of contention (for tests and benchmarks). */
  rests = 0;

  /** Stops the workers. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    Atomics.store(this.signal, 1, 1);
    Atomics.add(this.signal, 0, 1);
    Atomics.notify(this.signal, 0);
    for (const entry of this.workers) {
      entry.port.close();
      void entry.worker.terminate();
    }
    this.workers.length = 0;
  }
}

/** A pool of `size` workers, or undefined where worker threads are not available. */
export function createWorkerPool(size: number): CpuWorkerPool | undefined {
  if (size <= 0) return undefined;
  const threads = workerThreads();
  return threads === undefined ? undefined : new CpuWorkerPool(threads, size);
}
