import type { SlabMemory } from '../../../backends/cpu/memory.js';
import { WasmType, constants, flush, loopWhileBelow, op, quietConstants, quietTest, stepWhileBelow } from '../../../backends/cpu/wasm.js';
import { type WasmKernelMemory, WasmKernelSet, ownItemsAt } from '../../../backends/cpu/wasm-kernels.js';
import { sumOrder } from '../ops.js';

/*
 * The reduce kernels' inner loops as WebAssembly SIMD (f32x4), for the CPU emulator: a chunk's
 * canonical f32 total, the extreme of a run of f32 values, and the totals and extremes of packed rows
 * of 8 or 16 items (MoE). Each computes exactly what its scalar twin in kernels.ts computes, bit for
 * bit:
 *
 * - f32x4.add is IEEE binary32 addition, correctly rounded, with subnormals kept (WebAssembly has no
 *   flush-to-zero mode), as `Math.fround(a + b)` is. Every input is flushed as it is read and every
 *   sum as it is made, by a compare and a mask per vector: `x & ~(|x| < 2^-126 ? 0x7fffffff : 0)`
 *   (the zero of x's sign; a NaN compares false and stays). As in the scalar loops, items that are
 *   all zeros or at least 2^-103 in magnitude ({@link quietTest}) take a twin loop without the
 *   flushes, which cannot change anything then.
 * - A chunk's 256 lanes are 64 vectors: four of them (16 lanes) go down the chunk's rows at a time,
 *   so the four additions of a row are independent; a lane sums its items top to bottom from -0 (the
 *   exact identity). The items are padded with -0 to whole rows, which adds nothing. The tree over
 *   the lanes runs on vectors down to four lanes, then on two and one.
 * - The extreme: its value first (pmax/pmin over two vectors), then the first item equal to it
 *   (float equality: -0 equals +0, as their ordered keys do). Float compares order the ordered keys
 *   of every value but NaN, so a NaN anywhere is reported and the caller takes the scalar loop
 *   (rare: NaN ranks above +Infinity). Padding is the opposite infinity: equal to the extreme only
 *   when a real item before it is too. A one-pass loop keeping the first best per lane (a compare and
 *   two selects a vector) took 0.70-0.74 ns an item against 0.62-0.63 for both passes, copy included.
 * - Rows of 8 or 16: the tree over 16 lanes on two or four vectors (items j and j + 8 first), and for
 *   extremes a tournament (rowExtremes).
 *
 * Every function takes the byte address of its items and, where it writes beside them (lanes,
 * results), of the calling thread's scratch region. Items in a slab of the worker pool's device heap (memory.ts SlabMemory) are read
 * in place, through an instance over the slab's memory (one per thread and slab, with the thread's
 * scratch region in the slab), wherever they need no padding: packed rows always, a chunk of whole
 * rows of lanes, an extreme over a multiple of 8 items. Other items (plain ArrayBuffers: no workers,
 * browsers; a padded tail) are copied into a memory of the thread's own (a memcpy), padded there.
 * Results are read back from the scratch region. Each thread builds its instances on first use.
 */

const lanes = sumOrder.lanes;
const chunkItems = sumOrder.chunkItems;

/** Rows one call of the row kernels takes: as many as a copy fills the own memory's items with (rows of 16). */
const rowsPerCall = chunkItems / 16;
/**
 * Byte offsets in a scratch region: a chunk's 256 lanes, rows' results out, and the rows' extremes'
 * bits (rowExtremes) after their indices, one word per row: 5 KiB of memory.ts wasmScratchBytes.
 */
const lanesAt = 0;
const outAt = lanesAt + lanes * 4;
const bitsOutAt = outAt + rowsPerCall * 4;

const { get, set } = op;

/** p = the address the `at` instructions leave; end = p past `rows` rows of a chunk's 256 lanes (1 KiB each). */
const downRows = (at: readonly (readonly number[])[], p: number, rows: number, end: number) => [...at, op.tee(p), get(rows), op.i32Const(10), op.i32Shl, op.i32Add, set(end)];

/** Bytes of i8x16.shuffle that bring lanes [from, from + 1, ...] to lanes [0, 1, ...]. */
const lanesFrom = (from: number) => Array.from({ length: 16 }, (_, b) => (from * 4 + b) & 15);

/** The f32 on the stack stored as bits at `outAt` + local `o` (through local `f`), NaN as the canonical NaN. */
const storeCanonical = (o: number, f: number) => [set(f), get(o), op.i32Const(0x7fc00000), get(f), op.i32ReinterpretF32, get(f), get(f), op.f32Ne, op.select, op.i32Store(outAt)];

/**
 * The start of a loop over `count` rows: the first row (p) at local `items`, its output word (o) at
 * local `scratch`, the last output's end (end).
 */
const firstRow = (items: number, scratch: number, p: number, o: number, end: number, count: number) => [
  get(items),
  set(p),
  get(scratch),
  op.tee(o),
  get(count),
  op.i32Const(2),
  op.i32Shl,
  op.i32Add,
  set(end),
  op.loop,
];

/** The end of a loop over rows of `size` items: the next row (p) and its output word (o), again while o < end. */
const nextRow = (p: number, o: number, end: number, size: number) => [
  get(p),
  op.i32Const(size * 4),
  op.i32Add,
  set(p),
  ...stepWhileBelow(o, 4, end),
];

/**
 * Sums the two lowest lanes' pairs down to lane 0 (the tree's last two levels) of the v128 in local
 * `v`, flushing each sum with `fl` (empty for quiet values).
 */
const lastLevels = (v: number, fl: readonly (readonly number[])[]) => [
  get(v),
  get(v),
  get(v),
  op.shuffle(lanesFrom(2)),
  op.f32x4Add,
  ...fl,
  set(v),
  get(v),
  get(v),
  get(v),
  op.shuffle(lanesFrom(1)),
  op.f32x4Add,
  ...fl,
  op.f32x4ExtractLane(0),
];

/**
 * chunkTotal(items, scratch, rows) -> f32: the canonical total of `rows` full rows of 256 lanes from
 * `items`; chunkTotalQuiet the same without the flushes, after {@link quietTest} of the items: it
 * leaves 1 at `outAt` when they passed, and its total is then the canonical one.
 *
 * The test is a pass of its own, down the items in order: the lanes' loop takes one 64-byte line of
 * each 1 KiB row at a time, which the hardware does not fetch ahead from memory. Read in place (a
 * 16M-item sum, a worker, the 2-core AMD EPYC), the test fused into the lanes' loop took 14-15 ms,
 * the pass in order 5.5-5.7 (copying the chunks first: 9.7-10.6; without workers 7.6-8.0 both ways).
 */
function chunkTotal(quiet: boolean) {
  const [items, scratch, rows, g, p, end, a0, a1, a2, a3, minNormal, magnitude, t, h, j, q, one, limit, e] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18];
  const rowBytes = lanes * 4;
  const accumulators = [a0, a1, a2, a3];
  const fl = quiet ? [] : flush(t, minNormal, magnitude);
  const body = [
    ...constants(minNormal, magnitude),
    ...(quiet
      ? [
          ...quietConstants(q, one, limit),
          // The quiet test, in a pass of its own down the items in order.
          ...downRows([get(items)], p, rows, end),
          op.loop,
          ...[0, 1, 2, 3].flatMap((k) => [get(p), op.v128Load(16 * k), set(t), ...quietTest(t, q, magnitude, one, limit)]),
          ...stepWhileBelow(p, 64, end),
        ]
      : []),
    op.i32Const(0),
    set(g),
    // Lanes g/4 .. g/4 + 15 down the rows.
    op.loop,
    ...accumulators.flatMap((a) => [op.v128ConstI32([0x80000000, 0x80000000, 0x80000000, 0x80000000]), set(a)]),
    ...downRows([get(items), get(g), op.i32Add], p, rows, end),
    op.loop,
    ...accumulators.flatMap((a, k) =>
      [get(a), get(p), op.v128Load(16 * k), ...fl, op.f32x4Add, ...fl, set(a)],
    ),
    ...stepWhileBelow(p, rowBytes, end),
    ...accumulators.flatMap((a, k) => [get(scratch), get(g), op.i32Add, get(a), op.v128Store(lanesAt + 16 * k)]),
    get(g),
    op.i32Const(64),
    op.i32Add,
    op.tee(g),
    op.i32Const(rowBytes),
    op.i32LtU,
    op.brIf(0),
    op.end,
    // The tree over the lanes: halves of 128 lanes (512 bytes) down to 4, a vector at a time.
    op.i32Const(rowBytes / 2),
    set(h),
    op.loop,
    get(scratch),
    op.tee(j),
    get(h),
    op.i32Add,
    set(e),
    op.loop,
    get(j),
    get(j),
    op.v128Load(lanesAt),
    get(j),
    get(h),
    op.i32Add,
    op.v128Load(lanesAt),
    op.f32x4Add,
    ...fl,
    op.v128Store(lanesAt),
    ...stepWhileBelow(j, 16, e),
    get(h),
    op.i32Const(1),
    op.i32ShrU,
    op.tee(h),
    op.i32Const(16),
    op.i32GeU,
    op.brIf(0),
    op.end,
    ...(quiet ? [get(scratch), get(q), op.v128AnyTrue, op.i32Eqz, op.i32Store(outAt)] : []),
    get(scratch),
    op.v128Load(lanesAt),
    set(a0),
    ...lastLevels(a0, fl),
  ];
  return {
    name: quiet ? 'chunkTotalQuiet' : 'chunkTotal',
    params: [WasmType.I32, WasmType.I32, WasmType.I32],
    results: [WasmType.F32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, ...Array(7).fill(WasmType.V128), WasmType.I32, WasmType.I32, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.I32],
    body,
  };
}

/**
 * extremeMax / extremeMin(items, bytes) -> i32: where the largest (smallest) of `bytes` (a multiple of
 * 32) bytes of f32 items from `items` is, the first of equal ones, as an item index; -1 when an item
 * is NaN. Two passes: the extreme value (f32x4.pmax/pmin: one instruction each, NaN aside, which a
 * compare catches), then the first item equal to it (-0 equals +0), from the start; the items are in
 * cache by then.
 */
function extremeFirst(min: boolean) {
  const [items, bytes, p, a, b, nan, v, mask, end] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const pick = min ? op.f32x4Pmin : op.f32x4Pmax;
  const take = (acc: number, offset: number) => [get(p), op.v128Load(offset), set(v), get(acc), get(v), pick, set(acc), get(nan), get(v), get(v), op.f32x4Ne, op.v128Or, set(nan)];
  const fold = (from: number) => [get(a), get(a), get(a), op.shuffle(lanesFrom(from)), pick, set(a)];
  const body = [
    op.v128ConstI32([0, 0, 0, 0]),
    set(nan),
    get(items),
    op.tee(p),
    get(bytes),
    op.i32Add,
    set(end),
    get(p),
    op.v128Load(0),
    set(a),
    get(p),
    op.v128Load(16),
    set(b),
    ...take(a, 0),
    ...take(b, 16),
    get(items),
    op.i32Const(32),
    op.i32Add,
    set(p),
    ...loopWhileBelow(p, end),
    ...take(a, 0),
    ...take(b, 16),
    ...stepWhileBelow(p, 32, end),
    op.end,
    get(nan),
    op.v128AnyTrue,
    op.if,
    op.i32Const(-1),
    op.return,
    op.end,
    get(a),
    get(b),
    pick,
    set(a),
    ...fold(2),
    ...fold(1),
    get(a),
    get(a),
    op.shuffle(lanesFrom(0).map((x) => x & 3)),
    set(a),
    get(items),
    set(p),
    op.loop,
    get(p),
    op.v128Load(0),
    get(a),
    op.f32x4Eq,
    op.i32x4Bitmask,
    op.tee(mask),
    op.if,
    get(p),
    get(items),
    op.i32Sub,
    op.i32Const(2),
    op.i32ShrU,
    get(mask),
    op.i32Ctz,
    op.i32Add,
    op.return,
    op.end,
    ...stepWhileBelow(p, 16, end),
    op.i32Const(-1),
  ];
  return {
    name: min ? 'extremeMin' : 'extremeMax',
    params: [WasmType.I32, WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.I32, WasmType.I32],
    body,
  };
}

/**
 * rowTotals8 / rowTotals16(items, scratch, count): the canonical totals of `count` (>= 1) packed rows
 * of 8 or 16 items from `items` (the tree over 16 lanes, items j and j + 8 first), as bits at
 * `outAt`; the Quiet twins without the flushes, with {@link quietTest} on the way: they leave 1 at
 * `lanesAt` when the items passed, and their totals are then the canonical ones.
 */
function rowTotals(size: 8 | 16, quiet: boolean) {
  const [items, scratch, count, p, o, end, minNormal, magnitude, t, a, b, f, q, one, limit] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
  const fl = quiet ? [] : flush(t, minNormal, magnitude);
  // Quiet: each vector also goes through quietTest into `q`.
  const item = (offset: number) =>
    quiet ? [get(p), op.v128Load(offset), set(t), ...quietTest(t, q, magnitude, one, limit), get(t)] : [get(p), op.v128Load(offset), ...fl];
  // Lanes 0-3 of the tree's second level (half 4): items j + items j + 4 for 8; for 16 the first
  // level's lanes j (items j and j + 8) and j + 4 (items j + 4 and j + 12).
  const level2 =
    size === 8
      ? [...item(0), ...item(16), op.f32x4Add, ...fl]
      : [
          ...item(0),
          ...item(32),
          op.f32x4Add,
          ...fl,
          set(a),
          ...item(16),
          ...item(48),
          op.f32x4Add,
          ...fl,
          set(b),
          get(a),
          get(b),
          op.f32x4Add,
          ...fl,
        ];
  const body = [
    ...constants(minNormal, magnitude),
    ...(quiet ? quietConstants(q, one, limit) : []),
    ...firstRow(items, scratch, p, o, end, count),
    ...level2,
    set(a),
    ...lastLevels(a, fl),
    ...storeCanonical(o, f),
    ...nextRow(p, o, end, size),
    ...(quiet ? [get(scratch), get(q), op.v128AnyTrue, op.i32Eqz, op.i32Store(lanesAt)] : []),
  ];
  return {
    name: `rowTotals${size}${quiet ? 'Quiet' : ''}`,
    params: [WasmType.I32, WasmType.I32, WasmType.I32],
    results: [],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.V128, WasmType.F32, WasmType.V128, WasmType.V128, WasmType.V128],
    body,
  };
}

/**
 * rowExtremes8 / rowExtremes16(items, scratch, count, flip) -> i32: where the largest of each of
 * `count` (>= 1) packed rows of 8 or 16 f32 items from `items` (XORed with `flip`) is, the first of equal ones, as i32 at
 * `outAt`, and that item's bits at `bitsOutAt`: index -1 for a row holding a NaN; returns how many
 * rows did. A tournament on vectors: item vectors pairwise (lane by lane the first vector's items
 * come first, so a strictly larger later one wins), then lanes 0-1 against 2-3 and lane 0 against 1,
 * where indices decide ties.
 */
function rowExtremes(size: 8 | 16) {
  const [items, scratch, count, flipBits, p, o, end, flip, m, i, m2, i2, g, s, si, v0, v1, v2, v3, nan, index, nans] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21];
  const vectors = size === 16 ? [v0, v1, v2, v3] : [v0, v1];
  const indexConst = (k: number) => op.v128ConstI32([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3]);
  // (ma, ia) becomes the better of itself and (mb, ib), whose indices are larger lane by lane.
  const pick = (ma: number, ia: number, mb: readonly (readonly number[])[], ib: readonly (readonly number[])[]) => [
    ...mb,
    get(ma),
    op.f32x4Gt,
    set(g),
    ...mb,
    get(ma),
    get(g),
    op.v128Bitselect,
    set(ma),
    ...ib,
    get(ia),
    get(g),
    op.v128Bitselect,
    set(ia),
  ];
  // (m, i) against its lanes from `from` on: larger wins, equal ones by the smaller index.
  const fold = (from: number) => [
    get(m),
    get(m),
    op.shuffle(lanesFrom(from)),
    set(s),
    get(i),
    get(i),
    op.shuffle(lanesFrom(from)),
    set(si),
    get(s),
    get(m),
    op.f32x4Gt,
    get(s),
    get(m),
    op.f32x4Eq,
    get(si),
    get(i),
    op.i32x4LtS,
    op.v128And,
    op.v128Or,
    set(g),
    get(s),
    get(m),
    get(g),
    op.v128Bitselect,
    set(m),
    get(si),
    get(i),
    get(g),
    op.v128Bitselect,
    set(i),
  ];
  const body = [
    get(flipBits),
    op.i32x4Splat,
    set(flip),
    ...firstRow(items, scratch, p, o, end, count),
    ...vectors.flatMap((v, k) => [get(p), op.v128Load(16 * k), get(flip), op.v128Xor, set(v)]),
    get(v0),
    set(m),
    indexConst(0),
    set(i),
    ...pick(m, i, [get(v1)], [indexConst(1)]),
    ...(size === 16
      ? [get(v2), set(m2), indexConst(2), set(i2), ...pick(m2, i2, [get(v3)], [indexConst(3)]), ...pick(m, i, [get(m2)], [get(i2)])]
      : []),
    ...fold(2),
    ...fold(1),
    // The row's index and its item's bits; index -1 (counted in `nans`) where an item is NaN.
    ...vectors.flatMap((v, k) => [get(v), get(v), op.f32x4Ne, ...(k > 0 ? [op.v128Or] : [])]),
    op.v128AnyTrue,
    set(nan),
    get(i),
    op.i32x4ExtractLane(0),
    set(index),
    get(o),
    get(p),
    get(index),
    op.i32Const(2),
    op.i32Shl,
    op.i32Add,
    op.i32Load(0),
    op.i32Store(bitsOutAt),
    get(o),
    op.i32Const(-1),
    get(index),
    get(nan),
    op.select,
    op.i32Store(outAt),
    get(nans),
    get(nan),
    op.i32Add,
    set(nans),
    ...nextRow(p, o, end, size),
    get(nans),
  ];
  return {
    name: `rowExtremes${size}`,
    params: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, ...Array(12).fill(WasmType.V128), WasmType.I32, WasmType.I32, WasmType.I32],
    body,
  };
}

interface Kernels extends WasmKernelMemory {
  readonly chunkTotal: (items: number, scratch: number, rows: number) => number;
  readonly chunkTotalQuiet: (items: number, scratch: number, rows: number) => number;
  readonly extremeMax: (items: number, bytes: number) => number;
  readonly extremeMin: (items: number, bytes: number) => number;
  readonly rowTotals8: (items: number, scratch: number, count: number) => void;
  readonly rowTotals16: (items: number, scratch: number, count: number) => void;
  readonly rowTotals8Quiet: (items: number, scratch: number, count: number) => void;
  readonly rowTotals16Quiet: (items: number, scratch: number, count: number) => void;
  readonly rowExtremes8: (items: number, scratch: number, count: number, flip: number) => number;
  readonly rowExtremes16: (items: number, scratch: number, count: number, flip: number) => number;
}

// 4.5 KB (4.4 before its functions took addresses): Chrome before 114 refused synchronous compiles
// over 4 KB on its main thread, where this then keeps the scalar loops.
const kernels = new WasmKernelSet<Kernels>(() => [
  chunkTotal(false),
  chunkTotal(true),
  extremeFirst(false),
  extremeFirst(true),
  rowTotals(8, false),
  rowTotals(16, false),
  rowTotals(8, true),
  rowTotals(16, true),
  rowExtremes(8),
  rowExtremes(16),
]);

/** Whether this thread can run the SIMD kernels. */
export function simdAvailable(): boolean {
  return kernels.available();
}

/**
 * The canonical total of one chunk of `n` (1 <= n <= chunkItems) f32 values from `base` (`bits`: the
 * values' bits, in `slab` where they lie in one), as kernels.ts `chunkTotalF32`. Only where
 * {@link simdAvailable}.
 */
export function simdChunkTotalF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, n: number): number {
  const rows = Math.ceil(n / lanes);
  const k = kernels.place(bits, slab, base, n, rows * lanes);
  const items = kernels.itemsAt;
  // Padding: -0, which adds nothing.
  if (items === ownItemsAt) k.i32.fill(-0x80000000, (items >> 2) + n, (items >> 2) + rows * lanes);
  // The flush-free loop, which tests the items as it adds them: its total stands where no flush can
  // change anything (the flag it leaves at outAt), else the flushing loop runs.
  const total = k.chunkTotalQuiet(items, k.scratch, rows);
  return k.i32[(k.scratch + outAt) >> 2] !== 0 ? total : k.chunkTotal(items, k.scratch, rows);
}

/**
 * Where the largest (`min` false) or smallest (`min` true) of the `n` (1 <= n <= chunkItems) f32
 * values from `base` is (in `slab` where they lie in one), the first of equal ones, as an offset from
 * `base`; -1 when one of them is NaN (the caller's scalar loop orders NaN). Only where
 * {@link simdAvailable}.
 */
export function simdExtremeF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, n: number, min: boolean): number {
  const padded = (n + 7) & ~7;
  const k = kernels.place(bits, slab, base, n, padded);
  const items = kernels.itemsAt;
  // The extreme's opposite infinity: never the first of its value before a real item.
  if (items === ownItemsAt) k.i32.fill(min ? 0x7f800000 : 0xff800000 | 0, (items >> 2) + n, (items >> 2) + padded);
  return (min ? k.extremeMin : k.extremeMax)(items, padded * 4);
}

/**
 * Canonical totals of `count` packed rows of `size` (8 or 16) f32 values from `base` (in `slab` where
 * they lie in one), written as bits to `out` from `at` (NaN as the canonical NaN), as kernels.ts
 * `quietTotal16`/`quietTotal8` and their flushing twin. Only where {@link simdAvailable}.
 */
export function simdRowTotalsF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, count: number, size: 8 | 16, out: Int32Array, at: number): void {
  for (let done = 0; done < count; ) {
    const rows = Math.min(rowsPerCall, count - done);
    const k = kernels.place(bits, slab, base + done * size, rows * size, rows * size);
    const { scratch } = k;
    const items = kernels.itemsAt;
    // The flush-free rows test their items as they go (the flag at lanesAt); where a flush could
    // change something, the flushing rows write over them.
    (size === 8 ? k.rowTotals8Quiet : k.rowTotals16Quiet)(items, scratch, rows);
    if (k.i32[(scratch + lanesAt) >> 2] === 0) (size === 8 ? k.rowTotals8 : k.rowTotals16)(items, scratch, rows);
    out.set(k.i32.subarray((scratch + outAt) >> 2, ((scratch + outAt) >> 2) + rows), at + done);
    done += rows;
  }
}

/**
 * The largest (`min` false) or smallest (`min` true) of each of `count` packed rows of `size` (8 or
 * 16) f32 values from `base` (in `slab` where they lie in one), the first of equal ones: row r's
 * offset from its start at `offsets[r]` and its bits at `outBits[at + r]`; offset -1 (bits
 * undefined) for a row holding a NaN, for the caller's scalar loop, which orders NaN. Returns how
 * many rows hold a NaN. Only where {@link simdAvailable}.
 */
export function simdRowExtremesF32(bits: Int32Array, slab: SlabMemory | undefined, base: number, count: number, size: 8 | 16, min: boolean, outBits: Int32Array, at: number, offsets: Int32Array): number {
  let nans = 0;
  for (let done = 0; done < count; ) {
    const rows = Math.min(rowsPerCall, count - done);
    const k = kernels.place(bits, slab, base + done * size, rows * size, rows * size);
    const { scratch } = k;
    const items = kernels.itemsAt;
    nans += (size === 8 ? k.rowExtremes8 : k.rowExtremes16)(items, scratch, rows, min ? -0x80000000 : 0);
    offsets.set(k.i32.subarray((scratch + outAt) >> 2, ((scratch + outAt) >> 2) + rows), done);
    outBits.set(k.i32.subarray((scratch + bitsOutAt) >> 2, ((scratch + bitsOutAt) >> 2) + rows), at + done);
    done += rows;
  }
  return nans;
}
