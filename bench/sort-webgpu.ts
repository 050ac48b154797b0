/**
 * DeviceSegmentedSort and sorted top-k past a tile on the WebGPU backend (Dawn), on the shapes of
 * bench/gpu/torch_sort.py (torch.sort, torch.argsort and torch.topk with CUDA events on the same
 * shapes; the lead compares the two JSON files). f32 keys, ascending argsort (indices out) for the
 * sort; 'max', sorted, indices for top-k.
 *
 * Figures per case (medians after warm-up): batchedMs: N back-to-back plan.run(temp) calls (one
 * submit each, no read-back) then one synchronize, / N; singleMs: one run + synchronize. Each
 * result is checked once against the reference (sort) or the CPU backend (top-k).
 *
 * Bundle with bench/gpu/build.sh (it bundles this file to dist/bench/sort-webgpu.mjs too), then
 *   node dist/bench/sort-webgpu.mjs [--runs=9] [--batch-ms=60] [--warm-ms=300] [--single-cols=16777216] [--out=dir] [--cases=4096x256,k=4096]
 *     [--shapes=16384x64,1024x1024,512x16384r] (more sort cases, rows x cols; a trailing r: ragged, each
 *     segment 1 to cols keys, packed; torch sorts the padded rows) [--policy='{"tileItemsPerInvocation":8}'] (env.tuning.policy of every sort)
 *     [--variants=workgroup-radix,radix] (each sort case also with each of these variants forced; a
 *     variant the build has not is recorded as its error; 1xN cases past 1M keys skip workgroup-radix)
 *     [--policies='[{"radixLoads":1},{"radixLoads":3}]'] (each sort case once per policy, one after the other in this
 *     process, each over --policy; the case's id names its policy: a before/after of policy values in one process)
 *     [--tag=name] (written into the JSON file's name: sort-webgpu-<tag>.json, to compare builds or policies)
 *     [--distinct=N] (keys drawn from N values: many equal keys) [--period=P] (keys repeating every P:
 *     equal keys far apart; with either, the values are checked too)
 *     [--no-subgroups] (the backend without subgroup operations: the radix scatter ranks with four 2-bit
 *     splits instead of warp-level multisplit, for a before/after in one build)
 *     [--topk=4x1048576:131072] (more sorted top-k cases, rows x cols : k; past 65536 the selection is radix-sorted)
 *     [--toggles=enable-dawn-features=disable_robustness] (Dawn instance flags separated by ';', each a comma-separated list, for diagnostics)
 * (locally on lavapipe: VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp,
 * with --single-cols small enough for its 128 MiB binding limit).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as segkit from 'segkit';
import { fillRandom, median, parseArgs, printTable } from './lib/cases.js';
import { constantOf } from './lib/constant.js';
import { benchDevice, passTimer } from './lib/gpu-device.js';

const { DeviceBatchedTopK, DeviceSegmentedSort, cpuBackend, env, p, referenceSegmentedSort, webgpuBackend } = segkit;
const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 9);
const batchMs = Number(argv['batch-ms'] ?? 60);
const singleCols = Number(argv['single-cols'] ?? 16777216);
const warmMs = Number(argv['warm-ms'] ?? 300);
const { device } = await benchDevice({ toggles: argv.toggles?.split(';') });
const gpu = await webgpuBackend({ device, ...(argv['no-subgroups'] === undefined ? {} : { subgroups: false }) });
const timer = passTimer(device);
const cpu = cpuBackend();

interface Case {
  id: string;
  rows: number;
  cols: number;
  /** Ragged: segment sizes 1..cols (seeded), packed. */
  ragged?: boolean;
  /** env.tuning.variant. */
  variant?: string;
  /** Top-k with this k (sorted) instead of a sort. */
  k?: number;
  /** env.tuning.policy values over --policy's (--policies). */
  policy?: Record<string, number>;
}
const tuningPolicy = argv.policy === undefined ? undefined : (JSON.parse(String(argv.policy)) as Record<string, number>);
const extraShapes = argv.shapes === undefined ? [] : String(argv.shapes).split(',').map((shape) => ({ ragged: shape.endsWith('r'), dims: shape.replace(/r$/, '').split('x').map(Number) as [number, number] }));
const forcedVariants = argv.variants === undefined ? [] : String(argv.variants).split(',');
const extraTopK = argv.topk === undefined ? [] : String(argv.topk).split(',').map((spec) => /^(\d+)x(\d+):(\d+)$/.exec(spec)!.slice(1).map(Number) as [number, number, number]);
const policySweep = argv.policies === undefined ? undefined : (JSON.parse(String(argv.policies)) as Record<string, number>[]);
const baseCases: Case[] = [
  { id: 'sort 4096x256', rows: 4096, cols: 256 },
  { id: 'sort 256x4096', rows: 256, cols: 4096 },
  { id: 'sort 64x32768', rows: 64, cols: 32768 },
  { id: `sort 1x${singleCols}`, rows: 1, cols: singleCols },
  { id: 'topk 64x32768 k=4096', rows: 64, cols: 32768, k: 4096 },
  { id: 'topk 16x65536 k=10000', rows: 16, cols: 65536, k: 10000 },
  ...extraShapes.map(({ ragged, dims: [rows, cols] }) => ({ id: `sort ${rows}x${cols}${ragged ? 'r' : ''}`, rows, cols, ragged })),
  ...extraTopK.map(([rows, cols, k]) => ({ id: `topk ${rows}x${cols} k=${k}`, rows, cols, k })),
];
// Each sort case once per policy of --policies, in turn.
const cases = policySweep === undefined ? baseCases : baseCases.flatMap((c) => (c.k !== undefined ? [c] : policySweep.map((policy) => ({ ...c, id: `${c.id} ${JSON.stringify(policy)}`, policy }))));
for (const c of [...cases]) {
  if (c.k !== undefined) continue;
  for (const variant of forcedVariants) {
    if (variant === 'workgroup-radix' && c.rows === 1 && c.cols > 1 << 20) continue;
    cases.push({ ...c, id: `${c.id} [${variant}]`, variant });
  }
}

/** A seeded generator in [0, 1) (the ragged cases' sizes). */
function rng(seed0: number): () => number {
  let state = seed0 >>> 0 || 1;
  return () => ((state = (state * 1664525 + 1013904223) >>> 0) / 4294967296);
}

const distinct = argv.distinct === undefined ? undefined : Number(argv.distinct);
const period = argv.period === undefined ? undefined : Number(argv.period);

async function timed(run: () => Promise<void>): Promise<{ singleMs: number; batchedMs: number; n: number }> {
  // Back-to-back calls for --warm-ms first: after the reference check (seconds of CPU sorting for
  // 16M keys) the GPU's clock has dropped, and a few calls did not bring it back before the timing
  // (the H200 read 1x16M at 4.96-7.4 ms of GPU time in such runs, 1.75 ms at full clock).
  let calls = 0;
  for (const until = performance.now() + warmMs; calls < 3 || performance.now() < until; calls++) await run();
  await gpu.synchronize();
  const singles: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    await gpu.synchronize();
    singles.push(performance.now() - t0);
  }
  const singleMs = median(singles);
  const n = Math.max(3, Math.min(500, Math.floor(batchMs / Math.max(singleMs, 0.01))));
  const batches: number[] = [];
  for (let b = 0; b < 5; b++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await run();
    await gpu.synchronize();
    batches.push((performance.now() - t0) / n);
  }
  return { singleMs, batchedMs: median(batches), n };
}

const only = argv.cases === undefined ? undefined : String(argv.cases).split(',');
const rows: Record<string, unknown>[] = [];
for (const c of cases.filter((x) => only === undefined || only.some((o) => x.id.includes(o)))) {
  // A case this backend refuses (top-k's sorted selection past a tile, say) is recorded as its error.
  try {
    console.error(`[sort-webgpu] ${c.id}`);
    const sizeRandom = rng(c.rows * 31 + c.cols);
    const sizes = Array.from({ length: c.rows }, () => (c.ragged ? 1 + Math.floor(sizeRandom() * c.cols) : c.cols));
    const starts: number[] = [];
    let total = 0;
    for (const size of sizes) {
      starts.push(total);
      total += size;
    }
    // Uniform in [-1, 1) (xorshift32, a seed per case). Until 2026-11-30 the keys came from
    // `seed * 1103515245 + 12345` in doubles, whose product lost its low bits past 2^53: the sequence
    // fell into a cycle of 419 values after 16332 keys, so most keys of every case past 16K were
    // repeats (BENCHMARKS.md, session 31). --distinct=N: keys drawn from N values (many equal keys, as
    // expert ids or quantized scores are).
    const keys = fillRandom(new Float32Array(total), c.rows * 7919 + c.cols);
    if (distinct !== undefined) for (let i = 0; i < total; i++) keys[i] = Math.floor(((keys[i]! + 1) / 2) * distinct);
    // --period=P: keys repeat every P (equal keys far apart, none within a run of a few neighbours).
    if (period !== undefined) for (let i = period; i < total; i++) keys[i] = keys[i - period]!;
    const keysIn = gpu.upload(keys);
    const outLength = c.k === undefined ? total : c.rows * c.k;
    const keysOut = gpu.alloc('f32', outLength);
    const valuesOut = gpu.alloc('u32', outLength);
    const policy = tuningPolicy || c.policy ? { ...tuningPolicy, ...c.policy } : undefined;
    const tuning = { ...(policy ? { policy } : {}), ...(c.variant ? { variant: c.variant } : {}) };
    const plan =
      c.k === undefined
        ? DeviceSegmentedSort.plan(
            { keysIn, keysOut, valuesOut, segmentSizes: c.ragged ? p.perSegment(sizes, { min: 1, max: c.cols }) : constantOf(c.cols), order: p.constantOption('ascending'), numSegments: p.uniform(c.rows) },
            env({ backend: gpu, tuning: tuning as never }),
          )
        : DeviceBatchedTopK.plan({ keysIn, keysOut, valuesOut, segmentSizes: constantOf(c.cols), k: p.uniform(c.k, { min: 1, max: c.k }), selectDirection: p.constantOption('max'), numSegments: p.uniform(c.rows) }, env({ backend: gpu }));
    const temp = plan.tempStorageBytes > 0 ? gpu.alloc('u8', plan.tempStorageBytes) : undefined;
    await plan.run(temp);
    const got = new Uint32Array((await gpu.download(keysOut)).buffer);
    let expected: Uint32Array;
    if (c.k === undefined) {
      // The keys have no NaN and no -0, so a numeric sort of each segment is the stable sort's keys
      // (referenceSegmentedSort, far faster for 16M keys).
      const sorted = new Float32Array(total);
      sizes.forEach((size, r) => sorted.set(keys.subarray(starts[r]!, starts[r]! + size).slice().sort(), starts[r]!));
      expected = new Uint32Array(sorted.buffer);
    } else {
      const cpuIn = cpu.upload(keys);
      const cpuOut = cpu.alloc('f32', c.rows * c.k);
      await DeviceBatchedTopK.maxKeys({ keysIn: cpuIn, keysOut: cpuOut, segmentSizes: constantOf(c.cols), k: p.uniform(c.k, { min: 1, max: c.k }), numSegments: p.uniform(c.rows) }, env({ backend: cpu }));
      expected = new Uint32Array((await cpu.download(cpuOut)).buffer);
      cpuIn.destroy();
      cpuOut.destroy();
    }
    let bad = 0;
    for (let i = 0; i < got.length; i++) if (got[i] !== expected[i]) bad++;
    // Sorts with --distinct or --period (many equal keys): the values (each item's index) too, against
    // segkit's reference sort, which keeps equal keys in index order as the sort must.
    if (c.k === undefined && (distinct !== undefined || period !== undefined)) {
      const values = new Uint32Array((await gpu.download(valuesOut)).buffer);
      const reference = referenceSegmentedSort({
        keyType: 'f32',
        keys: new Uint32Array(keys.buffer),
        segmentStarts: starts,
        segmentSizes: sizes,
        orders: sizes.map(() => 'ascending' as const),
        withValues: true,
        keysOut: new Uint32Array(total),
        valuesOut: new Uint32Array(total),
      });
      for (let i = 0; i < total; i++) if (values[i] !== reference.values[i]) bad++;
    }
    const t = await timed(() => plan.run(temp));
    const gpuT = await timer.gpuTimeMs(() => plan.run(temp), () => gpu.synchronize(), 5);
    rows.push({
      case: c.id,
      variant: plan.variant,
      // The plan's launches by kernel (explain() has them with their grids).
      kernels: [...new Set(plan.launches.map((l) => l.name.replace(/\[.*$/, '')))].join(' '),
      launches: plan.launches.length,
      batchedMs: t.batchedMs.toFixed(3),
      singleMs: t.singleMs.toFixed(3),
      gpuMs: gpuT?.ms.toFixed(4),
      'Gkeys/s': (total / t.batchedMs / 1e6).toFixed(2),
      n: t.n,
      mismatches: bad,
    });
    plan.destroy();
    temp?.destroy();
    for (const a of [keysIn, keysOut, valuesOut]) a.destroy();

  } catch (error) {
    rows.push({ case: c.id, error: (error as Error).message.slice(0, 120) });
  }
}
const table = printTable(rows);
const out = argv.out ?? 'bench/results';
mkdirSync(out, { recursive: true });
writeFileSync(`${out}/sort-webgpu${argv.tag === undefined ? '' : `-${String(argv.tag)}`}.json`, JSON.stringify({ runs, rows, table }, null, 2));
gpu.destroy();
device.destroy();
cpu.destroy();
