import { orderKeyWgsl } from '../../../backends/webgpu/numerics.js';
import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { publishOnceWgsl, publishedWordsWgsl } from '../../../dispatch/published-words.js';
import { publishedEntryStatus, publishedEntryWords } from '../problem.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * 'reduce' (kMax <= reduceMaxK; grid maxSegments * chunks): workgroup w handles chunk w % chunks of
 * segment w / chunks (reduceChunkItems keys). Each invocation keeps a register top-K of its strided
 * keys (K = the constant k, else reduceMaxK, rounded up to a power of two: an unrolled insertion into a sorted list, best first),
 * then the workgroup merges the lists in a tree (within subgroups through shuffles where there are
 * any, then in workgroup memory): each merge of two sorted lists is a branch-free bitonic merge. One chunk: the workgroup writes the outputs. Several:
 * it writes its best `take` pairs (ordered key, index) to slot `partials`, padded with the sentinel
 * (0, 0xFFFFFFFF), and 'reduce-merge' merges them; or ('reduce-chunk-merge', policy
 * reduceLastChunkMerges) it publishes them and the segment's last workgroup to finish merges.
 *
 * Keys are read as vec4<u32> (a second binding of the keys buffer, whose allocation is whole 16-byte
 * words): each invocation loads UNROLL aligned quads before it inserts any, so a long segment has
 * 16 * UNROLL bytes in flight per invocation; only the whole quads inside the chunk are read so, with
 * no test per key, and the at most 3 + 3 keys around them one per invocation. Over long segments
 * the policy lengthens the chunk (reduceChunkItemsFor) so the grid is about one wave of the device:
 * a workgroup's fixed cost (segment, merge, partial) is paid per wave, not per 4096 keys.
 *
 * Segments of at most policy.reduceSmallSegmentItems keys (facts.reducePerInvocation) get one
 * invocation each instead: workgroup w handles segments [w * WG, (w + 1) * WG), each invocation its
 * own register list, no merge, no barrier; it reads its segment's whole quads as vec4 (the policy
 * narrows WG so the segments spread over the device, policy.ts perInvocationWorkgroupSize).
 *
 * Workgroup memory: (workgroupSize / 2) * K * 8 bytes (8 KiB for K = 8), within every policy's budget.
 */

/** Quads (vec4 loads) an invocation issues before it inserts their keys. */
const UNROLL = 4;

/**
 * The list length kernels of this run keep in registers: k (constant) or min(kMax, reduceMaxK),
 * rounded up to a power of two. Greedy decoding passes k = 1 as a uniform: its list has one entry,
 * not reduceMaxK (fewer registers, no merge network).
 */
export function registerListLength(facts: TopKKernelFacts): number {
  const k = facts.sources.k.kind === 'constant' ? Math.max(1, Math.min(facts.sources.k.value, facts.reduceListK)) : facts.reduceListK;
  return 2 ** Math.ceil(Math.log2(k));
}

/** UNROLL quad loads at q, q + WG, ..., then their inserts (index order within each invocation). */
function unrolledQuads(): string {
  const loads = Array.from({ length: UNROLL }, (_, j) => `        let v${j} = keysIn4[q + ${j}u * WG];`);
  const inserts = Array.from({ length: UNROLL }, (_, j) => `        insertQuad(v${j}, (q + ${j}u * WG) * 4u - s.start, s.direction);`);
  return [...loads, ...inserts].join('\n');
}

/**
 * The register lists' keys: `listKey`, orderedKey's order and ties in fewer operations per key
 * (numerics.ts orderKeyWgsl), since every key of the chunk is made one; they are only compared, and
 * a partial's key is written as orderedKey of its bits, read again at its index. Then the inserts of
 * the four keys of a quad whose first key has segment-local index `index`.
 */
function listKeyWgsl(facts: TopKKernelFacts): string {
  return `${orderKeyWgsl(facts.keyType, 'listOrderKey', 'u32')}
fn listKey(bits: u32, direction: u32) -> u32 { return listOrderKey(bits) ^ (0u - direction); }
fn insertQuad(v: vec4<u32>, index: u32, direction: u32) {
  insert(listKey(v.x, direction), index);
  insert(listKey(v.y, direction), index + 1u);
  insert(listKey(v.z, direction), index + 2u);
  insert(listKey(v.w, direction), index + 3u);
}`;
}

/** Unrolled insertion of (key, index) into the sorted register list of length `length`. */
function insertFn(length: number): string {
  const place = (pos: number, indent: string): string => {
    if (pos === 0) return `${indent}topKey[0] = key; topIndex[0] = index;\n`;
    return (
      `${indent}if (better(key, index, topKey[${pos - 1}], topIndex[${pos - 1}])) {\n` +
      `${indent}  topKey[${pos}] = topKey[${pos - 1}]; topIndex[${pos}] = topIndex[${pos - 1}];\n` +
      place(pos - 1, `${indent}  `) +
      `${indent}} else {\n${indent}  topKey[${pos}] = key; topIndex[${pos}] = index;\n${indent}}\n`
    );
  };
  return `fn insert(key: u32, index: u32) {\n  if (!better(key, index, topKey[${length - 1}], topIndex[${length - 1}])) { return; }\n${place(length - 1, '  ')}}`;
}

/**
 * Unrolled merge of the sorted list `other` into the sorted list `top`, keeping the best `length`:
 * top[j] vs other[length - 1 - j] keeps exactly the best `length` of both as a bitonic sequence,
 * which half-cleaners (length/2 compare-exchanges per stage, log2(length) stages) sort. No branches
 * that diverge, register indices all constant.
 */
function mergeFn(length: number): string {
  const lines: string[] = [];
  for (let j = 0; j < length; j++) {
    const o = length - 1 - j;
    lines.push(
      `  { let b = better(otherKey[${o}], otherIndex[${o}], topKey[${j}], topIndex[${j}]); topKey[${j}] = select(topKey[${j}], otherKey[${o}], b); topIndex[${j}] = select(topIndex[${j}], otherIndex[${o}], b); }`,
    );
  }
  for (let stride = length / 2; stride >= 1; stride /= 2) {
    for (let i = 0; i < length; i++) {
      if ((i & stride) !== 0) continue;
      const l = i + stride;
      lines.push(
        `  { let b = better(topKey[${l}], topIndex[${l}], topKey[${i}], topIndex[${i}]); let k = topKey[${i}]; let x = topIndex[${i}]; ` +
          `topKey[${i}] = select(k, topKey[${l}], b); topIndex[${i}] = select(x, topIndex[${l}], b); topKey[${l}] = select(topKey[${l}], k, b); topIndex[${l}] = select(topIndex[${l}], x, b); }`,
      );
    }
  }
  return `fn mergeOther() {\n${lines.join('\n')}\n}`;
}

/** One invocation's register list (best first) and its insertion. */
function registerListWgsl(length: number): string {
  const each = (body: (j: number) => string) => Array.from({ length }, (_, j) => body(j)).join(' ');
  return `
const K: u32 = ${length}u;
var<private> topKey: array<u32, ${length}>;
var<private> topIndex: array<u32, ${length}>;
fn better(ka: u32, ia: u32, kb: u32, ib: u32) -> bool { return ka > kb || (ka == kb && ia < ib); }
fn clearList() { ${each((j) => `topKey[${j}] = 0u; topIndex[${j}] = SENTINEL;`)} }
${insertFn(length)}`;
}

/** Register lists, their insertion and merging, and the workgroup merge (`mergeWorkgroup`). */
export function registerTopKWgsl(length: number, workgroupSize: number, subgroups: boolean): string {
  const lists = Math.max(1, workgroupSize / 2);
  const each = (body: (j: number) => string, separator = ' ') => Array.from({ length }, (_, j) => body(j)).join(separator);
  const common = `${registerListWgsl(length)}
var<private> otherKey: array<u32, ${length}>;
var<private> otherIndex: array<u32, ${length}>;
var<workgroup> listKeys: array<u32, ${lists * length}>;
var<workgroup> listIndices: array<u32, ${lists * length}>;
${mergeFn(length)}
fn storeList(at: u32) { ${each((j) => `listKeys[at + ${j}u] = topKey[${j}]; listIndices[at + ${j}u] = topIndex[${j}];`)} }
fn loadList(at: u32) { ${each((j) => `topKey[${j}] = listKeys[at + ${j}u]; topIndex[${j}] = listIndices[at + ${j}u];`)} }
fn loadOther(at: u32) { ${each((j) => `otherKey[${j}] = listKeys[at + ${j}u]; otherIndex[${j}] = listIndices[at + ${j}u];`)} }
// A tree over the lists of invocations [0, count): at each level the upper half hand theirs over.
fn mergeTree(lid: u32, count: u32) {
  for (var step = 1u; step < count; step = step << 1u) {
    let group = lid & (2u * step - 1u);
    let at = (lid / (2u * step)) * K;
    if (lid < count && group == step) { storeList(at); }
    workgroupBarrier();
    if (lid < count && group == 0u) { loadOther(at); mergeOther(); }
    workgroupBarrier();
  }
}`;
  if (!subgroups) {
    return `${common}
// Leaves the workgroup's best K in listKeys/listIndices [0, K).
fn mergeWorkgroup(lid: u32) {
  mergeTree(lid, WG);
  if (lid == 0u) { storeList(0u); }
  workgroupBarrier();
}`;
  }
  // Top-K of a union does not depend on the pairing, so the subgroup levels may pair lanes however
  // the device forms subgroups; results stay bit-identical to the workgroup-memory tree.
  return `${common}
var<workgroup> leaders: atomic<u32>;
var<workgroup> leaderCount: u32;
// Leaves the workgroup's best K in listKeys/listIndices [0, K): first within each subgroup through
// shuffles (every lane merges; lanes at multiples of 2 step hold valid lists after a level), then a
// tree over the subgroups' lists in workgroup memory.
fn mergeWorkgroup(lid: u32, lane: u32, width: u32) {
  if (lid == 0u) { atomicStore(&leaders, 0u); }
  for (var step = 1u; step < width; step = step << 1u) {
    ${each((j) => `otherKey[${j}] = subgroupShuffleDown(topKey[${j}], step); otherIndex[${j}] = subgroupShuffleDown(topIndex[${j}], step);`, '\n    ')}
    mergeOther();
  }
  workgroupBarrier();
  if (lane == 0u) { storeList(atomicAdd(&leaders, 1u) * K); }
  workgroupBarrier();
  if (lid == 0u) { leaderCount = atomicLoad(&leaders); }
  let count = workgroupUniformLoad(&leaderCount);
  clearList();
  if (lid < count) { loadList(lid * K); }
  workgroupBarrier();
  mergeTree(lid, count);
  if (lid == 0u) { storeList(0u); }
  workgroupBarrier();
}`;
}

const outputsLoop = `
  for (var j = lid; j < u.kMax; j += WG) {
    if (j < s.take) { writeResult(out + j, s.start, listIndices[j]); } else { writeFill(out + j, s.direction); }
  }`;

/** The per-invocation reduce (facts.reducePerInvocation): one segment per invocation, no merge. */
function reducePerInvocationProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const kernelShape: KernelShape = { keys: true, keys4: true, outputs: true, temp: facts.startMode === 1 ? 'u32' : 'none', branch: 'none' };
  const length = registerListLength(facts);
  // The whole aligned quads of the segment as vec4 loads, four issued before any is used (a router's
  // 16 keys are one round trip instead of four), the < 4 keys on either side one by one.
  const main = `
  let segment = workgroupIndex * WG + lid;
  if (failed() || segment >= activeSegments()) { return; }
  let s = resolveSegment(segment, mulSat(u.chunks, CHUNK));
  clearList();
  if (s.take > 0u) {
    let a = s.start;
    let b = s.start + s.size;
    let qa = (a + 3u) >> 2u;
    let qb = b >> 2u;
    if (qa < qb) {
      var q = qa;
      for (; q + 4u <= qb; q += 4u) {
        let v0 = keysIn4[q];
        let v1 = keysIn4[q + 1u];
        let v2 = keysIn4[q + 2u];
        let v3 = keysIn4[q + 3u];
        insertQuad(v0, q * 4u - a, s.direction);
        insertQuad(v1, q * 4u + 4u - a, s.direction);
        insertQuad(v2, q * 4u + 8u - a, s.direction);
        insertQuad(v3, q * 4u + 12u - a, s.direction);
      }
      for (; q < qb; q++) { insertQuad(keysIn4[q], q * 4u - a, s.direction); }
    }
    let headEnd = min(b, qa * 4u);
    for (var i = a; i < headEnd; i++) { insert(listKey(keysIn[i], s.direction), i - a); }
    for (var i = max(headEnd, qb * 4u); i < b; i++) { insert(listKey(keysIn[i], s.direction), i - a); }
  }
  let out = segment * u.kMax;
  for (var j = 0u; j < u.kMax; j++) {
    if (j < s.take) { writeResult(out + j, s.start, topIndex[min(j, K - 1u)]); } else { writeFill(out + j, s.direction); }
  }`;
  return {
    name,
    cacheKey: `reduce|per-invocation|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, kernelShape), 'chunks'],
    bindings: kernelBindings(facts, kernelShape),
    preamble: topKPreamble(facts, kernelShape),
    declarations: `const CHUNK: u32 = ${facts.reduceChunkItems}u;\n${registerListWgsl(length)}\n${listKeyWgsl(facts)}`,
    main,
  };
}

/**
 * 'reduce-chunk-merge' after the workgroup's merge: its list published in `partials` (problem.ts
 * publishedEntryWords a pair), then its arrival in its segment's word of `arrivals` (after a
 * barrier: the workgroup's stores are all issued when it counts itself). The workgroup that brings
 * the word to `chunks` merges every chunk's list as 'reduce-merge' does, reading each word once both
 * halves carry the status: it waits only for stores already issued to become visible, so no
 * workgroup waits for another to run (no forward progress between workgroups is needed).
 */
function chunkMergeWgsl(merge: string): string {
  return `${storeListWgsl('ENTRY_WORDS', 'publish(listAt + ENTRY_WORDS * j, key);\n    publish(listAt + ENTRY_WORDS * j + 2u, index);')}
  workgroupBarrier();
  if (lid == 0u) {
    let arrived = atomicAdd(&temp[u.arrivalsAt + segment], 1u) + 1u;
    lastToArrive = select(0u, 1u, arrived == chunks);
  }
  if (workgroupUniformLoad(&lastToArrive) == 0u) { return; }
  // Every entry of the segment's lists is spread over the invocations, MERGE_LOADS each issued
  // before any is used (not a list at a time, one dependent round trip per entry); the best K of a
  // union do not depend on the order.
  clearList();
  if (s.take > 0u) {
    let base = u.partialsAt + segment * chunks * u.kMax * ENTRY_WORDS;
    let entries = chunks * u.kMax;
    for (var e = lid; e < entries; e += MERGE_LOADS * WG) {
${mergeLoads.map((r) => `      let e${r} = min(e + ${r}u * WG, entries - 1u) * ENTRY_WORDS;
      let w${r} = vec4<u32>(atomicLoad(&temp[base + e${r}]), atomicLoad(&temp[base + e${r} + 1u]), atomicLoad(&temp[base + e${r} + 2u]), atomicLoad(&temp[base + e${r} + 3u]));`).join('\n')}
${mergeLoads.map((r) => `      if (e + ${r}u * WG < entries && (e + ${r}u * WG) % u.kMax < s.take) { insertEntry(base + e${r}, w${r}); }`).join('\n')}
    }
  }
  mergeWorkgroup(${merge});`;
}

/**
 * WGSL: the workgroup's list (its best `take` after the merge, then the sentinel (0, 0xFFFFFFFF) up
 * to kMax) as (ordered key, index) entries of `entryWords` words from `listAt`, its place in
 * `partials`, each stored by `store` (which reads `key`, `index`, `j`).
 */
function storeListWgsl(entryWords: string, store: string): string {
  return `
  let listAt = u.partialsAt + workgroupIndex * u.kMax * ${entryWords};
  for (var j = lid; j < u.kMax; j += WG) {
    var key = 0u;
    var index = SENTINEL;
    if (j < s.take && listIndices[j] != SENTINEL) {
      index = listIndices[j];
      key = orderedKey(keysIn[s.start + index], s.direction);
    }
    ${store}
  }`;
}

/** Entries of the merge's lists an invocation loads at once. */
const MERGE_LOADS = 4;
const mergeLoads = Array.from({ length: MERGE_LOADS }, (_, r) => r);

/** WGSL of 'reduce-chunk-merge''s published words. */
const chunkMergeDeclarations = `${publishedWordsWgsl}
${publishOnceWgsl(publishedEntryStatus)}
const ENTRY_WORDS: u32 = ${publishedEntryWords}u;
const ENTRY_STATUS: u32 = ${publishedEntryStatus}u;
var<workgroup> lastToArrive: u32;
const MERGE_LOADS: u32 = ${MERGE_LOADS}u;
// The entry whose four words from word at were read as w: each half read again until it is published.
fn insertEntry(at: u32, w: vec4<u32>) {
  var key = publishedValue(w.x, w.y);
  var index = publishedValue(w.z, w.w);
  if (publishedStatus(w.x, w.y) != ENTRY_STATUS) { key = awaitPublished(at); }
  if (publishedStatus(w.z, w.w) != ENTRY_STATUS) { index = awaitPublished(at + 2u); }
  if (index != SENTINEL) { insert(key, index); }
}`;

/**
 * The reduce program for these facts: `multiChunk`, segments span several chunks (each workgroup's
 * list goes to `partials`); `merging`, and the last chunk workgroup of a segment merges them
 * ('reduce-chunk-merge').
 */
export function reduceProgram(facts: TopKKernelFacts, name: string, multiChunk: boolean, merging = false): WebGpuProgram {
  if (facts.reducePerInvocation) return reducePerInvocationProgram(facts, name);
  const kernelShape: KernelShape = { keys: true, keys4: true, outputs: true, temp: merging ? 'atomic' : multiChunk || facts.startMode === 1 ? 'u32' : 'none', branch: 'none' };
  const length = registerListLength(facts);
  const merge = facts.subgroups ? 'lid, subgroupLane, subgroupWidth' : 'lid';
  const uniforms = [...kernelUniforms(facts, kernelShape), 'chunks'];
  if (multiChunk) uniforms.push('partialsAt');
  if (merging) uniforms.push('arrivalsAt');
  const main = `
  let chunks = u.chunks;
  let segment = workgroupIndex / chunks;
  let chunk = workgroupIndex - segment * chunks;
  let s = enterSegment(segment, mulSat(chunks, CHUNK), lid);
  if (s.go == 0u) { return; }
  clearList();
  let begin = chunk * CHUNK;
  let to = min(begin + CHUNK, s.size);
  if (s.take > 0u && begin < to) {
    // Keys [a, b) of keysIn: whole aligned quads [qa, qb) read as vec4 with no per-key bounds test,
    // UNROLL loads in flight before the first insert; the < 4 keys before qa and after qb one each.
    let a = s.start + begin;
    let b = s.start + to;
    let qa = (a + 3u) >> 2u;
    let qb = b >> 2u;
    var q = qa + lid;
    if (qa < qb) {
      for (; q + (UNROLL - 1u) * WG < qb; q += UNROLL * WG) {
${unrolledQuads()}
      }
      for (; q < qb; q += WG) { insertQuad(keysIn4[q], q * 4u - s.start, s.direction); }
    }
    let headEnd = min(b, qa * 4u);
    if (a + lid < headEnd) { insert(listKey(keysIn[a + lid], s.direction), a + lid - s.start); }
    let tail = max(headEnd, qb * 4u) + lid;
    if (tail < b) { insert(listKey(keysIn[tail], s.direction), tail - s.start); }
  }
  mergeWorkgroup(${merge});
  ${
    merging
      ? chunkMergeWgsl(merge)
      : multiChunk
      ? `if (chunks > 1u) {${storeListWgsl('2u', 'temp[listAt + 2u * j] = key;\n    temp[listAt + 2u * j + 1u] = index;')}
    return;
  }`
      : ''
  }
  let out = segment * u.kMax;${outputsLoop}`;
  return {
    name,
    cacheKey: `reduce|${multiChunk}|${merging}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms,
    bindings: kernelBindings(facts, kernelShape),
    preamble: topKPreamble(facts, kernelShape),
    declarations: `const CHUNK: u32 = ${facts.reduceChunkItems}u;\nconst UNROLL: u32 = ${UNROLL}u;\n${registerTopKWgsl(length, facts.workgroupSize, facts.subgroups)}\n${listKeyWgsl(facts)}${merging ? `\n${chunkMergeDeclarations}` : ''}`,
    usesSubgroups: facts.subgroups,
    main,
  };
}

/** 'reduce-merge' (grid maxSegments): merges a segment's chunk lists from `partials` and writes its outputs. */
export function reduceMergeProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const kernelShape: KernelShape = { keys: true, outputs: true, temp: 'u32', branch: 'none' };
  const length = registerListLength(facts);
  const merge = facts.subgroups ? 'lid, subgroupLane, subgroupWidth' : 'lid';
  const main = `
  let chunks = u.chunks;
  let segment = workgroupIndex;
  let s = enterSegment(segment, mulSat(chunks, CHUNK), lid);
  if (s.go == 0u) { return; }
  clearList();
  if (s.take > 0u) {
    for (var c = lid; c < chunks; c += WG) {
      let base = u.partialsAt + (segment * chunks + c) * u.kMax * 2u;
      for (var j = 0u; j < s.take; j++) {
        let index = temp[base + 2u * j + 1u];
        if (index == SENTINEL) { break; }
        let key = temp[base + 2u * j];
        if (!better(key, index, topKey[K - 1u], topIndex[K - 1u])) { break; }
        insert(key, index);
      }
    }
  }
  mergeWorkgroup(${merge});
  let out = segment * u.kMax;${outputsLoop}`;
  return {
    name,
    cacheKey: `reduce-merge|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, kernelShape), 'chunks', 'partialsAt'],
    bindings: kernelBindings(facts, kernelShape),
    preamble: topKPreamble(facts, kernelShape),
    declarations: `const CHUNK: u32 = ${facts.reduceChunkItems}u;\n${registerTopKWgsl(length, facts.workgroupSize, facts.subgroups)}`,
    usesSubgroups: facts.subgroups,
    main,
  };
}
