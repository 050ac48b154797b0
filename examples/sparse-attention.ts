/**
 * Sparse attention: each query row keeps its top-k attention scores, sorted, and the key positions
 * they came from (to gather K/V with). Rows are ragged: row i attends to the first `lengths[i]` keys
 * of a padded score matrix (row stride `maxKeys`). The lengths and the per-row k live on the device
 * (the output of an earlier kernel; here uploaded once), so the host never reads them: segkit checks
 * them against their bounds on the device and reports a violation at the next synchronize() or
 * download(), with no read-back per call.
 *
 * Run: npm run example:sparse-attention            (the CPU emulator)
 *      npm run example:sparse-attention -- --webgpu (WebGPU: Dawn in Node, needs a Vulkan driver)
 */
import { type Backend, DeviceBatchedTopK, cpuBackend, env, p, webgpuBackend } from 'segkit';

const queries = 24;
const maxKeys = 8192; // the padded row length: the stride between rows
// Sorted output runs for every k on every backend (past a tile of workgroup memory, the selection is
// sorted by DeviceSegmentedSort's radix kernels in the same submit); 2048 keeps the example quick.
const maxK = 2048;

const backend: Backend = process.argv.includes('--webgpu') ? await webgpuBackend() : cpuBackend();

// Row i attends to its first lengths[i] keys (0 is allowed: an empty row) and keeps a quarter of them,
// at least 1 and at most maxK. A kernel would produce both on the device.
const lengths = new Uint32Array(queries).map((_, i) => (i * 2357 + 11) % (maxKeys + 1));
lengths[5] = 0;
lengths[queries - 1] = maxKeys; // a full row: k reaches maxK
const ks = lengths.map((n) => Math.min(maxK, Math.max(1, Math.ceil(n / 4))));

// Attention logits (deterministic pseudo-random), padded to maxKeys per row; the padding is never read.
const scores = new Float32Array(queries * maxKeys);
let seed = 2024;
for (let i = 0; i < scores.length; i++) {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  scores[i] = (seed / 2 ** 32) * 16 - 8;
}

const keysIn = backend.upload(scores);
const deviceLengths = backend.upload(lengths);
const deviceKs = backend.upload(ks);
// Each row's results take kMax = maxK slots (the static bound of k): [i * maxK, i * maxK + min(k_i, length_i)).
const keysOut = backend.alloc('f32', queries * maxK);
const positionsOut = backend.alloc('u32', queries * maxK);

const plan = DeviceBatchedTopK.plan(
  {
    keysIn,
    keysOut,
    valuesOut: positionsOut, // no valuesIn: each score's position within its row
    segmentSizes: p.perSegment(deviceLengths, { min: 0, max: maxKeys }), // device-only, static bounds
    segmentStride: p.constant(maxKeys),
    k: p.perSegment(deviceKs, { min: 1, max: maxK }), // device-only, static bounds
    selectDirection: p.constantOption('max'),
    numSegments: p.uniform(queries),
  },
  env({ backend, requirements: { outputOrdering: 'sorted' } }),
);
console.log(plan.explain());
console.log();

// The two-step API: the caller owns temporary storage (allocate once, reuse for every call).
const tempStorage = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
await plan.run(tempStorage); // the first call compiles (WebGPU) and warms up
const calls = 5;
const started = performance.now();
for (let i = 0; i < calls; i++) await plan.run(tempStorage);
await backend.synchronize();
const msPerCall = (performance.now() - started) / calls;

const keys = await backend.download(keysOut);
const positions = await backend.download(positionsOut);

// Check every row against a plain sort: scores descending, ties to the smaller position; the unused
// slots hold -Infinity and 0xFFFFFFFF.
let checked = 0;
for (let row = 0; row < queries; row++) {
  const n = lengths[row]!;
  const rowScores = scores.subarray(row * maxKeys, row * maxKeys + n);
  const expected = Array.from(rowScores.keys()).sort((a, b) => rowScores[b]! - rowScores[a]! || a - b);
  const kept = Math.min(ks[row]!, n);
  for (let slot = 0; slot < maxK; slot++) {
    const at = row * maxK + slot;
    const wantPosition = slot < kept ? expected[slot]! : 0xffffffff;
    const wantKey = slot < kept ? rowScores[wantPosition]! : -Infinity;
    if (positions[at] !== wantPosition || keys[at] !== wantKey) {
      throw new Error(`row ${row}, slot ${slot}: got position ${positions[at]} (score ${keys[at]}), expected ${wantPosition} (score ${wantKey})`);
    }
  }
  checked++;
}

console.log(`${backend.name}: ${queries} rows, lengths ${Math.min(...lengths)}..${Math.max(...lengths)}, k ${Math.min(...ks)}..${Math.max(...ks)}, variant ${plan.variant}, ${msPerCall.toFixed(2)} ms per call`);
for (const row of [0, 1, 5, queries - 1]) {
  const top = Array.from({ length: Math.min(4, ks[row]!, lengths[row]!) }, (_, slot) => `${positions[row * maxK + slot]} (${keys[row * maxK + slot]!.toFixed(3)})`);
  console.log(`row ${row}: length ${lengths[row]}, k ${ks[row]}, best positions ${top.length ? top.join(', ') : 'none (empty row)'}`);
}
console.log(`checked ${checked} rows against a plain sort: identical`);

for (const array of [keysIn, deviceLengths, deviceKs, keysOut, positionsOut, tempStorage]) array?.destroy();
backend.destroy();
