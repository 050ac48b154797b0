import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { radixSampleBits, radixSampleCap, radixSampleDivisor, radixSampleFloorMinTake, radixSampleMergeWords, radixSampleMinItems, radixSampleRankedMaxJ, radixSampleRun, radixSampleWideShift } from '../policy.js';
import { publishOnceWgsl, publishedWordsWgsl } from '../../../dispatch/published-words.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * 'radix-init' (grid maxSegments): zeroes the segment's state and histograms, and estimates the
 * threshold T of pass 0 (the CPU twin's sampledThreshold; policy.ts radixSample): on a segment of at
 * least 1024 keys with take <= size / 4 (size / 16 for a take the compaction launches write), m keys in runs of 8 neighbours (one 32-byte sector each) at
 * a stride of 8 step, and T = the j-th largest of them, j = 8 + ceil(1.5 take / step): about
 * 1.5 take + 8 step keys reach it; where the plan builds filter pass 0's pick, at most the rank
 * halfway to the pick's tile (policy.ts radixSampleMidRank: the pipeline keys on the pick), and
 * from a take of 512 at least the rank 3.5 spreads of the count above take, within that halfway
 * rank (radixSampleFloorRank). The samples stay in registers. For j up to radixSampleRankMaxJ, T
 * is the j-th largest of the invocations' own largest samples (each invocation ranks its largest
 * among the workgroup's: one pass over workgroup memory), never above the sample's j-th largest,
 * so at least as many keys reach it; past that, a radix select over the samples with the plan's
 * digits (one histogram in workgroup memory a round) finds the j-th largest. T keeps the leading
 * radixSampleBits bits (the rest zero). Mode 1 (state word 0) when T is not 0.
 *
 * Grid maxSegments x PARTS (policy.ts radixInitParts): a segment past 256 x SAMPLE_CAP keys is
 * sampled at one key in 256 by up to PARTS workgroups, SAMPLE_CAP samples each, where its rank j
 * stays within RANK_MAX_J (radixSample's `wide`). Each publishes its invocations' j largest samples
 * (its ranks below j) in the segment's `sampleMerge` words (zeroed every run), counts itself, and
 * the last to arrive ranks the parts x j keys: the j-th largest of all the invocations' largest, as
 * one workgroup holding the whole sample would find. It waits only for stores its predecessors
 * issued before they counted themselves (no workgroup waits for another to run). Part 0 zeroes the
 * histograms; the segment's state words are written by its one workgroup or the last to arrive.
 */

/** The radix-init program. */
export function radixInitProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const cap = radixSampleCap(facts.workgroupSize);
  // An invocation's samples in named registers, in straight-line code: held in an array indexed by a
  // loop, each load waited for the one before it (the samples lived in memory). H200, GPU ms of the
  // call (bench/topk-webgpu.ts, 2026-11-29 11:33 UTC, two rounds; loop / registers): 1x16M k=100
  // 0.1156-0.1161 / 0.112-0.1123, 64x151936 k=50 0.0708-0.0712 / 0.0676-0.0683, 256x262144 k=256
  // 0.1612 / 0.160; the indexers (k=2048, 8 samples an invocation) unchanged at 0.068.
  const samples = Array.from({ length: facts.radixSamplesPerInvocation }, (_, r) => r);
  // The rank pass reads the others' largest samples this many at a time, every load issued before
  // any compare: a word at a time it cost more than the rounds it replaces (H200, init of 1x16M
  // k=100 0.0233 against 0.0226 ms; by 8, 0.0192).
  const unroll = [8, 4, 2, 1].find((u) => facts.workgroupSize % u === 0)!;
  const parts = facts.radixInitParts;
  const declarations = `
const SAMPLE_CAP: u32 = ${cap}u;
const SAMPLE_RUN: u32 = ${radixSampleRun}u;
const SAMPLE_ROUNDS: u32 = ${radixSampleBits(facts.radixBits) / facts.radixBits}u;
const SAMPLE_KEPT: u32 = ${(0xffffffff << (32 - radixSampleBits(facts.radixBits))) >>> 0}u;
const PICK_ITEMS: u32 = ${facts.radixPick ? facts.tileItems : 0}u;
const RANK_MAX_J: u32 = ${radixSampleRankedMaxJ(facts.workgroupSize)}u;
const PARTS: u32 = ${parts}u;
var<workgroup> rankedThreshold: u32;
// The rank j of a sample of m keys (policy.ts radixSample).
fn sampleRank(size: u32, take: u32, m: u32) -> u32 {
  let step = size / m;
  var j = 8u + (3u * take + 2u * step - 1u) / (2u * step);
  // Halfway between take and the pick's candidates, where three spreads stay above take (policy.ts radixSampleMidRank).
  let mid = (take + PICK_ITEMS) / (2u * step);
  if (take <= PICK_ITEMS && step <= 256u && mid < j && mid * step > take) {
    let gap = mid * step - take;
    if (gap * gap >= 9u * step * step * mid) { j = mid; }
  }
  // Up toward 3.5 spreads above take, not past halfway to the pick's candidates (policy.ts radixSampleFloorRank).
  if (take >= ${radixSampleFloorMinTake}u && take <= PICK_ITEMS && step <= 256u) {
    loop {
      if (j >= mid) { break; }
      let reach = j * step;
      if (reach > take && 4u * (reach - take) * (reach - take) >= 49u * step * step * j) { break; }
      j++;
    }
  }
  return j;
}${
    parts > 1
      ? `
${publishedWordsWgsl}
${publishOnceWgsl(1)}
const MERGE_WORDS: u32 = ${radixSampleMergeWords(parts, facts.workgroupSize)}u;
var<workgroup> lastToArrive: u32;`
      : ''
  }`;
  // Several workgroups a segment (policy.ts radixSampleWideOf): each publishes its invocations' j
  // best (its ranks below j), counts itself, and the last to arrive ranks the parts x j keys.
  const merge =
    parts === 1
      ? ''
      : `
        if (parts > 1u) {
          let merge = u.sampleMergeAt + segment * MERGE_WORDS;
          if (above < j) { publish(merge + 1u + (part * RANK_MAX_J + above) * 2u, largest); }
          workgroupBarrier();
          if (lid == 0u) { lastToArrive = select(0u, 1u, atomicAdd(&temp[merge], 1u) + 1u == parts); }
          if (workgroupUniformLoad(&lastToArrive) == 0u) { return; }
          let entries = parts * j;
          for (var e = lid; e < entries; e += WG) { scan[e] = awaitPublished(merge + 1u + ((e / j) * RANK_MAX_J + e % j) * 2u); }
          workgroupBarrier();
          for (var e = lid; e < entries; e += WG) {
            let v = scan[e];
            var before = 0u;
            for (var t = 0u; t < entries; t++) { let o = scan[t]; before += select(0u, 1u, o > v || (o == v && t < e)); }
            if (before == j - 1u) { rankedThreshold = v & SAMPLE_KEPT; }
          }
        } else if (above == j - 1u) { rankedThreshold = largest & SAMPLE_KEPT; }`;
  const main = `
  let segment = workgroupIndex / PARTS;
  let part = workgroupIndex % PARTS;${enterRadixSegment('segment')}
  if (part == 0u) {
    let histogram = histogramOf(segment, 0u);
    for (var d = lid; d < PASSES * BINS; d += WG) { atomicStore(&temp[histogram + d], 0u); }
  }
  var threshold = 0u;
  // A take the compaction launches write samples only up to a sixteenth (policy.ts radixSampleCompactedDivisor).
  let divisor = select(${radixSampleDivisor(false)}u, ${radixSampleDivisor(true)}u, compactedTake(s.take));
  let sampled = s.size >= ${radixSampleMinItems}u && s.take <= s.size / divisor && s.take > 0u;
  var m = 0u;
  var j = 0u;
  var parts = 1u;
  if (sampled) {
    m = min(SAMPLE_CAP, max(256u, s.size >> 5u)) / SAMPLE_RUN * SAMPLE_RUN;
    j = sampleRank(s.size, s.take, m);
    // One key in 256 over several workgroups, where the rank stays ranked (policy.ts radixSample).
    if (PARTS > 1u && (s.size >> ${radixSampleWideShift}u) > m) {
      let wideM = min(PARTS * SAMPLE_CAP, s.size >> ${radixSampleWideShift}u) / SAMPLE_RUN * SAMPLE_RUN;
      let wideJ = sampleRank(s.size, s.take, wideM);
      if (wideJ <= RANK_MAX_J && wideJ * 2u <= wideM) {
        m = wideM;
        j = wideJ;
        parts = (wideM + SAMPLE_CAP - 1u) / SAMPLE_CAP;
      }
    }
  }
  if (part >= parts) { return; }
  if (sampled && j * 2u <= m) {
    let step = s.size / m;
    // This workgroup's samples: first + r * WG + lid into x<r> (past its count: a copy of its last,
    // never counted), every load issued before the first is used.
    let first = part * SAMPLE_CAP;
    let count = min(m - first, SAMPLE_CAP);
    let last = count - 1u;
${samples.map((r) => `    let i${r} = first + min(${r}u * WG + lid, last);
    let x${r} = orderedKey(keysIn[s.start + i${r} / SAMPLE_RUN * SAMPLE_RUN * step + i${r} % SAMPLE_RUN], s.direction);`).join('\n')}
    if (j <= RANK_MAX_J) {
      // The j-th largest of the invocations' largest samples (ranks made distinct by invocation;
      // \`scan\` holds them: no digit is chosen on this path).
      var largest = 0u;
${samples.map((r) => `      if (${r}u * WG + lid < count) { largest = max(largest, x${r}); }`).join('\n')}
      scan[lid] = largest;
      workgroupBarrier();
      var above = 0u;
      for (var t = 0u; t < WG; t += ${unroll}u) {
${Array.from({ length: unroll }, (_, u) => `        let o${u} = scan[t + ${u}u];`).join('\n')}
${Array.from({ length: unroll }, (_, u) => `        above += select(0u, 1u, o${u} > largest || (o${u} == largest && t + ${u}u < lid));`).join('\n')}
      }${merge === '' ? `
      if (above == j - 1u) { rankedThreshold = largest & SAMPLE_KEPT; }` : merge}
      threshold = workgroupUniformLoad(&rankedThreshold);
    } else {
      var prefix = 0u;
      var remaining = j;
      for (var sampleRound = 0u; sampleRound < SAMPLE_ROUNDS; sampleRound++) {
        // The samples whose digits before this round's are the prefix chosen so far.
        let fixed = select(0xffffffffu << digitShift(sampleRound - 1u), 0u, sampleRound == 0u);
        clearHistogram(BINS, lid);
${samples.map((r) => `        if (${r}u * WG + lid < count && (x${r} & fixed) == prefix) { atomicAdd(&localHistogram[digitOf(x${r}, sampleRound)], 1u); }`).join('\n')}
        workgroupBarrier();
        let c = chooseDigit(BINS, remaining, lid);
        prefix = prefix | (c.x << digitShift(sampleRound));
        remaining = remaining - c.y;
      }
      threshold = prefix;
    }
  }
  // The segment's state, by its one workgroup or the last of its parts to arrive.
  for (var w = lid; w < STATE_WORDS; w += WG) { atomicStore(&temp[state + w], 0u); }
  storageBarrier();
  if (lid == 0u) {
    atomicStore(&temp[state + STATE_MODE], select(0u, 1u, threshold != 0u));
    atomicStore(&temp[state + STATE_THRESHOLD], threshold);
  }`;
  const program = radixProgram('radix-init', facts, name, { keys: true, outputs: false, readsPick: true }, declarations, main);
  return parts > 1 ? { ...program, uniforms: [...program.uniforms, 'sampleMergeAt'] } : program;
}
