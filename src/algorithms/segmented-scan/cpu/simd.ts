import { type SlabMemory, wasmScratchBytes } from '../../../backends/cpu/memory.js';
import { quietExponentBits } from '../../../backends/cpu/numerics.js';
import { WasmType, constants, flush, op, quietConstants, quietTest } from '../../../backends/cpu/wasm.js';
import { type WasmKernelMemory, WasmKernelSet } from '../../../backends/cpu/wasm-kernels.js';
import { laneItems } from '../order.js';

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
        // The output: carry + prefix, flushed, NaN as the canonical NaN.
        get(nan),
        get(e),
        get(prefix),
        op.f32x4Add,
        ...fl,
        set(t),
        get(t),
        get(t),
        get(t),
        op.f32x4Ne,
        op.v128Bitselect,
        set(outs[i]!),
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
    op.v128ConstI32(Array(4).fill(0x7fc00000)),
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

interface Kernels extends WasmKernelMemory {
  readonly rowScans8: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans16: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans8Quiet: (items: number, scratch: number, count: number, carry: number) => number;
  readonly rowScans16Quiet: (items: number, scratch: number, count: number, carry: number) => number;
}

// 9.5 KB (each row's blocks written out): Chrome before 114 refused synchronous compiles over 4 KB on
// its main thread, where this then keeps the scalar loop.
const kernels = new WasmKernelSet<Kernels>(() => [rowScans(8, false), rowScans(16, false), rowScans(8, true), rowScans(16, true)]);

/** Whether this thread can run the SIMD kernels. */
export function simdAvailable(): boolean {
  return kernels.available();
}

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
  const quietCarry = (carryBits & 0x7fffffff) === 0 || (carryBits & 0x7f800000) >= quietExponentBits;
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
