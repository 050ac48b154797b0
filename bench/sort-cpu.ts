/**
 * DeviceSegmentedSort on the CPU backend against its peers, timed in alternation run by run (medians
 * after warm-up): `TypedArray.prototype.sort` per segment on a copy (the plain JS sort, which orders
 * -0 before +0 and is not a stable argsort) and tfjs-backend-cpu's `tf.topk(x, k = n, sorted)` on
 * the padded rows (tfjs's sort: descending, with indices). f32 keys; segkit sorts ascending with
 * indices (an argsort) and its figure includes the download of both outputs. Every segkit result is
 * checked against `referenceSegmentedSort` once.
 *
 * Run: npx tsx bench/sort-cpu.ts [--runs=N] [--workers=N] [--shapes=16x65536,1x1048576] (only the shapes whose id
 *   contains one of these) [--policy='{"radixTileItems":8192}'] (env.tuning.policy of every sort) [--tag=name]
 *   (writes bench/results/sort-cpu[-name].json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { DeviceSegmentedSort, cpuBackend, env, p, referenceSegmentedSort } from '../src/index.js';
import { parseArgs, printTable, timeInterleaved } from './lib/cases.js';
import { rng } from '../test/rng.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 7);
tf.env().set('IS_TEST', true);
await tf.setBackend('cpu');
await tf.ready();
const backend = argv.workers !== undefined ? cpuBackend({ workers: Number(argv.workers) }) : cpuBackend();
const tuningPolicy = argv.policy === undefined ? undefined : (JSON.parse(String(argv.policy)) as Record<string, number>);
const environment = env({ backend, ...(tuningPolicy === undefined ? {} : { tuning: { policy: tuningPolicy } }) });
const onlyShapes = argv.shapes === undefined ? undefined : String(argv.shapes).split(',');

interface Shape {
  id: string;
  sizes: number[];
}
const random = rng(5);
const shapes: Shape[] = [
  { id: '4096x256', sizes: Array.from({ length: 4096 }, () => 256) },
  { id: '256x4096', sizes: Array.from({ length: 256 }, () => 4096) },
  { id: '16x65536', sizes: Array.from({ length: 16 }, () => 65536) },
  { id: '1x1048576', sizes: [1048576] },
  { id: 'ragged 2000 x <=3000', sizes: Array.from({ length: 2000 }, () => Math.floor(random() * 3001)) },
];

const rows: Record<string, unknown>[] = [];
for (const shape of shapes.filter((s) => onlyShapes === undefined || onlyShapes.some((o) => s.id.includes(o)))) {
  const { sizes } = shape;
  const total = sizes.reduce((a, b) => a + b, 0);
  const keys = new Float32Array(total);
  for (let i = 0; i < total; i++) keys[i] = (random() - 0.5) * 1000;
  const starts: number[] = [];
  let offset = 0;
  for (const s of sizes) {
    starts.push(offset);
    offset += s;
  }
  const keysIn = backend.upload(keys);
  const keysOut = backend.alloc('f32', total);
  const valuesOut = backend.alloc('u32', total);
  const uniform = sizes.every((s) => s === sizes[0]);
  const args = {
    keysIn,
    keysOut,
    valuesOut,
    segmentSizes: uniform ? p.uniform(sizes[0]!, { min: 0, max: sizes[0]! }) : p.perSegment(sizes),
    order: p.constantOption('ascending'),
    numSegments: p.uniform(sizes.length),
  };
  // Padded rows for tfjs (ragged rows padded with -Infinity, which sorts last in descending order).
  const width = Math.max(...sizes);
  const padded = new Float32Array(sizes.length * width).fill(-Infinity);
  for (let r = 0; r < sizes.length; r++) padded.set(keys.subarray(starts[r]!, starts[r]! + sizes[r]!), r * width);
  const input = tf.tensor2d(padded, [sizes.length, width]);

  await DeviceSegmentedSort.sort(args, environment);
  const got = new Uint32Array((await backend.download(keysOut)).buffer);
  const ref = referenceSegmentedSort({ keyType: 'f32', keys: new Uint32Array(keys.buffer), segmentStarts: starts, segmentSizes: sizes, orders: sizes.map(() => 'ascending'), withValues: false, keysOut: new Uint32Array(total) });
  let bad = 0;
  for (let i = 0; i < total; i++) if (got[i] !== ref.keys[i]) bad++;

  const t = await timeInterleaved(
    {
      segkit: async () => {
        await DeviceSegmentedSort.sort(args, environment);
        await backend.download(keysOut);
        await backend.download(valuesOut);
      },
      typedArraySort: () => {
        const copy = keys.slice();
        for (let r = 0; r < sizes.length; r++) copy.subarray(starts[r]!, starts[r]! + sizes[r]!).sort();
      },
      tfjs: () => {
        const { values, indices } = tf.topk(input, width, true);
        values.dataSync();
        indices.dataSync();
        values.dispose();
        indices.dispose();
      },
    },
    runs,
  );
  rows.push({
    shape: shape.id,
    keys: total,
    variant: DeviceSegmentedSort.plan(args, environment).variant,
    'segkit ms': t.segkit.toFixed(2),
    'TypedArray.sort ms': t.typedArraySort.toFixed(2),
    'tf.topk(k=n) ms': t.tfjs.toFixed(2),
    'segkit Mkeys/s': (total / t.segkit / 1000).toFixed(1),
    'vs TypedArray.sort': (t.typedArraySort / t.segkit).toFixed(2),
    'vs tf.topk': (t.tfjs / t.segkit).toFixed(2),
    mismatches: bad,
  });
  input.dispose();
  keysIn.destroy();
  keysOut.destroy();
  valuesOut.destroy();
}
const table = printTable(rows);
console.log(`\n${runs} runs, medians; ${cpus().length} CPUs (${cpus()[0]?.model}), load ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ratios > 1: segkit faster${tuningPolicy === undefined ? '' : `; policy ${JSON.stringify(tuningPolicy)}`}`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/sort-cpu${argv.tag === undefined ? '' : `-${String(argv.tag)}`}.json`, JSON.stringify({ runs, rows, table, policy: tuningPolicy }, null, 2));
backend.destroy();
