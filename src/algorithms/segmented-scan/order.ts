/*
 * What a segmented scan computes, bit for bit, on every backend and in every variant: the operators,
 * their identities, and the one association order of f32 sums.
 *
 * Operators. `sum` adds (integers wrap modulo 2^32, f32 sums follow the canonical order below);
 * `min` and `max` keep the extreme value by the ordered key (backends/cpu/numerics.ts: NaN above
 * +Infinity, -0 equal to +0) and, on a tie, the earlier element's bits. min, max and integer sums are
 * associative, so every order gives the same bits; only f32 sums need a fixed order.
 *
 * Outputs. The inclusive scan's output j combines the initial value (when given) and items 0..j, the
 * initial value first. The exclusive scan's output 0 is the initial value as given (its bits), or the
 * operator's identity; its output j > 0 is the inclusive scan's output j - 1, bit for bit.
 *
 * The canonical order of an f32 sum (`'run-to-run'`). It depends on the segment's items and the
 * initial value only: not on the variant, the workgroup size, the device or the number of threads.
 * Every input is flushed (a subnormal becomes the zero of its sign), every addition is correctly
 * rounded and then flushed, and a NaN output is written as 0x7fc00000 (cpu/numerics.ts says why).
 * `a ⊕ b` is that addition, and a term that does not exist is left out (which is the same as adding
 * -0, the exact identity).
 *
 * - A segment's items form tiles of {@link tileItems} = 2048 items: tile t holds items
 *   [2048 t, 2048 t + 2048). A tile holds 16 groups of 16 lanes of {@link laneItems} = 8 items.
 * - Within lane l of a tile: the lane prefix p_k = (..(y_0 ⊕ y_1) ⊕ ..) ⊕ y_k, left to right; the lane
 *   total L_l is the prefix at the lane's last item.
 * - Within group g: q_m = (..(L_16g ⊕ L_16g+1) ⊕ ..) ⊕ L_16g+m-1, the lanes before lane m of the group,
 *   left to right (none for m = 0); the group total G_g is the sum of its 16 lanes, left to right.
 * - Within the tile: R_g = (..(G_0 ⊕ G_1) ⊕ ..) ⊕ G_g-1, left to right (none for g = 0); the tile total
 *   T_t is the sum of its 16 groups, left to right.
 * - The carry into tile t, C_t: C_0 is the initial value (none without one); for t > 0, C_t is output
 *   t - 1 of the inclusive scan, in this same order, of the tile totals T_0, T_1, ... with the same
 *   initial value (a scan of the tile totals by the same rules, and so on: three levels cover 2^32
 *   items).
 * - Output: item k of lane l = 16 g + m of tile t is C_t ⊕ (R_g ⊕ q_m), then ⊕ p_k:
 *   `inclusive = (C_t ⊕ (R_g ⊕ q_m)) ⊕ p_k`.
 *
 * So a lane adds its own items first and the carry into it once per item, which keeps the carry's
 * rounding from accumulating along the lane; a GPU workgroup holds a tile (one lane per invocation;
 * each invocation adds the lanes before it in its group, and the groups before its group, left to
 * right itself: the prefixes of the same chains), and a CPU thread runs the same order in one pass
 * (`'thread'`, `'workgroup'`) with the carries of the upper levels advanced once per tile. How many
 * tiles a workgroup takes, and whether the tile totals are scanned by one workgroup, by three
 * launches, or taken apart into p_k, R_g ⊕ q_m and the carry into their tile for every tile to add
 * up its own carry (problem.ts `SpineForm`), changes no addition.
 */

/** Items a lane adds up on its own before the carry is added (one invocation's items on a GPU). */
export const laneItems = 8;
/** Lanes in a group (the lanes one invocation adds up in the group phase). */
export const groupLanes = 16;
/** Groups in a tile (added up by one invocation). */
export const tileGroups = 16;
/** Lanes in a tile. */
export const tileLanes = groupLanes * tileGroups;
/** Items in a tile: 2048. */
export const tileItems = laneItems * tileLanes;

/** The operators of a scan. */
export type ScanOp = 'sum' | 'min' | 'max';
/** The operators, in the order of their codes in the kernels (0 sum, 1 min, 2 max). */
export const scanOps: readonly ScanOp[] = ['sum', 'min', 'max'];
/** Inclusive or exclusive. */
export type ScanMode = 'inclusive' | 'exclusive';
/** The modes, in the order of their codes in the kernels (0 inclusive, 1 exclusive). */
export const scanModes: readonly ScanMode[] = ['inclusive', 'exclusive'];
/** Value types a scan accepts. */
export type ScanValueType = 'f32' | 'i32' | 'u32';

/** Operator codes of the kernels. */
export const OpCode = { sum: 0, min: 1, max: 2 } as const;

/** The identity's bits: an exclusive scan's first output when there is no initial value. */
export function identityBits(op: ScanOp, valueType: ScanValueType): number {
  if (op === 'sum') return 0;
  if (valueType === 'f32') return op === 'min' ? 0x7f800000 : 0xff800000; // +Infinity / -Infinity
  if (valueType === 'i32') return op === 'min' ? 0x7fffffff : 0x80000000;
  return op === 'min' ? 0xffffffff : 0;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** The bits of a host initial value in the scan's value type (integers wrap into 32 bits). */
export function valueBits(value: number, valueType: ScanValueType): number {
  if (valueType !== 'f32') return value >>> 0;
  f32Scratch[0] = value;
  return u32Scratch[0]!;
}
