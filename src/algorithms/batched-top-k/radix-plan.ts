import type { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type RadixPick, type TopKPolicy, radixFoldsFallback, radixFoldsFinalize, radixInitParts, radixPasses, radixSampleCap, radixSampleDivisor, radixSampleMergeWords, radixSampleRankedMaxJ, radixStateWords } from './policy.js';
import { type TopKLaunch, radixTiles, topKKernels } from './problem.js';

/*
 * The radix-select variant's launches and temporary storage, shared by the planner and the tests
 * that drive the kernels directly (one description, so they cannot drift apart); grids come from the
 * kernel table (problem.ts). With P = ceil(32 / radixBits) digit passes:
 *
 *   radix-init       (grid maxSegments * parts)  zero the state and histograms; sample a threshold T
 *                                                 (parts: radixInitParts, more than one workgroup a
 *                                                 segment past 256 x radixSampleCap keys)
 *   radix-histogram  (grid maxSegments * tiles)  pass 0 over every key: the keys >= T into
 *                                                 candidates0 and their digit-0 histogram (sampled;
 *                                                 on segments of at most radixFoldFallbackMaxItems
 *                                                 keys, where fewer than k reached T, the segment's
 *                                                 last workgroup to finish adds the keys below it),
 *                                                 or the digit-0 histogram of every key
 *   radix-fallback   (grid maxSegments * filterTiles) longer segments only (none where no segment
 *                                                 samples: samplesAny), and only where fewer
 *                                                 than k keys reached T: the digit-0 histogram of
 *                                                 the keys below it
 *   radix-filter p   (grid maxSegments * filterTiles), p = 0 .. P-2: choose digit p's threshold
 *                                                 bucket, select the items above it, keep its members
 *                                                 as candidates with their digit-(p+1) histogram; at
 *                                                 p = 0, where pass 0's candidates fit a tile, pick
 *                                                 the best take among them in one workgroup instead
 *                                                 (a radix select, or a sort), where the plan builds
 *                                                 the pick (policy.ts radixPickOf)
 *   radix-finalize   (grid maxSegments)          choose and filter the last digit, the tied items
 *                                                 (smallest indices, or as found), order, write
 *   radix-compact-count (grid maxSegments * tiles) with a selection past the tile in index order:
 *                                                 each tile's keys above the selection's threshold,
 *                                                 and equal to it, counted
 *   radix-compact-write (grid maxSegments * tiles) each tile's selected keys written at their
 *                                                 places in index order (the earlier tiles' counts
 *                                                 added up), the fills past the take
 *
 * Where finalize is expected to find the outputs written by filter pass 0's pick (policy.ts
 * radixFoldsFinalize), the last filter launch is 'radix-filter-finalize': each segment's last filter
 * workgroup to finish (its first, where none had input) does finalize's work, and there is no
 * finalize launch.
 *
 * A sorted selection larger than a tile is written in index order and sorted after it by the
 * segmented sort's kernels (plan.ts selectionSortLaunches). Written by finalize's one workgroup a
 * segment, that took one 4M-key row with k = 100000 1.26 ms on an H200 (it appended the selection,
 * then walked a bitmap of the row); so where a take may pass the tile and the output is in index
 * order (sorted after, or unsorted by index), on GPU-class backends (the policy's
 * `radixCompactPastTile`; the CPU emulator's finalize is faster there), finalize only finds the
 * selection's threshold (the ordered key of the k-th best) and how many keys equal to it are taken;
 * where a digit's threshold bucket ends the take, the filter of that digit writes the bucket's least
 * key instead (every key at or above it is taken) and finalize has nothing to find (it searched the
 * selected keys for their least: 0.090 of 0.69 ms for 32 rows of 262144 keys with k = 100000 on an
 * H200), and the filters only count the keys they select; the two compaction launches then write
 * the selection over every tile of the segment: a key above the threshold, or one of the first equal
 * keys in index order, goes to (selected keys before it in index order).
 */

/** What the radix-select launches are sized by. */
export interface RadixPlanInput {
  readonly policy: TopKPolicy;
  /** The launches' names' specialization, e.g. `f32,max`. */
  readonly spec: string;
  readonly maxSegments: number;
  readonly maxSegmentSize: number;
  readonly kMax: number;
  /** The least k any segment may have (its bound); default 1. */
  readonly kMin?: number;
  /** Words each candidate buffer holds (a segment's candidates live at its start). */
  readonly candidateWords: number;
  /** What the requirements let finalize skip (plan.ts); default neither. */
  readonly relaxed?: { readonly tiesAsFound: boolean; readonly orderAsFound: boolean };
  /**
   * Sorted output past a tile: finalize writes the selection in index order and the selection sort's
   * launches (plan.ts) sort it after; default false.
   */
  readonly sortAfter?: boolean;
  /**
   * Whether filter pass 0 carries its pick among the sampled candidates, and why (policy.ts
   * radixPickOf; explain() says it). Default: built unless ties are taken as found, with no reason
   * given (the tests that drive the kernels directly).
   */
  readonly pick?: RadixPick;
}

/**
 * Whether the compaction launches write a selection past the tile: the policy's
 * `radixCompactPastTile`, a take may pass the tile (`kMax`), the selection is in index order (not
 * 'unsorted' as found), finalize has a launch of its own, and a radix tile holds fewer than 65536
 * keys.
 */
export function radixCompacts(input: Pick<RadixPlanInput, 'kMax' | 'policy' | 'relaxed'>, folds: boolean): boolean {
  // A tile's two counts are packed in 16 bits each when the write launch scans them.
  return input.policy.radixCompactPastTile && !folds && input.kMax > input.policy.tileItems && input.relaxed?.orderAsFound !== true && input.policy.radixTileItems < 65536;
}

/**
 * Whether any segment may sample a threshold in radix-init (policy.ts radixSample): not where every
 * take is more than a quarter of its segment, or, in a plan that compacts, more than the tile and a
 * sixteenth of its segment (take = min(k, size) > size / 16 for every size when k > maxSegmentSize /
 * 16). Without a sample there is nothing for the fallback launch to add: it is left out (H200: a
 * launch whose workgroups all return at once, 0.0076 ms of 0.55 for 32x262144 k=100000).
 */
function samplesAny(input: Pick<RadixPlanInput, 'kMin' | 'kMax' | 'maxSegmentSize' | 'policy' | 'relaxed'>): boolean {
  const kMin = input.kMin ?? 1;
  if (kMin > Math.floor(input.maxSegmentSize / radixSampleDivisor(false))) return false;
  return !(radixCompacts(input, false) && kMin > input.policy.tileItems && kMin > Math.floor(input.maxSegmentSize / radixSampleDivisor(true)));
}

/** Adds radix-select's slots to `layout` and returns its launches. */
export function radixSelectLaunches(layout: TempStorageLayoutBuilder, input: RadixPlanInput): TopKLaunch[] {
  const { policy, spec, maxSegments: n, maxSegmentSize, kMax, candidateWords } = input;
  const relaxed = input.relaxed ?? { tiesAsFound: false, orderAsFound: false };
  const passes = radixPasses(policy.radixBits);
  const geometry = { maxSegments: n, maxSegmentSize };
  layout
    .add('segmentState', n * radixStateWords * 4)
    .add('histogram', n * passes * 2 ** policy.radixBits * 4)
    .add('selected', n * kMax * 4)
    .add('candidates0', candidateWords * 4)
    .add('candidates1', candidateWords * 4);
  const launch = (kernel: Exclude<TopKLaunch['kernel'], 'validate' | 'segment-offsets'>, name: string, pass: number, purpose: string, extra = ''): TopKLaunch => ({
    kernel,
    variant: 'radix-select',
    name: `topk/radix-select/${name}[${spec}${extra}]`,
    grid: topKKernels[kernel].grid(geometry, policy),
    pass,
    purpose,
  });
  const tiles = radixTiles(maxSegmentSize, policy);
  // A misleading sampled threshold's histogram: pass 0's last workgroup on segments short enough for
  // one workgroup to read again, else a launch of its own (policy.ts radixFoldFallbackMaxItems).
  const folded = radixFoldsFallback(maxSegmentSize, policy);
  // A segment past 256 x radixSampleCap keys sampled by several workgroups: each publishes its best
  // sampled keys, the last to arrive ranks them (the arrival word, then the lists, zeroed every run).
  const parts = radixInitParts(maxSegmentSize, policy);
  if (parts > 1) layout.add('sampleMerge', n * radixSampleMergeWords(parts, policy.workgroupSize) * 4, { zeroed: true });
  const sampling =
    parts > 1
      ? `sample a threshold that about 1.5 k keys reach (long segments, small k; up to ${parts} workgroups a segment past ${256 * radixSampleCap(policy.workgroupSize)} keys, radixInitWorkgroups, one key in 256 where the threshold's rank is at most ${radixSampleRankedMaxJ(policy.workgroupSize)})`
      : 'sample a threshold that about 1.5 k keys reach (long segments, small k)';
  const launches = [
    launch('radix-init', 'init', 0, `zero the state and histograms; ${sampling}`),
    launch(
      'radix-histogram',
      'histogram',
      0,
      `pass 0 over the keys (${policy.radixBits}-bit digits, ${tiles} tiles per segment): the keys at or above the sampled threshold as candidates with their histogram${folded ? ` (where fewer than k reached it, the segment's last workgroup to finish adds the keys below it: segments of at most ${policy.radixFoldFallbackMaxItems} keys, radixFoldFallbackMaxItems)` : ''}, else the histogram of every key`,
    ),
  ];
  if (!folded && samplesAny(input)) {
    launches.push(
      launch(
        'radix-fallback',
        'fallback',
        0,
        `only where fewer than k keys reached the sampled threshold: the histogram of the keys below it (segments of up to ${maxSegmentSize} keys, past radixFoldFallbackMaxItems ${policy.radixFoldFallbackMaxItems}: spread over the device)`,
      ),
    );
  }
  // Filter pass 0's pick, and why it is built or not where the plan says (radixPickOf).
  const pick = input.pick ?? { built: !relaxed.tiesAsFound, why: '' };
  const why = pick.why === '' ? '' : `; the pick is built: ${pick.why}`;
  const picked = pick.built
    ? ` (where at most ${policy.tileItems} keys reached the sampled threshold: the best picked among them in one workgroup, by a radix select or a sort: policy.ts radixCandidateShortcut${why}; on WebGPU with sorted output, ranked by all the segment's filter workgroups together where they split each candidate's count of better ones ${policy.radixPickSpread} ways or more, radixPickSpread)`
    : pick.why === ''
      ? ''
      : ` (no pick among the sampled candidates, which digit 0 filters as any other: the pick is not built: ${pick.why})`;
  const ties = relaxed.tiesAsFound ? 'the tied items as found' : 'the smallest tied indices';
  const order = relaxed.orderAsFound ? 'keep the selection as found' : input.sortAfter === true ? 'keep the selection in index order (sorted after)' : 'sort the selection';
  const finalizing = `digit ${passes - 1}: the last bucket, ${ties}, ${order}, write`;
  const folds = radixFoldsFinalize(policy, { pickBuilt: pick.built, maxSegmentSize, kMax });
  const extra = `${relaxed.tiesAsFound ? ',tie=any' : ''}${relaxed.orderAsFound ? ',order=any' : ''}`;
  for (let pass = 0; pass + 1 < passes; pass++) {
    const shortcut = pass === 0 ? picked : '';
    const filtering = `digit ${pass}: the threshold bucket; items above it selected, its members kept as candidates with the histogram of digit ${pass + 1}${shortcut}`;
    if (folds && pass + 2 === passes) {
      launches.push(launch('radix-filter-finalize', 'filter-finalize', pass, `${filtering}; then, by the segment's last filter workgroup to finish (radixFinalizeInFilter '${policy.radixFinalizeInFilter}'), ${finalizing}`, extra));
    } else {
      launches.push(launch('radix-filter', 'filter', pass, filtering));
    }
  }
  if (!folds) {
    launches.push(launch('radix-finalize', 'finalize', passes - 1, finalizing, extra));
    if (radixCompacts(input, folds)) {
      layout.add('compactCounts', n * tiles * 2 * 4);
      launches.push(
        launch('radix-compact-count', 'compact-count', 0, `a selection past the tile (${policy.tileItems} keys), in index order by every tile (${tiles} per segment): each tile's keys above the selection's threshold and equal to it, counted`),
        launch('radix-compact-write', 'compact-write', 0, "each tile's selected keys (above the threshold, or among the first equal ones) written at their places in index order, the fills past the take"),
      );
    }
  }
  return launches;
}
