import { f32SumWgsl, orderedBitsWgsl } from '../../../backends/webgpu/numerics.js';
import type { ProgramBinding } from '../../../backends/webgpu/program.js';
import { type SegmentShape, type TempAccess, readBits, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import { OpCode, identityBits, noIndex, sumOrder } from '../ops.js';
import type { ReduceKernelFacts } from './facts.js';

/*
 * WGSL shared by every reduce kernel, on top of the segment preamble (backends/webgpu/segments.ts):
 * the op of a segment, its initial value, the one combine of two partial results that every tree
 * uses, the per-invocation lanes of a chunk, the tree over a team's invocations, the tree over chunk
 * totals, and the final write — the CPU twins' (cpu/kernels.ts) bit for bit.
 *
 * A partial result is a `Pair`: for a sum, its bits (an f32 sum's are flushed, numerics.ts) and index
 * 0; for min and max, the extreme's bits and segment-local index, NONE for none. Values are bound as
 * `array<u32>` (their bits) whatever their dtype.
 */

/** What a kernel binds. */
export interface ReduceShape extends SegmentShape {
  readonly temp: TempAccess;
}

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** Storage bindings of a kernel of this shape, in binding order. */
export function reduceBindings(facts: ReduceKernelFacts, shape: ReduceShape): ProgramBinding[] {
  const arrays: ProgramBinding[] = [
    { name: 'valuesIn', access: 'read', element: 'u32' },
    { name: 'valuesOut', access: 'read_write', element: 'u32' },
  ];
  if (facts.indices) arrays.push({ name: 'indicesOut', access: 'read_write', element: 'u32' });
  return segmentBindings(facts, arrays, shape);
}

/** Uniform fields of a kernel of this shape (the kernel adds its own). */
export function reduceUniforms(facts: ReduceKernelFacts, shape: ReduceShape): string[] {
  return segmentUniforms(facts, shape);
}

function opFn(facts: ReduceKernelFacts): string {
  const fact = facts.sources.op;
  const options = facts.opOfOption.length > 0 ? facts.opOfOption : [0];
  if (fact.kind === 'constant') return `fn segmentOpOf(i: u32) -> u32 { return ${options[Math.min(fact.value, options.length - 1)]}u; }`;
  return `const opOfOption = array<u32, ${options.length}>(${options.map((o) => `${o}u`).join(', ')});
fn segmentOpOf(i: u32) -> u32 { return opOfOption[min(${readCount('op', fact, 'i')}, ${options.length - 1}u)]; }`;
}

/** How an item enters a partial result, and how two partial results combine (sum, or the better extreme). */
function combineFns(facts: ReduceKernelFacts): string {
  const f32 = facts.valueType === 'f32';
  return `
fn takesMin(code: u32) -> bool { return code == ${OpCode.Min}u || code == ${OpCode.ArgMin}u; }
fn keyOf(bits: u32, code: u32) -> u32 { return orderedBits(bits) ^ select(0u, 0xffffffffu, takesMin(code)); }
fn identityPair(code: u32) -> Pair {
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? hex(0x80000000) : '0u'}, 0u); }
  return Pair(0u, NONE);
}
fn itemPair(bits: u32, index: u32, code: u32) -> Pair {
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? 'flushF32(bits)' : 'bits'}, 0u); }
  return Pair(bits, index);
}
// a holds smaller indices than b where it matters (lanes, chunks in order); ties go to the smaller index.
fn combine(code: u32, a: Pair, b: Pair) -> Pair {
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? 'addF32(a.bits, b.bits)' : 'a.bits + b.bits'}, 0u); }
  if (b.index == NONE) { return a; }
  if (a.index == NONE) { return b; }
  let ka = keyOf(a.bits, code);
  let kb = keyOf(b.bits, code);
  if (kb > ka || (kb == ka && b.index < a.index)) { return b; }
  return a;
}`;
}

function finishFn(facts: ReduceKernelFacts): string {
  const init = facts.sources.initialValue;
  const initial = init === undefined ? '' : `let initial = ${readBits('initialValue', init, 'i')};`;
  const has = init !== undefined;
  const sum =
    facts.valueType === 'f32'
      ? `var bits = ${has ? 'initial' : '0u'};
    if (size > 0u) { bits = canonicalF32(${has ? 'addF32(r.bits, flushF32(initial))' : 'r.bits'}); }
    writeResult(i, bits, NONE);`
      : `writeResult(i, r.bits${has ? ' + initial' : ''}, NONE);`;
  const identity = `select(${hex(identityBits(OpCode.Max, facts.valueType))}, ${hex(identityBits(OpCode.Min, facts.valueType))}, takesMin(code))`;
  return `
fn writeResult(i: u32, bits: u32, index: u32) {
  valuesOut[i] = bits;
  ${facts.indices ? 'indicesOut[i] = index;' : ''}
}
// Segment i's result from its items' partial r (ops.ts): a sum adds the initial value last; min and
// max let it win only when strictly better.
fn finish(i: u32, code: u32, size: u32, r: Pair) {
  ${initial}
  if (code == ${OpCode.Sum}u) {
    ${sum}
    return;
  }
  if (r.index == NONE${has ? ' || keyOf(initial, code) > keyOf(r.bits, code)' : ''}) {
    writeResult(i, ${has ? 'initial' : identity}, NONE);
  } else {
    writeResult(i, r.bits, r.index);
  }
}`;
}

/** The shared WGSL of a reduce kernel of this shape. */
export function reducePreamble(facts: ReduceKernelFacts, shape: ReduceShape): string {
  return [
    segmentPreamble(facts, shape),
    orderedBitsWgsl(facts.valueType),
    f32SumWgsl,
    `const NONE: u32 = ${hex(noIndex)};`,
    `const LANES: u32 = ${sumOrder.lanes}u;`,
    `const CHUNK: u32 = ${sumOrder.chunkItems}u;`,
    'struct Pair { bits: u32, index: u32 }',
    opFn(facts),
    combineFns(facts),
    finishFn(facts),
  ].join('\n');
}

/**
 * Per-invocation lanes of a team of `team` invocations (lanes t, t + team, ... of the chunk at
 * `base`, each summed left to right over its items j, j + LANES, ...), then the tree over the
 * invocation's own lanes (the halves of the lane tree from LANES / 2 down to `team`).
 */
export function invocationLanesWgsl(team: number): string {
  const per = sumOrder.lanes / team;
  return `
const TEAM: u32 = ${team}u;
const PER_INVOCATION: u32 = ${per}u;
const LANE_ITEMS: u32 = ${sumOrder.chunkItems / sumOrder.lanes}u;
fn invocationLanes(code: u32, start: u32, size: u32, base: u32, t: u32) -> Pair {
  var lane: array<Pair, ${per}>;
  let end = min(base + CHUNK, size);
  for (var m = 0u; m < PER_INVOCATION; m++) {
    var r = identityPair(code);
    if (end - base == CHUNK) {
      // A full chunk: the lane's items are all loaded before the first is combined, so the loads
      // overlap (one at a time left a long segment at a third of the memory bandwidth); the combines
      // keep their order.
      var items: array<u32, LANE_ITEMS>;
      let first = start + base + t + m * TEAM;
      for (var k = 0u; k < LANE_ITEMS; k++) { items[k] = valuesIn[first + k * LANES]; }
      for (var k = 0u; k < LANE_ITEMS; k++) { r = combine(code, r, itemPair(items[k], base + t + m * TEAM + k * LANES, code)); }
    } else {
      for (var q = base + t + m * TEAM; q < end; q += LANES) { r = combine(code, r, itemPair(valuesIn[start + q], q, code)); }
    }
    lane[m] = r;
  }
  for (var h = PER_INVOCATION / 2u; h >= 1u; h = h / 2u) {
    for (var m = 0u; m < h; m++) { lane[m] = combine(code, lane[m], lane[m + h]); }
  }
  return lane[0];
}`;
}

/**
 * The tree over a team's invocations in workgroup memory (`teamBits`/`teamIndex`, WG words each):
 * halves first, as the lane tree's last levels. Every invocation of the workgroup must call it (it
 * has barriers); invocation t of the team at `first` gives `mine`; the team's result is at `first`.
 */
export const teamTreeWgsl = `
var<workgroup> teamBits: array<u32, WG>;
var<workgroup> teamIndex: array<u32, WG>;
fn teamTree(code: u32, mine: Pair, lid: u32, t: u32) -> Pair {
  teamBits[lid] = mine.bits;
  teamIndex[lid] = mine.index;
  workgroupBarrier();
  for (var half = TEAM / 2u; half >= 1u; half = half / 2u) {
    if (t < half) {
      let r = combine(code, Pair(teamBits[lid], teamIndex[lid]), Pair(teamBits[lid + half], teamIndex[lid + half]));
      teamBits[lid] = r.bits;
      teamIndex[lid] = r.index;
    }
    workgroupBarrier();
  }
  let result = Pair(teamBits[lid - t], teamIndex[lid - t]);
  workgroupBarrier();
  return result;
}`;

/**
 * The tree over chunk totals in order (ops.ts step 5) as they come, in one invocation: a binary
 * counter of pending subtrees, `levels[l]` holding 2^l chunks while bit l of `chunkCount` is set;
 * other ops combine in order. The CPU twin is `ChunkTree`.
 */
export const chunkTreeWgsl = `
var<private> levels: array<u32, 33>;
var<private> chunkCount: u32;
var<private> running: Pair;
fn startChunks(code: u32) { chunkCount = 0u; running = identityPair(code); }
fn pushChunk(code: u32, total: Pair) {
  if (code != ${OpCode.Sum}u) { running = combine(code, running, total); return; }
  var carry = total;
  var level = 0u;
  for (var n = chunkCount; (n & 1u) == 1u; n = n >> 1u) {
    carry = combine(code, Pair(levels[level], 0u), carry);
    level++;
  }
  levels[level] = carry.bits;
  chunkCount++;
}
fn chunksTotal(code: u32) -> Pair {
  if (code != ${OpCode.Sum}u) { return running; }
  var acc = identityPair(code);
  var first = true;
  var level = 0u;
  for (var n = chunkCount; n != 0u; n = n >> 1u) {
    if ((n & 1u) == 1u) {
      if (first) { acc = Pair(levels[level], 0u); } else { acc = combine(code, Pair(levels[level], 0u), acc); }
      first = false;
    }
    level++;
  }
  return acc;
}`;
