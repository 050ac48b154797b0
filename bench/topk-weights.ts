/**
 * What the routing-weights epilogue costs: an MoE router's top-k (tokens x experts f32 logits,
 * 'max', sorted, indices) with and without `weights`, the same plan shape otherwise, timed in
 * alternation (medians of plan.run() + synchronize after warm-up). The epilogue is one more
 * launch in the same pass and submit ('weights', one invocation per token).
 *
 * Run: npm run build && node --import tsx bench/topk-weights.ts [--backend=cpu|webgpu] [--runs=N]
 *      [--tokens=N] [--experts=N] [--k=N] [--kind=softmax|sigmoid-renormalize]
 */
import { type Backend, DeviceBatchedTopK, cpuBackend, env, p, webgpuBackend } from 'segkit';
import { median, parseArgs } from './lib/cases.js';
import { constantOf } from './lib/constant.js';

const argv = parseArgs(process.argv.slice(2));
const runs = Number(argv.runs ?? 15);
const tokens = Number(argv.tokens ?? 4096);
const experts = Number(argv.experts ?? 128);
const k = Number(argv.k ?? 2);
const kind = (argv.kind ?? 'softmax') as 'softmax' | 'sigmoid-renormalize';
const backend: Backend = argv.backend === 'webgpu' ? await webgpuBackend() : cpuBackend();

let seed = 12345;
const scores = Float32Array.from({ length: tokens * experts }, () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return (seed / 2 ** 32) * 8 - 4;
});
const keysIn = backend.upload(scores);
const keysOut = backend.alloc('f32', tokens * k);
const valuesOut = backend.alloc('u32', tokens * k);
const weightsOut = backend.alloc('f32', tokens * k);
const common = { keysIn, keysOut, valuesOut, segmentSizes: constantOf(experts), k: p.uniform(k, { min: 1, max: 8 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(tokens) } as const;
const plain = DeviceBatchedTopK.plan(common, env({ backend }));
const withWeights = DeviceBatchedTopK.plan({ ...common, weights: { kind }, weightsOut }, env({ backend }));
const temp = backend.alloc('u8', Math.max(4, plain.tempStorageBytes, withWeights.tempStorageBytes));

const timeOne = async (plan: typeof plain) => {
  const start = performance.now();
  await plan.run(plan.tempStorageBytes > 0 ? temp : undefined);
  await backend.synchronize();
  return performance.now() - start;
};
for (let i = 0; i < 3; i++) {
  await timeOne(plain);
  await timeOne(withWeights);
}
const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < runs; i++) {
  a.push(await timeOne(plain));
  b.push(await timeOne(withWeights));
}
const ms = (x: number) => `${x.toFixed(3)} ms`;
console.log(`${backend.name}: ${tokens} tokens x ${experts} experts, k=${k}, ${plain.variant}; median of ${runs}`);
console.log(`  top-k alone:          ${ms(median(a))}`);
console.log(`  top-k + ${kind} weights: ${ms(median(b))} (epilogue +${ms(median(b) - median(a))}, ${(((median(b) - median(a)) / median(a)) * 100).toFixed(1)}%)`);
backend.destroy();
