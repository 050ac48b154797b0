#!/usr/bin/env node
// Copy-scale bandwidth + submit/dispatch overhead on WebGPU through Dawn (`webgpu` npm package).
// Self-contained: no repo code. Prints one JSON object on stdout (also written to $OUT if set).
//
//   node bench/gpu/copy-kernel.mjs [--mib=256] [--target-ms=150] [--submits=5]
//   (device machine: bash bench/gpu/remote.sh bench/gpu/copy-kernel.mjs)
//
// Method: out[i] = in[i] * scale over vec4<f32>; many dispatches recorded in ONE compute pass
// and ONE submit; wall clock from submit() to onSubmittedWorkDone(); median over submits.
// Bandwidth counts bytes read + bytes written. GPU time from timestamp queries if available.
import { writeFileSync } from 'node:fs';
import { arg as argString, probeDevice } from './probe-device.mjs';

const arg = (name, def) => Number(argString(name, def));
const { adapter, device, features: deviceFeatures } = await probeDevice(['timestamp-query']);
const info = {};
for (const k of ['vendor', 'architecture', 'device', 'description', 'subgroupMinSize', 'subgroupMaxSize', 'isFallbackAdapter']) info[k] = adapter.info[k];
const limits = {};
for (const k in adapter.limits) limits[k] = adapter.limits[k];
const features = [...adapter.features].sort();
const hasTs = deviceFeatures.includes('timestamp-query');
let gpuError = null;
device.addEventListener('uncapturederror', (e) => { gpuError ??= e.error.message; console.error('uncaptured:', e.error.message); });

const MiB = 1 << 20;
const wantBytes = arg('mib', 256) * MiB;
const bytes = Math.min(wantBytes, device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize) & ~(1024 * 16 - 1);
const nVec4 = bytes / 16;
const targetMs = arg('target-ms', 150);
const nSubmits = arg('submits', 5);
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const now = () => performance.now();

const S = GPUBufferUsage.STORAGE;
const bufIn = device.createBuffer({ size: bytes, usage: S | GPUBufferUsage.COPY_SRC });
const bufOut = device.createBuffer({ size: bytes, usage: S | GPUBufferUsage.COPY_SRC });
const uni = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const SCALE = 1.5;
device.queue.writeBuffer(uni, 0, new Float32Array([SCALE, 0, 0, 0]));

const WG = 256;
const common = /* wgsl */ `
struct P { scale: f32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: P;
`;
const hashWgsl = /* wgsl */ `
fn h(x: u32) -> u32 { var v = x * 747796405u + 2891336453u; v = ((v >> ((v >> 28u) + 4u)) ^ v) * 277803737u; return (v >> 22u) ^ v; }
@group(0) @binding(0) var<storage, read_write> o: array<vec4<f32>>;
@compute @workgroup_size(${WG}) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let stride = n.x * ${WG}u;
  for (var i = g.x; i < arrayLength(&o); i += stride) {
    let b = i * 4u;
    o[i] = vec4<f32>(f32(h(b) & 0xffffu), f32(h(b + 1u) & 0xffffu), f32(h(b + 2u) & 0xffffu), f32(h(b + 3u) & 0xffffu)) / 65536.0;
  }
}`;
const hashJs = (x) => {
  let v = (Math.imul(x >>> 0, 747796405) + 2891336453) >>> 0;
  v = Math.imul(((v >>> ((v >>> 28) + 4)) ^ v) >>> 0, 277803737) >>> 0;
  return ((v >>> 22) ^ v) >>> 0;
};

// Variants. dispatch(n) -> [x, y] workgroups.
const maxX = device.limits.maxComputeWorkgroupsPerDimension;
const grid2d = (wgs) => { const y = Math.ceil(wgs / maxX); return [Math.ceil(wgs / y), y]; };
const variants = {
  // one vec4 per thread, 2-D grid flattened
  v1_2d: {
    code: common + `@compute @workgroup_size(${WG}) fn main(@builtin(workgroup_id) w: vec3u, @builtin(num_workgroups) n: vec3u, @builtin(local_invocation_index) l: u32) {
  let i = (w.x + w.y * n.x) * ${WG}u + l;
  if (i < arrayLength(&src)) { dst[i] = src[i] * p.scale; } }`,
    grid: () => grid2d(Math.ceil(nVec4 / WG)),
  },
  // 4 vec4 per thread, coalesced (thread l handles base + l + k*WG)
  v4_2d: {
    code: common + `@compute @workgroup_size(${WG}) fn main(@builtin(workgroup_id) w: vec3u, @builtin(num_workgroups) n: vec3u, @builtin(local_invocation_index) l: u32) {
  let base = (w.x + w.y * n.x) * ${WG * 4}u + l;
  let N = arrayLength(&src);
  for (var k = 0u; k < 4u; k++) { let i = base + k * ${WG}u; if (i < N) { dst[i] = src[i] * p.scale; } } }`,
    grid: () => grid2d(Math.ceil(nVec4 / (WG * 4))),
  },
  // grid-stride loop over a fixed 4096-workgroup grid
  gridstride4096: {
    code: common + `@compute @workgroup_size(${WG}) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let stride = n.x * ${WG}u;
  for (var i = g.x; i < arrayLength(&src); i += stride) { dst[i] = src[i] * p.scale; } }`,
    grid: () => [Math.min(4096, maxX), 1],
  },
};

async function pipelineFor(code) {
  const module = device.createShaderModule({ code });
  const ci = await module.getCompilationInfo();
  for (const m of ci.messages) if (m.type === 'error') throw new Error(`WGSL: ${m.message}`);
  return device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
}

// Fill input on the GPU with hashed values (no 256 MiB upload).
{
  const pipe = await pipelineFor(hashWgsl);
  const bg = device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: bufIn } }] });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipe); pass.setBindGroup(0, bg); pass.dispatchWorkgroups(Math.min(4096, maxX)); pass.end();
  const cb = enc.finish();
  device.queue.submit([cb]);
  await device.queue.onSubmittedWorkDone();
}

const qs = hasTs ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
const qResolve = hasTs ? device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }) : null;
const qRead = hasTs ? device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) : null;

// Record `reps` dispatches of (pipe, bg, grid) in one pass, one submit; returns { wallMs, gpuMs }.
async function timedSubmit(pipe, bg, grid, reps, passes = 1) {
  const enc = device.createCommandEncoder();
  const perPass = Math.ceil(reps / passes);
  let left = reps;
  const keep = [];
  for (let p = 0; p < passes; p++) {
    const tsw = hasTs && passes === 1 ? { timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {};
    const pass = enc.beginComputePass(tsw);
    pass.setPipeline(pipe); pass.setBindGroup(0, bg);
    for (let r = 0; r < Math.min(perPass, left); r++) pass.dispatchWorkgroups(grid[0], grid[1]);
    left -= perPass;
    pass.end();
    keep.push(pass);
  }
  if (hasTs && passes === 1) { enc.resolveQuerySet(qs, 0, 2, qResolve, 0); enc.copyBufferToBuffer(qResolve, 0, qRead, 0, 16); }
  const cb = enc.finish();
  const t0 = now();
  device.queue.submit([cb]);
  await device.queue.onSubmittedWorkDone();
  const wallMs = now() - t0;
  let gpuMs = null;
  if (hasTs && passes === 1) {
    await qRead.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(qRead.getMappedRange().slice(0));
    qRead.unmap();
    gpuMs = Number(t[1] - t[0]) / 1e6;
  }
  keep.length = 0;
  return { wallMs, gpuMs };
}

const result = {
  adapter: info, features, limits,
  bytesPerBuffer: bytes, mibPerBuffer: bytes / MiB,
  timestampQuery: hasTs,
  copy: {},
};

const bindGroups = new Map();
for (const [name, v] of Object.entries(variants)) {
  const pipe = await pipelineFor(v.code);
  const bg = device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: bufIn } }, { binding: 1, resource: { buffer: bufOut } }, { binding: 2, resource: { buffer: uni } }] });
  bindGroups.set(name, { pipe, bg });
  const grid = v.grid();
  await timedSubmit(pipe, bg, grid, 2); // warm-up (pipeline, first touch)
  const one = await timedSubmit(pipe, bg, grid, 1);
  const reps = Math.max(5, Math.min(2000, Math.ceil(targetMs / Math.max(one.wallMs, 1e-3))));
  const walls = [], gpus = [];
  for (let s = 0; s < nSubmits; s++) {
    const r = await timedSubmit(pipe, bg, grid, reps);
    walls.push(r.wallMs); if (r.gpuMs != null) gpus.push(r.gpuMs);
  }
  const wallPer = median(walls) / reps;
  const gpuPer = gpus.length ? median(gpus) / reps : null;
  result.copy[name] = {
    grid, dispatchesPerSubmit: reps,
    msPerDispatchWall: +wallPer.toFixed(5),
    GBpsWall: +((2 * bytes) / (wallPer * 1e6)).toFixed(1),
    msPerDispatchGpuTs: gpuPer == null ? null : +gpuPer.toFixed(5),
    GBpsGpuTs: gpuPer == null || gpuPer <= 0 ? null : +((2 * bytes) / (gpuPer * 1e6)).toFixed(1),
  };
}

// Verify the last output (every element).
{
  const rb = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(bufOut, 0, rb, 0, bytes);
  const cb = enc.finish();
  const t0 = now();
  device.queue.submit([cb]);
  await rb.mapAsync(GPUMapMode.READ);
  const range = rb.getMappedRange();
  const out = new Float32Array(range);
  const tMap = now() - t0;
  let bad = 0, firstBad = -1;
  for (let i = 0; i < out.length; i++) {
    const expect = Math.fround(Math.fround((hashJs(i) & 0xffff) / 65536) * SCALE);
    if (out[i] !== expect) { if (firstBad < 0) firstBad = i; bad++; }
  }
  const n = out.length;
  rb.unmap();
  rb.destroy();
  result.verify = { elements: n, mismatches: bad, firstBad, ok: bad === 0 && n === nVec4 * 4 };
  result.readbackFullBufferMs = +tMap.toFixed(3);
  result.readbackGBps = +(bytes / (tMap * 1e6)).toFixed(2);
}

// Overheads.
{
  const tiny = await pipelineFor(`@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) l: u32) { o[l] = o[l] + 1u; }`);
  const tb = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
  const tbg = device.createBindGroup({ layout: tiny.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: tb } }] });
  const emptyRt = [];
  for (let i = 0; i < 200; i++) {
    const cb = device.createCommandEncoder().finish();
    const t0 = now(); device.queue.submit([cb]); await device.queue.onSubmittedWorkDone(); emptyRt.push(now() - t0);
  }
  const oneRt = [];
  for (let i = 0; i < 200; i++) oneRt.push((await timedSubmit(tiny, tbg, [1, 1], 1)).wallMs);
  const D = 2000;
  const many = [], manyPasses = [];
  for (let i = 0; i < 7; i++) many.push((await timedSubmit(tiny, tbg, [1, 1], D)).wallMs);
  for (let i = 0; i < 7; i++) manyPasses.push((await timedSubmit(tiny, tbg, [1, 1], 200, 200)).wallMs);
  // JS-side encode cost of D dispatches (no submit)
  const encT = [];
  for (let i = 0; i < 7; i++) {
    const t0 = now();
    const e = device.createCommandEncoder(); const p = e.beginComputePass(); p.setPipeline(tiny); p.setBindGroup(0, tbg);
    for (let r = 0; r < D; r++) p.dispatchWorkgroups(1); p.end(); e.finish();
    encT.push(now() - t0);
  }
  result.overhead = {
    emptySubmitRoundTripUs: +(median(emptyRt) * 1e3).toFixed(1),
    oneTinyDispatchSubmitRoundTripUs: +(median(oneRt) * 1e3).toFixed(1),
    perDispatchUsSamePass_tiny: +(((median(many) - median(oneRt)) / (D - 1)) * 1e3).toFixed(3),
    perDispatchUsOwnPass_tiny: +(((median(manyPasses) - median(oneRt)) / 199) * 1e3).toFixed(3),
    jsEncodeUsPerDispatch: +((median(encT) / D) * 1e3).toFixed(3),
    note: 'tiny = 1 workgroup of 64 threads doing a dependent RMW on one 256 B buffer (so Dawn barriers between dispatches)',
  };
}
result.uncapturedError = gpuError;

device.destroy();
const json = JSON.stringify(result, null, 1);
console.log(json);
if (process.env.OUT) { try { writeFileSync(`${process.env.OUT}/copy-kernel.json`, json); } catch {} }
