import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { laneItems, tileItems, tileLanes } from '../order.js';
import type { SpineForm } from '../problem.js';
import type { ScanKernelFacts } from './facts.js';
import { type ScanShape, enterSegmentWgsl, levelsWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms, tileWgsl } from './preamble.js';

/*
 * 'multi-workgroup': reduce, then scan (safe on every WebGPU device: no workgroup waits for another,
 * so nothing depends on forward progress between workgroups). Workgroups of a tile launch take
 * segment w / tiles, tile w % tiles. The CPU twins are cpu/kernels.ts `runTileReduce` ... `runTileScan`.
 *
 * - 'tile-reduce': each tile's total -> `tileTotals`;
 * - 'spine-reduce' (segments of more than 2048 tiles): each 2048 tile totals' total -> `spineTotals`;
 * - 'spine-top': `spineTotals` scanned in place from the initial value;
 * - 'spine-scan': each 2048 tile totals scanned in place from their carry (the initial value, or the
 *   scanned spine total before them): word t - 1 is then tile t's carry;
 * - 'spine-walk' (policy `spineCarries` 'walk', instead of the three spine launches, for segments of
 *   up to the policy's `spineWorkgroupMaxTiles` tiles): one workgroup per segment scans its tile
 *   totals 2048 at a time in place, invocation 0 advancing the scan of their totals (`ingest2`) for
 *   the next carry, as the 'workgroup' variant does with the items;
 * - 'spine-lanes' (`spineCarries` 'parallel', instead of all of those): a workgroup per 2048 tile
 *   totals, all at once, leaves the parts of the carries: each total's lane prefix in place, each
 *   lane's carry from the lanes before it in `spineLaneCarries`, the 2048's total in `spineTotals`
 *   (scanned in place by 'spine-top' where a segment has more than `spineCarryTiles` of them);
 * - 'tile-scan': each tile scanned from its carry and written (one place on for an exclusive scan),
 *   the tiles in reverse order of 'tile-reduce', which has just read them: the last tiles it read may
 *   still be in the device's cache when this launch starts. Its carry (`tileCarry`): the word before
 *   the tile's total, or after 'spine-lanes' put together from that word's lane prefix, its lane's
 *   carry and the carry into its 2048 ({@link tileCarryWgsl}).
 *
 * Uniforms `tiles` and `spineTiles`: workgroups per segment of the tile and spine launches.
 *
 * With one lane per invocation (workgroupSize 256), the tile launches read a full tile of a segment
 * that starts at a multiple of 4 items as two vec4 loads per invocation (policy `loadWords` 4: the
 * lane's items in registers, `vectorWgsl`), `tilesPerStep` (tile-reduce) or `scanTilesPerStep`
 * (tile-scan) full tiles at a time (`stepWgsl`);
 * 'spine-walk' and 'spine-lanes' hold a lane's tile totals in registers too (`registersWgsl`,
 * `spineLanesLanes`). Where the plan knows every store of 'tile-scan' is a whole vec4 of one
 * invocation (facts.storeWords 4: an inclusive scan, segments starting and ending at multiples of 4
 * items), valuesOut is bound as vec4<u32> there and a full tile's lane writes its outputs straight
 * from registers (`storeLaneDirect`). The same chains of additions everywhere, so the same bits.
 */

export type MultiWorkgroupKernel = 'tile-reduce' | 'spine-reduce' | 'spine-top' | 'spine-scan' | 'spine-walk' | 'spine-lanes' | 'tile-scan';

/** A tile launch's workgroup: its segment and its span of tiles [first, last). */
const head = `  let segment = workgroupIndex / u.spans;
  let span = workgroupIndex % u.spans;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let first = span * u.tileSpan;
  if (first >= tiles) { return; }
  let last = min(first + u.tileSpan, tiles);`;
/** The same, the workgroups taken from the last: 'tile-scan' starts where 'tile-reduce' ended. */
const reverseHead = head.replace('workgroupIndex / u.spans', 'w / u.spans').replace('workgroupIndex % u.spans', 'w % u.spans').replace('  let segment', '  let w = u.grid - 1u - workgroupIndex;\n  let segment');

/** The opening of a launch over the tile totals 2048 at a time ('spine-reduce', 'spine-scan', 'spine-lanes'): the segment, its 2048 tile totals v (n of them from `offset`). */
const spineTileEntry = `  let segment = workgroupIndex / u.spineTiles;
  let v = workgroupIndex % u.spineTiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let offset = v * TILE_ITEMS;
  if (offset >= tiles) { return; }
  let n = min(tiles - offset, TILE_ITEMS);
`;

/** The opening of 'spine-lanes', shared by its two bodies: {@link spineTileEntry}, the totals from at0, where its lane carries go. */
const spineLanesEntry = `${spineTileEntry}  let op = s.op;
  let at0 = u.tileTotalsAt + segment * u.tiles + offset;
  let carriesAt = u.spineLaneCarriesAt + (segment * u.spineTiles + v) * TILE_LANES;
`;

/** The opening of 'spine-walk', shared by its two bodies: the segment, its tile count, the walk's carry from the initial value. */
const spineWalkEntry = `  let segment = workgroupIndex;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  if (lid == 0u) {
    startLevel(2u, s.hasInitial != 0u, initialCarry(s));
    walkCarry = vec2<u32>(s.hasInitial, initialCarry(s));
  }
`;

const bodies: Record<MultiWorkgroupKernel, { values: boolean; main: string }> = {
  'tile-reduce': {
    values: true,
    main: `
${head}
  for (var t = first; t < last; t++) {
    let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);
    loadTileItems(s.start + offset, n, s.op, lid);
    tileTotals(n, s.op, lid);
    if (lid == 0u) { temp[u.tileTotalsAt + segment * u.tiles + t] = finishValue(s.op, tileTotal); }
  }`,
  },
  'spine-reduce': {
    values: false,
    main: `
${spineTileEntry}  loadTileWords(u.tileTotalsAt + segment * u.tiles + offset, n, lid);
  tileTotals(n, s.op, lid);
  if (lid == 0u) { temp[u.spineTotalsAt + segment * u.spineTiles + v] = finishValue(s.op, tileTotal); }`,
  },
  'spine-top': {
    values: false,
    main: `
  let segment = workgroupIndex;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let n = min((tiles + TILE_ITEMS - 1u) / TILE_ITEMS, u.spineTiles);
  if (n == 0u) { return; }
  let at0 = u.spineTotalsAt + segment * u.spineTiles;
  loadTileWords(at0, n, lid);
  tileTotals(n, s.op, lid);
  tileScan(n, s.op, s.hasInitial != 0u, initialCarry(s), lid);
  storeTileWords(at0, n, s.op, lid);`,
  },
  'spine-scan': {
    values: false,
    main: `
${spineTileEntry}  let at0 = u.tileTotalsAt + segment * u.tiles + offset;
  var carry = initialCarry(s);
  SPINE_CARRY
  loadTileWords(at0, n, lid);
  tileTotals(n, s.op, lid);
  tileScan(n, s.op, v > 0u || s.hasInitial != 0u, carry, lid);
  storeTileWords(at0, n, s.op, lid);`,
  },
  'spine-walk': {
    values: false,
    main: `
${spineWalkEntry}  for (var offset = 0u; offset < tiles; offset += TILE_ITEMS) {
    let n = min(tiles - offset, TILE_ITEMS);
    let at0 = u.tileTotalsAt + segment * u.tiles + offset;
    loadTileWords(at0, n, lid);
    tileTotals(n, s.op, lid);
    let carry = workgroupUniformLoad(&walkCarry);
    tileScan(n, s.op, carry.x != 0u, carry.y, lid);
    storeTileWords(at0, n, s.op, lid);
    if (lid == 0u) { walkCarry = vec2<u32>(1u, ingest2(s.op, tileTotal)); }
  }`,
  },
  'spine-lanes': {
    values: false,
    main: `
${spineLanesEntry}  loadTileWords(at0, n, lid);
  tileTotals(n, op, lid);
  for (var l = lid; l < TILE_LANES; l += WG) {
    let base = l * LANE_ITEMS;
    if (base < n) {
      // Lane 0 has no lanes before it: the identity, never read.
      temp[carriesAt + l] = finishValue(op, select(identityOf(op), laneInner(l, op), l > 0u));
      // The lane prefixes in place of the totals (the first is its total already).
      let stop = min(base + LANE_ITEMS, n);
      var p = tile[at(base)];
      for (var j = base + 1u; j < stop; j++) {
        p = combine(op, p, tile[at(j)]);
        temp[at0 + j] = finishValue(op, p);
      }
    }
  }
  if (lid == 0u) { temp[u.spineTotalsAt + segment * u.spineTiles + v] = finishValue(op, tileTotal); }`,
  },
  'tile-scan': {
    values: true,
    main: `
${reverseHead}
  for (var t = first; t < last; t++) {
    let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);
    if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }
    let carry = tileCarry(s, segment, t);
    loadTileItems(s.start + offset, n, s.op, lid);
    tileTotals(n, s.op, lid);
    tileScan(n, s.op, t > 0u || s.hasInitial != 0u, carry, lid);
    // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
    storeTileItems(s.start + offset + s.exclusive, min(n, s.size - offset - s.exclusive), s.op, lid);
  }`,
  },
};

const unrolled = (line: (k: number) => string) => Array.from({ length: laneItems }, (_, k) => line(k)).join('\n');

/** WGSL that loads a tile of `source` words (`load(bits)`: the stored value) with eight loads in flight per invocation. */
const laneLoad = (fn: string, source: string, load: (bits: string) => string, params: string) => `fn ${fn}(first: u32, n: u32${params}, lid: u32) {
  if (n == TILE_ITEMS) {
${unrolled((k) => `    let v${k} = ${source}[first + lid + ${k * tileLanes}u];`)}
${unrolled((k) => `    tile[at(lid + ${k * tileLanes}u)] = ${load(`v${k}`)};`)}
  } else {
    for (var j = lid; j < n; j += WG) { tile[at(j)] = ${load(`${source}[first + j]`)}; }
  }
  workgroupBarrier();
}`;

/** WGSL that stores the tile's first `count` words to `target`, eight stores per invocation, then a barrier (unless `barrier` is false). */
const laneStore = (fn: string, target: string, barrier = true) => `fn ${fn}(to: u32, count: u32, op: u32, lid: u32) {
  if (count == TILE_ITEMS) {
${unrolled((k) => `    ${target}[to + lid + ${k * tileLanes}u] = finishValue(op, tile[at(lid + ${k * tileLanes}u)]);`)}
  } else {
    for (var j = lid; j < count; j += WG) { ${target}[to + j] = finishValue(op, tile[at(j)]); }
  }${barrier ? '\n  workgroupBarrier();' : ''}
}`;

/**
 * WGSL: `fn(to, count, op, lid)` stores the tile's first `count` outputs from word `to` on, valuesOut
 * bound as vec4<u32>: `to` and `count` are multiples of 4 (the plan's fact), so each invocation
 * writes whole vec4s of four consecutive outputs; then a barrier.
 */
const laneStoreVec4 = (fn: string) => `fn ${fn}(to: u32, count: u32, op: u32, lid: u32) {
  for (var j = lid; j < count / 4u; j += WG) {
    let b = 4u * j;
    valuesOut[(to >> 2u) + j] = vec4<u32>(${[0, 1, 2, 3].map((k) => `finishValue(op, tile[at(b + ${k}u)])`).join(', ')});
  }
  workgroupBarrier();
}`;

/**
 * WGSL: `name` = array[base] ⊕ array[base + 1] ⊕ ... ⊕ array[base + limit - 1], left to right (array[base]
 * alone for limit <= 1), over at most 16 elements: the 16 reads issued first, then the chain, each
 * step kept where it is within the limit. A loop to a runtime bound waits out each read's latency
 * before its addition; here only the additions wait on each other.
 */
function chainWgsl(name: string, array: string, base: string, limit: string, indent: string): string {
  const steps = Array.from({ length: 15 }, (_, i) => i + 1);
  return [
    `var ${name} = ${array}[${base}];`,
    ...steps.map((k) => `let ${name}${k} = ${array}[${base} + ${k}u];`),
    ...steps.map((k) => `${name} = select(${name}, combine(op, ${name}, ${name}${k}), ${k}u < ${limit});`),
  ].join(`\n${indent}`);
}

/**
 * WGSL: a lane's carry from the lanes before it in the tile (the order of `laneScan`), given `count`
 * (its items), `n` and its total `own`: q (the lanes before it in its group; a full group's last lane
 * also writes the group's total), a barrier, then, opening `if (count > 0u) {` for the caller to
 * close, r (the groups before its group), `inner` and `hasInner`, and from the tile's last lane its
 * total into tileTotal.
 */
function laneCarryWgsl(own: string): string {
  return `  let g = lid / GROUP_LANES;
  let m = lid % GROUP_LANES;
  let first = g * GROUP_LANES;
  ${chainWgsl('q', 'laneTotal', 'first', 'm', '  ')}
  // Only a tile's last group can be partial, and no lane reads its total.
  if (count > 0u && m == GROUP_LANES - 1u) { groupTotal[g] = combine(op, q, ${own}); }
  workgroupBarrier();
  if (count > 0u) {
    ${chainWgsl('r', 'groupTotal', '0u', 'g', '    ')}
    var inner = q;
    if (g > 0u) { inner = select(r, combine(op, r, q), m > 0u); }
    let hasInner = g > 0u || m > 0u;
    if (lid * LANE_ITEMS + count == n) {
      // The tile's last lane: its group's total, then the tile's.
      let own = select(${own}, combine(op, q, ${own}), m > 0u);
      tileTotal = select(own, combine(op, r, own), g > 0u);
    }
`;
}

/*
 * The tile functions when one invocation holds one lane (workgroupSize 256, every built-in policy):
 * the order of `tileTotals` / `tileScan`, with the memory traffic kept in flight. A full tile is read
 * with eight independent coalesced loads per invocation (a loop with a runtime bound issues one at a
 * time, and the launches are bound by the loads the device has in flight), staged in the padded
 * workgroup tile, and each lane is read from there. An invocation works out the lanes before it in
 * its group (q_m) and the groups before its group (R_g) itself, reading the shared lane and group
 * totals left to right: the same chain of additions as one invocation per group or per tile, so the
 * same bits, with two barriers fewer and no lone invocation.
 */
export function laneWgsl(values: boolean, vectorOut = false): string {
  const loads = values
    ? [laneLoad('loadTileLanes', 'valuesIn', (bits) => `loadValue(op, ${bits})`, ', op: u32'), vectorOut ? laneStoreVec4('storeTileLanes') : laneStore('storeTileLanes', 'valuesOut')]
    : [laneLoad('loadWordLanes', 'temp', (bits) => bits, ''), laneStore('storeWordLanes', 'temp')];
  return `${loads.join('\n')}
// Lane lid's items in the tile: how many (0 past the tile's end).
fn laneCount(n: u32, lid: u32) -> u32 { return select(0u, min(n - lid * LANE_ITEMS, LANE_ITEMS), lid * LANE_ITEMS < n); }
// Lane lid's total into laneTotal (the lane's own items, left to right), then a barrier.
fn laneTotals(n: u32, op: u32, lid: u32) {
  let count = laneCount(n, lid);
  if (count > 0u) {
    let base = lid * LANE_ITEMS;
    var total = tile[at(base)];
${unrolled((k) => (k === 0 ? '' : `    total = select(total, combine(op, total, tile[at(base + ${k}u)]), ${k}u < count);`)).trimStart()}
    laneTotal[lid] = total;
  }
  workgroupBarrier();
}
// After laneTotals, the tile's total into tileTotal for invocation 0: 16 invocations add their
// group's lanes, one adds the groups.
fn laneTileTotal(n: u32, op: u32, lid: u32) {
  let lanes = (n + LANE_ITEMS - 1u) / LANE_ITEMS;
  if (lid < TILE_GROUPS) {
    let first = lid * GROUP_LANES;
    if (first < lanes) {
      ${chainWgsl('q', 'laneTotal', 'first', 'min(GROUP_LANES, lanes - first)', '      ')}
      groupTotal[lid] = q;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let groups = (lanes + GROUP_LANES - 1u) / GROUP_LANES;
    ${chainWgsl('r', 'groupTotal', '0u', 'groups', '    ')}
    tileTotal = r;
  }
}
// After laneTotals, each lane's items replaced by their inclusive outputs from the carry, and the
// tile's total in tileTotal; ends on a barrier.
fn laneScan(n: u32, op: u32, hasCarry: bool, carry: u32, lid: u32) {
  let count = laneCount(n, lid);
${laneCarryWgsl('laneTotal[lid]')}    var e = inner;
    if (hasCarry) { e = select(carry, combine(op, carry, inner), hasInner); }
    let hasE = hasCarry || hasInner;
    let base = lid * LANE_ITEMS;
    var p = tile[at(base)];
    tile[at(base)] = select(p, combine(op, e, p), hasE);
    for (var k = 1u; k < count; k++) {
      p = combine(op, p, tile[at(base + k)]);
      tile[at(base + k)] = select(p, combine(op, e, p), hasE);
    }
  }
  workgroupBarrier();
}`;
}

/** WGSL: a full tile's items for invocation lid, eight loads issued at once (none for a short tile). */
export const fetchWgsl = `fn fetchTile(first: u32, n: u32, lid: u32) -> array<u32, ${laneItems}> {
  if (n == TILE_ITEMS) {
    return array<u32, ${laneItems}>(${Array.from({ length: laneItems }, (_, k) => `valuesIn[first + lid + ${k * tileLanes}u]`).join(', ')});
  }
  return array<u32, ${laneItems}>();
}
// The tile into workgroup memory: a full one from what fetchTile loaded, a short one from memory.
fn stageTile(v: array<u32, ${laneItems}>, first: u32, n: u32, op: u32, lid: u32) {
  if (n == TILE_ITEMS) {
${unrolled((k) => `    tile[at(lid + ${k * tileLanes}u)] = loadValue(op, v[${k}]);`)}
  } else {
    for (var j = lid; j < n; j += WG) { tile[at(j)] = loadValue(op, valuesIn[first + j]); }
  }
  workgroupBarrier();
}`;

/**
 * WGSL of the vec4 path (policy `loadWords` 4): a full tile of a segment that starts at a multiple of
 * 4 items is read as lane lid's own 8 items, two vec4 loads (`valuesIn4`), straight into registers;
 * the lane's prefixes and total are added there, and only the lane totals, the group totals and (for
 * 'tile-scan') the outputs go through workgroup memory, on their way to coalesced stores. The same
 * chains as `laneTotals` / `laneScan`, so the same bits.
 */
export function vectorWgsl(vectorOut: boolean): string {
  const stores = vectorOut
    ? `// A lane's 8 outputs y, to be written from word to (a multiple of 4) on: two vec4 stores, straight
// from registers (neighbouring lanes write neighbouring 32 bytes, so a subgroup's stores coalesce).
fn storeLaneDirect(to: u32, y: array<u32, ${laneItems}>, op: u32, lid: u32) {
  let o = (to >> 2u) + 2u * lid;
  valuesOut[o] = vec4<u32>(${[0, 1, 2, 3].map((k) => `finishValue(op, y[${k}])`).join(', ')});
  valuesOut[o + 1u] = vec4<u32>(${[4, 5, 6, 7].map((k) => `finishValue(op, y[${k}])`).join(', ')});
}`
    : laneStore('storeTileDirect', 'valuesOut', false);
  return `${stores}
fn fetchLane(first: u32, lid: u32) -> array<u32, ${laneItems}> {
  let a = valuesIn4[(first >> 2u) + 2u * lid];
  let b = valuesIn4[(first >> 2u) + 2u * lid + 1u];
  return array<u32, ${laneItems}>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
// A full tile's next loads: the lane's own items (direct) or every 256th item (to be staged).
fn fetchFull(first: u32, n: u32, direct: bool, lid: u32) -> array<u32, ${laneItems}> {
  if (direct && n == TILE_ITEMS) { return fetchLane(first, lid); }
  return fetchTile(first, n, lid);
}
// The lane's total from its items in registers into laneTotal, then a barrier.
fn laneTotalDirect(v: array<u32, ${laneItems}>, op: u32, lid: u32) {
  var total = loadValue(op, v[0]);
${unrolled((k) => (k === 0 ? '' : `  total = combine(op, total, loadValue(op, v[${k}]));`)).trimStart()}
  laneTotal[lid] = total;
  workgroupBarrier();
}
// A full tile scanned from its carry, the lane's items in registers: the outputs into the workgroup
// tile (for a coalesced store), then a barrier.
fn laneScanDirect(v: array<u32, ${laneItems}>, op: u32, hasCarry: bool, carry: u32, lid: u32) {
  var x: array<u32, ${laneItems}>;
${unrolled((k) => `  x[${k}] = loadValue(op, v[${k}]);`)}
  laneScanRegisters(x, TILE_ITEMS, op, hasCarry, carry, lid);
}${
    vectorOut
      ? `
// A full tile of an inclusive scan from its carry, the lane's items in registers, its outputs
// stored from word to (a multiple of 4) on: no staging, no barrier after (the next tile's first
// write to workgroup memory, laneTotal, is read only after a barrier that every invocation reaches
// once done with this tile's reads).
fn laneScanStoreDirect(v: array<u32, ${laneItems}>, op: u32, hasCarry: bool, carry: u32, to: u32, lid: u32) {
  var x: array<u32, ${laneItems}>;
${unrolled((k) => `  x[${k}] = loadValue(op, v[${k}]);`)}
  storeLaneDirect(to, laneOutputs(x, TILE_ITEMS, op, hasCarry, carry, lid), op, lid);
}`
      : ''
  }`;
}

/**
 * WGSL: the prefixes `p` of invocation lid's lane from its items `x` (those past the lane's `count`
 * left as the last), its total into `laneTotal`, then a barrier.
 */
const lanePrefixRegisters = `  let count = laneCount(n, lid);
  var p: array<u32, ${laneItems}>;
  p[0] = x[0];
${unrolled((k) => (k === 0 ? '' : `  p[${k}] = select(p[${k - 1}], combine(op, p[${k - 1}], x[${k}]), ${k}u < count);`)).trimStart()}
  let total = p[${laneItems - 1}];
  if (count > 0u) { laneTotal[lid] = total; }
  workgroupBarrier();
`;

/**
 * WGSL: `laneOutputs(x, n, op, hasCarry, carry, lid)`, the scan of a tile of n elements (n <= 2048;
 * workgroup-uniform) whose lane lid's elements are in x (laneCount(n, lid) of them): the lane's
 * prefixes in registers, the lane and group totals through workgroup memory; returns the lane's
 * inclusive outputs (those past its count unset) and leaves the tile's total in tileTotal.
 * `laneScanRegisters` puts the outputs into the workgroup tile, then a barrier. The chains of
 * `laneScan`, so the same bits; needs `laneCount` (laneWgsl).
 */
export const registersWgsl = `fn laneOutputs(x: array<u32, ${laneItems}>, n: u32, op: u32, hasCarry: bool, carry: u32, lid: u32) -> array<u32, ${laneItems}> {
  var y: array<u32, ${laneItems}>;
${lanePrefixRegisters}${laneCarryWgsl('total')}    var e = inner;
    if (hasCarry) { e = select(carry, combine(op, carry, inner), hasInner); }
    let hasE = hasCarry || hasInner;
${unrolled((k) => `    y[${k}] = select(p[${k}], combine(op, e, p[${k}]), hasE);`)}
  }
  return y;
}
fn laneScanRegisters(x: array<u32, ${laneItems}>, n: u32, op: u32, hasCarry: bool, carry: u32, lid: u32) {
  let y = laneOutputs(x, n, op, hasCarry, carry, lid);
  let count = laneCount(n, lid);
  let base = lid * LANE_ITEMS;
${unrolled((k) => `  if (${k}u < count) { tile[at(base + ${k}u)] = y[${k}]; }`)}
  workgroupBarrier();
}`;

/** WGSL: `fetchWords`, a lane's tile totals for 'spine-walk' (plain temp words). */
const fetchWordsWgsl = `// Lane lid's words of the n (<= 2048) at temp[first...]: its own 8 consecutive ones (the tile totals
// are few and in the device's cache: no coalescing to keep), issued at once.
fn fetchWords(first: u32, n: u32, lid: u32) -> array<u32, ${laneItems}> {
  let last = max(n, 1u) - 1u;
  let base = lid * LANE_ITEMS;
  return array<u32, ${laneItems}>(${Array.from({ length: laneItems }, (_, k) => `temp[first + min(base + ${k}u, last)]`).join(', ')});
}`;

/**
 * 'spine-walk' on the lane functions: the next 2048 tile totals are loaded while this 2048 are
 * scanned, in registers ({@link registersWgsl}); invocation 0 advances the scan of their totals.
 */
const spineWalkLanes = `
${spineWalkEntry}  let at0 = u.tileTotalsAt + segment * u.tiles;
  var v = fetchWords(at0, min(tiles, TILE_ITEMS), lid);
  for (var offset = 0u; offset < tiles; offset += TILE_ITEMS) {
    let n = min(tiles - offset, TILE_ITEMS);
    let x = v;
    if (offset + TILE_ITEMS < tiles) { v = fetchWords(at0 + offset + TILE_ITEMS, min(tiles - offset - TILE_ITEMS, TILE_ITEMS), lid); }
    let carry = workgroupUniformLoad(&walkCarry);
    laneScanRegisters(x, n, s.op, carry.x != 0u, carry.y, lid);
    storeWordLanes(at0 + offset, n, s.op, lid);
    if (lid == 0u) { walkCarry = vec2<u32>(1u, ingest2(s.op, tileTotal)); }
  }`;

/**
 * 'spine-lanes' on the lane functions: invocation lid holds lane lid's 8 tile totals in registers,
 * adds its prefixes there and writes them in place, and works out the lanes and groups before it
 * from workgroup memory (`laneCarryWgsl`): the chains of `laneScanRegisters`, without a carry.
 */
const spineLanesLanes = `
${spineLanesEntry}  let x = fetchWords(at0, n, lid);
${lanePrefixRegisters}${laneCarryWgsl('total')}    // Lane 0 has no lanes before it: the identity, never read.
    temp[carriesAt + lid] = finishValue(op, select(identityOf(op), inner, hasInner));
    // The lane prefixes in place of the totals (the first is its total already).
${unrolled((k) => (k === 0 ? '' : `    if (${k}u < count) { temp[at0 + lid * LANE_ITEMS + ${k}u] = finishValue(op, p[${k}]); }`)).trimStart()}
    if (lid * LANE_ITEMS + count == n) { temp[u.spineTotalsAt + segment * u.spineTiles + v] = finishValue(op, tileTotal); }
  }`;

/** How 'tile-scan' finds a tile's carry: the word before its total, or (after 'spine-lanes') put together, the carry into its 2048 added up or scanned. */
export type TileCarries = 'scanned' | 'lanes' | 'lanes-top';

/** The tile carries of a spine form. */
export const tileCarriesOf = (form: SpineForm): TileCarries => (form === 'lanes' || form === 'lanes-top' ? form : 'scanned');

/**
 * WGSL `tileCarry(s, segment, t)`: the carry into tile t of a segment, the initial value for t = 0;
 * else output t - 1 of the scan of the tile totals. 'scanned': the word 'spine-scan' or
 * 'spine-walk' left. After 'spine-lanes': (C ⊕ E) ⊕ p (order.ts), p the lane prefix of total t - 1
 * (in its place), E the carry into its lane (none in lane 0), C the carry into its 2048 tile totals,
 * v (none for v = 0 without an initial value; `spineCarry`): the word 'spine-top' left, or, for
 * v <= 8 ('lanes'), lane 0 of the scan of the 2048s' totals U: the initial value ⊕ (U_0 ⊕ ... ⊕
 * U_v-1), its reads issued first. Every invocation reads the same few words (the device broadcasts
 * them) and adds the same chain: no barrier. The CPU twin: cpu/kernels.ts `laneTileCarry`.
 */
export function tileCarryWgsl(carries: TileCarries): string {
  if (carries === 'scanned') {
    return `fn tileCarry(s: Segment, segment: u32, t: u32) -> u32 {
  if (t == 0u) { return initialCarry(s); }
  return temp[u.tileTotalsAt + segment * u.tiles + t - 1u];
}`;
  }
  const steps = Array.from({ length: laneItems - 1 }, (_, i) => i + 1);
  const spineCarry =
    carries === 'lanes-top'
      ? `fn spineCarry(s: Segment, segment: u32, v: u32) -> u32 {
  if (v == 0u) { return initialCarry(s); }
  return temp[u.spineTotalsAt + segment * u.spineTiles + v - 1u];
}`
      : `fn spineCarry(s: Segment, segment: u32, v: u32) -> u32 {
  if (v == 0u) { return initialCarry(s); }
  let op = s.op;
  let first = u.spineTotalsAt + segment * u.spineTiles;
  let last = v - 1u;
  var c = temp[first];
  ${steps.map((k) => `let c${k} = temp[first + min(${k}u, last)];`).join('\n  ')}
  ${steps.map((k) => `c = select(c, combine(op, c, c${k}), ${k}u < v);`).join('\n  ')}
  return select(c, combine(op, initialCarry(s), c), s.hasInitial != 0u);
}`;
  return `${spineCarry}
fn tileCarry(s: Segment, segment: u32, t: u32) -> u32 {
  if (t == 0u) { return initialCarry(s); }
  let op = s.op;
  let i = t - 1u;
  let v = i / TILE_ITEMS;
  let lane = (i % TILE_ITEMS) / LANE_ITEMS;
  let p = temp[u.tileTotalsAt + segment * u.tiles + i];
  let inner = temp[u.spineLaneCarriesAt + (segment * u.spineTiles + v) * TILE_LANES + lane];
  let hasUpper = v > 0u || s.hasInitial != 0u;
  var e = inner;
  if (hasUpper) {
    let c = spineCarry(s, segment, v);
    e = select(c, combine(op, c, inner), lane > 0u);
  }
  return select(p, combine(op, e, p), hasUpper || lane > 0u);
}`;
}

/**
 * What, beside the facts, a multi-workgroup kernel's program depends on in a spine form: 'tile-scan'
 * its tile carries, 'spine-scan' whether 'spine-top' scanned the 2048s' totals before it; the others
 * nothing (their pipelines are shared by every form).
 */
export function spineProgramKey(kernel: string, form: SpineForm): string {
  if (kernel === 'tile-scan') return tileCarriesOf(form);
  if (kernel === 'spine-scan') return form === 'three' ? 'spine' : '';
  return '';
}

/** WGSL: `name` = array[base] ⊕ ... ⊕ array[base + 15], left to right (16 reads issued first). */
function fullChainWgsl(name: string, array: string, base: string, indent: string): string {
  const steps = Array.from({ length: 15 }, (_, i) => i + 1);
  return [`var ${name} = ${array}[${base}];`, ...steps.map((k) => `let ${name}${k} = ${array}[${base} + ${k}u];`), ...steps.map((k) => `${name} = combine(op, ${name}, ${name}${k});`)].join(
    `\n${indent}`,
  );
}

/**
 * WGSL of a step of `step` full tiles at once on the vec4 path (policy `tilesPerStep`, `scanTilesPerStep`): their loads
 * all issued first; their chains (lane totals, the lanes before each lane, the groups before each
 * group) side by side — independent chains, so one's latency hides another's — with one barrier per
 * level for all of them. 'tile-reduce': `reduceStep(first, op, lid, to)` writes the tiles' totals to
 * temp[to ...]; 'tile-scan': `scanStep(s, segment, t0, lid)` scans tiles t0 .. t0 + step - 1 of the
 * segment from their carries and stores them (staged one after another through the workgroup tile,
 * or with `vectorOut` each lane's straight from registers). The same chains as one tile at a time,
 * so the same bits.
 */
function stepWgsl(step: number, kernel: 'tile-reduce' | 'tile-scan', vectorOut: boolean): string {
  const tiles = Array.from({ length: step }, (_, j) => j);
  const loads = (from: string) => tiles.map((j) => `  let x${j} = fetchLane(${from} + ${j * tileItems}u, lid);`).join('\n');
  const common = `const TILE_STEP: u32 = ${step}u;
var<workgroup> stepLane: array<u32, ${step * 256}>;
var<workgroup> stepGroup: array<u32, ${step * 16}>;`;
  const laneTotal = (j: number) =>
    [`  var total${j} = loadValue(op, x${j}[0]);`, ...Array.from({ length: laneItems - 1 }, (_, k) => `  total${j} = combine(op, total${j}, loadValue(op, x${j}[${k + 1}]));`), `  stepLane[${j * 256}u + lid] = total${j};`].join('\n');
  const reduce = `fn reduceStep(first: u32, op: u32, lid: u32, to: u32) {
${loads('first')}
${tiles.map(laneTotal).join('\n')}
  workgroupBarrier();
  // Invocation lid < 16 * step: group lid % 16 of tile lid / 16 (its lanes at stepLane[16 lid ...]).
  if (lid < ${16 * step}u) {
    ${fullChainWgsl('q', 'stepLane', 'lid * GROUP_LANES', '    ')}
    stepGroup[lid] = q;
  }
  workgroupBarrier();
  if (lid < ${step}u) {
    ${fullChainWgsl('r', 'stepGroup', 'lid * TILE_GROUPS', '    ')}
    temp[to + lid] = finishValue(op, r);
  }
}`;
  const prefix = (j: number) =>
    [
      `  var p${j}: array<u32, ${laneItems}>;`,
      `  p${j}[0] = loadValue(op, x${j}[0]);`,
      ...Array.from({ length: laneItems - 1 }, (_, k) => `  p${j}[${k + 1}] = combine(op, p${j}[${k}], loadValue(op, x${j}[${k + 1}]));`),
      `  stepLane[${j * 256}u + lid] = p${j}[${laneItems - 1}];`,
    ].join('\n');
  const groups = (j: number) => `  {
    ${chainWgsl('q', 'stepLane', `${j * 256}u + first`, 'm', '    ')}
    laneQ${j} = q;
    if (m == GROUP_LANES - 1u) { stepGroup[${j * 16}u + g] = combine(op, q, p${j}[${laneItems - 1}]); }
  }`;
  const carries = (j: number) => `  {
    ${chainWgsl('r', 'stepGroup', `${j * 16}u`, 'g', '    ')}
    var inner = laneQ${j};
    if (g > 0u) { inner = select(r, combine(op, r, laneQ${j}), m > 0u); }
    let t = t0 + ${j}u;
    let hasCarry = t > 0u || s.hasInitial != 0u;
    let carry = tileCarry(s, segment, t);
    laneE${j} = inner;
    if (hasCarry) { laneE${j} = select(carry, combine(op, carry, inner), hasInner); }
    laneHasE${j} = hasCarry || hasInner;
  }`;
  const outputs = (j: number) => Array.from({ length: laneItems }, (_, k) => `select(p${j}[${k}], combine(op, laneE${j}, p${j}[${k}]), laneHasE${j})`);
  const stores = (j: number) =>
    vectorOut
      ? `  storeLaneDirect(s.start + (t0 + ${j}u) * TILE_ITEMS, array<u32, ${laneItems}>(${outputs(j).join(', ')}), op, lid);`
      : `  {
    ${j > 0 ? 'workgroupBarrier();' : ''}
    let t = t0 + ${j}u;
    if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }
${unrolled((k) => `    tile[at(base + ${k}u)] = ${outputs(j)[k]};`)}
    workgroupBarrier();
    // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
    storeTileDirect(s.start + t * TILE_ITEMS + s.exclusive, min(TILE_ITEMS, s.size - t * TILE_ITEMS - s.exclusive), op, lid);
  }`;
  const scan = `fn scanStep(s: Segment, segment: u32, t0: u32, lid: u32) {
  let op = s.op;
${loads('s.start + t0 * TILE_ITEMS')}
${tiles.map(prefix).join('\n')}
  workgroupBarrier();
  let g = lid / GROUP_LANES;
  let m = lid % GROUP_LANES;
  let first = g * GROUP_LANES;
  let hasInner = g > 0u || m > 0u;
  let base = lid * LANE_ITEMS;
${tiles.map((j) => `  var laneQ${j} = 0u;\n  var laneE${j} = 0u;\n  var laneHasE${j} = false;`).join('\n')}
${tiles.map(groups).join('\n')}
  workgroupBarrier();
${tiles.map(carries).join('\n')}
${tiles.map(stores).join('\n')}
}`;
  return `${common}\n${kernel === 'tile-reduce' ? reduce : scan}`;
}

/**
 * The tile launches on the lane functions: a workgroup walks its span of tiles, and the next tile's
 * loads are issued as soon as this one is in workgroup memory (or registers), so they are in flight
 * while the workgroup adds this one up. 'tile-scan' walks its span from the end: the tiles
 * 'tile-reduce' read last (the ends of the spans) may still be in the device's cache. With `vector`,
 * full tiles of a segment starting at a multiple of 4 items take the vec4 path ({@link vectorWgsl});
 * `direct` is workgroup-uniform, so every barrier is too.
 */
function laneTileBody(kernel: 'tile-reduce' | 'tile-scan', vector: boolean, step: number, vectorOut: boolean): string {
  const direct = vectorOut
    ? 'let direct = true; // every segment starts at a multiple of 4 items (the plan\'s fact)'
    : vector
      ? 'let direct = (s.start & 3u) == 0u;'
      : 'let direct = false;';
  const fetch = (first: string, n: string) => (vector ? `fetchFull(${first}, ${n}, direct, lid)` : `fetchTile(${first}, ${n}, lid)`);
  // Full tiles of the span on the vec4 path go `step` at a time: [first, stepEnd) holds them.
  const stepEnd = 'let stepEnd = max(first, min(last, s.size / TILE_ITEMS));';
  if (kernel === 'tile-reduce') {
    const staged = `stageTile(x, s.start + offset, n, s.op, lid);
      laneTotals(n, s.op, lid);`;
    const steps =
      vector && step > 1
        ? `if (direct) {
    ${stepEnd}
    for (; next + TILE_STEP <= stepEnd; next += TILE_STEP) { reduceStep(s.start + next * TILE_ITEMS, s.op, lid, u.tileTotalsAt + segment * u.tiles + next); }
  }`
        : '';
    return `
${head}
  ${direct}
  var next = first;
  ${steps}
  if (next < last) {
  var v = ${fetch('s.start + next * TILE_ITEMS', 'min(s.size - next * TILE_ITEMS, TILE_ITEMS)')};
  for (var t = next; t < last; t++) {
    let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);
    let x = v;
    if (t + 1u < last) { v = ${fetch('s.start + offset + TILE_ITEMS', 'min(s.size - offset - TILE_ITEMS, TILE_ITEMS)')}; }
    ${vector ? `if (direct && n == TILE_ITEMS) {
      laneTotalDirect(x, s.op, lid);
    } else {
      ${staged}
    }` : staged}
    laneTileTotal(n, s.op, lid);
    if (lid == 0u) { temp[u.tileTotalsAt + segment * u.tiles + t] = finishValue(s.op, tileTotal); }
  }
  }`;
  }
  const staged = `stageTile(x, s.start + offset, n, s.op, lid);
      laneTotals(n, s.op, lid);
      laneScan(n, s.op, hasCarry, carry, lid);
      // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
      storeTileLanes(s.start + offset + s.exclusive, min(n, s.size - offset - s.exclusive), s.op, lid);`;
  // One tile: t, its loads in x (prefetched), the next tile's loads into v where `prefetch` holds.
  // With vectorOut the scan is inclusive (the plan's fact): no exclusive first output to write.
  const firstStore = vectorOut ? '' : '\n    if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }';
  const fullTile = vectorOut
    ? 'laneScanStoreDirect(x, s.op, hasCarry, carry, s.start + offset, lid);'
    : `laneScanDirect(x, s.op, hasCarry, carry, lid);
      // No barrier after: what comes next (full tiles before this one) writes the workgroup tile two barriers on.
      storeTileDirect(s.start + offset + s.exclusive, min(n, s.size - offset - s.exclusive), s.op, lid);`;
  const single = (prefetch: string) => `let offset = t * TILE_ITEMS;
    let n = min(s.size - offset, TILE_ITEMS);${firstStore}
    let carry = tileCarry(s, segment, t);
    let hasCarry = t > 0u || s.hasInitial != 0u;
    let x = v;
    if (${prefetch}) { v = ${fetch('s.start + offset - TILE_ITEMS', 'TILE_ITEMS')}; }
    ${vector ? `if (direct && n == TILE_ITEMS) {
      ${fullTile}
    } else {
      ${staged}
    }` : staged}`;
  const top = fetch('s.start + (last - 1u) * TILE_ITEMS', 'min(s.size - (last - 1u) * TILE_ITEMS, TILE_ITEMS)');
  if (!(vector && step > 1)) {
    return `
${reverseHead}
  ${direct}
  var v = ${top};
  for (var t = last; t > first;) {
    t--;
    ${single('t > first')}
  }`;
  }
  // Steps of full tiles from the top where [t - TILE_STEP, t) holds only full tiles of a 4-aligned
  // segment, else one tile (the short last one, and the few left at the bottom); one loop, so the
  // one-tile code is in the shader once.
  return `
${reverseHead}
  ${direct}
  let stepEnd = select(first, max(first, min(last, s.size / TILE_ITEMS)), direct);
  var v: array<u32, ${laneItems}>;
  if (!(last <= stepEnd && last >= first + TILE_STEP)) { v = ${top}; }
  var t = last;
  while (t > first) {
    if (t <= stepEnd && t >= first + TILE_STEP) {
      t -= TILE_STEP;
      scanStep(s, segment, t, lid);
      if (t > first && !(t >= first + TILE_STEP)) { v = ${fetch('s.start + (t - 1u) * TILE_ITEMS', 'TILE_ITEMS')}; }
      continue;
    }
    t--;
    ${single('t > first && !(t <= stepEnd && t >= first + TILE_STEP)')}
  }`;
}

/** A kernel's body on the lane functions: the same steps, the same order. */
function laneBody(main: string): string {
  const scans = main.includes('tileScan(');
  return main
    .replace('loadTileItems(', 'loadTileLanes(')
    .replace('storeTileItems(', 'storeTileLanes(')
    .replace('loadTileWords(', 'loadWordLanes(')
    .replace('storeTileWords(', 'storeWordLanes(')
    .replace('tileTotals(n, s.op, lid);', scans ? 'laneTotals(n, s.op, lid);' : 'laneTotals(n, s.op, lid);\n  laneTileTotal(n, s.op, lid);')
    .replace('tileScan(', 'laneScan(');
}

/** The program of one multi-workgroup kernel for these facts, in spine form `form` (problem.ts `SpineForm`). */
export function multiWorkgroupProgram(kernel: MultiWorkgroupKernel, facts: ScanKernelFacts, name: string, form: SpineForm): WebGpuProgram {
  const body = bodies[kernel];
  const lanes = facts.workgroupSize === tileLanes;
  const tileKernel = kernel === 'tile-reduce' || kernel === 'tile-scan';
  const vector = lanes && tileKernel && facts.loadWords === 4;
  const vectorOut = vector && kernel === 'tile-scan' && facts.storeWords === 4;
  const carries = tileCarriesOf(form);
  const generic = body.main.replace('SPINE_CARRY', form === 'three' ? 'if (v > 0u) { carry = temp[u.spineTotalsAt + segment * u.spineTiles + v - 1u]; }' : '');
  // Steps only where every segment has the one operator: a step's chains are unrolled `step` times,
  // and with several operators each addition is a branch over them (Mesa's lavapipe took 22 s for
  // the multi-workgroup programs of a per-segment operator with steps, 12 s without).
  const step = vector && facts.sources.op.kind === 'constant' ? (kernel === 'tile-scan' ? facts.scanTilesPerStep : facts.tilesPerStep) : 1;
  const main = !lanes
    ? generic
    : tileKernel
      ? laneTileBody(kernel, vector, step, vectorOut)
      : kernel === 'spine-walk'
        ? spineWalkLanes
        : kernel === 'spine-lanes'
          ? spineLanesLanes
          : laneBody(generic);
  const shape: ScanShape = { values: body.values, temp: 'u32', vector, vectorOut };
  const registers = kernel === 'spine-walk' || kernel === 'spine-lanes';
  // The tile's item loads and word stores: the lane kernels have their own (laneWgsl), and word
  // stores would not compile against a vec4 valuesOut.
  const tileValues = body.values && !vectorOut;
  const declarations = `
${orderConstantsWgsl}
${enterSegmentWgsl}
${tileWgsl(true, tileValues)}
${lanes ? laneWgsl(body.values, vectorOut) : ''}
${lanes && body.values ? fetchWgsl : ''}
${lanes && (vector || kernel === 'spine-walk') ? registersWgsl : ''}
${lanes && registers ? fetchWordsWgsl : ''}
${vector ? vectorWgsl(vectorOut) : ''}
${vector && step > 1 ? stepWgsl(step, kernel as 'tile-reduce' | 'tile-scan', vectorOut) : ''}
${kernel === 'tile-scan' ? tileCarryWgsl(carries) : ''}
${kernel === 'spine-walk' ? `${levelsWgsl(1)}\nvar<workgroup> walkCarry: vec2<u32>;` : ''}`;
  // The 2048s' totals: written by 'spine-reduce' and 'spine-lanes', scanned by 'spine-top', read by
  // 'spine-scan' (three launches) and 'tile-scan' (after 'spine-lanes'); the lane carries likewise.
  const lanesCarries = carries !== 'scanned' && kernel === 'tile-scan';
  const readsSpine = kernel === 'spine-reduce' || kernel === 'spine-top' || kernel === 'spine-lanes' || (kernel === 'spine-scan' && form === 'three') || lanesCarries;
  const readsLaneCarries = kernel === 'spine-lanes' || lanesCarries;
  return {
    name,
    // The tile launches' own policy values stay out of the other kernels' keys: they share pipelines.
    cacheKey: `scan/${kernel}|${spineProgramKey(kernel, form)}|${vector}|${step}|${JSON.stringify(tileKernel ? facts : { ...facts, loadWords: 0, tilesPerStep: 0, scanTilesPerStep: 0, storeWords: 1 })}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [
      ...scanUniforms(facts, shape),
      'tiles',
      'spineTiles',
      'tileSpan',
      'spans',
      'tileTotalsAt',
      ...(readsSpine ? ['spineTotalsAt'] : []),
      ...(readsLaneCarries ? ['spineLaneCarriesAt'] : []),
    ],
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
