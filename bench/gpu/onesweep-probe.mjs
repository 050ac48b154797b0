#!/usr/bin/env node
// Would one pass per digit with a decoupled look-back (CUB's Onesweep) sort one 16M-key segment
// faster than segkit's radix sort, whose digit passes are three launches each (a per-tile histogram,
// a scan of the tiles' counts, a stable scatter: 1.014 ms on an H200 against torch.sort's 0.817)?
// A bare probe, no repo code: f32 keys with their indices (an argsort), ascending, stable.
//   upsweep: the four 8-bit digits' totals over the whole segment in one read (and the look-back
//            words and tickets zeroed);
//   pass p (four launches): each workgroup takes the next tile by a ticket (so every tile before it
//            has started: the look-back cannot wait on a tile that never runs), ranks its tile by
//            the digit with warp-level multisplit (eight ballots of the digit's bits, a subgroup's
//            running counts in 16-bit halves of workgroup words, as segkit's scatter does), then
//            each of 256 invocations publishes its digit's count in the tile and walks back over
//            the earlier tiles' words until one holds an inclusive prefix (each tile publishes its
//            count at once, and its inclusive prefix once known), and the tile's keys go out from
//            workgroup memory in digit order to the digit's start plus the earlier tiles' count.
// Every output is checked against a stable sort in JavaScript. Prints JSON rows; --out or $OUT gets
// onesweep-probe.json.
//
// H200 (Dawn/Vulkan, 2026-12-02, GPU ms of one sort, 9 runs; segkit's radix sort 1.0166 in the same
// call): 512 invocations x 8 keys 1.206, 256 x 8 1.285, 256 x 16 1.378, 384 x 8 1.462, 256 x 12 1.568,
// 512 x 4 1.860 (1024 x 4 does not fit the workgroup memory). Where it goes, 512 x 8 with --drop:
// without the walk back 0.980, each tile written in place of by digit 1.139, both 0.8945. So the
// look-back costs ~0.056 ms a digit pass and a pass without it still ~0.21: no faster than
// segkit's three launches a digit, which stay. Without the ranking too (--drop=lookback,scatter,rank:
// load, stage in workgroup memory, write in place) 0.5443-0.5453 against 0.893-0.8952: the
// warp-level multisplit and the digits' places cost ~0.087 ms a digit pass of 16M keys, the largest
// part left; --rank=split (every leader's add first, the ranks after) 1.2124-1.2156 against
// 1.2071 (not faster); --rank=atomics (each lane its own add and shuffle, no ballots) 0.7028: the
// eight ballots and the match mask ~0.048 ms a digit pass, the adds and shuffles ~0.040.
//
//   node bench/gpu/onesweep-probe.mjs [--n=16777216] [--wg=512] [--items=8] [--runs=9] [--warm-ms=1500] [--out=dir]
//   (device machine: source bench/gpu/remote.sh first; locally on lavapipe: --n=262144 --wg=256 --items=4,
//   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp; needs subgroups of
//   one width, at most 32)
import { mkdirSync, writeFileSync } from 'node:fs';
import { arg, computePipeline, digitPlacesProbeWgsl, orderedKeyOf, orderedKeyWgsl, subgroupProbeDevice, timedPass, warpRankProbeWgsl } from './probe-device.mjs';

const { adapter, device, features, width } = await subgroupProbeDevice();

const N = Number(arg('n', 16777216));
const WG = Number(arg('wg', 512));
const ITEMS = Number(arg('items', 8));
const RUNS = Number(arg('runs', 9));
const WARM_MS = Number(arg('warm-ms', 1500));
const TILE = WG * ITEMS;
const TILES = Math.ceil(N / TILE);
const WARPS = WG / width;
const UPSWEEP = Math.min(1024, Math.ceil(N / (WG * 16)));
// --drop=lookback,scatter,rank (timing only; the output is then wrong): each tile takes no earlier
// tile's counts (no walk back), writes its ranked tile to its own place (coalesced, not by digit),
// or stages its keys in load order without ranking them.
const DROP = String(arg('drop', '')).split(',').filter(Boolean);
// --rank=split: every item's leader adds to the subgroup's counts first, and the ranks are taken
// from the leaders after (the adds of a lane's items in flight together rather than one at a time).
const RANK = arg('rank', '');
const SPLIT = RANK === 'split';
// --rank=ballots or atomics (timing only): the ranking's ballots without the leader's add and
// shuffle, or the add and shuffle with each lane its own match (no ballots).
function ballotsOnly(w) {
  const bit = (b) => `select(~b${b}, b${b}, (d & ${1 << b}u) != 0u)`;
  return `${Array.from({ length: 8 }, (_, b) => `let b${b} = subgroupBallot((d & ${1 << b}u) != 0u).x;`).join('\n    ')}
    let same = ${w === 32 ? '0xffffffffu' : `${2 ** w - 1}u`} & ${Array.from({ length: 8 }, (_, b) => bit(b)).join(' & ')};
    ranks[i] = countOneBits(same & lanesBelow) + firstTrailingBit(same);`;
}
function atomicsOnly() {
  return `let same = 1u << lane;
    let leader = lane;
    let half = (d >> 7u) * 16u;
    let counted = atomicAdd(&warpCounts[warp * 128u + (d & 127u)], countOneBits(same) << half);
    ranks[i] = ((subgroupShuffle(counted, leader) >> half) & 0xffffu);`;
}
/** The split ranking's first half for item i (digit d): the ballots, the leader's add. */
function splitRank(w) {
  const bit = (b) => `select(~b${b}, b${b}, (d & ${1 << b}u) != 0u)`;
  return `${Array.from({ length: 8 }, (_, b) => `let b${b} = subgroupBallot((d & ${1 << b}u) != 0u).x;`).join('\n    ')}
    let same = ${w === 32 ? '0xffffffffu' : `${2 ** w - 1}u`} & ${Array.from({ length: 8 }, (_, b) => bit(b)).join(' & ')};
    let leader = firstTrailingBit(same);
    if (lane == leader) { counted[i] = atomicAdd(&warpCounts[warp * 128u + (d & 127u)], countOneBits(same) << ((d >> 7u) * 16u)); }
    leaders[i] = leader;
    sames[i] = same;`;
}
// 256 invocations or more: one a digit in the look-back and the digits' start scan.
if (WG < 256) throw new Error('--wg must be at least 256');
if (WG % width !== 0) throw new Error('--wg must be a multiple of the subgroup width');
// The scatter's workgroup memory (each array rounded up to 16 bytes): keys and values of a tile,
// the subgroups' counts, the digits' places, the scans' sums, the ticket.
const scatterBytes = [TILE + TILE / 32, TILE + TILE / 32, WARPS * 128, 257, 256, 32, 32, 1].reduce((sum, words) => sum + Math.ceil(words / 4) * 16, 0);
if (scatterBytes > device.limits.maxComputeWorkgroupStorageSize) throw new Error(`a tile of ${TILE} keys on ${WG} invocations needs ${scatterBytes} bytes of workgroup memory; the device has ${device.limits.maxComputeWorkgroupStorageSize}`);

const common = `${orderedKeyWgsl('ok')}
const WG = ${WG}u;
const N = ${N}u;
const TILE = ${TILE}u;
const TILES = ${TILES}u;`;

/** The digits' totals of all four passes in one read, and the look-back words and tickets zeroed. */
const upsweep = `${common}
@group(0) @binding(0) var<storage, read> keysIn: array<u32>;
@group(0) @binding(1) var<storage, read_write> totals: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<u32>;
@group(0) @binding(3) var<storage, read_write> tickets: array<u32>;
var<workgroup> counts: array<atomic<u32>, 1024>;
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) id: vec3u, @builtin(local_invocation_index) lid: u32) {
  for (var c = lid; c < 1024u; c += WG) { atomicStore(&counts[c], 0u); }
  let stride = ${UPSWEEP}u * WG;
  for (var c = id.x * WG + lid; c < 4u * TILES * 256u; c += stride) { status[c] = 0u; }
  if (id.x == 0u && lid < 4u) { tickets[lid] = 0u; }
  workgroupBarrier();
  for (var j = id.x * WG + lid; j < N; j += stride) {
    let k = ok(keysIn[j]);
    atomicAdd(&counts[k & 255u], 1u);
    atomicAdd(&counts[256u + ((k >> 8u) & 255u)], 1u);
    atomicAdd(&counts[512u + ((k >> 16u) & 255u)], 1u);
    atomicAdd(&counts[768u + (k >> 24u)], 1u);
  }
  workgroupBarrier();
  for (var c = lid; c < 1024u; c += WG) {
    let n = atomicLoad(&counts[c]);
    if (n != 0u) { atomicAdd(&totals[c], n); }
  }
}`;

const each = (body) => Array.from({ length: ITEMS }, (_, i) => `{\n    const i = ${i}u;${body}\n  }`).join('\n  ');

/** Digit pass `pass`: rank a tile, look back for the earlier tiles' counts, write in digit order. */
function scatter(pass) {
  return `enable subgroups;
${common}
const SHIFT = ${8 * pass}u;
const STATUS = ${pass}u * TILES * 256u;
const LOCAL = 0x40000000u;
const INCLUSIVE = 0x80000000u;
const COUNT = 0x3fffffffu;
@group(0) @binding(0) var<storage, read> keysIn: array<u32>;
@group(0) @binding(1) var<storage, read> valsIn: array<u32>;
@group(0) @binding(2) var<storage, read_write> keysOut: array<u32>;
@group(0) @binding(3) var<storage, read_write> valsOut: array<u32>;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> totals: array<u32>;
@group(0) @binding(6) var<storage, read_write> tickets: array<atomic<u32>>;
fn pad(p: u32) -> u32 { return p + (p >> 5u); }
var<workgroup> tk: array<u32, ${TILE + TILE / 32}>;
var<workgroup> tv: array<u32, ${TILE + TILE / 32}>;
// Subgroup w's count of digit d in half d >> 7 of word w * 128 + (d & 127).
var<workgroup> warpCounts: array<atomic<u32>, ${WARPS * 128}>;
var<workgroup> digitFirst: array<u32, 257>;
var<workgroup> digitOut: array<u32, 256>;
var<workgroup> pairSums: array<u32, 32>;
var<workgroup> startSums: array<u32, 32>;
var<workgroup> ticket: u32;
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32) {
  if (lid == 0u) { ticket = atomicAdd(&tickets[${pass}u], 1u); }
  let tile = workgroupUniformLoad(&ticket);
  let base = tile * TILE;
  let valid = min(TILE, N - base);
  let warp = lid / ${width}u;
  let lanesBelow = (1u << lane) - 1u;
  var keys: array<u32, ${ITEMS}>;
  var vals: array<u32, ${ITEMS}>;
  var digits: array<u32, ${ITEMS}>;
  var ranks: array<u32, ${ITEMS}>;${SPLIT ? `
  var counted: array<u32, ${ITEMS}>;
  var leaders: array<u32, ${ITEMS}>;
  var sames: array<u32, ${ITEMS}>;` : ''}
  ${each(`
    let p = warp * ${width * ITEMS}u + i * ${width}u + lane;
    keys[i] = 0u;
    vals[i] = 0u;
    if (p < valid) { keys[i] = keysIn[base + p]; vals[i] = ${pass === 0 ? 'base + p' : 'valsIn[base + p]'}; }
    // Places past the segment take digit 255: they rank last and are never written.
    digits[i] = select((ok(keys[i]) >> SHIFT) & 255u, 255u, p >= valid);`)}
  for (var c = lid; c < ${WARPS * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }
  // The digits' first places in the segment: an exclusive scan of this pass's totals (lanes < 256).
  var total = 0u;
  if (lid < 256u) { total = totals[${pass * 256}u + lid]; }
  let startBefore = subgroupExclusiveAdd(total);
  let startSum = subgroupAdd(total);
  if (lane == 0u && warp < ${256 / width}u) { startSums[warp] = startSum; }
  workgroupBarrier();
  ${each(`
    let d = digits[i];
    ${DROP.includes('rank') ? 'ranks[i] = d & 0u;' : SPLIT ? splitRank(width) : RANK === 'ballots' ? ballotsOnly(width) : RANK === 'atomics' ? atomicsOnly() : warpRankProbeWgsl(width)}`)}${SPLIT && !DROP.includes('rank') ? `
  ${each(`
    ranks[i] = ((subgroupShuffle(counted[i], leaders[i]) >> ((digits[i] >> 7u) * 16u)) & 0xffffu) + countOneBits(sames[i] & lanesBelow);`)}` : ''}
  workgroupBarrier();
  // Each digit's first place in the tile.
  ${digitPlacesProbeWgsl(WARPS, width, 'digitFirst')}
  if (lid == 0u) { digitFirst[256] = valid; }
  workgroupBarrier();
  // Digit d's count in this tile published at once, then the earlier tiles' walked back.
  if (lid < 256u) {
    let d = lid;
    var start = startBefore;
    for (var w = 0u; w < warp; w++) { start += startSums[w]; }
    let first = digitFirst[d];
    let count = min(digitFirst[d + 1u], valid) - first;
    let at = STATUS + tile * 256u + d;
    var before = 0u;
    if (tile == 0u || ${DROP.includes('lookback')}) {
      atomicStore(&status[at], INCLUSIVE | count);
    } else {
      atomicStore(&status[at], LOCAL | count);
      var j = tile - 1u;
      loop {
        let word = atomicLoad(&status[STATUS + j * 256u + d]);
        if (word == 0u) { continue; }
        before += word & COUNT;
        if ((word & INCLUSIVE) != 0u) { break; }
        j -= 1u;
      }
      atomicStore(&status[at], INCLUSIVE | (before + count));
    }
    digitOut[d] = start + before - first;
  }
  ${each(`
    let d = digits[i];
    let earlier = (atomicLoad(&warpCounts[warp * 128u + (d & 127u)]) >> ((d >> 7u) * 16u)) & 0xffffu;
    let to = pad(${DROP.includes('rank') ? 'warp * ' + width * ITEMS + 'u + i * ' + width + 'u + lane + 0u * (earlier + ranks[i])' : 'digitFirst[d] + earlier + ranks[i]'});
    tk[to] = keys[i];
    tv[to] = vals[i];`)}
  workgroupBarrier();
  for (var q = lid; q < valid; q += WG) {
    let key = tk[pad(q)];
    let at = ${DROP.includes('scatter') ? 'base + q + 0u * digitOut[(ok(key) >> SHIFT) & 255u]' : 'digitOut[(ok(key) >> SHIFT) & 255u] + q'};
    keysOut[at] = key;
    valsOut[at] = tv[pad(q)];
  }
}`;
}

const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
const keys = new Uint32Array(N);
{
  const f = new Float32Array(keys.buffer);
  let s = 0x9e3779b9;
  for (let i = 0; i < N; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    f[i] = ((s >>> 0) / 4294967296) * 2 - 1;
  }
  // Ties: runs of equal keys far apart.
  for (let j = 0; j < Math.min(N, 4096); j++) f[(j * 7919) % N] = 0.25;
}
const input = device.createBuffer({ size: N * 4, usage: storage });
device.queue.writeBuffer(input, 0, keys);
const keysA = device.createBuffer({ size: N * 4, usage: storage });
const valsA = device.createBuffer({ size: N * 4, usage: storage });
const keysB = device.createBuffer({ size: N * 4, usage: storage });
const valsB = device.createBuffer({ size: N * 4, usage: storage });
const totals = device.createBuffer({ size: 4096, usage: storage });
const status = device.createBuffer({ size: 4 * TILES * 256 * 4, usage: storage });
const tickets = device.createBuffer({ size: 16, usage: storage });

const upPipeline = await computePipeline(device, upsweep, 'upsweep');
const upBind = device.createBindGroup({ layout: upPipeline.getBindGroupLayout(0), entries: [input, totals, status, tickets].map((buffer, binding) => ({ binding, resource: { buffer } })) });
// Pass 0 reads the input (its values are the indices), 1 A, 2 B, 3 A; each writes the other (3 into B).
const sources = [[input, valsB], [keysA, valsA], [keysB, valsB], [keysA, valsA]];
const targets = [[keysA, valsA], [keysB, valsB], [keysA, valsA], [keysB, valsB]];
const passes = [];
for (let pass = 0; pass < 4; pass++) {
  const pipeline = await computePipeline(device, scatter(pass), `pass ${pass}`);
  const buffers = [...sources[pass], ...targets[pass], status, totals, tickets];
  // Pass 0 never reads valsIn: 'auto' layouts leave out bindings a shader does not use.
  const entries = buffers.map((buffer, binding) => ({ binding, resource: { buffer } })).filter((e) => pass !== 0 || e.binding !== 1);
  passes.push({ pipeline, bind: device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }) });
}

const timed = timedPass(device, features);
/** One sort: the totals cleared (outside the timed pass), then the upsweep and four passes in one compute pass. */
const sortMs = () =>
  timed(
    (pass) => {
      pass.setPipeline(upPipeline);
      pass.setBindGroup(0, upBind);
      pass.dispatchWorkgroups(UPSWEEP);
      for (const { pipeline, bind } of passes) {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(TILES);
      }
    },
    (encoder) => encoder.clearBuffer(totals),
  );

const end = performance.now() + WARM_MS;
let warm = 0;
while (warm < 2 || performance.now() < end) {
  await sortMs();
  warm++;
}
const times = [];
for (let r = 0; r < RUNS; r++) times.push(await sortMs());
times.sort((a, b) => a - b);

const read = device.createBuffer({ size: N * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const encoder = device.createCommandEncoder();
encoder.copyBufferToBuffer(keysB, 0, read, 0, N * 4);
encoder.copyBufferToBuffer(valsB, 0, read, N * 4, N * 4);
device.queue.submit([encoder.finish()]);
await read.mapAsync(GPUMapMode.READ);
const got = new Uint32Array(read.getMappedRange().slice(0));
read.unmap();
// The expected order: a stable LSD radix sort of the indices by ordered key, in JavaScript.
const ok = new Uint32Array(N).map((_, i) => orderedKeyOf(keys[i]));
let order = new Uint32Array(N).map((_, i) => i);
let next = new Uint32Array(N);
for (let shift = 0; shift < 32; shift += 8) {
  const starts = new Uint32Array(257);
  for (let i = 0; i < N; i++) starts[((ok[order[i]] >>> shift) & 255) + 1]++;
  for (let d = 0; d < 256; d++) starts[d + 1] += starts[d];
  for (let i = 0; i < N; i++) next[starts[(ok[order[i]] >>> shift) & 255]++] = order[i];
  [order, next] = [next, order];
}
let mismatches = 0;
for (let p = 0; p < N; p++) if (got[N + p] !== order[p] || got[p] !== keys[order[p]]) mismatches++;
const row = { drop: DROP.join(',') || undefined, rank: RANK || undefined, n: N, workgroupSize: WG, items: ITEMS, tile: TILE, tiles: TILES, subgroupWidth: width, gpuMs: +times[Math.floor(RUNS / 2)].toFixed(4), leastMs: +times[0].toFixed(4), timestamps: features.includes('timestamp-query'), mismatches };
console.log(JSON.stringify(row));
const out = arg('out', process.env.OUT);
if (out) {
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/onesweep-probe.json`, JSON.stringify({ adapter: adapter.info, rows: [row] }, null, 2));
}
for (const b of [input, keysA, valsA, keysB, valsB, totals, status, tickets, read]) b.destroy();
device.destroy();
if (mismatches > 0 && DROP.length === 0) process.exitCode = 1;
