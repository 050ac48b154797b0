import type { BackendCapabilities } from '../../backends/backend.js';
import { type BackendLimits, backendLimits } from '../../dispatch/limits.js';
import { type VariantSelection, type VariantVerdict, checkPositiveIntegers, gpuClass, gpuClassMinParallelism, selectVariant } from '../../dispatch/variants.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import { sortSlotsFor } from '../../backends/webgpu/blocks.js';

/** The variants of DeviceBatchedTopK. */
export type TopKVariant = 'single-tile' | 'reduce' | 'row-radix' | 'radix-select';
/** Every variant, in the order `explain()` lists them. */
export const topKVariants: readonly TopKVariant[] = ['single-tile', 'reduce', 'row-radix', 'radix-select'];

/** Policy values: what the kernels of each variant are sized by. */
export interface TopKPolicy {
  /** Invocations per workgroup. */
  readonly workgroupSize: number;
  /** Most items a single-tile workgroup holds in workgroup memory (keys and indices). */
  readonly tileItems: number;
  /** Largest `kMax` the reduce variant handles. */
  readonly reduceMaxK: number;
  /**
   * Items one reduce workgroup scans; longer segments are split across workgroups and merged. Unless
   * tuning sets it, the selector lengthens it over long segments (see `reduceChunkWorkgroups`).
   */
  readonly reduceChunkItems: number;
  /**
   * Reduce over short segments given one invocation each: workgroups narrow until they make at least
   * a quarter of this many (the device's workgroup slots, one wave).
   */
  readonly reduceWorkgroups: number;
  /**
   * Reduce over long segments: chunks grow, in whole loop trips of `workgroupSize * 16` keys, until
   * the grid is at most about this many workgroups. On a GPU a quarter of its workgroup slots: each
   * chunk pays a fixed cost (its segment, the workgroup's merge, its list), and two workgroups of
   * long chunks a multiprocessor read faster than a wave of short ones. H200, GPU ms (2026-11-29,
   * bench/topk-webgpu.ts --tune, the merge in the chunk launch, two rounds; 1024 / 512 / 256 (this)
   * / 128): 64x151936 k=1 0.0253-0.0254 / 0.0233-0.0235 / 0.0224-0.0227 / 0.0230-0.0232, 8x151936
   * k=1 0.0138-0.0140 / 0.0135-0.0140 / 0.0133-0.0136 / 0.0132-0.0133, 1x16M k=8 0.189 / 0.174-0.176
   * / 0.167-0.168 / 0.174-0.175; 1x128256 k=1 0.0115 at every count (32 chunks of 4096 keys either
   * way). 192 split the 64 rows in 3 chunks (192 workgroups on 132 multiprocessors): 0.0253-0.0262.
   * The CPU (few workgroup slots) keeps one chunk per slot.
   */
  readonly reduceChunkWorkgroups: number;
  /**
   * Reduce: segments of at most this many keys get one invocation each (workgroupSize segments per
   * workgroup, no merge) instead of a workgroup each.
   */
  readonly reduceSmallSegmentItems: number;
  /**
   * Reduce over several chunks a segment: where the chunks' lists are merged. In the chunk launch
   * itself ('reduce-chunk-merge': each chunk workgroup publishes its list and counts itself in its
   * segment's arrival word; the last to arrive merges and writes) or in a 'reduce-merge' launch of
   * its own. 'auto' merges in the chunk launch where kMax is 1, 'always' and 'never' as they say.
   * Either way the same bits. H200, GPU ms (2026-11-29, bench/topk-webgpu.ts --tune, two rounds;
   * own launch / chunk launch): 64x151936 k=1 0.0242-0.0245 / 0.0225-0.0232, 8x151936 k=1
   * 0.0154-0.0165 / 0.0137-0.0145, 1x128256 k=1 0.0134-0.0135 / 0.0124; but 1x16M k=8 0.160 /
   * 0.167-0.168, whether the last workgroup read the lists one at a time or four entries an
   * invocation at once.
   */
  readonly reduceLastChunkMerges: 'auto' | 'always' | 'never';
  /**
   * Reduce with register lists of 8 (`kMax` 5 to 8) over rows longer than
   * `topKPolicyLimits.reduceShortRowMaxItems` (65535) keys takes calls of fewer than this many keys
   * in all (segments times the longest row); from it on the radix selects do: a key costs a list of 8 about
   * five times what it costs a list of one, and radix-select's passes do not grow with k. H200, GPU
   * ms (2026-11-29, bench/topk-webgpu.ts --variants; reduce / radix-select): 64x151936 k=8
   * 0.105-0.108 / 0.065-0.068, k=5 0.104 / 0.065, k=4 0.0455 / 0.068, k=2 0.030 / 0.066; 128x65536
   * k=8 0.089 / 0.063; 1x16M k=8 0.159-0.160 / 0.106-0.107, k=4 0.065 / 0.107; 1x1048576 k=8
   * 0.035 / 0.046; 1x151936 k=8 0.031 / 0.041; 512x16384 k=8 (rows under the limit) 0.0825 /
   * 0.105. So 2^23 on a GPU; the CPU emulator keeps reduce.
   */
  readonly reduceLongListRadixItems: number;
  /**
   * Items one radix-select workgroup scans per tile (pass 0 reads the keys in tiles of this many);
   * a plan halves it where whole tiles would give too few workgroups (`radixTileItemsFor`) unless
   * tuning sets it.
   */
  readonly radixTileItems: number;
  /**
   * Bits per radix-select digit, 4 to 11: ceil(32 / bits) passes, each with a 2^bits-bin histogram
   * per segment. Segments shorter than `radixWideDigitItems` use 8 unless tuning sets this.
   */
  readonly radixBits: number;
  /** Radix-select segments of at least this many keys use `radixBits`-bit digits; shorter ones 8-bit (histograms stay small with many segments). */
  readonly radixWideDigitItems: number;
  /** Workgroups the radix-select filter passes spread over, all segments together (each loops over its segment's tiles). */
  readonly radixFilterWorkgroups: number;
  /**
   * Invocations of radix-select's workgroups where the plan builds filter pass 0's pick and kMax is
   * at least `radixWideWorkgroupMinK`, on a GPU-class backend (unless tuning sets `workgroupSize`);
   * its tiles are then 16 keys an invocation. The pick's one workgroup a segment selects, orders and
   * writes the take, and with k in the hundreds or more its time leads the call; twice the
   * invocations halve each one's share. The default is 512, or the backend's maxWorkgroupSize where
   * that is less; a size that is not above `workgroupSize`, whose workgroup memory does not fit
   * (radixWorkgroupBytes), or of which a tuned `radixTileItems` is no multiple, leaves the plan at
   * `workgroupSize`.
   */
  readonly radixWideWorkgroupSize: number;
  /**
   * Least kMax for which radix-select takes `radixWideWorkgroupSize` (with the pick built). H200 (GPU
   * ms, bench/topk-webgpu.ts --tune, 2026-11-30, two rounds; workgroups of 256 / 512 with tiles of
   * 4096 / 512 with tiles of 8192): 64x65536 k=2048 0.0662-0.0664 / 0.0578-0.0579 / 0.0563-0.057,
   * 32x131072 k=2048 0.0656-0.0665 / 0.0568-0.0576 / 0.055-0.0554; but 256x262144 k=256 0.160 /
   * 0.172 / 0.175, 64x151936 k=50 0.065-0.066 / 0.077-0.078 / 0.073-0.076, 1x16M k=100 0.102 /
   * 0.109-0.110 / 0.123-0.124. Then (256 / 512 with tiles of 8192): 64x65536 k=1024 0.0598-0.0603 /
   * 0.0569-0.0571, k=512 0.0913-0.0921 / 0.077; ragged rows of 1 to 65536 keys with device sizes
   * k=512, where no pick is built, 0.0734-0.0744 / 0.0789.
   */
  readonly radixWideWorkgroupMinK: number;
  /**
   * Workgroups radix-select's pass 0 (the launch that reads every key) spreads over, all segments
   * together, at most one per tile: each takes every so many tiles of its segment and loads its next
   * tile's keys while it tests this one's.
   */
  readonly radixHistogramWorkgroups: number;
  /**
   * Radix-select segments of at most this many keys (the host's bound on the segment size) need no
   * launch of their own for a sampled threshold that misleads (fewer than k keys reach it): the last
   * of a segment's pass-0 workgroups to finish reads the segment again and adds the keys below the
   * threshold to the histogram. Longer segments keep the 'radix-fallback' launch, which spreads that
   * read over the device. The launch cost every call a dispatch while it nearly always found nothing
   * to do; its work in one workgroup costs a call whose sample misleads one more read of the segment
   * by one workgroup, about 0.08 ms for 262144 keys, so the default stops at 131072 (the sparse-
   * attention indexers' rows). H200 (GPU ms, bench/topk-webgpu.ts, 2026-11-30, two rounds each of
   * two calls, launch / pass 0's last workgroup): 64x65536 k=2048 0.0564-0.0576 / 0.0544-0.0547,
   * 32x131072 k=2048 0.056-0.0566 / 0.0528-0.054; past the default, with the bound raised:
   * 256x262144 k=256 0.1593-0.161 / 0.1578-0.1588, 64x151936 k=50 0.0652-0.0677 / 0.0644-0.0668,
   * 1x262144 k=100 0.0414 / 0.0389, and with keys that mislead its sample 0.0555 / 0.138; 1x16M
   * k=100 0.0988-0.0992 / 0.0986-0.0991 (its 4096 workgroups count their arrivals on one word) and,
   * misled, 0.296-0.298 / 7.23 ms.
   */
  readonly radixFoldFallbackMaxItems: number;
  /**
   * radix-init samples a segment longer than 256 x radixSampleCap keys (2M with 256 invocations)
   * with up to this many workgroups, one key in 256 (radixSample), where the threshold's rank is at
   * most 16 (small takes): each workgroup publishes its invocations' best sampled keys and the last
   * to arrive ranks them. One workgroup's sample of one key in 2048 let ~18K keys of a 16M row reach
   * the threshold, past filter pass 0's pick, so the digit passes and finalize ran; one key in 256
   * lets ~2.3K reach it, which the pick takes, and finalize folds into the last filter. 1 keeps one
   * workgroup a segment. H200 (GPU ms, 2026-12-02, two rounds; bench/topk-webgpu.ts, then
   * bench/webgpu-launch-profile.ts with the call in one pass), one workgroup / eight: 1x16M k=100
   * 0.1019 / 0.0936-0.0956, on random-bit keys 0.1044 / 0.0949-0.097; in one pass 0.1014-0.1019 /
   * 0.0952-0.0974 (init 0.0198 / 0.0254, filter 0's pick 0.0365 where the digit filters and
   * finalize took 0.061). Sixteen workgroups of half the sample each: init 0.0256; one key in 128
   * over sixteen: 0.0929-0.0939 in one pass, within the spread; one workgroup of 1024 invocations
   * sampling 65536 keys: init 0.085.
   */
  readonly radixInitWorkgroups: number;
  /**
   * row-radix (one workgroup per segment doing every digit pass, the row re-read from cache) takes
   * segments of at most this many keys: past it one workgroup's passes over its row outlast
   * radix-select's launches, which spread a segment over the whole device.
   */
  readonly rowRadixMaxItems: number;
  /**
   * row-radix takes segments of at most this many keys (instead of `rowRadixMaxItems`) when kMax
   * exceeds `tileItems`: radix-select then sorts its selection in launches of its own, and one
   * workgroup per row keeps ahead on longer rows.
   */
  readonly rowRadixPastTileMaxItems: number;
  /**
   * row-radix takes calls of at most this many keys in all (maxSegments * max segment size): its
   * second and third passes over a row should find it in the device's cache (an H200's L2 holds 50 MiB).
   */
  readonly rowRadixMaxTotalItems: number;
  /**
   * Invocations of a row-radix workgroup (at most 1024): it reads its row alone, so it needs many
   * loads in flight. 256 invocations of 4 quads each kept 16 KiB in flight and read about 8 GB/s per
   * row on an H200 (1 x 16M: 24.9 ms); the default is the most the device and its workgroup memory allow.
   */
  readonly rowRadixWorkgroupSize: number;
  /**
   * row-radix rows longer than this are wide: their workgroups get `rowRadixWorkgroupSize`
   * invocations (shorter rows: `workgroupSize`, so more workgroups share a multiprocessor) and
   * row-radix takes them only when kMax is at least `rowRadixWideMinK`.
   */
  readonly rowRadixWideItems: number;
  /**
   * Least kMax for which row-radix takes wide rows: with a smaller k, radix-select's sampled threshold
   * reads the keys once where row-radix reads its row three times in one workgroup.
   */
  readonly rowRadixWideMinK: number;
  /**
   * A call of fewer segments than this has few rows: one workgroup per row leaves most of the
   * device idle, so row-radix takes its rows only up to `rowRadixFewRowsMaxItems` keys (when kMax
   * fits the tile; a selection past it keeps `rowRadixPastTileMaxItems`).
   */
  readonly rowRadixFewRows: number;
  /** Most keys of a row that row-radix takes in a call of fewer than `rowRadixFewRows` segments. */
  readonly rowRadixFewRowsMaxItems: number;
  /**
   * Radix-select's filter pass 0, where the keys that reached the sampled threshold fit a tile, with
   * unsorted output: true selects the best take among them (a radix select in workgroup memory, then
   * written in index order), false sorts them all and takes the first take (the earlier way, kept to
   * measure against).
   */
  readonly radixCandidateSelect: boolean;
  /**
   * The same with sorted output: true selects the best take and sorts only them (where that shrinks
   * the sort's padded size), false sorts every candidate.
   */
  readonly radixCandidateSelectSorted: boolean;
  /**
   * Where a take may pass the tile and the selection is written in index order (sorted after it, or
   * unsorted by index): true has radix-select's last digit find only the selection's threshold and
   * two launches over every tile of the segment write the selection (radix-plan.ts); false has the
   * last digit's one workgroup a segment write it. The default is true on GPU-class backends: an
   * H200 took one 4M-key row with k = 100000 sorted in 0.18 ms instead of 1.39 (BENCHMARKS.md,
   * session 36); the CPU emulator, whose last digit appends the selection at memory speed, false:
   * on 2 threads (AMD EPYC, 2026-12-01) 16x65536 k = 10000 took 37-46 ms compacted against 21 ms,
   * 4x262144 k = 100000 30-47 against 21.
   */
  readonly radixCompactPastTile: boolean;
  /**
   * Where radix-select's last digit (finalize's work) runs: in the last filter launch, by the last of
   * a segment's filter workgroups to finish (its first, where none had input), or in a launch of its
   * own (`radixFoldsFinalize`). 'auto' takes the last filter's where finalize is expected to find
   * nothing to do: filter pass 0's pick is built and every segment's sample keeps its candidates
   * within the pick's tile (segments of at most 256 x radixSampleCap keys), so the pick writes the
   * outputs and a launch of finalize's own would only read the state. Where finalize has work, its
   * own launch was faster. 'auto' on GPU-class backends, 'never' on the others (the CPU emulator with
   * its own capabilities, software adapters), where a launch costs little and the combined program
   * compiles slowly. H200, GPU ms, 2026-11-30, two rounds over several calls (own launch / in the
   * last filter): 64x151936 k=50 0.0644-0.0686 / 0.0641-0.0667, 256x262144 k=256 0.1597-0.1607 /
   * 0.1569-0.159, 64x65536 k=2048 0.0544-0.0549 / 0.053-0.0538, 32x131072 k=2048 0.0533-0.0539 /
   * 0.052-0.0522; where finalize works, 1x16M k=100 0.100-0.1012 / 0.1023-0.1035, ragged rows with
   * device-only sizes 128x(1..65536) k=512 0.0726-0.0755 / 0.0748-0.0762 (BENCHMARKS.md session 33).
   */
  readonly radixFinalizeInFilter: 'auto' | 'always' | 'never';
  /**
   * Whether radix-select's filter pass 0 carries its pick at all (where the keys that reached the
   * sampled threshold fit a tile, the first workgroup picks the best take among them in workgroup
   * memory; `radixCandidateSelect` says how): 'auto' builds it only where every segment the plan can
   * see samples a threshold (the host-known least segment size at least 1024, kMax at most a quarter
   * of it, radix-init's condition; and some take may fit the tile: `radixPickOf`), 'always' wherever
   * ties are taken by index (as before this value), 'never' nowhere. Without it the filter shader has
   * neither the pick's code nor its workgroup memory. The outputs are the same bits either way, and
   * both backends follow the plan (the CPU twin takes its own pick only where the WGSL one is built,
   * so their state words agree). Where segments sample no threshold (short rows, a large k), finalize
   * sorts them anyway and the pick's code costs every workgroup of the filter for nothing. H200, GPU
   * ms, 2026-11-29, the pick compiled out of the filter shader: ragged rows with device-only sizes
   * (128 rows of 1..65536 keys, k=512) 0.0855 -> 0.078; uniform long rows, where every row samples
   * and the pick runs, slower: 256x262144 k=256 0.161 -> 0.195, 64x65536 k=2048 0.068 -> 0.079,
   * 64x151936 k=50 0.072 -> 0.085.
   */
  readonly radixPick: 'auto' | 'always' | 'never';
  /**
   * Sorted output: the fewest invocations that count one candidate's better candidates for the
   * spread pick, where every filter workgroup of the segment ranks a share of the candidates at once
   * (webgpu/radix-filter.ts spreadPickWgsl) instead of the first one selecting and sorting them
   * alone. The segment's filter workgroups (radixFilterWorkgroups over the segments) times their
   * invocations must reach the candidates times this, so in practice it runs on calls of one to a
   * few long segments; a value past the workgroup turns it off (and pass 0 then writes no keys beside
   * the candidates). WebGPU only (the CPU twin picks the same selection either way). H200, GPU ms
   * of the call (bench/topk-webgpu.ts --tune, 2026-12-02, two rounds; off / 16 / 8 / 4): 1x16M
   * k=100 0.0942-0.0933 / 0.0798-0.0803 / 0.0788-0.0793 / 0.0799-0.0801 (its ~2.8K candidates
   * ranked by 256 workgroups: filter pass 0 0.037 -> 0.022 in the launch profile); 64x151936 k=50,
   * the anchor, the indexers, ragged rows with device sizes and 64x151936 k=8 level within
   * 0.001-0.002 at every value (their segments' few filter workgroups leave the pick to the first).
   */
  readonly radixPickSpread: number;
  /**
   * Fewest entries radix-select's workgroup sorts (filter pass 0's pick, finalize) sort by ranks
   * within buckets (backends/webgpu/blocks.ts \`rankSortWgsl\`) instead of the bitonic network; fewer
   * take the network. WebGPU only (the CPU backend sorts on the host). H200, the sorts alone
   * (bench/workgroup-sort-webgpu.ts, 64 workgroups, GPU ms of the launch, BENCHMARKS.md run 20;
   * network in groups of 16 / ranks): 100 entries 0.0143 / 0.0148, 512 0.0157 / 0.0160, 2048 0.0263 /
   * 0.0236, 3300 0.0414 / 0.0325, 4096 0.0421 / 0.0362 (load-only launches 0.0075 to 0.018); in
   * top-k (bench/topk-webgpu.ts, 2026-11-29, two rounds, GPU ms; 2 / 2048 (this) / the network
   * alone): 64x65536 k=2048 0.0673-0.0677 / 0.0678-0.068 / 0.0761-0.0763, 32x131072 k=2048
   * 0.0674-0.0676 / 0.0674-0.0677 / 0.076-0.0762, 64x151936 k=50 0.0754-0.155 / 0.0715-0.0718 /
   * 0.0717-0.0719, 1x16M k=100 0.1228-0.1231 / 0.1156-0.1161 / 0.1147-0.1163. With the wide
   * workgroups of k >= 512 (radixWideWorkgroupSize: 8 entries an invocation, not 16), 1024 since
   * 2026-11-30 (bench/topk-webgpu.ts --tune, GPU ms, clean round; 2048 / 1024 / 512 / 256): 64x65536
   * k=1024 0.0564 / 0.0506 / 0.0508 / 0.0512, k=512 0.0772 / 0.0752 / 0.0716 / 0.0715, k=2048 0.0565 /
   * 0.0567 / 0.057 / 0.0566; 256x262144 k=256 0.1599 / 0.1589 / 0.1625 / 0.1622, ragged rows k=512
   * 0.0747 / 0.0754 / 0.072 / 0.0765, 1x16M k=100 0.1012 / 0.1014 / 0.1021 / 0.1013.
   */
  readonly rankSortMinItems: number;
  /**
   * How a sorted selection past the tile is sorted after radix-select or row-radix select it:
   * 'auto' as the segmented sort's policy decides for segments of the selection's size (its 'merge'
   * up to its `mergeMaxSegmentItems`, 65536 keys, on a backend of many workgroup slots where merge's
   * workgroup fits; its radix sort otherwise: problem.ts chooseSelectionSort); 'merge' or 'radix'
   * force one ('radix', the earlier way, kept to measure against; 'merge' is refused where its
   * workgroup cannot run).
   */
  readonly selectionSortVariant: 'auto' | 'merge' | 'radix';
}

/** The values of the policy's `selectionSortVariant`. */
const selectionSortVariants: readonly TopKPolicy['selectionSortVariant'][] = ['auto', 'merge', 'radix'];
/** The values of the policy's `radixPick`, `radixFinalizeInFilter` and `reduceLastChunkMerges`. */
const autoAlwaysNever: readonly TopKPolicy['radixPick'][] = ['auto', 'always', 'never'];

/** Radix-select state words per segment (problem.ts). */
export const radixStateWords = 32;
/**
 * The words of a segment's radix-select state, named once for both twins (the WGSL gets them as
 * constants, webgpu/radix-common.ts): offsets from the segment's first state word.
 */
export const radixState = {
  /** 1 when init found a sampled threshold (pass 0 collects the keys that reach it), else 0. */
  mode: 0,
  /** The sampled threshold (ordered key bits). */
  threshold: 1,
  /** Keys pass 0 collected past the sampled threshold (an append counter). */
  collected: 2,
  /**
   * Pass-0 workgroups of a sampled segment that have finished their tiles (an arrival counter): the
   * last to arrive adds the keys below T to the digit-0 histogram where fewer than take reached T.
   */
  arrived: 3,
  /** Keys the filter of digit p selected: word `selectedByPass + p`. */
  selectedByPass: 8,
  /** Candidates the filter of digit p kept for the next digit: word `keptByPass + p`. */
  keptByPass: 16,
  /**
   * Workgroups of the last filter launch that had input and are done (an arrival counter), where
   * that launch also finalizes (`radixFoldsFinalize`): the last to arrive takes the last digit.
   */
  filterArrived: 4,
  /**
   * Finalize left the selection to the compaction launches (radix-plan.ts): 1, with the selection's
   * threshold (ordered key bits: every key above it is selected) and how many keys equal to it are
   * taken, the smallest indices first.
   */
  compactPending: 5,
  compactThreshold: 6,
  compactTies: 7,
} as const;
/**
 * Whether radix-select's pass 0 takes a misleading sampled threshold's histogram in its last
 * workgroup, with no 'radix-fallback' launch (policy `radixFoldFallbackMaxItems`): the plan's
 * launches and both backends' pass 0 read it.
 */
export function radixFoldsFallback(maxSegmentSize: number, policy: Pick<TopKPolicy, 'radixFoldFallbackMaxItems'>): boolean {
  return maxSegmentSize <= policy.radixFoldFallbackMaxItems;
}

/**
 * Whether radix-select's last filter launch also finalizes (policy `radixFinalizeInFilter`): under
 * 'auto' where filter pass 0's pick is built and every segment's sampled candidates are expected to
 * fit it (a sample step of at most 256 keys: see radixSample; past 256 radixSampleCap keys, a sample
 * over several workgroups for takes up to kMax), so that finalize would find the
 * outputs written. Digits of at most 11 bits make three passes or more, so the last filter is never
 * digit 0's, which may carry the pick: its program holds finalize's code and not the pick's (both in
 * one program took Mesa's lavapipe minutes to compile). The plan's launches, and so both backends'
 * filters, follow it.
 */
export function radixFoldsFinalize(
  policy: Pick<TopKPolicy, 'radixFinalizeInFilter' | 'workgroupSize' | 'radixInitWorkgroups' | 'tileItems'>,
  plan: { readonly pickBuilt: boolean; readonly maxSegmentSize: number; readonly kMax: number },
): boolean {
  if (policy.radixFinalizeInFilter !== 'auto') return policy.radixFinalizeInFilter === 'always';
  if (!plan.pickBuilt) return false;
  const cap = radixSampleCap(policy.workgroupSize);
  if (plan.maxSegmentSize <= 256 * cap) return true;
  // Longer segments keep a step of 256 through a sample over several workgroups, for takes up to kMax.
  const widest = radixSample(plan.maxSegmentSize, Math.min(plan.kMax, plan.maxSegmentSize), cap, policy.tileItems, false, radixSampleWideOf(policy));
  return widest !== undefined && widest.step <= 256;
}

/** Most radix-select passes (radixBits >= 4). */
export const radixMaxPasses = 8;

/** Samples radix-select estimates its pass-0 threshold from, at most: 32 registers per GPU invocation, and 8192. */
export function radixSampleCap(workgroupSize: number): number {
  return Math.min(8192, 32 * workgroupSize);
}

/**
 * The leading bits of the sample's j-th largest ordered key that the sampled threshold keeps (both
 * backends): whole digits of `radixBits` bits, at least 22 (a relative step of 2^-13 for f32 keys),
 * the rest zero. The GPU's init finds them in ceil(22 / radixBits) rounds of selection in workgroup
 * memory, 2 with 11-bit digits; all 32 bits took four 8-bit rounds and held most of the init's time,
 * and a lower threshold only lets a few more keys reach it.
 */
export function radixSampleBits(radixBits: number): number {
  return Math.min(32, Math.ceil(22 / radixBits) * radixBits);
}

/**
 * Neighbouring keys a sample takes together (radixSamplePosition): one 32-byte sector of f32 keys.
 * A key at a time, every sample cost a memory sector of its own, and one workgroup's misses in flight
 * bounded the init (~0.018 ms of a 64x151936 plan on an H200).
 */
export const radixSampleRun = 8;

/** Where sample i of a segment lies (both backends): runs of radixSampleRun keys, a run every radixSampleRun * step keys. */
export function radixSamplePosition(i: number, step: number): number {
  return Math.floor(i / radixSampleRun) * radixSampleRun * step + (i % radixSampleRun);
}

/**
 * The largest sample rank j (radixSample) whose threshold radix-init takes as the j-th largest of its
 * invocations' own largest samples rather than by a radix select over every sample (both backends:
 * the CPU twin's sampledThreshold groups the sample as the GPU's invocations hold it). At most the
 * sample's j-th largest, so at least as many keys reach it, and more the more of the top j samples
 * share an invocation: past 16 that cost more than the rank saved. The select's two rounds of
 * histograms and digit choices took ~7.5 of init's ~13 us on an H200 (launch profile, 64x151936
 * k=50). H200, GPU ms of the call (2026-11-29, two rounds; rounds / rank): 1x16M k=100 (j = 9)
 * 0.1033-0.1034 / 0.0998-0.1001, 64x151936 k=50 (j = 11) 0.0686-0.0687 / 0.0672-0.0679, but
 * 256x262144 k=256 (j = 20) 0.1598-0.1609 / 0.1656-0.1659.
 */
export const radixSampleRankMaxJ = 16;

/** The largest rank radix-init ranks among its `workgroupSize` invocations' largest samples (both twins). */
export function radixSampleRankedMaxJ(workgroupSize: number): number {
  return Math.min(radixSampleRankMaxJ, workgroupSize);
}

/** Least segment size radix-select's init samples a threshold of (radixSample; webgpu/radix-init.ts). */
export const radixSampleMinItems = 1024;

/**
 * The sample radix-select's init takes of a segment (both backends): m keys (a multiple of
 * radixSampleRun) at radixSamplePosition(i, step) from its start, about one key in `step`, and the
 * rank j (from the top) of the threshold among them, chosen so that about 1.5 take + 8 step keys
 * reach it. Where filter pass 0's pick takes at most `pickItems` candidates (the plan builds it:
 * tileItems; else 0) and that rank would send more than halfway from take to pickItems, j is the
 * rank halfway instead, if that keeps three standard deviations of the count (about step sqrt(j))
 * above take ({@link radixSampleMidRank}); and from a take of 512, where it leaves fewer than 3.5,
 * j rises toward 3.5, up to that halfway rank ({@link radixSampleFloorRank}). Undefined (no
 * threshold) for segments under 1024 keys, take above size / 4 (size / 16 where `compacted`: a take
 * the compaction launches write, {@link radixSampleCompactedDivisor}), or a rank past half the sample.
 */
export function radixSample(
  size: number,
  take: number,
  cap: number,
  pickItems = 0,
  compacted = false,
  wide: RadixSampleWide = { workgroups: 1, maxJ: 0 },
): { m: number; step: number; j: number; parts: number } | undefined {
  if (size < radixSampleMinItems || take === 0 || take > Math.floor(size / radixSampleDivisor(compacted))) return undefined;
  const shape = (most: number) => {
    const m = Math.floor(most / radixSampleRun) * radixSampleRun;
    const step = Math.floor(size / m);
    const j = radixSampleFloorRank(Math.min(8 + Math.floor((3 * take + 2 * step - 1) / (2 * step)), radixSampleMidRank(take, step, pickItems)), take, step, pickItems);
    return { m, step, j, parts: Math.ceil(m / cap) };
  };
  const one = shape(Math.min(cap, Math.max(256, size >>> 5)));
  // A wider sample over several workgroups, where its rank is one they find together.
  if (wide.workgroups > 1 && size >>> radixSampleWideShift > one.m) {
    const spread = shape(Math.min(wide.workgroups * cap, size >>> radixSampleWideShift));
    if (spread.j <= wide.maxJ && spread.j * 2 <= spread.m) return spread;
  }
  return one.j * 2 > one.m ? undefined : one;
}

/**
 * The sample's reach past one workgroup (policy `radixInitWorkgroups`): up to that many workgroups,
 * each sampling up to radixSampleCap keys, take one key in 2^radixSampleWideShift (256) where a
 * segment is long enough, so that about 1.5 take + 8 x 256 keys reach the threshold and filter
 * pass 0's pick takes them; only where the threshold's rank j is at most `maxJ`
 * (radixSampleRankedMaxJ), whose ranked threshold the workgroups' lists give.
 */
export interface RadixSampleWide {
  readonly workgroups: number;
  readonly maxJ: number;
}

/** log2 of the sample step a sample over several workgroups keeps (radixSample). */
export const radixSampleWideShift = 8;

/** radix-init's sample over several workgroups under `policy` (radixSample's `wide`). */
export function radixSampleWideOf(policy: Pick<TopKPolicy, 'radixInitWorkgroups' | 'workgroupSize'>): RadixSampleWide {
  const maxJ = radixSampleRankedMaxJ(policy.workgroupSize);
  // The last workgroup to arrive ranks every list at once, an entry an invocation.
  return { workgroups: Math.max(1, Math.min(policy.radixInitWorkgroups, Math.floor(policy.workgroupSize / maxJ))), maxJ };
}

/**
 * radix-init's workgroups a segment of up to `maxSegmentSize` keys: enough for a sample of one key
 * in 256 (radixSample), at most `radixInitWorkgroups`; 1 where one workgroup's sample reaches that.
 */
export function radixInitParts(maxSegmentSize: number, policy: Pick<TopKPolicy, 'radixInitWorkgroups' | 'workgroupSize'>): number {
  const cap = radixSampleCap(policy.workgroupSize);
  const most = Math.floor(Math.min(radixSampleWideOf(policy).workgroups * cap, maxSegmentSize >>> radixSampleWideShift) / radixSampleRun) * radixSampleRun;
  return Math.max(1, Math.ceil(most / cap));
}

/**
 * Words of a segment's `sampleMerge` slot (radix-init over several workgroups): its arrival count,
 * then each workgroup's list of radixSampleRankedMaxJ published keys (two words each: the status
 * and a half of the key in each, dispatch/published-words.ts).
 */
export function radixSampleMergeWords(parts: number, workgroupSize: number): number {
  return 1 + parts * radixSampleRankedMaxJ(workgroupSize) * 2;
}

/**
 * A take past the tile that the compaction launches write (radix-plan.ts `radixCompacts`) samples a
 * threshold only up to a sixteenth of its segment, not a quarter: there every key is read again by
 * the compaction, and the sample's rank search and pass 0's collection cost more than they save
 * the filters. H200, sorted top-k, GPU ms (bench/sort-webgpu.ts --topk, 2026-12-01, two rounds;
 * sampled up to a quarter / an eighth / a sixteenth / never): 2x2097152 k=500000 0.311-0.313 /
 * 0.298-0.300 / 0.282-0.300 / 0.280-0.298, 8x1048576 k=262144 0.431-0.432 / 0.418 / 0.416 /
 * 0.417-0.419, 4x1048576 k=131072 (launch profile, one pass) 0.199 / - / 0.193 / 0.192; where the
 * take is a small part of the segment the sample pays: 1x4194304 k=100000 0.160-0.168 / 0.161-0.164
 * / 0.161 / 0.172-0.173, 16x1048576 k=20000 0.284-0.287 / 0.284-0.285 / 0.285-0.286 / 0.373,
 * 4x4194304 k=65600 0.322-0.323 / 0.321-0.323 / 0.321-0.325 / 0.417-0.420.
 */
export const radixSampleCompactedDivisor = 16;

/** The part of its segment a take samples a threshold up to: a quarter, or a sixteenth for a take the compaction writes. */
export const radixSampleDivisor = (compacted: boolean) => (compacted ? radixSampleCompactedDivisor : 4);

/** Least take radix-init raises its sample rank for ({@link radixSampleFloorRank}). */
export const radixSampleFloorMinTake = 512;

/**
 * Where filter pass 0's pick takes up to `pickItems` candidates (take <= pickItems, step <= 256) and
 * take is at least {@link radixSampleFloorMinTake}, the rank j raised, one at a time, until the
 * count's mean (j step) is 3.5 spreads (step sqrt(j)) above take, but not past the rank halfway to
 * pickItems; else j. A row whose count falls below take takes the fallback and every digit pass, and
 * a call of many rows meets one: 64x65536 k=512 (j = 32, 2.8 spreads) had one row of 64 collect
 * 476 keys on the bench's keys. Smaller takes keep their rank: the 8 ranks j adds to 1.5 take, and
 * the ranked threshold of j <= 16 (never above the sample's j-th largest), leave them further from
 * take, and raising it cost them candidates. H200 (GPU ms, 2026-11-30, two rounds; j as before /
 * 3.5 spreads / 4 spreads, every take): 64x65536 k=512 0.0741-0.075 / 0.0517-0.0522 /
 * 0.0512-0.0522, k=1024 0.0506-0.0513 / 0.051-0.052 / 0.0524-0.053, k=2048 (at the halfway rank
 * already) unchanged; 64x151936 k=50 0.0675-0.0685 / 0.0698-0.07 / 0.0718-0.0719 and 256x262144
 * k=256 0.1597-0.1605 / 0.1672-0.1678 / 0.169-0.1697, hence the least take. Integer arithmetic, as
 * radix-init computes it (every product stays under 2^32 for tiles of up to 2^14 keys).
 */
export function radixSampleFloorRank(j: number, take: number, step: number, pickItems: number): number {
  if (take < radixSampleFloorMinTake || take > pickItems || step > 256) return j;
  const top = Math.floor((take + pickItems) / (2 * step));
  let rank = j;
  while (rank < top && (rank * step <= take || 4 * (rank * step - take) ** 2 < 49 * step * step * rank)) rank++;
  return rank;
}

/**
 * The sample rank halfway between take and the pick's `pickItems` candidates (the count of keys at
 * or above the sample's j-th largest is about j step, spread about step sqrt(j)), where that keeps
 * three spreads above take; else no bound (Infinity). Integer arithmetic, as radix-init computes it.
 * Sparse-attention indexers (64x65536 k = 2048: step 32) sampled j = 104, about 3340 candidates a
 * row: 8 of 512 rows passed the pick's 4096 and took the digit passes, in most calls of 64 rows (the
 * CPU twin, random keys); j = 96 puts both edges about 3.3 spreads away: 3076 candidates a row,
 * spread 305, 4 of 2304 rows past the tile and none below take (the CPU twin, random keys). H200
 * (GPU ms of the call, 2026-11-30, two rounds), on keys where a row had passed the tile: 64x65536
 * k=2048 0.0902-0.0903 -> 0.0668-0.067 (finalize 0.025 -> 0.0077, idle again); on the bench's keys,
 * where none had, 0.067-0.0671 -> 0.0663-0.0665 (fewer candidates to pick), 32x131072 0.0667-0.0668
 * -> 0.0659-0.0663.
 */
export function radixSampleMidRank(take: number, step: number, pickItems: number): number {
  if (take > pickItems || step > 256) return Infinity;
  const mid = Math.floor((take + pickItems) / (2 * step));
  const gap = mid * step - take;
  return gap > 0 && gap * gap >= 9 * step * step * mid ? mid : Infinity;
}

/**
 * Ordered keys of a segment's digit-0 threshold bucket that row-radix keeps in workgroup memory (the
 * room of its selection sort, free until the collect); a larger bucket goes to temporary storage.
 */
export function rowRadixCandidateRoom(policy: Pick<TopKPolicy, 'tileItems'>): number {
  return 2 * policy.tileItems;
}

/** Radix-select passes for a digit width. */
export function radixPasses(bits: number): number {
  return Math.ceil(32 / bits);
}

/**
 * Workgroup memory the radix-select kernels need: finalize's sort (tileItems keys and indices, with
 * the sort's pad words), one 2^bits-bin histogram, a scan of workgroupSize words and a few words more.
 */
export function radixWorkgroupBytes(policy: Pick<TopKPolicy, 'tileItems' | 'radixBits' | 'workgroupSize'>): number {
  return sortSlotsFor(policy.tileItems) * 8 + Math.max(256, 2 ** policy.radixBits) * 4 + policy.workgroupSize * 4 + 256;
}

/**
 * Static limits every built-in policy lies within. `TopKVariantsFor` reads the same numbers as
 * literal types, so compile-time pruning can never rule out what a policy picks.
 */
export const topKPolicyLimits = {
  /** Every policy's `reduceMaxK`. */
  reduceMaxK: 8,
  /**
   * Reduce keeps every call with `kMax` at most this (register lists of up to 4 entries); a larger
   * `kMax` over rows longer than `reduceShortRowMaxItems` keys gives way to the radix selects where
   * the call holds at least the policy's `reduceLongListRadixItems` keys.
   */
  reduceShortListMaxK: 4,
  /** See `reduceShortListMaxK`. */
  reduceShortRowMaxItems: 65535,
  /** The smallest `tileItems` of any policy (16 KiB of workgroup memory). */
  minTileItems: 1024,
  /** The largest `tileItems` of any policy (48 KiB or more). */
  maxTileItems: 4096,
} as const;

/**
 * The tile a workgroup-memory size allows: keys and indices (8 bytes an item) plus 4 KiB for the
 * histogram and counters, rounded down to a power of two and kept within the limits above.
 * 16 KiB -> 1024, 32 KiB -> 2048, 48 KiB and more -> 4096.
 */
export function tileItemsFor(workgroupStorageBytes: number): number {
  const fits = Math.max(0, Math.floor((workgroupStorageBytes - 4096) / 8));
  let tile = topKPolicyLimits.minTileItems;
  while (tile * 2 <= fits && tile * 2 <= topKPolicyLimits.maxTileItems) tile *= 2;
  return tile;
}

/**
 * The policy for a backend's capabilities (CUB's `policy_selector(cc)`). Workgroup size 256 is the
 * WebGPU default limit and fills an SM's warp schedulers on NVIDIA parts; reduce chunks of 16 items
 * per invocation keep a workgroup busy long enough to hide its launch (measured on H100, bench/gpu,
 * 2026-11); radix digits of 11 bits where their 8 KiB histogram fits beside finalize's sort, else 8.
 */
export function topKPolicyFor(capabilities: BackendCapabilities): TopKPolicy {
  const workgroupSize = Math.min(256, capabilities.maxWorkgroupSize);
  const tileItems = tileItemsFor(capabilities.workgroupStorageBytes);
  // 11-bit digits (CUB's cluster top-k): three passes instead of four, where the histogram fits.
  const radixBits = radixWorkgroupBytes({ tileItems, radixBits: 11, workgroupSize }) <= capabilities.workgroupStorageBytes ? 11 : 8;
  return {
    workgroupSize,
    tileItems,
    reduceMaxK: topKPolicyLimits.reduceMaxK,
    reduceChunkItems: workgroupSize * 16,
    reduceSmallSegmentItems: 32,
    reduceLastChunkMerges: 'auto',
    reduceLongListRadixItems: capabilities.parallelism < rowRadixMinParallelism ? 2 ** 52 : 2 ** 23,
    reduceWorkgroups: Math.max(1, capabilities.parallelism),
    reduceChunkWorkgroups: capabilities.parallelism < rowRadixMinParallelism ? Math.max(1, capabilities.parallelism) : Math.max(1, Math.floor(capabilities.parallelism / 4)),
    radixTileItems: workgroupSize * 16,
    radixBits,
    radixWideDigitItems: 65536,
    // A quarter of the device's workgroup slots: the filter passes mostly read the few keys that
    // reached the sampled threshold, and their idle workgroups cost launch time. Fewer gained little
    // where the sample holds and would leave one workgroup a row to read every key where it misleads
    // (H200, GPU ms, 2026-11-29, two rounds; 256 / 64 / 16 / 4 / 1024): 1x16M k=100 0.110-0.111 /
    // 0.110 / 0.110-0.111 / 0.121 / 0.113, 64x151936 k=50 0.067-0.068 / 0.066-0.070 / 0.064-0.066 /
    // 0.065-0.069 / 0.082, 32x131072 k=2048 0.067-0.068 / 0.066 / 0.065-0.066 / 0.065 / 0.080,
    // 256x262144 k=256 0.160 at every count but 1024 (0.178).
    radixFilterWorkgroups: Math.max(1, Math.ceil(capabilities.parallelism / 4)),
    radixWideWorkgroupSize: Math.min(512, capabilities.maxWorkgroupSize),
    radixWideWorkgroupMinK: 512,
    // H200 (GPU time of init + pass 0, bench/topk-webgpu.ts --tune, 2026-11-28; 1024 / 2048 / 4096
    // (this) / 8192 workgroups / one a tile): 1x16M k=100 0.0656 / 0.0645 / 0.0658 / 0.0711 / 0.0712
    // ms, 256x262144 k=256 0.152 / 0.147 / 0.145 / 0.147 / 0.159, 64x151936 k=50 0.044 / 0.047 /
    // 0.049 / 0.045 / 0.048 (noisy), 32x131072 k=2048 0.032-0.033 at every count.
    // A backend of few workgroup slots (the CPU emulator) keeps a workgroup a tile: its threads keep
    // no loads in flight to gain from, and its pass 0 over fewer, longer workgroups measured no
    // faster (2 cores, bench/topk-cpu.ts, 2026-11-28, a run each: 1x4M k=100 2.6 -> 4.2 ms,
    // 64x32768 k=2048 11.7 -> 14.8; a workgroup a tile again, 3.0 and 11.5; runs vary by ~25% here).
    radixHistogramWorkgroups: capabilities.parallelism < rowRadixMinParallelism ? 2 ** 30 : 4 * capabilities.parallelism,
    radixFoldFallbackMaxItems: 131072,
    radixInitWorkgroups: 8,
    rowRadixMaxItems: rowRadixDefaults.maxItems,
    rowRadixPastTileMaxItems: rowRadixDefaults.pastTileMaxItems,
    rowRadixMaxTotalItems: rowRadixDefaults.maxTotalItems,
    rowRadixWorkgroupSize: rowRadixWorkgroupSizeFor(capabilities, { tileItems, radixBits }),
    rowRadixWideItems: rowRadixDefaults.wideItems,
    rowRadixWideMinK: rowRadixDefaults.wideMinK,
    rowRadixFewRows: rowRadixDefaults.fewRows,
    rowRadixFewRowsMaxItems: rowRadixDefaults.fewRowsMaxItems,
    radixCandidateSelect: radixCandidateSelectDefaults.unsorted,
    radixCandidateSelectSorted: radixCandidateSelectDefaults.sorted,
    radixCompactPastTile: gpuClass(capabilities),
    // A GPU's dispatch is what folding saves; on a software adapter the combined program compiles
    // slowly (Mesa's lavapipe: 10-45 s each, against under a second for the two programs apart).
    radixFinalizeInFilter: gpuClass(capabilities) ? 'auto' : 'never',
    radixPick: 'auto',
    radixPickSpread: 8,
    rankSortMinItems: 1024,
    selectionSortVariant: 'auto',
  };
}

/**
 * The largest row-radix workgroup, at most 1024 invocations (its collect packs two counts of up to
 * 32 keys an invocation into one word of 16-bit halves), whose workgroup memory fits the backend. On
 * a device of few workgroup slots (parallelism under 128: the CPU emulator, a software rasterizer
 * such as lavapipe, which run an invocation at a time per thread and gain nothing from loads in
 * flight), 256 at most.
 */
function rowRadixWorkgroupSizeFor(capabilities: BackendCapabilities, policy: Pick<TopKPolicy, 'tileItems' | 'radixBits'>): number {
  let size = Math.min(capabilities.parallelism >= 128 ? rowRadixMaxWorkgroupSize : 256, capabilities.maxWorkgroupSize);
  while (size > 1 && rowRadixWorkgroupBytes({ ...policy, rowRadixWorkgroupSize: size }) > capabilities.workgroupStorageBytes) size = Math.floor(size / 2);
  return size;
}

/** The most invocations of a row-radix workgroup. */
export const rowRadixMaxWorkgroupSize = 1024;

/**
 * Workgroup memory of the row-radix kernel: the candidates, then the selection's keys and indices
 * (2 tileItems words and the sort's pad words), a 2^bits-bin histogram, a scan of
 * rowRadixWorkgroupSize words, a few words more.
 */
export function rowRadixWorkgroupBytes(policy: Pick<TopKPolicy, 'tileItems' | 'radixBits' | 'rowRadixWorkgroupSize'>): number {
  return sortSlotsFor(policy.tileItems) * 8 + Math.max(256, 2 ** policy.radixBits) * 4 + policy.rowRadixWorkgroupSize * 4 + 256;
}

/**
 * row-radix's default bounds, from GPU time against radix-select on an H200 (Dawn/Vulkan,
 * bench/topk-webgpu.ts --variants, sorted output, tileItems 2048; ms row-radix / radix-select).
 * 2026-11-23 22:10 UTC, after radix-select's sampled first filter and faster finalize: 64x32768
 * k=2048 0.114 / 0.131, 64x65536 k=2048 0.151 / 0.139, 64x32768 k=4096 0.127 / 0.154, 16x65536
 * k=10000 0.249 / 0.280, 32x131072 k=2048 0.241 / 0.135, ragged 128x(1..65536) k=512 0.147 / 0.118.
 * Earlier (19:00): attention 512x(16..8192) k=256 0.105 / 0.142 (256 invocations; 1024: 0.173),
 * 64x151936 k=50 0.189 / 0.112, 256x262144 k=256 0.714 / 0.317. 2026-11-24, after the workgroup
 * sort's padded, wider rounds (blocks.ts) and row-radix's passes written out over registers
 * (tileItems 4096): 64x32768 k=2048 0.070 / 0.096, 64x65536 k=2048 0.095 / 0.102, 64x32768 k=4096
 * 0.085 / 0.140, 16x65536 k=10000 0.227 / 0.281, attention 512x(16..8192) k=256 0.108 / 0.140;
 * before the registers, 32x131072 k=2048 0.230 / 0.101 (32 rows keep 32 multiprocessors busy).
 * Rows up to 64K keys (wide rows, past 16K, only for kMax of at least 1024), calls up to 16M keys.
 */
/**
 * Workgroup slots (`capabilities.parallelism`) below which row-radix is never the natural choice: on the CPU emulator (2 cores, 2026-11-23, ms row-radix /
 * radix-select) 128x4096 k=64 8.5 / 3.4, 64x32768 k=2048 24.2 / 11.3, 512x8192 k=256 61.4 / 22.1,
 * 64x32768 k=4096 35.1 / 32.9, 16x65536 k=10000 18.0 / 18.8: one workgroup per row runs its row's
 * passes alone where radix-select's launches share each pass among every workgroup. A software
 * rasterizer such as lavapipe reports as few. Forcing row-radix still runs it. (bench/topk-cpu-variants.ts)
 */
export const rowRadixMinParallelism = gpuClassMinParallelism;

/**
 * `fewRows`, `fewRowsMaxItems` (rowRadixFewRows, rowRadixFewRowsMaxItems): a call of fewer than 128
 * rows keeps fewer than one row-radix workgroup per multiprocessor of a large GPU (an H200 has 132),
 * where radix-select spreads every row over the device; past 32768 keys a row its launches win when
 * the selection fits the tile. On the H200 (GPU ms, bench/topk-webgpu.ts --tune, 2026-11-28 23:35
 * UTC, two rounds, row-radix / radix-select): 64x65536 k=2048 0.096 / 0.087 sorted and 0.079 /
 * 0.076 unsorted; 64x32768 k=4096 0.083 / 0.108 (stays). A selection past the tile is not held to
 * it (row-radix keeps `rowRadixPastTileMaxItems`): 16x65536 k=10000 0.128 / 0.152 sorted and
 * 0.085 / 0.110 unsorted, where radix-select sorts its selection in launches of its own. Measure
 * with `--tune='few64k={"policy":{"rowRadixFewRowsMaxItems":65536}}'` against the default.
 */
export const rowRadixDefaults = { maxItems: 65536, pastTileMaxItems: 65536, maxTotalItems: 16777216, wideItems: 16384, wideMinK: 1024, fewRows: 128, fewRowsMaxItems: 32768 } as const;

/**
 * radixCandidateSelect's defaults. Unsorted: the select replaces a sort of every candidate (3.3K
 * for k = 2048, 0.036 ms of the 0.093 of 32x131072 k=2048 on the H200, sorted) and finalize's sort
 * of the selection by index, with three histogram rounds over at most a tile in workgroup memory.
 * H200, radix-select with unsorted output (GPU ms, 2026-11-28 11:20 UTC, two rounds): 32x131072
 * k=2048 0.101 -> 0.083, 64x65536 k=2048 0.104 -> 0.086; so on. Sorted: the select and a sort of
 * the take (padded to 2048) instead of the sort of the candidates (padded to 4096) measured the
 * same (32x131072 0.0935 against 0.0932; 256x262144 k=256 0.266 against 0.248, slower), so off;
 * again with the select over distances (2026-11-30, select / sort): 64x151936 k=50 0.069 / 0.0668,
 * 256x262144 k=256 0.1748 / 0.1604, 64x65536 and 32x131072 k=2048 0.0599 / 0.0548 and 0.0578 /
 * 0.0536. Compare `--tune='selsorted={"policy":{"radixCandidateSelectSorted":true}}'`.
 */
export const radixCandidateSelectDefaults = { unsorted: true, sorted: false } as const;

/**
 * How radix-select's filter pass 0 picks the best take among candidates that fit a tile (both
 * twins): 'select' (a radix select; the selection written in index order when unsorted, in rank
 * order when sorted) or 'sort' (every candidate sorted, the first take written in rank order).
 */
export function radixCandidateShortcut(policy: Pick<TopKPolicy, 'radixCandidateSelect' | 'radixCandidateSelectSorted'>, sorted: boolean): 'select' | 'sort' {
  return (sorted ? policy.radixCandidateSelectSorted : policy.radixCandidateSelect) ? 'select' : 'sort';
}

/** Whether a plan's radix-select filter pass 0 carries the pick (policy `radixPick`), and why, for explain(). */
export interface RadixPick {
  readonly built: boolean;
  readonly why: string;
}

/**
 * Whether radix-select's filter pass 0 carries its pick (policy `radixPick`), from what the host
 * knows: the least segment size (host values or host runtime bounds, else the static bounds: a
 * device-only size has only those), the least k and kMax. Under 'auto' the pick is built where every
 * segment samples a threshold: radix-init samples a segment of `size` keys taking `take` =
 * min(k, size) when size >= 1024 and take <= floor(size / 4) (and take > 0, which k >= 1 gives), so
 * sizeMin >= 1024 and kMax <= floor(sizeMin / 4) cover every segment. Its last condition, that the
 * threshold's rank j is within half the sample (`j * 2 <= m`, radixSample), follows from those two
 * wherever the sample may hold 256 keys or more (radixSampleCap of a workgroup of at least 8
 * invocations; test/topk-policy.test.ts checks every size from 1024 to 2^21 at take floor(size / 4),
 * the largest, which gives the largest j; past 2^21 step is at least 256, so j <= 9 + 0.377 m, within
 * half of m >= 256): with a smaller cap 'auto' does not build it. Nor where every take exceeds the tile (min(kMin, sizeMin) > tileItems):
 * the pick needs a take of at most a tile and could never run. The pick never runs where ties are
 * taken as found, so it is built under no value then.
 */
export function radixPickOf(
  policy: Pick<TopKPolicy, 'radixPick' | 'tileItems' | 'workgroupSize'>,
  facts: { readonly sizeMin: number; readonly kMin: number; readonly kMax: number },
  tiesAsFound: boolean,
): RadixPick {
  if (tiesAsFound) return { built: false, why: "ties are taken as found (tieBreak 'any', determinism 'not-guaranteed'), and the pick takes them by index" };
  if (policy.radixPick === 'always') return { built: true, why: "tuning.policy.radixPick 'always'" };
  if (policy.radixPick === 'never') return { built: false, why: "tuning.policy.radixPick 'never'" };
  const { sizeMin, kMin, kMax } = facts;
  const cap = radixSampleCap(policy.workgroupSize);
  const auto = "radixPick 'auto' builds it only where every segment samples a threshold";
  const quarter = Math.floor(sizeMin / 4);
  if (sizeMin < radixSampleMinItems) {
    return { built: false, why: `${auto}, and the least segment size the host knows is ${sizeMin} (< ${radixSampleMinItems}): such a segment samples none, and finalize sorts its selection anyway` };
  }
  if (kMax > quarter) {
    return { built: false, why: `${auto}, and kMax ${kMax} > ${quarter} (a quarter of the least segment size ${sizeMin}): such a segment samples none` };
  }
  if (cap < 256) {
    return { built: false, why: `${auto}, and radix-init's sample of at most ${cap} keys (workgroupSize ${policy.workgroupSize}) may find none` };
  }
  if (Math.min(kMin, sizeMin) > policy.tileItems) {
    return { built: false, why: `radixPick 'auto', and every segment takes at least ${Math.min(kMin, sizeMin)} keys, more than the tile of ${policy.tileItems} the pick holds: it could never run` };
  }
  return { built: true, why: `radixPick 'auto', and every segment samples a threshold: segments of at least ${sizeMin} keys (>= ${radixSampleMinItems}), kMax ${kMax} <= ${quarter} (a quarter of ${sizeMin})` };
}

/** The facts the selector reads: effective bounds, after every static and host runtime bound. */
export interface TopKSelectorFacts {
  /** Bounds of `kMax` (the output width) and of each segment's `k`. */
  readonly k: Bounds;
  /** Bounds of the segment sizes known on the host. */
  readonly segmentSize: Bounds;
  /** Whether tighter segment-size bounds exist on the device only (a uniform branch can use them). */
  readonly segmentSizeDeviceBounds: boolean;
  /** Most segments of the call (default 1): how many workgroups the segments alone make. */
  readonly maxSegments?: number;
  /**
   * Whether the requirements let tied keys be taken as found (tieBreak 'any' under 'not-guaranteed'):
   * radix-select then builds no pick (radixPickOf). Default false.
   */
  readonly tiesAsFound?: boolean;
}

/** The selector's answer: the chosen variant, its policy, every variant's verdict. */
export type TopKSelection = VariantSelection<TopKVariant, TopKPolicy>;

/**
 * The policy selector: a pure function from parameter facts and backend capabilities to a variant
 * and its policy. Thresholds are the policy's named values; a forced variant (tuning) wins when it
 * is applicable, else throws with the reason.
 *
 * reduce when `kMax <= reduceMaxK` (a handful of rounds beat any sort), unless kMax is past
 * `reduceShortListMaxK` over rows longer than `reduceShortRowMaxItems` keys and the call holds at least
 * `reduceLongListRadixItems` keys (`topKPolicyLimits`, policy); single-tile when every
 * segment fits one workgroup's tile; row-radix when rows are at most `rowRadixMaxItems` keys
 * (`rowRadixPastTileMaxItems` when kMax exceeds the tile; rows past `rowRadixWideItems` only for
 * kMax >= `rowRadixWideMinK`) and the call at most
 * `rowRadixMaxTotalItems` (one workgroup per row: its passes re-read the row from cache);
 * radix-select otherwise.
 */
export function selectTopKVariant(
  facts: TopKSelectorFacts,
  capabilities: BackendCapabilities,
  tuning: { variant?: TopKVariant; policy?: Partial<TopKPolicy> } = {},
): TopKSelection {
  const policy: { -readonly [P in keyof TopKPolicy]: TopKPolicy[P] } = { ...topKPolicyFor(capabilities), ...tuning.policy };
  checkPolicy(policy, capabilities);
  const kMax = facts.k.max;
  const maxSize = facts.segmentSize.max;
  const tileFits = maxSize <= policy.tileItems;
  const tileMayFit = facts.segmentSizeDeviceBounds && facts.segmentSize.min <= policy.tileItems;
  const totalItems = (facts.maxSegments ?? 1) * maxSize;
  // Reduce runs any kMax up to reduceMaxK, and is preferred there unless its lists of 8 would read a
  // long call (policy reduceLongListRadixItems).
  const reduceRuns = kMax <= policy.reduceMaxK;
  const longLists = kMax > topKPolicyLimits.reduceShortListMaxK && maxSize > topKPolicyLimits.reduceShortRowMaxItems && totalItems >= policy.reduceLongListRadixItems;
  const reduceFits = reduceRuns && !longLists;
  const reduceGivesWay = `kMax ${kMax} > ${topKPolicyLimits.reduceShortListMaxK} over rows of up to ${maxSize} keys (> ${topKPolicyLimits.reduceShortRowMaxItems}), ${totalItems} keys in all >= reduceLongListRadixItems ${policy.reduceLongListRadixItems}: reduce's lists of 8 cost more per key than the radix selects`;
  const wideRows = maxSize > policy.rowRadixWideItems;
  // A selection past the tile: row-radix keeps ahead on longer rows (radix-select sorts it in launches of its own).
  const pastTile = kMax > policy.tileItems;
  const rowLimit = pastTile ? `rowRadixPastTileMaxItems ${policy.rowRadixPastTileMaxItems} (kMax ${kMax} > tile ${policy.tileItems})` : `rowRadixMaxItems ${policy.rowRadixMaxItems}`;
  const rowMaxItems = pastTile ? policy.rowRadixPastTileMaxItems : policy.rowRadixMaxItems;
  const manySlots = capabilities.parallelism >= rowRadixMinParallelism;
  const fewRows = (facts.maxSegments ?? 1) < policy.rowRadixFewRows;
  const fewRowsFit = !fewRows || pastTile || maxSize <= policy.rowRadixFewRowsMaxItems;
  const rowFits = manySlots && maxSize <= rowMaxItems && fewRowsFit && totalItems <= policy.rowRadixMaxTotalItems && (!wideRows || kMax >= policy.rowRadixWideMinK);
  const rowReason = !rowFits
    ? !manySlots
      ? `the backend has ${capabilities.parallelism} workgroup slots (< ${rowRadixMinParallelism}): one workgroup per row would run its passes alone`
      : maxSize > rowMaxItems
      ? `max segment size ${maxSize} > ${rowLimit}`
      : !fewRowsFit
      ? `${facts.maxSegments ?? 1} segments (< rowRadixFewRows ${policy.rowRadixFewRows}) of up to ${maxSize} keys > rowRadixFewRowsMaxItems ${policy.rowRadixFewRowsMaxItems}`
      : totalItems > policy.rowRadixMaxTotalItems
        ? `${facts.maxSegments ?? 1} segments of up to ${maxSize} keys (${totalItems}) > rowRadixMaxTotalItems ${policy.rowRadixMaxTotalItems}`
        : `rows past rowRadixWideItems ${policy.rowRadixWideItems} (max segment size ${maxSize}) with kMax ${kMax} < rowRadixWideMinK ${policy.rowRadixWideMinK}`
    : `max segment size ${maxSize} <= ${rowLimit}${wideRows ? ` with kMax ${kMax} >= rowRadixWideMinK ${policy.rowRadixWideMinK}` : ''}, ${totalItems} keys in all <= rowRadixMaxTotalItems ${policy.rowRadixMaxTotalItems}`;

  const verdicts: VariantVerdict<TopKVariant>[] = [
    {
      variant: 'reduce',
      applicable: reduceRuns,
      reachable: reduceFits,
      reason: reduceFits ? `kMax ${kMax} <= reduceMaxK ${policy.reduceMaxK}` : reduceRuns ? reduceGivesWay : `kMax ${kMax} > reduceMaxK ${policy.reduceMaxK}`,
    },
    {
      variant: 'single-tile',
      applicable: tileFits,
      reachable: !reduceFits && (tileFits || tileMayFit),
      reason: reduceFits
        ? `reduce is preferred for kMax <= ${policy.reduceMaxK}`
        : tileFits
          ? `max segment size ${maxSize} <= tile ${policy.tileItems}`
          : tileMayFit
            ? `max segment size ${maxSize} > tile ${policy.tileItems} on the host, but the device bounds may allow it (uniform branch on the device)`
            : `max segment size ${maxSize} > tile ${policy.tileItems}`,
    },
    {
      variant: 'row-radix',
      applicable: true,
      reachable: !reduceFits && !tileFits && rowFits,
      reason: reduceFits
        ? `reduce is preferred for kMax <= ${policy.reduceMaxK}`
        : tileFits
          ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
          : rowReason,
    },
    {
      variant: 'radix-select',
      applicable: true,
      reachable: !reduceFits && !tileFits && !rowFits,
      reason: reduceFits
        ? `reduce is preferred for kMax <= ${policy.reduceMaxK}`
        : tileFits
          ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
          : rowFits
            ? `row-radix is preferred (${rowReason})`
            : 'the general case',
    },
  ];

  const natural: TopKVariant = reduceFits ? 'reduce' : tileFits ? 'single-tile' : rowFits ? 'row-radix' : 'radix-select';
  const chosen = tuning.variant ?? natural;
  if ((chosen === 'radix-select' || chosen === 'row-radix') && tuning.policy?.radixBits === undefined && maxSize < policy.radixWideDigitItems) policy.radixBits = Math.min(policy.radixBits, 8);
  const wide =
    chosen === 'radix-select' && tuning.policy?.workgroupSize === undefined
      ? radixWideWorkgroup(
          policy,
          { kMax, pick: radixPickOf(policy, { sizeMin: facts.segmentSize.min, kMin: facts.k.min, kMax }, facts.tiesAsFound ?? false).built, tunedTileItems: tuning.policy?.radixTileItems },
          capabilities,
        )
      : undefined;
  if (wide !== undefined) {
    policy.workgroupSize = wide.workgroupSize;
    if (tuning.policy?.radixTileItems === undefined) policy.radixTileItems = wide.workgroupSize * 16;
  } else if (chosen === 'radix-select' && tuning.policy?.radixTileItems === undefined) {
    policy.radixTileItems = radixTileItemsFor(facts.maxSegments ?? 1, maxSize, policy, capabilities.parallelism);
  }
  if (chosen === 'row-radix') checkRowRadixPolicy(policy, capabilities, tuning.policy?.rowRadixWorkgroupSize !== undefined, wideRows);
  if (chosen === 'reduce' && tuning.policy?.workgroupSize === undefined && reducePerInvocation(policy, maxSize)) {
    policy.workgroupSize = perInvocationWorkgroupSize(facts.maxSegments ?? 1, policy.workgroupSize, policy.reduceWorkgroups, capabilities);
  } else if (chosen === 'reduce' && tuning.policy?.workgroupSize === undefined) {
    policy.workgroupSize = reduceWorkgroupSize(maxSize, policy.workgroupSize, capabilities);
    if (tuning.policy?.reduceChunkItems === undefined) {
      policy.reduceChunkItems = reduceChunkItemsFor(facts.maxSegments ?? 1, maxSize, policy.workgroupSize * 16, policy.reduceChunkWorkgroups);
    }
  }
  const selection = selectVariant<TopKVariant, TopKPolicy>('top-k', verdicts, natural, policy, tuning.variant);
  return wide === undefined ? selection : { ...selection, why: `${selection.why}; ${wide.why}` };
}

/**
 * Radix-select's wider workgroups (policy `radixWideWorkgroupSize`), where the plan builds filter
 * pass 0's pick (radixPickOf) and kMax reaches `radixWideWorkgroupMinK` on a GPU-class backend, and
 * the size is larger than `workgroupSize`, within the backend's maxWorkgroupSize and its workgroup
 * memory, and a tuned radix tile (`tunedTileItems`) holds whole rows of its invocations; else
 * undefined.
 */
export function radixWideWorkgroup(
  policy: TopKPolicy,
  facts: { readonly kMax: number; readonly pick: boolean; readonly tunedTileItems?: number | undefined },
  capabilities: BackendCapabilities,
): { workgroupSize: number; why: string } | undefined {
  const size = policy.radixWideWorkgroupSize;
  if (!gpuClass(capabilities) || !facts.pick || facts.kMax < policy.radixWideWorkgroupMinK) return undefined;
  if (size <= policy.workgroupSize || size > capabilities.maxWorkgroupSize || radixWorkgroupBytes({ ...policy, workgroupSize: size }) > capabilities.workgroupStorageBytes) return undefined;
  if (facts.tunedTileItems !== undefined && facts.tunedTileItems % size !== 0) return undefined;
  return {
    workgroupSize: size,
    why: `workgroups of ${size} invocations, tiles of ${size * 16} keys (kMax ${facts.kMax} >= radixWideWorkgroupMinK ${policy.radixWideWorkgroupMinK} with the pick built: its one workgroup a segment picks and orders the selection)`,
  };
}

/**
 * Radix-select's pass-0 tile: the policy's, or half of it (at least 8 keys an invocation) where whole
 * tiles would give all segments together fewer than radixFewTilesPerSlot workgroups per workgroup
 * slot. Measured on an H200 (1024 slots), 2026-11-28, GPU ms with 4096- and 2048-key tiles:
 * 1x16M k=100 0.148 / 0.130 (4096 tiles), 64x151936 k=50 0.090 / 0.085 (2432), 32x131072 k=2048
 * 0.098 / 0.094 (1024), ragged 128x(1..65536) k=512 0.102 / 0.098 (2048); 256x262144 k=256 0.247 /
 * 0.262 (16384 tiles: enough workgroups already). 1024-key tiles were slower than 2048 on all four.
 */
export function radixTileItemsFor(maxSegments: number, maxSegmentSize: number, policy: Pick<TopKPolicy, 'radixTileItems' | 'workgroupSize'>, parallelism: number): number {
  const half = policy.radixTileItems / 2;
  const workgroups = Math.max(1, maxSegments) * Math.ceil(maxSegmentSize / policy.radixTileItems);
  return workgroups < radixFewTilesPerSlot * parallelism && half >= policy.workgroupSize * 8 && half % policy.workgroupSize === 0 ? half : policy.radixTileItems;
}

/** See radixTileItemsFor. */
export const radixFewTilesPerSlot = 8;

/**
 * Row-radix's workgroup: one the tuning set must fit the backend (else a usage error naming it); the
 * default shrinks to fit what other tuning values (a larger tile, wider digits) take.
 */
function checkRowRadixPolicy(policy: { -readonly [P in keyof TopKPolicy]: TopKPolicy[P] }, capabilities: BackendCapabilities, tuned: boolean, wideRows: boolean): void {
  if (!tuned) {
    // Rows up to rowRadixWideItems: workgroupSize invocations, so several workgroups share a multiprocessor.
    const widest = rowRadixWorkgroupSizeFor(capabilities, policy);
    policy.rowRadixWorkgroupSize = wideRows ? widest : Math.min(widest, policy.workgroupSize);
    return;
  }
  const most = Math.min(rowRadixMaxWorkgroupSize, capabilities.maxWorkgroupSize);
  if (policy.rowRadixWorkgroupSize > most) {
    throw new SegkitUsageError(`tuning.policy.rowRadixWorkgroupSize: ${policy.rowRadixWorkgroupSize} exceeds ${most} (the backend's maxWorkgroupSize, and at most ${rowRadixMaxWorkgroupSize})`);
  }
  if (rowRadixWorkgroupBytes(policy) > capabilities.workgroupStorageBytes) {
    throw new SegkitUsageError(
      `tuning.policy.rowRadixWorkgroupSize: ${policy.rowRadixWorkgroupSize} invocations with tileItems ${policy.tileItems} and ${policy.radixBits}-bit digits need ${rowRadixWorkgroupBytes(policy)} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`,
    );
  }
}

/** Rejects tuning values the kernels cannot run with. */
function checkPolicy(policy: TopKPolicy, capabilities: BackendCapabilities): void {
  checkPositiveIntegers(policy);
  for (const name of ['radixCandidateSelect', 'radixCandidateSelectSorted', 'radixCompactPastTile'] as const) {
    if (typeof policy[name] !== 'boolean') throw new SegkitUsageError(`tuning.policy.${name}: ${String(policy[name])} is not a boolean`);
  }
  const choices: [keyof TopKPolicy, readonly string[]][] = [
    ['selectionSortVariant', selectionSortVariants],
    ['reduceLastChunkMerges', autoAlwaysNever],
    ['radixFinalizeInFilter', autoAlwaysNever],
    ['radixPick', autoAlwaysNever],
  ];
  for (const [name, values] of choices) {
    if (!values.includes(policy[name] as string)) {
      throw new SegkitUsageError(`tuning.policy.${name}: ${String(policy[name])} is not one of ${values.map((v) => `'${v}'`).join(', ')}`);
    }
  }
  // The workgroup size first: the workgroup memory of the other values follows from it.
  if (policy.workgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} exceeds the backend's maxWorkgroupSize ${capabilities.maxWorkgroupSize}`);
  }
  if (policy.radixWideWorkgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.radixWideWorkgroupSize: ${policy.radixWideWorkgroupSize} exceeds the backend's maxWorkgroupSize ${capabilities.maxWorkgroupSize}`);
  }
  if (policy.radixBits < 4 || policy.radixBits > 11) {
    throw new SegkitUsageError(`tuning.policy.radixBits: ${policy.radixBits} is outside [4, 11] (digits of 4 to 11 bits: 3 to 8 passes)`);
  }
  if (radixWorkgroupBytes(policy) > capabilities.workgroupStorageBytes) {
    throw new SegkitUsageError(
      `tuning.policy.radixBits: ${policy.radixBits}-bit digits with tileItems ${policy.tileItems} need ${radixWorkgroupBytes(policy)} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`,
    );
  }
  if (policy.radixTileItems % policy.workgroupSize !== 0) {
    throw new SegkitUsageError(`tuning.policy.radixTileItems: ${policy.radixTileItems} is not a multiple of workgroupSize ${policy.workgroupSize}`);
  }
  if (policy.tileItems * 8 + 4096 > capabilities.workgroupStorageBytes && policy.tileItems > tileItemsFor(capabilities.workgroupStorageBytes)) {
    throw new SegkitUsageError(
      `tuning.policy.tileItems: ${policy.tileItems} items need ${policy.tileItems * 8 + 4096} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`,
    );
  }
}

/**
 * Whether reduce merges a segment's chunk lists in the chunk launch (policy `reduceLastChunkMerges`;
 * only where segments span several chunks), and why, for explain().
 */
export function reduceMergesInChunks(policy: Pick<TopKPolicy, 'reduceLastChunkMerges'>, kMax: number): { merges: boolean; why: string } {
  const value = policy.reduceLastChunkMerges;
  if (value !== 'auto') return { merges: value === 'always', why: `tuning.policy.reduceLastChunkMerges '${value}'` };
  return kMax === 1
    ? { merges: true, why: "reduceLastChunkMerges 'auto', and kMax is 1: the last chunk workgroup of a segment merges" }
    : { merges: false, why: `reduceLastChunkMerges 'auto', and kMax ${kMax} > 1: lists of more than one entry merged faster in a launch of their own` };
}

/**
 * Whether the reduce variant gives each segment one invocation (segments of at most
 * `reduceSmallSegmentItems` keys): a router's 8 or 16 experts leave most of a subgroup-wide
 * workgroup idle and pay a merge for nothing.
 */
export function reducePerInvocation(policy: TopKPolicy, maxSegmentSize: number): boolean {
  return maxSegmentSize <= policy.reduceSmallSegmentItems;
}

/**
 * Invocations per workgroup when reduce gives each segment one: halved (down to one subgroup) while
 * the segments make fewer than a quarter of `workgroups` workgroups, so a router's 16384 segments
 * spread over 256 workgroups of 64 instead of 64 of 256, which leave half of an H200's 132
 * multiprocessors idle.
 */
export function perInvocationWorkgroupSize(maxSegments: number, largest: number, workgroups: number, capabilities: BackendCapabilities): number {
  const smallest = Math.min(largest, Math.max(32, capabilities.subgroupSize ?? 32));
  let size = largest;
  while (size > smallest && Math.ceil(maxSegments / size) < workgroups / 4) size /= 2;
  return size;
}

/**
 * Keys per reduce chunk: `base` (one loop trip of the workgroup) unless the segments would then
 * make more than `workgroups` workgroups; then as few whole trips as keep `maxSegments` segments of
 * `maxSegmentSize` keys within about `workgroups`. Each chunk pays a fixed cost (resolve the
 * segment, merge the workgroup's lists, write a partial), so short chunks over long rows cost more
 * than their reads: 64 x 151936, k = 1 ran 0.157 ms in 2432 chunks of 4096 keys (H200, Dawn/Vulkan,
 * BENCHMARKS.md run 4) where its keys take 0.012 ms to read at copy bandwidth.
 */
export function reduceChunkItemsFor(maxSegments: number, maxSegmentSize: number, base: number, workgroups: number): number {
  const perSegment = Math.max(1, Math.floor(workgroups / Math.max(1, maxSegments)));
  if (Math.ceil(maxSegmentSize / base) <= perSegment) return base;
  return Math.ceil(maxSegmentSize / perSegment / base) * base;
}

/**
 * Invocations for a reduce workgroup: enough for 8 keys each, a power of two between one subgroup
 * (at least 32) and the policy's size. Short segments waste a 256-wide workgroup: on 16384 x 256,
 * k = 8, 32 invocations took 88 us against 379 us for 256 (64: 134, 128: 204; H200, Dawn/Vulkan,
 * tuning.policy.workgroupSize sweep, 2026-11).
 */
export function reduceWorkgroupSize(maxSegmentSize: number, largest: number, capabilities: BackendCapabilities): number {
  const smallest = Math.min(largest, Math.max(32, capabilities.subgroupSize ?? 32));
  let size = smallest;
  while (size < largest && size * 8 < maxSegmentSize) size *= 2;
  return size;
}

/**
 * What top-k may ask of a backend: the framework's {@link BackendLimits}. Sorted output has no limit
 * of its own: a selection larger than a tile is sorted by the segmented sort's merge or radix kernels.
 */
export type TopKLimits = BackendLimits;

/**
 * The limits of top-k on a backend with `capabilities` (see {@link TopKLimits}), checked when
 * planning and the same way on every backend.
 *
 * @example
 * ```ts
 * topKLimits(cpuBackend().capabilities).maxBindingBytes;
 * ```
 */
export function topKLimits(capabilities: BackendCapabilities): TopKLimits {
  return backendLimits(capabilities);
}
