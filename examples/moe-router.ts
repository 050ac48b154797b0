/**
 * Mixture-of-Experts routing on the CPU backend: each of N tokens has one score per expert, and
 * each token goes to its top-k experts, with routing weights (a softmax over the chosen logits).
 *
 * First the one call that does the common case, as `torch.topk(scores, 2)` plus the softmax; then
 * the same with the two-step API, where the parameters are typed: the expert count is a
 * compile-time constant and k a runtime value with static bounds [1, 8], so the dispatcher can
 * prune every variant but the reduce one, and the plan can be explained and reused.
 *
 * Run: npm run example
 */
import { DeviceBatchedTopK, cpuBackend, env, p, type TopKVariantsFor } from 'segkit';

const numTokens = 4096;
const numExperts = 128;
const topK = 2;

// Scores from the router's gating layer (here: deterministic pseudo-random logits).
const scores = new Float32Array(numTokens * numExperts);
let seed = 12345;
for (let i = 0; i < scores.length; i++) {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  scores[i] = (seed / 2 ** 32) * 8 - 4;
}

const backend = cpuBackend();
const keysIn = backend.upload(scores);

// One call: outputs allocated and returned (the caller owns them).
const { keys, indices, weights } = await DeviceBatchedTopK.topk(keysIn, { rows: numTokens, k: topK, weights: 'softmax' });
const [logits, experts, routing] = [await backend.download(keys), await backend.download(indices), await backend.download(weights)];

console.log(`routed ${numTokens} tokens to the top ${topK} of ${numExperts} experts`);
for (let token = 0; token < 4; token++) {
  const row = Array.from({ length: topK }, (_, j) => `expert ${experts[token * topK + j]} (logit ${logits[token * topK + j]!.toFixed(3)}, weight ${routing[token * topK + j]!.toFixed(3)})`);
  console.log(`token ${token}: ${row.join(', ')}`);
}

// The two-step form: typed parameters, a plan to inspect and run again, caller-owned outputs.
const keysOut = backend.alloc('f32', numTokens * topK);
const valuesOut = backend.alloc('u32', numTokens * topK);
const weightsOut = backend.alloc('f32', numTokens * topK);
const args = {
  keysIn,
  keysOut,
  valuesOut, // no valuesIn: the values are each expert's index within its token's row
  weights: { kind: 'softmax' },
  weightsOut,
  segmentSizes: p.constant(numExperts),
  k: p.uniform(topK, { min: 1, max: 8 }),
  selectDirection: p.constantOption('max'),
  numSegments: p.uniform(numTokens),
} as const;

// Known at compile time from the static bounds alone: only 'reduce' can ever run.
const reachable: TopKVariantsFor<typeof args> = 'reduce';

const plan = DeviceBatchedTopK.plan(args, env({ backend }));
await plan.run();
const same = (await backend.download(weightsOut)).every((w, i) => Object.is(w, routing[i]));
console.log();
console.log(`two-step plan (compile-time variants: ${reachable}): the same weights, bit for bit: ${same}`);
console.log(plan.explain());
backend.destroy();
