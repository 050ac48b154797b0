import { addF32, canonicalNaNBits, f32Signed, flushF32, minNormalF32 } from '../../../backends/cpu/numerics.js';
import { countOf, readSource } from '../../../backends/cpu/segments.js';
import { publishedStatus, publishedValue, publishedWords } from '../../../dispatch/published-words.js';
import { OpCode, groupLanes, identityBits, laneItems, scanOps, tileGroups, tileItems, tileLanes } from '../order.js';
import { carryGroupTiles, carryUnitTiles } from '../problem.js';
import { type ScanContext, type ScanKernelParams, ScanSegment, resolveScanSegment } from './context.js';
import { simdAvailable, simdRowScansF32, simdTileScanF32, simdTileTotalF32 } from './simd.js';

/*
 * The scan's CPU kernels, each the twin of a WGSL program (webgpu/), over the same launches and
 * temporary-storage slots, computing the same bits (order.ts).
 *
 * 'thread' and 'workgroup' scan whole segments in one pass: f32 sums through `scanF32Canonical`
 * (the canonical order with the upper levels' carries advanced once per tile), everything else as a
 * running combine, which gives the same bits in any order (min, max and integer sums associate).
 * The multi-workgroup kernels work tile by tile as their twins do: canonical f32 tiles through
 * `tileTotalF32` and `scanTileF32` (one pass down a tile's items each), the rest through `tileScan`.
 */

const threadSegment = new ScanSegment();
const tileSegment = new ScanSegment();

/** Bits of an f32 value held as a number (scratch). */
const bitsScratch = new Float32Array(1);
const bitsScratchU32 = new Uint32Array(bitsScratch.buffer);
const f32Of = (bits: number) => ((bitsScratchU32[0] = bits), bitsScratch[0]!);
/** The bits of f32 value `v` as an int32 (a WebAssembly i32 argument). */
const f32BitsOf = (v: number) => ((bitsScratch[0] = v), bitsScratchU32[0]! | 0);

/** An f32 value as a flushed number (the canonical sum's inputs). */
const flushedF32Of = (bits: number) => flushF32(f32Of(bits));

// ---------------------------------------------------------------------------------------------
// The upper levels of the canonical order: the scan of tile totals (and of their tile totals).

/**
 * One level of the canonical f32 scan of a sequence, advanced one element at a time: `ingest`
 * returns the element's inclusive output. Absent terms are -0, the exact identity of the canonical
 * addition, so no branch tells them apart.
 */
class CanonicalLevel {
  private initial = -0;
  private carry = -0;
  private groups = -0;
  private lanes = -0;
  private prefix = -0;
  private k = 0;
  private m = 0;
  private g = 0;
  private upper: CanonicalLevel | undefined;
  private upperStarted = false;

  /** Starts a sequence whose scan folds `initial` (flushed; -0 for none) in first. */
  start(initial: number): void {
    this.initial = initial;
    this.carry = initial;
    this.groups = this.lanes = this.prefix = -0;
    this.k = this.m = this.g = 0;
    this.upperStarted = false;
  }

  ingest(x: number): number {
    this.prefix = addF32(this.prefix, x);
    const out = addF32(addF32(this.carry, addF32(this.groups, this.lanes)), this.prefix);
    if (++this.k === laneItems) {
      this.k = 0;
      this.lanes = addF32(this.lanes, this.prefix);
      this.prefix = -0;
      if (++this.m === groupLanes) {
        this.m = 0;
        this.groups = addF32(this.groups, this.lanes);
        this.lanes = -0;
        if (++this.g === tileGroups) {
          this.g = 0;
          const total = this.groups;
          this.groups = -0;
          // The scan of the tile totals starts from the same initial value (order.ts).
          this.upper ??= new CanonicalLevel();
          if (!this.upperStarted) this.upper.start(this.initial);
          this.upperStarted = true;
          this.carry = this.upper.ingest(total);
        }
      }
    }
    return out;
  }
}

const tileCarries = new CanonicalLevel();

/**
 * The carry into unit `units.length` (> 0) of a segment's tile totals: output units.length - 1 of the
 * scan of the unit totals from the initial value, by the canonical rules one level up (order.ts),
 * one unit at a time as the levels advance (the WGSL's `unitsCarry` works it out directly).
 * `combine(a, b)`: `a` the earlier term.
 */
export function unitsCarryBits(combine: (a: number, b: number) => number, hasInitial: boolean, initial: number, units: readonly number[]): number {
  let prefix = 0;
  let lanes = 0;
  let groups = 0;
  let out = initial;
  units.forEach((x, i) => {
    const k = i % laneItems;
    const m = Math.floor(i / laneItems) % groupLanes;
    const g = Math.floor(i / (laneItems * groupLanes));
    prefix = k > 0 ? combine(prefix, x) : x;
    const hasInner = g > 0 || m > 0;
    const inner = g > 0 ? (m > 0 ? combine(groups, lanes) : groups) : lanes;
    const e = hasInitial ? (hasInner ? combine(initial, inner) : initial) : inner;
    out = hasInner || hasInitial ? combine(e, prefix) : prefix;
    if (k === laneItems - 1) {
      lanes = m > 0 ? combine(lanes, prefix) : prefix;
      if (m === groupLanes - 1) groups = g > 0 ? combine(groups, lanes) : lanes;
    }
  });
  return out;
}

/**
 * The canonical f32 inclusive sum of `n` items from `from`, written from `to` (NaN as its canonical
 * bits), `initial` the flushed initial value or -0 for none, in one pass down the items (each full
 * tile as WebAssembly SIMD where the backend and the thread have it: simd.ts `tileScan`): a lane's
 * carry `C ⊕ (R_g ⊕ q_m)` is known when the lane starts (it depends on the lanes before it only), so
 * each item's output follows from its lane prefix at once. Full lanes take their 8 items unrolled
 * (loads and flushes ahead of the chain of additions; the next lane's chain, which does not depend on
 * this one's, overlaps it). Each full tile's total advances `tileCarries` for the carry into the next.
 */
function scanF32Canonical(ctx: ScanContext, from: number, n: number, to: number, initial: number): void {
  tileCarries.start(initial);
  let carry = initial;
  const simd = n >= tileItems && simdTile(ctx, OpCode.sum, tileItems);
  for (let t = 0; t < n; t += tileItems) {
    const count = n - t < tileItems ? n - t : tileItems;
    const total = simd && count === tileItems ? f32Of(simdTileScanF32(ctx.inI32, ctx.inSlab, from + t, f32BitsOf(carry), ctx.outI32, to + t)) : scanTileF32(ctx.inF32, from + t, count, ctx.outF32, ctx.outU32, to + t, carry);
    if (count === tileItems) carry = tileCarries.ingest(total);
  }
}

/**
 * One canonical f32 tile of `count` (1 <= count <= tileItems) items from `at` of `x`, its inclusive
 * scan from `carry` (flushed; -0 for none) written from `put`, in one pass; returns the tile's total
 * when the tile is full (a short tile's total is nobody's carry).
 */
function scanTileF32(x: Float32Array, at: number, count: number, out: Float32Array, outU32: Uint32Array, put: number, carry: number): number {
  const m = minNormalF32;
  // r: the groups before this one (R_g); q: the lanes before this one in its group (q_m); -0 for none.
  let r = -0;
  let q = -0;
  let lane = 0;
  let k = 0;
  for (; k + laneItems <= count; k += laneItems) {
    let e = Math.fround(r + q);
    if (!(Math.abs(e) >= m)) e *= 0;
    e = Math.fround(carry + e);
    if (!(Math.abs(e) >= m)) e *= 0;
    let y0 = x[at + k]!;
    let y1 = x[at + k + 1]!;
    let y2 = x[at + k + 2]!;
    let y3 = x[at + k + 3]!;
    let y4 = x[at + k + 4]!;
    let y5 = x[at + k + 5]!;
    let y6 = x[at + k + 6]!;
    let y7 = x[at + k + 7]!;
    if (!(Math.abs(y0) >= m)) y0 *= 0;
    if (!(Math.abs(y1) >= m)) y1 *= 0;
    if (!(Math.abs(y2) >= m)) y2 *= 0;
    if (!(Math.abs(y3) >= m)) y3 *= 0;
    if (!(Math.abs(y4) >= m)) y4 *= 0;
    if (!(Math.abs(y5) >= m)) y5 *= 0;
    if (!(Math.abs(y6) >= m)) y6 *= 0;
    if (!(Math.abs(y7) >= m)) y7 *= 0;
    // -0 + y0 is y0: the lane's first prefix is its first item.
    let p = y0;
    writeCanonical(out, outU32, put + k, Math.fround(e + p));
    p = Math.fround(p + y1);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 1, Math.fround(e + p));
    p = Math.fround(p + y2);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 2, Math.fround(e + p));
    p = Math.fround(p + y3);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 3, Math.fround(e + p));
    p = Math.fround(p + y4);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 4, Math.fround(e + p));
    p = Math.fround(p + y5);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 5, Math.fround(e + p));
    p = Math.fround(p + y6);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 6, Math.fround(e + p));
    p = Math.fround(p + y7);
    if (!(Math.abs(p) >= m)) p *= 0;
    writeCanonical(out, outU32, put + k + 7, Math.fround(e + p));
    q = Math.fround(q + p);
    if (!(Math.abs(q) >= m)) q *= 0;
    if (++lane === groupLanes) {
      lane = 0;
      r = Math.fround(r + q);
      if (!(Math.abs(r) >= m)) r *= 0;
      q = -0;
    }
  }
  if (k < count) {
    // The tile's last lane, short: its items one at a time.
    const e = addF32(carry, addF32(r, q));
    let p = -0;
    for (; k < count; k++) {
      let y = x[at + k]!;
      if (!(Math.abs(y) >= m)) y *= 0;
      p = Math.fround(p + y);
      if (!(Math.abs(p) >= m)) p *= 0;
      writeCanonical(out, outU32, put + k, Math.fround(e + p));
    }
  }
  // A full tile's total is R after its 16 groups (q is -0 again).
  return r;
}

/** Stores a canonical sum's rounded value `v`: subnormals flushed, NaN as its canonical bits. */
function writeCanonical(out: Float32Array, outU32: Uint32Array, at: number, v: number): void {
  if (Math.abs(v) >= minNormalF32) out[at] = v;
  else if (v === v) out[at] = v * 0;
  else outU32[at] = canonicalNaNBits;
}

/**
 * The canonical total T of a tile of `n` (1 <= n <= tileItems) f32 values from `base` of `x`
 * (flushed as they are read), in one pass: each lane's chain of 8 additions, the lane totals into
 * the group's, the groups' into the tile's. Full lanes take their 8 items unrolled; the next lane's
 * chain does not depend on this one's, so they overlap.
 */
function tileTotalF32(x: Float32Array, base: number, n: number): number {
  const m = minNormalF32;
  let r = -0;
  let q = -0;
  let lane = 0;
  let k = 0;
  for (; k + laneItems <= n; k += laneItems) {
    let y0 = x[base + k]!;
    let y1 = x[base + k + 1]!;
    let y2 = x[base + k + 2]!;
    let y3 = x[base + k + 3]!;
    let y4 = x[base + k + 4]!;
    let y5 = x[base + k + 5]!;
    let y6 = x[base + k + 6]!;
    let y7 = x[base + k + 7]!;
    if (!(Math.abs(y0) >= m)) y0 *= 0;
    if (!(Math.abs(y1) >= m)) y1 *= 0;
    if (!(Math.abs(y2) >= m)) y2 *= 0;
    if (!(Math.abs(y3) >= m)) y3 *= 0;
    if (!(Math.abs(y4) >= m)) y4 *= 0;
    if (!(Math.abs(y5) >= m)) y5 *= 0;
    if (!(Math.abs(y6) >= m)) y6 *= 0;
    if (!(Math.abs(y7) >= m)) y7 *= 0;
    let p = Math.fround(y0 + y1);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y2);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y3);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y4);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y5);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y6);
    if (!(Math.abs(p) >= m)) p *= 0;
    p = Math.fround(p + y7);
    if (!(Math.abs(p) >= m)) p *= 0;
    q = Math.fround(q + p);
    if (!(Math.abs(q) >= m)) q *= 0;
    if (++lane === groupLanes) {
      lane = 0;
      r = Math.fround(r + q);
      if (!(Math.abs(r) >= m)) r *= 0;
      q = -0;
    }
  }
  if (k < n) {
    // The last lane, short.
    let p = -0;
    for (; k < n; k++) {
      let y = x[base + k]!;
      if (!(Math.abs(y) >= m)) y *= 0;
      p = addF32(p, y);
    }
    q = addF32(q, p);
  }
  // A short group's lanes count too (an empty one adds -0, which changes nothing).
  return addF32(r, q);
}

/** An f32 inclusive sum in any order (determinism 'not-guaranteed'): one running double, rounded on the store. */
function scanF32Fast(ctx: ScanContext, from: number, n: number, to: number, initial: number): void {
  const x = ctx.inF32;
  const out = ctx.outF32;
  let acc = initial;
  for (let j = 0; j < n; j++) {
    acc += x[from + j]!;
    out[to + j] = acc;
  }
}

/** Integer inclusive sum, wrapping modulo 2^32 (i32 and u32 alike, on the bits). */
function scanIntegerSum(ctx: ScanContext, from: number, n: number, to: number, initial: number): void {
  const x = ctx.inI32;
  const out = ctx.outI32;
  let acc = initial | 0;
  for (let j = 0; j < n; j++) {
    acc = (acc + x[from + j]!) | 0;
    out[to + j] = acc;
  }
}

/**
 * Running min or max: the kept value changes only when an item's ordered key is strictly better
 * (ties keep the earlier bits). `hasInitial` false: the first item starts it.
 */
function scanExtreme(ctx: ScanContext, op: number, from: number, n: number, to: number, hasInitial: boolean, initialBits: number): void {
  const x = ctx.inI32;
  const out = ctx.outI32;
  // Keys are compared as 'max' keys; XOR -1 turns them into 'min' keys.
  const mask = op === OpCode.min ? -1 : 0;
  const xor = ctx.integerKeyXor ^ mask;
  const isF32 = ctx.isF32;
  let j = 0;
  let kept: number;
  if (hasInitial) kept = initialBits | 0;
  else {
    kept = x[from]!;
    out[to] = kept;
    j = 1;
  }
  let keptKey = isF32 ? f32Signed(kept) ^ mask : kept ^ xor;
  for (; j < n; j++) {
    const bits = x[from + j]!;
    const key = isF32 ? f32Signed(bits) ^ mask : bits ^ xor;
    if (key > keptKey) {
      kept = bits;
      keptKey = key;
    }
    out[to + j] = kept;
  }
}

/** Writes an exclusive scan's first output: the initial value's bits, or the identity. */
function writeExclusiveFirst(ctx: ScanContext, seg: ScanSegment): void {
  ctx.outU32[seg.start] = seg.hasInitial ? seg.initialBits : identityBits(scanOps[seg.op]!, ctx.valueType);
}

/** Scans one resolved segment in one pass ('thread' and 'workgroup'). */
function scanSegment(ctx: ScanContext, seg: ScanSegment): void {
  const size = seg.size;
  if (size === 0) return;
  const shift = seg.exclusive;
  if (shift === 1) writeExclusiveFirst(ctx, seg);
  // An exclusive scan needs the inclusive outputs of all items but the last.
  const n = size - shift;
  if (n === 0) return;
  const from = seg.start;
  const to = from + shift;
  if (seg.op === OpCode.sum) {
    if (!ctx.isF32) scanIntegerSum(ctx, from, n, to, seg.hasInitial ? seg.initialBits : 0);
    // Under 'not-guaranteed' a segment of a full tile or more takes the canonical SIMD tiles too,
    // which beat the left-to-right loop (16M items on one thread: 34 ms against 55-62).
    else if (ctx.canonical || (n >= tileItems && simdTile(ctx, OpCode.sum, tileItems))) scanF32Canonical(ctx, from, n, to, seg.hasInitial ? flushedF32Of(seg.initialBits) : -0);
    else scanF32Fast(ctx, from, n, to, seg.hasInitial ? f32Of(seg.initialBits) : -0);
  } else scanExtreme(ctx, seg.op, from, n, to, seg.hasInitial, seg.initialBits);
}

const unbounded = 0xffffffff;

/**
 * Canonical f32 inclusive sums of segments [first, last) when they are packed rows of 8 or 16 items
 * (MoE) with one op, mode and initial value: the SIMD loops (simd.ts), four rows at a time, for the
 * rows that lie wholly inside the input; under 'not-guaranteed' too, as they beat the left-to-right
 * loop. On the 2-core AMD EPYC, one thread, 65536 rows of 16: the 'thread' launch took 4.4 ms with
 * the canonical scalar loop (`scanTileF32` alone ~3 ns an item), 2.8 left to right, 0.77 with
 * these. Returns the first segment it did not scan.
 */
function simdRows(ctx: ScanContext, first: number, last: number): number {
  if (first >= last || !ctx.simd || !ctx.isF32 || ctx.sizes.perSegment || ctx.op.perSegment || ctx.mode.perSegment || ctx.initialPerSegment) return first;
  const size = countOf(readSource(ctx.sizes, 0));
  if ((size !== 8 && size !== 16) || (ctx.startMode === 2 && countOf(readSource(ctx.stride!, 0)) !== size) || !simdAvailable()) return first;
  resolveScanSegment(ctx, first, unbounded, threadSegment);
  if (threadSegment.op !== OpCode.sum || threadSegment.exclusive !== 0) return first;
  const stop = Math.min(last, Math.floor(ctx.itemsLength / size));
  if (stop <= first) return first;
  // The initial value flushed (a subnormal is the zero of its sign), or -0.
  const bits = threadSegment.initialBits;
  const carry = !threadSegment.hasInitial ? -0x80000000 : (bits & 0x7f800000) === 0 ? bits & -0x80000000 : bits;
  return first + simdRowScansF32(ctx.inI32, ctx.inSlab, first * size, stop - first, size, carry, ctx.outI32, first * size);
}

/** 'thread': workgroup w scans segments [w * workgroupSize, (w + 1) * workgroupSize), one per invocation. */
export function runThread(workgroupId: number, _numWorkgroups: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  if (ctx.failed()) return;
  const active = ctx.activeSegments();
  const first = workgroupId * ctx.policy.workgroupSize;
  const last = Math.min(active, first + ctx.policy.workgroupSize);
  for (let i = simdRows(ctx, first, last); i < last; i++) {
    resolveScanSegment(ctx, i, unbounded, threadSegment);
    scanSegment(ctx, threadSegment);
  }
}

/** 'workgroup': workgroup w scans segment w, tile after tile. */
export function runWorkgroup(workgroupId: number, _numWorkgroups: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  if (ctx.failed() || workgroupId >= ctx.activeSegments()) return;
  resolveScanSegment(ctx, workgroupId, unbounded, threadSegment);
  scanSegment(ctx, threadSegment);
}

// ---------------------------------------------------------------------------------------------
// Multi-workgroup: tile totals, their scan, and the tiles' scans from their carries.

const laneTotals = new Float32Array(256);
const laneCarries = new Float32Array(256);
const groupTotals = new Float32Array(tileGroups);
const groupCarries = new Float32Array(tileGroups);
const tileValues = new Float32Array(tileItems);
const tileBits = new Int32Array(tileValues.buffer);

/**
 * The canonical f32 tile: `tileValues[0, n)` (flushed values) replaced by their inclusive scan from
 * `carry` (-0 for none) when `scan` is set; returns the tile's total. Lane, group and tile phases as
 * the WGSL workgroup runs them (order.ts).
 */
function canonicalTile(n: number, carry: number, scan: boolean): number {
  const lanes = Math.ceil(n / laneItems);
  for (let l = 0; l < lanes; l++) {
    const base = l * laneItems;
    const stop = Math.min(base + laneItems, n);
    let total = tileValues[base]!;
    for (let j = base + 1; j < stop; j++) total = addF32(total, tileValues[j]!);
    laneTotals[l] = total;
  }
  const groups = Math.ceil(lanes / groupLanes);
  for (let g = 0; g < groups; g++) {
    let q = -0;
    const stop = Math.min((g + 1) * groupLanes, lanes);
    for (let l = g * groupLanes; l < stop; l++) {
      laneCarries[l] = q;
      q = addF32(q, laneTotals[l]!);
    }
    groupTotals[g] = q;
  }
  let r = -0;
  for (let g = 0; g < groups; g++) {
    groupCarries[g] = r;
    r = addF32(r, groupTotals[g]!);
  }
  if (scan) {
    for (let l = 0; l < lanes; l++) {
      const e = addF32(carry, addF32(groupCarries[l >>> 4]!, laneCarries[l]!));
      const base = l * laneItems;
      const stop = Math.min(base + laneItems, n);
      let p = -0;
      for (let j = base; j < stop; j++) {
        p = addF32(p, tileValues[j]!);
        tileValues[j] = addF32(e, p);
      }
    }
  }
  return r;
}

/**
 * The tile `tileBits[0, n)` (the values' bits, or sums of them) as a tile scan of operator `op`:
 * replaced by the inclusive scan from the carry when `scan` is set; returns the total's bits. f32
 * sums: the canonical tile (fast mode: in order); the rest: a running combine.
 */
function tileScan(ctx: ScanContext, op: number, n: number, hasCarry: boolean, carryBits: number, scan: boolean): number {
  if (op === OpCode.sum) {
    if (ctx.isF32) {
      if (ctx.canonical) {
        const total = canonicalTile(n, hasCarry ? f32Of(carryBits) : -0, scan);
        return canonicalBits(total);
      }
      let acc = hasCarry ? f32Of(carryBits) : -0;
      let total = -0;
      for (let j = 0; j < n; j++) {
        const y = tileValues[j]!;
        total = Math.fround(total + y);
        acc = Math.fround(acc + y);
        if (scan) tileValues[j] = acc;
      }
      return canonicalBits(total);
    }
    let acc = hasCarry ? carryBits | 0 : 0;
    let total = 0;
    for (let j = 0; j < n; j++) {
      const y = tileBits[j]!;
      total = (total + y) | 0;
      acc = (acc + y) | 0;
      if (scan) tileBits[j] = acc;
    }
    return total >>> 0;
  }
  const mask = op === OpCode.min ? -1 : 0;
  const xor = ctx.integerKeyXor ^ mask;
  const keyOf = ctx.isF32 ? (bits: number) => f32Signed(bits) ^ mask : (bits: number) => bits ^ xor;
  let total = tileBits[0]!;
  let totalKey = keyOf(total);
  let kept = hasCarry ? carryBits | 0 : total;
  let keptKey = keyOf(kept);
  for (let j = 0; j < n; j++) {
    const bits = tileBits[j]!;
    const key = keyOf(bits);
    if (key > totalKey) {
      total = bits;
      totalKey = key;
    }
    if (key > keptKey) {
      kept = bits;
      keptKey = key;
    }
    if (scan) tileBits[j] = kept;
  }
  return total >>> 0;
}

/** The bits a sum is stored with: NaN canonical. */
function canonicalBits(value: number): number {
  if (value !== value) return canonicalNaNBits;
  bitsScratch[0] = value;
  return bitsScratchU32[0]!;
}

/** Loads items [from, from + n) of the input into the tile, flushed where the sum is canonical f32. */
function loadItems(ctx: ScanContext, op: number, from: number, n: number): void {
  if (op === OpCode.sum && ctx.isF32 && ctx.canonical) {
    const x = ctx.inF32;
    for (let j = 0; j < n; j++) tileValues[j] = flushF32(x[from + j]!);
  } else tileBits.set(ctx.inI32.subarray(from, from + n));
}

/** Loads words [from, from + n) of temporary storage into the tile. */
function loadWords(ctx: ScanContext, from: number, n: number): void {
  tileBits.set(ctx.temp.subarray(from, from + n));
}

/** Writes the tile's words [0, n) back to temporary storage; an f32 sum's NaN as its canonical bits (min and max keep the bits they chose). */
function storeWords(ctx: ScanContext, op: number, to: number, n: number): void {
  const canonicalSum = op === OpCode.sum && ctx.isF32;
  for (let j = 0; j < n; j++) {
    const bits = tileBits[j]!;
    ctx.temp[to + j] = canonicalSum && (bits & 0x7fffffff) > 0x7f800000 ? canonicalNaNBits : bits;
  }
}

/**
 * Whether a tile of `n` items takes the SIMD tile (simd.ts `tileScan`, `tileTotal`): a full tile of
 * an f32 sum where the backend and the thread have the loops; in the tile launches under
 * 'not-guaranteed' too, where they beat the left-to-right loop (16M items with a worker: 31 ms
 * against 97-127).
 */
function simdTile(ctx: ScanContext, op: number, n: number): boolean {
  return n === tileItems && op === OpCode.sum && ctx.isF32 && ctx.simd && simdAvailable();
}

/** Tiles of a segment of `size` items. */
const tilesOf = (size: number) => Math.ceil(size / tileItems);

/** Segment and tile of a tile launch's workgroup, or false when it has nothing to do. */
function enterTile(ctx: ScanContext, workgroupId: number, perSegment: number, seg: ScanSegment): number {
  if (ctx.failed()) return -1;
  const segment = Math.floor(workgroupId / perSegment);
  if (segment >= ctx.activeSegments()) return -1;
  resolveScanSegment(ctx, segment, ctx.tilesPerSegment * tileItems, seg);
  return segment;
}

/** Tile u of a segment's tile totals and its n totals (1 <= n <= tileItems), as enterSpineTile leaves them. */
const spineTile = { u: 0, n: 0 };

/**
 * The opening of the launches over tile totals 2048 at a time ('spine-reduce', 'spine-scan',
 * 'spine-lanes'; the WGSL's `spineTileEntry`): the workgroup's segment, or -1 where it has nothing
 * to do, with its tile u and count n in {@link spineTile}.
 */
function enterSpineTile(ctx: ScanContext, workgroupId: number, seg: ScanSegment): number {
  const segment = enterTile(ctx, workgroupId, ctx.spineTilesPerSegment, seg);
  if (segment < 0) return -1;
  const u = workgroupId % ctx.spineTilesPerSegment;
  const tiles = tilesOf(seg.size);
  const n = Math.min(tiles - Math.min(tiles, u * tileItems), tileItems);
  if (n === 0) return -1;
  spineTile.u = u;
  spineTile.n = n;
  return segment;
}

/** 'tile-reduce': workgroup w's span of tiles of segment s, each writing its total to `tileTotals[s * tiles + t]`. */
export function runTileReduce(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterTile(ctx, workgroupId, ctx.spans, seg);
  if (segment < 0) return;
  const first = (workgroupId % ctx.spans) * ctx.tileSpan;
  const last = Math.min(first + ctx.tileSpan, tilesOf(seg.size));
  for (let tile = first; tile < last; tile++) {
    const from = tile * tileItems;
    const n = Math.min(seg.size - from, tileItems);
    let total: number;
    if (simdTile(ctx, seg.op, n)) total = canonicalBits(f32Of(simdTileTotalF32(ctx.inI32, ctx.inSlab, seg.start + from)));
    else if (seg.op === OpCode.sum && ctx.isF32 && ctx.canonical) total = canonicalBits(tileTotalF32(ctx.inF32, seg.start + from, n));
    else {
      loadItems(ctx, seg.op, seg.start + from, n);
      total = tileScan(ctx, seg.op, n, false, 0, false);
    }
    ctx.temp[ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + tile] = total;
  }
}

/** 'spine-reduce': tile u of segment s's tile totals writes their total to `spineTotals[s * spineTiles + u]`. */
export function runSpineReduce(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterSpineTile(ctx, workgroupId, seg);
  if (segment < 0) return;
  const { u, n } = spineTile;
  loadWords(ctx, ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + u * tileItems, n);
  ctx.temp[ctx.spineTotalsSlot + segment * ctx.spineTilesPerSegment + u] = tileScan(ctx, seg.op, n, false, 0, false);
}

/** The bits of a segment's initial value in a sum's carry form (flushed for canonical f32 sums). */
function initialCarry(ctx: ScanContext, seg: ScanSegment): number {
  if (!(seg.op === OpCode.sum && ctx.isF32 && ctx.canonical)) return seg.initialBits;
  return canonicalBits(flushedF32Of(seg.initialBits));
}

/** 'spine-top': segment s's spine totals, scanned in place from the initial value. */
export function runSpineTop(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterTile(ctx, workgroupId, 1, seg);
  if (segment < 0) return;
  const n = Math.min(tilesOf(tilesOf(seg.size)), ctx.spineTilesPerSegment);
  if (n === 0) return;
  const at = ctx.spineTotalsSlot + segment * ctx.spineTilesPerSegment;
  loadWords(ctx, at, n);
  tileScan(ctx, seg.op, n, seg.hasInitial, initialCarry(ctx, seg), true);
  storeWords(ctx, seg.op, at, n);
}

/** 'spine-scan': tile u of segment s's tile totals, scanned in place from its carry. */
export function runSpineScan(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterSpineTile(ctx, workgroupId, seg);
  if (segment < 0) return;
  const { u, n } = spineTile;
  const at = ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + u * tileItems;
  const hasCarry = u > 0 || seg.hasInitial;
  const carry = u > 0 ? ctx.tempU32[ctx.spineTotalsSlot + segment * ctx.spineTilesPerSegment + u - 1]! : initialCarry(ctx, seg);
  loadWords(ctx, at, n);
  tileScan(ctx, seg.op, n, hasCarry, carry, true);
  storeWords(ctx, seg.op, at, n);
}

/** 'spine-walk': the scanned totals of each 2048 tile totals (at most 1024 of them within 2^32 items). */
const walkTotals = new Uint32Array(tileItems);

/**
 * 'spine-walk': segment s's tile totals scanned in place, 2048 at a time, by one workgroup: the steps
 * of 'spine-reduce', 'spine-top' and 'spine-scan' one after the other (the WGSL twin advances the
 * scan of the totals one total at a time, `ingest2`, which is the same order).
 */
export function runSpineWalk(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterTile(ctx, workgroupId, 1, seg);
  if (segment < 0) return;
  const tiles = tilesOf(seg.size);
  const chunks = tilesOf(tiles);
  const at = ctx.tileTotalsSlot + segment * ctx.tilesPerSegment;
  for (let u = 0; u < chunks; u++) {
    const n = Math.min(tiles - u * tileItems, tileItems);
    loadWords(ctx, at + u * tileItems, n);
    walkTotals[u] = tileScan(ctx, seg.op, n, false, 0, false);
  }
  tileBits.set(walkTotals.subarray(0, chunks));
  tileScan(ctx, seg.op, chunks, seg.hasInitial, initialCarry(ctx, seg), true);
  const canonicalSum = seg.op === OpCode.sum && ctx.isF32;
  for (let u = 0; u < chunks; u++) {
    const bits = tileBits[u]! >>> 0;
    walkTotals[u] = canonicalSum && (bits & 0x7fffffff) > 0x7f800000 ? canonicalNaNBits : bits;
  }
  for (let u = 0; u < chunks; u++) {
    const n = Math.min(tiles - u * tileItems, tileItems);
    loadWords(ctx, at + u * tileItems, n);
    tileScan(ctx, seg.op, n, u > 0 || seg.hasInitial, u > 0 ? walkTotals[u - 1]! : initialCarry(ctx, seg), true);
    storeWords(ctx, seg.op, at + u * tileItems, n);
  }
}

/**
 * 'spine-lanes': tile u of segment s's tile totals (up to 2048 of them; a workgroup each, all at
 * once) leaves the parts of the carries that 'tile-scan' adds up (problem.ts `SpineForm`): each total
 * replaced in place by its lane prefix p_k, the carry into each lane from the lanes before it in the
 * tile, R_g ⊕ q_m (lane 0, which has none: the operator's identity), into `spineLaneCarries`, and
 * the tile's total into `spineTotals`. The chains of the WGSL's lanes, in one pass down the lanes.
 */
export function runSpineLanes(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterSpineTile(ctx, workgroupId, seg);
  if (segment < 0) return;
  const { u, n } = spineTile;
  const op = seg.op;
  const words = ctx.tempU32;
  const at = ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + u * tileItems;
  const carriesAt = ctx.spineLaneCarriesSlot + (segment * ctx.spineTilesPerSegment + u) * tileLanes;
  const lanes = Math.ceil(n / laneItems);
  // R_g, the groups before lane l's group (g > 0), and q_m, the lanes before it in its group (m > 0).
  let groups = 0;
  let before = 0;
  for (let l = 0; l < lanes; l++) {
    const g = Math.floor(l / groupLanes);
    const m = l % groupLanes;
    words[carriesAt + l] = m === 0 ? (g === 0 ? identityBits(scanOps[op]!, ctx.valueType) : groups) : g === 0 ? before : combineBits(ctx, op, groups, before);
    const base = at + l * laneItems;
    const stop = Math.min(base + laneItems, at + n);
    let p = words[base]!;
    for (let j = base + 1; j < stop; j++) {
      p = combineBits(ctx, op, p, words[j]!);
      words[j] = p;
    }
    // p is the lane's total L_l; a group's total is its lanes', left to right, and the tile's its groups'.
    before = m === 0 ? p : combineBits(ctx, op, before, p);
    if (m === groupLanes - 1 || l === lanes - 1) groups = g === 0 ? before : combineBits(ctx, op, groups, before);
  }
  words[ctx.spineTotalsSlot + segment * ctx.spineTilesPerSegment + u] = groups;
}

/**
 * The carry into tile of tile totals v of a resolved segment after 'spine-lanes' (the WGSL
 * `spineCarry`): the initial value for v = 0; else output v - 1 of the scan of the tiles of totals'
 * totals U, which 'spine-top' left in `spineTotals` (spine form 'lanes-top'), or which is lane 0 of
 * that scan (v <= 8, form 'lanes'): the initial value ⊕ (U_0 ⊕ ... ⊕ U_v-1) (order.ts).
 */
function spineCarry(ctx: ScanContext, seg: ScanSegment, segment: number, v: number): number {
  if (v === 0) return initialCarry(ctx, seg);
  const at = ctx.spineTotalsSlot + segment * ctx.spineTilesPerSegment;
  const words = ctx.tempU32;
  if (ctx.spineForm === 'lanes-top') return words[at + v - 1]!;
  let c = words[at]!;
  for (let j = 1; j < v; j++) c = combineBits(ctx, seg.op, c, words[at + j]!);
  return seg.hasInitial ? combineBits(ctx, seg.op, initialCarry(ctx, seg), c) : c;
}

/**
 * The carry into tile `tile` > 0 of a resolved segment after 'spine-lanes' (the WGSL `tileCarry`):
 * output tile - 1 of the scan of the tile totals, (C ⊕ E) ⊕ p (order.ts), p the lane prefix of total
 * tile - 1 (in its place), E the carry into its lane (none in lane 0), C the carry into its tile of
 * totals (none in the first without an initial value).
 */
function laneTileCarry(ctx: ScanContext, seg: ScanSegment, segment: number, tile: number): number {
  const op = seg.op;
  const i = tile - 1;
  const v = Math.floor(i / tileItems);
  const lane = Math.floor((i % tileItems) / laneItems);
  const p = ctx.tempU32[ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + i]!;
  const hasUpper = v > 0 || seg.hasInitial;
  if (!hasUpper && lane === 0) return p;
  const inner = ctx.tempU32[ctx.spineLaneCarriesSlot + (segment * ctx.spineTilesPerSegment + v) * tileLanes + lane]!;
  const e = !hasUpper ? inner : lane === 0 ? spineCarry(ctx, seg, segment, v) : combineBits(ctx, op, spineCarry(ctx, seg, segment, v), inner);
  return combineBits(ctx, op, e, p);
}

/** 'tile-scan': workgroup w's span of tiles of segment s, each scanned from its carry and written (one place on for an exclusive scan). */
export function runTileScan(workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const seg = tileSegment;
  const segment = enterTile(ctx, workgroupId, ctx.spans, seg);
  if (segment < 0) return;
  const first = (workgroupId % ctx.spans) * ctx.tileSpan;
  const last = Math.min(first + ctx.tileSpan, tilesOf(seg.size));
  // After 'spine-scan', 'spine-walk' or 'spine-top' + 'spine-scan', total t - 1's word is tile t's carry.
  const lanes = ctx.spineForm === 'lanes' || ctx.spineForm === 'lanes-top';
  for (let tile = first; tile < last; tile++) {
    const carry =
      tile === 0 ? initialCarry(ctx, seg) : lanes ? laneTileCarry(ctx, seg, segment, tile) : ctx.tempU32[ctx.tileTotalsSlot + segment * ctx.tilesPerSegment + tile - 1]!;
    scanTile(ctx, seg, tile, tile > 0 || seg.hasInitial, carry);
  }
}

/** Tile `tile` of a resolved segment, scanned from its carry (the bits of a tile total's scan) and written. */
function scanTile(ctx: ScanContext, seg: ScanSegment, tile: number, hasCarry: boolean, carry: number): void {
  const from = tile * tileItems;
  const n = Math.min(seg.size - from, tileItems);
  const shift = seg.exclusive;
  if (tile === 0 && shift === 1) writeExclusiveFirst(ctx, seg);
  // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
  const count = Math.min(n, seg.size - from - shift);
  const to = seg.start + from + shift;
  if (simdTile(ctx, seg.op, count)) {
    simdTileScanF32(ctx.inI32, ctx.inSlab, seg.start + from, f32BitsOf(hasCarry ? flushF32(f32Of(carry)) : -0), ctx.outI32, to);
    return;
  }
  if (seg.op === OpCode.sum && ctx.isF32 && ctx.canonical) {
    if (count > 0) scanTileF32(ctx.inF32, seg.start + from, count, ctx.outF32, ctx.outU32, to, hasCarry ? f32Of(carry) : -0);
    return;
  }
  loadItems(ctx, seg.op, seg.start + from, n);
  tileScan(ctx, seg.op, n, hasCarry, carry, true);
  const out = ctx.outU32;
  const canonicalSum = seg.op === OpCode.sum && ctx.isF32;
  for (let j = 0; j < count; j++) {
    const bits = tileBits[j]!;
    out[to + j] = canonicalSum && (bits & 0x7fffffff) > 0x7f800000 ? canonicalNaNBits : bits;
  }
}

// ---------------------------------------------------------------------------------------------
// Single pass: the twin of webgpu/single-pass.ts, on the same `lookback` words (zeroed by the
// executor before the run's first launch).

/**
 * `a ⊕ b` on bits, `a` the earlier term: the WGSL `combine`, then `finishValue` (a sum's NaN
 * canonical). Canonical f32 sums are flushed as order.ts says; under 'not-guaranteed' they are only
 * rounded, as WebGPU keeps subnormals.
 */
function combineBits(ctx: ScanContext, op: number, a: number, b: number): number {
  if (op === OpCode.sum) {
    if (!ctx.isF32) return (a + b) >>> 0;
    return canonicalBits(ctx.canonical ? addF32(f32Of(a), f32Of(b)) : Math.fround(f32Of(a) + f32Of(b)));
  }
  const mask = op === OpCode.min ? -1 : 0;
  const keyOf = ctx.isF32 ? (bits: number) => f32Signed(bits) ^ mask : (bits: number) => bits ^ ctx.integerKeyXor ^ mask;
  return keyOf(b) > keyOf(a) ? b >>> 0 : a >>> 0;
}

/** Publishes `value` in the two words at `at` (each word only grows: the WGSL's atomicMax). */
function publish(ctx: ScanContext, at: number, value: number): void {
  const words = ctx.tempU32;
  const [lo, hi] = publishedWords(1, value);
  for (const [word, bits] of [[at, lo], [at + 1, hi]] as const) {
    let seen = Atomics.load(words, word);
    while (seen < bits) {
      const before = Atomics.compareExchange(words, word, seen, bits);
      if (before === seen) break;
      seen = before;
    }
  }
}

/** `fold(values)`: values[0] ⊕ values[1] ⊕ ..., left to right (values not empty). */
function fold(ctx: ScanContext, op: number, values: readonly number[], from = 0, to = values.length): number {
  let acc = values[from]!;
  for (let i = from + 1; i < to; i++) acc = combineBits(ctx, op, acc, values[i]!);
  return acc;
}

/**
 * The single pass's look-back entries of one segment (webgpu/single-pass.ts): tile totals, group
 * totals (128 tile totals each) and unit totals (2048 each), each read up to `lookbackPolls` times
 * and, when still not published, worked out here from the level below (a tile total from the input)
 * and published, as the WGSL's fallback does.
 */
class CarryEntries {
  private readonly base: number;
  private readonly groupsFrom: number;
  private readonly unitsFrom: number;

  constructor(
    private readonly ctx: ScanContext,
    private readonly seg: ScanSegment,
    segment: number,
  ) {
    const tiles = ctx.tilesPerSegment;
    this.groupsFrom = tiles;
    this.unitsFrom = tiles + Math.ceil(tiles / carryGroupTiles);
    this.base = ctx.lookbackSlot + 1 + 2 * segment * (this.unitsFrom + Math.ceil(tiles / carryUnitTiles));
  }

  at(entry: number): number {
    return this.base + 2 * entry;
  }

  /** The entry's value once published within the polls, else undefined. */
  private read(entry: number): number | undefined {
    const at = this.at(entry);
    for (let polls = 0; polls < this.ctx.policy.lookbackPolls; polls++) {
      const lo = Atomics.load(this.ctx.tempU32, at);
      const hi = Atomics.load(this.ctx.tempU32, at + 1);
      if (publishedStatus(lo, hi) !== 0) return publishedValue(lo, hi);
    }
    return undefined;
  }

  private published(entry: number, value: number): number {
    publish(this.ctx, this.at(entry), value);
    return value;
  }

  tileTotal(tile: number): number {
    return this.read(tile) ?? this.published(tile, tileTotalBits(this.ctx, this.seg, tile));
  }

  groupTotal(group: number): number {
    const found = this.read(this.groupsFrom + group);
    if (found !== undefined) return found;
    const totals = Array.from({ length: carryGroupTiles }, (_, i) => this.tileTotal(group * carryGroupTiles + i));
    return this.published(this.groupsFrom + group, this.groupOf(totals));
  }

  /** A group's total from its 128 tile totals: its lanes' totals, left to right, then theirs. */
  private groupOf(totals: readonly number[]): number {
    const lanes = Array.from({ length: groupLanes }, (_, m) => fold(this.ctx, this.seg.op, totals, m * laneItems, m * laneItems + laneItems));
    return fold(this.ctx, this.seg.op, lanes);
  }

  /** Group `group`'s total from its published tile totals, and its unit's where it is the unit's last group; nothing where one is missing. */
  publishGroupAndUnit(group: number): void {
    const tiles = Array.from({ length: carryGroupTiles }, (_, i) => this.read(group * carryGroupTiles + i));
    if (tiles.some((x) => x === undefined)) return;
    const total = this.published(this.groupsFrom + group, this.groupOf(tiles as number[]));
    if (group % tileGroups !== tileGroups - 1) return;
    const first = group - (tileGroups - 1);
    const groups = Array.from({ length: tileGroups - 1 }, (_, h) => this.read(this.groupsFrom + first + h));
    if (groups.some((x) => x === undefined)) return;
    this.published(this.unitsFrom + Math.floor(group / tileGroups), combineBits(this.ctx, this.seg.op, fold(this.ctx, this.seg.op, groups as number[]), total));
  }

  unitTotal(unit: number): number {
    const found = this.read(this.unitsFrom + unit);
    if (found !== undefined) return found;
    const groups = Array.from({ length: tileGroups }, (_, g) => this.groupTotal(unit * tileGroups + g));
    return this.published(this.unitsFrom + unit, fold(this.ctx, this.seg.op, groups));
  }
}

/** A full or short tile's total as its owner publishes it (no initial value). */
function tileTotalBits(ctx: ScanContext, seg: ScanSegment, tile: number): number {
  const from = tile * tileItems;
  const n = Math.min(seg.size - from, tileItems);
  if (seg.op === OpCode.sum && ctx.isF32 && ctx.canonical) return canonicalBits(tileTotalF32(ctx.inF32, seg.start + from, n));
  loadItems(ctx, seg.op, seg.start + from, n);
  return tileScan(ctx, seg.op, n, false, 0, false);
}

/**
 * 'single-pass': the workgroup takes the next `singlePassTiles` tiles from the counter and publishes
 * their totals; where it holds a group's last tile, the group's total (and its unit's, where the group
 * is the unit's last) from the totals below it alone, before any carry; then for each tile puts its
 * carry together from the entries before it (webgpu/single-pass.ts says how) and writes its scan. On
 * one thread the workgroups run in order and every entry is there; on worker threads one may be in
 * flight on another thread: it is read `lookbackPolls` times, then worked out here (a group's or
 * unit's total to publish is then left to the tiles that need it, as in the WGSL).
 */
export function runSinglePass(_workgroupId: number, _n: number, _shared: unknown, { ctx }: ScanKernelParams): void {
  const ticket = Atomics.add(ctx.tempU32, ctx.lookbackSlot, 1);
  const tiles = ctx.tilesPerSegment;
  const span = ctx.policy.singlePassTiles;
  const spans = Math.ceil(tiles / span);
  const segment = Math.floor(ticket / spans);
  const first = (ticket % spans) * span;
  if (ctx.failed() || segment >= ctx.activeSegments()) return;
  const seg = tileSegment;
  resolveScanSegment(ctx, segment, tiles * tileItems, seg);
  const segmentTiles = tilesOf(seg.size);
  if (first >= segmentTiles) return;
  const end = Math.min(first + span, segmentTiles);
  const entries = new CarryEntries(ctx, seg, segment);
  for (let tile = first; tile < end; tile++) publish(ctx, entries.at(tile), tileTotalBits(ctx, seg, tile));
  // The group (and unit) whose last tile this is, from the totals below it alone, before any carry;
  // left to the tiles that need it where an entry is still missing after the polls, as in the WGSL.
  const last = end - 1;
  if (last % carryGroupTiles === carryGroupTiles - 1 && last + 1 < segmentTiles) entries.publishGroupAndUnit(Math.floor(last / carryGroupTiles));
  for (let tile = first; tile < end; tile++) {
    const carry = tile > 0 ? tileCarry(ctx, seg, entries, tile) : initialCarry(ctx, seg);
    scanTile(ctx, seg, tile, tile > 0 || seg.hasInitial, carry);
  }
}

/** The carry into tile `tile` (> 0) from the entries before it, in the canonical order. */
function tileCarry(ctx: ScanContext, seg: ScanSegment, entries: CarryEntries, tile: number): number {
  const op = seg.op;
  const p = tile - 1;
  const c = (p % carryGroupTiles) + 1;
  const unit = Math.floor(p / carryUnitTiles);
  const g = Math.floor(p / carryGroupTiles) % tileGroups;
  const units = Array.from({ length: unit }, (_, v) => entries.unitTotal(v));
  const groups = Array.from({ length: g }, (_, i) => entries.groupTotal(unit * tileGroups + i));
  const totals = Array.from({ length: c }, (_, i) => entries.tileTotal(p + 1 - c + i));
  const m = Math.floor((c - 1) / laneItems);
  const lanes = Array.from({ length: m + 1 }, (_, l) => fold(ctx, op, totals, l * laneItems, Math.min(c, l * laneItems + laneItems)));
  const pk = lanes[m]!;
  const q = m > 0 ? fold(ctx, op, lanes, 0, m) : 0;
  const r = g > 0 ? fold(ctx, op, groups) : 0;
  const hasUpper = seg.hasInitial || unit > 0;
  const upper = unit > 0 ? unitsCarryBits((x, y) => combineBits(ctx, op, x, y), seg.hasInitial, initialCarry(ctx, seg), units) : initialCarry(ctx, seg);
  const hasInner = g > 0 || m > 0;
  const inner = g > 0 ? (m > 0 ? combineBits(ctx, op, r, q) : r) : q;
  const e = hasUpper ? (hasInner ? combineBits(ctx, op, upper, inner) : upper) : inner;
  return hasInner || hasUpper ? combineBits(ctx, op, e, pk) : pk;
}
