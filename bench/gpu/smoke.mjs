// WebGPU/Dawn smoke test: adapter info/limits/features, 1M-u32 doubling kernel, submit/map round trips,
// subgroups (subgroupAdd/Ballot/Shuffle/Max/ExclusiveAdd) correctness, device.destroy() + natural exit.
// Run: bash bench/gpu/remote.sh bench/gpu/smoke.mjs
import { create, globals } from 'webgpu';
Object.assign(globalThis, globals);
const gpu = create([]);
globalThis.__dawnGpu = gpu; // MUST stay reachable: if the create() result is GC-ed, dawn crashes in ProcessEvents
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter) { console.error('no adapter'); process.exit(1); }
const info = adapter.info;
const infoObj = {};
for (const k of ['vendor','architecture','device','description','subgroupMinSize','subgroupMaxSize','isFallbackAdapter']) infoObj[k] = info[k];
const limits = {};
for (const k in adapter.limits) limits[k] = adapter.limits[k];
const features = [...adapter.features].sort();
console.log(JSON.stringify({ info: infoObj, features, limits }, null, 1));

const hasSub = adapter.features.has('subgroups');
const reqLimits = {};
for (const k of ['maxStorageBufferBindingSize','maxBufferSize','maxComputeWorkgroupStorageSize','maxComputeInvocationsPerWorkgroup','maxComputeWorkgroupSizeX','maxStorageBuffersPerShaderStage']) reqLimits[k] = adapter.limits[k];
const device = await adapter.requestDevice({ requiredFeatures: hasSub ? ['subgroups'] : [], requiredLimits: reqLimits });
device.addEventListener?.('uncapturederror', (e) => console.error('uncaptured', e.error?.message));
device.lost.then((i) => console.error('device lost:', i.reason, i.message));

// ---- doubling kernel, 1M u32
const N = 1 << 20;
const src = new Uint32Array(N); for (let i = 0; i < N; i++) src[i] = (i * 2654435761) >>> 1;
const buf = device.createBuffer({ size: N * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
device.queue.writeBuffer(buf, 0, src);
const rb = device.createBuffer({ size: N * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const mod = device.createShaderModule({ code: `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&a)) { a[g.x] = a[g.x] * 2u; }
}` });
const ci = await mod.getCompilationInfo(); for (const m of ci.messages) console.error('wgsl:', m.type, m.message);
const pipe = await device.createComputePipelineAsync({ layout: 'auto', compute: { module: mod, entryPoint: 'main' } });
const bg = device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] });
const enc = device.createCommandEncoder();
const pass = enc.beginComputePass(); pass.setPipeline(pipe); pass.setBindGroup(0, bg); pass.dispatchWorkgroups(N / 256); pass.end();
enc.copyBufferToBuffer(buf, 0, rb, 0, N * 4);
const cb = enc.finish();
device.queue.submit([cb]);
await device.queue.onSubmittedWorkDone();
await rb.mapAsync(GPUMapMode.READ);
const out = new Uint32Array(rb.getMappedRange().slice(0)); rb.unmap();
let bad = 0; for (let i = 0; i < N; i++) if (out[i] !== ((src[i] * 2) >>> 0)) bad++;
console.log('double 1M u32: mismatches =', bad);

// ---- timings
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
const t1 = [];
for (let i = 0; i < 50; i++) { const t = performance.now(); device.queue.submit([device.createCommandEncoder().finish()]); await device.queue.onSubmittedWorkDone(); t1.push(performance.now() - t); }
const t2 = [];
for (let i = 0; i < 30; i++) {
  const e = device.createCommandEncoder(); const p = e.beginComputePass(); p.setPipeline(pipe); p.setBindGroup(0, bg); p.dispatchWorkgroups(1); p.end();
  const t = performance.now(); device.queue.submit([e.finish()]); await device.queue.onSubmittedWorkDone(); t2.push(performance.now() - t);
}
const t3 = [];
for (let i = 0; i < 20; i++) {
  const e = device.createCommandEncoder(); e.copyBufferToBuffer(buf, 0, rb, 0, N * 4); device.queue.submit([e.finish()]);
  const t = performance.now(); await rb.mapAsync(GPUMapMode.READ); const x = new Uint32Array(rb.getMappedRange().slice(0)); rb.unmap(); t3.push(performance.now() - t);
}
const t4 = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  const e = device.createCommandEncoder(); e.copyBufferToBuffer(buf, 0, rb, 0, N * 4); device.queue.submit([e.finish()]);
  await rb.mapAsync(GPUMapMode.READ); const x = new Uint32Array(rb.getMappedRange().slice(0)); rb.unmap(); t4.push(performance.now() - t);
}
console.log(JSON.stringify({ emptySubmitRoundTripMs: med(t1), oneTinyDispatchRoundTripMs: med(t2), map4MBAfterSubmitMs: med(t3), copyPlusMap4MBMs: med(t4) }));

// ---- subgroups
if (hasSub) {
  const sm = device.createShaderModule({ code: `
enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ss: u32) {
  let s = subgroupAdd(li + 1u);
  let b = subgroupBallot((li & 1u) == 1u);
  let sh = subgroupShuffle(li, (sid + 1u) % ss);
  let mx = subgroupMax(li);
  let ex = subgroupExclusiveAdd(1u);
  o[li * 6u + 0u] = s; o[li * 6u + 1u] = b.x; o[li * 6u + 2u] = sh; o[li * 6u + 3u] = ss; o[li * 6u + 4u] = mx; o[li * 6u + 5u] = ex;
}` });
  const ci2 = await sm.getCompilationInfo(); for (const m of ci2.messages) console.error('wgsl(subgroups):', m.type, m.message);
  device.pushErrorScope('validation');
  const sp = device.createComputePipeline({ layout: 'auto', compute: { module: sm, entryPoint: 'main' } });
  const ob = device.createBuffer({ size: 64 * 6 * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const orb = device.createBuffer({ size: 64 * 6 * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const sbg = device.createBindGroup({ layout: sp.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: ob } }] });
  const e = device.createCommandEncoder(); const p = e.beginComputePass(); p.setPipeline(sp); p.setBindGroup(0, sbg); p.dispatchWorkgroups(1); p.end();
  e.copyBufferToBuffer(ob, 0, orb, 0, 64 * 6 * 4); device.queue.submit([e.finish()]);
  const err = await device.popErrorScope(); if (err) console.error('subgroup validation error:', err.message);
  await orb.mapAsync(GPUMapMode.READ); const r = new Uint32Array(orb.getMappedRange().slice(0)); orb.unmap();
  const ss = r[3];
  let ok = true;
  for (let li = 0; li < 64; li++) {
    const base = li - (li % ss);
    let sum = 0, ballot = 0, mx = 0; for (let j = 0; j < ss; j++) { sum += base + j + 1; if ((base + j) & 1) ballot |= (j < 32 ? (1 << j) : 0); mx = Math.max(mx, base + j); }
    const exp = [sum, ballot >>> 0, base + ((li % ss) + 1) % ss, ss, mx, li % ss];
    for (let k = 0; k < 6; k++) if (r[li * 6 + k] !== exp[k]) { ok = false; if (li < 2) console.error('sg mismatch li', li, k, r[li * 6 + k], exp[k]); }
  }
  console.log('subgroups: subgroup_size =', ss, 'add/ballot/shuffle/max/exclusiveAdd correct =', ok);
}
const tEnd = performance.now();
device.destroy();
console.log('destroyed; waiting for natural exit');
process.on('exit', () => console.log('process exit after', (performance.now() - tEnd).toFixed(0), 'ms'));
