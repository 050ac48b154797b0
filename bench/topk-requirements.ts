/*
 * What the requirements' relaxations buy: one `select` plus the download of the values, per
 * requirement set, timed in alternation run by run (medians after two warm-up rounds).
 *
 *   node --import tsx bench/topk-requirements.ts [cpu|cpu0|webgpu] [runs]
 *
 * cpu: cpuBackend() with its worker threads; cpu0: workers: 0; webgpu: webgpuBackend() (on lavapipe,
 * a measure of work done, not of GPU time). Shapes with many ties, where radix-select's finalize has
 * tied candidates to choose among, and random keys, where it mostly sorts.
 */
import { type Backend, type Requirements, DeviceBatchedTopK, cpuBackend, env, p, webgpuBackend } from '../src/index.js';
import { constantOf } from './lib/constant.js';

const which = process.argv[2] ?? 'cpu';
const runs = Number(process.argv[3] ?? 9);
const backend: Backend = which === 'webgpu' ? await webgpuBackend() : cpuBackend(which === 'cpu0' ? { workers: 0 } : {});

const requirementSets: [string, Partial<Requirements>][] = [
  ['defaults', {}],
  ['tie=any', { tieBreak: 'any', determinism: 'not-guaranteed' }],
  ['unsorted', { outputOrdering: 'unsorted' }],
  ['unsorted,order=any', { outputOrdering: 'unsorted', determinism: 'not-guaranteed' }],
  ['unsorted,tie=any,order=any', { outputOrdering: 'unsorted', tieBreak: 'any', determinism: 'not-guaranteed' }],
];
const ties = (i: number) => Math.round(Math.sin(i * 78.233) * 20);
const equal = () => 1;
const random = (i: number) => (Math.sin(i * 12.9898) * 43758.5453) % 1;
const shapes: [name: string, rows: number, cols: number, k: number, key: (i: number) => number][] =
  which === 'webgpu'
    ? [
        ['64x32768 k=2048 ties', 64, 32768, 2048, ties],
        ['8x65536 k=1000 equal', 8, 65536, 1000, equal],
        ['64x32768 k=2048 random', 64, 32768, 2048, random],
      ]
    : [
        ['1x4194304 k=100 ties', 1, 4194304, 100, ties],
        ['1x4194304 k=2000 equal', 1, 4194304, 2000, equal],
        ['64x32768 k=2048 ties', 64, 32768, 2048, ties],
        ['64x32768 k=2048 random', 64, 32768, 2048, random],
      ];

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(`${which}, ${runs} runs, ms per select + download (median)`);
for (const [name, rows, cols, k, key] of shapes) {
  const keysIn = backend.upload(new Float32Array(rows * cols).map((_, i) => key(i)));
  const keysOut = backend.alloc('f32', rows * k);
  const valuesOut = backend.alloc('i32', rows * k);
  const args = { keysIn, keysOut, valuesOut, segmentSizes: constantOf(cols), k: constantOf(k), selectDirection: p.constantOption('max'), numSegments: constantOf(rows) };
  const environments = requirementSets.map(([, requirements]) => env({ backend, requirements }));
  const times: number[][] = requirementSets.map(() => []);
  for (let run = -2; run < runs; run++) {
    for (let i = 0; i < environments.length; i++) {
      const t0 = performance.now();
      await DeviceBatchedTopK.select(args, environments[i]);
      await backend.download(valuesOut);
      if (run >= 0) times[i]!.push(performance.now() - t0);
    }
  }
  console.log(`${name}: ${requirementSets.map(([label], i) => `${label} ${median(times[i]!).toFixed(1)}`).join(' | ')}`);
  for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
}
backend.destroy();
