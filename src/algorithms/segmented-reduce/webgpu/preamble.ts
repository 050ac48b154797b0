import { f32SumWgsl, orderKeyInverseWgsl, orderKeyWgsl } from '../../../backends/webgpu/numerics.js';
import type { ProgramBinding } from '../../../backends/webgpu/program.js';
import { type SegmentShape, type TempAccess, readBits, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import { OpCode, identityBits, noIndex, sumOrder } from '../ops.js';
import { constantOpOf, extremeKeysOnly } from '../problem.js';
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
 *
 * Extremes compare by `orderKey` (numerics.ts), an unsigned key whose order is ops.ts's value order,
 * in four integer operations for f32.
 */

/** What a kernel binds. */
export interface ReduceShape extends SegmentShape {
  readonly temp: TempAccess;
  /** `valuesIn4`: the values bound a second time, as vec4<u32>. */
  readonly vector?: boolean;
}

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** Storage bindings of a kernel of this shape, in binding order. */
export function reduceBindings(facts: ReduceKernelFacts, shape: ReduceShape): ProgramBinding[] {
  const arrays: ProgramBinding[] = [
    { name: 'valuesIn', access: 'read', element: 'u32' },
    ...(shape.vector ? [{ name: 'valuesIn4', array: 'valuesIn', access: 'read', element: 'vec4<u32>' } as const] : []),
    { name: 'valuesOut', access: 'read_write', element: 'u32' },
  ];
  if (facts.indices) arrays.push({ name: 'indicesOut', access: 'read_write', element: 'u32' });
  return segmentBindings(facts, arrays, shape);
}

/** Uniform fields of a kernel of this shape (the kernel adds its own). */
export function reduceUniforms(facts: ReduceKernelFacts, shape: ReduceShape): string[] {
  return segmentUniforms(facts, shape);
}

/** The op code every segment of the run has, when the op is a constant (kernels are specialized on it). */
export function constantOpCode(facts: ReduceKernelFacts): number | undefined {
  return constantOpOf(facts.sources.op, facts.opOfOption);
}

/** A constant min or max with no index written: lanes keep keys only (teamReduceWgsl). */
function keysOnly(facts: ReduceKernelFacts): boolean {
  return extremeKeysOnly(facts.sources.op, facts.opOfOption, facts.indices);
}

function opFn(facts: ReduceKernelFacts): string {
  const fact = facts.sources.op;
  const options = facts.opOfOption.length > 0 ? facts.opOfOption : [0];
  if (fact.kind === 'constant') return `fn segmentOpOf(i: u32) -> u32 { return ${options[Math.min(fact.value, options.length - 1)]}u; }`;
  return `const opOfOption = array<u32, ${options.length}>(${options.map((o) => `${o}u`).join(', ')});
fn segmentOpOf(i: u32) -> u32 { return opOfOption[min(${readCount('op', fact, 'i')}, ${options.length - 1}u)]; }`;
}

/**
 * The value items past a chunk's end are read as, so that they need no test in the lanes' loop: a
 * sum's identity, and for an extreme the lowest-ranked value of its order (-Infinity for f32 max, NaN
 * for f32 min, the type's far end for integers), whose key (orderKey, flipped for min) is the least
 * there is: it never beats a best, which only a strictly better key replaces.
 */
function padFn(facts: ReduceKernelFacts): string {
  const worst = (code: OpCode) => (facts.valueType === 'f32' && code === OpCode.Min ? 0x7fc00000 : identityBits(code, facts.valueType));
  const constant = constantOpCode(facts);
  return `fn padBits(opCode: u32) -> u32 {
  let code = ${constant === undefined ? 'opCode' : `${constant}u`};
  if (code == ${OpCode.Sum}u) { return ${facts.valueType === 'f32' ? hex(0x80000000) : '0u'}; }
  return select(${hex(worst(OpCode.Max))}, ${hex(worst(OpCode.Min))}, takesMin(code));
}`;
}

/**
 * How an item enters a partial result, and how two partial results combine (sum, or the better
 * extreme). With a constant op every function reads that op, not its argument, so the compiler
 * drops the others.
 */
function combineFns(facts: ReduceKernelFacts): string {
  const f32 = facts.valueType === 'f32';
  const constant = constantOpCode(facts);
  const op = (name: string) => `let code = ${constant === undefined ? name : `${constant}u`};`;
  return `
fn takesMin(opCode: u32) -> bool { ${op('opCode')} return code == ${OpCode.Min}u || code == ${OpCode.ArgMin}u; }
${orderKeyWgsl(facts.valueType, 'orderKey', 'u32')}
// The key an extreme keeps the largest of: orderKey, flipped for min.
fn keyOf(bits: u32, code: u32) -> u32 { return orderKey(bits) ^ select(0u, 0xffffffffu, takesMin(code)); }
fn identityPair(opCode: u32) -> Pair {
  ${op('opCode')}
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? hex(0x80000000) : '0u'}, 0u); }
  return Pair(0u, NONE);
}
fn itemPair(bits: u32, index: u32, opCode: u32) -> Pair {
  ${op('opCode')}
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? 'flushF32(bits)' : 'bits'}, 0u); }
  return Pair(bits, index);
}
// a holds smaller indices than b where it matters (lanes, chunks in order); ties go to the smaller index.
fn combine(opCode: u32, a: Pair, b: Pair) -> Pair {
  ${op('opCode')}
  if (code == ${OpCode.Sum}u) { return Pair(${f32 ? 'addF32(a.bits, b.bits)' : 'a.bits + b.bits'}, 0u); }
  if (b.index == NONE) { return a; }
  if (a.index == NONE) { return b; }
  let ka = keyOf(a.bits, code);
  let kb = keyOf(b.bits, code);
  if (kb > ka || (kb == ka && b.index < a.index)) { return b; }
  return a;
}
${padFn(facts)}`;
}

/**
 * The lanes' partial results on LT (u32 or vec4<u32>: one lane or four): `Lanes.word` is a sum's
 * bits, or an extreme's key (keyOfLanes: an extreme's lanes keep keys, not bits, so that an item
 * costs one key and a compare; the team's total reads its bits again at its index).
 */
function laneCombineFns(facts: ReduceKernelFacts, lt: string): string {
  const f32 = facts.valueType === 'f32';
  const constant = constantOpCode(facts);
  const op = `let code = ${constant === undefined ? 'opCode' : `${constant}u`};`;
  return `
alias LT = ${lt};
alias LI = ${lt === 'u32' ? 'i32' : 'vec4<i32>'};
alias LF = ${lt === 'u32' ? 'f32' : 'vec4<f32>'};
struct Lanes { word: LT, index: LT }
${orderKeyWgsl(facts.valueType, 'orderKeyLanes', 'LT', 'LI')}
fn keyOfLanes(bits: LT, opCode: u32) -> LT { return orderKeyLanes(bits) ^ LT(select(0u, 0xffffffffu, takesMin(opCode))); }
fn flushLanes(bits: LT) -> LT { return select(bits, bits & LT(0x80000000u), (bits & LT(0x7f800000u)) == LT(0u)); }
fn addLanes(a: LT, b: LT) -> LT { return ${f32 ? 'flushLanes(bitcast<LT>(bitcast<LF>(a) + bitcast<LF>(b)))' : 'a + b'}; }
fn combineLanes(opCode: u32, a: Lanes, b: Lanes) -> Lanes {
  ${op}
  if (code == ${OpCode.Sum}u) { return Lanes(addLanes(a.word, b.word), LT(0u)); }
  ${
    keysOnly(facts)
      ? `// Keys only: the larger key; where a tie's bits differ, the team's end finds its first item.
  return Lanes(max(a.word, b.word), a.index);`
      : `let takeB = (b.index != LT(NONE)) & ((a.index == LT(NONE)) | (b.word > a.word) | ((b.word == a.word) & (b.index < a.index)));
  return Lanes(select(a.word, b.word, takeB), select(a.index, b.index, takeB));`
  }
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

/** Words an invocation of a team of `team` loads at a time: 4 when asked for and it owns at least 4 lanes. */
export function teamLoadWords(facts: ReduceKernelFacts, team: number): 1 | 4 {
  return facts.loadWords === 4 && sumOrder.lanes / team >= 4 ? 4 : 1;
}

/**
 * A team of `team` invocations reduces one chunk (ops.ts steps 3-4), for the 'subgroup', 'workgroup'
 * and chunk kernels. Invocation t of the team owns the lanes W t + j + W team g (j < W, the words
 * of one load; g < GROUPS), so the halves-first lane tree is: levels over g within the invocation,
 * then levels over t at distances team / 2, ..., 1 on each of the W slots (the same slot of two
 * invocations), then levels over j within invocation 0. Loads come BATCH rows at a time (all
 * issued before the first is added, so they overlap; each lane still adds its items left to right),
 * clamped to the chunk's last item, so a short chunk costs as many loads as it has rows. With W = 4
 * a load is one vec4<u32> (binding `valuesIn4`, a second view of `valuesIn`) where the chunk starts
 * at a multiple of 4 items, else four words.
 *
 * `teamLanes(code, start, n, base, t)`: invocation t's lanes of the n (0 <= n <= CHUNK) items at
 * segment-local `base` (absolute `start + base`), after the levels over g. `teamTree(code, start,
 * base, n, mine, lid, t)`: the levels over t — through workgroup memory (barriers: every invocation
 * of the workgroup calls it) at distances of at least the subgroup width, through subgroup shuffles
 * below it (subgroups are runs of consecutive invocation indices, as every driver forms them for a
 * 1-D workgroup) — then over j; the team's total at t = 0 (other invocations get none).
 */
export function teamReduceWgsl(facts: ReduceKernelFacts, team: number): string {
  const words = teamLoadWords(facts, team);
  const groups = sumOrder.lanes / (team * words);
  const batch = Math.max(1, Math.min(sumOrder.chunkItems / sumOrder.lanes, 64 / (groups * words)));
  const shuffle = Math.min(team, facts.shuffleWidth);
  const constant = constantOpCode(facts);
  const op = `let code = ${constant === undefined ? 'opCode' : `${constant}u`};`;
  const f32 = facts.valueType === 'f32';
  const vec = words === 4;
  const offsets = vec ? 'vec4<u32>(0u, 1u, 2u, 3u)' : '0u';
  const loadsAligned = vec
    ? `x[r * GROUPS + g] = valuesIn4[min((at >> 2u) + rowAt * (LANES / 4u) + t + TEAM * g, last >> 2u)];`
    : `x[r * GROUPS + g] = valuesIn[min(at + rowAt * LANES + t + TEAM * g, last)];`;
  const loadsWords = `let p = at + rowAt * LANES + 4u * t + 4u * TEAM * g;
          x[r * GROUPS + g] = vec4<u32>(valuesIn[min(p, last)], valuesIn[min(p + 1u, last)], valuesIn[min(p + 2u, last)], valuesIn[min(p + 3u, last)]);`;
  // A sum adds every item to acc. An extreme keeps, per lane, the largest key (keyOfLanes) in acc and
  // the row it came from (NONE before any): the first row enters as it is (a lane without a first item
  // has no items at all), later rows only when strictly better (a lane's items come in index order);
  // the index is made from the row at the end. An item is one key, one compare and two selects.
  // Items past the chunk's end are read as padBits (a sum's identity; an extreme's lowest-ranked
  // value, which is never strictly better), replaced in the batches that reach past it: full batches,
  // every batch of a full chunk, pay no test per item, and one loop serves full and short chunks (a
  // second copy of the loop would double the shader, and a software driver's compile time).
  // A constant sum masks each item instead (two operations an item): on an H200 one segment of 16M
  // f32 items took 0.0401 ms padded against 0.0372 masked (bench/reduce-scan-webgpu.ts, 2026-11-28).
  // Keys only (keysOnly: a constant min or max, no index written): an item is one key and a max, and
  // the team's end finds the bits from the key (see teamTree).
  const maskSum = constant === OpCode.Sum;
  const keys = keysOnly(facts);
  const step = (first: boolean, row: string) => {
    if (maskSum) {
      return `let valid = off[g] < LT(select(0u, n - (${row}) * LANES, (${row}) * LANES < n));
            acc[g] = addLanes(acc[g], ${f32 ? 'flushLanes(select(LT(0x80000000u), xv, valid))' : 'select(LT(0u), xv, valid)'});`;
    }
    const sum = `acc[g] = addLanes(acc[g], ${f32 ? 'flushLanes(xv)' : 'xv'});`;
    const extreme = `let k = keyOfLanes(xv, code);
            let take = ${first ? 'off[g] < LT(n)' : 'k > acc[g]'};
            acc[g] = select(acc[g], k, take);
            row[g] = select(row[g], LT(${row}), take);`;
    if (keys) return 'acc[g] = max(acc[g], keyOfLanes(xv, code));';
    return constant === OpCode.Sum ? sum : constant !== undefined ? extreme : `if (code == ${OpCode.Sum}u) { ${sum} } else { ${extreme} }`;
  };
  const batchOf = (loads: string, first: boolean) => {
    const peel = first && constant !== OpCode.Sum && !keys;
    return `{
        var x: array<LT, BATCH * GROUPS>;
        for (var r = 0u; r < BATCH; r++) {
          let rowAt = r0 + r;
          for (var g = 0u; g < GROUPS; g++) {
            ${loads}
          }
        }${
          maskSum
            ? ''
            : `
        if ((r0 + BATCH) * LANES > n) {
          for (var r = 0u; r < BATCH; r++) {
            let rowAt = r0 + r;
            let valid = LT(select(0u, n - rowAt * LANES, rowAt * LANES < n));
            for (var g = 0u; g < GROUPS; g++) { x[r * GROUPS + g] = select(pad, x[r * GROUPS + g], off[g] < valid); }
          }
        }`
        }${
          peel
            ? `
        for (var g = 0u; g < GROUPS; g++) {
          let xv = x[g];
          ${step(true, '0u')}
        }`
            : ''
        }
        for (var r = ${peel ? '1u' : '0u'}; r < BATCH; r++) {
          for (var g = 0u; g < GROUPS; g++) {
            let xv = x[r * GROUPS + g];
            ${step(false, 'r0 + r')}
          }
        }
      }`;
  };
  const loop = (loads: string) => `var r0 = 0u;
      ${batchOf(loads, true)}
      for (r0 = BATCH; r0 < rows; r0 += BATCH) ${batchOf(loads, false)}`;
  const needIndex = constant !== OpCode.Sum && !keys;
  const memory = team > shuffle;
  const shuffleLevels: string[] = [];
  for (let d = shuffle / 2; d >= 1; d /= 2) {
    shuffleLevels.push(
      `{ let o = Lanes(subgroupShuffleDown(v.word, ${d}u), ${needIndex ? `subgroupShuffleDown(v.index, ${d}u)` : 'v.index'}); let c = combineLanes(code, v, o); if (t < ${d}u) { v = c; } }`,
    );
  }
  // Over j: slot 0 with 2 and 1 with 3, then those two (components past them are not used).
  const slots = vec
    ? `let halves = combineLanes(code, v, Lanes(v.word.zwzw, v.index.zwzw));
  let both = combineLanes(code, halves, Lanes(halves.word.yyyy, halves.index.yyyy));
  let total = Pair(both.word.x, both.index.x);`
    : 'let total = Pair(v.word, v.index);';
  return `
const TEAM: u32 = ${team}u;
const GROUPS: u32 = ${groups}u;
const BATCH: u32 = ${batch}u;
${laneCombineFns(facts, vec ? 'vec4<u32>' : 'u32')}
fn teamLanes(opCode: u32, start: u32, n: u32, base: u32, t: u32) -> Lanes {
  ${op}
  let pad = LT(padBits(code));
  // A sum starts from its identity, an extreme from the pad's key (no item is worse).
  let identity = select(keyOfLanes(pad, code), pad, code == ${OpCode.Sum}u);
  var acc: array<LT, GROUPS>;${keys ? '' : '\n  var row: array<LT, GROUPS>;'}
  var off: array<LT, GROUPS>;
  for (var g = 0u; g < GROUPS; g++) {
    acc[g] = identity;${keys ? '' : '\n    row[g] = LT(NONE);'}
    off[g] = ${words}u * (t + TEAM * g) + ${offsets};
  }
  if (n > 0u) {
    let at = start + base;
    let last = at + n - 1u;
    let rows = (n + LANES - 1u) / LANES;
    ${vec ? `if ((at & 3u) == 0u) {
    ${loop(loadsAligned)}
    } else {
    ${loop(loadsWords)}
    }` : loop(loadsAligned)}
  }
  var lanes: array<Lanes, GROUPS>;
  for (var g = 0u; g < GROUPS; g++) {
    lanes[g] = Lanes(acc[g], ${keys ? 'LT(0u)' : 'select(base + row[g] * LANES + off[g], LT(NONE), row[g] == LT(NONE))'});
  }
  for (var h = GROUPS / 2u; h >= 1u; h = h / 2u) {
    for (var g = 0u; g < h; g++) { lanes[g] = combineLanes(code, lanes[g], lanes[g + h]); }
  }
  return lanes[0];
}
${memory ? `var<workgroup> treeWord: array<LT, WG>;${needIndex ? '\nvar<workgroup> treeIndex: array<LT, WG>;' : ''}` : ''}${keys ? keysOnlyDeclarations(facts) : ''}
fn teamTree(opCode: u32, start: u32, base: u32, n: u32, mine: Lanes, lid: u32, t: u32) -> Pair {
  ${op}
  var v = mine;
  ${
    memory
      ? `treeWord[lid] = v.word;${needIndex ? '\n  treeIndex[lid] = v.index;' : ''}
  workgroupBarrier();
  for (var d = TEAM / 2u; d >= ${shuffle}u; d = d / 2u) {
    if (t < d) {
      v = combineLanes(code, v, Lanes(treeWord[lid + d], ${needIndex ? 'treeIndex[lid + d]' : 'v.index'}));
      treeWord[lid] = v.word;${needIndex ? '\n      treeIndex[lid] = v.index;' : ''}
    }
    workgroupBarrier();
  }`
      : ''
  }
  ${shuffleLevels.join('\n  ')}
  ${slots}
  if (code == ${OpCode.Sum}u) { return total; }
  ${
    keys
      ? keysOnlyTotal(facts)
      : `// An extreme's bits, read again at its index: one load for the team, where its lanes kept keys.
  if (t != 0u || total.index == NONE) { return identityPair(code); }
  return Pair(valuesIn[start + total.index], total.index);`
  }
}`;
}

/**
 * Workgroup memory of the keys-only end of teamTree (f32: keys that values of other bits share).
 * TEAMS teams a workgroup: 'subgroup' and 'chunk' run several, 'workgroup' one.
 */
function keysOnlyDeclarations(facts: ReduceKernelFacts): string {
  const inverse = orderKeyInverseWgsl(facts.valueType, 'orderKeyInverse');
  if (facts.valueType !== 'f32') return `\n${inverse}`;
  return `
${inverse}
const TEAMS: u32 = WG / TEAM;
// Keys that values of different bits share (orderKeyInverseWgsl): -0 and +0's, and every NaN's.
fn sharedKey(key: u32) -> bool { return key == 0x7f800000u || key == 0xff000001u; }
// A team's extreme key where it is shared (flipped for min as the lanes' keys), else NO_TIE, which no
// shared key is (flipped: 0x807fffff, 0x00fffffe); the first index of an item with that key; whether
// any team of the workgroup has such a key.
const NO_TIE: u32 = 0u;
var<workgroup> teamTie: array<u32, TEAMS>;
var<workgroup> teamFirst: array<atomic<u32>, TEAMS>;
var<workgroup> anyTie: u32;`;
}

/**
 * The end of teamTree with keys only (`total.word`: the extreme's key at t = 0; the n items at
 * segment-local `base`): the bits follow from the key (orderKeyInverse), except where values of
 * different bits share it (f32: -0 and +0, NaNs with their payloads). Then the first item with that
 * key is the extreme (ties go to the smaller index), and the team looks through its chunk again for
 * it: each invocation its items t, t + TEAM, ... up to its first match, the team's least by a
 * workgroup atomic. Every invocation of the workgroup takes part in deciding whether any team needs
 * that (its barriers must be uniform), but only such a team loads anything: the common case pays two
 * barriers where it kept a row per lane and a select per item. The index the partial holds is the
 * chunk's first (problem.ts extremeKeysOnly): no index is written, and an earlier chunk's is smaller,
 * which is all the chunk tree's ties need.
 */
function keysOnlyTotal(facts: ReduceKernelFacts): string {
  const key = 'total.bits ^ select(0u, 0xffffffffu, takesMin(code))';
  if (facts.valueType !== 'f32') {
    return `// Integers: the key is the value's bits, reordered.
  if (t != 0u || n == 0u) { return identityPair(code); }
  return Pair(orderKeyInverse(${key}), base);`;
  }
  return `let team = lid / TEAM;
  if (t == 0u) {
    teamTie[team] = select(NO_TIE, total.bits, n > 0u && sharedKey(${key}));
    atomicStore(&teamFirst[team], NONE);
  }
  workgroupBarrier();
  if (lid == 0u) {
    var ties = 0u;
    for (var s = 0u; s < TEAMS; s++) { ties |= select(0u, 1u, teamTie[s] != NO_TIE); }
    anyTie = ties;
  }
  if (workgroupUniformLoad(&anyTie) != 0u) {
    let tie = teamTie[team];
    if (tie != NO_TIE) {
      for (var k = t; k < n; k += TEAM) {
        if (keyOf(valuesIn[start + base + k], code) == tie) {
          atomicMin(&teamFirst[team], k);
          break;
        }
      }
    }
    workgroupBarrier();
  }
  if (t != 0u || n == 0u) { return identityPair(code); }
  if (teamTie[team] != NO_TIE) { return Pair(valuesIn[start + base + atomicLoad(&teamFirst[team])], base); }
  return Pair(orderKeyInverse(${key}), base);`;
}

/**
 * The tree over chunk totals in order (ops.ts step 5) as they come, in one invocation per tree
 * (`trees` of them a workgroup, each a segment's): a binary counter of pending subtrees, level l of
 * tree `tree` holding 2^l chunks while bit l of its count is set; other ops combine in order. The
 * pending subtrees live in workgroup memory: as a private array indexed at run time they were the
 * device's local memory, which WGSL zero-initializes in every invocation at the start of the shader
 * (33 stores an invocation, in every workgroup of a launch), whether or not it ever merges. The CPU
 * twin is `ChunkTree`.
 */
export function chunkTreeWgsl(trees: number): string {
  return `
const TREE_LEVELS: u32 = 33u;
var<workgroup> chunkLevels: array<u32, ${33 * trees}>;
var<private> chunkCount: u32;
var<private> running: Pair;
fn startChunks(code: u32) { chunkCount = 0u; running = identityPair(code); }
fn pushChunk(tree: u32, code: u32, total: Pair) {
  if (code != ${OpCode.Sum}u) { running = combine(code, running, total); return; }
  let levels = tree * TREE_LEVELS;
  var carry = total;
  var level = 0u;
  for (var n = chunkCount; (n & 1u) == 1u; n = n >> 1u) {
    carry = combine(code, Pair(chunkLevels[levels + level], 0u), carry);
    level++;
  }
  chunkLevels[levels + level] = carry.bits;
  chunkCount++;
}
fn chunksTotal(tree: u32, code: u32) -> Pair {
  if (code != ${OpCode.Sum}u) { return running; }
  let levels = tree * TREE_LEVELS;
  var acc = identityPair(code);
  var first = true;
  var level = 0u;
  for (var n = chunkCount; n != 0u; n = n >> 1u) {
    if ((n & 1u) == 1u) {
      if (first) { acc = Pair(chunkLevels[levels + level], 0u); } else { acc = combine(code, Pair(chunkLevels[levels + level], 0u), acc); }
      first = false;
    }
    level++;
  }
  return acc;
}`;
}
