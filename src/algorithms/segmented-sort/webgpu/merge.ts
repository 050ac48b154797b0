/*
 * 'merge-pass', the WGSL of the 'merge' variant's passes (the block launch is single-tile's program
 * in its blocks mode: programs.ts). Twin of cpu/merge.ts.
 *
 * Pass p (grid maxSegments * tiles; `launchPass` p) takes the segments of more than TILE << p keys,
 * whose runs of TILE << p keys (sorted by the block launch or the passes before) are in buffer p % 2.
 * Workgroup g of a segment writes places [g * TILE, (g + 1) * TILE) of the merge of its pair of runs
 * A (first) and B: where that range starts and ends on the merge path (how many of its places come
 * from A), it finds by a search in which every invocation probes the path at once (half of them for
 * each end, about log2(n) / log2(WG / 2) rounds over the keys in global memory instead of log2(n)
 * loads one after the other); it loads the range's keys of A and of B into workgroup memory, each
 * invocation merges TILE / WG places (its own start on the path by a binary search in workgroup
 * memory), and the workgroup writes the range to buffer (p + 1) % 2, or to the outputs in the
 * segment's last pass. Ties take A first: A holds the smaller indices, so the merge is stable, and
 * the result is the order of (sort key, index) that every variant gives.
 */

/** The merge pass's declarations and body, over the sort's preamble (programs.ts). */
export function mergePassParts(options: { readonly hasValues: boolean; readonly workgroupSize: number; readonly tileItems: number }): { declarations: string; main: string } {
  const { hasValues, workgroupSize, tileItems } = options;
  const per = tileItems / workgroupSize;
  const padded = tileItems + Math.ceil(tileItems / 32);
  if (!Number.isInteger(per) || workgroupSize < 2) throw new Error(`internal: merge tiles of ${tileItems} keys over ${workgroupSize} invocations`);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const values = (text: string) => (hasValues ? text : '');
  // The range's loads, all in flight before the first store (named registers).
  const loads = range(per)
    .map((r) => `    let j${r} = lid + ${r * workgroupSize}u;
    var k${r} = 0u;${values(`\n    var v${r} = 0u;`)}
    if (j${r} < n) {
      let at = select(bFrom + j${r} - na, aFrom + j${r}, j${r} < na);
      k${r} = temp[src + at];${values(`\n      v${r} = temp[srcValues + at];`)}
    }`)
    .join('\n');
  // The invocation's merge, unrolled into named registers (a private array indexed in a loop may live in slow memory).
  const steps = range(per)
    .map((r) => `  var o${r} = 0u;${values(` var w${r} = 0u;`)}
  if (t0 + ${r}u < n) {
    let takeA = ia < na && (ib >= n || sortKeyOf(bitsA, mask) <= sortKeyOf(bitsB, mask));
    o${r} = select(bitsB, bitsA, takeA);${values(`\n    w${r} = mergeValues[slot(select(ib, ia, takeA))];`)}
    if (takeA) { ia++; bitsA = mergeKeys[slot(min(ia, n - 1u))]; } else { ib++; bitsB = mergeKeys[slot(min(ib, n - 1u))]; }
  }`)
    .join('\n');
  const writeBack = range(per)
    .map((r) => `  if (t0 + ${r}u < n) { mergeKeys[slot(t0 + ${r}u)] = o${r};${values(` mergeValues[slot(t0 + ${r}u)] = w${r};`)} }`)
    .join('\n');
  const stores = range(per)
    .map((r) => `    if (j${r} < n) { mergeKeys[slot(j${r})] = k${r};${values(` mergeValues[slot(j${r})] = v${r};`)} }`)
    .join('\n');
  return {
    declarations: `
const TILE: u32 = ${tileItems}u;
const PER: u32 = ${per}u;
const HALF: u32 = WG / 2u;
// One padding word every 32: invocation t's PER consecutive places fall in distinct banks.
var<workgroup> mergeKeys: array<u32, ${padded}>;
${values(`var<workgroup> mergeValues: array<u32, ${padded}>;`)}
var<workgroup> mergeEntered: vec4<u32>;
var<workgroup> searchLo: array<u32, 2>;
var<workgroup> searchHi: array<u32, 2>;
var<workgroup> verdicts: array<u32, WG>;
var<workgroup> searchOpen: u32;
var<workgroup> splits: vec2<u32>;
fn slot(j: u32) -> u32 { return j + (j >> 5u); }
// Merge passes a segment of size keys takes (problem.ts mergePassesFor).
fn mergePasses(size: u32) -> u32 {
  var passes = 0u;
  while ((TILE << passes) < size) { passes++; }
  return passes;
}
fn sortKeyOf(bits: u32, mask: u32) -> u32 { return orderedBits(bits) ^ mask; }`,
    main: `
  let i = workgroupIndex / u.mergeTiles;
  let g = workgroupIndex % u.mergeTiles;
  let mergePass = u.launchPass;
  if (lid == 0u) {
    var s = vec4<u32>(0u, 0u, 0u, 0u);
    let e = enterMerge(i);
    if (e.w == 1u && mergePasses(e.y) > mergePass && g * TILE < e.y) { s = vec4<u32>(e.x, e.y, e.z, 1u); }
    mergeEntered = s;
  }
  let s = workgroupUniformLoad(&mergeEntered);
  if (s.w == 0u) { return; }
  let start = s.x;
  let size = s.y;
  let mask = s.z;
  let run = TILE << mergePass;
  let outLo = g * TILE;
  let pairStart = outLo / (2u * run) * (2u * run);
  let lenA = min(run, size - pairStart);
  let lenB = min(run, size - pairStart - lenA);
  let aAt = start + pairStart;
  let bAt = aAt + lenA;
  let d0 = outLo - pairStart;
  let d1 = min(d0 + TILE, lenA + lenB);
  let src = select(u.sortKeys0At, u.sortKeys1At, (mergePass & 1u) == 1u);${values(`
  let srcValues = select(u.sortValues0At, u.sortValues1At, (mergePass & 1u) == 1u);`)}
  // The places of A among the first d of the merge, for d = d0 and d1: the least m with A[m] after
  // B[d - 1 - m], within [max(0, d - lenB), min(d, lenA)]. Each round the invocations of a side probe
  // up to HALF places of its interval, evenly spaced, and the two neighbouring probes where the
  // verdict turns narrow it (no atomics: one invocation writes each bound).
  if (lid < 2u) {
    let d = select(d0, d1, lid == 1u);
    searchLo[lid] = select(0u, d - lenB, d > lenB);
    searchHi[lid] = min(d, lenA);
  }
  workgroupBarrier();
  let side = lid & 1u;
  let probe = lid >> 1u;
  let d = select(d0, d1, side == 1u);
  loop {
    if (lid == 0u) { searchOpen = select(0u, 1u, searchLo[0] < searchHi[0] || searchLo[1] < searchHi[1]); }
    if (workgroupUniformLoad(&searchOpen) == 0u) { break; }
    let lo = searchLo[side];
    let hi = searchHi[side];
    let n = hi - lo;
    let step = n / (HALF + 1u);
    let probes = select(HALF, min(n, HALF), step == 0u);
    let m = select(lo + step * (probe + 1u), lo + probe, step == 0u);
    // 1: A[m] comes before B[d - 1 - m] (the split is past m).
    var verdict = 0u;
    if (probe < probes) { verdict = select(0u, 1u, sortKeyOf(temp[src + aAt + m], mask) <= sortKeyOf(temp[src + bAt + d - 1u - m], mask)); }
    verdicts[lid] = verdict;
    workgroupBarrier();
    if (probe < probes) {
      if (verdict == 1u && (probe + 1u == probes || verdicts[lid + 2u] == 0u)) { searchLo[side] = m + 1u; }
      if (verdict == 0u && (probe == 0u || verdicts[lid - 2u] == 1u)) { searchHi[side] = m; }
    }
    workgroupBarrier();
  }
  if (lid == 0u) { splits = vec2<u32>(searchLo[0], searchLo[1]); }
  let split = workgroupUniformLoad(&splits);
  let na = split.y - split.x;
  let n = d1 - d0;
  let nb = n - na;
  let aFrom = aAt + split.x;
  let bFrom = bAt + (d0 - split.x);
  {
${loads}
${stores}
  }
  workgroupBarrier();
  // This invocation's places [t0, t0 + PER) of the range: its start on the path, then a merge.
  let t0 = min(lid * PER, n);
  var lo = select(0u, t0 - nb, t0 > nb);
  var hi = min(t0, na);
  while (lo < hi) {
    let m = (lo + hi) >> 1u;
    if (sortKeyOf(mergeKeys[slot(m)], mask) <= sortKeyOf(mergeKeys[slot(na + t0 - 1u - m)], mask)) { lo = m + 1u; } else { hi = m; }
  }
  var ia = lo;
  var ib = na + t0 - lo;
  // The heads of both runs' rest in registers; each step reloads the one it took from.
  var bitsA = mergeKeys[slot(min(ia, n - 1u))];
  var bitsB = mergeKeys[slot(min(ib, n - 1u))];
${steps}
  workgroupBarrier();
${writeBack}
  workgroupBarrier();
  let last = mergePass + 1u == mergePasses(size);
  let dst = select(u.sortKeys1At, u.sortKeys0At, (mergePass & 1u) == 1u);${values(`
  let dstValues = select(u.sortValues1At, u.sortValues0At, (mergePass & 1u) == 1u);`)}
  for (var j = lid; j < n; j += WG) {
    let at = outLo + j;
    if (last) { writeOut(start, at, mergeKeys[slot(j)], ${hasValues ? 'finalValue(mergeValues[slot(j)])' : '0u'}); } else {
      temp[dst + start + at] = mergeKeys[slot(j)];${values(`\n      temp[dstValues + start + at] = mergeValues[slot(j)];`)}
    }
  }`,
  };
}
