import type { TempStorageLayoutBuilder } from '../../dispatch/temp-storage.js';
import { type TopKPolicy, radixFilterTiles, radixPasses, radixStateWords, radixTiles } from './policy.js';
import type { TopKLaunch } from './problem.js';

/*
 * The radix-select variant's launches and temporary storage, shared by the planner and the tests
 * that drive the kernels directly (one description, so they cannot drift apart). With P =
 * ceil(32 / radixBits) digit passes:
 *
 *   radix-init       (grid maxSegments)          zero the state and histograms; sample a threshold T
 *   radix-histogram  (grid maxSegments * tiles)  pass 0 over every key: the keys >= T into
 *                                                 candidates0 and their digit-0 histogram (sampled),
 *                                                 or the digit-0 histogram of every key
 *   radix-fallback   (grid maxSegments * filterTiles) only where fewer than k keys reached T: the
 *                                                 digit-0 histogram of the keys below it
 *   radix-filter p   (grid maxSegments * filterTiles), p = 0 .. P-2: choose digit p's threshold
 *                                                 bucket, select the items above it, keep its members
 *                                                 as candidates with their digit-(p+1) histogram
 *   radix-finalize   (grid maxSegments)          choose and filter the last digit, the smallest tied
 *                                                 indices, sort, write
 */

/** What the radix-select launches are sized by. */
export interface RadixPlanInput {
  readonly policy: TopKPolicy;
  /** The launches' names' specialization, e.g. `f32,max`. */
  readonly spec: string;
  readonly maxSegments: number;
  readonly maxSegmentSize: number;
  readonly kMax: number;
  /** Words each candidate buffer holds (a segment's candidates live at its start). */
  readonly candidateWords: number;
}

/** Adds radix-select's slots to `layout` and returns its launches. */
export function radixSelectLaunches(layout: TempStorageLayoutBuilder, input: RadixPlanInput): TopKLaunch[] {
  const { policy, spec, maxSegments: n, maxSegmentSize, kMax, candidateWords } = input;
  const passes = radixPasses(policy.radixBits);
  const tiles = radixTiles(policy, maxSegmentSize);
  const filterTiles = radixFilterTiles(policy, maxSegmentSize, n);
  layout
    .add('segmentState', n * radixStateWords * 4)
    .add('histogram', n * passes * 2 ** policy.radixBits * 4)
    .add('selected', n * kMax * 4)
    .add('candidates0', candidateWords * 4)
    .add('candidates1', candidateWords * 4);
  const variant = 'radix-select' as const;
  const launch = (kernel: TopKLaunch['kernel'], name: string, grid: number, pass: number, purpose: string): TopKLaunch => ({
    kernel,
    variant,
    name: `topk/radix-select/${name}[${spec}]`,
    grid,
    pass,
    purpose,
  });
  const launches = [
    launch('radix-init', 'init', n, 0, 'zero the state and histograms; sample a threshold that about 1.5 k keys reach (long segments, small k)'),
    launch('radix-histogram', 'histogram', n * tiles, 0, `pass 0 over the keys (${policy.radixBits}-bit digits): the keys at or above the sampled threshold as candidates with their histogram, else the histogram of every key`),
    launch('radix-fallback', 'fallback', n * filterTiles, 0, 'only where fewer than k keys reached the sampled threshold: the histogram of the keys below it'),
  ];
  for (let pass = 0; pass + 1 < passes; pass++) {
    launches.push(launch('radix-filter', 'filter', n * filterTiles, pass, `digit ${pass}: the threshold bucket; items above it selected, its members kept as candidates with the histogram of digit ${pass + 1}`));
  }
  launches.push(launch('radix-finalize', 'finalize', n, passes - 1, `digit ${passes - 1}: the last bucket, the smallest tied indices, sort, write`));
  return launches;
}
