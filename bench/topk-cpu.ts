/**
 * segkit's CPU backend against its peers, side by side in one run: tfjs-backend-cpu's `tf.topk`,
 * a plain JS sort-and-slice, and a one-pass max over the same data (the floor any top-k pays).
 * f32 keys, 'max', sorted, with indices; segkit's figure includes the download of both outputs.
 *
 * Run: npm run bench            (writes bench/results/topk-cpu.json)
 * Options: --runs=N (default 7), --shapes=name,name
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { DeviceBatchedTopK, cpuBackend, env, p } from 'segkit';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const runs = Number(argv.runs ?? 7);

interface Shape {
  name: string;
  rows: number;
  cols: number;
  k: number;
}
const allShapes: Shape[] = [
  { name: 'moe-router', rows: 4096, cols: 256, k: 8 },
  { name: 'narrow', rows: 16384, cols: 64, k: 2 },
  { name: 'wide-k2048', rows: 64, cols: 32768, k: 2048 },
  { name: 'mid-k64', rows: 128, cols: 4096, k: 64 },
  { name: 'single-4M', rows: 1, cols: 4194304, k: 100 },
];
const shapes = argv.shapes ? allShapes.filter((s) => String(argv.shapes).split(',').includes(s.name)) : allShapes;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => unknown | Promise<unknown>, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

function makeData(rows: number, cols: number): Float32Array {
  const data = new Float32Array(rows * cols);
  let s = 0x9e3779b9;
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = ((s >>> 0) / 4294967296) * 2 - 1;
  }
  return data;
}

await tf.setBackend('cpu');
await tf.ready();
const backend = cpuBackend();
const environment = env({ backend });
const results: Record<string, unknown>[] = [];

for (const shape of shapes) {
  const { rows, cols, k } = shape;
  const data = makeData(rows, cols);
  const keysIn = backend.upload(data);
  const keysOut = backend.alloc('f32', rows * k);
  const valuesOut = backend.alloc('i32', rows * k);
  const args = {
    keysIn,
    keysOut,
    valuesOut,
    segmentSizes: p.uniform(cols),
    k: p.uniform(k),
    selectDirection: p.constantOption('max'),
    numSegments: p.uniform(rows),
  };
  const plan = DeviceBatchedTopK.plan(args, environment);
  const segkit = await time(async () => {
    await DeviceBatchedTopK.select(args, environment);
    await backend.download(keysOut);
    await backend.download(valuesOut);
  });

  const input = tf.tensor2d(data, [rows, cols]);
  const tfjs = await time(() => {
    const { values, indices } = tf.topk(input, k, true);
    values.dataSync();
    indices.dataSync();
    values.dispose();
    indices.dispose();
  }, 1);
  input.dispose();

  const jsSort = rows * cols <= 4_194_304
    ? await time(() => {
        const out = new Float32Array(rows * k);
        const idx = new Int32Array(rows * k);
        for (let r = 0; r < rows; r++) {
          const order = Array.from({ length: cols }, (_, i) => i);
          const base = r * cols;
          order.sort((a, b) => data[base + b]! - data[base + a]! || a - b);
          for (let j = 0; j < k; j++) {
            idx[r * k + j] = order[j]!;
            out[r * k + j] = data[base + order[j]!]!;
          }
        }
      }, 1)
    : NaN;

  const onePassMax = await time(() => {
    const out = new Float32Array(rows);
    for (let r = 0; r < rows; r++) {
      let best = -Infinity;
      const base = r * cols;
      for (let i = 0; i < cols; i++) if (data[base + i]! > best) best = data[base + i]!;
      out[r] = best;
    }
    return out;
  });

  const row = {
    shape: `${rows}x${cols} k=${k}`,
    variant: plan.variant,
    segkitMs: +segkit.toFixed(3),
    tfjsCpuMs: +tfjs.toFixed(3),
    jsSortMs: +jsSort.toFixed(3),
    onePassMaxMs: +onePassMax.toFixed(3),
    speedupVsTfjs: +(tfjs / segkit).toFixed(1),
    vsOnePassMax: +(segkit / onePassMax).toFixed(2),
  };
  results.push(row);
  console.log(JSON.stringify(row));
  keysIn.destroy();
  keysOut.destroy();
  valuesOut.destroy();
}

// Host overhead of the environment API on a tiny problem: 1 segment of 8 keys.
{
  const keysIn = backend.upload(new Float32Array([3, 1, 4, 1, 5, 9, 2, 6]));
  const keysOut = backend.alloc('f32', 2);
  const valuesOut = backend.alloc('i32', 2);
  const args = { keysIn, keysOut, valuesOut, segmentSizes: p.constant(8), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.constant(1) };
  const iterations = 20000;
  for (let i = 0; i < 2000; i++) await DeviceBatchedTopK.select(args, environment);
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) await DeviceBatchedTopK.select(args, environment);
    samples.push(((performance.now() - t0) * 1000) / iterations);
  }
  const row = { shape: '1x8 k=2 (host overhead of select)', usPerSelect: +median(samples).toFixed(2) };
  results.push(row);
  console.log(JSON.stringify(row));
}

console.table(results);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const meta = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, runs };
writeFileSync(new URL('./results/topk-cpu.json', import.meta.url), JSON.stringify({ meta, results }, null, 2));
backend.destroy();
