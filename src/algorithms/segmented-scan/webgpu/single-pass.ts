import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { publishedWordsWgsl } from '../../../dispatch/published-words.js';
import { laneItems, tileItems } from '../order.js';
import { singlePassTilesMax } from '../policy.js';
import { carryGroupTiles, carryUnitTiles, maxCarryUnits } from '../problem.js';
import type { ScanKernelFacts } from './facts.js';
import { fetchWgsl, laneWgsl, registersWgsl, vectorWgsl } from './multi-workgroup.js';
import { type ScanShape, enterSegmentWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms, tileWgsl } from './preamble.js';

/*
 * The multi-workgroup variant in one pass over the items, for every operator and determinism: each
 * tile's carry is put together in the canonical order (order.ts) from totals that other tiles
 * publish, so an f32 sum gets the same bits as reduce-then-scan. No tile waits for another tile's
 * carry, only for totals that its owner publishes as soon as it has loaded its items; and a total
 * that is not published in time is worked out from the input, so the scan finishes without forward
 * progress between workgroups (the "decoupled fallback" of SPAA'25), with relaxed atomics only. The
 * CPU twin is cpu/kernels.ts `runSinglePass`.
 *
 * The carry into tile t > 0 is output t - 1 of the canonical scan of the tile totals T (order.ts):
 * with position P = t - 1 in lane m of group g of unit V (a unit: 2048 tile totals, a group: 128, a
 * lane: 8), it is (C_V ⊕ (R_g ⊕ q_m)) ⊕ p_k, where p_k folds the totals of P's lane up to P, q_m the
 * lane totals of the lanes before it in its group, R_g the group totals G of the groups before it in
 * its unit, and C_V (V > 0) is output V - 1 of the scan of the unit totals U one level up (`unitsCarry`). So
 * a tile needs at most 128 tile totals (those of P's group up to P), 15 group totals and V unit
 * totals. The workgroup holding the last tile of a group publishes the group's total, added up from
 * its 128 tile totals alone, and where the group is its unit's last, the unit's total from its 16
 * group totals; both before it waits for any carry, so no group total waits on the groups before it
 * (when the last tile published its group's total with its own carry, each group's waited for the
 * previous group's: a chain through the segment; policy.ts `passes` has the measurements). Where an
 * entry it adds up from is still missing after the polls, it leaves that total to the tiles that
 * read it (their fallback works it out), so the fallback's code is in the shader once: lavapipe
 * compiles every inlined copy, and a second one took its compile from 34 s to 205 s.
 *
 * The `lookback` slot (problem.ts `lookbackWords`), zeroed by the executor at the start of every run:
 * the counter, then per segment an entry for each tile total, group total and unit total.
 * 'single-pass': a workgroup takes the next span of `singlePassTiles` tiles (1, 2, 4 or 8: within
 * one lane of tile totals) from the counter, so a tile's predecessors were all taken by workgroups
 * that started earlier. It loads each tile (the next one's loads in flight meanwhile) and publishes
 * its total; publishes its group's and unit's totals where it holds their last tile; then reads the
 * entries the carry into its first tile needs, one invocation each, all at once; entries not ready
 * are read again, up to `lookbackPolls` rounds in all. Past that, a missing unit total is added up
 * from its group totals, a missing group total from its tile totals, and a missing tile total reduced
 * from the input (the same chains as its owner's, so the same bits), each published on the way. The
 * carries into its other tiles share the lane, group and unit parts of that read, R_g, q_m and C_V
 * (a span starting a group reads its group's once more, in the same loop), and add their lane's
 * totals on. Then it
 * loads each tile again (from the device's cache on a GPU) and writes its scan from its carry.
 *
 * Every entry is two words that stand on their own: `1 << 16 | half`, the low and the high half of
 * the 32-bit value, each written with atomicMax. Every writer of an entry writes the same value, so a
 * reader that sees status 1 in both words holds both halves of it; no ordering between words is
 * needed.
 */

/**
 * WGSL: `unitsCarry(op, hasInitial, initial, count)`, the carry into unit `count` (> 0) from the unit
 * totals in `unitWords` (workgroup memory), by the canonical rules one level up (order.ts); needs
 * `combine` and the order's constants. The CPU twin is cpu/kernels.ts `unitsCarryBits`.
 */
export const unitsCarryWgsl = `// Lane l's total of the unit totals (8 of them: every lane before the last is full).
fn unitLane(op: u32, l: u32) -> u32 {
  var total = unitWords[l * LANE_ITEMS];
  for (var j = 1u; j < LANE_ITEMS; j++) { total = combine(op, total, unitWords[l * LANE_ITEMS + j]); }
  return total;
}
// The carry into unit count (> 0): output count - 1 of the scan of the unit totals in unitWords from
// the initial value, by the canonical rules one level up (order.ts; the CPU's unitsCarryBits).
fn unitsCarry(op: u32, hasInitial: bool, initial: u32, count: u32) -> u32 {
  let last = count - 1u;
  let lane = last / LANE_ITEMS;
  let m = lane % GROUP_LANES;
  let g = lane / GROUP_LANES;
  var p = unitWords[lane * LANE_ITEMS];
  for (var j = lane * LANE_ITEMS + 1u; j <= last; j++) { p = combine(op, p, unitWords[j]); }
  var q = 0u;
  for (var l = g * GROUP_LANES; l < lane; l++) {
    let total = unitLane(op, l);
    q = select(total, combine(op, q, total), l > g * GROUP_LANES);
  }
  var r = 0u;
  for (var h = 0u; h < g; h++) {
    var group = unitLane(op, h * GROUP_LANES);
    for (var l = 1u; l < GROUP_LANES; l++) { group = combine(op, group, unitLane(op, h * GROUP_LANES + l)); }
    r = select(group, combine(op, r, group), h > 0u);
  }
  var inner = q;
  if (g > 0u) { inner = select(r, combine(op, r, q), m > 0u); }
  let hasInner = g > 0u || m > 0u;
  var e = inner;
  if (hasInitial) { e = select(initial, combine(op, initial, inner), hasInner); }
  return select(p, combine(op, e, p), hasInner || hasInitial);
}`;

/** Workgroup memory of the single pass beyond the tile functions': what a tile's carry is put together from. */
const carryWgsl = `var<workgroup> tileTicket: u32;
// The totals of this workgroup's tiles and the carries into them (invocation 0's, then the workgroup's).
var<workgroup> ownTotals: array<u32, ${singlePassTilesMax}>;
var<workgroup> carries: array<u32, ${singlePassTilesMax}>;
var<workgroup> gathered: array<u32, ${carryGroupTiles}>;
var<workgroup> gatheredOk: array<u32, ${carryGroupTiles}>;
var<workgroup> groupWords: array<u32, 16>;
var<workgroup> groupOk: array<u32, 16>;
var<workgroup> unitWords: array<u32, ${maxCarryUnits}>;
var<workgroup> unitOk: array<u32, ${maxCarryUnits}>;
var<workgroup> foldLanes: array<u32, 16>;
var<workgroup> lacking: atomic<u32>;
var<workgroup> sharedWord: u32;
${publishedWordsWgsl}
// Entry e of segment's look-back words: tile totals from 0, group totals from u.tiles, unit totals after those.
fn entryAt(segment: u32, e: u32) -> u32 {
  let stride = u.tiles + (u.tiles + ${carryGroupTiles - 1}u) / ${carryGroupTiles}u + (u.tiles + ${carryUnitTiles - 1}u) / ${carryUnitTiles}u;
  return u.lookbackAt + 1u + 2u * (segment * stride + e);
}
fn groupEntry(i: u32) -> u32 { return u.tiles + i; }
fn unitEntry(i: u32) -> u32 { return u.tiles + (u.tiles + ${carryGroupTiles - 1}u) / ${carryGroupTiles}u + i; }
fn publish(at: u32, value: u32) {
  atomicMax(&temp[at], publishedLow(1u, value));
  atomicMax(&temp[at + 1u], publishedHigh(1u, value));
}
// x: 1 when published, y: the value.
fn readEntry(at: u32) -> vec2<u32> {
  let lo = atomicLoad(&temp[at]);
  let hi = atomicLoad(&temp[at + 1u]);
  return vec2<u32>(select(0u, 1u, publishedStatus(lo, hi) != 0u), publishedValue(lo, hi));
}
// Invocation 0's value, for the whole workgroup (the barrier first: every invocation has read the last one).
fn fromFirst(value: u32, lid: u32) -> u32 {
  workgroupBarrier();
  if (lid == 0u) { sharedWord = value; }
  return workgroupUniformLoad(&sharedWord);
}
// How many entries were not ready this round, for the whole workgroup; resets the count.
fn lackingCount(own: u32, lid: u32) -> u32 {
  if (own > 0u) { atomicAdd(&lacking, own); }
  workgroupBarrier();
  var count = 0u;
  if (lid == 0u) { count = atomicLoad(&lacking); atomicStore(&lacking, 0u); }
  return fromFirst(count, lid);
}
// The totals of tiles first.. first + n - 1 (n <= ${carryGroupTiles}) into gathered, gatheredOk; how many were not ready.
fn readTiles(segment: u32, first: u32, n: u32, lid: u32) -> u32 {
  var own = 0u;
  if (lid < n) {
    let w = readEntry(entryAt(segment, first + lid));
    gathered[lid] = w.y;
    gatheredOk[lid] = w.x;
    own = 1u - w.x;
  }
  return lackingCount(own, lid);
}
${unitsCarryWgsl}
// After gathered holds n tile totals of a group from its first: foldLanes[m] = lane m's total, or its
// prefix up to the last of the n; then a barrier.
fn foldGathered(op: u32, n: u32, lid: u32) {
  if (lid < 16u) {
    let base = lid * LANE_ITEMS;
    if (base < n) {
      let count = min(n - base, LANE_ITEMS);
      var a = gathered[base];
      for (var j = 1u; j < count; j++) { a = combine(op, a, gathered[base + j]); }
      foldLanes[lid] = a;
    }
  }
  workgroupBarrier();
}`;

/** The single-pass program: tiles of the lane functions (one lane per invocation), read once; vec4 loads with `loadWords` 4. */
export function singlePassProgram(facts: ScanKernelFacts, name: string): WebGpuProgram {
  if (facts.workgroupSize * laneItems !== tileItems) throw new Error(`internal: the single-pass scan needs one lane per invocation, not workgroupSize ${facts.workgroupSize}`);
  const vector = facts.loadWords === 4;
  const shape: ScanShape = { values: true, temp: 'atomic', vector };
  const fetch = (first: string, n: string) => (vector ? `fetchFull(${first}, ${n}, direct, lid)` : `fetchTile(${first}, ${n}, lid)`);
  // A tile's total into tileTotal (invocation 0), from its loads x.
  const aggregate = (x: string, first: string, n: string) => {
    const staged = `stageTile(${x}, ${first}, ${n}, s.op, lid);
    laneTotals(${n}, s.op, lid);`;
    return `${vector ? `if (direct && ${n} == TILE_ITEMS) {
    laneTotalDirect(${x}, s.op, lid);
  } else {
    ${staged}
  }` : staged}
  laneTileTotal(${n}, s.op, lid);`;
  };
  const staged = `stageTile(x, s.start + offset, n, s.op, lid);
    laneTotals(n, s.op, lid);
    laneScan(n, s.op, hasCarry, carry, lid);
    storeTileLanes(to, count, s.op, lid);`;
  const fallbacks = `
// Tile i's total (a full tile), reduced from the input as its owner does, and published.
fn reduceTile(s: Segment, segment: u32, i: u32, lid: u32) -> u32 {
  ${vector ? 'let direct = (s.start & 3u) == 0u;' : ''}
  let first = s.start + i * TILE_ITEMS;
  let y = ${fetch('first', 'TILE_ITEMS')};
  ${aggregate('y', 'first', 'TILE_ITEMS')}
  var value = 0u;
  if (lid == 0u) {
    value = finishValue(s.op, tileTotal);
    publish(entryAt(segment, i), value);
  }
  return fromFirst(value, lid);
}
// The totals of tiles first.. first + n - 1 into gathered, each one not published reduced here.
fn gatherTiles(s: Segment, segment: u32, first: u32, n: u32, lid: u32) {
  if (readTiles(segment, first, n, lid) == 0u) { return; }
  for (var i = 0u; i < n; i++) {
    if (workgroupUniformLoad(&gatheredOk[i]) == 0u) {
      let value = reduceTile(s, segment, first + i, lid);
      if (lid == 0u) { gathered[i] = value; }
    }
  }
  workgroupBarrier();
}
// Invocation 0, after foldGathered over group i's 128 tile totals: the group's total, published.
fn publishGroup(op: u32, segment: u32, i: u32) -> u32 {
  var total = foldLanes[0];
  for (var m = 1u; m < 16u; m++) { total = combine(op, total, foldLanes[m]); }
  total = finishValue(op, total);
  publish(entryAt(segment, groupEntry(i)), total);
  return total;
}
// Group total i of the segment: as published, or added up here from its tile totals (and published).
fn groupTotalOf(s: Segment, segment: u32, i: u32, lid: u32) -> u32 {
  var w = vec2<u32>();
  if (lid == 0u) { w = readEntry(entryAt(segment, groupEntry(i))); }
  if (fromFirst(w.x, lid) != 0u) { return fromFirst(w.y, lid); }
  gatherTiles(s, segment, i * ${carryGroupTiles}u, ${carryGroupTiles}u, lid);
  foldGathered(s.op, ${carryGroupTiles}u, lid);
  var total = 0u;
  if (lid == 0u) { total = publishGroup(s.op, segment, i); }
  return fromFirst(total, lid);
}
// Unit total v of the segment: as published, or added up here from its group totals (and published).
fn unitTotalOf(s: Segment, segment: u32, v: u32, lid: u32) -> u32 {
  var w = vec2<u32>();
  if (lid == 0u) { w = readEntry(entryAt(segment, unitEntry(v))); }
  if (fromFirst(w.x, lid) != 0u) { return fromFirst(w.y, lid); }
  var total = 0u;
  for (var g = 0u; g < 16u; g++) {
    let x = groupTotalOf(s, segment, v * 16u + g, lid);
    if (lid == 0u) { total = select(x, combine(s.op, total, x), g > 0u); }
  }
  if (lid == 0u) {
    total = finishValue(s.op, total);
    publish(entryAt(segment, unitEntry(v)), total);
  }
  return fromFirst(total, lid);
}
// The group totals first.. first + n - 1 (n <= 16) into groupWords, groupOk; how many were not ready.
fn readGroups(segment: u32, first: u32, n: u32, lid: u32) -> u32 {
  var own = 0u;
  if (lid < n) {
    let w = readEntry(entryAt(segment, groupEntry(first + lid)));
    groupWords[lid] = w.y;
    groupOk[lid] = w.x;
    own = 1u - w.x;
  }
  return lackingCount(own, lid);
}
// Where tile last is its group's last (and not its segment's), the group's total from its tile
// totals alone, published; where the group is its unit's last, the unit's total from its group
// totals. Before any carry: a group or unit total waits on no carry, so on no other group's total.
// Entries still missing after lookbackPolls rounds leave the total unpublished: a tile that needs
// it works it out (gatherCarry's fallback), so the shader holds that code once.
fn publishGroupAndUnit(s: Segment, segment: u32, last: u32, tiles: u32, lid: u32) {
  if (last % ${carryGroupTiles}u != ${carryGroupTiles - 1}u || last + 1u >= tiles) { return; }
  let group = last / ${carryGroupTiles}u;
  var missing = readTiles(segment, group * ${carryGroupTiles}u, ${carryGroupTiles}u, lid);
  for (var poll = 1u; missing > 0u && poll < u.lookbackPolls; poll++) { missing = readTiles(segment, group * ${carryGroupTiles}u, ${carryGroupTiles}u, lid); }
  if (missing > 0u) { return; }
  foldGathered(s.op, ${carryGroupTiles}u, lid);
  var total = 0u;
  if (lid == 0u) { total = publishGroup(s.op, segment, group); }
  if (group % 16u != 15u) { return; }
  let unit = group / 16u;
  missing = readGroups(segment, unit * 16u, 15u, lid);
  for (var poll = 1u; missing > 0u && poll < u.lookbackPolls; poll++) { missing = readGroups(segment, unit * 16u, 15u, lid); }
  if (missing > 0u) { return; }
  if (lid == 0u) {
    var r = groupWords[0];
    for (var h = 1u; h < 15u; h++) { r = combine(s.op, r, groupWords[h]); }
    publish(entryAt(segment, unitEntry(unit)), finishValue(s.op, combine(s.op, r, total)));
  }
}
// The entries position p's carry needs (readCarry), read up to lookbackPolls times, the missing
// ones worked out here; then foldLanes from gathered (gathered, groupWords, unitWords, foldLanes:
// what the carry is put together from).
fn gatherCarry(s: Segment, segment: u32, p: u32, lid: u32) {
  let c = (p % ${carryGroupTiles}u) + 1u;
  let unit = p / ${carryUnitTiles}u;
  let g = (p / ${carryGroupTiles}u) % 16u;
  var missing = readCarry(segment, p, c, unit, g, lid);
  for (var poll = 1u; missing > 0u && poll < u.lookbackPolls; poll++) { missing = readCarry(segment, p, c, unit, g, lid); }
  if (missing > 0u) {
    // Not published in time: added up here (the group and unit totals first, as they use gathered).
    for (var v = 0u; v < unit; v++) {
      if (workgroupUniformLoad(&unitOk[v]) == 0u) {
        let value = unitTotalOf(s, segment, v, lid);
        if (lid == 0u) { unitWords[v] = value; }
      }
    }
    for (var i = 0u; i < g; i++) {
      if (workgroupUniformLoad(&groupOk[i]) == 0u) {
        let value = groupTotalOf(s, segment, unit * 16u + i, lid);
        if (lid == 0u) { groupWords[i] = value; }
      }
    }
    gatherTiles(s, segment, p + 1u - c, c, lid);
  }
  foldGathered(s.op, c, lid);
}
// Invocation 0, after gatherCarry for a position in group g of its unit: the carry's part
// before lane m of the group, upper ⊕ (R_g ⊕ q_m) (x: 1 where it has a term, y: its value).
fn carryBefore(s: Segment, m: u32, g: u32, unit: u32) -> vec2<u32> {
  var q = foldLanes[0];
  for (var j = 1u; j < m; j++) { q = combine(s.op, q, foldLanes[j]); }
  var r = groupWords[0];
  for (var j = 1u; j < g; j++) { r = combine(s.op, r, groupWords[j]); }
  var hasUpper = s.hasInitial != 0u;
  var upper = initialCarry(s);
  if (unit > 0u) {
    upper = unitsCarry(s.op, hasUpper, upper, unit);
    hasUpper = true;
  }
  var inner = q;
  if (g > 0u) { inner = select(r, combine(s.op, r, q), m > 0u); }
  let hasInner = g > 0u || m > 0u;
  var e = inner;
  if (hasUpper) { e = select(upper, combine(s.op, upper, inner), hasInner); }
  return vec2<u32>(select(0u, 1u, hasInner || hasUpper), e);
}
// Invocation 0, after gatherCarry for p: the carry into tile p + 1, (upper ⊕ (R_g ⊕ q_m)) ⊕ p_k.
fn carryFrom(s: Segment, p: u32) -> u32 {
  let c = (p % ${carryGroupTiles}u) + 1u;
  let m = (c - 1u) / LANE_ITEMS;
  let pk = foldLanes[m];
  let e = carryBefore(s, m, (p / ${carryGroupTiles}u) % 16u, p / ${carryUnitTiles}u);
  return finishValue(s.op, select(pk, combine(s.op, e.y, pk), e.x != 0u));
}
// Invocation 0: the carries into tiles first + 1 .. end - 1 (one lane of tile totals) into carries,
// after gatherCarry read the lanes before theirs (for first - 1 in the same group, or for first).
fn laneCarries(s: Segment, first: u32, end: u32) {
  let at = first % ${carryGroupTiles}u;
  let m = at / LANE_ITEMS;
  let e = carryBefore(s, m, (first / ${carryGroupTiles}u) % 16u, first / ${carryUnitTiles}u);
  // The lane's totals before first (gathered), then this workgroup's own.
  var pk = 0u;
  for (var j = m * LANE_ITEMS; j < at; j++) { pk = select(gathered[j], combine(s.op, pk, gathered[j]), j > m * LANE_ITEMS); }
  for (var t = first; t + 1u < end; t++) {
    let own = ownTotals[t - first];
    pk = select(own, combine(s.op, pk, own), t > first || at > m * LANE_ITEMS);
    carries[t + 1u - first] = finishValue(s.op, select(pk, combine(s.op, e.y, pk), e.x != 0u));
  }
}
// Reads the entries tile P + 1's carry needs (P's group's tile totals up to P: c of them; the g
// group totals before it in its unit; the unit totals before its unit); how many were not ready.
fn readCarry(segment: u32, p: u32, c: u32, unit: u32, g: u32, lid: u32) -> u32 {
  var own = 0u;
  if (lid < c) {
    let w = readEntry(entryAt(segment, p + 1u - c + lid));
    gathered[lid] = w.y;
    gatheredOk[lid] = w.x;
    own += 1u - w.x;
  }
  if (lid < g) {
    let w = readEntry(entryAt(segment, groupEntry(unit * 16u + lid)));
    groupWords[lid] = w.y;
    groupOk[lid] = w.x;
    own += 1u - w.x;
  }
  if (lid < unit) {
    let w = readEntry(entryAt(segment, unitEntry(lid)));
    unitWords[lid] = w.y;
    unitOk[lid] = w.x;
    own += 1u - w.x;
  }
  return lackingCount(own, lid);
}`;
  const main = `
  if (lid == 0u) { tileTicket = atomicAdd(&temp[u.lookbackAt], 1u); }
  let ticket = workgroupUniformLoad(&tileTicket);
  let spans = (u.tiles + u.passTiles - 1u) / u.passTiles;
  let segment = ticket / spans;
  let first = (ticket % spans) * u.passTiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  if (first >= tiles) { return; }
  let end = min(first + u.passTiles, tiles);
  ${vector ? 'let direct = (s.start & 3u) == 0u;' : ''}
  // Every tile's total published before any carry is waited for, so no tile's total waits on a carry.
  // The next tile's loads are issued before this one is added up (v), in both loops.
  var v = ${fetch('s.start + first * TILE_ITEMS', 'min(s.size - first * TILE_ITEMS, TILE_ITEMS)')};
  for (var t = first; t < end; t++) {
    let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);
    let x = v;
    if (t + 1u < end) { v = ${fetch('s.start + offset + TILE_ITEMS', 'min(s.size - offset - TILE_ITEMS, TILE_ITEMS)')}; }
    ${aggregate('x', 's.start + offset', 'n')}
    if (lid == 0u) {
      let total = finishValue(s.op, tileTotal);
      ownTotals[t - first] = total;
      publish(entryAt(segment, t), total);
    }
    workgroupBarrier();
  }
  publishGroupAndUnit(s, segment, end - 1u, tiles, lid);
  // The carry into the first tile from the entries before it; the carries into the others (one lane
  // of tile totals holds them all) from the same read: the lane's totals before them, and the lanes,
  // groups and units before the lane. A span that starts a group reads again for its own group. One
  // call of gatherCarry, so its fallback is in the shader once.
  if (lid == 0u) { carries[0] = initialCarry(s); }
  let again = first % ${carryGroupTiles}u == 0u && end - first > 1u;
  let reads = select(0u, select(1u, 2u, again), first > 0u);
  for (var r = 0u; r < reads; r++) {
    gatherCarry(s, segment, first - 1u + r, lid);
    if (r == 0u && lid == 0u) { carries[0] = carryFrom(s, first - 1u); }
    workgroupBarrier();
  }
  if (end - first > 1u && lid == 0u) { laneCarries(s, first, end); }
  workgroupBarrier();
  v = ${fetch('s.start + first * TILE_ITEMS', 'min(s.size - first * TILE_ITEMS, TILE_ITEMS)')};
  for (var t = first; t < end; t++) {
    let carry = carries[t - first];
    let hasCarry = t > 0u || s.hasInitial != 0u;
    if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }
    // The tile loaded again (from the device's cache since the first loop, on a GPU). An exclusive
    // scan writes output j + 1; the segment's last inclusive value goes nowhere.
    let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);
    let x = v;
    if (t + 1u < end) { v = ${fetch('s.start + offset + TILE_ITEMS', 'min(s.size - offset - TILE_ITEMS, TILE_ITEMS)')}; }
    let to = s.start + offset + s.exclusive;
    let count = min(n, s.size - offset - s.exclusive);
    ${vector ? `if (direct && n == TILE_ITEMS) {
      laneScanDirect(x, s.op, hasCarry, carry, lid);
      storeTileDirect(to, count, s.op, lid);
    } else {
      ${staged}
    }` : staged}
    workgroupBarrier();
  }`;
  const declarations = `
${orderConstantsWgsl}
${enterSegmentWgsl}
${tileWgsl(false, true)}
${laneWgsl(true)}
${fetchWgsl}
${vector ? `${registersWgsl}\n${vectorWgsl(false)}` : ''}
${carryWgsl}
${fallbacks}`;
  return {
    name,
    cacheKey: `scan/single-pass|${vector}|${JSON.stringify({ ...facts, tilesPerStep: 0, scanTilesPerStep: 0 })}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...scanUniforms(facts, shape), 'tiles', 'lookbackAt', 'lookbackPolls', 'passTiles'],
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
