/*
 * Key and value words as the sort's CPU kernels compute them (the WGSL twins' `orderedBits` and
 * `indexValue`, backends/webgpu/numerics.ts).
 */

const f32Scratch = new Float32Array(1);
const f32ScratchBits = new Uint32Array(f32Scratch.buffer);

/** The ordered key (top-k's, batched-top-k/keys.ts) of a key's bits, by key kind: NaN above +Infinity, -0 equal to +0. */
export function orderedBits(bits: number, keyKind: number): number {
  if (keyKind === 2) return bits >>> 0;
  if (keyKind === 1) return (bits ^ 0x80000000) >>> 0;
  if ((bits & 0x7fffffff) > 0x7f800000) return 0xffffffff;
  if (bits >>> 0 === 0x80000000) return 0x80000000;
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

/**
 * `orderedBits(bits, 0) | 0`, as an int32: for item loops, where it stays a machine word. The same
 * key as backends/cpu/numerics.ts `f32Signed(bits) ^ 0x80000000`, kept apart because the radix
 * loops ran ~20% slower through that one (bench/sort-cpu.ts --workers=0, 2026-11-28 17:19 UTC, two
 * alternating rounds: 1x1048576 41.7-46.0 against 58.6-58.7 ms, 256x4096 42.5-46.6 against 52.1-59.0).
 */
export function orderedF32(bits: number): number {
  const b = bits | 0;
  if ((b & 0x7fffffff) > 0x7f800000) return -1;
  if (b === -0x80000000) return b;
  return b ^ ((b >> 31) | -0x80000000);
}

/** A segment-local index as the values output holds it. */
export function indexValue(index: number, asF32: boolean): number {
  if (!asF32) return index;
  f32Scratch[0] = index;
  return f32ScratchBits[0]!;
}
