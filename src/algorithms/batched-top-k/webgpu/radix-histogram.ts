import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, enterRadixTile, radixProgram } from './radix-common.js';

/*
 * Pass 0 over the keys (tile t of a segment covers radixTileItems keys), read as
 * aligned vec4 quads, all of a tile's quads loaded before any is used:
 *
 * - 'radix-histogram' (grid maxSegments * tiles): with a sampled threshold T (mode 1) the keys at or above T are appended to
 *   candidates0 (state word 2 counts them; one global atomic per tile) and counted in the digit-0
 *   histogram through the workgroup's (one global atomic per digit and tile) — one read of the keys
 *   and no histogram work for the rest. Without one (mode 0), the
 *   digit-0 histogram of every key (workgroup histogram, then one atomic per non-zero bin).
 * - 'radix-fallback' (grid maxSegments * filterTiles, each workgroup looping over tiles): only where
 *   T misled (mode 1, fewer than take keys reached it): adds the keys below T to the digit-0
 *   histogram, which then counts every key; the filter of digit 0 reads every key. Elsewhere its
 *   workgroups exit at once.
 */

/** The pass-0 program: 'radix-histogram' or, with `fallback`, 'radix-fallback'. */
export function radixHistogramProgram(facts: TopKKernelFacts, name: string, fallback = false): WebGpuProgram {
  const quadsPer = Math.ceil((facts.radixTileItems / 4 + 1) / facts.workgroupSize);
  const declarations = `
const FALLBACK: bool = ${fallback};
const QUADS_PER: u32 = ${quadsPer}u;
var<workgroup> tileInfo: vec3<u32>;
var<workgroup> collectedInTile: atomic<u32>;
var<workgroup> collected: vec2<u32>;
// The aligned quads of keysIn covering keys [a, b).
fn loadQuads(quads: ptr<function, array<vec4<u32>, QUADS_PER>>, a: u32, b: u32, lid: u32) {
  let firstQuad = a >> 2u;
  let lastQuad = (b - 1u) >> 2u;
  for (var r = 0u; r < QUADS_PER; r++) {
    let q = firstQuad + r * WG + lid;
    if (q <= lastQuad) { (*quads)[r] = keysIn4[q]; }
  }
}`;
  // The fallback runs on the filter passes' grid (maxSegments * filterTiles; workgroup w takes tiles
  // w, w + filterTiles, ...): it rarely has work, and most of its workgroups only read the state.
  const enter = fallback
    ? `
  let stride = u.filterTiles;
  let segment = workgroupIndex / stride;
  let first = workgroupIndex - segment * stride;${enterRadixSegment('segment')}`
    : `${enterRadixTile}
  let stride = u.tiles;
  let first = tile;`;
  const main = `${enter}
  // The first tile's keys are requested before the state is read (pass 0 of the histogram kernel
  // reads every key once: the loads' latency then overlaps the state's and the barriers').
  var quads: array<vec4<u32>, QUADS_PER>;
  if (!FALLBACK && s.take != 0u && first * RADIX_TILE < s.size) { loadQuads(&quads, s.start + first * RADIX_TILE, s.start + min(first * RADIX_TILE + RADIX_TILE, s.size), lid); }
  if (lid == 0u) {
    tileInfo = vec3<u32>(atomicLoad(&temp[state + STATE_MODE]), atomicLoad(&temp[state + STATE_THRESHOLD]), atomicLoad(&temp[state + STATE_COLLECTED]));
  }
  let info = workgroupUniformLoad(&tileInfo);
  let sampled = info.x == 1u;
  if (s.take == 0u || (FALLBACK && !(sampled && info.z < s.take))) { return; }
  let collect = !FALLBACK && sampled;
  let threshold = info.y;
  let histogram = histogramOf(segment, 0u);
  for (var t = first; t * RADIX_TILE < s.size; t += stride) {
    let begin = t * RADIX_TILE;
    let to = min(begin + RADIX_TILE, s.size);
    // Collecting, the histogram is clear: zero when the workgroup starts (WGSL), and each tile's
    // flush below clears the bins it used.
    if (!collect) { clearHistogram(BINS, lid); }
    // Aligned quads covering keys [a, b) of keysIn; elements outside [a, b) are skipped.
    let a = s.start + begin;
    let b = s.start + to;
    let firstQuad = a >> 2u;
    let lastQuad = (b - 1u) >> 2u;
    if (FALLBACK || t != first) { loadQuads(&quads, a, b, lid); }
    var mine: array<u32, ${quadsPer * 4}>;
    var mineKeys: array<u32, ${quadsPer * 4}>;
    var n = 0u;
    for (var r = 0u; r < QUADS_PER; r++) {
      let q = firstQuad + r * WG + lid;
      if (q > lastQuad) { break; }
      for (var c = 0u; c < 4u; c++) {
        let i = q * 4u + c;
        if (i < a || i >= b) { continue; }
        let key = orderedKey(quads[r][c], s.direction);
        if (collect) {
          if (key >= threshold) {
            mine[n] = i - s.start;
            mineKeys[n] = key;
            n += 1u;
          }
        } else if (!FALLBACK || key < threshold) {
          atomicAdd(&localHistogram[digitOf(key, 0u)], 1u);
        }
      }
    }
    if (!collect) {
      workgroupBarrier();
      flushHistogram(histogram, lid);
      continue;
    }
    if (lid == 0u) { atomicStore(&collectedInTile, 0u); }
    workgroupBarrier();
    var at = 0u;
    if (n > 0u) { at = atomicAdd(&collectedInTile, n); }
    workgroupBarrier();
    if (lid == 0u) {
      let total = atomicLoad(&collectedInTile);
      var base = 0u;
      if (total > 0u) { base = atomicAdd(&temp[state + STATE_COLLECTED], total); }
      collected = vec2<u32>(base, total);
    }
    let tileCollected = workgroupUniformLoad(&collected);
    let out = u.candidates0At + s.start + tileCollected.x + at;
    for (var j = 0u; j < n; j++) {
      if (s.start + tileCollected.x + at + j < u.candidatesLen) { atomicStore(&temp[out + j], mine[j]); }
    }
    // Their digit-0 histogram through the workgroup's: the collected keys crowd into a few digits
    // (all of them into one when many keys tie at T, as NaNs of random-bit keys do), and a global
    // atomic per key on one word serializes every tile. The first invocation to take a digit's
    // count adds it (the exchange also clears the bin); one global atomic per digit and tile.
    for (var j = 0u; j < n; j++) { atomicAdd(&localHistogram[digitOf(mineKeys[j], 0u)], 1u); }
    workgroupBarrier();
    for (var j = 0u; j < n; j++) {
      let d = digitOf(mineKeys[j], 0u);
      let c = atomicExchange(&localHistogram[d], 0u);
      if (c != 0u) { atomicAdd(&temp[histogram + d], c); }
    }
  }`;
  return radixProgram(fallback ? 'radix-fallback' : 'radix-histogram', facts, name, { keys: true, keys4: true, outputs: false }, declarations, main);
}
