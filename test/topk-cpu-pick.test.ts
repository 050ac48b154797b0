import { describe, expect, it } from 'vitest';
import { bestByBuckets, sortByRank } from '../src/algorithms/batched-top-k/cpu/common.js';
import { rng } from './helpers.js';

/*
 * bestByBuckets (src/algorithms/batched-top-k/cpu/common.ts), radix-select's pick of the best
 * candidates on the CPU, against sortByRank: the same best `take` entries in the same order, over
 * spread keys, ties (equal keys to be ordered by index, candidates appended out of index order as
 * worker threads append them), clustered keys (a bucket past 32 keys: it declines) and all-equal keys
 * (it declines).
 */

/** Signed ordered keys of one style and distinct indices, in a random order or ascending. */
function entries(style: string, n: number, random: () => number, ascending: boolean): { keys: Int32Array; indices: Int32Array } {
  const keys = new Int32Array(n);
  const indices = new Int32Array(n);
  const order = Array.from({ length: n }, (_, j) => j * 3 + 1);
  if (!ascending) order.sort(() => random() - 0.5);
  for (let j = 0; j < n; j++) {
    indices[j] = order[j]!;
    const r = random();
    if (style === 'spread') keys[j] = ((r * 2 ** 24) | 0) + 0x3f000000;
    else if (style === 'ties') keys[j] = 0x3f000000 + Math.floor(r * 40) * 4096;
    else if (style === 'negative') keys[j] = (r * 2 ** 32) | 0;
    else if (style === 'clustered') keys[j] = 0x3f000000 + (r < 0.5 ? Math.floor(r * 4) : Math.floor(r * 2 ** 20));
    else keys[j] = 0x3f000000;
  }
  return { keys, indices };
}

const diffOf = (keys: Int32Array, n: number) => {
  let diff = 0;
  for (let j = 0; j < n; j++) diff |= keys[j]! ^ keys[0]!;
  return diff;
};

describe('bestByBuckets', () => {
  it('puts the best take first in rank order, as sortByRank does, or declines and changes nothing', () => {
    const random = rng(11);
    let picked = 0;
    let declined = 0;
    for (const style of ['spread', 'ties', 'negative', 'clustered', 'equal']) {
      for (const n of [1, 2, 65, 226, 1000, 8192]) {
        for (const take of [1, 8, 64, 200, n]) {
          if (take > n) continue;
          for (const ascending of [true, false]) {
            const { keys, indices } = entries(style, n, random, ascending);
            const expectedKeys = keys.slice();
            const expectedIndices = indices.slice();
            sortByRank(expectedKeys, expectedIndices, 0, 0, n, true, take);
            const gotKeys = keys.slice();
            const gotIndices = indices.slice();
            const label = `${style} n ${n} take ${take}${ascending ? ' ascending' : ''}`;
            if (bestByBuckets(gotKeys, gotIndices, n, take, diffOf(keys, n))) {
              picked++;
              expect(Array.from(gotKeys.subarray(0, take)), label).toEqual(Array.from(expectedKeys.subarray(0, take)));
              expect(Array.from(gotIndices.subarray(0, take)), label).toEqual(Array.from(expectedIndices.subarray(0, take)));
            } else {
              declined++;
              expect(Array.from(gotKeys), label).toEqual(Array.from(keys));
              expect(Array.from(gotIndices), label).toEqual(Array.from(indices));
            }
          }
        }
      }
    }
    // Both outcomes happened (spread keys are picked; equal and clustered keys decline).
    expect(picked).toBeGreaterThan(50);
    expect(declined).toBeGreaterThan(10);
  });
});
