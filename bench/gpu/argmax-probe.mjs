#!/usr/bin/env node
// Where the time of a one-pass arg-max over long rows goes on WebGPU (Dawn): the loop top-k's reduce
// kernel runs (aligned vec4 reads of a chunk per workgroup, four loads in flight per invocation),
// with bodies from "read only" to "arg-max with the ordered-key transform", over 64 x 151936 f32 keys
// (greedy decoding, batch 64). Self-contained: no repo code. Prints a table; writes JSON to --out.
//
//   node bench/gpu/argmax-probe.mjs [--rows=64] [--cols=151936] [--reps=20] [--out=dir]
//   (device machine: source bench/gpu/remote.sh; node bench/gpu/argmax-probe.mjs)
//
// Each variant: `reps` dispatches in one compute pass with timestamps around it; GPU us per dispatch,
// median of 7 passes; GB/s counts the key bytes read once.
import { mkdirSync, writeFileSync } from 'node:fs';
import { arg, orderedKeyWgsl, passTimer, probeDevice, readBytes } from './probe-device.mjs';

const ROWS = Number(arg('rows', 64));
const COLS = Number(arg('cols', 151936));
const REPS = Number(arg('reps', 20));
if (COLS % 4 !== 0) throw new Error('--cols must be a multiple of 4');
const { device, features } = await probeDevice(['timestamp-query', 'subgroups']);
device.addEventListener('uncapturederror', (e) => console.error('WebGPU error:', e.error.message));

const keys = new Float32Array(ROWS * COLS);
for (let i = 0; i < keys.length; i++) keys[i] = Math.random() * 2 - 1;
const keysBuffer = device.createBuffer({ size: keys.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
device.queue.writeBuffer(keysBuffer, 0, keys);
const outBuffer = device.createBuffer({ size: 1 << 20, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const readBuffer = device.createBuffer({ size: 1 << 20, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

const branchy = `fn ob(bits: u32) -> u32 {
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  if (bits == 0x80000000u) { return 0x80000000u; }
  if ((bits & 0x80000000u) != 0u) { return ~bits; }
  return bits | 0x80000000u;
}`;
const branchFree = orderedKeyWgsl('ob');
// Bodies: what each invocation does with one quad `v` whose first key has row-local index `i`.
const bodies = {
  read: { ob: branchFree, body: 'best = best ^ v.x ^ v.y ^ v.z ^ v.w;' },
  'max, branch-free key': { ob: branchFree, body: 'best = max(best, max(max(ob(v.x), ob(v.y)), max(ob(v.z), ob(v.w))));' },
  'arg-max, branch-free key': {
    ob: branchFree,
    body: 'let k0 = ob(v.x); let k1 = ob(v.y); let k2 = ob(v.z); let k3 = ob(v.w); let m = max(max(k0, k1), max(k2, k3)); if (m > best) { best = m; bestIndex = select(select(select(i + 3u, i + 2u, k2 == m), i + 1u, k1 == m), i, k0 == m); }',
  },
  'arg-max per key, branch-free key': {
    ob: branchFree,
    body: 'ins(ob(v.x), i); ins(ob(v.y), i + 1u); ins(ob(v.z), i + 2u); ins(ob(v.w), i + 3u);',
  },
  'arg-max per key, branchy key (orderedBits before this branch)': {
    ob: branchy,
    body: 'ins(ob(v.x), i); ins(ob(v.y), i + 1u); ins(ob(v.z), i + 2u); ins(ob(v.w), i + 3u);',
  },
};

function shader(ob, body, chunks) {
  const rowQuads = COLS / 4;
  const chunkQuads = Math.ceil(rowQuads / chunks);
  return `${ob}
@group(0) @binding(0) var<storage, read> keys4: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
const WG: u32 = 256u;
var<private> best: u32;
var<private> bestIndex: u32;
var<workgroup> bestKeys: array<u32, 256>;
var<workgroup> bestIndices: array<u32, 256>;
fn ins(k: u32, i: u32) { if (k > best || (k == best && i < bestIndex)) { best = k; bestIndex = i; } }
fn quad(v: vec4<u32>, i: u32) { ${body} }
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x / ${chunks}u;
  let chunk = wid.x - row * ${chunks}u;
  let rowStart = row * ${rowQuads}u;
  let qa = rowStart + chunk * ${chunkQuads}u;
  let qb = min(qa + ${chunkQuads}u, rowStart + ${rowQuads}u);
  best = 0u;
  bestIndex = 0xffffffffu;
  var q = qa + lid;
  for (; q + 3u * WG < qb; q += 4u * WG) {
    let v0 = keys4[q]; let v1 = keys4[q + WG]; let v2 = keys4[q + 2u * WG]; let v3 = keys4[q + 3u * WG];
    quad(v0, (q - rowStart) * 4u); quad(v1, (q + WG - rowStart) * 4u); quad(v2, (q + 2u * WG - rowStart) * 4u); quad(v3, (q + 3u * WG - rowStart) * 4u);
  }
  for (; q < qb; q += WG) { quad(keys4[q], (q - rowStart) * 4u); }
  bestKeys[lid] = best;
  bestIndices[lid] = bestIndex;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (lid < s) {
      let k = bestKeys[lid + s]; let i = bestIndices[lid + s];
      if (k > bestKeys[lid] || (k == bestKeys[lid] && i < bestIndices[lid])) { bestKeys[lid] = k; bestIndices[lid] = i; }
    }
    workgroupBarrier();
  }
  if (lid == 0u) { out[2u * wid.x] = bestKeys[0]; out[2u * wid.x + 1u] = bestIndices[0]; }
}`;
}

const passUs = passTimer(device, features);

async function time(pipeline, groups) {
  const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: keysBuffer } }, { binding: 1, resource: { buffer: outBuffer } }] });
  const samples = [];
  for (let r = 0; r < 8; r++) {
    const us = await passUs(pipeline, bindGroup, groups, REPS);
    if (r > 0) samples.push(us);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

/** Checks a variant's per-chunk results against the CPU (arg-max bodies only). */
async function check(chunks) {
  const words = new Uint32Array(await readBytes(device, outBuffer, readBuffer, ROWS * chunks * 8));
  let bad = 0;
  for (let row = 0; row < ROWS; row++) {
    const bestIndex = expected[row];
    let gk = 0;
    let gi = 0xffffffff;
    for (let c = 0; c < chunks; c++) {
      const k = words[2 * (row * chunks + c)];
      const i = words[2 * (row * chunks + c) + 1];
      if (k > gk || (k === gk && i < gi)) { gk = k; gi = i; }
    }
    if (gi !== bestIndex) bad++;
  }
  return bad;
}

const expected = new Int32Array(ROWS);
for (let row = 0; row < ROWS; row++) {
  let bestKey = -Infinity;
  for (let i = 0; i < COLS; i++) if (keys[row * COLS + i] > bestKey) { bestKey = keys[row * COLS + i]; expected[row] = i; }
}

const bytes = keys.byteLength;
const results = [];
// Working clocks before the first figure: the GPU idled while the host filled the keys.
{
  const module = device.createShaderModule({ code: shader(branchFree, bodies.read.body, 13) });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const until = performance.now() + 400;
  while (performance.now() < until) await time(pipeline, ROWS * 13);
}
for (const chunks of [4, 13, 38]) {
  for (const [name, { ob, body }] of Object.entries(bodies)) {
    const module = device.createShaderModule({ code: shader(ob, body, chunks) });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const us = await time(pipeline, ROWS * chunks);
    const mismatches = name.startsWith('arg-max') ? await check(chunks) : undefined;
    results.push({ body: name, chunks, workgroups: ROWS * chunks, us: +us.toFixed(2), GBps: +(bytes / (us * 1e3)).toFixed(0), mismatches });
  }
}
console.log(`arg-max probe, ${ROWS} x ${COLS} f32 (${(bytes / 2 ** 20).toFixed(1)} MiB), ${REPS} dispatches per pass, timestamps: ${features.includes('timestamp-query')}`);
console.log('| body | chunks/row | workgroups | us/dispatch | GB/s read | row mismatches |');
console.log('|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.body} | ${r.chunks} | ${r.workgroups} | ${r.us} | ${r.GBps} | ${r.mismatches ?? ''} |`);
const out = arg('out', process.env.OUT);
if (out) {
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/argmax-probe.json`, JSON.stringify({ rows: ROWS, cols: COLS, reps: REPS, results }, null, 2));
}
device.destroy();
