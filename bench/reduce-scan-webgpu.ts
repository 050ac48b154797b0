/*
 * DeviceSegmentedReduce and DeviceSegmentedScan on WebGPU (Dawn), on the shapes of bench/reduce-cpu.ts
 * and bench/scan-cpu.ts (torch's side: bench/gpu/torch_reduce_scan.py, same shapes and seeds' sizes):
 * per case N back-to-back `plan.run(temp)` then one synchronize (ms per call), and the median of
 * single calls, and the GPU time of one call (its compute pass, from timestamps). Results are checked against the CPU backend (bit for bit under 'run-to-run').
 *
 *   bash bench/gpu/build.sh   (bundles this file into dist/bench/reduce-scan-webgpu.mjs)
 *   node dist/bench/reduce-scan-webgpu.mjs [--out=DIR] [--runs=5] [--warm-ms=500] [--long=16777216] [--cases=moe,ragged,long]
 *     [--ops=sum,max,argMax,cumsum] [--configs='[{"label":"team64","policy":{"chunkTeamSize":64}}]']
 *     [--scan-configs='[{"label":"words1","policy":{"loadWords":1}}]']
 * --configs: reduce tunings to time side by side (each case and reduce op once per config; a config's
 * variant is skipped where it does not apply); --scan-configs the same for cumsum; the default is the
 * plan's own choice. A scan config may also name the scan's `scanOp` ('sum', 'min', 'max'; default
 * 'sum'), its `mode` ('inclusive' or 'exclusive'; default 'inclusive'), its `dtype` ('f32' or 'i32':
 * the f32 values times 1000, rounded) and `determinism`
 * ('not-guaranteed'): e.g. the single pass (policy passes 1) against reduce-then-scan (passes 2) on
 * i32 sums, f32 min and 'not-guaranteed' f32 sums, in one process:
 *     --cases=long --ops=cumsum --scan-configs='[{"label":"i32-1","dtype":"i32","policy":{"passes":1}},
 *       {"label":"i32-2","dtype":"i32","policy":{"passes":2}},{"label":"min-1","scanOp":"min"},...]'
 * or the canonical f32 sum's carries walked by one workgroup against worked out in parallel:
 *     --cases=long --ops=cumsum --scan-configs='[{"label":"walk","policy":{"spineCarries":"walk"}},
 *       {"label":"parallel","policy":{"spineCarries":"parallel"}},{"label":"parallel-top","policy":{"spineCarryTiles":1}}]'
 * A scan row names the path its plan took (`path`: explain()'s 'multi-workgroup path:' line). Its
 * `mismatchesVsCpu` is 0 wherever the bits are pinned; under 'not-guaranteed' the backends round f32
 * sums differently, so there it counts rounding differences, not errors. Each row has the call's GPU time (its one compute pass, `segkitGpuMs`) and each
 * launch's own (`launchGpuMs`, a timed pass per dispatch, as bench/webgpu-launch-profile.ts) with
 * their sum.
 */
import { writeFileSync } from 'node:fs';
import { DeviceSegmentedReduce, DeviceSegmentedScan, type Backend, type DeviceArray, cpuBackend, env, p, webgpuBackend } from 'segkit';
import { benchDevice, launchTimer, passTimer } from './lib/gpu-device.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? '1'])) as Record<string, string>;
const runs = Number(argv.runs ?? 5);
// Before each row is timed, its call runs back to back for this long, so that the GPU is busy when
// its time is taken. Rows late in a run (after seconds of CPU checks with the GPU idle) once read up
// to 2.4x the GPU time of the same plan early in the run and in bench/webgpu-launch-profile.ts, every
// launch alike (H200, 2026-11-23 21:05: the 16M scan's spine-walk, one workgroup on 32 KB, 0.051 ms
// for 0.021; run 8's 16M cumsum row, 0.193 ms for the profile's 0.140, the 12th of 16 rows, looks
// like one). A later run with a clock log (SM at 1980 MHz through every timed row) did not show it,
// with or without warm-up: the cause is not pinned down; the warm-up costs half a second a row.
const warmMs = Number(argv['warm-ms'] ?? 500);
const long = Number(argv.long ?? 16 * 1024 * 1024);
const caseFilter = argv.cases?.split(',');
const opFilter = argv.ops?.split(',');
interface Config { label: string; variant?: string; policy?: Record<string, number | string>; scanOp?: 'sum' | 'min' | 'max'; mode?: 'inclusive' | 'exclusive'; dtype?: 'f32' | 'i32'; determinism?: 'not-guaranteed' }
const configs: Config[] = argv.configs ? (JSON.parse(argv.configs) as Config[]) : [{ label: 'default' }];
const scanConfigs: Config[] = argv['scan-configs'] ? (JSON.parse(argv['scan-configs']) as Config[]) : [{ label: 'default' }];
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

function fill(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return out;
}

interface Shape { id: string; label: string; rows: number; stride: number; lengths: Uint32Array | undefined; data: Float32Array }
const shapes: Shape[] = [{ id: 'moe', label: 'MoE 65536x16', rows: 65536, stride: 16, lengths: undefined, data: fill(65536 * 16, 1) }];
{
  const rows = 2048;
  const stride = 4096;
  let state = 7;
  const lengths = Uint32Array.from({ length: rows }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return 1 + (state % stride);
  });
  shapes.push({ id: 'ragged', label: 'ragged 2048 rows of 1..4096', rows, stride, lengths, data: fill(rows * stride, 2) });
}
shapes.push({ id: 'long', label: `one segment of ${long}`, rows: 1, stride: long, lengths: undefined, data: fill(long, 3) });

const { device } = await benchDevice();
const gpu = await webgpuBackend({ device });
const timer = passTimer(device);
// Per-launch GPU time too (each dispatch in a timed pass of its own, as bench/webgpu-launch-profile.ts
// times them): their sum beside the whole pass's time says what the pass adds between launches.
const launches = launchTimer(device);
const cpu = cpuBackend({ workers: 0 });

async function time(backend: Backend, call: () => Promise<unknown>): Promise<{ ms: number; singleMs: number }> {
  for (let i = 0; i < 3; i++) await call();
  await backend.synchronize();
  for (const until = performance.now() + warmMs; performance.now() < until; ) {
    for (let i = 0; i < 20; i++) await call();
    await backend.synchronize();
  }
  const single: number[] = [];
  for (let i = 0; i < 9; i++) {
    const t0 = performance.now();
    await call();
    await backend.synchronize();
    single.push(performance.now() - t0);
  }
  const n = Math.max(10, Math.min(400, Math.ceil(20 / Math.max(median(single), 0.005))));
  const batched: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await call();
    await backend.synchronize();
    batched.push((performance.now() - t0) / n);
  }
  return { ms: median(batched), singleMs: median(single) };
}

const results: Record<string, unknown>[] = [];
for (const shape of shapes.filter((x) => caseFilter === undefined || caseFilter.includes(x.id))) {
  const items = shape.lengths === undefined ? shape.rows * shape.stride : shape.lengths.reduce((a, b) => a + b, 0);
  // i32 values for scan configs with dtype 'i32' (made only when a config asks for them).
  const wantsI32 = opFilter?.includes('cumsum') !== false && scanConfigs.some((x) => x.dtype === 'i32');
  const dataI32 = wantsI32 ? Int32Array.from(shape.data, (x) => Math.round(x * 1000)) : undefined;
  const on = (backend: Backend) => ({
    valuesIn: backend.upload(shape.data),
    valuesOut: backend.alloc('f32', shape.rows),
    indicesOut: backend.alloc('i32', shape.rows),
    scanOut: backend.alloc('f32', shape.data.length),
    ...(dataI32 === undefined ? {} : { valuesInI32: backend.upload(dataI32), scanOutI32: backend.alloc('i32', shape.data.length) }),
  });
  const g = on(gpu);
  const c = on(cpu);
  const segments = (a: ReturnType<typeof on>) => ({
    segmentSizes: shape.lengths === undefined ? p.uniform(shape.stride) : p.perSegment(shape.lengths, { max: shape.stride }),
    ...(shape.lengths === undefined ? {} : { segmentStride: p.uniform(shape.stride) }),
    numSegments: p.uniform(shape.rows),
  });
  for (const op of (['sum', 'max', 'argMax', 'cumsum'] as const).filter((o) => opFilter === undefined || opFilter.includes(o))) for (const config of op === 'cumsum' ? scanConfigs : configs) {
    const tuning = { ...(config.variant === undefined ? {} : { variant: config.variant }), ...(config.policy === undefined ? {} : { policy: config.policy }) };
    const i32 = op === 'cumsum' && config.dtype === 'i32';
    const requirements = op === 'cumsum' && config.determinism !== undefined ? { determinism: config.determinism } : {};
    const scanOut = (a: ReturnType<typeof on>) => (i32 ? a.scanOutI32! : a.scanOut);
    const planOn = (backend: Backend, a: ReturnType<typeof on>, t: object = {}) =>
      op === 'cumsum'
        ? DeviceSegmentedScan.plan(
            { ...segments(a), valuesIn: i32 ? a.valuesInI32! : a.valuesIn, valuesOut: scanOut(a), op: p.constantOption(config.scanOp ?? 'sum'), mode: p.constantOption(config.mode ?? 'inclusive') } as never,
            env({ backend, tuning: t as never, requirements }),
          )
        : DeviceSegmentedReduce.plan({ ...segments(a), valuesIn: a.valuesIn, valuesOut: a.valuesOut, ...(op === 'argMax' ? { indicesOut: a.indicesOut } : {}), op: p.constantOption(op) } as never, env({ backend, tuning: t as never }));
    let gp: ReturnType<typeof planOn>;
    try {
      gp = planOn(gpu, g, tuning);
    } catch (e) {
      console.log(JSON.stringify({ case: shape.label, op, config: config.label, skipped: String(e) }));
      continue;
    }
    const cp = planOn(cpu, c);
    const gt = gp.tempStorageBytes > 0 ? gpu.alloc('u8', gp.tempStorageBytes) : undefined;
    const ct = cp.tempStorageBytes > 0 ? cpu.alloc('u8', cp.tempStorageBytes) : undefined;
    await gp.run(gt);
    await cp.run(ct);
    const out = (x: ReturnType<typeof on>): DeviceArray => (op === 'cumsum' ? scanOut(x) : op === 'argMax' ? x.indicesOut : x.valuesOut);
    const [a, b] = [new Uint32Array((await gpu.download(out(g))).buffer), new Uint32Array((await cpu.download(out(c))).buffer)];
    let mismatches = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) mismatches++;
    const t = await time(gpu, () => gp.run(gt));
    const gpuT = await timer.gpuTimeMs(() => gp.run(gt), () => gpu.synchronize(), runs);
    const perLaunch = device.features.has('timestamp-query') ? await launches.launchTimesMs(() => gp.run(gt), () => gpu.synchronize(), runs) : [];
    // Which way the multi-workgroup scan went (explain()'s 'multi-workgroup path:' line), for scan rows.
    const path = op === 'cumsum' ? gp.explain().split('\n').find((line) => line.includes('multi-workgroup path:'))?.trim() : undefined;
    const row = { case: shape.label, op, config: config.label, ...(op === 'cumsum' ? { scanOp: config.scanOp ?? 'sum', mode: config.mode ?? 'inclusive', dtype: config.dtype ?? 'f32', determinism: config.determinism ?? 'run-to-run', path } : {}), variant: gp.variant, launches: gp.launches.length, segkitMs: +t.ms.toFixed(4), segkitSingleMs: +t.singleMs.toFixed(4), segkitGpuMs: gpuT === undefined ? undefined : +gpuT.ms.toFixed(4),
      launchGpuMs: perLaunch.map((x) => +x.toFixed(4)), launchGpuSumMs: +perLaunch.reduce((x, y) => x + y, 0).toFixed(4), readGBps: +((items * 4) / 1e6 / t.ms).toFixed(1), mismatchesVsCpu: mismatches };
    console.log(JSON.stringify(row));
    results.push(row);
    gt?.destroy();
    ct?.destroy();
    gp.destroy();
    cp.destroy();
  }
  for (const x of [g, c]) for (const arr of Object.values(x)) arr?.destroy();
}
if (argv.out) writeFileSync(`${argv.out}/reduce-scan-webgpu.json`, JSON.stringify(results, null, 1));
gpu.destroy();
device.destroy();
cpu.destroy();
