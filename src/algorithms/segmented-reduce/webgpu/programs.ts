import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { OpCode } from '../ops.js';
import { publishOnceWgsl, publishedWordsWgsl } from '../../../dispatch/published-words.js';
import { partialStatus } from '../problem.js';
import type { ReduceKernelFacts } from './facts.js';
import { type ReduceShape, chunkTreeWgsl, constantOpCode, reduceBindings, reducePreamble, reduceUniforms, teamLoadWords, teamReduceWgsl } from './preamble.js';

/*
 * The reduce programs, twins of cpu/kernels.ts. Every f32 sum follows the canonical order of ops.ts:
 * lanes of a chunk summed left to right, the lane tree (within an invocation's own lanes, then across
 * a team's invocations through workgroup memory and subgroup shuffles, then within the first
 * invocation's vec4 of lanes: preamble.ts teamReduceWgsl), the chunk tree in one invocation. A
 * constant op specializes every combine.
 *
 * - 'thread' (grid ceil(maxSegments / WG)): one invocation per segment of at most threadMaxItems
 *   items: the lanes are the items, their tree unrolled over threadMaxItems slots (the rest -0).
 * - 'subgroup' (grid ceil(maxSegments / (WG / team))) and 'workgroup' (grid maxSegments, team = WG):
 *   a team of invocations per segment, chunk by chunk. The chunk loop runs as many rounds as the
 *   workgroup's longest segment needs (a workgroup-uniform count), so every barrier is uniform.
 * - 'chunk' (grid maxSegments * ceil(chunks / (chunkRounds * WG / chunkTeamSize))): each team of
 *   the workgroup reduces chunkRounds consecutive chunks of one segment into its partial; on the
 *   device-side direct branch (device size bounds within one chunk) the first team of the segment's
 *   first workgroup reduces the whole segment and writes it.
 * - 'merge' (grid maxSegments): the segment's partials, each invocation the neighbours' tree of 8,
 *   a tree over the workgroup's invocations (neighbours first; shuffles below the subgroup width),
 *   then the chunk tree over these
 *   blocks of WG * 8 partials.
 */

function temp(facts: ReduceKernelFacts, partials: boolean, team?: number): ReduceShape {
  return { temp: partials || facts.startMode === 1 ? 'u32' : 'none', vector: team !== undefined && teamLoadWords(facts, team) === 4 };
}

function program(facts: ReduceKernelFacts, name: string, kernel: string, shape: ReduceShape, declarations: string, main: string, uniforms: string[] = []): WebGpuProgram {
  return {
    name,
    cacheKey: `reduce/${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...reduceUniforms(facts, shape), ...uniforms],
    bindings: reduceBindings(facts, shape),
    preamble: reducePreamble(facts, shape),
    declarations,
    main,
    usesSubgroups: facts.shuffleWidth > 1 && declarations.includes('subgroupShuffleDown'),
  };
}

/** 'thread': one invocation per segment. */
export function threadProgram(facts: ReduceKernelFacts, name: string): WebGpuProgram {
  const slots = facts.threadMaxItems;
  const f32 = facts.valueType === 'f32';
  const tree: string[] = [];
  for (let half = slots >> 1; half >= 1; half >>= 1) tree.push(`for (var j = 0u; j < ${half}u; j++) { v[j] = addF32(v[j], v[j + ${half}u]); }`);
  const sumF32 = f32
    ? `if (code == ${OpCode.Sum}u) {
    var v: array<u32, ${slots}>;
    for (var j = 0u; j < ${slots}u; j++) {
      var bits = 0x80000000u;
      if (j < e.y) { bits = flushF32(valuesIn[e.x + j]); }
      v[j] = bits;
    }
    ${tree.join('\n    ')}
    finish(i, code, e.y, Pair(v[0], 0u));
    return;
  }`
    : '';
  const main = `
  let i = workgroupIndex * WG + lid;
  if (failed() || i >= activeSegments()) { return; }
  let e = segmentExtent(i, ${slots}u);
  let code = segmentOpOf(i);
  ${sumF32}
  var r = identityPair(code);
  for (var j = 0u; j < e.y; j++) { r = combine(code, r, itemPair(valuesIn[e.x + j], j, code)); }
  finish(i, code, e.y, r);`;
  return program(facts, name, `thread,${slots}`, temp(facts, false), '', main);
}

/** Chunks of a segment of `size` items. */
const chunksOfWgsl = 'fn chunksOf(size: u32) -> u32 { return size / CHUNK + select(0u, 1u, size % CHUNK != 0u); }';

/** 'subgroup' (team = subgroupSize) and 'workgroup' (team = WG): a team of invocations per segment. */
export function teamProgram(facts: ReduceKernelFacts, name: string, team: number): WebGpuProgram {
  const segmentsPerWorkgroup = facts.workgroupSize / team;
  const declarations = `
${teamReduceWgsl(facts, team)}
${chunkTreeWgsl(segmentsPerWorkgroup)}
const SEGMENTS: u32 = ${segmentsPerWorkgroup}u;
var<workgroup> teamChunks: array<u32, SEGMENTS>;
var<workgroup> rounds: u32;
${chunksOfWgsl}`;
  const main = `
  let t = lid % TEAM;
  let i = workgroupIndex * SEGMENTS + lid / TEAM;
  var live = false;
  var start = 0u;
  var size = 0u;
  var code = 0u;
  if (!failed() && i < activeSegments()) {
    let e = segmentExtent(i, 0xffffffffu);
    start = e.x;
    size = e.y;
    code = segmentOpOf(i);
    live = true;
  }
  let chunks = chunksOf(size);
  if (t == 0u) { teamChunks[lid / TEAM] = chunks; }
  workgroupBarrier();
  if (lid == 0u) {
    var most = 0u;
    for (var s = 0u; s < SEGMENTS; s++) { most = max(most, teamChunks[s]); }
    rounds = most;
  }
  let count = workgroupUniformLoad(&rounds);
  startChunks(code);
  for (var c = 0u; c < count; c++) {
    let base = c * CHUNK;
    let n = select(0u, min(CHUNK, size - base), base < size);
    let total = teamTree(code, start, base, n, teamLanes(code, start, n, base, t), lid, t);
    if (t == 0u && c < chunks) { pushChunk(lid / TEAM, code, total); }
  }
  if (t == 0u && live) { finish(i, code, size, chunksTotal(lid / TEAM, code)); }`;
  return program(facts, name, `team,${team}`, temp(facts, false, team), declarations, main);
}

const segmentState = `
struct Entered { start: u32, size: u32, code: u32, go: u32, direct: u32 }
var<workgroup> entered: Entered;`;

/** The device-side branch of the multi-workgroup kernels (the CPU twin's directBranch()). */
function directExpr(facts: ReduceKernelFacts): string {
  if (facts.sizeBounds === undefined) return 'false';
  return `(count${facts.sizeBounds.toUpperCase()}(blockWord(u.sizeBoundsAt, u.sizeBoundsLen, 1u)) <= CHUNK)`;
}

/**
 * A segment's partials (one per team whose first chunk is inside it) and the chunk workgroups that
 * enter for it: those whose first chunk is inside it, and at least the first (problem.ts
 * `enteringChunkGroups`).
 */
const chunkCountsWgsl = `
${chunksOfWgsl}
fn partialsOf(size: u32) -> u32 { return (chunksOf(size) + ROUNDS - 1u) / ROUNDS; }
fn enteringGroups(size: u32) -> u32 { return max(1u, (chunksOf(size) + PER_WORKGROUP - 1u) / PER_WORKGROUP); }`;

/** The chunk kernels' constants: a workgroup's teams, each team's chunks (problem.ts chunksPerWorkgroup). */
function chunkConstants(facts: ReduceKernelFacts): string {
  return `
const ROUNDS: u32 = ${facts.chunkRounds}u;
const PER_WORKGROUP: u32 = ${(facts.workgroupSize / facts.chunkTeamSize) * facts.chunkRounds}u;`;
}

/**
 * The opening of the chunk kernels: the workgroup's segment and whether it enters (its first chunk is
 * inside the segment, or it is the segment's first workgroup), then each team's ROUNDS adjacent
 * chunks into its partial, \`partial\` at t = 0 where \`has\` (the team's first chunk is inside the
 * segment). A sum runs a round a chunk (the canonical lanes are a chunk's) and pushes each chunk's
 * total on the team's chunk tree, so that the partial is the tree over the team's chunks; a round
 * past the segment's end is not run (a workgroup-uniform test: the tree's padding is -0). An extreme,
 * in any order, reduces the team's chunks as one strip. Direct branch: the segment's first team
 * writes the whole segment in round 0 and the workgroup ends. teamTree is called at one place only
 * (a software driver inlines every call).
 */
function chunkOpening(facts: ReduceKernelFacts): string {
  const rounds = facts.chunkRounds;
  return `
  let groups = (u.chunks + PER_WORKGROUP - 1u) / PER_WORKGROUP;
  let i = workgroupIndex / groups;
  let group = workgroupIndex % groups;
  let t = lid % TEAM;
  let team = lid / TEAM;
  if (lid == 0u) {
    var s = Entered(0u, 0u, 0u, 0u, 0u);
    if (!failed() && i < activeSegments()) {
      let direct = ${directExpr(facts)};
      let e = segmentExtent(i, select(u.chunks * CHUNK, CHUNK, direct));
      s = Entered(e.x, e.y, segmentOpOf(i), select(0u, 1u, group < enteringGroups(e.y) || (direct && group == 0u)), select(0u, 1u, direct));
    }
    entered = s;
  }
  let s = workgroupUniformLoad(&entered);
  if (s.go == 0u || (s.direct == 1u && group != 0u)) { return; }
  let firstChunk = group * PER_WORKGROUP + team * ROUNDS;
  let has = firstChunk * CHUNK < s.size;
  var partial = identityPair(s.code);${
    rounds === 1
      ? `
  {
    let base = firstChunk * CHUNK;
    let n = select(0u, min(CHUNK, s.size - base), has);
    partial = teamTree(s.code, s.start, base, n, teamLanes(s.code, s.start, n, base, t), lid, t);
    if (s.direct == 1u) {
      if (lid == 0u) { finish(i, s.code, s.size, partial); }
      return;
    }
  }`
      : `
  startChunks(s.code);
  let strips = s.code != ${OpCode.Sum}u;
  let span = select(CHUNK, ROUNDS * CHUNK, strips);
  for (var round = 0u; round < select(ROUNDS, 1u, strips); round++) {
    if (round > 0u && group * PER_WORKGROUP + round >= chunksOf(s.size)) { break; }
    let base = (firstChunk + round) * CHUNK;
    let n = select(0u, min(span, s.size - base), base < s.size);
    let total = teamTree(s.code, s.start, base, n, teamLanes(s.code, s.start, n, base, t), lid, t);
    if (s.direct == 1u) {
      if (lid == 0u) { finish(i, s.code, s.size, total); }
      return;
    }
    if (t == 0u && n != 0u) { pushChunk(team, s.code, total); }
  }
  if (t == 0u && has) { partial = chunksTotal(team, s.code); }`
  }`;
}

/** WGSL: the first word of the team's partial, `words` words a partial (the segment's partials are team-indexed). */
const teamPartialAt = (words: number) => `u.partialsAt + (i * u.chunks + group * (WG / TEAM) + team) * ${words}u`;

/**
 * 'chunk': each team of a workgroup reduces chunkRounds adjacent chunks of one segment into its
 * partial (or, on the direct branch, the first team the whole segment).
 */
export function chunkProgram(facts: ReduceKernelFacts, name: string): WebGpuProgram {
  const team = facts.chunkTeamSize;
  const declarations = `
${teamReduceWgsl(facts, team)}
${chunkConstants(facts)}
${facts.chunkRounds > 1 ? chunkTreeWgsl(facts.workgroupSize / team) : ''}
${chunkCountsWgsl}
${segmentState}`;
  const main = `${chunkOpening(facts)}
  if (t != 0u || !has) { return; }
  let at = ${teamPartialAt(2)};
  temp[at] = partial.bits;
  temp[at + 1u] = partial.index;`;
  return program(facts, name, `chunk,${team}`, temp(facts, true, team), declarations, main, ['chunks', 'partialsAt']);
}

/**
 * The merge of a segment's partials, shared by 'merge' and 'chunk-merge': each invocation the
 * neighbours' tree of a block of BLOCK partials (8 in 'merge', `mergeBlock` in 'chunk-merge'), a tree
 * over the workgroup's invocations (neighbours first; shuffles below the subgroup width), then the
 * chunk tree over these runs of WG * BLOCK partials. `published`:
 * the partials are 'chunk-merge''s four published words (problem.ts), read with atomic loads and
 * taken once every word carries its flag; else plain [bits, index] pairs.
 */
function mergeWgsl(facts: ReduceKernelFacts, published: boolean): { declarations: string; body: (base: string) => string } {
  const shuffle = Math.min(facts.workgroupSize, facts.shuffleWidth);
  const sum = constantOpCode(facts) === OpCode.Sum;
  const levels: string[] = [];
  for (let w = 1; w < shuffle; w *= 2) {
    levels.push(
      `{ let o = Pair(subgroupShuffleDown(v.bits, ${w}u), ${sum ? '0u' : `subgroupShuffleDown(v.index, ${w}u)`}); let c = combine(code, v, o); if (lid % ${2 * w}u == 0u) { v = c; } }`,
    );
  }
  const shuffles = levels.join('\n  ');
  const memory =
    facts.workgroupSize > shuffle
      ? `pairBits[lid] = v.bits;
  pairIndex[lid] = v.index;
  workgroupBarrier();
  for (var w = ${shuffle}u; w < WG; w = w * 2u) {
    if (lid % (2u * w) == 0u) {
      let r = combine(code, Pair(pairBits[lid], pairIndex[lid]), Pair(pairBits[lid + w], pairIndex[lid + w]));
      pairBits[lid] = r.bits;
      pairIndex[lid] = r.index;
    }
    workgroupBarrier();
  }
  v = Pair(pairBits[0], pairIndex[0]);
  workgroupBarrier();`
      : '';
  const block = Array.from({ length: 8 }, (_, k) => k);
  const loads = block.map((k) => `  let at${k} = base + min(first + ${k}u, last) * 2u;\n  let b${k} = temp[at${k}];${sum ? '' : `\n  let i${k} = temp[at${k} + 1u];`}`).join('\n');
  const pairs = block.map((k) => `  let p${k} = Pair(select(identity.bits, b${k}, first + ${k}u < used), ${sum ? '0u' : `select(identity.index, i${k}, first + ${k}u < used)`});`).join('\n');
  // 'merge' (its own launch): the 8 partials' loads all issued before the first is used (one at a
  // time, a lone workgroup waits out each load's latency in turn); a partial past the last is read at
  // the last and dropped. 'chunk-merge': blocks of mergeBlock partials (facts.ts: as few as the
  // longest segment's partials need, at most 8), one partial at a time, each awaited until its words
  // are published (the loads in flight at once held registers in every workgroup of the launch,
  // though only the last to arrive merges: the 16M sum's one launch took 0.047 ms with them and 0.031
  // this way, H200, 2026-11-29).
  const blockOf = published
    ? `fn blockOf(base: u32, first: u32, used: u32, code: u32) -> Pair {
  let identity = identityPair(code);
  var pairLeft = identity;
  var quadLeft = identity;
  var block = identity;
  for (var k = 0u; k < BLOCK; k++) {
    var x = identity;
    if (first + k < used) { x = publishedPartial(base + (first + k) * 4u); }
    if (BLOCK == 1u) { return x; }
    if ((k & 1u) == 0u) { pairLeft = x; continue; }
    let pair = combine(code, pairLeft, x);
    if (BLOCK == 2u) { return pair; }
    if ((k & 2u) == 0u) { quadLeft = pair; continue; }
    let quad = combine(code, quadLeft, pair);
    if (k == 3u) { block = quad; } else { block = combine(code, block, quad); }
  }
  return block;
}`
    : `fn blockOf(base: u32, first: u32, used: u32, code: u32) -> Pair {
  let identity = identityPair(code);
  let last = max(used, 1u) - 1u;
${loads}
${pairs}
  // Neighbours first, written out: a private array indexed in a loop is the device's local memory.
  let q0 = combine(code, p0, p1);
  let q1 = combine(code, p2, p3);
  let q2 = combine(code, p4, p5);
  let q3 = combine(code, p6, p7);
  return combine(code, combine(code, q0, q1), combine(code, q2, q3));
}`;
  const awaitPublished = published
    ? `
fn publishedPartial(at: u32) -> Pair { return Pair(awaitPublished(at), ${sum ? '0u' : 'awaitPublished(at + 2u)'}); }`
    : '';
  const declarations = `
const BLOCK: u32 = ${published ? facts.mergeBlock : 8}u;
${published ? `${publishedWordsWgsl}
${publishOnceWgsl(partialStatus)}` : ''}
var<workgroup> pairBits: array<u32, WG>;
var<workgroup> pairIndex: array<u32, WG>;${awaitPublished}
// Neighbours first over BLOCK partials (the padding -0, or none), as the chunk tree's lowest levels.
${blockOf}
// Neighbours first over the workgroup's blocks, as the chunk tree's next levels: through subgroup
// shuffles while the pair is closer than the subgroup width, then through workgroup memory. The
// total at lid 0.
fn blocksTree(code: u32, mine: Pair, lid: u32) -> Pair {
  var v = mine;
  ${shuffles}
  ${memory}
  return v;
}`;
  const body = (base: string) => `
  let used = partialsOf(s.size);
  let partials = ${base};
  startChunks(s.code);
  for (var first = 0u; first < used; first += WG * BLOCK) {
    let block = blockOf(partials, first + lid * BLOCK, used, s.code);
    let total = blocksTree(s.code, block, lid);
    if (lid == 0u) { pushChunk(0u, s.code, total); }
  }
  if (lid == 0u) { finish(i, s.code, s.size, chunksTotal(0u, s.code)); }`;
  return { declarations, body };
}

/** 'merge': a segment's partials combined in order (the chunk tree), then its result. */
export function mergeProgram(facts: ReduceKernelFacts, name: string): WebGpuProgram {
  const merge = mergeWgsl(facts, false);
  const declarations = `${merge.declarations}
${chunkTreeWgsl(1)}
${chunkConstants(facts)}
${chunkCountsWgsl}
${segmentState}`;
  const main = `
  let i = workgroupIndex;
  if (lid == 0u) {
    var s = Entered(0u, 0u, 0u, 0u, 0u);
    if (!failed() && i < activeSegments() && !${directExpr(facts)}) {
      let e = segmentExtent(i, u.chunks * CHUNK);
      s = Entered(e.x, e.y, segmentOpOf(i), 1u, 0u);
    }
    entered = s;
  }
  let s = workgroupUniformLoad(&entered);
  if (s.go == 0u) { return; }${merge.body('u.partialsAt + i * u.chunks * 2u')}`;
  return program(facts, name, 'merge', temp(facts, true), declarations, main, ['chunks', 'partialsAt']);
}

/**
 * 'chunk-merge': 'chunk' with published partials, then each workgroup's arrival in its segment's
 * word of `arrivals` (after a barrier: the workgroup's stores are all issued when it counts itself);
 * the workgroup that brings the word to the segment's entering workgroups merges as 'merge' does,
 * reading the published words. No workgroup waits for another to run: the last to arrive waits only
 * for stores already issued to become visible, so the kernel needs no forward progress between
 * workgroups.
 */
export function chunkMergeProgram(facts: ReduceKernelFacts, name: string): WebGpuProgram {
  const team = facts.chunkTeamSize;
  const merge = mergeWgsl(facts, true);
  const declarations = `
${teamReduceWgsl(facts, team)}
${chunkConstants(facts)}
${merge.declarations}
${chunkTreeWgsl(facts.chunkRounds > 1 ? facts.workgroupSize / team : 1)}
${chunkCountsWgsl}
${segmentState}
var<workgroup> lastToArrive: u32;`;
  const main = `${chunkOpening(facts)}
  if (t == 0u && has) {
    let at = ${teamPartialAt(4)};
    publish(at, partial.bits);
    publish(at + 2u, partial.index);
  }
  workgroupBarrier();
  if (lid == 0u) {
    let arrived = atomicAdd(&temp[u.arrivalsAt + i], 1u) + 1u;
    lastToArrive = select(0u, 1u, arrived == enteringGroups(s.size));
  }
  if (workgroupUniformLoad(&lastToArrive) == 0u) { return; }${merge.body('u.partialsAt + i * u.chunks * 4u')}`;
  return program(facts, name, `chunk-merge,${team}`, { temp: 'atomic', vector: teamLoadWords(facts, team) === 4 }, declarations, main, ['chunks', 'partialsAt', 'arrivalsAt']);
}
