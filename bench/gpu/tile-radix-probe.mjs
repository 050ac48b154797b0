#!/usr/bin/env node
// Would a radix sort in workgroup memory beat the segmented sort's single-tile bitonic network on
// tiles of a few thousand keys (issue 11's 256x4096 and 512x2048, where torch.sort's block radix
// sort reads 0.042-0.051 ms on an H200 and segkit's network 0.049 / 0.045)? A bare probe, no repo
// code: one workgroup sorts one segment of TILE f32 keys with their indices, stably, by four LSD
// passes over 8-bit digits of the ordered key, every pass in workgroup memory. Each pass ranks the
// keys by warp-level multisplit (eight ballots of the digit's bits give each lane the lanes that
// share its digit; a subgroup's running count of each digit in a 16-bit half of a workgroup word,
// added by the digit's lowest lane and handed on by a shuffle: segkit's radix scatter does the
// same), scans the (digit, subgroup) counts in digit-major order, and places each key at its digit's
// start plus the keys of its digit in earlier subgroups plus its rank. Five barriers a pass. The
// last pass writes the sorted keys and indices out, coalesced. Every output is checked against a
// stable sort in JavaScript. Prints a table; writes JSON to --out or $OUT.
//
//   node bench/gpu/tile-radix-probe.mjs [--shapes=256x4096,512x2048,1024x1024] [--wg=512] [--warm-ms=2000] [--out=dir]
//   (device machine: source bench/gpu/remote.sh first; needs the adapter's subgroups of one width, at most 32)
import { mkdirSync, writeFileSync } from 'node:fs';
import { arg, computePipeline, digitPlacesProbeWgsl, orderedKeyOf, orderedKeyWgsl, passTimer, subgroupProbeDevice, warpRankProbeWgsl } from './probe-device.mjs';

const { adapter, device, features, width } = await subgroupProbeDevice();

const WARM_MS = Number(arg('warm-ms', 2000));
const shapes = String(arg('shapes', '256x4096,512x2048,1024x1024')).split(',').map((s) => s.split('x').map(Number));

/** The probe's shader for tiles of `tile` keys on `wg` invocations (subgroups of `width`). */
function shader(wg, tile) {
  const items = tile / wg;
  const warps = wg / width;
  const each = (body) => Array.from({ length: items }, (_, i) => `{ const i = ${i}u;${body} }`).join('\n    ');
  const pairsPer = Math.ceil(128 / wg);
  if (pairsPer !== 1) throw new Error('wg must be at least 128');
  return `enable subgroups;
${orderedKeyWgsl('ok')}
@group(0) @binding(0) var<storage, read> keysIn: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
const WG = ${wg}u;
const TILE = ${tile}u;
const N = ${'${N}'}u;
fn pad(p: u32) -> u32 { return p + (p >> 5u); }
var<workgroup> tk: array<u32, ${tile + tile / 32}>;
var<workgroup> tv: array<u32, ${tile + tile / 32}>;
// Subgroup w's count of digit d in half d >> 7 of word w * 128 + (d & 127).
var<workgroup> warpCounts: array<atomic<u32>, ${warps * 128}>;
var<workgroup> digitStart: array<u32, 256>;
var<workgroup> pairSums: array<u32, 32>;
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) id: vec3u, @builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32) {
  let seg = id.x;
  let warp = lid / ${width}u;
  let lanesBelow = (1u << lane) - 1u;
  var keys: array<u32, ${items}>;
  var vals: array<u32, ${items}>;
  var ranks: array<u32, ${items}>;
  ${each(`
      let p = warp * ${width * items}u + i * ${width}u + lane;
      keys[i] = keysIn[seg * TILE + p];
      vals[i] = p;`)}
  for (var c = lid; c < ${warps * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }
  workgroupBarrier();
  for (var shift = 0u; shift < 32u; shift += 8u) {
    ${each(`
      let d = (ok(keys[i]) >> shift) & 255u;
      ${warpRankProbeWgsl(width)}`)}
    workgroupBarrier();
    // Each digit's first place in the tile.
    ${digitPlacesProbeWgsl(warps, width, 'digitStart')}
    workgroupBarrier();
    ${each(`
      let d = (ok(keys[i]) >> shift) & 255u;
      let earlier = (atomicLoad(&warpCounts[warp * 128u + (d & 127u)]) >> ((d >> 7u) * 16u)) & 0xffffu;
      let to = digitStart[d] + earlier + ranks[i];
      tk[pad(to)] = keys[i];
      tv[pad(to)] = vals[i];`)}
    workgroupBarrier();
    if (shift < 24u) {
      ${each(`
        let p = warp * ${width * items}u + i * ${width}u + lane;
        keys[i] = tk[pad(p)];
        vals[i] = tv[pad(p)];`)}
      for (var c = lid; c < ${warps * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }
      workgroupBarrier();
    }
  }
  for (var p = lid; p < TILE; p += WG) {
    out[seg * TILE + p] = tk[pad(p)];
    out[N + seg * TILE + p] = tv[pad(p)];
  }
}`;
}

const passUs = passTimer(device, features);
const passMs = async (pipeline, bind, groups) => (await passUs(pipeline, bind, groups, 1)) / 1000;

const wgWanted = Number(arg('wg', Math.min(512, adapter.limits.maxComputeInvocationsPerWorkgroup)));
const rows = [];
for (const [segments, tile] of shapes) {
  const wg = Math.min(wgWanted, tile);
  const n = segments * tile;
  const keys = new Uint32Array(n);
  const f = new Float32Array(keys.buffer);
  let s = 0x9e3779b9 ^ tile;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    f[i] = ((s >>> 0) / 4294967296) * 2 - 1;
  }
  // Ties: a run of equal keys in every segment.
  for (let g = 0; g < segments; g++) for (let j = 0; j < 64; j++) f[g * tile + ((j * 37) % tile)] = 0.5;
  const input = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(input, 0, keys);
  const output = device.createBuffer({ size: n * 8, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: n * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const pipeline = await computePipeline(device, shader(wg, tile).replace('${N}', String(n)), `${segments}x${tile}`);
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: input } }, { binding: 1, resource: { buffer: output } }] });
  const end = performance.now() + WARM_MS;
  while (performance.now() < end) await passMs(pipeline, bind, segments);
  const times = [];
  for (let r = 0; r < 9; r++) times.push(await passMs(pipeline, bind, segments));
  times.sort((a, b) => a - b);
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(output, 0, read, 0, n * 8);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const got = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  let mismatches = 0;
  for (let g = 0; g < segments; g++) {
    const order = Array.from({ length: tile }, (_, i) => i).sort((a, b) => orderedKeyOf(keys[g * tile + a]) - orderedKeyOf(keys[g * tile + b]) || a - b);
    for (let p = 0; p < tile; p++) if (got[n + g * tile + p] !== order[p] || got[g * tile + p] !== keys[g * tile + order[p]]) mismatches++;
  }
  const row = { shape: `${segments}x${tile}`, workgroupSize: wg, subgroupWidth: width, gpuMs: +times[4].toFixed(4), leastMs: +times[0].toFixed(4), mismatches };
  console.log(JSON.stringify(row));
  rows.push(row);
  for (const b of [input, output, read]) b.destroy();
}
const out = arg('out', process.env.OUT);
if (out) {
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/tile-radix-probe.json`, JSON.stringify({ adapter: adapter.info, rows }, null, 2));
}
device.destroy();
