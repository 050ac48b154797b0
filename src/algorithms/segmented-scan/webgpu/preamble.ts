import { f32SumWgsl, orderedBitsWgsl } from '../../../backends/webgpu/numerics.js';
import type { ProgramBinding } from '../../../backends/webgpu/program.js';
import { type SegmentShape, type SourceFact, readBits, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import { OpCode, groupLanes, identityBits, laneItems, scanOps, tileGroups, tileItems, tileLanes } from '../order.js';
import type { ScanKernelFacts } from './facts.js';

/*
 * WGSL shared by every scan kernel, on top of the segment preamble (backends/webgpu/segments.ts):
 * the operators on value bits (the CPU twins in cpu/kernels.ts), a segment's operator, mode and
 * initial value, segment resolution (the CPU twin's `resolveScanSegment`), the levels of the
 * canonical order advanced one element at a time (`ingest0..2`, the CPU's `CanonicalLevel`), and the
 * workgroup tile (`tileTotals`, `tileScan`: the CPU's `canonicalTile`).
 *
 * Conventions: values are bound as `array<u32>` (their bits) whatever their dtype; an absent term
 * (no carry, no lanes before, ...) is known from positions and counters, never from a value, so
 * min and max keep a NaN's or -0's own bits.
 */

/** What a kernel binds. */
export interface ScanShape extends SegmentShape {
  /** Binds valuesIn and valuesOut. */
  readonly values: boolean;
  /** Also binds `valuesIn4`: the values a second time, as vec4<u32> (four items a load). */
  readonly vector?: boolean;
  /**
   * Binds valuesOut as vec4<u32>: every store a whole vec4 of one invocation (the plan's fact,
   * facts.storeWords 4; a store of one component would be a read-modify-write of the vector on some
   * WebGPU implementations).
   */
  readonly vectorOut?: boolean;
}

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** Storage bindings of a kernel of this shape, in binding order. */
export function scanBindings(facts: ScanKernelFacts, shape: ScanShape): ProgramBinding[] {
  const arrays: ProgramBinding[] = shape.values
    ? [
        { name: 'valuesIn', access: 'read', element: 'u32' },
        ...(shape.vector ? [{ name: 'valuesIn4', array: 'valuesIn', access: 'read', element: 'vec4<u32>' } as const] : []),
        { name: 'valuesOut', access: 'read_write', element: shape.vectorOut === true ? 'vec4<u32>' : 'u32' },
      ]
    : [];
  return segmentBindings(facts, arrays, shape);
}

/** Uniform fields every scan kernel of this shape reads (the kernel adds its own). */
export function scanUniforms(facts: ScanKernelFacts, shape: SegmentShape): string[] {
  return segmentUniforms(facts, shape);
}

/** The operator codes that can occur. */
function opsOf(facts: ScanKernelFacts): number[] {
  const op = facts.sources.op;
  const table = facts.opOfOption.length > 0 ? facts.opOfOption : [OpCode.sum];
  if (op.kind === 'constant') return [table[Math.min(op.value, table.length - 1)]!];
  return [...new Set(table)];
}

/** WGSL of a table lookup `name(i)` over option indices, or the baked value of a constant option. */
function optionFn(fn: string, param: string, fact: SourceFact, table: readonly number[]): string {
  const codes = table.length > 0 ? table : [0];
  if (fact.kind === 'constant') return `fn ${fn}(i: u32) -> u32 { return ${codes[Math.min(fact.value, codes.length - 1)]}u; }`;
  return `const ${fn}Table = array<u32, ${codes.length}>(${codes.map((c) => `${c}u`).join(', ')});
fn ${fn}(i: u32) -> u32 { return ${fn}Table[min(${readCount(param, fact, 'i')}, ${codes.length - 1}u)]; }`;
}

function sumExpr(facts: ScanKernelFacts): string {
  if (facts.valueType !== 'f32') return 'a + b';
  return facts.canonical ? 'addF32(a, b)' : 'addF32Fast(a, b)';
}

/** `combine(op, a, b)`: `a` the earlier term; only the operators that can occur. */
function combineFn(facts: ScanKernelFacts): string {
  const ops = opsOf(facts);
  const cases = ops.map((op) => {
    const expr = op === OpCode.sum ? sumExpr(facts) : op === OpCode.min ? 'select(a, b, orderedBits(b) < orderedBits(a))' : 'select(a, b, orderedBits(b) > orderedBits(a))';
    return { op, expr };
  });
  if (cases.length === 1) return `fn combine(op: u32, a: u32, b: u32) -> u32 { return ${cases[0]!.expr}; }`;
  return `fn combine(op: u32, a: u32, b: u32) -> u32 {
${cases.map((c) => `  if (op == ${c.op}u) { return ${c.expr}; }`).join('\n')}
  return a;
}`;
}

/** The canonical f32 sum's input and output transforms: flush on load, canonical NaN on store. */
function valueFns(facts: ScanKernelFacts): string {
  const f32Sum = facts.valueType === 'f32' && opsOf(facts).includes(OpCode.sum);
  const load = f32Sum && facts.canonical ? 'select(bits, flushF32(bits), op == 0u)' : 'bits';
  const finish = f32Sum ? 'select(bits, canonicalF32(bits), op == 0u)' : 'bits';
  const identities = scanOps.map((op) => hex(identityBits(op, facts.valueType)));
  return `fn loadValue(op: u32, bits: u32) -> u32 { return ${load}; }
fn finishValue(op: u32, bits: u32) -> u32 { return ${finish}; }
const identities = array<u32, 3>(${identities.join(', ')});
fn identityOf(op: u32) -> u32 { return identities[min(op, 2u)]; }`;
}

function initialFn(facts: ScanKernelFacts): string {
  const fact = facts.sources.initialValue;
  if (fact === undefined) return 'fn hasInitial() -> bool { return false; }\nfn initialOf(i: u32) -> u32 { return 0u; }';
  const bits = fact.kind === 'constant' ? hex(facts.initialConstantBits ?? 0) : readBits('initialValue', fact, 'i');
  return `fn hasInitial() -> bool { return true; }\nfn initialOf(i: u32) -> u32 { return ${bits}; }`;
}

/** The shared WGSL of a kernel of this shape. */
export function scanPreamble(facts: ScanKernelFacts, shape: SegmentShape): string {
  return [
    segmentPreamble(facts, shape),
    orderedBitsWgsl(facts.valueType),
    f32SumWgsl,
    combineFn(facts),
    valueFns(facts),
    optionFn('segmentOpOf', 'op', facts.sources.op, facts.opOfOption),
    optionFn('segmentModeOf', 'mode', facts.sources.mode, facts.modeOfOption),
    initialFn(facts),
    `struct Segment { start: u32, size: u32, op: u32, exclusive: u32, hasInitial: u32, initial: u32, go: u32 }
fn resolveSegment(i: u32, capacity: u32) -> Segment {
  let extent = segmentExtent(i, capacity);
  return Segment(extent.x, extent.y, segmentOpOf(i), segmentModeOf(i), select(0u, 1u, hasInitial()), initialOf(i), 1u);
}
// The initial value as the scan's first carry: flushed where the sum is canonical f32.
fn initialCarry(s: Segment) -> u32 { return loadValue(s.op, s.initial); }
// An exclusive scan's first output: the initial value's bits as given, or the identity.
fn exclusiveFirst(s: Segment) -> u32 { return select(identityOf(s.op), s.initial, s.hasInitial != 0u); }`,
  ].join('\n');
}

/** `enterSegment`: one invocation resolves the segment, the workgroup shares it (uniform from then on). */
export const enterSegmentWgsl = `var<workgroup> enteredSegment: Segment;
fn enterSegment(i: u32, capacity: u32, lid: u32) -> Segment {
  if (lid == 0u) {
    var s = Segment(0u, 0u, 0u, 0u, 0u, 0u, 0u);
    if (!failed() && i < activeSegments()) { s = resolveSegment(i, capacity); }
    enteredSegment = s;
  }
  return workgroupUniformLoad(&enteredSegment);
}`;

/**
 * The levels of the canonical order advanced one element at a time, in one invocation: `ingest0`
 * (items), `ingest1` (tile totals), `ingest2` (their tile totals; never completes a tile within 2^32
 * items). Each returns the element's inclusive output. Whether a term exists follows from the
 * counters: the lane prefix after k > 0 items, the lanes before after m > 0, the groups after g > 0.
 */
export function levelsWgsl(levels: 1 | 2 | 3): string {
  const first = 3 - levels;
  const fns: string[] = [
    `struct Level { initial: u32, hasInitial: u32, carry: u32, hasCarry: u32, groups: u32, lanes: u32, prefix: u32, k: u32, m: u32, g: u32, upperStarted: u32 }
var<private> levels: array<Level, 3>;
fn startLevel(level: u32, hasInitial: bool, initial: u32) {
  levels[level] = Level(initial, select(0u, 1u, hasInitial), initial, select(0u, 1u, hasInitial), 0u, 0u, 0u, 0u, 0u, 0u, 0u);
}`,
  ];
  for (let level = 2; level >= first; level--) {
    const cascade =
      level === 2
        ? ''
        : `
        if (L.g == TILE_GROUPS) {
          let total = L.groups;
          L.g = 0u;
          if (L.upperStarted == 0u) { startLevel(${level + 1}u, L.hasInitial != 0u, L.initial); L.upperStarted = 1u; }
          levels[${level}] = L;
          let next = ingest${level + 1}(op, total);
          L = levels[${level}];
          L.carry = next;
          L.hasCarry = 1u;
        }`;
    fns.push(`fn ingest${level}(op: u32, x: u32) -> u32 {
  var L = levels[${level}];
  let p = select(x, combine(op, L.prefix, x), L.k > 0u);
  var inner = L.lanes;
  if (L.g > 0u) { inner = select(L.groups, combine(op, L.groups, L.lanes), L.m > 0u); }
  let hasInner = L.g > 0u || L.m > 0u;
  var e = inner;
  if (L.hasCarry != 0u) { e = select(L.carry, combine(op, L.carry, inner), hasInner); }
  let out = select(p, combine(op, e, p), hasInner || L.hasCarry != 0u);
  L.prefix = p;
  L.k += 1u;
  if (L.k == LANE_ITEMS) {
    L.k = 0u;
    L.lanes = select(p, combine(op, L.lanes, p), L.m > 0u);
    L.m += 1u;
    if (L.m == GROUP_LANES) {
      L.m = 0u;
      L.groups = select(L.lanes, combine(op, L.groups, L.lanes), L.g > 0u);
      L.g += 1u;${cascade}
    }
  }
  levels[${level}] = L;
  return out;
}`);
  }
  return fns.join('\n');
}

/** The canonical order's constants. */
export const orderConstantsWgsl = `const LANE_ITEMS: u32 = ${laneItems}u;
const GROUP_LANES: u32 = ${groupLanes}u;
const TILE_GROUPS: u32 = ${tileGroups}u;
const TILE_LANES: u32 = ${tileLanes}u;
const TILE_ITEMS: u32 = ${tileItems}u;`;

/**
 * The workgroup tile: up to 2048 values in workgroup memory (padded one word in 32 so that lane
 * reads of 8 consecutive words hit distinct banks), with
 * - `tileTotals(n, op, lid)`: lane totals, group phase (16 invocations: the lanes before each lane,
 *   the group totals), tile phase (one invocation: the groups before each group, `tileTotal`);
 * - `tileScan(n, op, hasCarry, carry, lid)`: each lane's items replaced by their inclusive outputs
 *   from the carry, after `tileTotals`;
 * - loads and stores of items and temporary-storage words (`loadTileWords` needs the temp binding).
 * Every function starts and ends on a barrier; `n` and `op` must be workgroup-uniform.
 */
export function tileWgsl(withTemp: boolean, withValues: boolean): string {
  const padded = tileItems + tileItems / 32;
  const parts = [
    `var<workgroup> tile: array<u32, ${padded}>;
var<workgroup> laneTotal: array<u32, ${tileLanes}>;
var<workgroup> laneCarry: array<u32, ${tileLanes}>;
var<workgroup> groupTotal: array<u32, ${tileGroups}>;
var<workgroup> groupCarry: array<u32, ${tileGroups}>;
var<workgroup> tileTotal: u32;
fn at(j: u32) -> u32 { return j + (j >> 5u); }
fn tileTotals(n: u32, op: u32, lid: u32) {
  for (var l = lid; l < TILE_LANES; l += WG) {
    let base = l * LANE_ITEMS;
    if (base < n) {
      var total = tile[at(base)];
      let stop = min(base + LANE_ITEMS, n);
      for (var j = base + 1u; j < stop; j++) { total = combine(op, total, tile[at(j)]); }
      laneTotal[l] = total;
    }
  }
  workgroupBarrier();
  let lanes = (n + LANE_ITEMS - 1u) / LANE_ITEMS;
  if (lid < TILE_GROUPS) {
    let first = lid * GROUP_LANES;
    if (first < lanes) {
      var q = laneTotal[first];
      let stop = min(first + GROUP_LANES, lanes);
      for (var l = first + 1u; l < stop; l++) { laneCarry[l] = q; q = combine(op, q, laneTotal[l]); }
      groupTotal[lid] = q;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let groups = (lanes + GROUP_LANES - 1u) / GROUP_LANES;
    var r = groupTotal[0];
    for (var g = 1u; g < groups; g++) { groupCarry[g] = r; r = combine(op, r, groupTotal[g]); }
    tileTotal = r;
  }
  workgroupBarrier();
}
// R_g ⊕ q_m of lane l (order.ts): the lanes before it in its group, after the groups before its
// group, as tileTotals left them; lane 0 has neither (what it returns there is not used).
fn laneInner(l: u32, op: u32) -> u32 {
  let g = l / GROUP_LANES;
  if (g == 0u) { return laneCarry[l]; }
  return select(groupCarry[g], combine(op, groupCarry[g], laneCarry[l]), l % GROUP_LANES > 0u);
}
fn tileScan(n: u32, op: u32, hasCarry: bool, carry: u32, lid: u32) {
  for (var l = lid; l < TILE_LANES; l += WG) {
    let base = l * LANE_ITEMS;
    if (base < n) {
      let inner = laneInner(l, op);
      let hasInner = l > 0u;
      var e = inner;
      if (hasCarry) { e = select(carry, combine(op, carry, inner), hasInner); }
      let hasE = hasCarry || hasInner;
      let stop = min(base + LANE_ITEMS, n);
      var p = tile[at(base)];
      tile[at(base)] = select(p, combine(op, e, p), hasE);
      for (var j = base + 1u; j < stop; j++) {
        p = combine(op, p, tile[at(j)]);
        tile[at(j)] = select(p, combine(op, e, p), hasE);
      }
    }
  }
  workgroupBarrier();
}`,
  ];
  if (withValues) {
    parts.push(`fn loadTileItems(first: u32, n: u32, op: u32, lid: u32) {
  for (var j = lid; j < n; j += WG) { tile[at(j)] = loadValue(op, valuesIn[first + j]); }
  workgroupBarrier();
}
fn storeTileItems(to: u32, count: u32, op: u32, lid: u32) {
  for (var j = lid; j < count; j += WG) { valuesOut[to + j] = finishValue(op, tile[at(j)]); }
  workgroupBarrier();
}`);
  }
  if (withTemp) {
    parts.push(`fn loadTileWords(first: u32, n: u32, lid: u32) {
  for (var j = lid; j < n; j += WG) { tile[at(j)] = temp[first + j]; }
  workgroupBarrier();
}
fn storeTileWords(to: u32, n: u32, op: u32, lid: u32) {
  for (var j = lid; j < n; j += WG) { temp[to + j] = finishValue(op, tile[at(j)]); }
  workgroupBarrier();
}`);
  }
  return parts.join('\n');
}
