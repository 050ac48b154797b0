import { type KeyType, orderedKey } from '../batched-top-k/keys.js';

/*
 * The sort key: top-k's ordered key (batched-top-k/keys.ts), so that sort and top-k rank keys the
 * same way on every backend: NaN above +Infinity (all NaNs equal), -0 equal to +0, i32 by sign, u32
 * as is. Ascending sorts by the ordered key, descending by its complement; ties (equal sort keys)
 * keep their input order, so the sort is stable in both orders and equal keys (-0 and +0, NaNs of
 * any payload) come out in the order they came in, with their own bits.
 */

/** Sort orders. */
export type SortOrder = 'ascending' | 'descending';
/** The orders the sort supports, in the order their device indices use (0 ascending, 1 descending). */
export const sortOrders: readonly SortOrder[] = ['ascending', 'descending'];

/** The unsigned sort key of a key's bits (read as u32): smaller sorts first. */
export function sortKey(bits: number, keyType: KeyType, descending: boolean): number {
  const ordered = orderedKey(bits, keyType, 'max');
  return descending ? ~ordered >>> 0 : ordered;
}
