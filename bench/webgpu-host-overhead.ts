/**
 * Per-call overhead of segkit's two APIs, and of 'validate' against 'trust', in batched back-to-back
 * calls: N calls, then one `synchronize()` (which also settles the deferred device checks), time / N;
 * "host" is the time inside the calls alone. Median of the rounds, and the best round (steadier on a
 * shared, busy machine). Same plan and buffers per mode.
 *
 * Modes per case:
 * - plan.run: the two-step API, plan made once, caller-owned temporary storage;
 * - select: the environment API with the same args object every call;
 * - select fresh args: a new args object every call with the same parameters (what inline calls do);
 * - for cases with device-only values: plan.run under 'trust' next to 'validate' (the default).
 *
 * Run (WebGPU through Dawn on lavapipe, or the CPU emulator):
 *   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp node --import tsx bench/webgpu-host-overhead.ts
 *   node --import tsx bench/webgpu-host-overhead.ts --backend=cpu
 * Options: --rounds=N (default 5), --round-ms=T (target time per round, default 300), --cases=id,id,
 *          --workers=N (CPU backend worker threads; default the backend's)
 */
import { type Backend, DeviceBatchedTopK, type DeviceArray, type Env, type TopKPlan, cpuBackend, env, p } from '../src/index.js';
import { webgpuBackend } from '../src/backends/webgpu/webgpu-backend.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const backendName = argv.backend ?? 'webgpu';
const rounds = Number(argv.rounds ?? 5);
const roundMs = Number(argv['round-ms'] ?? 300);
const only = argv.cases?.split(',');

const backend: Backend = backendName === 'cpu' ? cpuBackend(argv.workers === undefined ? {} : { workers: Number(argv.workers) }) : await webgpuBackend();
const select = DeviceBatchedTopK.select as unknown as (args: object, e: Env) => Promise<void>;
const plan = DeviceBatchedTopK.plan as unknown as (args: object, e: Env) => TopKPlan;

function randomKeys(count: number, seed: number): Float32Array {
  const keys = new Float32Array(count);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    keys[i] = (s >>> 0) / 4294967296 - 0.5;
  }
  return keys;
}

/**
 * ms per call, batched, and host ms per call, for each mode: the modes take turns within every round
 * (a shared, busy machine slows them alike), and each figure is the median over the rounds.
 */
async function timeModes(modes: readonly (readonly [string, () => Promise<void>])[]): Promise<{ ms: number; hostMs: number; bestMs: number }[]> {
  for (const [, call] of modes) for (let i = 0; i < 3; i++) await call();
  await backend.synchronize();
  const t0 = performance.now();
  await modes[0]![1]();
  await backend.synchronize();
  const n = Math.max(5, Math.min(2000, Math.round(roundMs / modes.length / Math.max(0.01, performance.now() - t0))));
  const ms: number[][] = modes.map(() => []);
  const host: number[][] = modes.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let m = 0; m < modes.length; m++) {
      const call = modes[m]![1];
      let inCalls = 0;
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const c0 = performance.now();
        await call();
        inCalls += performance.now() - c0;
      }
      await backend.synchronize();
      ms[m]!.push((performance.now() - start) / n);
      host[m]!.push(inCalls / n);
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  return modes.map((_, m) => ({ ms: median(ms[m]!), hostMs: median(host[m]!), bestMs: ms[m]![0]! }));
}

interface BenchCase {
  id: string;
  label: string;
  args: () => { args: Record<string, unknown>; owned: DeviceArray[] };
  /** Has device-only values: also time 'trust'. */
  deviceOnly?: boolean;
}

const uniformCase = (id: string, rows: number, cols: number, k: number): BenchCase => ({
  id,
  label: `${rows}x${cols} k=${k}`,
  args: () => {
    const keysIn = backend.upload(randomKeys(rows * cols, 7));
    const keysOut = backend.alloc('f32', rows * k);
    const valuesOut = backend.alloc('i32', rows * k);
    return {
      args: { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) },
      owned: [keysIn, keysOut, valuesOut],
    };
  },
});

const perTokenK = (rows: number) => Array.from({ length: rows }, (_, i) => 1 + ((i * 2654435761) >>> 0) % 8);

/** MoE routing with per-token k in [1, 8] over 128 experts, k given as a host or a device array. */
function moeCase(rows: number, where: 'host' | 'device'): BenchCase {
  return {
    id: `moe-${where}-k${rows === 4096 ? '' : `-${rows}`}`,
    label: `moe ${rows}x128 k=1..8 per token (${where} array)`,
    deviceOnly: where === 'device',
    args: () => {
      const keysIn = backend.upload(randomKeys(rows * 128, 11));
      const keysOut = backend.alloc('f32', rows * 8);
      const valuesOut = backend.alloc('i32', rows * 8);
      const owned: DeviceArray[] = [keysIn, keysOut, valuesOut];
      let k: unknown;
      if (where === 'host') k = p.perSegment(perTokenK(rows), { min: 1, max: 8 });
      else {
        const ks = backend.upload(new Uint32Array(perTokenK(rows)));
        owned.push(ks);
        k = p.perSegment(ks, { min: 1, max: 8 });
      }
      return { args: { keysIn, keysOut, valuesOut, segmentSizes: p.constant(128), k, selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) }, owned };
    },
  };
}

const cases: BenchCase[] = [
  uniformCase('reduce', 4096, 256, 8),
  uniformCase('k1-vocab', 8, 131072, 1),
  uniformCase('radix', 64, 32768, 2048),
  moeCase(4096, 'host'),
  moeCase(4096, 'device'),
  // Small batches: the GPU work is short, so per-call overhead shows.
  moeCase(256, 'host'),
  moeCase(256, 'device'),
  uniformCase('small', 256, 128, 8),
  {
    id: 'attention',
    label: 'attention 512x(16..8192) k=256 (host sizes)',
    args: () => {
      const sizes = Array.from({ length: 512 }, (_, i) => Math.min(8192, i * 16 + 16));
      const keysIn = backend.upload(randomKeys(512 * 8192, 17));
      const keysOut = backend.alloc('f32', 512 * 256);
      const valuesOut = backend.alloc('i32', 512 * 256);
      return {
        args: {
          keysIn,
          keysOut,
          valuesOut,
          segmentSizes: p.perSegment(sizes, { min: 16, max: 8192 }),
          segmentStride: p.constant(8192),
          k: p.constant(256),
          selectDirection: p.constantOption('max'),
          numSegments: p.constant(512),
        },
        owned: [keysIn, keysOut, valuesOut],
      };
    },
  },
];

const fmt = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(3));
console.log(`backend ${backendName}${backendName === 'webgpu' ? '' : ` (${backend.capabilities.parallelism} threads)`}; ms per call, batched: median (host ms inside the calls; best round)`);
for (const c of cases) {
  if (only !== undefined && !only.includes(c.id)) continue;
  const { args, owned } = c.args();
  const environment = env({ backend });
  const twoStep = plan(args, environment);
  const temp = twoStep.tempStorageBytes > 0 ? backend.alloc('u8', twoStep.tempStorageBytes) : undefined;
  const trusted = c.deviceOnly ? plan(args, env({ backend, requirements: { guaranteeChecks: 'trust' } })) : undefined;
  const modes: [string, () => Promise<void>][] = [
    ['plan.run', () => twoStep.run(temp)],
    ['select', () => select(args, environment)],
    ['select fresh args', () => select({ ...args }, environment)],
  ];
  if (trusted !== undefined) modes.push(["plan.run 'trust'", () => trusted.run(temp)]);
  const times = await timeModes(modes);
  const rows = modes.map(([mode], i) => [mode, times[i]!] as const);
  trusted?.destroy();
  const base = rows[0]![1].ms;
  console.log(`${c.label} [${twoStep.variant}, ${twoStep.launches.length} launches]`);
  const best = rows[0]![1].bestMs;
  for (const [mode, t] of rows) console.log(`  ${mode.padEnd(18)} ${fmt(t.ms)} (${fmt(t.hostMs)}; ${fmt(t.bestMs)})  x${(t.ms / base).toFixed(2)} of plan.run, best x${(t.bestMs / best).toFixed(2)}`);
  twoStep.destroy();
  temp?.destroy();
  for (const a of owned) a.destroy();
}
backend.destroy();
