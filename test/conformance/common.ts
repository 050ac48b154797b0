/**
 * What every algorithm's conformance cases share: raw bits of typed arrays and f32 numbers, the
 * prefill that shows what a call wrote, segment starts, and untyped access to `p` for building
 * parameters from runtime case data.
 */
import { type Backend, p } from '../../src/index.js';

/** A typed array's 32-bit words (as stored, so NaN payloads and -0 compare exactly). */
export const bits = (a: Float32Array | Int32Array | Uint32Array | Uint8Array) => new Uint32Array(a.buffer, a.byteOffset, a.byteLength >>> 2);

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);
/** The bits of `x` rounded to f32. */
export const bitsOf = (x: number): number => {
  f32[0] = x;
  return f32Bits[0]!;
};

/** The f32 with these bits. */
export const f32Of = (bits: number): number => {
  f32Bits[0] = bits;
  return f32[0]!;
};

/** Bits that prefill outputs, to see what a call wrote. */
export const untouchedBits = 0x5eed5eed;

/** Words as an array of `dtype`, on a copy of their buffer. */
export const typedFromBits = (dtype: 'f32' | 'i32' | 'u32', words: Uint32Array) =>
  dtype === 'f32' ? new Float32Array(words.buffer.slice(0)) : dtype === 'i32' ? new Int32Array(words.buffer.slice(0)) : new Uint32Array(words.buffer.slice(0));

/** Segment starts of a case: `i * stride`, or packed when it has no stride. */
export function starts(c: { readonly sizes: readonly number[]; readonly stride?: number | undefined }): number[] {
  const out: number[] = [];
  let offset = 0;
  for (let i = 0; i < c.sizes.length; i++) {
    out.push(c.stride !== undefined ? i * c.stride : offset);
    offset += c.sizes[i]!;
  }
  return out;
}

/** Untyped access to `p`, for building parameters from runtime case data. */
export const P = p as unknown as Record<string, (...args: unknown[]) => never>;

/** Runs `plan` once with temporary storage of its size, allocated for this run and freed after it. */
export async function runWithOwnTemp(backend: Backend, plan: { readonly tempStorageBytes: number; run(temp?: ReturnType<Backend['alloc']>): Promise<void> }): Promise<void> {
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  try {
    await plan.run(temp);
  } finally {
    temp?.destroy();
  }
}
