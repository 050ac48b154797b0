/**
 * DeviceSegmentedReduce on the CPU backend against its peers, side by side in one run: tfjs-backend-cpu's
 * `tf.sum` / `tf.min` / `tf.max` / `tf.argMax` over the rows of a dense [rows, cols] tensor, and a plain single-pass JS loop
 * (float64 accumulator for sums). segkit's figure includes the download of its output, into a host
 * buffer every run reuses (`download(array, into)`; the loop too writes into one), as tfjs's
 * includes `dataSync`; the three are timed in alternation, run by run (medians after warm-up).
 *
 * Shapes (the reduce issue's): MoE-like, many short segments (65536 tokens x 16 experts); attention-
 * like ragged rows (2048 rows of 1..4096 values in rows of stride 4096: segkit reads the per-row
 * lengths, tfjs reduces the padded rows, padding filled with the op's identity so results agree, the
 * JS loop reads each row's own length); one long segment (16M values).
 *
 * segkit under the default 'run-to-run' sums in the canonical order (bit-identical to WebGPU);
 * `segkit fast` is 'not-guaranteed' (float64 accumulation on the CPU).
 *
 * Run: npm run build && node --import tsx bench/reduce-cpu.ts      (writes bench/results/reduce-cpu.json)
 * Options: --runs=N (default 7), --shapes=moe,ragged,long, --ops=sum,min,max,argMax, --workers=N (CPU backend
 *          worker threads; default: its own), --variants (instead: every forced variant over segment
 *          sizes, for the policy's thresholds), --webgpu (with --variants: on WebGPU)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { type Backend, type SegmentedReduceArgs, type SegmentedReduceVariant, DeviceSegmentedReduce, cpuBackend, env, p, segmentedReduceVariants, webgpuBackend } from 'segkit';
import { median, parseArgs, printTable, timeInterleaved } from './lib/cases.js';

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
  readonly id: string;
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
  if (want('moe')) all.push({ id: 'moe', label: 'MoE 65536x16', rows: 65536, stride: 16, lengths: undefined, data: fill(65536 * 16, 1) });
  if (want('ragged')) {
    const rows = 2048;
    const stride = 4096;
    let state = 7;
    const lengths = Uint32Array.from({ length: rows }, () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return 1 + (state % stride);
    });
    all.push({ id: 'ragged', label: `ragged 2048 rows of 1..4096 (${lengths.reduce((a, b) => a + b, 0)} values)`, rows, stride, lengths, data: fill(rows * stride, 2) });
  }
  if (want('long')) all.push({ id: 'long', label: 'one segment of 16M', rows: 1, stride: 16 * 1024 * 1024, lengths: undefined, data: fill(16 * 1024 * 1024, 3) });
  return all;
}

type PeerOp = 'sum' | 'min' | 'max' | 'argMax';

/** The CPU backend's worker-pool counters (zeros on other backends). */
function poolStats(backend: Backend): { rests: number } {
  const stats = (backend as unknown as { workerStats?(): { rests: number } }).workerStats;
  return stats === undefined ? { rests: 0 } : stats.call(backend);
}

/** The op's identity, for tfjs's padding: every peer then computes the same result on ragged rows. */
const identityOf = (op: PeerOp) => (op === 'sum' ? 0 : op === 'min' ? Infinity : -Infinity);

/** The plain single-pass JS loop over each row's own values (float64 sum; extremes by comparison, first index on ties). */
function jsLoop(shape: Shape, op: PeerOp, out: Float32Array, indices: Int32Array): void {
  const { data, stride, lengths } = shape;
  for (let r = 0; r < shape.rows; r++) {
    const start = r * stride;
    const end = start + (lengths === undefined ? stride : lengths[r]!);
    if (op === 'sum') {
      let s = 0;
      for (let i = start; i < end; i++) s += data[i]!;
      out[r] = s;
    } else if (op === 'min') {
      let m = Infinity;
      for (let i = start; i < end; i++) {
        const v = data[i]!;
        if (v < m) m = v;
      }
      out[r] = m;
    } else {
      let m = -Infinity;
      let at = -1;
      for (let i = start; i < end; i++) {
        const v = data[i]!;
        if (v > m) {
          m = v;
          at = i;
        }
      }
      out[r] = m;
      indices[r] = at < 0 ? -1 : at - start;
    }
  }
}

/** tfjs-cpu's reduction of the op over the rows. */
function tfjsReduce(input: tf.Tensor2D, op: PeerOp): tf.Tensor {
  if (op === 'sum') return tf.sum(input, 1);
  if (op === 'min') return tf.min(input, 1);
  if (op === 'max') return tf.max(input, 1);
  return tf.argMax(input, 1);
}

async function compareWithPeers(backend: Backend): Promise<void> {
  tf.env().set('IS_TEST', true);
  await tf.setBackend('cpu');
  await tf.ready();
  const ops = (argv.ops ?? 'sum,min,max,argMax').split(',') as PeerOp[];
  const results: Record<string, unknown>[] = [];
  for (const shape of shapes(argv.shapes?.split(','))) {
    const valuesIn = backend.upload(shape.data);
    const valuesOut = backend.alloc('f32', shape.rows);
    const indicesOut = backend.alloc('i32', shape.rows);
    for (const op of ops) {
      // tfjs reduces padded rows: padding holds the op's identity, so every peer computes the same result.
      const padded = shape.lengths === undefined ? shape.data : shape.data.slice();
      if (shape.lengths !== undefined) {
        for (let r = 0; r < shape.rows; r++) padded.fill(identityOf(op), r * shape.stride + shape.lengths[r]!, (r + 1) * shape.stride);
      }
      const input = tf.tensor2d(padded, [shape.rows, shape.stride]);
      // Annotated: the op is one of the bench's list, so whether indicesOut is needed is known at run time.
      const args: SegmentedReduceArgs = {
        valuesIn,
        valuesOut,
        ...(op === 'argMax' ? { indicesOut } : {}),
        segmentSizes: shape.lengths === undefined ? p.uniform(shape.stride) : p.perSegment(shape.lengths, { max: shape.stride }),
        ...(shape.lengths === undefined ? {} : { segmentStride: p.uniform(shape.stride) }),
        op: p.constantOption(op),
        numSegments: p.uniform(shape.rows),
      };
      const canonical = env({ backend });
      const fast = env({ backend, requirements: { determinism: 'not-guaranteed' } });
      const plan = DeviceSegmentedReduce.plan(args, canonical);
      const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
      const fastPlan = DeviceSegmentedReduce.plan(args, fast);
      const jsOut = new Float32Array(shape.rows);
      const jsIndices = new Int32Array(shape.rows);
      // segkit reads its output into one host buffer reused call after call, as the loop writes into one.
      const hostValues = new Float32Array(shape.rows);
      const hostIndices = new Int32Array(shape.rows);
      const poolBefore = poolStats(backend);
      const t = await timeInterleaved<'segkit' | 'segkitFast' | 'tfjs' | 'js'>(
        {
          segkit: async () => {
            await plan.run(temp);
            if (op === 'argMax') await backend.download(indicesOut, hostIndices);
            else await backend.download(valuesOut, hostValues);
          },
          ...(op === 'sum'
            ? {
                segkitFast: async () => {
                  await fastPlan.run(temp);
                  await backend.download(valuesOut, hostValues);
                },
              }
            : {}),
          tfjs: () => {
            const result = tfjsReduce(input, op);
            result.dataSync();
            result.dispose();
          },
          js: () => jsLoop(shape, op, jsOut, jsIndices),
        },
        runs,
      );
      // Results agree with the float64 loop (sums to f32 rounding of a sum of |x| <= 4096 per row).
      await plan.run(temp);
      const got = await backend.download(valuesOut);
      let worst = 0;
      for (let r = 0; r < shape.rows; r++) worst = Math.max(worst, Math.abs(got[r]! - jsOut[r]!));
      if (op === 'argMax') {
        const gotIndices = await backend.download(indicesOut);
        const tfIndices = tfjsReduce(input, op);
        const tfData = tfIndices.dataSync();
        tfIndices.dispose();
        for (let r = 0; r < shape.rows; r++) {
          if (gotIndices[r] !== jsIndices[r] || tfData[r] !== jsIndices[r]) throw new Error(`argMax row ${r}: segkit ${gotIndices[r]}, tfjs ${tfData[r]}, js ${jsIndices[r]}`);
        }
      }
      const poolAfter = poolStats(backend);
      const segkit = t.segkit;
      const fastMs = (t as Record<string, number>).segkitFast;
      const row = {
        shape: shape.label,
        op,
        variant: plan.variant,
        segkitMs: +segkit.toFixed(3),
        segkitFastMs: fastMs === undefined ? undefined : +fastMs.toFixed(3),
        tfjsCpuMs: +t.tfjs.toFixed(3),
        jsLoopMs: +t.js.toFixed(3),
        xVsTfjs: +(t.tfjs / segkit).toFixed(1),
        overJsLoop: +(segkit / t.js).toFixed(2),
        targetVsTfjs: `>=3x: ${t.tfjs / segkit >= 3 ? 'met' : 'MISSED'}`,
        targetJsLoop: `<=2x: ${segkit / t.js <= 2 ? 'met' : 'MISSED'}`,
        maxAbsDiffVsJs: +worst.toExponential(1),
        // Times the worker pool rested (a second on the calling thread alone) because launches waited
        // on a descheduled worker: a figure taken then is a contended one.
        poolRests: poolAfter.rests - poolBefore.rests,
      };
      results.push(row);
      console.error(JSON.stringify(row));
      input.dispose();
      temp?.destroy();
      plan.destroy();
      fastPlan.destroy();
    }
    valuesIn.destroy();
    valuesOut.destroy();
    indicesOut.destroy();
  }
  console.log(`\n${cpus()[0]?.model} x${cpus().length}, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}, median of ${runs} runs after warm-up, CPU backend workers: ${argv.workers ?? 'default (availableParallelism - 1)'}`);
  printTable(results, ['shape', 'op', 'variant', 'segkitMs', 'segkitFastMs', 'tfjsCpuMs', 'jsLoopMs', 'xVsTfjs', 'overJsLoop', 'targetVsTfjs', 'targetJsLoop', 'maxAbsDiffVsJs', 'poolRests']);
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg(), memGiB: +(totalmem() / 2 ** 30).toFixed(1), runs, workers: argv.workers ?? 'default', tfjs: tf.version_core };
  writeFileSync(new URL('./results/reduce-cpu.json', import.meta.url), JSON.stringify({ meta, results }, null, 2));
}

/** Every variant forced over segment sizes at a fixed total (4M values): where each one wins. */
async function sweepVariants(backend: Backend): Promise<void> {
  const total = Number(argv.total ?? 4 * 1024 * 1024);
  const data = fill(total, 5);
  const valuesIn = backend.upload(data);
  const rowsMax = total / 4;
  const valuesOut = backend.alloc('f32', rowsMax);
  const results: Record<string, unknown>[] = [];
  for (const size of [4, 8, 16, 32, 64, 256, 1024, 2048, 4096, 8192, 32768, 131072, total]) {
    const rows = Math.floor(total / size);
    const row: Record<string, unknown> = { segmentSize: size, segments: rows };
    for (const variant of segmentedReduceVariants as readonly SegmentedReduceVariant[]) {
      const args = { valuesIn, valuesOut, segmentSizes: p.uniform(size), op: p.constantOption('sum'), numSegments: p.uniform(rows) };
      let plan;
      try {
        plan = DeviceSegmentedReduce.plan(args, env({ backend, tuning: { variant } }));
      } catch {
        continue;
      }
      const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
      const samples: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        const t0 = performance.now();
        await plan.run(temp);
        await backend.download(valuesOut);
        if (i > 0) samples.push(performance.now() - t0);
      }
      row[variant] = +median(samples).toFixed(2);
      temp?.destroy();
      plan.destroy();
    }
    row.natural = DeviceSegmentedReduce.plan({ valuesIn, valuesOut, segmentSizes: p.uniform(size), op: p.constantOption('sum'), numSegments: p.uniform(rows) }, env({ backend })).variant;
    results.push(row);
    console.error(JSON.stringify(row));
  }
  console.log(`\n${backend.name}, ${cpus()[0]?.model} x${cpus().length}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}: ms per call (sum of ${total} f32 values, download included), median of ${runs}`);
  printTable(results, ['segmentSize', 'segments', ...segmentedReduceVariants, 'natural']);
  valuesIn.destroy();
  valuesOut.destroy();
}

const backend =
  argv.webgpu !== undefined ? await webgpuBackend() : argv.workers !== undefined ? cpuBackend({ workers: Number(argv.workers) }) : cpuBackend();
if (argv.variants !== undefined) await sweepVariants(backend);
else await compareWithPeers(backend);
backend.destroy();
