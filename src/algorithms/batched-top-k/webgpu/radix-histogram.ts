import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram, spreadPickOf } from './radix-common.js';

/*
 * Pass 0 over the keys (tile t of a segment covers radixTileItems keys), read as aligned vec4 quads,
 * all of a tile's quads loaded before any is used:
 *
 * - 'radix-histogram' (grid maxSegments * histogramTiles; workgroup w of a segment takes its tiles
 *   w, w + histogramTiles, ..., the next tile's quads loaded while it tests this one's): with a
 *   sampled threshold T (mode 1) the keys at or above T are appended to candidates0 (state word 2
 *   counts them; one global atomic per tile) and counted in the digit-0 histogram through the
 *   workgroup's (one global atomic per digit and tile): one read of the keys and no histogram work
 *   for the rest. Without one (mode 0), the digit-0 histogram of every key (workgroup histogram,
 *   then one atomic per non-zero bin).
 * - Where T misled (mode 1, fewer than take keys reached it), the keys below T go to the digit-0
 *   histogram too, which then counts every key (the filter of digit 0 reads every key). On segments
 *   of at most radixFoldFallbackMaxItems keys (`facts.radixFoldedFallback`), pass 0 does it: each
 *   sampled workgroup counts its arrival (state word 3), and the last of the segment's to arrive
 *   reads the segment again. T misleads only where the sample's keys rank far above the rest (its
 *   rank leaves several spreads of margin), so that read is rare, and a launch of its own, whose
 *   workgroups nearly always exited at once, cost every call a dispatch (policy.ts has the H200's
 *   times). Longer segments keep that launch, 'radix-fallback' (grid maxSegments * filterTiles, each
 *   workgroup looping over tiles), whose workgroups exit at once unless T misled: one workgroup's
 *   read of a 16M-key row cost 7.2 ms where the launch's took 0.30.
 */

/** The pass-0 program: 'radix-histogram' or, with `fallback`, 'radix-fallback'. */
export function radixHistogramProgram(facts: TopKKernelFacts, name: string, fallback = false): WebGpuProgram {
  const fold = !fallback && facts.radixFoldedFallback;
  // The spread pick loads each candidate's ordered key from beside its index (spreadPickOf).
  const keysBeside = spreadPickOf(facts) !== undefined;
  const quadsPer = Math.ceil((facts.radixTileItems / 4 + 1) / facts.workgroupSize);
  const quads = Array.from({ length: quadsPer }, (_, r) => r);
  // An invocation's keys live in named registers (q0, q1, ...), each quad's uses written out: a
  // private array indexed in a loop lives in the device's local memory, where WGSL's zero
  // initialization and every access cost memory traffic (on an H200 that traffic took longer than
  // reading the keys). Within a quad a loop over its four components is fine (a vector indexed at run
  // time stays in registers); writing those out too, with an atomic per key, made a software
  // adapter (SwiftShader) take ~25 s to compile the program, against ~1 s this way. Key (r, c) is
  // component c of quad r; `hits` words hold one bit per key that reached the threshold, 32 a word.
  const masks = Array.from({ length: Math.ceil((quadsPer * 4) / 32) }, (_, m) => m);
  const loads = (indent: string, into = 'q', from = 'firstQuad', to = 'lastQuad') =>
    quads.map((r) => `${indent}${into}${r} = keysIn4[min(${from} + ${r * facts.workgroupSize}u + lid, ${to})];`).join('\n');
  // The keys of quads q0, q1, ... within [a, b) that pass `test` (a WGSL condition on key), counted in localHistogram by digit 0.
  const countDigits = (indent: string, test: string) =>
    quads
      .map(
        (r) => `${indent}for (var c = 0u; c < 4u; c++) {
${indent}  let i = (firstQuad + ${r * facts.workgroupSize}u + lid) * 4u + c;
${indent}  let key = orderedKey(q${r}[c], s.direction);
${indent}  if (i >= a && i < b && ${test}) { atomicAdd(&localHistogram[digitOf(key, 0u)], 1u); }
${indent}}`,
      )
      .join('\n');
  // Full tiles (aligned, RADIX_TILE keys) fill quads [0, fullQuads) exactly: no per-key bounds.
  const fullQuads = facts.radixTileItems % (4 * facts.workgroupSize) === 0 ? facts.radixTileItems / (4 * facts.workgroupSize) : 0;
  const bitOf = (r: number, c: number) => r * 4 + c;
  const setHit = (r: number, c: number, test: string) => `hits${bitOf(r, c) >> 5} |= select(0u, ${2 ** (bitOf(r, c) & 31) >>> 0}u, ${test});`;
  const declarations = `
const FALLBACK: bool = ${fallback};
${reachWindowsWgsl(facts.keyType)}
var<workgroup> tileInfo: vec3<u32>;${fold ? '\nvar<workgroup> lastToArrive: u32;' : ''}
var<workgroup> collectedInTile: atomic<u32>;
var<workgroup> collected: vec2<u32>;`;
  // The fallback launch runs on the filter passes' grid (maxSegments * filterTiles; workgroup w takes
  // tiles w, w + filterTiles, ...): it rarely has work, and most of its workgroups only read the state.
  const enter = `
  let stride = u.${fallback ? 'filterTiles' : 'histogramTiles'};
  let segment = workgroupIndex / stride;
  let first = workgroupIndex - segment * stride;${enterRadixSegment('segment')}`;
  // Collecting past T: pass 0 with a sampled threshold (never the fallback's).
  const collectSection = `${masks.map((m) => `    var hits${m} = 0u;`).join('\n')}
    if (${fullQuads > 0 ? `(a & 3u) == 0u && b - a == RADIX_TILE` : 'false'}) {
${quads.slice(0, fullQuads).map((r) => `      {
        let h = reaches(q${r}, reach);
        ${[0, 1, 2, 3].map((c) => setHit(r, c, `h[${c}]`)).join('\n        ')}
      }`).join('\n')}
    } else {
${quads.map((r) => `      {
        let at = vec4<u32>((firstQuad + ${r * facts.workgroupSize}u + lid) * 4u) + vec4<u32>(0u, 1u, 2u, 3u);
        let h = reaches(q${r}, reach) & (at >= vec4<u32>(a)) & (at < vec4<u32>(b));
        ${[0, 1, 2, 3].map((c) => setHit(r, c, `h[${c}]`)).join('\n        ')}
      }`).join('\n')}
    }
    let n = ${masks.map((m) => `countOneBits(hits${m})`).join(' + ')};
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
    if (tileCollected.y == 0u) { continue; }
    // The few keys that reached T (about 1.5 k of a segment's): read again (they are in the cache)
    // from their bits, appended to candidates0 and counted in the digit-0 histogram through the
    // workgroup's: the collected keys crowd into a few digits (all of them into one when many keys
    // tie at T, as NaNs of random-bit keys do), and a global atomic per key on one word serializes
    // every tile. The first invocation to take a digit's count adds it (the exchange also clears the
    // bin); one global atomic per digit and tile.
    let out = u.candidates0At + s.start + tileCollected.x + at;${keysBeside ? '\n    let besideOut = u.candidates1At + s.start + tileCollected.x + at;' : ''}
    var j = 0u;
${masks.map((m) => `    for (var bits = hits${m}; bits != 0u; bits &= bits - 1u) {
      let bit = ${m * 32}u + firstTrailingBit(bits);
      let i = (firstQuad + (bit >> 2u) * WG + lid) * 4u + (bit & 3u);
      let key = orderedKey(keysIn[i], s.direction);
      if (s.start + tileCollected.x + at + j < u.candidatesLen) {
        atomicStore(&temp[out + j], i - s.start);${keysBeside ? '\n        atomicStore(&temp[besideOut + j], key);' : ''}
      }
      atomicAdd(&localHistogram[digitOf(key, 0u)], 1u);
      j += 1u;
    }`).join('\n')}
    workgroupBarrier();
${masks.map((m) => `    for (var bits = hits${m}; bits != 0u; bits &= bits - 1u) {
      let bit = ${m * 32}u + firstTrailingBit(bits);
      let d = digitOf(orderedKey(keysIn[(firstQuad + (bit >> 2u) * WG + lid) * 4u + (bit & 3u)], s.direction), 0u);
      let count = atomicExchange(&localHistogram[d], 0u);
      if (count != 0u) { atomicAdd(&temp[histogram + d], count); }
    }`).join('\n')}
`;
  // Where the plan has no fallback launch: the last sampled workgroup of a segment to finish takes its work.
  const foldSection = `
  if (!collect) { return; }
  // The segment's workgroups arrive once their tiles are done (each adds to the collected count
  // before it arrives); the last, where fewer than take keys reached T, histograms the keys below it
  // over the whole segment (localHistogram is clear: each tile's flush cleared the bins it used).
  if (lid == 0u) {
    let arrived = atomicAdd(&temp[state + STATE_ARRIVED], 1u) + 1u;
    lastToArrive = select(0u, 1u, arrived == stride && atomicLoad(&temp[state + STATE_COLLECTED]) < s.take);
  }
  if (workgroupUniformLoad(&lastToArrive) == 0u) { return; }
  for (var tile = 0u; tile * RADIX_TILE < s.size; tile++) {
    let a = s.start + tile * RADIX_TILE;
    let b = s.start + min(tile * RADIX_TILE + RADIX_TILE, s.size);
    let firstQuad = a >> 2u;
    let lastQuad = (b - 1u) >> 2u;
${loads('    ')}
${countDigits('    ', 'key < threshold')}
  }
  workgroupBarrier();
  flushHistogram(histogram, lid);`;
  const main = `${enter}
${quads.map((r) => `  var q${r} = vec4<u32>();\n  var p${r} = vec4<u32>();`).join('\n')}
  // The first tile's keys are requested before the state is read (pass 0 of the histogram kernel
  // reads every key once: the loads' latency then overlaps the state's and the barriers'). The quads
  // past a tile's last read the last again; their keys are skipped.
  if (!FALLBACK && s.take != 0u && first * RADIX_TILE < s.size) {
    let firstQuad = (s.start + first * RADIX_TILE) >> 2u;
    let lastQuad = (s.start + min(first * RADIX_TILE + RADIX_TILE, s.size) - 1u) >> 2u;
${loads('    ')}
  }
  if (lid == 0u) {
    tileInfo = vec3<u32>(atomicLoad(&temp[state + STATE_MODE]), atomicLoad(&temp[state + STATE_THRESHOLD]), ${fallback ? 'atomicLoad(&temp[state + STATE_COLLECTED])' : '0u'});
  }
  let info = workgroupUniformLoad(&tileInfo);
  let sampled = info.x == 1u;
  if (s.take == 0u || (FALLBACK && !(sampled && info.z < s.take))) { return; }
  let collect = !FALLBACK && sampled;
  let threshold = info.y;
  let reach = reachWindows(threshold, s.direction);
  let histogram = histogramOf(segment, 0u);
  // The next tile's keys (p) are in flight while this tile's (q) are tested.
  var t = first;
  loop {
    if (t * RADIX_TILE >= s.size) { break; }
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
    let next = t + stride;
    if (FALLBACK) {
${loads('      ')}
    } else if (next * RADIX_TILE < s.size) {
      let nextFirst = (s.start + next * RADIX_TILE) >> 2u;
      let nextLast = (s.start + min(next * RADIX_TILE + RADIX_TILE, s.size) - 1u) >> 2u;
${loads('      ', 'p', 'nextFirst', 'nextLast')}
    }
    if (!collect) {
${countDigits('      ', '(!FALLBACK || key < threshold)')}
      workgroupBarrier();
      flushHistogram(histogram, lid);
      continue;
    }
${fallback ? '' : collectSection}    continuing {
${quads.map((r) => `      q${r} = p${r};`).join('\n')}
      t = next;
    }
  }${fold ? foldSection : ''}`;
  return radixProgram(fallback ? 'radix-fallback' : 'radix-histogram', facts, name, { keys: true, keys4: true, outputs: false }, declarations, main);
}

/**
 * WGSL `reachWindows(t, direction) -> vec4<u32>` and `reaches(x, w) -> vec4<bool>`: the bits x of a
 * key reach the threshold t (orderedKey(x, direction) >= t) exactly when x - w.x < w.y or
 * x - w.z < w.w (unsigned, wrapping): two windows of raw bits. The keys that reach t are an upper
 * set of the keys' order (a lower one for 'min'), and in raw f32 bits such a set is at most two runs:
 * negative values run backwards from -Infinity (0xff800000) to -0 (0x80000000), ±0 and positive
 * values forwards from 0 to +Infinity (0x7f800000), and NaNs (0x7f800001-0x7fffffff,
 * 0xff800001-0xffffffff) rank above all. So pass 0 tests a key in four operations instead of
 * ordering it first (about twice as many): on an H200 that work, not the loads, bounded the pass.
 * i32 and u32 keys are ordered by one exclusive or, and keep that test.
 */
export function reachWindowsWgsl(keyType: TopKKernelFacts['keyType']): string {
  if (keyType !== 'f32') {
    return `fn reachWindows(t: u32, direction: u32) -> vec4<u32> { return vec4<u32>(t, direction, 0u, 0u); }
fn reaches(x: vec4<u32>, w: vec4<u32>) -> vec4<bool> { return (vec4<u32>(orderedBits(x.x), orderedBits(x.y), orderedBits(x.z), orderedBits(x.w)) ^ vec4<u32>(0u - w.y)) >= vec4<u32>(w.x); }`;
  }
  return `const ALL_WINDOWS = vec4<u32>(0u, 0x80000000u, 0x80000000u, 0x80000000u);
const NEGATIVE_NANS = vec2<u32>(0xff800001u, 0x007fffffu);
fn reachWindows(t: u32, direction: u32) -> vec4<u32> {
  if (direction == 0u) {
    // orderedBits(x) >= t. Above +Infinity's key: NaNs only.
    if (t > 0xff800000u) { return vec4<u32>(0x7f800001u, 0x007fffffu, NEGATIVE_NANS); }
    // A positive value's key: the positive values from its bits on, and every NaN.
    if (t > 0x80000000u) { let lo = t ^ 0x80000000u; return vec4<u32>(lo, 0x80000000u - lo, NEGATIVE_NANS); }
    // Zero's key or a negative value's: every bit pattern up to that value's (-0 at least), and the negative NaNs.
    if (t > 0x007fffffu) { let hi = max(~t, 0x80000000u); return vec4<u32>(0u, hi + 1u, NEGATIVE_NANS); }
    return ALL_WINDOWS;
  }
  // orderedBits(x) <= m.
  let m = ~t;
  if (m == 0xffffffffu) { return ALL_WINDOWS; }
  // At or above +Infinity's key: every value but NaNs.
  if (m >= 0xff800000u) { return vec4<u32>(0u, 0x7f800001u, 0x80000000u, 0x7f800001u); }
  // Zero's key or a positive value's: the non-negative values up to it, and every negative value.
  if (m >= 0x80000000u) { return vec4<u32>(0u, (m ^ 0x80000000u) + 1u, 0x80000000u, 0x7f800001u); }
  // A negative value's key: the negative values from its bits (not -0, which is zero) down to -Infinity.
  if (m >= 0x007fffffu) { let lo = max(~m, 0x80000001u); return vec4<u32>(lo, 0xff800001u - lo, 0u, 0u); }
  return vec4<u32>();
}
fn reaches(x: vec4<u32>, w: vec4<u32>) -> vec4<bool> { return (x - vec4<u32>(w.x) < vec4<u32>(w.y)) | (x - vec4<u32>(w.z) < vec4<u32>(w.w)); }`;
}
