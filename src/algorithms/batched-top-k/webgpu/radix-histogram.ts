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
  const quads = Array.from({ length: quadsPer }, (_, r) => r);
  // A tile's quads in registers k0, k1, ... and every loop over its keys written out: a private
  // array indexed in a loop may live in slow per-invocation memory (as row-radix.ts found).
  const loadQuads = (first: string, last: string) =>
    quads.map((r) => `if (${first} + ${r}u * WG + lid <= ${last}) { k${r} = keysIn4[${first} + ${r}u * WG + lid]; }`).join('\n    ');
  const eachKey = (body: string) =>
    quads
      .map(
        (r) => `    { let q = firstQuad + ${r}u * WG + lid; if (q <= lastQuad) {
${[0, 1, 2, 3].map((c) => `      { let i = q * 4u + ${c}u; if (i >= a && i < b) { let key = orderedKey(k${r}[${c}], s.direction); ${body} } }`).join('\n')}
    } }`,
      )
      .join('\n');
  const declarations = `
const FALLBACK: bool = ${fallback};
var<workgroup> tileInfo: vec3<u32>;
var<workgroup> collectedInTile: atomic<u32>;
var<workgroup> collected: vec2<u32>;`;
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
  ${quads.map((r) => `var k${r} = vec4<u32>();`).join(' ')}
  if (!FALLBACK && s.take != 0u && first * RADIX_TILE < s.size) {
    let firstQuad = (s.start + first * RADIX_TILE) >> 2u;
    let lastQuad = (s.start + min(first * RADIX_TILE + RADIX_TILE, s.size) - 1u) >> 2u;
    ${loadQuads('firstQuad', 'lastQuad')}
  }
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
    if (FALLBACK || t != first) {
    ${loadQuads('firstQuad', 'lastQuad')}
    }
    if (!collect) {
${eachKey('if (!FALLBACK || key < threshold) { atomicAdd(&localHistogram[digitOf(key, 0u)], 1u); }')}
      workgroupBarrier();
      flushHistogram(histogram, lid);
      continue;
    }
    var n = 0u;
${eachKey('if (key >= threshold) { n += 1u; }')}
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
    // The collected keys' indices, and their digit-0 histogram through the workgroup's: they crowd
    // into a few digits (all of them into one when many keys tie at T, as NaNs of random-bit keys
    // do), and a global atomic per key on one word serializes every tile. The first invocation to
    // take a digit's count adds it (the exchange also clears the bin); one global atomic per digit
    // and tile.
    // Most tiles of a long segment have no key at or above T: their invocations skip the loops.
    var place = s.start + tileCollected.x + at;
    if (n > 0u) {
${eachKey('if (key >= threshold) { if (place < u.candidatesLen) { atomicStore(&temp[u.candidates0At + place], i - s.start); } place += 1u; atomicAdd(&localHistogram[digitOf(key, 0u)], 1u); }')}
    }
    workgroupBarrier();
    if (n > 0u) {
${eachKey('if (key >= threshold) { let d = digitOf(key, 0u); let c = atomicExchange(&localHistogram[d], 0u); if (c != 0u) { atomicAdd(&temp[histogram + d], c); } }')}
    }
  }`;
  return radixProgram(fallback ? 'radix-fallback' : 'radix-histogram', facts, name, { keys: true, keys4: true, outputs: false }, declarations, main);
}
