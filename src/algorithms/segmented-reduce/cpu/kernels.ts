import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { canonicalNaNBits, f32Signed, minNormalF32, quietExponentBits } from '../../../backends/cpu/numerics.js';
import { type KernelParams, SegmentExtent, countOf, readSource } from '../../../backends/cpu/segments.js';
import { OpCode, identityBits, noIndex, sumOrder, takesMin } from '../ops.js';
import { publishedValue, publishedWords } from '../../../dispatch/published-words.js';
import { chunksPerWorkgroup, enteringChunkGroups, partialStatus, partialWords, publishedPartialWords, segmentPartials } from '../problem.js';
import { type ReduceContext, ValueKind } from './context.js';
import { simdAvailable, simdChunkTotalF32, simdExtremeF32, simdRowExtremesF32, simdRowTotalsF32 } from './simd.js';

/*
 * The reduce kernels on the CPU emulator, twins of the WGSL programs (webgpu/): the same grids, the
 * same partials, the same bits. A CPU workgroup runs its invocations as loops, so the variants differ
 * here in how the grid covers the segments ('thread': workgroupSize segments per workgroup,
 * 'subgroup': workgroupSize / subgroupSize, 'workgroup': one, 'multi-workgroup': one chunk), while
 * each segment's arithmetic is the one of ops.ts: f32 sums in the canonical order (lanes, a tree per
 * chunk, a tree over chunks), which a loop per lane computes exactly as the GPU's invocations do.
 * f32 chunk sums, extremes and packed rows of 8 or 16 run their inner loops as WebAssembly SIMD
 * (simd.ts) where the runtime has it and the backend allows it; the scalar loops here give the same
 * bits and remain the fallback (and NaN's path for extremes).
 */

const lanes = sumOrder.lanes;
const chunkItems = sumOrder.chunkItems;

/**
 * Items from which a chunk's canonical total and an f32 extreme take the SIMD loops (simd.ts), where
 * the backend allows them and this thread can run them: below, copying the items into the module's
 * memory and the call cost more than the scalar loops save (and a sum pads to a row of 256 lanes).
 * Measured on the 2-core AMD EPYC, 1M items in segments of n, ns an item scalar / SIMD: sums n = 64
 * 2.3 / 7.4, 96 2.4 / 2.4, 128 2.0 / 1.7, 256 2.0 / 0.9; max n = 48 2.5 / 2.5, 64 2.2 / 2.1, 128
 * 1.7 / 1.1, 1024 1.2 / 0.4.
 */
const simdSumItems = 128;
const simdExtremeItems = 64;

/** Whether this run's kernels take the SIMD loops on this thread. */
const simdOn = (ctx: ReduceContext) => ctx.simd && simdAvailable();

/** The canonical total of one chunk (see {@link chunkTotalF32}), through the SIMD loop where it pays. */
function chunkTotal(ctx: ReduceContext, start: number, n: number): number {
  return n >= simdSumItems && simdOn(ctx) ? simdChunkTotalF32(ctx.valueBits, ctx.valueSlab, start, n) : chunkTotalF32(ctx.valueF32, ctx.valueBits, start, n);
}

/**
 * Lane sums of one chunk. Float64 holds every f32 value exactly, and its loads and stores convert
 * nothing, so the lane loops below stay on doubles with one `Math.fround` per addition.
 */
const laneSums = new Float64Array(lanes);

/** A subnormal becomes the zero of its sign (numerics.ts `flushF32`, inlined into the hot loops). */
function flush(x: number): number {
  return Math.abs(x) >= minNormalF32 ? x : x * 0;
}

/** The canonical sum of two flushed f32 values (numerics.ts `addF32`). */
function add(a: number, b: number): number {
  const s = Math.fround(a + b);
  return Math.abs(s) >= minNormalF32 ? s : s * 0;
}

/**
 * The canonical total of one chunk of `n` (1 <= n <= chunkItems) f32 values from `base` (`bits`: the
 * same memory as int32): lane j sums
 * items j, j + 256, ... left to right; then the pairwise tree over the lanes, halves first (over the
 * next power of two of the lanes used: the rest are -0, whose additions change nothing).
 *
 * Lanes are added eight at a time in locals down the chunk's full rows of 256 items: eight
 * independent additions per row (one running sum waits on each addition's latency), and no lane
 * stored between rows. An addition is `Math.fround` of the double sum (exactly the rounded f32 sum)
 * with two compares that are almost never taken (an input or a result below 2^-126 in magnitude is
 * flushed). The partial last row's items come last in their lanes.
 */
export function chunkTotalF32(values: Float32Array, bits: Int32Array, base: number, n: number): number {
  if (n <= lanes) return shortTotalF32(values, bits, base, n);
  if (quiet(values, bits, base, n)) return quietChunkTotalF32(values, base, n);
  const lane = laneSums;
  const rows = n >>> 8;
  const m = minNormalF32;
  for (let j = 0; j < lanes; j += 8) {
    let p = base + j;
    let a0 = flush(values[p]!);
    let a1 = flush(values[p + 1]!);
    let a2 = flush(values[p + 2]!);
    let a3 = flush(values[p + 3]!);
    let a4 = flush(values[p + 4]!);
    let a5 = flush(values[p + 5]!);
    let a6 = flush(values[p + 6]!);
    let a7 = flush(values[p + 7]!);
    for (let r = 1; r < rows; r++) {
      p += lanes;
      let v0 = values[p]!;
      let v1 = values[p + 1]!;
      let v2 = values[p + 2]!;
      let v3 = values[p + 3]!;
      let v4 = values[p + 4]!;
      let v5 = values[p + 5]!;
      let v6 = values[p + 6]!;
      let v7 = values[p + 7]!;
      if (!(Math.abs(v0) >= m)) v0 *= 0;
      if (!(Math.abs(v1) >= m)) v1 *= 0;
      if (!(Math.abs(v2) >= m)) v2 *= 0;
      if (!(Math.abs(v3) >= m)) v3 *= 0;
      if (!(Math.abs(v4) >= m)) v4 *= 0;
      if (!(Math.abs(v5) >= m)) v5 *= 0;
      if (!(Math.abs(v6) >= m)) v6 *= 0;
      if (!(Math.abs(v7) >= m)) v7 *= 0;
      a0 = Math.fround(a0 + v0);
      a1 = Math.fround(a1 + v1);
      a2 = Math.fround(a2 + v2);
      a3 = Math.fround(a3 + v3);
      a4 = Math.fround(a4 + v4);
      a5 = Math.fround(a5 + v5);
      a6 = Math.fround(a6 + v6);
      a7 = Math.fround(a7 + v7);
      if (!(Math.abs(a0) >= m)) a0 *= 0;
      if (!(Math.abs(a1) >= m)) a1 *= 0;
      if (!(Math.abs(a2) >= m)) a2 *= 0;
      if (!(Math.abs(a3) >= m)) a3 *= 0;
      if (!(Math.abs(a4) >= m)) a4 *= 0;
      if (!(Math.abs(a5) >= m)) a5 *= 0;
      if (!(Math.abs(a6) >= m)) a6 *= 0;
      if (!(Math.abs(a7) >= m)) a7 *= 0;
    }
    lane[j] = a0;
    lane[j + 1] = a1;
    lane[j + 2] = a2;
    lane[j + 3] = a3;
    lane[j + 4] = a4;
    lane[j + 5] = a5;
    lane[j + 6] = a6;
    lane[j + 7] = a7;
  }
  const tail = base + rows * lanes;
  for (let j = 0, rest = n - rows * lanes; j < rest; j++) lane[j] = add(lane[j]!, flush(values[tail + j]!));
  for (let half = lanes >> 1; half >= 1; half >>= 1) {
    for (let j = 0; j < half; j++) lane[j] = add(lane[j]!, lane[j + half]!);
  }
  return lane[0]!;
}

/** {@link chunkTotalF32} of values that passed the {@link quiet} test: the same additions, no flush tests. */
function quietChunkTotalF32(values: Float32Array, base: number, n: number): number {
  const lane = laneSums;
  const rows = n >>> 8;
  const f = Math.fround;
  for (let j = 0; j < lanes; j += 8) {
    let p = base + j;
    let a0 = values[p]!;
    let a1 = values[p + 1]!;
    let a2 = values[p + 2]!;
    let a3 = values[p + 3]!;
    let a4 = values[p + 4]!;
    let a5 = values[p + 5]!;
    let a6 = values[p + 6]!;
    let a7 = values[p + 7]!;
    for (let r = 1; r < rows; r++) {
      p += lanes;
      a0 = f(a0 + values[p]!);
      a1 = f(a1 + values[p + 1]!);
      a2 = f(a2 + values[p + 2]!);
      a3 = f(a3 + values[p + 3]!);
      a4 = f(a4 + values[p + 4]!);
      a5 = f(a5 + values[p + 5]!);
      a6 = f(a6 + values[p + 6]!);
      a7 = f(a7 + values[p + 7]!);
    }
    lane[j] = a0;
    lane[j + 1] = a1;
    lane[j + 2] = a2;
    lane[j + 3] = a3;
    lane[j + 4] = a4;
    lane[j + 5] = a5;
    lane[j + 6] = a6;
    lane[j + 7] = a7;
  }
  const tail = base + rows * lanes;
  for (let j = 0, rest = n - rows * lanes; j < rest; j++) lane[j] = f(lane[j]! + values[tail + j]!);
  for (let half = lanes >> 1; half >= 1; half >>= 1) {
    for (let j = 0; j < half; j++) lane[j] = f(lane[j]! + lane[j + half]!);
  }
  return lane[0]!;
}

/**
 * The canonical total of `n` (1 <= n <= 256) values: one item per lane, so the tree runs over the
 * items themselves; its first level reads them (a lane past `n` is -0: its partner passes unchanged).
 */
function shortTotalF32(values: Float32Array, bits: Int32Array, base: number, n: number): number {
  if (n === 1) return flush(values[base]!);
  if (n <= 16) return tinyTotalF32(values, bits, base, n);
  let half = 1;
  while (half * 2 < n) half <<= 1;
  const lane = laneSums;
  const paired = n - half;
  if (quiet(values, bits, base, n)) {
    // No flush changes anything (quietExponentBits): the same tree with Math.fround alone.
    const f = Math.fround;
    for (let j = 0; j < paired; j++) lane[j] = f(values[base + j]! + values[base + j + half]!);
    for (let j = paired; j < half; j++) lane[j] = values[base + j]!;
    for (half >>= 1; half >= 1; half >>= 1) {
      for (let j = 0; j < half; j++) lane[j] = f(lane[j]! + lane[j + half]!);
    }
    return lane[0]!;
  }
  for (let j = 0; j < paired; j++) lane[j] = add(flush(values[base + j]!), flush(values[base + j + half]!));
  for (let j = paired; j < half; j++) lane[j] = flush(values[base + j]!);
  for (half >>= 1; half >= 1; half >>= 1) {
    for (let j = 0; j < half; j++) lane[j] = add(lane[j]!, lane[j + half]!);
  }
  return lane[0]!;
}

/**
 * The canonical total of `n` (2 <= n <= 16) values from `base` (`bits`: the same memory as int32), in locals: the tree over 16 lanes
 * whose lanes past `n` are -0 (adding -0 changes nothing, so this is the tree over the next power of
 * two of `n`, bit for bit). Short segments (MoE rows of 8 or 16 experts) spent more on the lane
 * array's loops and on flush tests than on their additions; values that pass the {@link
 * quietExponentBits} test (all but zeros and magnitudes below 2^-103) add without flush tests, and a
 * segment holding others takes the flushing tree.
 */
function tinyTotalF32(values: Float32Array, bits: Int32Array, base: number, n: number): number {
  return quiet(values, bits, base, n) ? quietTinyTotalF32(values, base, n) : flushedTinyTotalF32(values, base, n);
}

/** Whether `n` values from `base` are all zeros or at least 2^-103 in magnitude ({@link quietExponentBits}). */
function quiet(values: Float32Array, bits: Int32Array, base: number, n: number): boolean {
  const e = 0x7f800000;
  const q = quietExponentBits;
  let below = 0;
  let below2 = 0;
  let j = base;
  const end = base + n;
  // Four values a trip, in two chains: the loop's own steps cost as much as the test.
  for (; j + 4 <= end; j += 4) {
    below |= ((bits[j]! & e) - q) | ((bits[j + 1]! & e) - q);
    below2 |= ((bits[j + 2]! & e) - q) | ((bits[j + 3]! & e) - q);
  }
  for (; j < end; j++) below |= (bits[j]! & e) - q;
  return (below | below2) >= 0 || quietOrZero(values, base, n);
}

/** {@link tinyTotalF32} of values that passed the {@link quiet} test: no flush changes anything. */
function quietTinyTotalF32(values: Float32Array, base: number, n: number): number {
  const f = Math.fround;
  const x0 = values[base]!;
  const x1 = values[base + 1]!;
  const x2 = n > 2 ? values[base + 2]! : -0;
  const x3 = n > 3 ? values[base + 3]! : -0;
  const x4 = n > 4 ? values[base + 4]! : -0;
  const x5 = n > 5 ? values[base + 5]! : -0;
  const x6 = n > 6 ? values[base + 6]! : -0;
  const x7 = n > 7 ? values[base + 7]! : -0;
  if (n <= 8) return f(f(f(x0 + x4) + f(x2 + x6)) + f(f(x1 + x5) + f(x3 + x7)));
  // Lanes j + 8 onto j, then j + 4, j + 2, j + 1.
  const a0 = f(x0 + values[base + 8]!);
  const a1 = n > 9 ? f(x1 + values[base + 9]!) : x1;
  const a2 = n > 10 ? f(x2 + values[base + 10]!) : x2;
  const a3 = n > 11 ? f(x3 + values[base + 11]!) : x3;
  const a4 = n > 12 ? f(x4 + values[base + 12]!) : x4;
  const a5 = n > 13 ? f(x5 + values[base + 13]!) : x5;
  const a6 = n > 14 ? f(x6 + values[base + 14]!) : x6;
  const a7 = n > 15 ? f(x7 + values[base + 15]!) : x7;
  return f(f(f(a0 + a4) + f(a2 + a6)) + f(f(a1 + a5) + f(a3 + a7)));
}

/** {@link quietTinyTotalF32} of 16 values (the tree written out: V8 keeps it in registers). */
function quietTotal16(values: Float32Array, base: number): number {
  const f = Math.fround;
  return f(
    f(f(f(values[base]! + values[base + 8]!) + f(values[base + 4]! + values[base + 12]!)) + f(f(values[base + 2]! + values[base + 10]!) + f(values[base + 6]! + values[base + 14]!))) +
      f(f(f(values[base + 1]! + values[base + 9]!) + f(values[base + 5]! + values[base + 13]!)) + f(f(values[base + 3]! + values[base + 11]!) + f(values[base + 7]! + values[base + 15]!))),
  );
}

/** {@link quietTinyTotalF32} of 8 values. */
function quietTotal8(values: Float32Array, base: number): number {
  const f = Math.fround;
  return f(f(f(values[base]! + values[base + 4]!) + f(values[base + 2]! + values[base + 6]!)) + f(f(values[base + 1]! + values[base + 5]!) + f(values[base + 3]! + values[base + 7]!)));
}

/** Whether every one of `n` values from `base` that failed the {@link quietExponentBits} test is a zero. */
function quietOrZero(values: Float32Array, base: number, n: number): boolean {
  for (let j = 0; j < n; j++) {
    const v = values[base + j]!;
    if (v !== 0 && !(Math.abs(v) >= 2 ** -103)) return false;
  }
  return true;
}

/** {@link tinyTotalF32} with every flush: the tree over 16 lanes through the lane array. */
function flushedTinyTotalF32(values: Float32Array, base: number, n: number): number {
  const lane = laneSums;
  for (let j = 0; j < 16; j++) lane[j] = j < n ? flush(values[base + j]!) : -0;
  for (let half = 8; half >= 1; half >>= 1) {
    for (let j = 0; j < half; j++) lane[j] = add(lane[j]!, lane[j + half]!);
  }
  return lane[0]!;
}

/**
 * The pairwise tree over chunk totals in order, neighbours first, padded with -0 to a power of two,
 * computed as they come: `levels[l]` holds the pending subtree of 2^l chunks while bit l of `count`
 * is set (a binary counter). The fold adds the pending subtrees from the smallest up.
 */
export class ChunkTree {
  private readonly levels = new Float64Array(33);
  private count = 0;

  reset(): void {
    this.count = 0;
  }

  push(total: number): void {
    let carry = total;
    let level = 0;
    for (let n = this.count; (n & 1) === 1; n >>>= 1) carry = add(this.levels[level++]!, carry);
    this.levels[level] = carry;
    this.count++;
  }

  total(): number {
    let acc = -0;
    let first = true;
    for (let level = 0, n = this.count; n !== 0; level++, n >>>= 1) {
      if ((n & 1) === 0) continue;
      acc = first ? this.levels[level]! : add(this.levels[level]!, acc);
      first = false;
    }
    return acc;
  }
}

const chunkTree = new ChunkTree();

/** The canonical f32 sum of `size` values from `start` (ops.ts), or the fast one (float64, rounded once). */
function sumF32(ctx: ReduceContext, start: number, size: number): number {
  const values = ctx.valueF32;
  if (!ctx.canonical) {
    let s = 0;
    for (let p = start, end = start + size; p < end; p++) s += values[p]!;
    return Math.fround(s);
  }
  if (size <= chunkItems) return chunkTotal(ctx, start, size);
  chunkTree.reset();
  for (let c = 0; c < size; c += chunkItems) chunkTree.push(chunkTotal(ctx, start + c, Math.min(chunkItems, size - c)));
  return chunkTree.total();
}

/** The wrapped sum of `size` integers from `start` (as int32; u32 has the same bits). */
function sumInt(values: Int32Array, start: number, size: number): number {
  let s = 0;
  for (let p = start, end = start + size; p < end; p++) s = (s + values[p]!) | 0;
  return s;
}

/** Signed ordered key of a value's bits for 'max' (numerics.ts); XOR with -1 for 'min'. */
function keyOf(bits: number, kind: ValueKind): number {
  return kind === ValueKind.F32 ? f32Signed(bits) : kind === ValueKind.U32 ? bits ^ -0x80000000 : bits;
}

/**
 * Where the largest of the f32 values [start, end) (start < end) is, the first of equal ones, by
 * the ordered keys compared as floats: -0 equals +0 as a float too, and NaN (above everything, all
 * NaNs equal) is the one value `v <= best` is false for without being larger, so the first NaN
 * ends the search.
 */
function largestF32(values: Float32Array, start: number, end: number): number {
  let at = start;
  let best = values[start]!;
  if (best !== best) return at;
  for (let p = start + 1; p < end; p++) {
    const v = values[p]!;
    if (!(v <= best)) {
      at = p;
      if (v !== v) break;
      best = v;
    }
  }
  return at;
}

/**
 * Where the smallest of the f32 values [start, end) (start < end) is, the first of equal ones: NaN
 * is the largest key, so it wins only when every value is NaN (then the first); `v < best` is false
 * for a NaN v once `best` is not NaN.
 */
function smallestF32(values: Float32Array, start: number, end: number): number {
  let at = start;
  while (at < end && values[at]! !== values[at]!) at++;
  if (at === end) return start;
  let best = values[at]!;
  for (let p = at + 1; p < end; p++) {
    const v = values[p]!;
    if (v < best) {
      best = v;
      at = p;
    }
  }
  return at;
}

/**
 * Where the largest (or with `min` the smallest) of the f32 values [start, start + size) is, the
 * first of equal ones, by the SIMD loop a chunk at a time (a later chunk wins only when strictly
 * better); -1 when a value is NaN, for the scalar loops, which order NaN.
 */
function simdExtreme(ctx: ReduceContext, start: number, size: number, min: boolean): number {
  const values = ctx.valueF32;
  let at = -1;
  let best = 0;
  for (let first = 0; first < size; first += chunkItems) {
    const offset = simdExtremeF32(ctx.valueBits, ctx.valueSlab, start + first, Math.min(chunkItems, size - first), min);
    if (offset < 0) return -1;
    const p = start + first + offset;
    const v = values[p]!;
    if (at < 0 || (min ? v < best : v > best)) {
      at = p;
      best = v;
    }
  }
  return at;
}

/** The extreme found by {@link extreme}: its bits and segment-local index (noIndex for none). */
let extremeBits = 0;
let extremeIndex = noIndex;

/**
 * The extreme of `size` values from `start` (`mask` 0 for the largest key, -1 for the smallest), the
 * first of equal keys; `indexBase` is the segment-local index of `start`.
 */
function extreme(ctx: ReduceContext, start: number, size: number, mask: number, indexBase: number): void {
  if (size === 0) {
    extremeIndex = noIndex;
    return;
  }
  const values = ctx.valueBits;
  const kind = ctx.valueKind;
  let at = start;
  const end = start + size;
  if (kind === ValueKind.F32) {
    at = size >= simdExtremeItems && simdOn(ctx) ? simdExtreme(ctx, start, size, mask !== 0) : -1;
    if (at < 0) at = mask === 0 ? largestF32(ctx.valueF32, start, end) : smallestF32(ctx.valueF32, start, end);
  } else {
    const xor = (kind === ValueKind.U32 ? -0x80000000 : 0) ^ mask;
    let best = values[start]! ^ xor;
    for (let p = start + 1; p < end; p++) {
      const k = values[p]! ^ xor;
      if (k > best) {
        best = k;
        at = p;
      }
    }
  }
  extremeBits = values[at]!;
  extremeIndex = at - start + indexBase;
}

const f32Scratch = new Float32Array(1);
const bitsScratch = new Int32Array(f32Scratch.buffer);

function f32Of(bits: number): number {
  bitsScratch[0] = bits;
  return f32Scratch[0]!;
}

/** Writes segment `i`'s value bits and index. */
function write(ctx: ReduceContext, i: number, bits: number, index: number): void {
  ctx.outBits[i] = bits;
  const indices = ctx.indicesOut;
  if (indices !== undefined) indices[i] = index;
}

/** Writes an f32 sum: NaN as the canonical NaN. */
function writeF32Sum(ctx: ReduceContext, i: number, value: number): void {
  if (value === value) ctx.outF32[i] = value;
  else ctx.outBits[i] = canonicalNaNBits;
  const indices = ctx.indicesOut;
  if (indices !== undefined) indices[i] = noIndex;
}

/**
 * Segment `i`'s result from its items' reduction and the initial value (ops.ts): a sum adds the
 * initial value last (an empty segment gives it, else the identity); min and max let the initial
 * value win only when strictly better. `sum` is the items' sum (f32 value or int32), or the extreme is
 * in `extremeBits`/`extremeIndex`.
 */
function finish(ctx: ReduceContext, i: number, code: number, size: number, sum: number): void {
  const initial = ctx.initial !== undefined;
  const initialBits = initial ? ctx.initialBitsOf(i) : 0;
  if (code === OpCode.Sum) {
    if (ctx.valueKind !== ValueKind.F32) {
      write(ctx, i, (sum + initialBits) | 0, noIndex);
    } else if (size === 0) {
      write(ctx, i, initialBits, noIndex);
    } else {
      writeF32Sum(ctx, i, initial ? (ctx.canonical ? add(sum, flush(f32Of(initialBits))) : Math.fround(sum + f32Of(initialBits))) : sum);
    }
    return;
  }
  const mask = takesMin(code) ? -1 : 0;
  const kind = ctx.valueKind;
  if (extremeIndex === noIndex || (initial && (keyOf(initialBits, kind) ^ mask) > (keyOf(extremeBits, kind) ^ mask))) {
    write(ctx, i, initial ? initialBits : identityBits(code, ctx.valueType) | 0, noIndex);
  } else {
    write(ctx, i, extremeBits, extremeIndex);
  }
}

const extent = new SegmentExtent();

/** Reduces segment `i` (< activeSegments()) with op `code` in one piece, at most `capacity` items. */
function reduceSegment(ctx: ReduceContext, i: number, capacity: number, code: number): void {
  ctx.extent(i, capacity, extent);
  const { start, size } = extent;
  if (code === OpCode.Sum) {
    finish(ctx, i, code, size, ctx.valueKind === ValueKind.F32 ? (size === 0 ? 0 : sumF32(ctx, start, size)) : sumInt(ctx.valueBits, start, size));
  } else {
    extreme(ctx, start, size, takesMin(code) ? -1 : 0, 0);
    finish(ctx, i, code, size, 0);
  }
}

/**
 * Reduces segments [first, end) in one piece each, at most `capacity` items. The op is read once
 * when it is one value for all segments; f32 sums without an initial value (the common case) then
 * run in one loop that writes each total directly (what `finish` would write: +0 for an empty
 * segment, NaN as the canonical NaN, no index).
 */
function reduceSegments(ctx: ReduceContext, first: number, end: number, capacity: number): void {
  if (first >= end) return;
  if (ctx.op.perSegment) {
    for (let i = first; i < end; i++) reduceSegment(ctx, i, capacity, ctx.opOf(i));
    return;
  }
  const code = ctx.opOf(first);
  if (code !== OpCode.Sum || ctx.valueKind !== ValueKind.F32 || ctx.initial !== undefined) {
    const from = code !== OpCode.Sum && ctx.valueKind === ValueKind.F32 && ctx.initial === undefined ? extremeRows(ctx, first, end, capacity, code) : first;
    for (let i = from; i < end; i++) reduceSegment(ctx, i, capacity, code);
    return;
  }
  const out = ctx.outF32;
  const indices = ctx.indicesOut;
  const from = ctx.canonical ? sumShortSegments(ctx, first, end, capacity) : first;
  for (let i = from; i < end; i++) {
    ctx.extent(i, capacity, extent);
    const size = extent.size;
    const total = size === 0 ? 0 : sumF32(ctx, extent.start, size);
    if (total === total) out[i] = total;
    else ctx.outBits[i] = canonicalNaNBits;
    if (indices !== undefined) indices[i] = noIndex;
  }
}

/** What {@link uniformRows} found: the one segment size, the stride between starts, the first segment past the input. */
const rows = { size: 0, stride: 0, stop: 0 };

/**
 * Whether every segment has one size within [min, max] (and within `capacity` and the input), as
 * with rows: then `rows` holds the size, the stride between segment starts, and `stop`, the end of
 * the segments before `end` that lie wholly inside the input (for those the extent's clamps are
 * no-ops).
 */
function uniformRows(ctx: ReduceContext, end: number, capacity: number, min: number, max: number): boolean {
  if (ctx.sizes.perSegment) return false;
  const size = countOf(readSource(ctx.sizes, 0));
  if (size < min || size > max || size > capacity || size > ctx.itemsLength) return false;
  const stride = ctx.startMode === 2 ? countOf(readSource(ctx.stride!, 0)) : size;
  rows.size = size;
  rows.stride = stride;
  rows.stop = Math.min(end, stride === 0 ? end : Math.floor((ctx.itemsLength - size) / stride) + 1);
  return true;
}

/**
 * Canonical f32 sums of segments [first, end) when every segment has one size of 2 to 16 items (MoE
 * rows): each segment's total straight from {@link tinyTotalF32}, without the per-segment extent and
 * the general sum's dispatch, for the segments that lie wholly inside the input (the extent's clamps
 * are then no-ops). Returns the first segment it did not reduce.
 */
function sumShortSegments(ctx: ReduceContext, first: number, end: number, capacity: number): number {
  if (!uniformRows(ctx, end, capacity, 2, 16)) return first;
  const { size, stride, stop } = rows;
  const values = ctx.valueF32;
  const bits = ctx.valueBits;
  const out = ctx.outF32;
  const indices = ctx.indicesOut;
  if (indices !== undefined) indices.fill(noIndex, first, Math.max(first, stop));
  // Packed rows of 8 or 16 (MoE): the SIMD trees, a batch of rows at a time (simd.ts tests the batch
  // for values no flush can change, as `quiet` does here).
  if (stride === size && first < stop && (size === 16 || size === 8) && simdOn(ctx)) {
    simdRowTotalsF32(bits, ctx.valueSlab, first * size, stop - first, size, ctx.outBits, first);
    return stop;
  }
  // Packed rows: one test over all of them (one tight loop) instead of one per row, and a loop per
  // common size whose tree V8 compiles straight (one loop for every size was 1.6x slower).
  if (stride === size && first < stop && quiet(values, bits, first * size, (stop - first) * size)) {
    const outBits = ctx.outBits;
    if (size === 16) {
      for (let i = first; i < stop; i++) {
        const total = quietTotal16(values, i * 16);
        if (total === total) out[i] = total;
        else outBits[i] = canonicalNaNBits;
      }
    } else if (size === 8) {
      for (let i = first; i < stop; i++) {
        const total = quietTotal8(values, i * 8);
        if (total === total) out[i] = total;
        else outBits[i] = canonicalNaNBits;
      }
    } else {
      for (let i = first; i < stop; i++) {
        const total = quietTinyTotalF32(values, i * size, size);
        if (total === total) out[i] = total;
        else outBits[i] = canonicalNaNBits;
      }
    }
    return stop;
  }
  for (let i = first; i < stop; i++) {
    const total = tinyTotalF32(values, bits, i * stride, size);
    if (total === total) out[i] = total;
    else ctx.outBits[i] = canonicalNaNBits;
  }
  return Math.max(first, stop);
}

/** Rows {@link extremeRows} hands the SIMD tournament at a time, and the offsets it gets back. */
const rowBatch = 512;
const rowIndices = new Int32Array(rowBatch);

/**
 * f32 extremes (op `code`, one for all segments, no initial value) of segments [first, end) when every
 * segment has one size of at least one item: each segment's extreme written directly (what `finish`
 * writes then: the extreme's bits and index), without the per-segment extent, op and initial-value
 * reads, for the segments that lie wholly inside the input; packed rows of 8 or 16 go through the
 * SIMD tournament. The scalar loop is what MoE rows of 16 cost: its running best changes 2.4 times
 * on average in 16 random items, each a mispredicted branch (65536 rows took ~3.5 ms scalar, ~0.6 ms by the
 * tournament, on one thread of the 2-core AMD EPYC). Returns the first segment it did not reduce.
 */
function extremeRows(ctx: ReduceContext, first: number, end: number, capacity: number, code: number): number {
  if (!uniformRows(ctx, end, capacity, 1, capacity)) return first;
  const { size, stride, stop } = rows;
  const values = ctx.valueF32;
  const bits = ctx.valueBits;
  const out = ctx.outBits;
  const indices = ctx.indicesOut;
  const min = takesMin(code);
  // Packed rows of 8 or 16 (MoE): the SIMD tournament a batch of rows at a time, the bits straight
  // into the output and the offsets into `rowIndices`; a row holding a NaN comes back as -1 and takes
  // the scalar loop.
  if (stride === size && (size === 16 || size === 8) && simdOn(ctx)) {
    for (let batch = first; batch < stop; batch += rowBatch) {
      const rows = Math.min(rowBatch, stop - batch);
      if (simdRowExtremesF32(bits, ctx.valueSlab, batch * size, rows, size, min, out, batch, rowIndices) > 0) {
        for (let r = 0; r < rows; r++) {
          if (rowIndices[r]! >= 0) continue;
          const start = (batch + r) * size;
          const at = min ? smallestF32(values, start, start + size) : largestF32(values, start, start + size);
          out[batch + r] = bits[at]!;
          rowIndices[r] = at - start;
        }
      }
      if (indices !== undefined) indices.set(rowIndices.subarray(0, rows), batch);
    }
    return Math.max(first, stop);
  }
  const simd = size >= simdExtremeItems && simdOn(ctx);
  for (let i = first; i < stop; i++) {
    const start = i * stride;
    let at = simd ? simdExtreme(ctx, start, size, min) : -1;
    if (at < 0) at = min ? smallestF32(values, start, start + size) : largestF32(values, start, start + size);
    out[i] = bits[at]!;
    if (indices !== undefined) indices[i] = at - start;
  }
  return Math.max(first, stop);
}

/** 'thread': workgroup w reduces segments [w * workgroupSize, (w + 1) * workgroupSize), one per invocation. */
export function runThread(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  if (ctx.failed()) return;
  const per = ctx.policy.workgroupSize;
  reduceSegments(ctx, workgroupId * per, Math.min(ctx.activeSegments(), (workgroupId + 1) * per), ctx.policy.threadMaxItems);
}

/** 'subgroup': workgroup w reduces workgroupSize / subgroupSize segments, subgroupSize invocations each. */
export function runSubgroup(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  if (ctx.failed()) return;
  const per = ctx.policy.workgroupSize / ctx.policy.subgroupSize;
  reduceSegments(ctx, workgroupId * per, Math.min(ctx.activeSegments(), (workgroupId + 1) * per), 0xffffffff);
}

/** 'workgroup': workgroup w reduces segment w, chunk by chunk. */
export function runWorkgroup(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  if (ctx.failed() || workgroupId >= ctx.activeSegments()) return;
  reduceSegment(ctx, workgroupId, 0xffffffff, ctx.opOf(workgroupId));
}

/** Stores a chunk's partial [bits, index] at word `at`: plainly ('chunk'), or as four published words ('chunk-merge'). */
function storePartial(temp: Int32Array, at: number, bits: number, index: number, published: boolean): void {
  if (!published) {
    temp[at] = bits;
    temp[at + 1] = index;
    return;
  }
  [temp[at], temp[at + 1]] = publishedWords(partialStatus, bits);
  [temp[at + 2], temp[at + 3]] = publishedWords(partialStatus, index);
}

/** The bits of partial `c` stored from word `base` (plain or published words). */
function partialBits(temp: Int32Array, base: number, c: number, published: boolean): number {
  if (!published) return temp[base + c * partialWords]!;
  const at = base + c * publishedPartialWords;
  return publishedValue(temp[at]!, temp[at + 1]!) | 0;
}

/** The index of partial `c` stored from word `base`, unsigned. */
function partialIndex(temp: Int32Array, base: number, c: number, published: boolean): number {
  if (!published) return temp[base + c * partialWords + 1]! >>> 0;
  const at = base + c * publishedPartialWords + 2;
  return publishedValue(temp[at]!, temp[at + 1]!);
}

/**
 * The chunk kernels' body: workgroup w reduces chunksPerWorkgroup consecutive chunks of segment
 * floor(w / groups), chunkRounds of them a team, into one partial a team whose first chunk is inside
 * the segment: the chunk tree over the team's chunks (a subtree of the segment's: their count is a
 * power of two and they start at a multiple of it), or their extreme. Returns the segment, or -1 when
 * the workgroup has nothing to do (a failed run, past the active segments, past the segment's
 * chunks, or the device-side direct branch, where the first workgroup of a segment reduces the whole
 * segment and writes it).
 */
function reduceChunks(ctx: ReduceContext, workgroupId: number, published: boolean): number {
  if (ctx.failed()) return -1;
  const chunks = ctx.chunks;
  const per = chunksPerWorkgroup(ctx.policy);
  const groups = Math.ceil(chunks / per);
  const i = Math.floor(workgroupId / groups);
  const group = workgroupId - i * groups;
  if (i >= ctx.activeSegments()) return -1;
  if (ctx.directBranch()) {
    if (group === 0) reduceSegment(ctx, i, chunkItems, ctx.opOf(i));
    return -1;
  }
  ctx.extent(i, chunks * chunkItems, extent);
  if (group >= enteringChunkGroups(extent.size, ctx.policy)) return -1;
  const code = ctx.opOf(i);
  const rounds = ctx.policy.chunkRounds;
  const strip = rounds * chunkItems;
  const teams = per / rounds;
  for (let team = group * teams; team < (group + 1) * teams; team++) {
    const first = team * strip;
    if (first >= extent.size) break;
    const start = extent.start + first;
    const n = Math.min(strip, extent.size - first);
    const at = ctx.partialsSlot + (i * chunks + team) * (published ? publishedPartialWords : partialWords);
    if (code === OpCode.Sum) {
      if (ctx.valueKind === ValueKind.F32) {
        f32Scratch[0] = sumF32(ctx, start, n);
        storePartial(ctx.temp, at, bitsScratch[0]!, 0, published);
      } else {
        storePartial(ctx.temp, at, sumInt(ctx.valueBits, start, n), 0, published);
      }
    } else {
      extreme(ctx, start, n, takesMin(code) ? -1 : 0, first);
      // Keys only, the index is the strip's first (all that the merge's ties need).
      storePartial(ctx.temp, at, extremeBits, ctx.keysOnly ? first : extremeIndex, published);
    }
  }
  return i;
}

/** Combines segment i's chunk partials in order (the chunk tree) and writes its result. */
function mergeSegment(ctx: ReduceContext, i: number, published: boolean): void {
  const chunks = ctx.chunks;
  ctx.extent(i, chunks * chunkItems, extent);
  const size = extent.size;
  const used = segmentPartials(size, ctx.policy);
  const code = ctx.opOf(i);
  const temp = ctx.temp;
  const base = ctx.partialsSlot + i * chunks * (published ? publishedPartialWords : partialWords);
  if (code === OpCode.Sum) {
    if (ctx.valueKind !== ValueKind.F32) {
      let s = 0;
      for (let c = 0; c < used; c++) s = (s + partialBits(temp, base, c, published)) | 0;
      finish(ctx, i, code, size, s);
    } else if (ctx.canonical) {
      chunkTree.reset();
      for (let c = 0; c < used; c++) chunkTree.push(f32Of(partialBits(temp, base, c, published)));
      finish(ctx, i, code, size, chunkTree.total());
    } else {
      let s = 0;
      for (let c = 0; c < used; c++) s += f32Of(partialBits(temp, base, c, published));
      finish(ctx, i, code, size, Math.fround(s));
    }
    return;
  }
  const mask = takesMin(code) ? -1 : 0;
  const kind = ctx.valueKind;
  extremeIndex = noIndex;
  let best = 0;
  for (let c = 0; c < used; c++) {
    const bits = partialBits(temp, base, c, published);
    const k = keyOf(bits, kind) ^ mask;
    // Chunks come in index order: a later chunk wins only when strictly better.
    if (extremeIndex === noIndex || k > best) {
      best = k;
      extremeBits = bits;
      extremeIndex = partialIndex(temp, base, c, published);
    }
  }
  finish(ctx, i, code, size, 0);
}

/** 'multi-workgroup' chunk: a workgroup's chunks into their partials (see {@link reduceChunks}). */
export function runChunk(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  reduceChunks(ctx, workgroupId, false);
}

/** 'multi-workgroup' merge: workgroup w combines segment w's chunk partials in order and writes its result. */
export function runMerge(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  if (ctx.failed() || workgroupId >= ctx.activeSegments() || ctx.directBranch()) return;
  mergeSegment(ctx, workgroupId, false);
}

/**
 * 'multi-workgroup' chunk-merge: a workgroup's chunks into published partials, then its arrival in
 * the segment's word of `arrivals` (Atomics: workgroups may run on worker threads, and the add orders
 * the partials written before it); the last of the segment's workgroups to arrive merges.
 */
export function runChunkMerge(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, { ctx }: KernelParams<ReduceContext>): void {
  const i = reduceChunks(ctx, workgroupId, true);
  if (i < 0) return;
  const arrived = Atomics.add(ctx.temp, ctx.arrivalsSlot + i, 1) + 1;
  if (arrived === enteringChunkGroups(extent.size, ctx.policy)) mergeSegment(ctx, i, true);
}
