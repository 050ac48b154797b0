/**
 * `TopKVariantsFor`: the variants the static bounds of k and of the segment sizes leave (a sound
 * over-approximation of `plan.reachableVariants`; test/variants-for.test.ts samples the runtime
 * selector against it). Row-radix and radix-select serve segments past the smallest tile; which of
 * the two runs depends on bounds the types do not see (the longest row, the keys in all).
 */
import { expectType } from 'tsd';
import type { PerSegmentParam, TopKVariantsFor, UniformParam } from 'segkit';

type Args<KMin extends number, KMax extends number, SizeMin extends number, SizeMax extends number> = {
  k: UniformParam<KMin, KMax>;
  segmentSizes: PerSegmentParam<SizeMin, SizeMax>;
};

// k of at most 4: reduce alone, whatever the segments.
expectType<'reduce'>(null! as TopKVariantsFor<Args<1, 4, 0, 100000>>);
// k of at most 8 over rows of at most 65535 keys: reduce alone.
expectType<'reduce'>(null! as TopKVariantsFor<Args<1, 8, 0, 65535>>);
// k of 5 to 8 over longer rows: a call of many keys gives reduce's place to the radix selects.
expectType<'reduce' | 'single-tile' | 'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<1, 8, 0, 100000>>);
expectType<'reduce' | 'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<5, 5, 65536, 65536>>);
// Segments within the smallest tile: single-tile (and reduce for small k), never a row or radix select.
expectType<'reduce' | 'single-tile'>(null! as TopKVariantsFor<Args<1, 64, 0, 1024>>);
// Rows past every tile: row-radix or radix-select.
expectType<'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<16, 2048, 4097, 262144>>);
expectType<'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<9, 9, 65536, 65536>>);
// Sizes on either side of the tile: every variant but reduce.
expectType<'single-tile' | 'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<16, 64, 0, 8192>>);
// Unknown bounds: every variant.
expectType<'reduce' | 'single-tile' | 'row-radix' | 'radix-select'>(null! as TopKVariantsFor<Args<number, number, number, number>>);
