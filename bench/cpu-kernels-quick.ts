/*
 * Quick timing of the CPU top-k kernels through the executor alone (no plan, no API): the issue-3
 * shapes, f32, 'max', sorted, with indices (i32). Not a test; the benchmark proper is bench/topk-cpu.ts.
 *
 *   node --import tsx bench/cpu-kernels-quick.ts [uniform|unit|normal] [shape index]
 *
 * Prints per shape the variant the policy selector picks, the median and best of the executor's time,
 * and the time of one pass computing each row's max over the same data (the issue's yardstick).
 */
import { cpuBackend } from '../src/backends/cpu/cpu-backend.js';
import { TempStorageLayoutBuilder } from '../src/dispatch/temp-storage.js';
import { cpuTopKExecutor } from '../src/algorithms/batched-top-k/cpu/executor.js';
import { reducePerInvocation, selectTopKVariant } from '../src/algorithms/batched-top-k/policy.js';
import { radixSelectLaunches } from '../src/algorithms/batched-top-k/radix-plan.js';
import type { TopKKernelId, TopKLaunch, TopKRun } from '../src/algorithms/batched-top-k/problem.js';

// 'uniform': [-1, 1) as bench/topk-cpu.ts uses; 'unit': [0, 1); 'normal': standard normal.
const distribution = process.argv[2] === 'normal' || process.argv[2] === 'unit' ? process.argv[2] : 'uniform';
const allShapes: [rows: number, cols: number, k: number][] = [
  [4096, 256, 8],
  [16384, 64, 2],
  [64, 32768, 2048],
  [128, 4096, 64],
  [1, 4194304, 100],
];
// Optional filter: a shape index (0-4) as the second argument.
const only = process.argv[3];
const shapes = only === undefined ? allShapes : [allShapes[Number(only)]!];

function randomKeys(n: number, seed: number): Float32Array {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const keys = new Float32Array(n);
  if (distribution === 'uniform') for (let i = 0; i < n; i++) keys[i] = next() * 2 - 1;
  else if (distribution === 'unit') for (let i = 0; i < n; i++) keys[i] = next();
  else for (let i = 0; i < n; i++) keys[i] = Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next());
  return keys;
}

const cpu = cpuBackend();

function makeRun(rows: number, cols: number, k: number): TopKRun {
  const selection = selectTopKVariant(
    { k: { min: k, max: k }, segmentSize: { min: cols, max: cols }, segmentSizeDeviceBounds: false },
    cpu.capabilities,
  );
  const policy = selection.policy;
  const variant = selection.variant;
  const keysLength = rows * cols;
  const chunks = Math.max(1, Math.ceil(cols / policy.reduceChunkItems));
  const perInvocation = reducePerInvocation(policy, cols);
  const layout = new TempStorageLayoutBuilder().add('partials', variant === 'reduce' && chunks > 1 && !perInvocation ? rows * chunks * k * 8 : 0);
  const launch = (kernel: TopKKernelId, grid: number, pass = 0): TopKLaunch => ({
    kernel,
    variant,
    name: `topk/${variant}/${kernel}`,
    grid,
    pass,
    purpose: 'bench',
  });
  const launches: TopKLaunch[] = [];
  if (variant === 'single-tile') launches.push(launch('single-tile', rows));
  if (variant === 'reduce') {
    launches.push(launch('reduce', perInvocation ? Math.ceil(rows / policy.workgroupSize) : rows * chunks));
    if (chunks > 1 && !perInvocation) launches.push(launch('reduce-merge', rows));
  }
  if (variant === 'radix-select') {
    launches.push(...radixSelectLaunches(layout, { policy, spec: 'f32,max', maxSegments: rows, maxSegmentSize: cols, kMax: k, candidateWords: keysLength }));
  }
  const built = layout.build();
  return {
    backend: cpu,
    problem: {
      keyType: 'f32',
      valueMode: 'indices',
      valueType: 'i32',
      kMax: k,
      maxSegments: rows,
      maxSegmentSize: cols,
      keysLength,
      numSegments: { kind: 'constant', value: rows },
      segmentSizes: { kind: 'constant', value: cols },
      layout: { kind: 'packed' },
      k: { kind: 'constant', value: k },
      direction: { kind: 'constant', value: 0 },
      directionOfOption: [0],
      sorted: true,
      segmentSizeDeviceBounds: undefined,
    },
    policy,
    launches,
    layout: built,
    temp: built.totalBytes > 0 ? cpu.alloc('u8', built.totalBytes) : undefined,
    status: undefined,
    checks: [],
    totalNumItems: undefined,
    keysIn: cpu.upload(randomKeys(keysLength, rows * 31 + cols)),
    keysOut: cpu.alloc('f32', rows * k),
    valuesIn: undefined,
    valuesOut: cpu.alloc('i32', rows * k),
  };
}

function rowMax(keys: Float32Array, rows: number, cols: number, out: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    let best = -Infinity;
    for (let i = r * cols, end = i + cols; i < end; i++) if (keys[i]! > best) best = keys[i]!;
    out[r] = best;
  }
}

function time(fn: () => void, minRuns: number, minMs: number): { median: number; best: number } {
  for (let i = 0; i < 3; i++) fn(); // warm up
  const times: number[] = [];
  const begin = performance.now();
  while (times.length < minRuns || performance.now() - begin < minMs) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[times.length >> 1]!, best: times[0]! };
}

console.log(`CPU top-k kernels via cpuTopKExecutor (f32 ${distribution}, max, sorted, i32 indices), node ${process.version}`);
for (const [rows, cols, k] of shapes) {
  const run = makeRun(rows, cols, k);
  const executor = time(() => cpuTopKExecutor.execute(run), 10, 1500);
  const keys = randomKeys(rows * cols, rows * 31 + cols);
  const maxOut = new Float32Array(rows);
  const onePass = time(() => rowMax(keys, rows, cols, maxOut), 10, 500);
  const variant = run.launches[0]!.variant;
  console.log(
    `${`${rows}x${cols} k=${k}`.padEnd(20)} ${String(variant).padEnd(13)} median ${executor.median.toFixed(2).padStart(7)} ms  best ${executor.best.toFixed(2).padStart(7)} ms   one-pass max ${onePass.median.toFixed(2)} ms`,
  );
}
