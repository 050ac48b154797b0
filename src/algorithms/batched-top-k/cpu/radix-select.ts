import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { radixCandidateShortcut, radixSample, radixSampleBits, radixSampleCap, radixSampleRankedMaxJ, radixSampleRun, radixSampleWideOf, radixState, radixStateWords } from '../policy.js';
import {
  Segment,
  type TopKContext,
  type TopKKernelParams,
  bestByBuckets,
  ensureAscending,
  f32Signed,
  resolveSegment,
  signBit,
  sortByRank,
  writeSegmentFills,
  writeSegmentOutput,
  writeSegmentOutputs,
} from './common.js';
import { simdAvailable, simdCollectReaching, simdCollectStep } from './simd.js';

/*
 * The 'radix-select' variant, the general case (launches and slots: radix-plan.ts; the WGSL twins:
 * webgpu/radix-*.ts). A radix select over the 32-bit ordered key, digits of policy.radixBits bits
 * from the top (the last one what is left), with per-segment state in temporary storage:
 *
 *   'radix-init'       (grid maxSegments * parts)       zero state and histograms; sample a threshold T
 *                                                       (part 0 of each segment: radixInitParts)
 *   'radix-histogram'  (grid maxSegments * histogramTiles) pass 0 over the keys: those >= T into
 *                                                         candidates0 with their digit-0 histogram
 *                                                         (short segments: where fewer than take
 *                                                         reached T, the last workgroup adds the keys
 *                                                         below it), or (no T) the digit-0 histogram
 *                                                         of every key
 *   'radix-fallback'   (grid maxSegments * tiles)        long segments only, where fewer than take
 *                                                         keys reached T: the digit-0 histogram of
 *                                                         the keys below it
 *   'radix-filter' p   (grid maxSegments * filterTiles)  digit p's threshold bucket from its histogram;
 *                                                         items above it selected, its members kept
 *                                                         with their digit-(p+1) histogram
 *   'radix-finalize'   (grid maxSegments)                the last digit, the smallest tied indices,
 *                                                         sort, write
 *
 * Tiles: pass-0 tile t of segment s is workgroup s * tiles + t and covers policy.radixTileItems keys;
 * filter workgroup w of a segment takes its input's tiles w, w + filterTiles, ... Candidates and
 * selected entries are segment-local indices; a segment's candidates live at its own start in
 * `candidates0`/`candidates1`. As on a GPU, workgroups of one segment may run concurrently (CPU
 * worker threads): their histogram and counter adds are atomic, and a workgroup stages its items in
 * workgroup memory, then appends each list with one atomic add. Candidates may so come out of index
 * order: finalize puts the ties in index order, and the selection in rank order ('sorted') or index
 * order ('unsorted'), so results never depend on the order workgroups ran in. Where the requirements
 * let results change between runs (`determinism: 'not-guaranteed'` with `tieBreak: 'any'`, or with
 * 'unsorted'), finalize skips that: it takes the first tied candidates appended, or keeps the
 * selection as appended.
 *
 * Signed ordered keys (common.ts): digit 0 of the ordered key is `(sk >>> shift0) ^ signDigit`, later
 * digits those of sk itself; the threshold T is kept as ordered-key bits in the state.
 *
 * With device-only size bounds the plan also launches single-tile; these kernels exit when the device
 * bounds' max fits the tile.
 */

/** Workgroup memory of 'radix-histogram' and 'radix-fallback': four interleaved histograms, then a tile's collected keys, staged. */
export function radixHistogramWorkgroupBytes(radixTileItems: number, radixBits: number): number {
  return 16 * 2 ** radixBits + radixTileItems * 4;
}
/** Workgroup memory of 'radix-filter': a tile's selected items and kept candidates, staged, and the next digit's histogram. */
export function radixFilterWorkgroupBytes(radixTileItems: number, radixBits: number): number {
  return radixTileItems * 8 + 4 * 2 ** radixBits;
}
/** Workgroup memory of 'radix-finalize': the selection's keys and indices. */
export function radixFinalizeWorkgroupBytes(kMax: number): number {
  return Math.max(16, kMax * 8);
}

const segmentOfWorkgroup = new Segment();

/** Common entry test: not failed, this variant's branch, an active segment. Returns the segment or -1. */
function enter(ctx: TopKContext, segment: number): number {
  if (ctx.failed() || ctx.singleTileBranch()) return -1;
  if (segment >= ctx.activeSegments()) return -1;
  const seg = segmentOfWorkgroup;
  resolveSegment(ctx, segment, ctx.tilesPerSegment * ctx.policy.radixTileItems, seg);
  // A segment's candidates live at its start: never past the candidate buffers (only a broken guarantee
  // under 'trust', or buffers sized below the keys a segment can start at, make this bind).
  const room = ctx.candidateWords - seg.start;
  if (seg.size > room) {
    seg.size = room > 0 ? room : 0;
    if (seg.take > seg.size) seg.take = seg.size;
  }
  return segment;
}

/** Word offset of segment `segment`'s digit-`pass` histogram. */
function histogramAt(ctx: TopKContext, segment: number, pass: number): number {
  return ctx.histogramSlot + (segment * ctx.radixPasses + pass) * ctx.radixDigits;
}

/** Items the filters of digits < pass selected. */
function selectedBefore(temp: Int32Array, state: number, pass: number): number {
  let sum = 0;
  for (let q = 0; q < pass; q++) sum += temp[state + radixState.selectedByPass + q]!;
  return sum;
}

/** Shift and mask of digit `pass`. */
function digitShift(ctx: TopKContext, pass: number): number {
  const used = ctx.radixBits * (pass + 1);
  return used >= 32 ? 0 : 32 - used;
}
function digitMask(ctx: TopKContext, pass: number): number {
  const width = 32 - ctx.radixBits * pass - digitShift(ctx, pass);
  return width >= 32 ? -1 : (1 << width) - 1;
}

/**
 * The digit whose bucket holds the remaining-th best of `bins` counts at `at` in `counts` (best =
 * highest digit), into `choice`: [digit, items in higher digits, items in it]. Fewer items than
 * remaining (only inconsistent input under 'trust'): [0, 0, remaining], every item taken.
 */
const choice = new Int32Array(3);
function chooseDigit(counts: Int32Array, at: number, bins: number, remaining: number): void {
  let above = 0;
  for (let digit = bins - 1; digit >= 0; digit--) {
    const c = counts[at + digit]!;
    if (above + c >= remaining) {
      choice[0] = digit;
      choice[1] = above;
      choice[2] = c;
      return;
    }
    above += c;
  }
  choice[0] = 0;
  choice[1] = 0;
  choice[2] = remaining;
}

/** 'radix-init': zero the state and histograms of one segment; the sampled threshold (state words 0, 1). */
export function runRadixInit(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  // A long segment's sample over several workgroups (policy.ts radixInitParts): the GPU's parts
  // publish their best sampled keys and the last to arrive ranks them; here the first takes it all.
  const parts = ctx.radixInitParts;
  if (workgroupId % parts !== 0) return;
  const segment = enter(ctx, workgroupId / parts);
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * radixStateWords;
  temp.fill(0, state, state + radixStateWords);
  const histogram = histogramAt(ctx, segment, 0);
  temp.fill(0, histogram, histogram + ctx.radixPasses * ctx.radixDigits);
  const threshold = sampledThreshold(ctx, seg);
  temp[state + radixState.mode] = threshold === signBit ? 0 : 1;
  temp[state + radixState.threshold] = threshold ^ signBit;
}

const sample = new Int32Array(8192);
/** Where the sample's touch loads go (so that they are not dropped). */
const touchSink = new Int32Array(1);

/** The signed ordered key of the sample's j-th largest (policy.ts radixSample) with its low bits cleared (radixSampleBits), or signBit for none. */
function sampledThreshold(ctx: TopKContext, seg: Segment): number {
  const cap = radixSampleCap(ctx.policy.workgroupSize);
  const shape = radixSample(seg.size, seg.take, cap, ctx.radixPick ? ctx.policy.tileItems : 0, compactedTake(ctx, seg), radixSampleWideOf(ctx.policy));
  if (shape === undefined) return signBit;
  const { m, step, j } = shape;
  const keys = ctx.keys;
  const { start, mask } = seg;
  // Runs of radixSampleRun neighbours, a run every radixSampleRun * step keys (policy.ts radixSamplePosition).
  const stride = radixSampleRun * step;
  // A run's first key, every run, before the gather: independent loads, whose cache misses overlap
  // where the gather's (a run's keys, transformed and stored, then the next run) came about one at
  // a time. Keys that other work pushed out of the caches (as between the calls of
  // bench/topk-cpu.ts) made the sample the costliest part: 128x4096 k=64 after 12 ms of other work,
  // one thread, median of 60 calls, 2.17 -> 1.71 ms (twice; the launch alone 0.7-0.9 -> 0.3 ms).
  let touched = 0;
  for (let run = start, end = start + (m / radixSampleRun) * stride; run < end; run += stride) touched |= keys[run]!;
  touchSink[0] = touched;
  const xor = ctx.isF32 ? mask : ctx.integerKeyXor ^ mask;
  const groups = ctx.policy.workgroupSize;
  let exact: number;
  if (j <= radixSampleRankedMaxJ(groups)) exact = jthLargestOfGroups(keys, start, m, stride, j, groups, cap, ctx.isF32, xor);
  else if (j <= 32) exact = jthLargestOfRuns(keys, start, m, stride, j, ctx.isF32, xor);
  else {
    if (ctx.isF32) {
      for (let i = 0, run = start; i < m; i += radixSampleRun, run += stride) for (let c = 0; c < radixSampleRun; c++) sample[i + c] = f32Signed(keys[run + c]!) ^ xor;
    } else {
      for (let i = 0, run = start; i < m; i += radixSampleRun, run += stride) for (let c = 0; c < radixSampleRun; c++) sample[i + c] = keys[run + c]! ^ xor;
    }
    exact = nthSmallest(sample, m, m - j);
  }
  // The leading bits the GPU's rounds of selection find (policy.ts radixSampleBits), the rest zero
  // (the signed and unsigned ordered keys differ only in the top bit).
  const dropped = 32 - radixSampleBits(ctx.radixBits);
  return (exact >> dropped) << dropped;
}

const largest = new Int32Array(32);
const groupLargest = new Int32Array(4096);

/**
 * The j-th largest of the sample's groups' largest keys (signed ordered keys, as
 * {@link jthLargestOfRuns} reads them): as the GPU's invocations hold it (webgpu/radix-init.ts),
 * workgroup w of a segment the samples from w x `cap`, its invocation `groups` of them, sample i of
 * its part in group i % groups; a group without samples counting as the least key.
 */
function jthLargestOfGroups(keys: Int32Array, start: number, m: number, stride: number, j: number, groups: number, cap: number, isF32: boolean, xor: number): number {
  const all = Math.ceil(m / cap) * groups;
  const list = all <= groupLargest.length ? groupLargest : new Int32Array(all);
  list.fill(signBit, 0, all);
  let base = 0;
  let group = 0;
  let inPart = 0;
  for (let i = 0, run = start; i < m; i += radixSampleRun, run += stride) {
    for (let c = 0; c < radixSampleRun; c++) {
      const v = isF32 ? f32Signed(keys[run + c]!) ^ xor : keys[run + c]! ^ xor;
      if (v > list[base + group]!) list[base + group] = v;
      if (++group === groups) group = 0;
      if (++inPart === cap) {
        inPart = 0;
        group = 0;
        base += groups;
      }
    }
  }
  return nthSmallest(list, all, all - j);
}

/**
 * The j-th largest (1 <= j <= 32, j <= m) of the sample's m signed ordered keys (f32 bits through
 * f32Signed, then `^ xor`; integer bits `^ xor`), read from its runs in place, in one pass: a list of
 * the j largest so far (largest first), which most keys pass by with one compare against its last.
 * A quickselect mispredicts about every other compare (128x4096 k = 64: j = 14 of a 256-key sample);
 * gathering the sample into an array first, then the same pass over it, took 1.10 against 0.78 us a
 * row (2026-11-28).
 */
function jthLargestOfRuns(keys: Int32Array, start: number, m: number, stride: number, j: number, isF32: boolean, xor: number): number {
  const top = largest;
  const last = j - 1;
  let count = 0;
  let threshold = signBit;
  for (let i = 0, run = start; i < m; i += radixSampleRun, run += stride) {
    for (let c = 0; c < radixSampleRun; c++) {
      const v = isF32 ? f32Signed(keys[run + c]!) ^ xor : keys[run + c]! ^ xor;
      if (count < j) {
        let at = count++;
        for (; at > 0 && top[at - 1]! < v; at--) top[at] = top[at - 1]!;
        top[at] = v;
        if (count === j) threshold = top[last]!;
        continue;
      }
      if (v <= threshold) continue;
      let at = last;
      for (; at > 0 && top[at - 1]! < v; at--) top[at] = top[at - 1]!;
      top[at] = v;
      threshold = top[last]!;
    }
  }
  return threshold;
}

/** The value of rank `nth` (0-based, ascending) among list[0, n), by quickselect; reorders the list so that list[0, nth] are the nth + 1 smallest. */
function nthSmallest(list: Int32Array, n: number, nth: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    // Median of three as the pivot.
    let a = list[lo]!;
    let b = list[mid]!;
    const c = list[hi]!;
    if (a > b) [a, b] = [b, a];
    const pivot = c < a ? a : c > b ? b : c;
    let i = lo;
    let k = hi;
    while (i <= k) {
      while (list[i]! < pivot) i++;
      while (list[k]! > pivot) k--;
      if (i <= k) {
        const t = list[i]!;
        list[i] = list[k]!;
        list[k] = t;
        i++;
        k--;
      }
    }
    if (nth <= k) hi = k;
    else if (nth >= i) lo = i;
    else return list[nth]!;
  }
  return list[nth]!;
}

/** 'radix-histogram': pass 0 over a tile of the keys (collect those >= T, or the full digit-0 histogram). */
export function runRadixHistogram(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  passZero(workgroupId, shared, params.ctx, false);
}

/** 'radix-fallback': where fewer than take keys reached T, the digit-0 histogram of the tile's keys below T. */
export function runRadixFallback(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  passZero(workgroupId, shared, params.ctx, true);
}

/**
 * Pass 0 over tiles of the keys. 'radix-histogram' (grid maxSegments * histogramTiles) and
 * 'radix-fallback' (grid maxSegments * filterTiles): workgroup w of a segment takes its tiles w, w +
 * its launch's workgroups per segment, ... Where the plan has no fallback launch (policy.ts
 * radixFoldsFallback), each 'radix-histogram' workgroup of a sampled segment counts its arrival
 * (state word 3; Atomics: workgroups may run on worker threads, and each adds to the collected count
 * before it arrives), and the last to arrive, where fewer than take keys reached T, adds the keys
 * below T over the whole segment, as the fallback would.
 */
function passZero(workgroupId: number, shared: WorkgroupMemory, ctx: TopKContext, fallback: boolean): void {
  const perSegment = fallback ? ctx.filterTilesPerSegment : ctx.histogramTilesPerSegment;
  const segment = enter(ctx, perSegment === 1 ? workgroupId : Math.floor(workgroupId / perSegment));
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * radixStateWords;
  const sampled = temp[state + radixState.mode] === 1;
  if (seg.take === 0 || (fallback && !(sampled && temp[state + radixState.collected]! < seg.take))) return;
  // T as a signed ordered key (sk >= threshold <=> ordered key >= T).
  const threshold = temp[state + radixState.threshold]! ^ signBit;
  const tileItems = ctx.policy.radixTileItems;
  for (let tile = workgroupId - segment * perSegment; tile * tileItems < seg.size; tile += perSegment) {
    const from = tile * tileItems;
    const to = Math.min(from + tileItems, seg.size);
    if (!fallback && sampled) {
      collectPastThreshold(ctx, segment, state, perSegment, seg.start + from, seg.start + to, threshold, shared.i32);
    } else {
      histogramOfTile(ctx, segment, perSegment, seg.start + from, seg.start + to, fallback ? threshold : undefined, shared.i32);
    }
  }
  if (fallback || !sampled || !ctx.radixFoldsFallback) return;
  const arrived = Atomics.add(temp, state + radixState.arrived, 1) + 1;
  if (arrived !== perSegment || Atomics.load(temp, state + radixState.collected) >= seg.take) return;
  // The whole segment as one range: the histogram's counts do not depend on how it is split.
  histogramOfTile(ctx, segment, perSegment, seg.start, seg.start + seg.size, threshold, shared.i32);
}

/**
 * The digit-0 histogram of keys [from, end) (where T misled, of those below `below`, a signed
 * ordered key), by the top bits of sk, whose sign bit is flipped against the ordered key's: digit =
 * bin ^ signDigit. Four interleaved local histograms: consecutive equal digits do not wait on one
 * counter.
 */
function histogramOfTile(ctx: TopKContext, segment: number, workgroupsPerSegment: number, from: number, end: number, below: number | undefined, local: Int32Array): void {
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const bins = ctx.radixDigits;
  local.fill(0, 0, 4 * bins);
  const keys = ctx.keys;
  const mask = seg.mask;
  const xor = ctx.integerKeyXor ^ mask;
  const top = ctx.radixTopShift;
  let p = from;
  const b1 = bins;
  const b2 = 2 * bins;
  const b3 = 3 * bins;
  if (below !== undefined) {
    for (; p < end; p++) {
      const s = ctx.isF32 ? f32Signed(keys[p]!) ^ mask : keys[p]! ^ xor;
      if (s < below) local[s >>> top]!++;
    }
  } else if (ctx.isF32) {
    for (; p + 3 < end; p += 4) {
      local[(f32Signed(keys[p]!) ^ mask) >>> top]!++;
      local[b1 + ((f32Signed(keys[p + 1]!) ^ mask) >>> top)]!++;
      local[b2 + ((f32Signed(keys[p + 2]!) ^ mask) >>> top)]!++;
      local[b3 + ((f32Signed(keys[p + 3]!) ^ mask) >>> top)]!++;
    }
    for (; p < end; p++) local[(f32Signed(keys[p]!) ^ mask) >>> top]!++;
  } else {
    for (; p + 3 < end; p += 4) {
      local[(keys[p]! ^ xor) >>> top]!++;
      local[b1 + ((keys[p + 1]! ^ xor) >>> top)]!++;
      local[b2 + ((keys[p + 2]! ^ xor) >>> top)]!++;
      local[b3 + ((keys[p + 3]! ^ xor) >>> top)]!++;
    }
    for (; p < end; p++) local[(keys[p]! ^ xor) >>> top]!++;
  }
  const signDigit = bins >>> 1;
  const histogram = histogramAt(ctx, segment, 0);
  for (let bin = 0; bin < bins; bin++) {
    const c = local[bin]! + local[b1 + bin]! + local[b2 + bin]! + local[b3 + bin]!;
    if (c === 0) continue;
    // Workgroups of one segment may run on different threads: their adds are atomic, as on a GPU.
    if (workgroupsPerSegment === 1) temp[histogram + (bin ^ signDigit)]! += c;
    else Atomics.add(temp, histogram + (bin ^ signDigit), c);
  }
}

/**
 * Pass 0 with a sampled threshold: appends the tile's keys >= T (signed ordered keys) to candidates0
 * (count in state word 2) and counts them in the digit-0 histogram. A function of its own, so its
 * loops get compiled on their own.
 */
function collectPastThreshold(
  ctx: TopKContext,
  segment: number,
  state: number,
  tiles: number,
  from: number,
  end: number,
  threshold: number,
  local: Int32Array,
): void {
  const temp = ctx.temp;
  const keys = ctx.keys;
  const seg = segmentOfWorkgroup;
  const start = seg.start;
  const mask = seg.mask;
  const xor = ctx.integerKeyXor ^ mask;
  const isF32 = ctx.isF32;
  // One tile per segment: straight to the buffer. Several (which may run on different threads):
  // staged in workgroup memory, appended with one atomic add.
  const direct = tiles === 1;
  const dst = direct ? temp : local;
  const out = direct ? ctx.candidatesSlot[0]! + start + temp[state + radixState.collected]! : 0;
  const t = isF32 ? f32OfMaxSigned(threshold ^ mask) : NaN;
  let n: number;
  if (isF32 && t === t) {
    // The SIMD loop (simd.ts) over whole trips of its loop, the scalar one over the rest.
    const vectors = ctx.simd && end - from >= simdCollectMinItems && simdAvailable() ? (end - from) - ((end - from) % simdCollectStep) : 0;
    n = vectors > 0 ? simdCollectReaching(keys, ctx.keySlab, from, vectors, start, t, mask !== 0, dst, out) : 0;
    n += collectF32Reaching(ctx.keysF32, dst, out + n, from + vectors, end, start, t, mask !== 0);
  } else {
    n = collectSignedReaching(keys, dst, out, from, end, start, threshold, isF32, isF32 ? mask : xor);
  }
  if (n === 0) return;
  let list = out;
  if (direct) temp[state + radixState.collected] = temp[state + radixState.collected]! + n;
  else {
    const at = Atomics.add(temp, state + radixState.collected, n);
    list = ctx.candidatesSlot[0]! + start + at;
    temp.set(local.subarray(0, n), list);
  }
  countDigitZero(temp, list, n, keys, start, isF32, isF32 ? mask : xor, histogramAt(ctx, segment, 0), ctx.radixTopShift, ctx.radixDigits >>> 1, direct);
  // The segment's only pass-0 workgroup: where filter pass 0 will take its shortcut, the pick is
  // made here, while the candidates and their keys are in cache, into the `selected` slot, which no
  // launch reads before the filter; filter pass 0 then only counts it (so the state and histograms
  // after each launch stay those of the WGSL twin: twin.test.ts).
  if (direct && temp[state + radixState.collected] === n && candidateShortcut(ctx, seg, n)) selectAmongCandidates(ctx, seg, segment, n, true);
}

/**
 * Adds the digit-0 histogram of the candidates at temp[list, list + n) (segment-local indices) to
 * temp[histogram...]: atomically unless this workgroup alone adds to it. A function of its own: as a
 * loop in the collect's (whose loops are large once inlined), pass 0 of 128x4096 k=64 took 1.24
 * instead of 1.06 ms on one thread (2026-11).
 */
function countDigitZero(temp: Int32Array, list: number, n: number, keys: Int32Array, start: number, isF32: boolean, xor: number, histogram: number, top: number, signDigit: number, alone: boolean): void {
  for (let j = list, end = list + n; j < end; j++) {
    const key = keys[start + temp[j]!]!;
    const digit = ((isF32 ? f32Signed(key) ^ xor : key ^ xor) >>> top) ^ signDigit;
    if (alone) temp[histogram + digit]!++;
    else Atomics.add(temp, histogram + digit, 1);
  }
}

const thresholdF32 = new Float32Array(1);
const thresholdBits = new Int32Array(thresholdF32.buffer);

/**
 * The value of an f32 threshold given as a 'max' signed ordered key (f32Signed's inverse; -0 comes
 * back as +0, the ordered key of a NaN as a NaN).
 */
function f32OfMaxSigned(maxSigned: number): number {
  thresholdBits[0] = maxSigned < 0 ? maxSigned ^ 0x7fffffff : maxSigned;
  return thresholdF32[0]!;
}

/*
 * Collecting the keys that reach T: 32 keys at a time, the mask of those that reach it is built
 * without a branch, then its set bits are appended lowest first (index order). A branch per key (or
 * per four keys) that T decides mispredicts at every kept key, and the ~5% kept on 128x4096 k=64 made
 * that twice the cost of the compares (1.1 against 0.7 ms for 512K keys on one thread, 2026-11); the
 * branch-free append (each key written, the count advanced past those kept) makes every store wait
 * on the previous count, measured 4x slower.
 */

/**
 * Ranges of f32 keys from which the collect takes the SIMD loop (simd.ts), where the backend lets it
 * and the thread can run it: its call and copies cost about as much as 64 keys of the scalar loop
 * (data in cache, ~5% reaching, 2026-11-28: 64 keys 1.8 against 2.4 ns a key, 128 keys 1.06
 * against 1.33, 32 keys 3.3 against 1.6; 4096 keys 0.31 against 1.27).
 */
const simdCollectMinItems = 64;

/** Appends `base` + the position of each set bit of `bits`, lowest first, at dst[at...]; returns the new end. */
function appendSetBits(dst: Int32Array, at: number, bits: number, base: number): number {
  while (bits !== 0) {
    const low = bits & -bits;
    dst[at++] = base + 31 - Math.clz32(low);
    bits ^= low;
  }
  return at;
}

/** Bit j set where f32 keys[p + j] (j < 8) is not below `t` (a NaN compares false: it reaches). */
function notBelowByte(keys: Float32Array, p: number, t: number): number {
  return (
    +!(keys[p]! < t) |
    (+!(keys[p + 1]! < t) << 1) |
    (+!(keys[p + 2]! < t) << 2) |
    (+!(keys[p + 3]! < t) << 3) |
    (+!(keys[p + 4]! < t) << 4) |
    (+!(keys[p + 5]! < t) << 5) |
    (+!(keys[p + 6]! < t) << 6) |
    (+!(keys[p + 7]! < t) << 7)
  );
}

/** Bit j set where f32 keys[p + j] (j < 8) is not above `t` (a NaN compares false: it does not reach). */
function notAboveByte(keys: Float32Array, p: number, t: number): number {
  return (
    +(keys[p]! <= t) |
    (+(keys[p + 1]! <= t) << 1) |
    (+(keys[p + 2]! <= t) << 2) |
    (+(keys[p + 3]! <= t) << 3) |
    (+(keys[p + 4]! <= t) << 4) |
    (+(keys[p + 5]! <= t) << 5) |
    (+(keys[p + 6]! <= t) << 6) |
    (+(keys[p + 7]! <= t) << 7)
  );
}

/**
 * The segment-local indices of f32 keys[from, end) that reach a threshold of value `t` (not NaN),
 * appended to dst[out...] in index order; returns how many. Compared as floats, which is exact
 * here: for 'max' (`min` false) a key reaches T when it is not below it (a NaN ranks above every
 * number and compares false; -0 and +0 are equal both ways), for 'min' when it is not above it (a
 * NaN ranks below every number).
 */
function collectF32Reaching(keys: Float32Array, dst: Int32Array, out: number, from: number, end: number, start: number, t: number, min: boolean): number {
  let at = out;
  let p = from;
  if (!min) {
    for (; p + 31 < end; p += 32) {
      const bits = notBelowByte(keys, p, t) | (notBelowByte(keys, p + 8, t) << 8) | (notBelowByte(keys, p + 16, t) << 16) | (notBelowByte(keys, p + 24, t) << 24);
      if (bits !== 0) at = appendSetBits(dst, at, bits, p - start);
    }
    for (; p < end; p++) if (!(keys[p]! < t)) dst[at++] = p - start;
  } else {
    for (; p + 31 < end; p += 32) {
      const bits = notAboveByte(keys, p, t) | (notAboveByte(keys, p + 8, t) << 8) | (notAboveByte(keys, p + 16, t) << 16) | (notAboveByte(keys, p + 24, t) << 24);
      if (bits !== 0) at = appendSetBits(dst, at, bits, p - start);
    }
    for (; p < end; p++) if (keys[p]! <= t) dst[at++] = p - start;
  }
  return at - out;
}

/** Bit j set where the signed ordered key of keys[p + j] (j < 8) reaches `threshold`: f32 bits through f32Signed, then `^ xor`, or integer bits `^ xor`. */
function reachingByte(keys: Int32Array, p: number, threshold: number, isF32: boolean, xor: number): number {
  let bits = 0;
  for (let j = 0; j < 8; j++) bits |= +((isF32 ? f32Signed(keys[p + j]!) ^ xor : keys[p + j]! ^ xor) >= threshold) << j;
  return bits;
}

/** {@link collectF32Reaching} on signed ordered keys: integer keys, and f32 keys against a NaN's key. */
function collectSignedReaching(keys: Int32Array, dst: Int32Array, out: number, from: number, end: number, start: number, threshold: number, isF32: boolean, xor: number): number {
  let at = out;
  let p = from;
  for (; p + 31 < end; p += 32) {
    const bits = reachingByte(keys, p, threshold, isF32, xor) | (reachingByte(keys, p + 8, threshold, isF32, xor) << 8) | (reachingByte(keys, p + 16, threshold, isF32, xor) << 16) | (reachingByte(keys, p + 24, threshold, isF32, xor) << 24);
    if (bits !== 0) at = appendSetBits(dst, at, bits, p - start);
  }
  for (; p < end; p++) if ((isF32 ? f32Signed(keys[p]!) ^ xor : keys[p]! ^ xor) >= threshold) dst[at++] = p - start;
  return at - out;
}

/**
 * The candidates of filter pass 0's shortcut, keys and indices, up to 8192 (more take the digit
 * passes). Module constants: V8 embeds them, where arrays it must load keep reloading their base and
 * length after every store of a loop.
 */
const directItems = 8192;
const directKeys = new Int32Array(directItems);
const directIndices = new Int32Array(directItems);

/**
 * Whether filter pass 0 takes its shortcut ({@link selectAmongCandidates}) over `count` candidates
 * that reached the sampled threshold (at least take of them: else the fallback ran): few enough (at
 * most a tile, and at most directItems: tiles past that only with a GPU's capabilities) that picking
 * the best among them costs less than the digit passes that would re-read their keys (128x4096 k=64:
 * ~224 candidates a row); the WGSL twin's first workgroup picks them in workgroup memory, by a radix
 * select or a sort (webgpu/radix-filter.ts). Not where ties are taken as found, nor where the plan
 * builds no pick (problem.radixPick, policy.ts radixPickOf): the WGSL filter then has none, and the
 * twins keep the same state words (the digit passes give the same outputs).
 */
function candidateShortcut(ctx: TopKContext, seg: Segment, count: number): boolean {
  return ctx.radixPick && count >= seg.take && !ctx.tiesAsFound && count <= ctx.policy.tileItems && count <= directItems;
}

/**
 * Filter pass 0's shortcut: the best `take` of the segment's `count` candidates by rank (larger key,
 * then smaller index), written to the `selected` slot (filter pass 0 counts them as its selection):
 * in rank order, or in index order where the WGSL twin selects them for unsorted output (policy.ts
 * radixCandidateShortcut; its radix select takes the same items, webgpu/radix-filter.ts). Later
 * passes then find the selection full and return, and finalize writes it; the outputs are those of
 * the digit passes (the same top `take` by rank), only with ties taken by index (so not under
 * `tiesAsFound`, where the digit passes take the first tied candidates appended).
 */
function selectAmongCandidates(ctx: TopKContext, seg: Segment, segment: number, count: number, stash = false): void {
  const keys = ctx.keys;
  const temp = ctx.temp;
  const { start, mask } = seg;
  const source = ctx.candidatesSlot[0]! + start;
  // The OR of every key XOR the first, for bestByBuckets.
  let diff = 0;
  if (ctx.isF32) {
    const first = f32Signed(keys[start + temp[source]!]!) ^ mask;
    for (let c = 0; c < count; c++) {
      const index = temp[source + c]!;
      const key = f32Signed(keys[start + index]!) ^ mask;
      directKeys[c] = key;
      directIndices[c] = index;
      diff |= key ^ first;
    }
  } else {
    const xor = ctx.integerKeyXor ^ mask;
    const first = keys[start + temp[source]!]! ^ xor;
    for (let c = 0; c < count; c++) {
      const index = temp[source + c]!;
      const key = keys[start + index]! ^ xor;
      directKeys[c] = key;
      directIndices[c] = index;
      diff |= key ^ first;
    }
  }
  const take = seg.take;
  if (!bestByBuckets(directKeys, directIndices, count, take, diff)) sortByRank(directKeys, directIndices, 0, 0, count, true, take);
  if (!ctx.sorted && radixCandidateShortcut(ctx.policy, false) === 'select') directIndices.subarray(0, take).sort();
  const selected = ctx.selectedSlot + segment * ctx.kMax;
  for (let j = 0; j < take; j++) temp[selected + j] = directIndices[j]!;
  if (stash) {
    // The selection's key bits, while the row is in cache, for finalize (pickedInCollect).
    const bits = ctx.candidatesSlot[1]! + start;
    for (let j = 0; j < take; j++) temp[bits + j] = keys[start + directIndices[j]!]!;
  }
}

/**
 * Whether the collect picked the segment's selection (one pass-0 tile per segment, and filter pass
 * 0's shortcut): it left the selection's key bits at the segment's start in candidates1 (which the
 * shortcut leaves unused), in the order of `selected`. Finalize writes the outputs from them: the
 * rows it would read again are out of cache by then where other work ran before the call (128x4096
 * k=64 after a tfjs topk and a one-pass max, as bench/topk-cpu.ts runs it, one thread, medians of 60,
 * 2026-11-28: finalize 0.25-0.32 -> 0.11 ms, the call 1.79-1.99 -> 1.73-1.79).
 */
function pickedInCollect(ctx: TopKContext, seg: Segment, state: number): boolean {
  const temp = ctx.temp;
  return ctx.tilesPerSegment === 1 && temp[state + radixState.mode] === 1 && candidateShortcut(ctx, seg, Math.min(temp[state + radixState.collected]!, seg.size));
}

/** Whether keys [0, n) and their indices [indexBase, indexBase + n) of `memory` are in rank order (larger key, then smaller index). */
function inRankOrder(memory: Int32Array, indexBase: number, n: number): boolean {
  for (let j = 1; j < n; j++) {
    const previous = memory[j - 1]!;
    const key = memory[j]!;
    if (previous < key || (previous === key && memory[indexBase + j - 1]! > memory[indexBase + j]!)) return false;
  }
  return true;
}

/**
 * 'radix-filter' for digit p = the launch's pass: the threshold bucket b from the digit-p histogram
 * and the items left to take; items above b (or in it, when the whole bucket is taken) selected,
 * b's members kept in buffer (p + 1) & 1 with their digit-(p + 1) histogram. Input: digit 0 reads
 * candidates0 (the keys that reached T) where at least take did, else every key; digit p > 0 reads
 * buffer p & 1.
 */
export function runRadixFilter(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  filterWorkgroup(workgroupId, shared, params, false);
}

/**
 * 'radix-filter-finalize', the last filter where it also finalizes (policy.ts radixFoldsFinalize):
 * the filter, then each workgroup with input counts its arrival (state word filterArrived), and the
 * segment's last to arrive does finalize's work; where no workgroup of the segment has input (the
 * selection is complete, or nothing was kept), its first does.
 */
export function runRadixFilterFinalize(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  filterWorkgroup(workgroupId, shared, params, true);
}

function filterWorkgroup(workgroupId: number, shared: WorkgroupMemory, params: TopKKernelParams, finalizes: boolean): void {
  const ctx = params.ctx;
  const tiles = ctx.filterTilesPerSegment;
  const segment = enter(ctx, tiles === 1 ? workgroupId : Math.floor(workgroupId / tiles));
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * radixStateWords;
  const pass = params.pass;
  const sampled = temp[state + radixState.mode] === 1 && temp[state + radixState.collected]! >= seg.take;
  const count = Math.min(pass > 0 ? temp[state + radixState.keptByPass + pass - 1]! : sampled ? temp[state + radixState.collected]! : seg.size, seg.size);
  const before = selectedBefore(temp, state, pass);
  const tileItems = ctx.policy.radixTileItems;
  const w = workgroupId - segment * tiles;
  if (before >= seg.take || w * tileItems >= count) {
    // Workgroup 0 has no input only where none of the segment's has.
    if (finalizes && w === 0) finalizeSegment(ctx, segment, shared);
    return;
  }
  // Few keys reached the sampled threshold: pick the best among them (candidateShortcut). Where one
  // pass-0 workgroup covered the segment, its collect picked them already.
  if (pass === 0 && sampled && candidateShortcut(ctx, seg, count)) {
    if (w === 0) {
      if (ctx.tilesPerSegment > 1) selectAmongCandidates(ctx, seg, segment, count);
      temp[state + radixState.selectedByPass] = seg.take;
    }
    return;
  }
  const fromKeys = pass === 0 && !sampled;
  const remaining = seg.take - before;
  chooseDigit(temp, histogramAt(ctx, segment, pass), ctx.radixDigits, remaining);
  const threshold = choice[0]!;
  const takeBucket = choice[1]! + choice[2]! === remaining;
  const countsSelected = compactedTake(ctx, seg);
  if (countsSelected && takeBucket && w === 0) recordTakeBound(ctx, state, pass, threshold, sampled);
  const keys = ctx.keys;
  const start = seg.start;
  const mask = seg.mask;
  const isF32 = ctx.isF32;
  const xor = ctx.integerKeyXor ^ mask;
  const bins = ctx.radixDigits;
  // Workgroup memory: selected items staged at [0, tile), kept at [tile, 2 tile), the next digit's
  // histogram at [2 tile, 2 tile + bins).
  const staged = shared.i32;
  const nextHistogram = 2 * tileItems;
  staged.fill(0, nextHistogram, nextHistogram + bins);
  const shift = digitShift(ctx, pass);
  const digitMaskP = digitMask(ctx, pass);
  const nextShift = digitShift(ctx, pass + 1);
  const nextMask = digitMask(ctx, pass + 1);
  const top = ctx.radixTopShift;
  const signDigit = bins >>> 1;
  const source = ctx.candidatesSlot[pass & 1]! + start;
  const next = ctx.candidatesSlot[(pass + 1) & 1]! + start;
  const selected = ctx.selectedSlot + segment * ctx.kMax;
  const kMax = ctx.kMax;
  for (let t = w; t * tileItems < count; t += tiles) {
    const from = t * tileItems;
    const to = Math.min(from + tileItems, count);
    let selectedCount = 0;
    let keptCount = 0;
    for (let c = from; c < to; c++) {
      const index = fromKeys ? c : temp[source + c]!;
      const s = isF32 ? f32Signed(keys[start + index]!) ^ mask : keys[start + index]! ^ xor;
      const digit = pass === 0 ? (s >>> top) ^ signDigit : (s >>> shift) & digitMaskP;
      if (digit > threshold || (takeBucket && digit === threshold)) staged[selectedCount++] = index;
      else if (digit === threshold) {
        staged[tileItems + keptCount++] = index;
        staged[nextHistogram + ((s >>> nextShift) & nextMask)]!++;
      }
    }
    // Where the compaction launches write the selection, the selected items are only counted.
    if (selectedCount > 0 && countsSelected) appendCount(temp, state + radixState.selectedByPass + pass, selectedCount, tiles);
    else if (selectedCount > 0) {
      const at = before + appendCount(temp, state + radixState.selectedByPass + pass, selectedCount, tiles);
      // Only inconsistent inputs under 'trust' could select past take; never write past the segment's slots.
      const copy = Math.min(selectedCount, kMax - at);
      for (let j = 0; j < copy; j++) temp[selected + at + j] = staged[j]!;
    }
    if (keptCount > 0) {
      const at = appendCount(temp, state + radixState.keptByPass + pass, keptCount, tiles);
      temp.set(staged.subarray(tileItems, tileItems + keptCount), next + at);
    }
  }
  const histogram = histogramAt(ctx, segment, pass + 1);
  for (let digit = 0; digit < bins; digit++) {
    const c = staged[nextHistogram + digit]!;
    if (c === 0) continue;
    if (tiles === 1) temp[histogram + digit]! += c;
    else Atomics.add(temp, histogram + digit, c);
  }
  if (finalizes) {
    // Every workgroup with input arrives (the same count on every backend: a state word the twins compare).
    const participants = Math.min(tiles, Math.ceil(count / tileItems));
    if (appendCount(temp, state + radixState.filterArrived, 1, tiles) + 1 === participants) finalizeSegment(ctx, segment, shared);
  }
}

/**
 * Where the take ends with digit `pass`'s threshold bucket, in a selection the compaction launches
 * write: the selection is every key at or above the bucket's least key (the digits before this one,
 * which every candidate shares, then the bucket's, zeros after), and at or above the sampled
 * threshold where pass 0 read only the keys that reached it; all keys equal to it are taken.
 */
function recordTakeBound(ctx: TopKContext, state: number, pass: number, bucket: number, sampled: boolean): void {
  const temp = ctx.temp;
  let least = (bucket << digitShift(ctx, pass)) >>> 0;
  if (pass > 0) least = (least | candidatesPrefix(ctx, pass)) >>> 0;
  if (sampled) least = Math.max(least, temp[state + radixState.threshold]! >>> 0);
  temp[state + radixState.compactThreshold] = least;
  temp[state + radixState.compactTies] = -1;
  temp[state + radixState.compactPending] = 1;
}

/** A take past the tile that the compaction launches write (radix-plan.ts radixCompacts): the filters only count its selected keys. */
function compactedTake(ctx: TopKContext, seg: Segment): boolean {
  return ctx.radixCompacts && seg.take > ctx.policy.tileItems;
}

/** The digits before digit `pass` (> 0) that every candidate of the segment entered last shares, the rest zero. */
function candidatesPrefix(ctx: TopKContext, pass: number): number {
  const key = orderedKeyAt(ctx, ctx.temp[ctx.candidatesSlot[pass & 1]! + segmentOfWorkgroup.start]!);
  return (key & ~((1 << (32 - ctx.radixBits * pass)) - 1)) >>> 0;
}

/** Adds `n` to a counter and returns its old value: atomically where workgroups of the segment may run on other threads. */
function appendCount(temp: Int32Array, at: number, n: number, workgroupsPerSegment: number): number {
  if (workgroupsPerSegment > 1) return Atomics.add(temp, at, n);
  const old = temp[at]!;
  temp[at] = old + n;
  return old;
}

/**
 * Moves the `wanted` smallest entries of `list` (distinct indices) to its front, in any order: nothing
 * when all are wanted or the list is ascending (one thread appended it), else a quickselect (linear,
 * where sorting what worker threads appended out of order would cost n log n).
 */
function smallestFirst(list: Int32Array, wanted: number): void {
  const n = list.length;
  if (wanted <= 0 || wanted >= n) return;
  for (let j = 1; j < n; j++) {
    if (list[j]! < list[j - 1]!) {
      nthSmallest(list, n, wanted - 1);
      return;
    }
  }
}

/**
 * 'radix-finalize': the last digit's bucket (items above it selected, its members tied on one
 * ordered key: the smallest indices win, or the first found), then order and write the outputs.
 */
export function runRadixFinalize(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const segment = enter(params.ctx, workgroupId);
  if (segment >= 0) finalizeSegment(params.ctx, segment, shared);
}

/** Finalize's work on the segment entered last (segmentOfWorkgroup): its own launch, or the last filter's. */
function finalizeSegment(ctx: TopKContext, segment: number, shared: WorkgroupMemory): void {
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * radixStateWords;
  const kMax = ctx.kMax;
  const last = ctx.radixPasses - 1;
  const selected = ctx.selectedSlot + segment * kMax;
  let count = Math.min(selectedBefore(temp, state, last), seg.take);
  // Under the compaction the filters only counted the keys they selected, and the one that ended
  // the take (if one did) wrote the selection's least key (recordTakeBound).
  const compacts = compactedTake(ctx, seg);
  if (compacts && count >= seg.take) return;
  const memory = shared.i32; // keys at [0, kMax), indices at [kMax, 2 kMax)
  if (!compacts) for (let j = 0; j < count; j++) memory[kMax + j] = temp[selected + j]!;
  const keys = ctx.keys;
  const start = seg.start;
  const mask = seg.mask;
  const isF32 = ctx.isF32;
  const xor = ctx.integerKeyXor ^ mask;
  if (count < seg.take) {
    const remaining = seg.take - count;
    const available = Math.min(temp[state + radixState.keptByPass + last - 1]!, seg.size);
    chooseDigit(temp, histogramAt(ctx, segment, last), ctx.radixDigits, remaining);
    const threshold = choice[0]!;
    const takeBucket = choice[1]! + choice[2]! === remaining;
    const source = ctx.candidatesSlot[last & 1]! + start;
    const ties = ctx.candidatesSlot[(last + 1) & 1]! + start;
    if (compacts) {
      // The compaction launches write the selection in index order (radix-plan.ts): the threshold
      // (the candidates' digits above the last, which they share, then the last's bucket) and the
      // keys equal to it that are taken.
      temp[state + radixState.compactThreshold] = candidatesPrefix(ctx, last) | threshold;
      temp[state + radixState.compactTies] = remaining - choice[1]!;
      temp[state + radixState.compactPending] = 1;
      return;
    }
    const shift = digitShift(ctx, last);
    const digitMaskLast = digitMask(ctx, last);
    let tied = 0;
    let chosen = count;
    for (let c = 0; c < available; c++) {
      const index = temp[source + c]!;
      const s = isF32 ? f32Signed(keys[start + index]!) ^ mask : keys[start + index]! ^ xor;
      const digit = (s >>> shift) & digitMaskLast;
      if (digit > threshold || (takeBucket && digit === threshold)) {
        if (chosen < seg.take) memory[kMax + chosen++] = index;
      } else if (digit === threshold) temp[ties + tied++] = index;
    }
    // The ties share one ordered key: the smallest indices win, or with ties taken as found, the
    // first ones appended (which may change with the threads' timing).
    const take = Math.min(seg.take - chosen, tied);
    if (take > 0) {
      if (!ctx.tiesAsFound) smallestFirst(temp.subarray(ties, ties + tied), take);
      for (let j = 0; j < take; j++) memory[kMax + chosen + j] = temp[ties + j]!;
    }
    count = chosen + take;
  }
  // The selection's key bits as the collect left them (in the order of `selected`), while that order stands.
  let bits = count === seg.take && pickedInCollect(ctx, seg, state) ? ctx.candidatesSlot[1]! + start : -1;
  if (!ctx.sorted) {
    // Index order: the same whatever order the tiles' atomic appends took (unless it may change).
    if (!ctx.orderAsFound && !ascending(memory, kMax, kMax + count)) {
      ensureAscending(memory, kMax, kMax + count);
      bits = -1;
    }
  } else if (count > 1) {
    if (bits >= 0 && isF32) for (let j = 0; j < count; j++) memory[j] = f32Signed(temp[bits + j]!) ^ mask;
    else if (bits >= 0) for (let j = 0; j < count; j++) memory[j] = temp[bits + j]! ^ xor;
    else if (isF32) for (let j = 0; j < count; j++) memory[j] = f32Signed(keys[start + memory[kMax + j]!]!) ^ mask;
    else for (let j = 0; j < count; j++) memory[j] = keys[start + memory[kMax + j]!]! ^ xor;
    // Filter pass 0's own selection (selectAmongCandidates) comes in rank order already.
    if (!inRankOrder(memory, kMax, count)) {
      sortByRank(memory, memory, 0, kMax, count, !ctx.tiesAsFound);
      bits = -1;
    }
  }
  if (bits >= 0) writeSegmentOutputs(ctx, segment, seg, memory, kMax, count, temp, bits);
  else writeSegmentOutputs(ctx, segment, seg, memory, kMax, count);
}

/** The ordered key of item j of the segment entered last, as the WGSL's orderedKey: the signed ordered key with its sign bit flipped, unsigned. */
function orderedKeyAt(ctx: TopKContext, j: number): number {
  const seg = segmentOfWorkgroup;
  const bits = ctx.keys[seg.start + j]!;
  return ((ctx.isF32 ? f32Signed(bits) ^ seg.mask : bits ^ ctx.integerKeyXor ^ seg.mask) ^ signBit) >>> 0;
}

/**
 * The compaction's tile (webgpu/radix-compact.ts has the rules): the segment and tile of workgroup
 * `workgroupId`, where finalize left the compaction pending; -1 else.
 */
function enterCompactTile(ctx: TopKContext, workgroupId: number): number {
  const tiles = ctx.tilesPerSegment;
  const segment = enter(ctx, Math.floor(workgroupId / tiles));
  if (segment < 0 || ctx.temp[ctx.stateSlot + segment * radixStateWords + radixState.compactPending] !== 1) return -1;
  return segment;
}

/** 'radix-compact-count' (grid maxSegments * tiles): the tile's keys above the selection's threshold, and equal to it. */
export function runRadixCompactCount(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: TopKKernelParams): void {
  const segment = enterCompactTile(ctx, workgroupId);
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const tiles = ctx.tilesPerSegment;
  const tile = workgroupId % tiles;
  const threshold = ctx.temp[ctx.stateSlot + segment * radixStateWords + radixState.compactThreshold]! >>> 0;
  const begin = Math.min(seg.size, tile * ctx.policy.radixTileItems);
  const end = Math.min(seg.size, begin + ctx.policy.radixTileItems);
  let above = 0;
  let equal = 0;
  for (let j = begin; j < end; j++) {
    const key = orderedKeyAt(ctx, j);
    if (key > threshold) above++;
    else if (key === threshold) equal++;
  }
  const at = ctx.compactCountsSlot + 2 * (segment * tiles + tile);
  ctx.temp[at] = above;
  ctx.temp[at + 1] = equal;
}

/**
 * 'radix-compact-write' (grid maxSegments * tiles): the tile's selected keys at their places in
 * index order (a key above the threshold, or one of the first `ties` equal to it), and tile 0 the
 * fills past the take.
 */
export function runRadixCompactWrite(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: TopKKernelParams): void {
  const segment = enterCompactTile(ctx, workgroupId);
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const tiles = ctx.tilesPerSegment;
  const tile = workgroupId % tiles;
  const state = ctx.stateSlot + segment * radixStateWords;
  const threshold = temp[state + radixState.compactThreshold]! >>> 0;
  const ties = temp[state + radixState.compactTies]! >>> 0;
  const counts = ctx.compactCountsSlot + 2 * segment * tiles;
  let above = 0;
  let equal = 0;
  for (let t = 0; t < tile; t++) {
    above += temp[counts + 2 * t]!;
    equal += temp[counts + 2 * t + 1]!;
  }
  const begin = Math.min(seg.size, tile * ctx.policy.radixTileItems);
  const end = Math.min(seg.size, begin + ctx.policy.radixTileItems);
  const out = segment * ctx.kMax;
  for (let j = begin; j < end; j++) {
    const key = orderedKeyAt(ctx, j);
    if (key > threshold) {
      const at = above + Math.min(equal, ties);
      if (at < seg.take) writeSegmentOutput(ctx, out + at, seg.start, j);
      above++;
    } else if (key === threshold) {
      if (equal < ties && above + equal < seg.take) writeSegmentOutput(ctx, out + above + equal, seg.start, j);
      equal++;
    }
  }
  if (tile === 0) writeSegmentFills(ctx, out + seg.take, out + ctx.kMax, seg.direction);
}

/** Whether list[from, to) is ascending. */
function ascending(list: Int32Array, from: number, to: number): boolean {
  for (let j = from + 1; j < to; j++) if (list[j]! < list[j - 1]!) return false;
  return true;
}
