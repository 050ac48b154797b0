/**
 * Mixture-of-Experts routing on the CPU backend: each of N tokens has one score per expert, and
 * each token goes to its top-k experts. The expert count is a compile-time constant, k is a runtime
 * value with static bounds [1, 8], so the dispatcher can prune every variant but the reduce one.
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
const keysOut = backend.alloc('f32', numTokens * topK);
const valuesOut = backend.alloc('u32', numTokens * topK);

const args = {
  keysIn,
  keysOut,
  valuesOut, // no valuesIn: the values are each expert's index within its token's row
  segmentSizes: p.constant(numExperts),
  k: p.uniform(topK, { min: 1, max: 8 }),
  selectDirection: p.constantOption('max'),
  numSegments: p.uniform(numTokens),
};

// Known at compile time from the static bounds alone: only 'reduce' can ever run.
const reachable: TopKVariantsFor<typeof args> = 'reduce';

const plan = DeviceBatchedTopK.plan(args, env({ backend }));
await plan.run();
const experts = await backend.download(valuesOut);
const logits = await backend.download(keysOut);

// kMax is the uniform value of k (2), so token t's experts are at [t * 2, t * 2 + 2).
const kMax = topK;

// Routing weights: a softmax over each token's selected logits, on the host for now (segkit does
// not yet fuse this epilogue into the top-k kernels).
const weights = new Float32Array(numTokens * kMax);
for (let token = 0; token < numTokens; token++) {
  const row = logits.subarray(token * kMax, token * kMax + kMax);
  const largest = row[0]!; // sorted output: the largest logit comes first
  let sum = 0;
  for (let j = 0; j < kMax; j++) sum += Math.exp(row[j]! - largest);
  for (let j = 0; j < kMax; j++) weights[token * kMax + j] = Math.exp(row[j]! - largest) / sum;
}

console.log(`routed ${numTokens} tokens to the top ${topK} of ${numExperts} experts (compile-time variants: ${reachable})`);
for (let token = 0; token < 4; token++) {
  const row = Array.from({ length: kMax }, (_, j) => `expert ${experts[token * kMax + j]} (logit ${logits[token * kMax + j]!.toFixed(3)}, weight ${weights[token * kMax + j]!.toFixed(3)})`);
  console.log(`token ${token}: ${row.join(', ')}`);
}
console.log();
console.log(plan.explain());
backend.destroy();
