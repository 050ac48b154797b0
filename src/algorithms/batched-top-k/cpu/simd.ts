import { WasmType, instantiateWasm, loopWhileBelow, op, stepWhileBelow, wasmModule } from '../../../backends/cpu/wasm.js';

/*
 * Radix-select's pass-0 collect as WebAssembly SIMD (f32x4), for the CPU emulator: the positions of
 * the f32 keys that reach a sampled threshold, in index order, exactly as radix-select.ts
 * `collectF32Reaching` finds them (the scalar twin, kept for runtimes without SIMD):
 *
 * - 'max': a key reaches T when it is not below it, `!(key < t)`: f32x4.lt, its lanes' bitmask
 *   inverted, so a NaN (which compares false) reaches, and -0 and +0 are equal both ways.
 * - 'min': a key reaches T when it is not above it, `key <= t`: f32x4.le (a NaN does not reach).
 * - The positions of a vector's reaching lanes are packed to its front (i8x16.swizzle of the
 *   vector of positions by a table of 16 shuffles, one per 4-bit mask) and stored at the output's
 *   end, which then moves on by the mask's popcount: no branch per key, where the scalar loop
 *   branches on each 32-key word's set bits. The store writes all four lanes; the lanes past the
 *   popcount are overwritten by the next vector's, or lie past the count returned.
 *
 * The module has one memory page of its own; a call copies its keys in (a memcpy: device memory is
 * not the module's memory) and its positions are read back. Each thread (the calling one, each
 * worker) builds its own instance on first use. On 128x4096 k=64 (one thread, data in cache, each
 * launch timed, 2026-11-28) the pass-0 launch (the collect and its digit-0 count) took 0.35-0.37 ms
 * against 0.67-0.83 with the scalar loop.
 */

/** Keys one call takes at most (a default radix tile; longer ranges take several calls). */
const chunkKeys = 4096;
/** Byte offsets in the module's memory: keys in, positions out (a vector of slack), the shuffle table. */
const itemsAt = 0;
const outAt = itemsAt + chunkKeys * 4;
const tableAt = outAt + chunkKeys * 4 + 16;
/** Vectors one trip of the loop takes (keys past a multiple of 4 * unroll are the caller's). */
const unroll = 4;
/** Keys a call's loop covers: whole trips. */
export const simdCollectStep = 4 * unroll;

const { get, set } = op;

/**
 * collectMax / collectMin(bytes, t, base) -> i32: the positions (base + j) of the keys j < bytes / 4
 * from `itemsAt` that reach `t`, stored as i32 from `outAt`; returns how many. `bytes` is a multiple
 * of 16 * unroll.
 */
function collect(min: boolean) {
  const [bytes, t, base, p, at, r, threshold, positions, four] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const vector = (k: number) => [
    get(p),
    op.v128Load(itemsAt + 16 * k),
    get(threshold),
    min ? op.f32x4Le : op.f32x4Lt,
    op.i32x4Bitmask,
    ...(min ? [] : [op.i32Const(15), op.i32Xor]),
    set(r),
    get(at),
    get(positions),
    get(r),
    op.i32Const(4),
    op.i32Shl,
    op.v128Load(tableAt),
    op.swizzle,
    op.v128Store(outAt),
    get(at),
    get(r),
    op.i32Popcnt,
    op.i32Const(2),
    op.i32Shl,
    op.i32Add,
    set(at),
    get(positions),
    get(four),
    op.i32x4Add,
    set(positions),
  ];
  const body = [
    get(t),
    op.f32x4Splat,
    set(threshold),
    get(base),
    op.i32x4Splat,
    op.v128ConstI32([0, 1, 2, 3]),
    op.i32x4Add,
    set(positions),
    op.v128ConstI32([4, 4, 4, 4]),
    set(four),
    op.i32Const(0),
    set(p),
    op.i32Const(0),
    set(at),
    ...loopWhileBelow(p, bytes),
    ...Array.from({ length: unroll }, (_, k) => vector(k)).flat(),
    ...stepWhileBelow(p, 16 * unroll, bytes),
    op.end,
    get(at),
    op.i32Const(2),
    op.i32ShrU,
  ];
  return {
    name: min ? 'collectMin' : 'collectMax',
    params: [WasmType.I32, WasmType.F32, WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.V128, WasmType.V128, WasmType.V128],
    body,
  };
}

interface Kernels {
  readonly collectMax: (bytes: number, t: number, base: number) => number;
  readonly collectMin: (bytes: number, t: number, base: number) => number;
  readonly i32: Int32Array;
}

/** This thread's instance: undefined until first use, null where WebAssembly SIMD is missing. */
let kernels: Kernels | null | undefined;

function instance(): Kernels | null {
  if (kernels !== undefined) return kernels;
  const made = instantiateWasm(wasmModule({ pages: 1 }, [collect(false), collect(true)]));
  if (made === undefined) return (kernels = null);
  const exports = made.exports as unknown as Omit<Kernels, 'i32'> & { memory: WebAssembly.Memory };
  const i32 = new Int32Array(exports.memory.buffer);
  // The shuffle of mask m: the bytes of its set lanes, lowest first; the rest 0x80 (a zero byte).
  const table = new Uint8Array(exports.memory.buffer, tableAt, 256);
  for (let m = 0; m < 16; m++) {
    let to = 0;
    for (let lane = 0; lane < 4; lane++) if ((m >>> lane) & 1) for (let b = 0; b < 4; b++) table[m * 16 + to++] = lane * 4 + b;
    while (to < 16) table[m * 16 + to++] = 0x80;
  }
  kernels = { collectMax: exports.collectMax, collectMin: exports.collectMin, i32 };
  return kernels;
}

/** Whether this thread can run the SIMD collect. */
export function simdAvailable(): boolean {
  return instance() !== null;
}

/**
 * The positions p - start of the f32 keys `bits[p]`, from <= p < from + n (n a multiple of
 * {@link simdCollectStep}), that reach a threshold of value `t` (not NaN; 'max' unless `min`),
 * appended to dst[out...] in index order; returns how many. Only where {@link simdAvailable}.
 */
export function simdCollectReaching(bits: Int32Array, from: number, n: number, start: number, t: number, min: boolean, dst: Int32Array, out: number): number {
  const k = kernels!;
  const run = min ? k.collectMin : k.collectMax;
  let at = out;
  for (let done = 0; done < n; done += chunkKeys) {
    const keys = Math.min(chunkKeys, n - done);
    const first = from + done;
    k.i32.set(bits.subarray(first, first + keys), itemsAt >> 2);
    const count = run(keys * 4, t, first - start);
    dst.set(k.i32.subarray(outAt >> 2, (outAt >> 2) + count), at);
    at += count;
  }
  return at - out;
}
