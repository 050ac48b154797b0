/*
 * A small WebAssembly byte emitter for the CPU emulator's SIMD kernels: one module of functions over
 * one memory, written as opcode lists in TypeScript (no toolchain, no dependency). The memory is the
 * module's own, or imported: a slab of the worker pool's device heap (memory.ts SharedDeviceHeap),
 * whose items a kernel then reads in place. Plain ArrayBuffers (no workers, browsers) are no module's
 * memory: kernels copy their items into a memory of their own (a memcpy) and read their results back.
 *
 * Only what the kernels use is here: i32/f32 scalars, v128 and the f32x4/i32x4 operations, blocks
 * and loops. Opcodes are the WebAssembly 2.0 core binary format's (SIMD: the 0xfd prefix; shared
 * memory: the threads proposal's limits flag, in every runtime that has SharedArrayBuffer).
 */

import { quietExponentBits } from './numerics.js';

/** Value types. */
export const enum WasmType {
  I32 = 0x7f,
  F32 = 0x7d,
  F64 = 0x7c,
  V128 = 0x7b,
}

/** Unsigned LEB128 of a non-negative integer. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 of an int32. */
function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const simd = (op: number) => [0xfd, ...uleb(op)];
/** A memory access's immediate: alignment (log2 bytes) and a constant offset. */
const memarg = (align: number, offset: number) => [...uleb(align), ...uleb(offset)];

/** The instructions the kernels use, each as its bytes. */
export const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  if: [0x04, 0x40],
  else: [0x05],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  return: [0x0f],
  select: [0x1b],
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  i32Load: (offset = 0) => [0x28, ...memarg(2, offset)],
  f32Load: (offset = 0) => [0x2a, ...memarg(2, offset)],
  i32Store: (offset = 0) => [0x36, ...memarg(2, offset)],
  i32Const: (n: number) => [0x41, ...sleb(n)],
  i32Eqz: [0x45],
  i32LtU: [0x49],
  i32GeU: [0x4f],
  f32Ne: [0x5c],
  i32Ctz: [0x68],
  i32Popcnt: [0x69],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32And: [0x71],
  i32Xor: [0x73],
  i32Shl: [0x74],
  i32ShrU: [0x76],
  i32ReinterpretF32: [0xbc],
  v128Load: (offset = 0) => [...simd(0x00), ...memarg(4, offset)],
  v128Store: (offset = 0) => [...simd(0x0b), ...memarg(4, offset)],
  /** A v128 constant of four int32 lanes. */
  v128ConstI32: (lanes: readonly number[]) => [...simd(0x0c), ...lanes.flatMap((x) => [x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff])],
  /** i8x16.shuffle of two v128s by byte indices (0-15 the first, 16-31 the second). */
  shuffle: (bytes: readonly number[]) => [...simd(0x0d), ...bytes],
  /** i8x16.swizzle: bytes of the first v128 picked by the second's bytes (an index past 15 gives 0). */
  swizzle: simd(0x0e),
  i32x4Splat: simd(0x11),
  f32x4Splat: simd(0x13),
  i32x4ExtractLane: (lane: number) => [...simd(0x1b), lane],
  f32x4ExtractLane: (lane: number) => [...simd(0x1f), lane],
  i32x4LtS: simd(0x39),
  i32x4LtU: simd(0x3a),
  f32x4Eq: simd(0x41),
  f32x4Ne: simd(0x42),
  f32x4Lt: simd(0x43),
  f32x4Gt: simd(0x44),
  f32x4Le: simd(0x45),
  v128And: simd(0x4e),
  v128AndNot: simd(0x4f),
  v128Or: simd(0x50),
  v128Xor: simd(0x51),
  v128Bitselect: simd(0x52),
  v128AnyTrue: simd(0x53),
  i32x4Bitmask: simd(0xa4),
  i32x4Add: simd(0xae),
  i32x4Sub: simd(0xb1),
  f32x4Abs: simd(0xe0),
  f32x4Add: simd(0xe4),
  f32x4Pmin: simd(0xea),
  f32x4Pmax: simd(0xeb),
} as const;

/**
 * The start of a loop over local `p` from its value to local `end` (unsigned): a block that is left
 * at once when `p` is not below `end`, and the loop inside it. {@link stepWhileBelow} ends the loop,
 * one more `op.end` the block.
 */
export const loopWhileBelow = (p: number, end: number) => [op.block, op.get(p), op.get(end), op.i32GeU, op.brIf(0), op.loop];

/**
 * The end of a loop that steps local `p` by `step` and goes round again while it is below local
 * `end` (unsigned): the loop's last instructions, its `end` included.
 */
export const stepWhileBelow = (p: number, step: number, end: number) => [op.get(p), op.i32Const(step), op.i32Add, op.tee(p), op.get(end), op.i32LtU, op.brIf(0), op.end];

// The canonical f32 order's sequences that reduce's and the scan's loops share: subnormals flushed
// to the zero of their sign (numerics.ts), and the test that shows no flush can change anything.

const { get, set } = op;

/** Flushes the v128 on the stack (through local `t`; `minNormal` and `magnitude` hold the splatted constants). */
export const flush = (t: number, minNormal: number, magnitude: number) => [set(t), get(t), get(t), op.f32x4Abs, get(minNormal), op.f32x4Lt, get(magnitude), op.v128And, op.v128AndNot];

/** Splats of 2^-126 and 0x7fffffff into two v128 locals. */
export const constants = (minNormal: number, magnitude: number) => [
  op.v128ConstI32(Array(4).fill(0x00800000)),
  set(minNormal),
  op.v128ConstI32(Array(4).fill(0x7fffffff)),
  set(magnitude),
];

/**
 * The quiet test of the v128 in local `v`, ORed into local `q`: q's lanes stay 0 while every item is
 * a zero or at least 2^-103 in magnitude (numerics.ts `quietExponentBits`: no flush of a sum of them can
 * change anything). Per lane, with x the magnitude's bits, x - 1 as unsigned is below 2^-103's bits
 * - 1 exactly for 0 < x < 2^-103: four operations a vector. `magnitude`, `one` and `limit` hold
 * 0x7fffffff, 1 and 2^-103's bits - 1 ({@link quietConstants}).
 */
export const quietTest = (v: number, q: number, magnitude: number, one: number, limit: number) => [
  get(q),
  get(v),
  get(magnitude),
  op.v128And,
  get(one),
  op.i32x4Sub,
  get(limit),
  op.i32x4LtU,
  op.v128Or,
  set(q),
];

/** Locals `q` (zeros), `one` and `limit` for {@link quietTest} (`magnitude` comes from {@link constants}). */
export const quietConstants = (q: number, one: number, limit: number) => [
  op.v128ConstI32([0, 0, 0, 0]),
  set(q),
  op.v128ConstI32([1, 1, 1, 1]),
  set(one),
  op.v128ConstI32(Array(4).fill(quietExponentBits - 1)),
  set(limit),
];

/** One function of a module: its export name, signature, extra locals (by type, in order) and body. */
export interface WasmFunction {
  readonly name: string;
  readonly params: readonly WasmType[];
  readonly results: readonly WasmType[];
  readonly locals: readonly WasmType[];
  readonly body: readonly (number | readonly number[])[];
}

const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];
const vector = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (text: string) => vector([...text].map((c) => [c.charCodeAt(0)]));

/**
 * A module's memory: its own of `pages` 64 KiB pages, exported as `memory`; or imported as
 * `env.memory`, shared (a device heap slab's: memory.ts SlabMemory) or not (one the caller makes).
 */
export type WasmMemoryKind = { readonly pages: number } | { readonly imported: 'shared' | 'unshared' };

/** Pages of the largest memory a module can import: 4 GiB, wasm32's whole address space. */
export const maxWasmPages = 65536;

/** The bytes of a module of `functions` (exported by name) over one memory of kind `memory`. */
export function wasmModule(memory: WasmMemoryKind, functions: readonly WasmFunction[]): Uint8Array<ArrayBuffer> {
  const types = functions.map((f) => [0x60, ...vector(f.params.map((t) => [t])), ...vector(f.results.map((t) => [t]))]);
  const bodies = functions.map((f) => {
    // Locals as runs of one type.
    const runs: number[][] = [];
    for (let i = 0; i < f.locals.length; ) {
      let j = i;
      while (j < f.locals.length && f.locals[j] === f.locals[i]) j++;
      runs.push([...uleb(j - i), f.locals[i]!]);
      i = j;
    }
    const code = [...vector(runs), ...f.body.flatMap((x) => (typeof x === 'number' ? [x] : [...x])), 0x0b];
    return [...uleb(code.length), ...code];
  });
  const exported = functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]);
  // Limits: 0x00 min; 0x03 shared, min and max (a shared memory declares its maximum).
  const memorySections =
    'pages' in memory
      ? { imports: [], memories: [section(5, vector([[0x00, ...uleb(memory.pages)]]))], exports: [[...name('memory'), 0x02, 0x00], ...exported] }
      : {
          imports: section(2, vector([[...name('env'), ...name('memory'), 0x02, ...(memory.imported === 'shared' ? [0x03, ...uleb(1), ...uleb(maxWasmPages)] : [0x00, ...uleb(1)])]])),
          memories: [],
          exports: exported,
        };
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector(types)),
    ...memorySections.imports,
    ...section(3, vector(functions.map((_, i) => uleb(i)))),
    ...memorySections.memories.flat(),
    ...section(7, vector(memorySections.exports)),
    ...section(10, vector(bodies)),
  ];
  return new Uint8Array(bytes);
}

/**
 * The compiled module `bytes`, or undefined where this runtime has no WebAssembly or no SIMD (the
 * kernels then keep their scalar loops). Compiled synchronously: the modules are small.
 */
export function compileWasm(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module | undefined {
  try {
    if (typeof WebAssembly === 'undefined' || !WebAssembly.validate(bytes)) return undefined;
    return new WebAssembly.Module(bytes);
  } catch {
    return undefined;
  }
}

/** An instance of the module `bytes` over its own memory, or undefined where {@link compileWasm} gives none. */
export function instantiateWasm(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Instance | undefined {
  const module = compileWasm(bytes);
  try {
    return module === undefined ? undefined : new WebAssembly.Instance(module, {});
  } catch {
    return undefined;
  }
}
