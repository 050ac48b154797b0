import { type ScanMode, type ScanOp, type ScanValueType, groupLanes, identityBits, laneItems, tileItems } from './order.js';

/** Host inputs of the reference scan. */
export interface ReferenceScanInput {
  valueType: ScanValueType;
  /** All values, as bits. */
  values: Uint32Array;
  segmentStarts: ArrayLike<number>;
  segmentSizes: ArrayLike<number>;
  ops: ArrayLike<ScanOp>;
  modes: ArrayLike<ScanMode>;
  /** Per segment: the initial value's bits, or undefined for none. */
  initialValues?: ArrayLike<number | undefined>;
  /** The output before the call (bits); positions outside every segment keep them. */
  outputBefore: Uint32Array;
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);
const i32 = new Int32Array(f32.buffer);

const asF32 = (bits: number) => ((f32Bits[0] = bits), f32[0]!);
const bitsOfF32 = (x: number) => ((f32[0] = x), f32Bits[0]!);
/** Subnormals flushed to the zero of their sign. */
const flush = (x: number) => (x !== 0 && Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x);

/** `a` ranks above `b` in the value order of min/max: NaN above everything, -0 equal to +0. */
function above(a: number, b: number): boolean {
  if (Number.isNaN(a)) return !Number.isNaN(b);
  if (Number.isNaN(b)) return false;
  return a > b;
}

/** A value as its number: f32, i32 or u32. */
function numberOf(bits: number, valueType: ScanValueType): number {
  if (valueType === 'f32') return asF32(bits);
  f32Bits[0] = bits;
  return valueType === 'i32' ? i32[0]! : f32Bits[0]!;
}

/** `combine(a, b)` on bits, `a` the earlier term. */
function combiner(op: ScanOp, valueType: ScanValueType): (a: number, b: number) => number {
  if (op === 'sum') {
    if (valueType !== 'f32') return (a, b) => (a + b) >>> 0;
    return (a, b) => bitsOfF32(flush(Math.fround(asF32(a) + asF32(b))));
  }
  const sign = op === 'max' ? 1 : -1;
  return (a, b) => {
    const x = numberOf(a, valueType);
    const y = numberOf(b, valueType);
    return (sign > 0 ? above(y, x) : above(x, y)) ? b : a;
  };
}

/** `a ⊕ b` where either term may be absent. */
function join(combine: (a: number, b: number) => number, a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return combine(a, b);
}

/**
 * The inclusive scan of `items` (bits) in the canonical order of order.ts, literally: tiles, lanes,
 * groups, and tile carries from the same scan of the tile totals.
 */
function canonicalInclusive(items: readonly number[], initial: number | undefined, combine: (a: number, b: number) => number): number[] {
  const tiles = Math.ceil(items.length / tileItems);
  const totals: number[] = [];
  const parts: { laneCarry: (number | undefined)[]; groupCarry: (number | undefined)[] }[] = [];
  for (let t = 0; t < tiles; t++) {
    const tile = items.slice(t * tileItems, (t + 1) * tileItems);
    const laneTotals: number[] = [];
    for (let at = 0; at < tile.length; at += laneItems) laneTotals.push(tile.slice(at, at + laneItems).reduce((a, b) => combine(a, b)));
    const laneCarry: (number | undefined)[] = [];
    const groupTotals: number[] = [];
    for (let l = 0; l < laneTotals.length; l++) {
      const m = l % groupLanes;
      laneCarry.push(m === 0 ? undefined : join(combine, laneCarry[l - 1], laneTotals[l - 1]));
      if (m === groupLanes - 1 || l === laneTotals.length - 1) groupTotals.push(join(combine, laneCarry[l], laneTotals[l])!);
    }
    const groupCarry: (number | undefined)[] = [];
    for (let g = 0; g < groupTotals.length; g++) groupCarry.push(g === 0 ? undefined : join(combine, groupCarry[g - 1], groupTotals[g - 1]));
    totals.push(join(combine, groupCarry.at(-1), groupTotals.at(-1))!);
    parts.push({ laneCarry, groupCarry });
  }
  const upper = tiles > 1 ? canonicalInclusive(totals, initial, combine) : [];
  const out: number[] = [];
  let prefix: number | undefined;
  for (let j = 0; j < items.length; j++) {
    const t = Math.floor(j / tileItems);
    const l = Math.floor((j % tileItems) / laneItems);
    const carry = t === 0 ? initial : upper[t - 1];
    const lane = parts[t]!;
    const inner = join(combine, lane.groupCarry[Math.floor(l / groupLanes)], lane.laneCarry[l]);
    // The lane prefix: the lane's items so far, left to right, starting afresh at each lane.
    prefix = j % laneItems === 0 ? items[j]! : combine(prefix!, items[j]!);
    out.push(join(combine, join(combine, carry, inner), prefix)!);
  }
  return out;
}

/**
 * A small, obviously correct segmented scan: the definition of order.ts written out with arrays and
 * recursion. Test oracle only. Returns the output's bits.
 */
export function referenceScan(input: ReferenceScanInput): Uint32Array {
  const out = new Uint32Array(input.outputBefore);
  const { valueType } = input;
  for (let s = 0; s < input.segmentSizes.length; s++) {
    const start = input.segmentStarts[s]!;
    const size = input.segmentSizes[s]!;
    const op = input.ops[s]!;
    const initial = input.initialValues?.[s];
    const combine = combiner(op, valueType);
    const flushSum = op === 'sum' && valueType === 'f32';
    const items = Array.from(input.values.subarray(start, start + size), (bits) => (flushSum ? bitsOfF32(flush(asF32(bits))) : bits));
    const carry = initial !== undefined && flushSum ? bitsOfF32(flush(asF32(initial))) : initial;
    const inclusive = canonicalInclusive(items, carry, combine).map((bits) => (flushSum && Number.isNaN(asF32(bits)) ? 0x7fc00000 : bits));
    if (input.modes[s] === 'inclusive') out.set(inclusive, start);
    else if (size > 0) {
      out[start] = initial ?? identityBits(op, valueType);
      out.set(inclusive.slice(0, size - 1), start + 1);
    }
  }
  return out;
}
