#!/usr/bin/env node
// How fast can one long segment be read (a reduction) or read and written (a scan) on WebGPU (Dawn)?
// Bare kernels over 16M f32 items (64 MiB), no repo code: the floors segmented reduce's chunk launch
// and the scan's tile launches are held against. Prints a table; writes JSON to --out or $OUT.
//
//   node bench/gpu/read-floor-probe.mjs [--items=16777216] [--reps=10] [--warm-ms=3000] [--out=dir]
//   (device machine: source bench/gpu/remote.sh; node bench/gpu/read-floor-probe.mjs)
//
// Reads: each workgroup (256 invocations) reduces its items to one word (ordered-key max, or an f32
// sum), either in one shot (every load of an invocation issued before the first is used; a workgroup
// per 8192 or 4096 items) or striding over the segment (a grid of G workgroups, U loads in flight).
// Read + write: a copy, and a tile scan without carries (each invocation scans 8 adjacent items, the
// workgroup scans the 256 totals in workgroup memory, then writes). Each kernel is timed two ways:
// one dispatch in a compute pass with timestamps around it (what the benches' GPU time of a one-launch
// call is), and `reps` dispatches in one pass (the per-dispatch cost), medians of 9 passes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { arg, orderedKeyWgsl, passTimer, probeDevice, readBytes, segmentBuffers } from './probe-device.mjs';

const N = Number(arg('items', 16777216));
const REPS = Number(arg('reps', 10));
const WARM_MS = Number(arg('warm-ms', 3000));
if (N % 8192 !== 0) throw new Error('--items must be a multiple of 8192');
const { adapter, device, features } = await probeDevice(['timestamp-query']);
device.addEventListener('uncapturederror', (e) => console.error('WebGPU error:', e.error.message));

const { values, input: inBuffer, output: outBuffer, readBack: readBuffer } = segmentBuffers(device, N);

const orderedKey = orderedKeyWgsl('ok');
// acc: u32 (max of keys) or f32 (sum); a vec4 load folds into it component by component.
const bodies = {
  max: { init: 'var acc = 0u;', fold4: (v) => `acc = max(acc, max(max(ok(${v}.x), ok(${v}.y)), max(ok(${v}.z), ok(${v}.w))));`, fold1: (v) => `acc = max(acc, ok(${v}));`, word: 'acc', combine: 'max(a, b)' },
  sum: { init: 'var acc = 0.0f;', fold4: (v) => `acc += (bitcast<f32>(${v}.x) + bitcast<f32>(${v}.y)) + (bitcast<f32>(${v}.z) + bitcast<f32>(${v}.w));`, fold1: (v) => `acc += bitcast<f32>(${v});`, word: 'bitcast<u32>(acc)', combine: 'bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b))' },
};
const tree = (body) => `
  tree[lid] = ${body.word};
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (lid < s) { let a = tree[lid]; let b = tree[lid + s]; tree[lid] = ${body.combine}; }
    workgroupBarrier();
  }
  if (lid == 0u) { out[wid.x] = tree[0]; }`;
const head = (vec) => `${orderedKey}
@group(0) @binding(0) var<storage, read> src: array<${vec ? 'vec4<u32>' : 'u32'}>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
var<workgroup> tree: array<u32, 256>;`;

/** One shot: `loads` loads an invocation (vec4 or words), stride 256, a workgroup per 256 * loads * width items. */
function oneShot(body, vec, loads) {
  const width = vec ? 4 : 1;
  const per = 256 * loads;
  const lines = [];
  for (let j = 0; j < loads; j++) lines.push(`let v${j} = src[base + lid + ${256 * j}u];`);
  for (let j = 0; j < loads; j++) lines.push(vec ? body.fold4(`v${j}`) : body.fold1(`v${j}`));
  return {
    code: `${head(vec)}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * ${per}u;
  ${body.init}
  ${lines.join('\n  ')}
  ${tree(body)}
}`,
    groups: N / (per * width),
  };
}

/** Grid stride: G workgroups, `unroll` vec4 loads in flight an invocation. */
function stride(body, groups, unroll) {
  const quads = N / 4;
  const step = groups * 256;
  const lines = [];
  for (let j = 0; j < unroll; j++) lines.push(`let v${j} = src[q + ${step * j}u];`);
  for (let j = 0; j < unroll; j++) lines.push(body.fold4(`v${j}`));
  return {
    code: `${head(true)}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  ${body.init}
  var q = wid.x * 256u + lid;
  for (; q + ${step * (unroll - 1)}u < ${quads}u; q += ${step * unroll}u) {
    ${lines.join('\n    ')}
  }
  for (; q < ${quads}u; q += ${step}u) { let v = src[q]; ${body.fold4('v')} }
  ${tree(body)}
}`,
    groups,
  };
}

/** Copy: each invocation `loads` vec4s, stride 256. */
function copy(loads) {
  const lines = [];
  for (let j = 0; j < loads; j++) lines.push(`let v${j} = src[base + lid + ${256 * j}u];`);
  for (let j = 0; j < loads; j++) lines.push(`dst[base + lid + ${256 * j}u] = v${j};`);
  return {
    code: `@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * ${256 * loads}u;
  ${lines.join('\n  ')}
}`,
    groups: N / 4 / (256 * loads),
    writes: true,
  };
}

/** A tile scan without carries: tiles of 2048 items, `tiles` a workgroup one after another. */
function tileScan(tiles) {
  return {
    code: `@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
var<workgroup> totals: array<f32, 256>;
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  var next0 = src[wid.x * ${tiles * 512}u + 2u * lid];
  var next1 = src[wid.x * ${tiles * 512}u + 2u * lid + 1u];
  for (var t = 0u; t < ${tiles}u; t++) {
    let at = (wid.x * ${tiles}u + t) * 512u + 2u * lid;
    let a = next0; let b = next1;
    if (t + 1u < ${tiles}u) { next0 = src[at + 512u]; next1 = src[at + 513u]; }
    let a1 = a.x + a.y; let a2 = a1 + a.z; let a3 = a2 + a.w;
    let b0 = a3 + b.x; let b1 = b0 + b.y; let b2 = b1 + b.z; let b3 = b2 + b.w;
    totals[lid] = b3;
    workgroupBarrier();
    for (var d = 1u; d < 256u; d <<= 1u) {
      let o = select(0.0f, totals[lid - d], lid >= d);
      workgroupBarrier();
      totals[lid] += o;
      workgroupBarrier();
    }
    let carry = totals[lid] - b3;
    workgroupBarrier();
    dst[at] = vec4<f32>(a.x, a1, a2, a3) + carry;
    dst[at + 1u] = vec4<f32>(b0, b1, b2, b3) + carry;
  }
}`,
    groups: N / (2048 * tiles),
    writes: true,
  };
}

const passUs = passTimer(device, features);
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

async function measure(kernel) {
  const module = device.createShaderModule({ code: kernel.code });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: inBuffer } }, { binding: 1, resource: { buffer: outBuffer } }],
  });
  await passUs(pipeline, bindGroup, kernel.groups, 2);
  const one = [];
  const many = [];
  for (let r = 0; r < 9; r++) {
    one.push(await passUs(pipeline, bindGroup, kernel.groups, 1));
    many.push(await passUs(pipeline, bindGroup, kernel.groups, REPS));
  }
  return { one: median(one), many: median(many) };
}

/** The reads' partials folded on the host, against the host's answer (max: exact; sum: within 1e-3 relative). */
async function check(body, groups) {
  const words = new Uint32Array(await readBytes(device, outBuffer, readBuffer, groups * 4));
  const f = new Float32Array(words.buffer);
  if (body === 'max') {
    let m = 0;
    for (const w of words) m = Math.max(m, w);
    return m === expectedMaxKey ? 0 : 1;
  }
  let s = 0;
  for (const x of f) s += x;
  return Math.abs(s - expectedSum) <= 1e-3 * Math.max(1, Math.abs(expectedSum)) + 1 ? 0 : 1;
}
async function checkScan(copyOnly) {
  const got = new Float32Array(await readBytes(device, outBuffer, readBuffer, N * 4));
  let bad = 0;
  for (let tile = 0; tile < N / 2048; tile += 97) {
    let acc = 0;
    for (let i = 0; i < 2048; i++) {
      const j = tile * 2048 + i;
      acc += values[j];
      const want = copyOnly ? values[j] : acc;
      if (Math.abs(got[j] - want) > 1e-3 * (1 + Math.abs(want))) bad++;
    }
  }
  return bad;
}
const keyOf = (x) => {
  const b = new Uint32Array(new Float32Array([x]).buffer)[0];
  return (b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
};
let expectedMaxKey = 0;
let expectedSum = 0;
for (const x of values) {
  expectedMaxKey = Math.max(expectedMaxKey, keyOf(x));
  expectedSum += x;
}

const kernels = [];
for (const body of ['max', 'sum']) {
  kernels.push([`${body} one shot, 32 words an invocation`, oneShot(bodies[body], false, 32), body]);
  kernels.push([`${body} one shot, 8 vec4 an invocation`, oneShot(bodies[body], true, 8), body]);
  kernels.push([`${body} one shot, 4 vec4 an invocation`, oneShot(bodies[body], true, 4), body]);
  kernels.push([`${body} one shot, 16 vec4 an invocation`, oneShot(bodies[body], true, 16), body]);
  for (const [g, u] of [[528, 4], [1056, 4], [2112, 4], [4224, 4], [1056, 8], [2112, 8], [528, 8]]) {
    kernels.push([`${body} stride, ${g} workgroups, ${u} vec4 in flight`, stride(bodies[body], g, u), body]);
  }
}
kernels.push(['copy, 1 vec4 an invocation', copy(1), 'copy']);
kernels.push(['copy, 4 vec4 an invocation', copy(4), 'copy']);
kernels.push(['tile scan, 1 tile a workgroup', tileScan(1), 'scan']);
kernels.push(['tile scan, 4 tiles a workgroup', tileScan(4), 'scan']);
kernels.push(['tile scan, 8 tiles a workgroup', tileScan(8), 'scan']);

// Working clocks before the first figure (an idle H200 starts at a few hundred MHz).
{
  const until = performance.now() + WARM_MS;
  const k = copy(4);
  while (performance.now() < until) await measure(k);
}
const results = [];
for (const [name, kernel, kind] of kernels) {
  const t = await measure(kernel);
  const mismatches = kind === 'max' || kind === 'sum' ? await check(kind, kernel.groups) : await checkScan(kind === 'copy');
  const bytes = N * 4 * (kernel.writes ? 2 : 1);
  results.push({ kernel: name, workgroups: kernel.groups, oneUs: +t.one.toFixed(2), manyUs: +t.many.toFixed(2), GBpsOne: +(bytes / (t.one * 1e3)).toFixed(0), GBpsMany: +(bytes / (t.many * 1e3)).toFixed(0), mismatches });
}
console.log(`read floor probe, ${N} f32 items (${((N * 4) / 2 ** 20).toFixed(0)} MiB), timestamps: ${features.includes('timestamp-query')}, ${adapter.info.description || adapter.info.device}`);
console.log('| kernel | workgroups | us, one dispatch a pass | GB/s | us a dispatch, many | GB/s | mismatches |');
console.log('|---|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.kernel} | ${r.workgroups} | ${r.oneUs} | ${r.GBpsOne} | ${r.manyUs} | ${r.GBpsMany} | ${r.mismatches} |`);
const out = arg('out', process.env.OUT);
if (out) {
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/read-floor-probe.json`, JSON.stringify({ items: N, reps: REPS, results }, null, 2));
}
device.destroy();
