/**
 * GPU time of each launch of a plan (bench/lib/gpu-device.ts `launchTimer`: each dispatch of a call
 * in a timed pass of its own): which of a multi-launch variant's kernels (radix select's passes, the
 * scan's reduce-then-scan steps, the sort's digit passes) hold the time.
 *
 *   node dist/bench/webgpu-launch-profile.mjs [--cases=topk-16m,scan-16m] [--runs=7] [--warm-ms=300] [--out=DIR] [--out-file=NAME]
 *     [--shrink=N] [--tune='{"variant":"radix-select"}'] [--sort-policies='[{"radixLoads":1},{"radixLoads":3}]']
 *     [--toggles=enable-dawn-features=...] [--seed=N] [--keys=bits] [--sort-values=none]
 * (--warm-ms: each case's plan runs back to back that long before it is timed, so that the GPU's
 * clocks are up; --shrink divides every row length by N: a smoke run on a software adapter; --tune is the top-k
 * cases' policy tuning; --sort-policies profiles each sort case once per env.tuning.policy, its id
 * suffixed -p<i> (i the policy's place in the list); --toggles, Dawn instance flags separated by ';' (each a comma-separated list, as 'enable-dawn-features=disable_robustness,disable_workgroup_init'), for diagnostics;
 * --seed, the keys' (bench/lib/cases.ts fillRandom; default 11, where bench/topk-webgpu.ts's cases take
 * fillRandom's own: 2654435769 profiles the same keys as its single row); --keys=bits, random 32-bit
 * patterns as keys (fillRandomBits: every exponent) instead of uniform values in [-1, 1);
 * --sort-values=none, the sort cases without values (keys only))
 * (bench/gpu/run-all.sh SUITES=launches; bench/gpu/build.sh bundles it).
 */
/// <reference types="@webgpu/types" />
import { writeFileSync } from 'node:fs';
import { DeviceBatchedTopK, DeviceSegmentedReduce, DeviceSegmentedScan, DeviceSegmentedSort, type DeviceArray, env, p, webgpuBackend } from 'segkit';
import { fillRandom, fillRandomBits } from './lib/cases.js';
import { benchDevice, launchTimer, passTimer } from './lib/gpu-device.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => /^--([^=]+)(?:=(.*))?$/.exec(a)!).map(([, k, v]) => [k, v ?? '1'])) as Record<string, string>;
const runs = Number(argv.runs ?? 7);
const warmMs = Number(argv['warm-ms'] ?? 300);
const caseFilter = argv.cases?.split(',');
const shrink = Number(argv.shrink ?? 1);
const M16 = Math.floor((16 * 1024 * 1024) / shrink);

const topkTuning = argv.tune ? (JSON.parse(argv.tune) as Record<string, unknown>) : undefined;
const sortKeysOnly = argv['sort-values'] === 'none';
const sortPolicies = argv['sort-policies'] ? (JSON.parse(argv['sort-policies']) as Record<string, number>[]) : undefined;
const { device } = await benchDevice({ toggles: argv.toggles?.split(';') });
const backend = await webgpuBackend({ device });
const timer = launchTimer(device);
// The whole call's pass as well (what bench/reduce-scan-webgpu.ts reports): the launches' sum leaves
// out what the pass spends between them. Created after the launch timer, so the two wrappers nest and
// only one captures at a time.
const whole = passTimer(device);

interface ProfileCase {
  readonly id: string;
  readonly label: string;
  readonly rows: number;
  readonly cols: number;
  /** Plans the call over `keys` (rows x cols, packed). */
  plan(keys: DeviceArray<'f32'>): { plan: unknown; owned: DeviceArray[] };
}

const outputs = (n: number) => [backend.alloc('f32', n), backend.alloc('i32', n)] as const;
const topk = (id: string, rows: number, cols: number, k: number): ProfileCase => ({
  id,
  label: `top-k ${rows}x${cols} k=${k}`,
  rows,
  cols,
  plan(keysIn) {
    const [keysOut, valuesOut] = outputs(rows * k);
    const plan = DeviceBatchedTopK.plan({ keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) }, env({ backend, tuning: topkTuning as never }));
    return { plan, owned: [keysOut, valuesOut] };
  },
});
const cases: ProfileCase[] = [
  topk('topk-16m', 1, M16, 100),
  topk('topk-indexer', 64, Math.floor(65536 / shrink), 2048),
  topk('topk-indexer-128k', 32, Math.floor(131072 / shrink), 2048),
  topk('topk-indexer-k1024', 64, Math.floor(65536 / shrink), 1024),
  topk('topk-indexer-k512', 64, Math.floor(65536 / shrink), 512),
  topk('topk-64x32768', 64, Math.floor(32768 / shrink), 2048),
  topk('topk-vocab', 64, Math.floor(151936 / shrink), 50),
  topk('topk-greedy', 64, Math.floor(151936 / shrink), 1),
  topk('topk-sorted-4096', 64, Math.floor(32768 / shrink), 4096),
  // Sorted selections past merge's 65536 keys: the radix selection sort.
  topk('topk-sorted-4m-k100000', 1, Math.floor(4194304 / shrink), Math.floor(100000 / shrink)),
  topk('topk-sorted-32x262144-k100000', 32, Math.floor(262144 / shrink), Math.floor(100000 / shrink)),
  topk('topk-sorted-4x1m-k131072', 4, Math.floor(1048576 / shrink), Math.floor(131072 / shrink)),
  topk('topk-sorted-2x2m-k500000', 2, Math.floor(2097152 / shrink), Math.floor(500000 / shrink)),
  topk('topk-sorted-8x1m-k262144', 8, Math.floor(1048576 / shrink), Math.floor(262144 / shrink)),
  // The MoE router with per-token k on the device: 'validate' (the default) against 'trust'.
  ...(['validate', 'trust'] as const).map((guaranteeChecks): ProfileCase => ({
    id: `topk-router-device-k${guaranteeChecks === 'trust' ? '-trust' : ''}`,
    label: `top-k 4096x128 k=1..8 per token on the device, '${guaranteeChecks}'`,
    rows: 4096,
    cols: 128,
    plan(keysIn) {
      const [keysOut, valuesOut] = outputs(4096 * 8);
      const ks = backend.upload(new Uint32Array(4096).map((_, i) => 1 + (i % 8)));
      const args = { keysIn, keysOut, valuesOut, segmentSizes: p.constant(128), k: p.perSegment(ks, { min: 1, max: 8 }), selectDirection: p.constantOption('max'), numSegments: p.constant(4096) };
      const plan = DeviceBatchedTopK.plan(args as never, env({ backend, requirements: { guaranteeChecks } }));
      return { plan, owned: [keysOut, valuesOut, ks] };
    },
  })),
  {
    id: 'reduce-16m',
    label: `reduce sum, one segment of ${M16}`,
    rows: 1,
    cols: M16,
    plan(valuesIn) {
      const [valuesOut] = outputs(1);
      const plan = DeviceSegmentedReduce.plan({ valuesIn, valuesOut, segmentSizes: p.uniform(M16), numSegments: p.uniform(1), op: p.constantOption('sum') } as never, env({ backend }));
      return { plan, owned: [valuesOut] };
    },
  },
  {
    id: 'scan-16m',
    label: `inclusive scan, one segment of ${M16}`,
    rows: 1,
    cols: M16,
    plan(valuesIn) {
      const [valuesOut] = outputs(M16);
      const plan = DeviceSegmentedScan.plan({ valuesIn, valuesOut, segmentSizes: p.uniform(M16), numSegments: p.uniform(1), op: p.constantOption('sum'), mode: p.constantOption('inclusive') } as never, env({ backend }));
      return { plan, owned: [valuesOut] };
    },
  },
  ...[
    [64, Math.floor(32768 / shrink)],
    [1, M16],
  ].flatMap(([rows, cols]) =>
    (sortPolicies ?? [undefined]).map(
      (policy, i): ProfileCase => ({
        id: `sort-${rows}x${cols}${policy === undefined ? '' : `-p${i}`}`,
        label: `sort ${rows}x${cols}${policy === undefined ? '' : ` ${JSON.stringify(policy)}`}`,
        rows: rows!,
        cols: cols!,
        plan(keysIn) {
          const [keysOut, valuesOut] = outputs(rows! * cols!);
          const plan = DeviceSegmentedSort.plan(
            { keysIn, keysOut, ...(sortKeysOnly ? {} : { valuesOut }), segmentSizes: p.uniform(cols!), order: p.constantOption('ascending'), numSegments: p.uniform(rows!) } as never,
            env({ backend, ...(policy === undefined ? {} : { tuning: { policy } }) }),
          );
          return { plan, owned: [keysOut, valuesOut] };
        },
      }),
    ),
  ),
];

interface LaunchTime {
  readonly name: string;
  readonly grid: number;
  readonly ms: number;
}
const results: { id: string; label: string; variant: string; totalMs: number; passMs: number | undefined; launches: LaunchTime[] }[] = [];
for (const c of cases) {
  if (caseFilter && !caseFilter.includes(c.id)) continue;
  const fill = argv.keys === 'bits' ? fillRandomBits : fillRandom;
  const keys = backend.upload(fill(new Float32Array(c.rows * c.cols), Number(argv.seed ?? 11)));
  const { plan: made, owned } = c.plan(keys);
  const plan = made as { variant: string; tempStorageBytes: number; launches: readonly { name: string; grid: number }[]; run(t?: DeviceArray<'u8'>): Promise<void>; destroy(): void };
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  for (let i = 0; i < 3; i++) await plan.run(temp);
  await backend.synchronize();
  // Keep the device busy for a while first: an idle GPU lowers its clocks, and timing launches one
  // pass at a time leaves it idle between them (the first cases of a call read several times slow).
  for (const until = performance.now() + warmMs; performance.now() < until; ) {
    for (let i = 0; i < 20; i++) await plan.run(temp);
    await backend.synchronize();
  }
  const ms = await timer.launchTimesMs(() => plan.run(temp), () => backend.synchronize(), runs);
  const launches = plan.launches.map((launch, i) => ({ name: launch.name, grid: launch.grid, ms: Number((ms[i] ?? Number.NaN).toFixed(4)) }));
  const totalMs = Number(ms.reduce((a, b) => a + b, 0).toFixed(4));
  const pass = await whole.gpuTimeMs(() => plan.run(temp), () => backend.synchronize(), runs);
  const passMs = pass === undefined ? undefined : Number(pass.ms.toFixed(4));
  results.push({ id: c.id, label: c.label, variant: plan.variant, totalMs, passMs, launches });
  console.log(`\n${c.label}: ${plan.variant}, ${totalMs} ms of GPU time in ${launches.length} launches (one pass: ${passMs} ms)`);
  for (const l of launches) console.log(`  ${l.ms.toFixed(4).padStart(8)} ms  ${l.name} (${l.grid} workgroups)`);
  plan.destroy();
  temp?.destroy();
  keys.destroy();
  for (const a of owned) a.destroy();
}
if (argv.out) writeFileSync(`${argv.out}/${argv['out-file'] ?? 'launch-profile.json'}`, `${JSON.stringify({ date: new Date().toISOString(), runs, results }, null, 1)}\n`);
backend.destroy();
device.destroy();
process.exit(0);
