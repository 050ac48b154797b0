import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import {
  Segment,
  type TopKContext,
  bit,
  type TopKKernelParams,
  ensureAscending,
  f32Signed,
  resolveSegment,
  signBit,
  sortByRank,
  writeSegmentOutputs,
} from './common.js';

/*
 * The 'radix-select' variant, the general case: a multi-pass radix select over the 32-bit ordered
 * key, policy.radixBits-bit digits (8: four passes) MSB first, with per-segment state in temporary
 * storage:
 *
 *   'radix-init'       (grid maxSegments)            zero the segment's histogram and state
 *   for pass p = 0..passes-1 (shift 32 - bits (p + 1)):
 *   'radix-histogram'  (grid maxSegments * tiles)     histogram of the candidates' digit p
 *   'radix-choose'     (grid maxSegments)            the threshold digit b and whether its whole bucket is taken
 *   'radix-filter'     (grid maxSegments * tiles)     digit > b -> selected; digit == b -> next candidates (or selected)
 *   'radix-finalize'   (grid maxSegments)            ties from the last pass's candidates (smallest indices), sort, write
 *
 * Tiles: tile t of segment s is workgroup s * tiles + t and covers policy.radixTileItems items (keys
 * in pass 0, candidates of buffer (p-1)&1 after). Candidates and selected entries are segment-local
 * indices; a segment's candidates live at its own start in `candidates0`/`candidates1`. As on a GPU,
 * tiles of one segment may run concurrently (CPU worker threads): with several tiles per segment the
 * histogram adds are atomic and a filter tile stages its selected items and candidates in workgroup
 * memory, then appends each list with one atomic add. Candidates may so come out of index order:
 * finalize puts the ties in index order, and the selection in rank order ('sorted') or index order
 * ('unsorted'), so results never depend on the order tiles ran in. Where the requirements let results
 * change between runs (`determinism: 'not-guaranteed'` with `tieBreak: 'any'`, or with 'unsorted'),
 * finalize skips that: it takes the first tied candidates appended, or keeps the selection as appended.
 *
 * State words per segment (problem.ts): [0 remaining, 1 selectedCount, 2 candidateCount0,
 * 3 candidateCount1, 4 threshold digit, 5 takeBucket, 6 done, 7 k clamped].
 *
 * With device-only size bounds the plan also launches single-tile; these kernels exit when the device
 * bounds' max fits the tile.
 */

/** Workgroup memory of 'radix-histogram': four interleaved local histograms, then pass 0's keys past the sampled threshold, staged. */
export function radixHistogramWorkgroupBytes(radixTileItems: number): number {
  return 4096 + radixTileItems * 4;
}
/** Workgroup memory of 'radix-filter': the tile's selected items, then its candidates, staged. */
export function radixFilterWorkgroupBytes(radixTileItems: number): number {
  return radixTileItems * 8;
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

/** 'radix-init': zero the histogram and state of one segment. */
export function runRadixInit(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const segment = enter(ctx, workgroupId);
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const histogram = ctx.histogramSlot + segment * 256;
  temp.fill(0, histogram, histogram + 256);
  const state = ctx.stateSlot + segment * 8;
  temp.fill(0, state, state + 8);
  temp[state] = seg.take;
  temp[state + 6] = seg.take === 0 ? 1 : 0; // nothing to select: every pass skips the segment
  temp[state + 7] = seg.k;
  // The sampled threshold for pass 0 (see below), kept in the segment's first `selected` word until
  // pass 0's filter writes the selection there.
  temp[ctx.selectedSlot + segment * ctx.kMax] = seg.take === 0 ? signBit : sampledThreshold(ctx, seg);
}

/*
 * Pass 0 with a sampled threshold (CPU only; the launches are the same). On long segments with a
 * small k, 'radix-init' estimates from a strided sample a signed ordered key T that about 1.5 k + a
 * few keys reach; 'radix-histogram' pass 0, besides the full histogram of the top digit, appends
 * the keys >= T to `candidates1` (the buffer pass 0 would read if it had a previous pass; count in
 * state word 3). When at least `remaining` keys reached T, every selected key is among them, so
 * 'radix-choose' pass 0 chooses the digit from their histogram instead and flags the segment (state
 * word 5, bit 1), and 'radix-filter' pass 0 reads those few candidates instead of every key. When
 * fewer reached T (a sample that misled), the full histogram is used and pass 0 runs as usual. The
 * selection is the same either way: the candidates left are the keys of the threshold bucket that
 * can still be selected, which the next passes and finalize resolve exactly.
 */

const sample = new Int32Array(8192);

/** A signed ordered key about 1.5 take + 8 of the segment's keys reach, or signBit for none (segment too short or k too large). */
function sampledThreshold(ctx: TopKContext, seg: Segment): number {
  const { size, take, start, mask } = seg;
  if (size < 1024 || take * 4 > size) return signBit;
  const m = Math.min(sample.length, Math.max(256, size >>> 5));
  const j = Math.ceil((1.5 * take * m) / size) + 8; // the j-th largest of the sample
  if (j * 2 > m) return signBit;
  const keys = ctx.keys;
  const step = size / m;
  if (ctx.isF32) for (let i = 0; i < m; i++) sample[i] = f32Signed(keys[start + Math.floor(i * step)]!) ^ mask;
  else {
    const xor = ctx.integerKeyXor ^ mask;
    for (let i = 0; i < m; i++) sample[i] = keys[start + Math.floor(i * step)]! ^ xor;
  }
  const threshold = nthSmallest(sample, m, m - j);
  return threshold === signBit ? signBit : threshold;
}

/** Whether under 1/32 of the keys are expected to reach the sampled threshold (then a branch beats branch-free writes). */
function thresholdIsRare(size: number, take: number): boolean {
  const m = Math.min(sample.length, Math.max(256, size >>> 5));
  const j = Math.ceil((1.5 * take * m) / size) + 8;
  return j * 32 < m;
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

/** 'radix-histogram' for the launch's pass. */
export function runRadixHistogram(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const tiles = ctx.tilesPerSegment;
  const segment = enter(ctx, tiles === 1 ? workgroupId : Math.floor(workgroupId / tiles));
  if (segment < 0) return;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * 8;
  if (temp[state + 6] !== 0) return;
  const seg = segmentOfWorkgroup;
  const pass = params.pass;
  const tileItems = ctx.policy.radixTileItems;
  const from = (workgroupId - segment * tiles) * tileItems;
  const count = pass === 0 ? seg.size : temp[state + 2 + ((pass - 1) & 1)]!;
  const to = Math.min(from + tileItems, count);
  if (from >= to) return;
  // Four interleaved local histograms: consecutive equal digits do not wait on one counter.
  const local = shared.i32;
  local.fill(0, 0, 1024);
  const keys = ctx.keys;
  const start = seg.start;
  const mask = seg.mask;
  const isF32 = ctx.isF32;
  const xor = ctx.integerKeyXor ^ mask;
  const histogram = ctx.histogramSlot + segment * 256;
  if (pass === 0) {
    // Bins by the top digit of sk, whose sign bit is flipped against the ordered key's: digit = bin ^ signDigit.
    const top = ctx.radixTopShift;
    const end = start + to;
    let p = start + from;
    const threshold = temp[ctx.selectedSlot + segment * ctx.kMax]!;
    if (threshold !== signBit) {
      histogramAndThreshold(ctx, segment, state, tiles, p, end, start, mask, xor, threshold, thresholdIsRare(seg.size, seg.take), local);
    } else if (isF32) {
      for (; p + 3 < end; p += 4) {
        local[(f32Signed(keys[p]!) ^ mask) >>> top]!++;
        local[256 + ((f32Signed(keys[p + 1]!) ^ mask) >>> top)]!++;
        local[512 + ((f32Signed(keys[p + 2]!) ^ mask) >>> top)]!++;
        local[768 + ((f32Signed(keys[p + 3]!) ^ mask) >>> top)]!++;
      }
      for (; p < end; p++) local[(f32Signed(keys[p]!) ^ mask) >>> top]!++;
    } else {
      for (; p + 3 < end; p += 4) {
        local[(keys[p]! ^ xor) >>> top]!++;
        local[256 + ((keys[p + 1]! ^ xor) >>> top)]!++;
        local[512 + ((keys[p + 2]! ^ xor) >>> top)]!++;
        local[768 + ((keys[p + 3]! ^ xor) >>> top)]!++;
      }
      for (; p < end; p++) local[(keys[p]! ^ xor) >>> top]!++;
    }
    const signDigit = ctx.radixDigits >> 1;
    for (let bin = 0; bin < ctx.radixDigits; bin++) {
      const c = local[bin]! + local[256 + bin]! + local[512 + bin]! + local[768 + bin]!;
      if (c === 0) continue;
      // Tiles of one segment may run on different threads: their adds are atomic, as on a GPU.
      if (tiles === 1) temp[histogram + (bin ^ signDigit)]! += c;
      else Atomics.add(temp, histogram + (bin ^ signDigit), c);
    }
    return;
  }
  const shift = ctx.radixTopShift - ctx.radixBits * pass;
  const digitMask = ctx.radixDigits - 1;
  const candidates = ctx.candidatesSlot[(pass - 1) & 1]! + start;
  let c = from;
  if (isF32) {
    for (; c + 3 < to; c += 4) {
      local[((f32Signed(keys[start + temp[candidates + c]!]!) ^ mask) >>> shift) & digitMask]!++;
      local[256 + (((f32Signed(keys[start + temp[candidates + c + 1]!]!) ^ mask) >>> shift) & digitMask)]!++;
      local[512 + (((f32Signed(keys[start + temp[candidates + c + 2]!]!) ^ mask) >>> shift) & digitMask)]!++;
      local[768 + (((f32Signed(keys[start + temp[candidates + c + 3]!]!) ^ mask) >>> shift) & digitMask)]!++;
    }
    for (; c < to; c++) local[((f32Signed(keys[start + temp[candidates + c]!]!) ^ mask) >>> shift) & digitMask]!++;
  } else {
    for (; c + 3 < to; c += 4) {
      local[((keys[start + temp[candidates + c]!]! ^ xor) >>> shift) & digitMask]!++;
      local[256 + (((keys[start + temp[candidates + c + 1]!]! ^ xor) >>> shift) & digitMask)]!++;
      local[512 + (((keys[start + temp[candidates + c + 2]!]! ^ xor) >>> shift) & digitMask)]!++;
      local[768 + (((keys[start + temp[candidates + c + 3]!]! ^ xor) >>> shift) & digitMask)]!++;
    }
    for (; c < to; c++) local[((keys[start + temp[candidates + c]!]! ^ xor) >>> shift) & digitMask]!++;
  }
  for (let digit = 0; digit < ctx.radixDigits; digit++) {
    const n = local[digit]! + local[256 + digit]! + local[512 + digit]! + local[768 + digit]!;
    if (n === 0) continue;
    if (tiles === 1) temp[histogram + digit]! += n;
    else Atomics.add(temp, histogram + digit, n);
  }
}

/** Pass 0's histogram of a tile that also collects the keys >= the sampled threshold (a function of its own, so its loops get compiled on their own). */
function histogramAndThreshold(
  ctx: TopKContext,
  segment: number,
  state: number,
  tiles: number,
  from: number,
  end: number,
  start: number,
  mask: number,
  xor: number,
  threshold: number,
  rare: boolean,
  local: Int32Array,
): void {
  const temp = ctx.temp;
  const keys = ctx.keys;
  const top = ctx.radixTopShift;
  const isF32 = ctx.isF32;
  let p = from;
  void segment;
  // With the sampled threshold: also collect the keys >= T.
  const direct = tiles === 1;
  const dst = direct ? temp : local;
  const out = direct ? ctx.candidatesSlot[1]! + start : 1024;
  let n = direct ? temp[state + 3]! : 0;
  if (rare) {
  // Few keys reach T: a well-predicted branch per four keys.
    if (isF32) {
      for (; p + 3 < end; p += 4) {
        const s0 = f32Signed(keys[p]!) ^ mask;
        const s1 = f32Signed(keys[p + 1]!) ^ mask;
        const s2 = f32Signed(keys[p + 2]!) ^ mask;
        const s3 = f32Signed(keys[p + 3]!) ^ mask;
        local[s0 >>> top]!++;
        local[256 + (s1 >>> top)]!++;
        local[512 + (s2 >>> top)]!++;
        local[768 + (s3 >>> top)]!++;
        if ((bit(s0 >= threshold) | bit(s1 >= threshold) | bit(s2 >= threshold) | bit(s3 >= threshold)) !== 0) {
          if (s0 >= threshold) dst[out + n++] = p - start;
          if (s1 >= threshold) dst[out + n++] = p + 1 - start;
          if (s2 >= threshold) dst[out + n++] = p + 2 - start;
          if (s3 >= threshold) dst[out + n++] = p + 3 - start;
        }
      }
      for (; p < end; p++) {
        const s0 = f32Signed(keys[p]!) ^ mask;
        local[s0 >>> top]!++;
        if (s0 >= threshold) dst[out + n++] = p - start;
      }
    } else {
      for (; p + 3 < end; p += 4) {
        const s0 = keys[p]! ^ xor;
        const s1 = keys[p + 1]! ^ xor;
        const s2 = keys[p + 2]! ^ xor;
        const s3 = keys[p + 3]! ^ xor;
        local[s0 >>> top]!++;
        local[256 + (s1 >>> top)]!++;
        local[512 + (s2 >>> top)]!++;
        local[768 + (s3 >>> top)]!++;
        if ((bit(s0 >= threshold) | bit(s1 >= threshold) | bit(s2 >= threshold) | bit(s3 >= threshold)) !== 0) {
          if (s0 >= threshold) dst[out + n++] = p - start;
          if (s1 >= threshold) dst[out + n++] = p + 1 - start;
          if (s2 >= threshold) dst[out + n++] = p + 2 - start;
          if (s3 >= threshold) dst[out + n++] = p + 3 - start;
        }
      }
      for (; p < end; p++) {
        const s0 = keys[p]! ^ xor;
        local[s0 >>> top]!++;
        if (s0 >= threshold) dst[out + n++] = p - start;
      }
    }
  } else {
    if (isF32) {
      for (; p + 3 < end; p += 4) {
        const s0 = f32Signed(keys[p]!) ^ mask;
        const s1 = f32Signed(keys[p + 1]!) ^ mask;
        const s2 = f32Signed(keys[p + 2]!) ^ mask;
        const s3 = f32Signed(keys[p + 3]!) ^ mask;
        local[s0 >>> top]!++;
        local[256 + (s1 >>> top)]!++;
        local[512 + (s2 >>> top)]!++;
        local[768 + (s3 >>> top)]!++;
        // Branch-free: each key is written, the count advances past those >= T.
        const j = p - start;
        dst[out + n] = j;
        n += bit(s0 >= threshold);
        dst[out + n] = j + 1;
        n += bit(s1 >= threshold);
        dst[out + n] = j + 2;
        n += bit(s2 >= threshold);
        dst[out + n] = j + 3;
        n += bit(s3 >= threshold);
      }
      for (; p < end; p++) {
        const s0 = f32Signed(keys[p]!) ^ mask;
        local[s0 >>> top]!++;
        if (s0 >= threshold) dst[out + n++] = p - start;
      }
    } else {
      for (; p + 3 < end; p += 4) {
        const s0 = keys[p]! ^ xor;
        const s1 = keys[p + 1]! ^ xor;
        const s2 = keys[p + 2]! ^ xor;
        const s3 = keys[p + 3]! ^ xor;
        local[s0 >>> top]!++;
        local[256 + (s1 >>> top)]!++;
        local[512 + (s2 >>> top)]!++;
        local[768 + (s3 >>> top)]!++;
        // Branch-free: each key is written, the count advances past those >= T.
        const j = p - start;
        dst[out + n] = j;
        n += bit(s0 >= threshold);
        dst[out + n] = j + 1;
        n += bit(s1 >= threshold);
        dst[out + n] = j + 2;
        n += bit(s2 >= threshold);
        dst[out + n] = j + 3;
        n += bit(s3 >= threshold);
      }
      for (; p < end; p++) {
        const s0 = keys[p]! ^ xor;
        local[s0 >>> top]!++;
        if (s0 >= threshold) dst[out + n++] = p - start;
      }
    }
  }
  if (direct) temp[state + 3] = n;
  else if (n > 0) {
    const at = Atomics.add(temp, state + 3, n);
    temp.set(local.subarray(1024, 1024 + n), ctx.candidatesSlot[1]! + start + at);
  }
}

/** 'radix-choose' for the launch's pass: the threshold digit, and the histogram zeroed for the next pass. */
export function runRadixChoose(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const segment = enter(ctx, workgroupId);
  if (segment < 0) return;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * 8;
  if (temp[state + 6] !== 0) return;
  const take = Math.min(temp[state + 7]!, segmentOfWorkgroup.size);
  const remaining = take - temp[state + 1]!;
  temp[state] = remaining;
  if (remaining <= 0) {
    temp[state + 6] = 1;
    return;
  }
  const histogram = ctx.histogramSlot + segment * 256;
  if (params.pass === 0) {
    const reached = temp[state + 3]!;
    if (reached >= remaining) {
      chooseFromThresholdCandidates(ctx, segment, state, remaining, reached);
      temp.fill(0, histogram, histogram + ctx.radixDigits);
      return;
    }
  }
  let above = 0;
  let digit = ctx.radixDigits - 1;
  let inBucket = 0;
  for (; digit >= 0; digit--) {
    inBucket = temp[histogram + digit]!;
    if (above + inBucket >= remaining) break;
    above += inBucket;
  }
  if (digit < 0) {
    // Fewer candidates than remaining: only inconsistent inputs under 'trust' get here. Take them all.
    digit = 0;
    inBucket = remaining - above;
  }
  temp[state + 4] = digit;
  temp[state + 5] = above + inBucket === remaining ? 1 : 0;
  temp[state + 2 + (params.pass & 1)] = 0;
  temp.fill(0, histogram, histogram + ctx.radixDigits);
}

const thresholdHistogram = new Int32Array(256);

/** 'radix-choose' pass 0 from the keys past the sampled threshold (candidates1): their top-digit histogram decides. */
function chooseFromThresholdCandidates(ctx: TopKContext, segment: number, state: number, remaining: number, reached: number): void {
  const temp = ctx.temp;
  const seg = segmentOfWorkgroup;
  const keys = ctx.keys;
  const start = seg.start;
  const mask = seg.mask;
  const candidates = ctx.candidatesSlot[1]! + start;
  const counts = thresholdHistogram;
  counts.fill(0);
  if (ctx.isF32) for (let c = 0; c < reached; c++) counts[((f32Signed(keys[start + temp[candidates + c]!]!) ^ mask) >>> 24) ^ 128]!++;
  else {
    const xor = ctx.integerKeyXor ^ mask;
    for (let c = 0; c < reached; c++) counts[((keys[start + temp[candidates + c]!]! ^ xor) >>> 24) ^ 128]!++;
  }
  let above = 0;
  let digit = 255;
  let inBucket = 0;
  for (; digit >= 0; digit--) {
    inBucket = counts[digit]!;
    if (above + inBucket >= remaining) break;
    above += inBucket;
  }
  temp[state + 4] = digit;
  temp[state + 5] = (above + inBucket === remaining ? 1 : 0) | 2;
  temp[state + 2] = 0;
  void segment;
}

/**
 * 'radix-filter' for the launch's pass. The tests are branch-free (a digit difference's sign):
 * each item is written to the next candidate slot and to the workgroup's staging list of selected
 * items, and the counters advance only when it belongs there. A candidate slot written is always
 * below the segment's size, so stray writes stay in the segment's own region; selected items are
 * staged in workgroup memory (one slot per tile item) and copied out, as a GPU workgroup would
 * compact before its one atomic add.
 */
export function runRadixFilter(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const tiles = ctx.tilesPerSegment;
  const segment = enter(ctx, tiles === 1 ? workgroupId : Math.floor(workgroupId / tiles));
  if (segment < 0) return;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * 8;
  if (temp[state + 6] !== 0) return;
  const seg = segmentOfWorkgroup;
  const pass = params.pass;
  const tileItems = ctx.policy.radixTileItems;
  const from = (workgroupId - segment * tiles) * tileItems;
  const flags = temp[state + 5]!;
  const fromThreshold = pass === 0 && (flags & 2) !== 0;
  const countIn = fromThreshold ? temp[state + 3]! : pass === 0 ? seg.size : temp[state + 2 + ((pass - 1) & 1)]!;
  const to = Math.min(from + tileItems, countIn);
  if (from >= to) return;
  const digit = temp[state + 4]!;
  const takeBucket = (flags & 1) !== 0;
  const keys = ctx.keys;
  const start = seg.start;
  const mask = seg.mask;
  const isF32 = ctx.isF32;
  const xor = ctx.integerKeyXor ^ mask;
  const staged = shared.i32;
  let stagedCount = 0;
  const outCounter = state + 2 + (pass & 1);
  // One tile per segment: candidates go straight to the next buffer. Several (which may run on
  // different threads): they are staged in workgroup memory and appended with one atomic add.
  const direct = tiles === 1;
  const dst = direct ? temp : staged;
  const out = direct ? ctx.candidatesSlot[pass & 1]! + start : tileItems;
  let outCount = direct ? temp[outCounter]! : 0;
  // Fewer than `remaining` (state[0], from choose) items of the segment are selected outright in this
  // pass; when that is a small share of the items, a (well predicted) branch beats a staged write each.
  const rareSelections = temp[state]! * 32 <= countIn;
  if (fromThreshold) {
    // Pass 0 over the keys past the sampled threshold (few): compare top digits of sk as signed numbers.
    const bucket = ((digit ^ 128) << 24) >> 24;
    const candidates = ctx.candidatesSlot[1]! + start;
    const xorKey = isF32 ? mask : xor;
    for (let c = from; c < to; c++) {
      const j = temp[candidates + c]!;
      const d = ((isF32 ? f32Signed(keys[start + j]!) ^ xorKey : keys[start + j]! ^ xorKey) >> 24) - bucket;
      if (d > 0 || (takeBucket && d === 0)) staged[stagedCount++] = j;
      else if (d === 0) dst[out + outCount++] = j;
    }
  } else if (pass === 0) {
    // Compare top digits of sk as signed numbers: d = (s >> top) - (the bucket's), |d| < radixDigits.
    const top = ctx.radixTopShift;
    const bucket = ((digit ^ (ctx.radixDigits >> 1)) << top) >> top;
    const end = start + to;
    if (takeBucket) {
      for (let p = start + from; p < end; p++) {
        const s = isF32 ? f32Signed(keys[p]!) ^ mask : keys[p]! ^ xor;
        staged[stagedCount] = p - start;
        stagedCount += ~((s >> top) - bucket) >>> 31;
      }
    } else if (rareSelections) {
      for (let p = start + from; p < end; p++) {
        const d = ((isF32 ? f32Signed(keys[p]!) ^ mask : keys[p]! ^ xor) >> top) - bucket;
        const j = p - start;
        dst[out + outCount] = j;
        outCount += ((d | -d) >>> 31) ^ 1;
        if (d > 0) staged[stagedCount++] = j;
      }
    } else if (isF32) {
      for (let p = start + from; p < end; p++) {
        const d = ((f32Signed(keys[p]!) ^ mask) >> top) - bucket;
        const j = p - start;
        dst[out + outCount] = j;
        outCount += ((d | -d) >>> 31) ^ 1;
        staged[stagedCount] = j;
        stagedCount += -d >>> 31;
      }
    } else {
      for (let p = start + from; p < end; p++) {
        const d = ((keys[p]! ^ xor) >> top) - bucket;
        const j = p - start;
        dst[out + outCount] = j;
        outCount += ((d | -d) >>> 31) ^ 1;
        staged[stagedCount] = j;
        stagedCount += -d >>> 31;
      }
    }
  } else {
    const shift = ctx.radixTopShift - ctx.radixBits * pass;
    const digitMask = ctx.radixDigits - 1;
    const candidates = ctx.candidatesSlot[(pass - 1) & 1]! + start;
    if (takeBucket) {
      for (let c = from; c < to; c++) {
        const j = temp[candidates + c]!;
        const s = isF32 ? f32Signed(keys[start + j]!) ^ mask : keys[start + j]! ^ xor;
        staged[stagedCount] = j;
        stagedCount += ~(((s >>> shift) & digitMask) - digit) >>> 31;
      }
    } else if (rareSelections) {
      for (let c = from; c < to; c++) {
        const j = temp[candidates + c]!;
        const s = isF32 ? f32Signed(keys[start + j]!) ^ mask : keys[start + j]! ^ xor;
        const d = ((s >>> shift) & digitMask) - digit;
        dst[out + outCount] = j;
        outCount += ((d | -d) >>> 31) ^ 1;
        if (d > 0) staged[stagedCount++] = j;
      }
    } else {
      for (let c = from; c < to; c++) {
        const j = temp[candidates + c]!;
        const s = isF32 ? f32Signed(keys[start + j]!) ^ mask : keys[start + j]! ^ xor;
        const d = ((s >>> shift) & digitMask) - digit;
        dst[out + outCount] = j;
        outCount += ((d | -d) >>> 31) ^ 1;
        staged[stagedCount] = j;
        stagedCount += -d >>> 31;
      }
    }
  }
  const selected = ctx.selectedSlot + segment * ctx.kMax;
  if (direct) {
    const selectedCount = temp[state + 1]!;
    // Only inconsistent inputs under 'trust' could select past take; never write past the segment's slots.
    const copy = Math.min(stagedCount, ctx.kMax - selectedCount);
    for (let j = 0; j < copy; j++) temp[selected + selectedCount + j] = staged[j]!;
    temp[state + 1] = selectedCount + copy;
    temp[outCounter] = outCount;
    return;
  }
  if (stagedCount > 0) {
    const selectedCount = Atomics.add(temp, state + 1, stagedCount);
    const copy = Math.min(stagedCount, ctx.kMax - selectedCount);
    for (let j = 0; j < copy; j++) temp[selected + selectedCount + j] = staged[j]!;
  }
  if (outCount > 0) {
    const at = Atomics.add(temp, outCounter, outCount);
    temp.set(staged.subarray(tileItems, tileItems + outCount), ctx.candidatesSlot[pass & 1]! + start + at);
  }
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

/** 'radix-finalize': ties from the last pass's candidates by smallest index, then sort and write the outputs. */
export function runRadixFinalize(workgroupId: number, _numWorkgroups: number, shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const segment = enter(ctx, workgroupId);
  if (segment < 0) return;
  const seg = segmentOfWorkgroup;
  const temp = ctx.temp;
  const state = ctx.stateSlot + segment * 8;
  const kMax = ctx.kMax;
  const selected = ctx.selectedSlot + segment * kMax;
  let count = Math.min(temp[state + 1]!, seg.take);
  const memory = shared.i32; // keys at [0, kMax), indices at [kMax, 2 kMax)
  for (let j = 0; j < count; j++) memory[kMax + j] = temp[selected + j]!;
  if (temp[state + 6] === 0 && count < seg.take) {
    // The last bucket's members all share one ordered key: the smallest indices win, or with ties
    // taken as found, the first ones the tiles appended (which may change with the threads' timing).
    const last = (ctx.radixPasses - 1) & 1;
    const candidates = ctx.candidatesSlot[last]! + seg.start;
    const available = Math.min(temp[state + 2 + last]!, seg.size);
    const ties = Math.min(seg.take - count, available);
    if (!ctx.tiesAsFound) smallestFirst(temp.subarray(candidates, candidates + available), ties);
    for (let j = 0; j < ties; j++) memory[kMax + count + j] = temp[candidates + j]!;
    count += ties;
  }
  if (!ctx.sorted) {
    // Index order: the same whatever order the tiles' atomic appends took (unless it may change).
    if (!ctx.orderAsFound) ensureAscending(memory, kMax, kMax + count);
  } else if (count > 1) {
    const keys = ctx.keys;
    const start = seg.start;
    const mask = seg.mask;
    if (ctx.isF32) for (let j = 0; j < count; j++) memory[j] = f32Signed(keys[start + memory[kMax + j]!]!) ^ mask;
    else {
      const xor = ctx.integerKeyXor ^ mask;
      for (let j = 0; j < count; j++) memory[j] = keys[start + memory[kMax + j]!]! ^ xor;
    }
    sortByRank(memory, memory, 0, kMax, count, !ctx.tiesAsFound);
  }
  writeSegmentOutputs(ctx, segment, seg, memory, kMax, count);
}
