import { type SlabMemory, wasmScratchBytes } from '../../../backends/cpu/memory.js';
import { WasmType, loopWhileBelow, op } from '../../../backends/cpu/wasm.js';
import { type WasmKernelMemory, WasmKernelSet } from '../../../backends/cpu/wasm-kernels.js';

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
 * Keys are read in place where they lie in a heap slab, else copied in (wasm-kernels.ts). The table
 * and the positions go to the calling thread's scratch region, which other kernel modules write too
 * between two calls: each call writes the table there first (16 stores), and stops early where the
 * next trip's positions might not fit (more than ~1950 keys of a call reaching), saying how far it
 * got. On 128x4096 k=64 (one thread, data in cache, each launch timed, 2026-11-28) the pass-0 launch
 * (the collect and its digit-0 count) took 0.35-0.37 ms against 0.67-0.83 with the scalar loop,
 * keys copied in. The loop alone over those 512K keys (tiles of 4096, one thread, in cache, medians
 * of 41): 0.143-0.147 ms read in place in a slab, against 0.206-0.207 copied from the slab (a
 * SharedArrayBuffer, which V8 copies word by word) and 0.171-0.173 from an ArrayBuffer.
 */

/** Keys one call takes at most (a default radix tile; longer ranges take several calls): 16 KiB of the own memory's items. */
const chunkKeys = 4096;
/** Byte offsets in a scratch region: the shuffle table, the keys a call covered, the positions (up to the region's end). */
const tableAt = 0;
const coveredAt = tableAt + 256;
const outAt = coveredAt + 16;
/** Vectors one trip of the loop takes (keys past a multiple of 4 * unroll are the caller's). */
const unroll = 4;
/** Keys a call's loop covers: whole trips. */
export const simdCollectStep = 4 * unroll;

/** The shuffle of mask m, as four int32 lanes: the bytes of its set lanes, lowest first; the rest 0x80 (a zero byte). */
const shuffleOf = (m: number) => {
  const bytes: number[] = [];
  for (let lane = 0; lane < 4; lane++) if ((m >>> lane) & 1) bytes.push(lane * 4, lane * 4 + 1, lane * 4 + 2, lane * 4 + 3);
  while (bytes.length < 16) bytes.push(0x80);
  return [0, 1, 2, 3].map((w) => bytes[4 * w]! | (bytes[4 * w + 1]! << 8) | (bytes[4 * w + 2]! << 16) | (bytes[4 * w + 3]! << 24));
};

const { get, set } = op;

/**
 * collectMax / collectMin(items, scratch, bytes, t, base) -> i32: the positions (base + j) of the
 * keys j < bytes / 4 from `items` that reach `t`, stored as i32 from `scratch` + `outAt`; returns how
 * many, and stores at `scratch` + `coveredAt` how many keys it covered: all, or fewer (whole trips)
 * where another trip's positions (a trip stores up to 16 * unroll bytes from the output's end) could
 * pass the region's end. `bytes` is a multiple of 16 * unroll. Over the own memory (not `shared`)
 * the scratch region is at 0 and the table's address a constant: adding `scratch` to each vector's
 * table address made the loop over copied keys 7% slower (0.167 -> 0.178 ms per 512K keys in
 * tiles of 4096, one thread, 2026-11-28).
 */
function collect(min: boolean, shared: boolean) {
  const [items, scratch, bytes, t, base, p, end, at, r, limit, threshold, positions, four] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const vector = (k: number) => [
    get(p),
    op.v128Load(16 * k),
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
    ...(shared ? [get(scratch), op.i32Add] : []),
    op.v128Load(tableAt),
    op.swizzle,
    op.v128Store(0),
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
    ...Array.from({ length: 16 }, (_, m) => [get(scratch), op.v128ConstI32(shuffleOf(m)), op.v128Store(tableAt + 16 * m)]).flat(),
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
    get(items),
    set(p),
    get(items),
    get(bytes),
    op.i32Add,
    set(end),
    get(scratch),
    op.i32Const(outAt),
    op.i32Add,
    set(at),
    // The last output end from which a trip's stores stay in the region, plus one.
    get(scratch),
    op.i32Const(wasmScratchBytes - 16 * unroll + 1),
    op.i32Add,
    set(limit),
    ...loopWhileBelow(p, end),
    ...Array.from({ length: unroll }, (_, k) => vector(k)).flat(),
    // Round again while keys are left and another trip's positions fit.
    get(p),
    op.i32Const(16 * unroll),
    op.i32Add,
    op.tee(p),
    get(end),
    op.i32LtU,
    get(at),
    get(limit),
    op.i32LtU,
    op.i32And,
    op.brIf(0),
    op.end,
    op.end,
    get(scratch),
    get(p),
    get(items),
    op.i32Sub,
    op.i32Const(2),
    op.i32ShrU,
    op.i32Store(coveredAt),
    get(at),
    get(scratch),
    op.i32Sub,
    op.i32Const(outAt),
    op.i32Sub,
    op.i32Const(2),
    op.i32ShrU,
  ];
  return {
    name: min ? 'collectMin' : 'collectMax',
    params: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.F32, WasmType.I32],
    results: [WasmType.I32],
    locals: [WasmType.I32, WasmType.I32, WasmType.I32, WasmType.I32, WasmType.I32, WasmType.V128, WasmType.V128, WasmType.V128],
    body,
  };
}

interface Kernels extends WasmKernelMemory {
  readonly collectMax: (items: number, scratch: number, bytes: number, t: number, base: number) => number;
  readonly collectMin: (items: number, scratch: number, bytes: number, t: number, base: number) => number;
}

const kernels = new WasmKernelSet<Kernels>((memory) => [collect(false, memory === 'shared'), collect(true, memory === 'shared')]);

/** Whether this thread can run the SIMD collect. */
export function simdAvailable(): boolean {
  return kernels.available();
}

/**
 * The positions p - start of the f32 keys `bits[p]` (in `slab` where they lie in one), from <= p <
 * from + n (n a multiple of {@link simdCollectStep}), that reach a threshold of value `t` (not NaN;
 * 'max' unless `min`), appended to dst[out...] in index order; returns how many. Only where
 * {@link simdAvailable}.
 */
export function simdCollectReaching(bits: Int32Array, slab: SlabMemory | undefined, from: number, n: number, start: number, t: number, min: boolean, dst: Int32Array, out: number): number {
  let at = out;
  for (let done = 0; done < n; ) {
    const keys = Math.min(chunkKeys, n - done);
    const first = from + done;
    const k = kernels.place(bits, slab, first, keys, keys);
    const count = (min ? k.collectMin : k.collectMax)(kernels.itemsAt, k.scratch, keys * 4, t, first - start);
    const positions = (k.scratch + outAt) >> 2;
    dst.set(k.i32.subarray(positions, positions + count), at);
    at += count;
    done += k.i32[(k.scratch + coveredAt) >> 2]!;
  }
  return at - out;
}
