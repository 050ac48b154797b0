/**
 * segkit's CPU backend against its peers, side by side in one run: tfjs-backend-cpu's `tf.topk`,
 * a plain JS sort-and-slice, and a one-pass max over the same data (the floor any top-k pays).
 * f32 keys, 'max', sorted, with indices; segkit's figure includes the download of both outputs.
 * segkit, tfjs and the one-pass max are timed in alternation, run by run (medians after warm-up).
 * Cases: the shapes of the top-k issue (single row 1x4194304) plus two workloads, causal sparse
 * attention (per-row sizes, segment stride) and an MoE router with per-token k (see bench/lib/cases.ts,
 * which also says how the dense peers are called on them).
 *
 * Run: npm run bench            (writes bench/results/topk-cpu.json)
 * Options: --runs=N (default 7), --cases=id,id (moe-router, narrow, wide-k2048, mid-k64, single,
 *          attention, moe-k1-8), --no-check, --workers=N (CPU backend worker threads; default: its own)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { DeviceBatchedTopK, cpuBackend, env, p } from 'segkit';
import { jsSortAndSlice, makeCases, median, mismatches, onePassMax, parseArgs, peerKeyMismatches, printTable, reference, timeInterleaved, timeMs } from './lib/cases.js';
import { segkitCase } from './lib/segkit-runner.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 7);
const check = argv['no-check'] === undefined;
const cases = makeCases({ singleRowCols: 4194304, ...(argv.cases ? { only: String(argv.cases).split(',') } : {}) });

tf.env().set('IS_TEST', true); // silences the "install tfjs-node" banner
await tf.setBackend('cpu');
await tf.ready();
const backend = argv.workers !== undefined ? cpuBackend({ workers: Number(argv.workers) }) : cpuBackend();
const environment = env({ backend });
const results: Record<string, unknown>[] = [];
const ISSUE3_TARGET: Record<string, number> = { 'moe-router': 10 };

for (const c of cases) {
  const s = segkitCase(c, backend, environment);
  const input = tf.tensor2d(c.data, [c.rows, c.stride]);
  const ref = check ? reference(c) : undefined;
  let tfjsMismatches: number | undefined;
  // segkit, tfjs and the one-pass max in alternation (load from other processes hits all alike).
  const t = await timeInterleaved(
    {
      segkit: async () => {
        await s.select();
        await backend.download(s.keysOut);
        await backend.download(s.valuesOut);
      },
      tfjs: () => {
        const { values, indices } = tf.topk(input, c.kMax, true);
        const v = values.dataSync();
        indices.dataSync();
        if (ref && tfjsMismatches === undefined) tfjsMismatches = peerKeyMismatches(c, ref, c.kMax, v);
        values.dispose();
        indices.dispose();
      },
      onePass: () => onePassMax(c),
    },
    runs,
  );
  const { segkit, tfjs, onePass } = t;
  input.dispose();
  let segkitMismatches: number | undefined;
  if (ref) segkitMismatches = mismatches(ref, await backend.download(s.keysOut), await backend.download(s.valuesOut));

  const jsSort = c.validKeys <= 4_194_304 ? await timeMs(() => jsSortAndSlice(c), Math.min(runs, 3), 1) : NaN;

  const minSpeedup = ISSUE3_TARGET[c.id] ?? 5;
  const row = {
    case: c.label,
    variant: s.plan.variant,
    segkitMs: +segkit.toFixed(3),
    tfjsCpuMs: +tfjs.toFixed(3),
    jsSortMs: +jsSort.toFixed(2),
    onePassMaxMs: +onePass.toFixed(3),
    xVsTfjs: +(tfjs / segkit).toFixed(1),
    xVsJsSort: +(jsSort / segkit).toFixed(1),
    overOnePassMax: +(segkit / onePass).toFixed(2),
    targetVsTfjs: `>=${minSpeedup}x: ${tfjs / segkit >= minSpeedup ? 'met' : 'MISSED'}`,
    targetOnePass: `<=3x: ${segkit / onePass <= 3 ? 'met' : 'MISSED'}`,
    mismatches: segkitMismatches,
    tfjsKeyMismatches: tfjsMismatches,
    peerCall: c.peerNote,
  };
  results.push(row);
  console.error(JSON.stringify(row));
  s.destroy();
}

// Host overhead of the environment API on a tiny problem: 1 segment of 8 keys (no download).
let hostOverheadUs: number;
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
  hostOverheadUs = +median(samples).toFixed(2);
  const row = { case: '1x8 k=2: host overhead of select (us)', segkitUs: hostOverheadUs, target: `<20us: ${hostOverheadUs < 20 ? 'met' : 'MISSED'}` };
  console.error(JSON.stringify(row));
}

console.log(`\n${cpus()[0]?.model} x${cpus().length}, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}, median of ${runs} runs after warm-up, CPU backend workers: ${argv.workers ?? 'default (availableParallelism - 1)'}`);
printTable(results, ['case', 'variant', 'segkitMs', 'tfjsCpuMs', 'jsSortMs', 'onePassMaxMs', 'xVsTfjs', 'xVsJsSort', 'overOnePassMax', 'targetVsTfjs', 'targetOnePass', 'mismatches']);
console.log(`\nhost overhead of select, 1 segment of 8 keys: ${hostOverheadUs} us (target < 20 us: ${hostOverheadUs < 20 ? 'met' : 'MISSED'})`);
console.log('dense peers on the workloads:');
for (const r of results) console.log(`  ${r.case}: ${r.peerCall}`);

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const meta = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg(), memGiB: +(totalmem() / 2 ** 30).toFixed(1), runs, workers: argv.workers ?? 'default', tfjs: tf.version_core };
writeFileSync(new URL('./results/topk-cpu.json', import.meta.url), JSON.stringify({ meta, results, hostOverheadUs }, null, 2));
backend.destroy();
