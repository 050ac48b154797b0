#!/usr/bin/env node
// What a single-pass scan with a decoupled look-back (CUB's, in any order of additions: not segkit's
// canonical order) costs one 16M-item f32 segment on WebGPU (Dawn): the question whether a scan that
// reads its items once can beat torch.cumsum on this stack. No repo code; a probe, not a product
// kernel: it has no fallback for a predecessor that never runs (a bounded wait reports it instead).
//
//   node bench/gpu/lookback-scan-probe.mjs [--items=16777216] [--warm-ms=3000] [--out=dir]
//   (device machine: source bench/gpu/remote.sh; node bench/gpu/lookback-scan-probe.mjs)
//
// A workgroup of 256 takes the next span of S tiles of 2048 items from a counter (spans in the
// order workgroups start), loads them (two vec4 an invocation a tile), adds up each tile with
// subgroup scans, publishes the span's total, and invocation 0 walks back over the spans before it
// (their totals, until one has published its inclusive prefix); then every invocation writes its
// items' inclusive sums. Published values are two words of 16 bits and a status each (a reader takes
// them when the statuses agree). GPU time of one dispatch in a timed pass, median of 9 after 300 ms
// of the same (the clocks), two rounds; the state words are cleared before each pass.
import { mkdirSync, writeFileSync } from 'node:fs';
import { arg, passTimer, probeDevice, readBytes, segmentBuffers } from './probe-device.mjs';

const N = Number(arg('items', 16777216));
const WARM_MS = Number(arg('warm-ms', 3000));
if (N % (2048 * 8) !== 0) throw new Error('--items must be a multiple of 16384');
const { adapter, device, features } = await probeDevice(['timestamp-query', 'subgroups']);
if (!features.includes('subgroups')) throw new Error('the probe needs the subgroups feature');
device.addEventListener('uncapturederror', (e) => console.error('WebGPU error:', e.error.message));
const passUs = passTimer(device, features);

const { values, input: src, output: dst, readBack: readBuffer } = segmentBuffers(device, N);
// The span counter, a word for a wait that gave up, and each span's two published words.
const state = device.createBuffer({ size: (2 + 2 * (N / 2048)) * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });

/**
 * The kernel for spans of `span` tiles (1, 2, 4 or 8). `warp`: the first subgroup walks back a
 * window of a subgroup's width of spans at a time (lane l reads the l-th span back; the window
 * counts once every lane up to the nearest inclusive prefix has published), else invocation 0 one
 * span at a time.
 */
function lookbackScan(span, warp) {
  const r = (n) => Array.from({ length: n }, (_, i) => i);
  const halves = span <= 4 ? 1 : 2;
  // Per-thread tile totals as `halves` vec4s: component c of half h is tile 4h + c.
  const lane = (s) => `T${s >> 2}.${'xyzw'[s & 3]}`;
  const loads = r(span).map((s) => `  let a${s} = src[(id * ${span}u + ${s}u) * 512u + 2u * lid];\n  let b${s} = src[(id * ${span}u + ${s}u) * 512u + 2u * lid + 1u];`).join('\n');
  const prefixes = r(span)
    .map((s) => `  let p${s}1 = a${s}.x + a${s}.y; let p${s}2 = p${s}1 + a${s}.z; let p${s}3 = p${s}2 + a${s}.w;
  let p${s}4 = p${s}3 + b${s}.x; let p${s}5 = p${s}4 + b${s}.y; let p${s}6 = p${s}5 + b${s}.z; let p${s}7 = p${s}6 + b${s}.w;
  ${lane(s)} = p${s}7;`)
    .join('\n');
  const writes = r(span)
    .map((s) => `  {
    let c = excl + before${s} + E${s >> 2}.${'xyzw'[s & 3]};
    dst[(id * ${span}u + ${s}u) * 512u + 2u * lid] = vec4<f32>(a${s}.x, p${s}1, p${s}2, p${s}3) + c;
    dst[(id * ${span}u + ${s}u) * 512u + 2u * lid + 1u] = vec4<f32>(p${s}4, p${s}5, p${s}6, p${s}7) + c;
  }`)
    .join('\n');
  const befores = r(span)
    .map((s) => `  let before${s} = ${s === 0 ? '0.0f' : `before${s - 1} + tot${(s - 1) >> 2}.${'xyzw'[(s - 1) & 3]}`};`)
    .join('\n');
  const aggregate = r(halves).map((h) => `dot(tot${h}, vec4<f32>(1.0f))`).join(' + ');
  return {
    code: `enable subgroups;
diagnostic(off, subgroup_uniformity);
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> state: array<atomic<u32>>;
var<workgroup> spanId: u32;
var<workgroup> warpTotals: array<array<vec4<f32>, 32>, ${halves}>;
var<workgroup> exclusive: f32;
fn publishSpan(i: u32, status: u32, value: f32) {
  let bits = bitcast<u32>(value);
  atomicStore(&state[2u + 2u * i], (status << 16u) | (bits & 0xffffu));
  atomicStore(&state[3u + 2u * i], (status << 16u) | (bits >> 16u));
}
@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sl: u32, @builtin(subgroup_size) ss: u32) {
  if (lid == 0u) { spanId = atomicAdd(&state[0], 1u); }
  let id = workgroupUniformLoad(&spanId);
${loads}
${r(halves).map((h) => `  var T${h} = vec4<f32>(0.0f);`).join('\n')}
${prefixes}
  let warp = lid / ss;
  let warps = 256u / ss;
${r(halves).map((h) => `  let I${h} = subgroupInclusiveAdd(T${h});\n  if (sl == ss - 1u) { warpTotals[${h}][warp] = I${h}; }`).join('\n')}
  workgroupBarrier();
${r(halves).map((h) => `  var W${h} = vec4<f32>(0.0f);\n  var tot${h} = vec4<f32>(0.0f);\n  for (var w = 0u; w < warps; w++) { let x = warpTotals[${h}][w]; if (w < warp) { W${h} += x; } tot${h} += x; }\n  let E${h} = W${h} + I${h} - T${h};`).join('\n')}
  let total = ${aggregate};
  if (lid == 0u) { publishSpan(id, select(1u, 2u, id == 0u), total); }
${
  warp
    ? `  if (warp == 0u && id != 0u) {
    // Lane l reads span j - l; spans before the first are inclusive prefixes of 0.
    var excl = 0.0f;
    var j = id - 1u;
    var spins = 0u;
    loop {
      var status = 2u;
      var value = 0.0f;
      if (sl <= j) {
        let low = atomicLoad(&state[2u + 2u * (j - sl)]);
        let high = atomicLoad(&state[3u + 2u * (j - sl)]);
        status = select(0u, low >> 16u, (low >> 16u) == (high >> 16u));
        value = bitcast<f32>((low & 0xffffu) | (high << 16u));
      }
      let inclusive = subgroupBallot(status == 2u).x;
      let nearest = select(countTrailingZeros(inclusive), 31u, inclusive == 0u);
      let missing = subgroupBallot(status == 0u && sl <= nearest).x;
      if (missing != 0u) {
        spins++;
        if (spins > 4000000u) { if (sl == 0u) { atomicOr(&state[1], 1u); } break; }
        continue;
      }
      excl += subgroupAdd(select(0.0f, value, sl <= nearest));
      if (inclusive != 0u || j < ss) { break; }
      j -= ss;
    }
    if (sl == 0u) {
      publishSpan(id, 2u, excl + total);
      exclusive = excl;
    }
  }
  if (lid == 0u && id == 0u) { exclusive = 0.0f; }`
    : `  if (lid == 0u) {
    var excl = 0.0f;
    if (id != 0u) {
      var j = id - 1u;
      var spins = 0u;
      loop {
        let low = atomicLoad(&state[2u + 2u * j]);
        let high = atomicLoad(&state[3u + 2u * j]);
        let status = select(0u, low >> 16u, (low >> 16u) == (high >> 16u));
        if (status != 0u) {
          excl += bitcast<f32>((low & 0xffffu) | (high << 16u));
          if (status == 2u || j == 0u) { break; }
          j--;
          continue;
        }
        spins++;
        if (spins > 4000000u) { atomicOr(&state[1], 1u); break; }
      }
      publishSpan(id, 2u, excl + total);
    }
    exclusive = excl;
  }`
}
  let excl = workgroupUniformLoad(&exclusive);
${befores}
${writes}
}`,
    groups: N / (2048 * span),
  };
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const clear = (encoder) => encoder.clearBuffer(state);

/** The largest error of sampled outputs against float64 prefix sums, relative to the sum of |x| so far; and whether a wait gave up. */
async function check() {
  const got = new Float32Array(await readBytes(device, dst, readBuffer, N * 4));
  const gaveUp = new Uint32Array(await readBytes(device, state, readBuffer, 8))[1];
  let acc = 0;
  let mass = 0;
  let worst = 0;
  for (let i = 0; i < N; i++) {
    acc += values[i];
    mass += Math.abs(values[i]);
    if (i % 1021 === 0 || i === N - 1) worst = Math.max(worst, Math.abs(got[i] - acc) / mass);
  }
  return { worst, gaveUp };
}

/** A kernel's pipeline and bind group. */
function build(kernel) {
  const module = device.createShaderModule({ code: kernel.code });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }, { binding: 2, resource: { buffer: state } }],
  });
  return { pipeline, bindGroup, groups: kernel.groups };
}
const built = [];
for (const warp of [false, true]) for (const span of [1, 2, 4, 8]) built.push({ span, warp, ...build(lookbackScan(span, warp)) });
// Working clocks before the first figure (an idle H200 starts at a few hundred MHz): the GPU busy,
// not the host compiling.
{
  const k = built[2];
  const until = performance.now() + WARM_MS;
  while (performance.now() < until) await passUs(k.pipeline, k.bindGroup, k.groups, 1, clear);
}
const results = [];
for (let round = 0; round < 2; round++) {
  for (const k of built) {
    // The checks leave the GPU idle while the host adds up 16M items: its clocks fall. Busy again first.
    const until = performance.now() + 300;
    while (performance.now() < until) await passUs(k.pipeline, k.bindGroup, k.groups, 1, clear);
    const one = [];
    for (let r = 0; r < 9; r++) one.push(await passUs(k.pipeline, k.bindGroup, k.groups, 1, clear));
    const us = median(one);
    const { worst, gaveUp } = await check();
    results.push({ round, span: k.span, lookBack: k.warp ? 'subgroup' : 'one invocation', workgroups: k.groups, us: +us.toFixed(2), GBps: +((N * 8) / (us * 1e3)).toFixed(0), worstRelativeError: +worst.toExponential(2), gaveUp });
  }
}
console.log(`look-back scan probe, ${N} f32 items, timestamps: ${features.includes('timestamp-query')}, ${adapter.info.description || adapter.info.device}`);
console.log('| round | look-back | tiles a span | workgroups | us, one dispatch a pass | GB/s read + write | worst error / sum of abs | a wait gave up |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.round} | ${r.lookBack} | ${r.span} | ${r.workgroups} | ${r.us} | ${r.GBps} | ${r.worstRelativeError} | ${r.gaveUp} |`);
const out = arg('out', process.env.OUT);
if (out) {
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/lookback-scan-probe.json`, JSON.stringify({ items: N, results }, null, 2));
}
device.destroy();
