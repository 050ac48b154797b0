/**
 * DeviceSegmentedScan on the CPU backend against its peers, side by side in one run: tfjs-backend-cpu's
 * `tf.cumsum` over the rows of a dense [rows, cols] tensor, and a plain single-pass JS loop (a running
 * float32 sum per row). segkit's figure includes the download of its output, into a host buffer that
 * every run reuses (`download(array, into)`; the loop too writes into one), as tfjs's includes
 * `dataSync`); the three are timed in alternation, run by run (medians after warm-up).
 *
 * Shapes (the reduce and scan issue's): MoE-like, many short segments (65536 rows of 16); attention-
 * like ragged rows (2048 rows of 1..4096 values in rows of stride 4096: segkit and the JS loop read each
 * row's own length, tfjs scans the padded rows, padding 0); one long segment (16M values).
 *
 * segkit under the default 'run-to-run' adds in the canonical order (bit-identical to WebGPU);
 * `segkit fast` is 'not-guaranteed' (left to right within a tile).
 *
 * Run: npm run build && node --import tsx bench/scan-cpu.ts      (writes bench/results/scan-cpu.json)
 * Options: --runs=N (default 7), --shapes=moe,ragged,long, --modes=inclusive,exclusive,
 *          --workers=N (CPU backend worker threads; default: its own)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { DeviceSegmentedScan, cpuBackend, env, p } from 'segkit';
import { parseArgs, printTable, timeInterleaved } from './lib/cases.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 7);

/** Deterministic values in [-1, 1). */
function fill(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = state / 2147483648 - 1;
  }
  return out;
}

interface Shape {
  readonly label: string;
  readonly rows: number;
  readonly stride: number;
  /** Per-row lengths (ragged), or every row full. */
  readonly lengths: Uint32Array | undefined;
  readonly data: Float32Array;
}

function shapes(only: string[] | undefined): Shape[] {
  const all: Shape[] = [];
  const want = (id: string) => only === undefined || only.includes(id);
  if (want('moe')) all.push({ label: 'MoE 65536x16', rows: 65536, stride: 16, lengths: undefined, data: fill(65536 * 16, 1) });
  if (want('ragged')) {
    const rows = 2048;
    const stride = 4096;
    let state = 7;
    const lengths = Uint32Array.from({ length: rows }, () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return 1 + (state % stride);
    });
    const data = fill(rows * stride, 2);
    // Padding 0: tfjs scans whole rows, and a 0 after a row's last value changes none of its outputs.
    for (let r = 0; r < rows; r++) data.fill(0, r * stride + lengths[r]!, (r + 1) * stride);
    all.push({ label: `ragged 2048 rows of 1..4096 (${lengths.reduce((a, b) => a + b, 0)} values)`, rows, stride, lengths, data });
  }
  if (want('long')) all.push({ label: 'one segment of 16M', rows: 1, stride: 16 * 1024 * 1024, lengths: undefined, data: fill(16 * 1024 * 1024, 3) });
  return all;
}

/** The plain single-pass JS loop: each row's running sum, rounded to f32 as it goes (the output's type). */
function jsLoop(shape: Shape, exclusive: boolean, out: Float32Array): void {
  const { data, stride, lengths } = shape;
  for (let r = 0; r < shape.rows; r++) {
    const start = r * stride;
    const end = start + (lengths === undefined ? stride : lengths[r]!);
    let acc = 0;
    for (let i = start; i < end; i++) {
      if (exclusive) {
        out[i] = acc;
        acc = Math.fround(acc + data[i]!);
      } else {
        acc = Math.fround(acc + data[i]!);
        out[i] = acc;
      }
    }
  }
}

const backend = argv.workers !== undefined ? cpuBackend({ workers: Number(argv.workers) }) : cpuBackend();
tf.env().set('IS_TEST', true);
await tf.setBackend('cpu');
await tf.ready();
const modes = (argv.modes ?? 'inclusive').split(',') as ('inclusive' | 'exclusive')[];
const results: Record<string, unknown>[] = [];
for (const shape of shapes(argv.shapes?.split(','))) {
  const valuesIn = backend.upload(shape.data);
  const valuesOut = backend.alloc('f32', shape.data.length);
  const input = tf.tensor2d(shape.data, [shape.rows, shape.stride]);
  for (const mode of modes) {
    const args = {
      valuesIn,
      valuesOut,
      segmentSizes: shape.lengths === undefined ? p.uniform(shape.stride) : p.perSegment(shape.lengths, { max: shape.stride }),
      ...(shape.lengths === undefined ? {} : { segmentStride: p.uniform(shape.stride) }),
      op: p.constantOption('sum'),
      mode: p.constantOption(mode),
      numSegments: p.uniform(shape.rows),
    };
    const plan = DeviceSegmentedScan.plan(args, env({ backend }));
    const fastPlan = DeviceSegmentedScan.plan(args, env({ backend, requirements: { determinism: 'not-guaranteed' } }));
    const temp = Math.max(plan.tempStorageBytes, fastPlan.tempStorageBytes) > 0 ? backend.alloc('u8', Math.max(plan.tempStorageBytes, fastPlan.tempStorageBytes)) : undefined;
    const jsOut = new Float32Array(shape.data.length);
    // segkit reads its output into one host buffer reused call after call, as the loop writes into one.
    const hostOut = new Float32Array(shape.data.length);
    const t = await timeInterleaved(
      {
        segkit: async () => {
          await plan.run(temp);
          await backend.download(valuesOut, hostOut);
        },
        segkitFast: async () => {
          await fastPlan.run(temp);
          await backend.download(valuesOut, hostOut);
        },
        tfjs: () => {
          const result = tf.cumsum(input, 1, mode === 'exclusive');
          result.dataSync();
          result.dispose();
        },
        js: () => jsLoop(shape, mode === 'exclusive', jsOut),
      },
      runs,
    );
    // The three agree to f32 rounding: sums of |x| < 1 over at most 16M values.
    await plan.run(temp);
    const got = await backend.download(valuesOut);
    const tfOut = tf.cumsum(input, 1, mode === 'exclusive');
    const tfData = tfOut.dataSync();
    tfOut.dispose();
    let worstJs = 0;
    let worstTf = 0;
    for (let r = 0; r < shape.rows; r++) {
      const start = r * shape.stride;
      const end = start + (shape.lengths === undefined ? shape.stride : shape.lengths[r]!);
      for (let i = start; i < end; i++) {
        worstJs = Math.max(worstJs, Math.abs(got[i]! - jsOut[i]!));
        worstTf = Math.max(worstTf, Math.abs(got[i]! - tfData[i]!));
      }
    }
    const row = {
      shape: shape.label,
      mode,
      variant: plan.variant,
      segkitMs: +t.segkit.toFixed(3),
      segkitFastMs: +t.segkitFast.toFixed(3),
      tfjsCpuMs: +t.tfjs.toFixed(3),
      jsLoopMs: +t.js.toFixed(3),
      xVsTfjs: +(t.tfjs / t.segkit).toFixed(1),
      overJsLoop: +(t.segkit / t.js).toFixed(2),
      targetVsTfjs: `>=3x: ${t.tfjs / t.segkit >= 3 ? 'met' : 'MISSED'}`,
      targetJsLoop: `<=2x: ${t.segkit / t.js <= 2 ? 'met' : 'MISSED'}`,
      maxAbsDiffVsJs: +worstJs.toExponential(1),
      maxAbsDiffVsTfjs: +worstTf.toExponential(1),
    };
    results.push(row);
    console.error(JSON.stringify(row));
    temp?.destroy();
    plan.destroy();
    fastPlan.destroy();
  }
  input.dispose();
  valuesIn.destroy();
  valuesOut.destroy();
}
console.log(`\n${cpus()[0]?.model} x${cpus().length}, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}, median of ${runs} runs after warm-up, CPU backend workers: ${argv.workers ?? 'default (availableParallelism - 1)'}`);
printTable(results, ['shape', 'mode', 'variant', 'segkitMs', 'segkitFastMs', 'tfjsCpuMs', 'jsLoopMs', 'xVsTfjs', 'overJsLoop', 'targetVsTfjs', 'targetJsLoop', 'maxAbsDiffVsJs', 'maxAbsDiffVsTfjs']);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const meta = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg(), memGiB: +(totalmem() / 2 ** 30).toFixed(1), runs, workers: argv.workers ?? 'default', tfjs: tf.version_core };
writeFileSync(new URL('./results/scan-cpu.json', import.meta.url), JSON.stringify({ meta, results }, null, 2));
backend.destroy();
