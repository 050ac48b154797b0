import { type SlabMemory, wasmScratchBytes } from '../../../backends/cpu/memory.js';
import { canonicalNaNBits, quietExponentBits } from '../../../backends/cpu/numerics.js';
import { WasmType, constants, flush, op, quietConstants, quietTest } from '../../../backends/cpu/wasm.js';
import { type WasmKernelMemory, WasmKernelSet } from '../../../backends/cpu/wasm-kernels.js';
import { groupLanes, laneItems, tileItems } from '../order.js';

/*
 * The scan's canonical f32 sums of packed rows of 8 or 16 items (MoE) as WebAssembly SIMD (f32x4),
 * for the CPU emulator, bit for bit as kernels.ts `scanTileF32` gives them for a segment of one such
 * row: each lane of 8 items a chain of additions from its first item, each output the lane's carry
 * plus its prefix (the carry of lane 0 the initial value, of lane 1 the initial value plus lane 0's
 * total), subnormals flushed as they are read and made, a NaN written as the canonical NaN.
 *
 * A chain is sequential, so the vectors hold four rows, not four items of one row: a block of four
 * rows is loaded a row's 4 items at a time, transposed 4x4 (eight shuffles) so that vector j holds
 * item j of each row, scanned down j, and transposed back to be stored. As in reduce's loops
 * (segmented-reduce/cpu/simd.ts), items that are zeros or at least 2^-103 in magnitude (the quiet
 * test, with an initial value that passes it too) take a twin without the flushes, which cannot
 * change anything then.
 *
 * Items are read in place where they lie in a heap slab, else copied in (wasm-kernels.ts); the
 * outputs are written to the thread's scratch region and copied to the output from there.
 */

const { get, set } = op;

/** Bytes of i8x16.shuffle that take 32-bit lanes `of` (0-3 the first v128's, 4-7 the second's). */
const lanes32 = (of: readonly number[]) => of.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]);

/** The 4x4 transpose of locals `a` (rows 0-3 of it) into locals `out`, through locals `t`. */
const transpose = (a: readonly number[], t: readonly number[], out: readonly number[]) => [
  ...[0, 1].flatMap((h) => [
    ...[0, 1].flatMap((k) => [get(a[2 * h]!), get(a[2 * h + 1]!), op.shuffle(lanes32(k === 0 ? [0, 4, 1, 5] : [2, 6, 3, 7])), set(t[2 * h + k]!)]),
  ]),
  ...[0, 1].flatMap((k) => [
    ...[0, 1].flatMap((h) => [get(t[k]!), get(t[k + 2]!), op.shuffle(lanes32(h === 0 ? [0, 1, 4, 5] : [2, 3, 6, 7])), set(out[2 * k + h]!)]),
  ]),
];

/** The opening of a loop over one tile from local `items`: local `p` its first byte, `end` one past its last. */
const overTile = (items: number, p: number, end: number) => [get(items), op.tee(p), op.i32Const(tileItems * 4), op.i32Add, set(end), op.loop];

/**
 * An output of the canonical scan: local `carry` + local `prefix`, flushed, a NaN as the canonical
 * NaN (local `nan`), into local `out` (through local `t`; `fl` the flush through `t`).
 */
const canonicalOutput = (nan: number, carry: number, prefix: number, t: number, fl: readonly (number | readonly number[])[], out: number) => [
  get(nan),
  get(carry),
  get(prefix),
  op.f32x4Add,
  ...fl,
  set(t),
  get(t),
  get(t),
  get(t),
  op.f32x4Ne,
  op.v128Bitselect,
  set(out),
];

/**
 * rowScans8 / rowScans16(items, scratch, count, carry) -> i32: the canonical inclusive sums of
 * `count` (a multiple of 4) packed rows of 8 or 16 items from `items`, each from the initial value
 * with bits `carry` (flushed; -0 for none), written from `scratch`; the Quiet twins without the
 * flushes, with the quiet test on the way: they return 1 when the items passed (and their outputs
 * are then the canonical ones), the flushing loops 0.
 */
function rowScans(size: 8 | 16, quiet: boolean) {
  let next = 4;
  const local = () => next++;
  const [items, scratch, count, carry] = [0, 1, 2, 3];
  const [p, o, end] = [local(), local(), local()];
  const [minNormal, magnitude, t, q, one, limit, c, e, prefix, nan] = Array.from({ length: 10 }, local) as [number, number, number, number, number, number, number, number, number, number];
  const rowsIn = [local(), local(), local(), local()];
  const temps = [local(), local(), local(), local()];
  const columns = [local(), local(), local(), local()];
  const outs = [local(), local(), local(), local()];
  const fl = quiet ? [] : flush(t, minNormal, magnitude);
  const rowBytes = size * 4;
  const block = (b: number) => {
    const laneStart = (4 * b) % laneItems === 0;
    return [
      ...rowsIn.flatMap((r, k) => [get(p), op.v128Load(k * rowBytes + b * 16), set(r)]),
      ...transpose(rowsIn, temps, columns),
      // A lane's carry: the initial value for lane 0; for lane 1, it plus lane 0's total (the prefix).
      ...(laneStart ? (b === 0 ? [get(c), set(e)] : [get(c), get(prefix), op.f32x4Add, ...fl, set(e)]) : []),
      ...columns.flatMap((v, i) => [
        ...(quiet ? quietTest(v, q, magnitude, one, limit) : []),
        ...(laneStart && i === 0 ? [get(v), ...fl, set(prefix)] : [get(prefix), get(v), ...fl, op.f32x4Add, ...fl, set(prefix)]),
        ...canonicalOutput(nan, e, prefix, t, fl, outs[i]!),
      ]),
      ...transpose(outs, temps, rowsIn),
      ...rowsIn.flatMap((r, k) => [get(o), get(r), op.v128Store(k * rowBytes + b * 16)]),
    ];
  };
  const body = [
    ...constants(minNormal, magnitude),
    ...(quiet ? quietConstants(q, one, limit) : []),
    get(carry),
    op.i32x4Splat,
    set(c),
    op.v128ConstI32(Array(4).fill(canonicalNaNBits)),
    set(nan),
    get(items),
    set(p),
    get(scratch),
    op.tee(o),
    get(count),
    op.i32Const(Math.log2(rowBytes)),
    op.i32Shl,
    op.i32Add,
    set(end),
    op.loop,
    ...Array.from({ length: size / 4 }, (_, b) => block(b)).flat(),
    get(p),
    op.i32Const(4 * rowBytes),
    op.i32Add,
    set(p),
    get(o),
    op.i32Const(4 * rowBytes),
    op.i32Add,
    op.tee(o),
    get(end),
    op.i32LtU,
    op.brIf(0),
    op.end,
    ...(quiet ? [get(q), op.v128AnyTrue, op.i32Eqz] : [op.i32Const(0)]),
  ];
  return {
    name: `rowScans${size}${quiet ? 'Quiet' : ''}`,
    params: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, ...Array(next - 7).fill(WasmType.V128)],
    body,
  };
}

/**
 * tileScan(items, scratch, carry) -> i32 / tileTotal(items) -> i32: one full tile of a long segment
 * (tileItems = 2048 items: 16 groups of 16 lanes of 8), bit for bit as kernels.ts `scanTileF32` and
 * `tileTotalF32` give it: tileScan writes the tile's canonical inclusive sums from the carry with bits
 * `carry` (flushed; -0 for none) to `scratch`; both return the bits of the tile's total R (the groups'
 * totals added in order; its NaN not yet canonical). Four lanes at a time, as rowScans takes four
 * rows: a block of 32 items (lanes j..j+3) loaded 4 items at a time and transposed 4x4 twice so that
 * vector i holds item i of each lane, each lane's prefix a chain down i. The lanes' carries are not
 * independent as rows' are: lane m's is C ⊕ (R_g ⊕ q_m), q_m the group's lane totals before it added
 * one after another, so q moves through the block's four lane totals in order (each step a splat,
 * every lane of the vector the same), and the four q's are gathered into one vector for the lanes'
 * carries. After each group's 16 lanes R takes its total q.
 */
function tileKernel(scan: boolean, quiet: boolean) {
  let next = scan ? 3 : 1;
  const local = () => next++;
  // Parameters: items, and tileScan's scratch and carry.
  const [items, scratch, carry] = [0, 1, 2];
  const [p, o, end] = [local(), local(), local()];
  const [minNormal, magnitude, t, c, r, q, e, nan, totals, q1, q2, q3, qs] = Array.from({ length: 13 }, local) as [number, number, number, number, number, number, number, number, number, number, number, number, number];
  const lanesIn = [local(), local(), local(), local()];
  const lanesHigh = [local(), local(), local(), local()];
  const temps = [local(), local(), local(), local()];
  const columns = Array.from({ length: 8 }, local);
  const outs = [local(), local(), local(), local()];
  // The quiet twins leave the flushes out: tileQuiet proved that none can change anything.
  const fl = quiet ? [] : flush(t, minNormal, magnitude);
  const laneBytes = laneItems * 4;
  // Lane i of local v in every lane.
  const splatLane = (v: number, i: number) => [get(v), get(v), op.shuffle(lanes32([i, i, i, i]))];
  const outputs = (from: number) => columns.slice(from, from + 4).flatMap((v, i) => canonicalOutput(nan, e, v, t, fl, outs[i]!));
  const block = (b: number) => [
    ...lanesIn.flatMap((l, k) => [get(p), op.v128Load(b * 4 * laneBytes + k * laneBytes), set(l)]),
    ...lanesHigh.flatMap((l, k) => [get(p), op.v128Load(b * 4 * laneBytes + k * laneBytes + 16), set(l)]),
    ...transpose(lanesIn, temps, columns.slice(0, 4)),
    ...transpose(lanesHigh, temps, columns.slice(4, 8)),
    // Each lane's prefix down its 8 items (the columns become the prefixes), items flushed as read.
    ...columns.flatMap((v, i) => (i === 0 ? [get(v), ...fl, set(v)] : [get(columns[i - 1]!), get(v), ...fl, op.f32x4Add, ...fl, set(v)])),
    // q through the four lane totals in order; qs gathers q before each lane.
    get(columns[7]!),
    set(totals),
    ...[q1, q2, q3].flatMap((qi, i) => [get(i === 0 ? q : [q1, q2][i - 1]!), ...splatLane(totals, i), op.f32x4Add, ...fl, set(qi)]),
    get(q),
    get(q1),
    op.shuffle(lanes32([0, 4, 4, 4])),
    get(q2),
    op.shuffle(lanes32([0, 1, 4, 4])),
    get(q3),
    op.shuffle(lanes32([0, 1, 2, 4])),
    set(qs),
    get(q3),
    ...splatLane(totals, 3),
    op.f32x4Add,
    ...fl,
    set(q),
    ...(scan
      ? [
          // The lanes' carries C ⊕ (R ⊕ q_m), then each output carry ⊕ prefix, NaN canonical.
          get(c),
          get(r),
          get(qs),
          op.f32x4Add,
          ...fl,
          op.f32x4Add,
          ...fl,
          set(e),
          ...outputs(0),
          ...transpose(outs, temps, lanesIn),
          ...outputs(4),
          ...transpose(outs, temps, lanesHigh),
          ...lanesIn.flatMap((l, k) => [get(o), get(l), op.v128Store(b * 4 * laneBytes + k * laneBytes)]),
          ...lanesHigh.flatMap((l, k) => [get(o), get(l), op.v128Store(b * 4 * laneBytes + k * laneBytes + 16)]),
        ]
      : []),
  ];
  const groupBytes = groupLanes * laneBytes;
  const body = [
    ...constants(minNormal, magnitude),
    op.v128ConstI32([0x80000000, 0x80000000, 0x80000000, 0x80000000]),
    set(r),
    ...(scan ? [get(carry), op.i32x4Splat, set(c), op.v128ConstI32(Array(4).fill(canonicalNaNBits)), set(nan), get(scratch), set(o)] : []),
    ...overTile(items, p, end),
    op.v128ConstI32([0x80000000, 0x80000000, 0x80000000, 0x80000000]),
    set(q),
    ...Array.from({ length: groupLanes / 4 }, (_, b) => block(b)).flat(),
    // R takes the group's total.
    get(r),
    get(q),
    op.f32x4Add,
    ...fl,
    set(r),
    get(p),
    op.i32Const(groupBytes),
    op.i32Add,
    op.tee(p),
    ...(scan ? [get(o), op.i32Const(groupBytes), op.i32Add, set(o)] : []),
    get(end),
    op.i32LtU,
    op.brIf(0),
    op.end,
    get(r),
    op.i32x4ExtractLane(0),
  ];
  return {
    name: `${scan ? 'tileScan' : 'tileTotal'}${quiet ? 'Quiet' : ''}`,
    params: scan ? [WasmType.I32, WasmType.I32, WasmType.I32] : [WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, ...Array(next - (scan ? 6 : 4)).fill(WasmType.V128)],
    body,
  };
}

/**
 * tileQuiet(items) -> i32: 1 when every item of the full tile from `items` passes the quiet test (a
 * zero, or at least 2^-103 in magnitude: no flush of a sum of them can change anything, wasm.ts
 * `quietTest`), so that the Quiet twins of tileScan and tileTotal give the canonical bits; else 0.
 */
function tileQuiet() {
  const items = 0;
  const [p, end] = [1, 2];
  const [magnitude, minNormal, q, one, limit, v] = [3, 4, 5, 6, 7, 8];
  const body = [
    ...constants(minNormal, magnitude),
    ...quietConstants(q, one, limit),
    ...overTile(items, p, end),
    ...[0, 1, 2, 3].flatMap((k) => [get(p), op.v128Load(k * 16), set(v), ...quietTest(v, q, magnitude, one, limit)]),
    get(p),
    op.i32Const(64),
    op.i32Add,
    op.tee(p),
    get(end),
    op.i32LtU,
    op.brIf(0),
    op.end,
    get(q),
    op.v128AnyTrue,
    op.i32Eqz,
  ];
  return { name: 'tileQuiet', params: [WasmType.I32], results: [WasmType.I32], locals: [WasmType.I32, WasmType.I32, ...Array(6).fill(WasmType.V128)], body };
}

interface Kernels extends WasmKernelMemory {
  readonly tileQuiet: (items: number) => number;
  readonly tileScan: (items: number, scratch: number, carry: number) => number;
  readonly tileScanQuiet: (items: number, scratch: number, carry: number) => number;
  readonly tileTotal: (items: number) => number;
  readonly tileTotalQuiet: (items: number) => number;
  readonly rowScans8: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans16: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans8Quiet: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans16Quiet: (items: number, scratch: number, count: number, carry: number) => number;
}

// 21.8 KB (each row's blocks, and a tile group's four blocks, written out; the tiles' two functions
// 12.3 KB of it): Chrome before 114 refused synchronous compiles over 4 KB on
// its main thread, where this then keeps the scalar loop.
const kernels = new WasmKernelSet<Kernels>(() => [rowScans(8, false), rowScans(16, false), rowScans(8, true), rowScans(16, true), tileQuiet(), ...[false, true].flatMap((quiet) => [tileKernel(true, quiet), tileKernel(false, quiet)])]);

/** Whether this thread can run the SIMD kernels. */
export function simdAvailable(): boolean {
  return kernels.available();
}

/** Whether bits `x` pass the quiet test (a zero, or at least 2^-103 in magnitude). */
const quietBits = (x: number) => (x & 0x7fffffff) === 0 || (x & 0x7f800000) >= quietExponentBits;

/**
 * The canonical inclusive sums of the first `count & ~3` of `count` packed rows of `size` (8 or 16)
 * f32 values from `base` (`bits`: their bits, in `slab` where they lie in one), each from the
 * initial value with bits `carryBits` (flushed; -0's for none), written as bits to `out` from `at`;
 * returns how many rows it did (the caller scans the rest). Only where {@link simdAvailable}.
 */
export function simdRowScansF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, count: number, size: 8 | 16, carryBits: number, out: Int32Array, at: number): number {
  const rowsPerCall = wasmScratchBytes / 4 / size;
  const total = count & ~3;
  // The quiet twin only where the initial value passes the test too.
  const quietCarry = quietBits(carryBits);
  for (let done = 0; done < total; ) {
    const rows = Math.min(rowsPerCall, total - done);
    const n = rows * size;
    const k = kernels.place(bits, slab, base + done * size, n, n);
    const items = kernels.itemsAt;
    if (!quietCarry || (size === 8 ? k.rowScans8Quiet : k.rowScans16Quiet)(items, k.scratch, rows, carryBits) === 0) {
      (size === 8 ? k.rowScans8 : k.rowScans16)(items, k.scratch, rows, carryBits);
    }
    out.set(k.i32.subarray(k.scratch >> 2, (k.scratch >> 2) + n), at + done * size);
    done += rows;
  }
  return total;
}

/**
 * One full tile (tileItems items from `base` of `bits`, in `slab` where they lie in one) scanned from
 * the carry with bits `carryBits` (flushed; -0's bits for none) and written as bits to `out` from
 * `at`, as kernels.ts `scanTileF32` writes it; returns the bits of the tile's total. Only where
 * {@link simdAvailable}.
 */
export function simdTileScanF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, carryBits: number, out: Int32Array, at: number): number {
  const k = kernels.place(bits, slab, base, tileItems, tileItems);
  const items = kernels.itemsAt;
  const total = quietBits(carryBits) && k.tileQuiet(items) === 1 ? k.tileScanQuiet(items, k.scratch, carryBits) : k.tileScan(items, k.scratch, carryBits);
  out.set(k.i32.subarray(k.scratch >> 2, (k.scratch >> 2) + tileItems), at);
  return total;
}

/** The bits of the canonical total of one full tile (tileItems items from `base`), as kernels.ts `tileTotalF32` gives it. Only where {@link simdAvailable}. */
export function simdTileTotalF32(bits: Int32Array, slab: SlabMemory | undefined, base: number): number {
  const k = kernels.place(bits, slab, base, tileItems, tileItems);
  const items = kernels.itemsAt;
  return k.tileQuiet(items) === 1 ? k.tileTotalQuiet(items) : k.tileTotal(items);
}

