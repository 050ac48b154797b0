/*
 * MoE routing weights: the arithmetic of top-k's 'weights' epilogue, on the CPU. Its WGSL twin is
 * webgpu/routing.ts, operation for operation.
 *
 * Why integers. WGSL leaves exp() and division inexact (within a few ulp, differently per device)
 * and lets a driver fuse a multiply and an add, so an f32 formula does not give the same bits on
 * every device, nor on the CPU. Every step here is 32-bit integer arithmetic (a product's high word
 * by 16-bit halves, shifts, compares), which every WebGPU device and JavaScript compute exactly:
 * the weights are bit-identical on every backend, and the same on every run.
 *
 * The numbers are a small floating point of their own, `m * 2^(e - 31)` with a 32-bit mantissa `m`
 * whose top bit is set (0 for zero) and an integer exponent `e`. Every operation truncates and ORs
 * "something was lost" into the mantissa's lowest bit (round to odd), so the last rounding to f32
 * (nearest, ties to even) rounds the computed value once. exp(-d) is 2^-n times a product of
 * constants 2^(-v/16^c), one per non-zero 4-bit digit of the fraction of d*log2(e); d * log2(e) uses a 64-bit
 * log2(e). Each weight is within one ulp of the exact value (test/conformance/topk-weights.suite.ts
 * measures it against a float64 reference).
 *
 * Rules, per segment (`take` = the results written, min(k_i, size_i)):
 * - 'softmax': w_j = scale * exp(x_j - max) / sum of exp(x_i - max) over the selected x;
 *   'sigmoid-renormalize': w_j = scale * s_j / sum of s_i, s = 1 / (1 + exp(-x)) (DeepSeek-V3).
 * - exp(-d) is taken as 0 for d >= 2^19 (it is below 2^-756000), so a sigmoid of x <= -2^19 is 0.
 * - NaN weights for the whole segment when a selected key is NaN; for softmax also when the largest
 *   is +Infinity or every one is -Infinity; for sigmoid-renormalize when every s is 0 (as the
 *   formulas give in IEEE arithmetic, and torch with them).
 * - Slots past `take` get +0; a weight below 2^-126 is written as +0 (WebGPU may flush subnormals).
 * - Weights go slot by slot in keysOut's order; the sum runs over slots in order.
 */

/** What the epilogue computes from each segment's selected keys. */
export type RoutingWeightsKind = 'softmax' | 'sigmoid-renormalize';

/** The routing-weights kinds, in their device index order (0 softmax, 1 sigmoid-renormalize). */
export const routingWeightsKinds: readonly RoutingWeightsKind[] = ['softmax', 'sigmoid-renormalize'];

/** The quiet NaN every NaN weight is written as. */
export const weightNaNBits = 0x7fc00000;

/** log2(e) * 2^31: the high word and the next 32 bits (truncated). */
export const log2eHigh = 0xb8aa3b29;
export const log2eLow = 0x5c17f0bb;

/**
 * 2^-f for the 4-bit digits of a 32-bit fraction f: entry `16 * c + v` is round(2^(-v / 16^(c + 1)) * 2^32)
 * (capped at 0xFFFFFFFF; entries with v = 0 are unused).
 */
export const expTable: readonly number[] = [
  0x00000000, 0xf5257d15, 0xeac0c6e8, 0xe0ccdeec, 0xd744fccb, 0xce248c15, 0xc5672a11, 0xbd08a39f, 0xb504f334, 0xad583eea, 0xa5fed6aa, 0x9ef53261, 0x9837f052, 0x91c3d374, 0x8b95c1e4, 0x85aac368,
  0x00000000, 0xff4ecb59, 0xfe9e115c, 0xfdedd1b5, 0xfd3e0c0d, 0xfc8ec011, 0xfbdfed6d, 0xfb3193cc, 0xfa83b2db, 0xf9d64a47, 0xf92959bb, 0xf87ce0e6, 0xf7d0df73, 0xf7255511, 0xf67a416c, 0xf5cfa434,
  0x00000000, 0xfff4e91c, 0xffe9d2b3, 0xffdebcc5, 0xffd3a752, 0xffc8925a, 0xffbd7ddc, 0xffb269da, 0xffa75652, 0xff9c4345, 0xff9130b3, 0xff861e9c, 0xff7b0d00, 0xff6ffbde, 0xff64eb37, 0xff59db0b,
  0x00000000, 0xffff4e8e, 0xfffe9d1d, 0xfffdebac, 0xfffd3a3b, 0xfffc88cc, 0xfffbd75c, 0xfffb25ed, 0xfffa747f, 0xfff9c311, 0xfff911a3, 0xfff86036, 0xfff7aec9, 0xfff6fd5d, 0xfff64bf2, 0xfff59a87,
  0x00000000, 0xfffff4e9, 0xffffe9d2, 0xffffdebb, 0xffffd3a3, 0xffffc88c, 0xffffbd75, 0xffffb25e, 0xffffa747, 0xffff9c30, 0xffff9119, 0xffff8602, 0xffff7aeb, 0xffff6fd3, 0xffff64bc, 0xffff59a5,
  0x00000000, 0xffffff4f, 0xfffffe9d, 0xfffffdec, 0xfffffd3a, 0xfffffc89, 0xfffffbd7, 0xfffffb26, 0xfffffa74, 0xfffff9c3, 0xfffff912, 0xfffff860, 0xfffff7af, 0xfffff6fd, 0xfffff64c, 0xfffff59a,
  0x00000000, 0xfffffff5, 0xffffffea, 0xffffffdf, 0xffffffd4, 0xffffffc9, 0xffffffbd, 0xffffffb2, 0xffffffa7, 0xffffff9c, 0xffffff91, 0xffffff86, 0xffffff7b, 0xffffff70, 0xffffff65, 0xffffff5a,
  0x00000000, 0xffffffff, 0xffffffff, 0xfffffffe, 0xfffffffd, 0xfffffffd, 0xfffffffc, 0xfffffffb, 0xfffffffa, 0xfffffffa, 0xfffffff9, 0xfffffff8, 0xfffffff8, 0xfffffff7, 0xfffffff6, 0xfffffff6,
];

/** exp(-d) is 0 from d = 2^expZeroExponent on. */
export const expZeroExponent = 19;

const top = 0x80000000;

/**
 * The high word of the 64-bit product of two u32 (the WGSL twin multiplies 16-bit halves; here one
 * operand is split and doubles hold the partial products exactly, below 2^53).
 */
export function mulHi(a: number, b: number): number {
  const t = a * (b & 0xffff);
  const u = a * (b >>> 16) + Math.floor(t / 65536);
  return Math.floor(u / 65536) >>> 0;
}

/** The low word of the product of two u32. */
function mulLo(a: number, b: number): number {
  return Math.imul(a, b) >>> 0;
}

/** A number `m * 2^(e - 31)`; operations write their result into `out`. */
class Num {
  m = 0;
  e = 0;
  set(m: number, e: number): this {
    this.m = m >>> 0;
    this.e = e;
    return this;
  }
  copy(other: Num): this {
    return this.set(other.m, other.e);
  }
}

/** |value| of an f32's bits (subnormals as 0, infinities as 2^128). */
function fromBits(bits: number, out: Num): Num {
  const biased = (bits >>> 23) & 255;
  if (biased === 0) return out.set(0, 0);
  return out.set((((bits & 0x7fffff) | 0x800000) << 8) >>> 0, biased - 127);
}

/** a + b, both >= 0. */
function add(a: Num, b: Num, out: Num): Num {
  if (b.m === 0) return out.copy(a);
  if (a.m === 0) return out.copy(b);
  const big = a.e >= b.e ? a : b;
  const small = big === a ? b : a;
  const shift = big.e - small.e;
  if (shift >= 32) return out.set(big.m | 1, big.e);
  const part = small.m >>> shift;
  const lost = shift > 0 && (small.m << (32 - shift)) !== 0 ? 1 : 0;
  const half = (big.m >>> 1) + (part >>> 1) + (big.m & part & 1);
  if (half >= top) return out.set(half | ((big.m ^ part) & 1) | lost, big.e + 1);
  return out.set((big.m + part) | lost, big.e);
}

/** a - b for a >= b >= 0, exact up to the 64 bits it aligns them in. */
function sub(a: Num, b: Num, out: Num): Num {
  if (b.m === 0) return out.copy(a);
  const shift = a.e - b.e;
  if (shift >= 40) return out.set(a.m, a.e);
  let bh: number;
  let bl: number;
  if (shift === 0) {
    bh = b.m;
    bl = 0;
  } else if (shift < 32) {
    bh = b.m >>> shift;
    bl = (b.m << (32 - shift)) >>> 0;
  } else {
    bh = 0;
    bl = b.m >>> (shift - 32);
  }
  const rl = (0 - bl) >>> 0;
  const rh = (a.m - bh - (bl !== 0 ? 1 : 0)) >>> 0;
  if (rh === 0 && rl === 0) return out.set(0, 0);
  if (rh === 0) {
    const z = Math.clz32(rl);
    return out.set(rl << z, a.e - 32 - z);
  }
  const z = Math.clz32(rh);
  if (z === 0) return out.set(rh | (rl !== 0 ? 1 : 0), a.e);
  return out.set((rh << z) | (rl >>> (32 - z)) | ((rl << z) !== 0 ? 1 : 0), a.e - z);
}

/** a * b. */
function mul(a: Num, b: Num, out: Num): Num {
  if (a.m === 0 || b.m === 0) return out.set(0, 0);
  const hi = mulHi(a.m, b.m);
  const lo = mulLo(a.m, b.m);
  if (hi >= top) return out.set(hi | (lo !== 0 ? 1 : 0), a.e + b.e + 1);
  return out.set((hi << 1) | (lo >>> 31) | ((lo << 1) !== 0 ? 1 : 0), a.e + b.e);
}

/** floor(x / d) and its remainder for integers x < 2^49, d < 2^32 (the double quotient corrected by one). */
let remainder = 0;
function divide(x: number, d: number): number {
  let q = Math.floor(x / d);
  let r = x - q * d;
  if (r < 0) {
    q -= 1;
    r += d;
  } else if (r >= d) {
    q += 1;
    r -= d;
  }
  remainder = r;
  return q;
}

/**
 * a / b for b > 0: 32 quotient bits and the remainder as the sticky bit. The WGSL twin divides bit
 * by bit; here two 16-bit steps in doubles give the same quotient and remainder.
 */
function div(a: Num, b: Num, out: Num): Num {
  if (a.m === 0) return out.set(0, 0);
  const d = b.m;
  // floor(a.m * 2^shift / d), with shift 31 when a.m >= d (the quotient's top bit is 2^31), else 32.
  const shift = a.m >= d ? 31 : 32;
  const high = divide(a.m * 65536, d);
  const low = divide(remainder * 2 ** (shift - 16), d);
  const q = high * 2 ** (shift - 16) + low;
  return out.set(q | (remainder !== 0 ? 1 : 0), a.e - b.e - (shift - 31));
}

/** exp(-d) for d >= 0. */
function expNeg(d: Num, out: Num): Num {
  if (d.m === 0) return out.set(top, 0);
  if (d.e >= expZeroExponent) return out.set(0, 0);
  // t = d * log2(e) as a 64-bit product (hi, lo) scaled 2^(d.e - 62); its fraction in 32 bits.
  const hi0 = mulHi(d.m, log2eHigh);
  const lo0 = mulLo(d.m, log2eHigh);
  const extra = mulHi(d.m, log2eLow);
  const lo = (lo0 + extra) >>> 0;
  const hi = (hi0 + (lo < lo0 ? 1 : 0)) >>> 0;
  const shift = 30 - d.e;
  let n = 0;
  let fraction = 0;
  if (shift < 32) {
    n = hi >>> shift;
    fraction = ((lo >>> shift) | (hi << (32 - shift))) >>> 0;
  } else if (shift < 64) {
    fraction = hi >>> (shift - 32);
  }
  // 2^-fraction: a product of one table entry per non-zero 4-bit digit, kept normalized.
  let p = top;
  let k = -1;
  for (let c = 0; c < 8; c++) {
    const v = (fraction >>> (28 - 4 * c)) & 15;
    if (v === 0) continue;
    const t = expTable[16 * c + v]!;
    let h = mulHi(p, t);
    let l = mulLo(p, t);
    if (h < top) {
      h = ((h << 1) | (l >>> 31)) >>> 0;
      l = (l << 1) >>> 0;
      k += 1;
    }
    if (l >= top && h !== 0xffffffff) h += 1;
    p = h;
  }
  return out.set(p, -1 - k - n);
}

/** The f32 bits of a number: nearest, ties to even; below 2^-126 as +0, past the range as +Infinity. */
function toF32(a: Num): number {
  if (a.m === 0) return 0;
  let keep = a.m >>> 8;
  const rest = a.m & 0xff;
  let e = a.e;
  if (rest > 0x80 || (rest === 0x80 && (keep & 1) !== 0)) keep += 1;
  if (keep === 0x1000000) {
    keep = 0x800000;
    e += 1;
  }
  const biased = e + 127;
  if (biased >= 255) return 0x7f800000;
  if (biased <= 0) return 0;
  return ((biased << 23) | (keep & 0x7fffff)) >>> 0;
}

const isNaNBits = (bits: number) => (bits & 0x7fffffff) > 0x7f800000;
/** Signed ordered key of f32 bits, NaN excluded (-0 is +0). */
const orderOf = (bits: number) => {
  const s = (bits ^ ((bits >> 31) >>> 1)) | 0;
  return s === -1 ? 0 : s;
};

// Scratch numbers: the epilogue allocates nothing per segment.
const one = new Num().set(top, 0);
const scaleNum = new Num();
const x = new Num();
const m = new Num();
const d = new Num();
const term = new Num();
const denominator = new Num();
const sum = new Num();
const quotient = new Num();
const weight = new Num();
let terms = new Uint32Array(128);

/**
 * Writes the routing weights of one segment: `take` selected keys (f32 bits) at `keys[at, at + take)`
 * become weights at `weights[at, ...)`, and the slots up to `at + kMax` get +0. `kind` is an index
 * of {@link routingWeightsKinds}; `scaleBits` the f32 bits of the scale (a positive normal f32).
 */
export function routingWeightsOfSegment(keys: Uint32Array, weights: Uint32Array, at: number, take: number, kMax: number, kind: number, scaleBits: number): void {
  weights.fill(0, at + take, at + kMax);
  if (take === 0) return;
  fromBits(scaleBits, scaleNum);
  let nan = false;
  let best = keys[at]!;
  for (let j = 0; j < take; j++) {
    const bits = keys[at + j]!;
    if (isNaNBits(bits)) nan = true;
    else if (orderOf(bits) > orderOf(best)) best = bits;
  }
  if (kind === 0) nan ||= best === 0x7f800000 || best === 0xff800000;
  if (nan) {
    weights.fill(weightNaNBits, at, at + take);
    return;
  }
  if (terms.length < 2 * take) terms = new Uint32Array(Math.max(2 * take, 2 * terms.length));
  // Each slot's term (mantissa, exponent) and their sum, slot by slot.
  sum.set(0, 0);
  const bestNegative = best >>> 31;
  fromBits(best, m);
  for (let j = 0; j < take; j++) {
    const bits = keys[at + j]!;
    fromBits(bits, x);
    if (kind === 0) {
      // d = max - x >= 0, from the magnitudes.
      if (bits >>> 31 !== bestNegative) add(m, x, d);
      else if (bestNegative === 0) sub(m, x, d);
      else sub(x, m, d);
      expNeg(d, term);
    } else {
      // s = 1 / (1 + exp(-x)), or exp(x) / (1 + exp(x)) for x < 0.
      expNeg(x, d);
      add(one, d, denominator);
      div(bits >>> 31 === 0 ? one : d, denominator, term);
    }
    terms[2 * j] = term.m;
    terms[2 * j + 1] = term.e;
    add(sum, term, sum);
  }
  if (sum.m === 0) {
    weights.fill(weightNaNBits, at, at + take);
    return;
  }
  for (let j = 0; j < take; j++) {
    term.set(terms[2 * j]!, terms[2 * j + 1]! | 0);
    div(term, sum, quotient);
    weights[at + j] = toF32(mul(quotient, scaleNum, weight));
  }
}
