import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { segmentBindings } from '../../../backends/webgpu/segments.js';
import { expTable, expZeroExponent, log2eHigh, log2eLow, weightNaNBits } from '../routing.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * 'weights' (grid ceil(maxSegments / WG)): the routing-weights epilogue, one invocation per segment,
 * after the variant's last launch in the same pass. It reads the segment's `take` selected keys from
 * keysOut and writes weightsOut. The arithmetic is the CPU twin's (routing.ts), operation for
 * operation, in 32-bit integers only, so the weights are bit-identical on every device and the CPU.
 * The sum over a segment runs slot by slot; each term is computed twice (for the sum, then for its
 * weight) rather than kept, as a function-scope array would need kMax fixed in the WGSL.
 */

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** The integer floating point of routing.ts in WGSL: `Num(m, e)` is `m * 2^(e - 31)`. */
export const routingNumericsWgsl = `struct Num { m: u32, e: i32 }
const TOP: u32 = 0x80000000u;
const LOG2E_HIGH: u32 = ${hex(log2eHigh)};
const LOG2E_LOW: u32 = ${hex(log2eLow)};
const EXP_TABLE = array<u32, 128>(${expTable.map(hex).join(', ')});
fn mulHi(a: u32, b: u32) -> u32 {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let lo = al * bl;
  let m1 = ah * bl;
  let m2 = al * bh;
  let mid = (lo >> 16u) + (m1 & 0xffffu) + (m2 & 0xffffu);
  return ah * bh + (m1 >> 16u) + (m2 >> 16u) + (mid >> 16u);
}
fn sticky(x: u32) -> u32 { return select(0u, 1u, x != 0u); }
fn numFromBits(bits: u32) -> Num {
  let biased = (bits >> 23u) & 255u;
  if (biased == 0u) { return Num(0u, 0); }
  return Num(((bits & 0x7fffffu) | 0x800000u) << 8u, i32(biased) - 127);
}
fn addNum(a: Num, b: Num) -> Num {
  if (b.m == 0u) { return a; }
  if (a.m == 0u) { return b; }
  var big = a;
  var small = b;
  if (a.e < b.e) { big = b; small = a; }
  let shift = u32(big.e - small.e);
  if (shift >= 32u) { return Num(big.m | 1u, big.e); }
  let part = small.m >> shift;
  var lost = 0u;
  if (shift > 0u) { lost = sticky(small.m << (32u - shift)); }
  let half = (big.m >> 1u) + (part >> 1u) + (big.m & part & 1u);
  if (half >= TOP) { return Num(half | ((big.m ^ part) & 1u) | lost, big.e + 1); }
  return Num((big.m + part) | lost, big.e);
}
fn subNum(a: Num, b: Num) -> Num {
  if (b.m == 0u) { return a; }
  let shift = u32(a.e - b.e);
  if (shift >= 40u) { return a; }
  var bh = b.m;
  var bl = 0u;
  if (shift >= 32u) {
    bh = 0u;
    bl = b.m >> (shift - 32u);
  } else if (shift > 0u) {
    bh = b.m >> shift;
    bl = b.m << (32u - shift);
  }
  let rl = 0u - bl;
  let rh = a.m - bh - sticky(bl);
  if (rh == 0u && rl == 0u) { return Num(0u, 0); }
  if (rh == 0u) {
    let z = countLeadingZeros(rl);
    return Num(rl << z, a.e - 32 - i32(z));
  }
  let z = countLeadingZeros(rh);
  if (z == 0u) { return Num(rh | sticky(rl), a.e); }
  return Num((rh << z) | (rl >> (32u - z)) | sticky(rl << z), a.e - i32(z));
}
fn mulNum(a: Num, b: Num) -> Num {
  if (a.m == 0u || b.m == 0u) { return Num(0u, 0); }
  let hi = mulHi(a.m, b.m);
  let lo = a.m * b.m;
  if (hi >= TOP) { return Num(hi | sticky(lo), a.e + b.e + 1); }
  return Num((hi << 1u) | (lo >> 31u) | sticky(lo << 1u), a.e + b.e);
}
fn divNum(a: Num, b: Num) -> Num {
  if (a.m == 0u) { return Num(0u, 0); }
  let d = b.m;
  var r = a.m;
  var q = 0u;
  var e = a.e - b.e;
  var steps = 32u;
  if (r >= d) {
    q = 1u;
    r = r - d;
    steps = 31u;
  } else {
    e = e - 1;
  }
  for (var i = 0u; i < steps; i++) {
    let carry = r >> 31u;
    r = r << 1u;
    q = q << 1u;
    if (carry != 0u || r >= d) {
      r = r - d;
      q = q | 1u;
    }
  }
  return Num(q | sticky(r), e);
}
fn expNeg(d: Num) -> Num {
  if (d.m == 0u) { return Num(TOP, 0); }
  if (d.e >= ${expZeroExponent}) { return Num(0u, 0); }
  let hi0 = mulHi(d.m, LOG2E_HIGH);
  let lo0 = d.m * LOG2E_HIGH;
  let extra = mulHi(d.m, LOG2E_LOW);
  let lo = lo0 + extra;
  let hi = hi0 + select(0u, 1u, lo < lo0);
  let shift = 30 - d.e;
  var n = 0u;
  var fraction = 0u;
  if (shift < 32) {
    let s = u32(shift);
    n = hi >> s;
    fraction = (lo >> s) | (hi << (32u - s));
  } else if (shift < 64) {
    fraction = hi >> u32(shift - 32);
  }
  var p = TOP;
  var k = -1;
  for (var c = 0u; c < 8u; c++) {
    let v = (fraction >> (28u - 4u * c)) & 15u;
    if (v == 0u) { continue; }
    let t = EXP_TABLE[16u * c + v];
    var h = mulHi(p, t);
    var l = p * t;
    if (h < TOP) {
      h = (h << 1u) | (l >> 31u);
      l = l << 1u;
      k += 1;
    }
    if (l >= TOP && h != 0xffffffffu) { h += 1u; }
    p = h;
  }
  return Num(p, -1 - k - i32(n));
}
fn numToF32Bits(a: Num) -> u32 {
  if (a.m == 0u) { return 0u; }
  var keep = a.m >> 8u;
  let rest = a.m & 0xffu;
  var e = a.e;
  if (rest > 0x80u || (rest == 0x80u && (keep & 1u) != 0u)) { keep += 1u; }
  if (keep == 0x1000000u) {
    keep = 0x800000u;
    e += 1;
  }
  let biased = e + 127;
  if (biased >= 255) { return 0x7f800000u; }
  if (biased <= 0) { return 0u; }
  return (u32(biased) << 23u) | (keep & 0x7fffffu);
}
fn isNaNBits(bits: u32) -> bool { return (bits & 0x7fffffffu) > 0x7f800000u; }
fn orderOfBits(bits: u32) -> i32 {
  let s = bitcast<i32>(select(bits, bits ^ 0x7fffffffu, (bits & TOP) != 0u));
  return select(s, 0, s == -1);
}`;

/** The term of one selected key: exp(x - max) (softmax), or sigmoid(x). */
function termFn(kind: number): string {
  if (kind === 0) {
    return `fn termOf(bits: u32, best: Num, bestNegative: u32) -> Num {
  let x = numFromBits(bits);
  var d: Num;
  if ((bits >> 31u) != bestNegative) { d = addNum(best, x); } else if (bestNegative == 0u) { d = subNum(best, x); } else { d = subNum(x, best); }
  return expNeg(d);
}`;
  }
  return `fn termOf(bits: u32, best: Num, bestNegative: u32) -> Num {
  let e = expNeg(numFromBits(bits));
  let one = Num(TOP, 0);
  let denominator = addNum(one, e);
  if ((bits >> 31u) == 0u) { return divNum(one, denominator); }
  return divNum(e, denominator);
}`;
}

/** The weights program for these facts; `kind` indexes routingWeightsKinds. */
export function weightsProgram(facts: TopKKernelFacts, name: string, kind: number): WebGpuProgram {
  const shape: KernelShape = { keys: false, outputs: false, temp: facts.startMode === 1 ? 'u32' : 'none', branch: 'none' };
  const declarations = `${routingNumericsWgsl}
${termFn(kind)}
const WEIGHT_NAN: u32 = ${hex(weightNaNBits)};`;
  const main = `
  let segment = workgroupIndex * WG + lid;
  if (failed() || segment >= activeSegments()) { return; }
  let s = resolveSegment(segment, 0xffffffffu);
  let at = segment * u.kMax;
  let take = s.take;
  for (var j = take; j < u.kMax; j++) { weightsOut[at + j] = 0u; }
  if (take == 0u) { return; }
  var nan = false;
  var best = keysOut[at];
  for (var j = 0u; j < take; j++) {
    let bits = keysOut[at + j];
    if (isNaNBits(bits)) { nan = true; } else if (orderOfBits(bits) > orderOfBits(best)) { best = bits; }
  }
  ${kind === 0 ? 'if (best == 0x7f800000u || best == 0xff800000u) { nan = true; }' : ''}
  if (nan) {
    for (var j = 0u; j < take; j++) { weightsOut[at + j] = WEIGHT_NAN; }
    return;
  }
  let bestNum = numFromBits(best);
  let bestNegative = best >> 31u;
  var sum = Num(0u, 0);
  for (var j = 0u; j < take; j++) { sum = addNum(sum, termOf(keysOut[at + j], bestNum, bestNegative)); }
  if (sum.m == 0u) {
    for (var j = 0u; j < take; j++) { weightsOut[at + j] = WEIGHT_NAN; }
    return;
  }
  let scale = numFromBits(u.weightScale);
  for (var j = 0u; j < take; j++) {
    let term = termOf(keysOut[at + j], bestNum, bestNegative);
    weightsOut[at + j] = numToF32Bits(mulNum(divNum(term, sum), scale));
  }`;
  return {
    name,
    cacheKey: `weights|${kind}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), 'weightScale'],
    bindings: segmentBindings(
      facts,
      [
        { name: 'keysOut', access: 'read', element: 'u32' },
        { name: 'weightsOut', access: 'read_write', element: 'u32' },
      ],
      shape,
    ),
    preamble: topKPreamble(facts, shape),
    declarations,
    main,
  };
}
