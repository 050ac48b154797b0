import type { BackendCapabilities } from '../../backends/backend.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import { type VariantSelection, type VariantVerdict, checkPolicyNames, checkPositiveIntegers, gpuClass, selectVariant } from '../../dispatch/variants.js';
import { groupLanes, laneItems, tileGroups, tileItems, tileLanes } from './order.js';

/** The variants of DeviceSegmentedScan. */
export type ScanVariant = 'thread' | 'workgroup' | 'multi-workgroup';
/** Every variant, in the order `explain()` lists them. */
export const scanVariants: readonly ScanVariant[] = ['thread', 'workgroup', 'multi-workgroup'];

/** Policy values: what the selector and the kernels are sized by. */
export interface ScanPolicy {
  /** Invocations per workgroup (each tile has 256 lanes whatever this is). */
  readonly workgroupSize: number;
  /** Largest segment size for which one invocation scans a whole segment. */
  readonly threadMaxItems: number;
  /** Segments at most this long are scanned by one workgroup, however few they are. */
  readonly workgroupMaxItems: number;
  /**
   * 'multi-workgroup', reduce-then-scan, segments of more than 2048 tiles (problem.ts `SpineForm`):
   * how the carries into the tiles come from the tile totals. 'parallel': a workgroup per 2048 tile
   * totals ('spine-lanes', all at once) leaves the parts of each carry, and the workgroup that scans
   * a tile adds them up ('spine-top' scans the totals of the 2048 tile totals between the two past
   * `spineCarryTiles`). 'walk': one workgroup per segment walks its tile totals 2048 at a time
   * ('spine-walk'), up to `spineWorkgroupMaxTiles` tiles; three launches past it. The same bits
   * either way. Segments of at most 2048 tiles take one launch ('spine-scan') either way.
   */
  readonly spineCarries: 'walk' | 'parallel';
  /**
   * `spineCarries` 'parallel': segments of at most this many tiles of 2048 tile totals (1 to 9) have
   * the carry into each tile of tile totals added up by every workgroup of 'tile-scan' that needs it,
   * from the totals before it (at most 8 reads); past it, a 'spine-top' launch scans those totals
   * first (one read). 9 covers segments of up to 37.7M items.
   */
  readonly spineCarryTiles: number;
  /**
   * 'multi-workgroup' with `spineCarries` 'walk': segments of at most this many tiles (2048 items
   * each) have their tile totals scanned by one workgroup walking them (one launch); past it, by
   * three launches (the totals of 2048 tile totals each, their scan, the tile totals' scan).
   */
  readonly spineWorkgroupMaxTiles: number;
  /**
   * 'multi-workgroup': workgroups the two tile launches aim at. Each takes ceil(tiles /
   * tileWorkgroups) consecutive tiles of a segment (at least one) and loads its next tile while it
   * works on this one (default: twice the backend's `parallelism` on a GPU, four times on the CPU
   * emulator).
   */
  readonly tileWorkgroups: number;
  /**
   * 'multi-workgroup' on a GPU: words one invocation of the tile launches loads at a time (1 or 4).
   * With 4, a full tile of a segment that starts at a multiple of 4 items is read as two vec4 loads
   * per invocation, its lane's 8 items, straight into registers (no staging in workgroup memory, two
   * barriers fewer a tile); other tiles are read a word at a time. The order of additions is the same.
   */
  readonly loadWords: number;
  /**
   * 'multi-workgroup' on a GPU, with `loadWords` 4 and a constant `op`: full tiles a workgroup of
   * 'tile-reduce' takes at once (1, 2 or 4): their loads issued together, their chains of additions
   * side by side, one barrier per level for all of them. The order of additions is the same. (With
   * an op chosen at run time every addition branches over the operators: the kernels take one tile
   * at a time, which keeps the shader small.)
   */
  readonly tilesPerStep: number;
  /** The same for 'tile-scan' (1, 2 or 4). */
  readonly scanTilesPerStep: number;
  /**
   * 'multi-workgroup', reduce-then-scan, on a GPU with `loadWords` 4: words one invocation of
   * 'tile-scan' stores at a time (1 or 4). With 4, for f32 values, where the plan knows that every
   * store is a whole vec4 of one invocation (an inclusive scan whose segments all start and end at a
   * multiple of 4 items: host-known sizes, and stride), a full tile's lane writes its 8 outputs
   * straight from registers as two vec4 stores (no staging in workgroup memory, two barriers fewer a
   * tile), and a short tile four outputs an invocation. Elsewhere outputs are written a word at a
   * time: with the output bound as vec4, a single word's store is a store of one component of a
   * vector, which some WebGPU implementations compile as a read-modify-write of all four
   * (neighbouring invocations would race). The same bits either way.
   */
  readonly storeWords: number;
  /**
   * 'multi-workgroup': passes over the items. 1, the single pass: a workgroup per tile, taken in
   * the order workgroups start, publishes its tile's total as soon as it has loaded the tile and puts
   * its carry together in the canonical order (order.ts) from the tile, group and unit totals before
   * it (webgpu/single-pass.ts); so it reads the items once. 2, reduce-then-scan: a launch for the
   * tile totals, their scan, a launch for the tiles' scans. The same bits either way, for every
   * operator and determinism.
   */
  readonly passes: number;
  /**
   * 'multi-workgroup', single pass: rounds of reading the totals a tile's carry needs before those
   * still not published are worked out from the input here (the fallback that makes the scan
   * finish without forward progress between workgroups). 1: at the first miss.
   */
  readonly lookbackPolls: number;
  /**
   * 'multi-workgroup', single pass: consecutive tiles a workgroup takes from the counter (1, 2, 4 or
   * 8: they lie in one lane of the tile totals). It loads each and publishes its total, then puts
   * their carries together from one read of the totals before them, loads each tile again (from the
   * device's cache on a GPU) and writes its scan; with 8, a workgroup holds a lane of the tile
   * totals, and 8 times fewer workgroups read the totals before them. The same bits for every count.
   */
  readonly singlePassTiles: number;
}

/** The most tiles a workgroup of the single pass takes (`singlePassTiles`): a lane of the tile totals. */
export const singlePassTilesMax = 8;

/**
 * The numbers every built-in policy uses. `ScanVariantsFor` reads the same numbers as literal types,
 * so compile-time pruning can never rule out what a policy picks.
 */
export const scanPolicyLimits = {
  /** Every built-in policy's `threadMaxItems`. */
  threadMaxItems: 16,
  /** Every built-in policy's `workgroupMaxItems`. */
  workgroupMaxItems: 4096,
  /** Every built-in policy's `spineWorkgroupMaxTiles`. */
  spineWorkgroupMaxTiles: 14336,
} as const;

/**
 * The most `spineCarryTiles`: the carry into tile of tile totals v <= 8 is the initial value ⊕ (U_0 ⊕
 * ... ⊕ U_v-1), lane 0 of the scan of their totals (order.ts); further on, lanes and groups of that
 * scan would come into it, which 'spine-top' adds up instead.
 */
export const spineCarryTilesMax = laneItems + 1;

/** Workgroup memory of a tile kernel: the padded tile, lane and group carries, a few words, the lane and group totals of a step of up to 4 tiles. */
export const tileWorkgroupBytes = (tileItems + tileItems / 32 + 2 * 256 + 2 * groupLanes + 8 + 4 * (tileLanes + tileGroups)) * 4;

/**
 * The policy for a backend's capabilities (CUB's `policy_selector(cc)`).
 *
 * - `workgroupSize` 256: one lane of the canonical tile per invocation (WebGPU guarantees 256).
 * - `threadMaxItems` 16: up to two lanes of items, one invocation walking its segment costs no more
 *   loads than a lane does, and a workgroup per segment would idle most of its 256 invocations.
 * - `workgroupMaxItems` 4096 (two tiles): below it the three launches of the multi-workgroup scan
 *   and its second read of the items cost more than one workgroup walking the tiles.
 * - `spineCarries` 'walk': the walk (and its three launches past `spineWorkgroupMaxTiles`) measured
 *   faster than the carries in parallel at every length. NVIDIA H200 (Dawn/Vulkan, bench/reduce-scan-
 *   webgpu.ts --scan-configs, GPU ms of the whole call, 2026-11-28 13:48 UTC, two rounds; walk /
 *   parallel / parallel with 'spine-top'): 16M items 0.1087-0.109 / 0.1097-0.1098 / 0.1118, 32M
 *   0.182-0.184 / 0.1884 / 0.1836-0.185, 64M 0.319 / 0.327 / 0.326-0.328. 'spine-lanes' takes 0.012 ms
 *   where the walk takes 0.020 at 16M, but 'tile-scan' then takes 0.076 instead of 0.067: its
 *   workgroups wait on the carry's three words and chain before their first output, where the walk
 *   leaves them one word (loading those words with the tile's items, to add them up later, held
 *   registers across the tile's work and made it 0.085). 'parallel' stays selectable, with
 *   `spineCarryTiles` 9: 9 tiles of tile totals keep the carry's chain within one lane of the scan
 *   above (order.ts), and the launches at three up to 37.7M items.
 * - `spineWorkgroupMaxTiles` 14336 (7 walks of 2048 tile totals, 28M items). NVIDIA H200 (Dawn/Vulkan,
 *   GPU time per launch from timestamps, bench/webgpu-launch-profile.ts, 2026-11-23): the walk took 0.023 ms
 *   on one segment of 16M f32 items (4 walks) and 0.064 ms on 64M (16 walks), about 9 us plus 3.4 us
 *   a walk; the three spine launches took 0.034 ms on both. They cost the same at about 7 walks.
 * - `tileWorkgroups` twice the backend's parallelism on a GPU (2048 on an H200: four tiles a
 *   workgroup on 16M items), four times on backends of fewer than 128 slots (the CPU emulator). Same
 *   H200 runs, tile-reduce + tile-scan on 16M items at 512 / 1024 / 2048 / 4096 workgroups and at one
 *   tile each: 0.153 / 0.147 / 0.142 / 0.140 / 0.144 ms, within the runs' noise. Since f32 tiles are
 *   stored from registers (storeWords, 2026-11-29 20:19 UTC, whole 16M f32 sums, GPU ms, two calls
 *   alternating 4096 / 2048 / 1024): 0.1055-0.1067 / 0.1032-0.104 / 0.106-0.1065; with tile-scan a
 *   tile at a time (21:40 UTC, two rounds, 2048 / 1024 / 3072 / 4096): f32 0.0973-0.0974 /
 *   0.0976-0.0981 / 0.1028-0.1033 / 0.1007-0.1011, i32 0.086-0.0862 / 0.0861-0.0869 / - /
 *   0.0879-0.0886.
 * - `scanTilesPerStep` 1, `tilesPerStep` 2 for tile-reduce alone since 2026-11-29 (H200, 16M items, GPU ms,
 *   two rounds, tile-scan's steps of 2 / 1 / 4 with tile-reduce's at 2, its vec4 stores): f32 sums
 *   0.1031-0.1042 / 0.0978-0.0979 / 0.1067-0.1068 (tile-scan 0.0637 / 0.0572 / 0.066), i32 sums
 *   0.0868-0.0878 / 0.086-0.0862 / 0.0898-0.0904, f32 max 0.1701-0.1703 / 0.1685-0.1692 / 0.1865.
 * - `loadWords` 4 and `tilesPerStep` 2. Same H200, one segment of 16M f32 items, GPU time of the
 *   whole call (bench/reduce-scan-webgpu.ts --scan-configs, op 'sum', 2026-11-23 21:26 UTC, commit 878facb):
 *   0.1046 ms (tile-reduce 0.032, spine-walk 0.020, tile-scan 0.063); a tile at a time 0.121; 4 tiles
 *   a step 0.111 (tileWorkgroups 2048) / 0.113 (1024); 2 a step at tileWorkgroups 2048 0.1046; a word
 *   at a time (`loadWords` 1) 0.131, as before the vec4 path (0.132: tile-reduce 0.043, spine-walk
 *   0.021, tile-scan 0.077).
 * - `passes` 2: the single pass reads the items once where reduce-then-scan reads them twice, but
 *   it measured slower. H200, one segment of 16M items, GPU ms (bench/reduce-scan-webgpu.ts
 *   --cases=long --ops=cumsum --scan-configs, 2026-11-29 07:25 UTC, two rounds in one process; single
 *   pass / reduce-then-scan): f32 sum 0.197 / 0.108, i32 sum 0.177 / 0.088, f32 min 0.286 / 0.185
 *   (07:20 UTC); `lookbackPolls` 8 0.1999 (f32 sum), word loads (`loadWords` 1) 0.205. Timing builds
 *   that drop one part each (outputs wrong), i32 / f32 sum: without the reads of the totals (and
 *   their polls) 0.113 / 0.143; without the tile's own total 0.174 / 0.195; without the fallback code
 *   0.177 / 0.197; and without the reads (i32, 07:36 UTC, two rounds): 0.114, with workgroup
 *   indices for the counter 0.110, without publishing the total 0.1125, without both 0.1076. So the
 *   reads cost about 0.06 ms, and one tile a workgroup loaded, scanned and written 0.108 where
 *   reduce-then-scan's tile-scan (two tiles a workgroup, in the reverse order of tile-reduce, whose
 *   last tiles may still be in the device's cache) takes 0.052. The decoupled look-back it replaced measured the
 *   same (i32 sum 0.175, 2026-11-28). Part of those reads was a chain: each group's total waited for
 *   its last tile's carry, so for the group before it (2026-11-30, f32 sum: 0.2005 -> 0.1823 with the
 *   chain cut, and spans of 8 tiles 0.328 -> 0.178, where a span waited for each tile's carry in
 *   turn). Since then (group and unit totals added
 *   up from their own tiles before any carry, spans of `singlePassTiles` tiles a workgroup, one read
 *   of the carries' entries a span, the next tile's loads in flight; same bench, two rounds, GPU
 *   ms): f32 sum with spans of 1 / 2 / 4 / 8 tiles 0.1885-0.1886 / 0.1589-0.159 / 0.1365-0.1366 /
 *   0.1251-0.1253, i32 sum 0.1544-0.1565 (1) / 0.0974-0.0977 (8), f32 max (8) 0.2031-0.2032, against
 *   reduce-then-scan's 0.0972-0.0975, 0.0862-0.0865 and 0.1685-0.1694 in the same call. Timing
 *   builds (outputs wrong): spans of 8 without the scans (loads, totals, reads) 0.060, without the
 *   reads 0.116 (of 0.134 then), without the second loads 0.127; a whole span's loads issued at
 *   once (the tile launches' steps of 8 tiles) 0.1358-0.136. With the fallback in the shader once
 *   (two rounds): spans of 8 0.1207-0.1216, i32 0.0954-0.0959, against 0.0974-0.0975 for
 *   reduce-then-scan. So 2 by default on every backend; 1 stays selectable (tested on every backend,
 *   fallback included).
 * - `singlePassTiles` 8 (the single pass): the spans' figures above (fewer workgroups read the
 *   entries before them, and a span's carries share one read).
 * - `lookbackPolls` 64 (the single pass): 8 measured the same; fewer polls work out a missing
 *   total from the input sooner, which cost more than waiting for it (the decoupled look-back's 1
 *   against 64: 0.181 / 0.175).
 * The first two are not measured on a GPU yet (the lead's bench/gpu runs hold the figures); all
 * are tuning values (`tuning.policy`).
 */
export function scanPolicyFor(capabilities: BackendCapabilities): ScanPolicy {
  return {
    workgroupSize: Math.min(256, capabilities.maxWorkgroupSize),
    threadMaxItems: scanPolicyLimits.threadMaxItems,
    workgroupMaxItems: scanPolicyLimits.workgroupMaxItems,
    spineCarries: 'walk',
    spineCarryTiles: spineCarryTilesMax,
    spineWorkgroupMaxTiles: scanPolicyLimits.spineWorkgroupMaxTiles,
    tileWorkgroups: (gpuClass(capabilities) ? 2 : 4) * capabilities.parallelism,
    loadWords: 4,
    tilesPerStep: 2,
    scanTilesPerStep: 1,
    storeWords: 4,
    passes: 2,
    lookbackPolls: 64,
    singlePassTiles: 8,
  };
}

/** The facts the selector reads: bounds known on the host, after every static and host runtime bound. */
export interface ScanSelectorFacts {
  /** Bounds of the segment sizes (max at least min: no segment is shorter than the static min). */
  readonly segmentSize: Bounds;
  /** Segments the grid covers. */
  readonly maxSegments: number;
}

/** The selector's answer. */
export type ScanSelection = VariantSelection<ScanVariant, ScanPolicy>;

/**
 * The policy selector: a pure function from the facts and the backend's capabilities to a variant
 * and its policy. A forced variant (tuning) wins; every variant computes the same bits for every
 * segment (the canonical order, order.ts), so every variant is applicable.
 *
 * - `'thread'` when no segment is longer than `threadMaxItems`;
 * - `'multi-workgroup'` when a segment may be longer than `workgroupMaxItems` and there are fewer
 *   segments than the backend runs workgroups at once (`capabilities.parallelism`): one workgroup per
 *   segment would leave the rest of the device idle while it walks a long segment;
 * - `'workgroup'` otherwise: one workgroup per segment walks its tiles, reading each item once.
 *
 * On the CPU emulator without worker threads (parallelism 1), long segments stay on `'workgroup'`:
 * one pass over the items beats two.
 */
export function selectScanVariant(
  facts: ScanSelectorFacts,
  capabilities: BackendCapabilities,
  tuning: { variant?: ScanVariant; policy?: Partial<ScanPolicy> } = {},
): ScanSelection {
  const base = scanPolicyFor(capabilities);
  checkPolicyNames(tuning.policy, base);
  const policy: ScanPolicy = { ...base, ...tuning.policy };
  checkPolicy(policy, capabilities);
  const { max } = facts.segmentSize;
  const threadFits = max <= policy.threadMaxItems;
  const fewSegments = facts.maxSegments < capabilities.parallelism;
  const longMay = max > policy.workgroupMaxItems;
  const multi = !threadFits && longMay && fewSegments;

  const verdicts: VariantVerdict<ScanVariant>[] = [
    {
      variant: 'thread',
      applicable: true,
      reachable: threadFits,
      reason: threadFits ? `max segment size ${max} <= threadMaxItems ${policy.threadMaxItems}` : `max segment size ${max} > threadMaxItems ${policy.threadMaxItems}`,
    },
    {
      variant: 'workgroup',
      applicable: true,
      reachable: !threadFits && !multi,
      reason: threadFits
        ? `every segment fits one invocation (max segment size ${max} <= ${policy.threadMaxItems})`
        : !longMay
          ? `max segment size ${max} <= workgroupMaxItems ${policy.workgroupMaxItems}`
          : fewSegments
            ? `${facts.maxSegments} segments < parallelism ${capabilities.parallelism}, a segment may hold up to ${max} items: split across workgroups`
            : `${facts.maxSegments} segments keep the backend's ${capabilities.parallelism} workgroup slots busy`,
    },
    {
      variant: 'multi-workgroup',
      applicable: true,
      reachable: multi,
      reason: multi
        ? `a segment may hold up to ${max} items > workgroupMaxItems ${policy.workgroupMaxItems}, and ${facts.maxSegments} segments < parallelism ${capabilities.parallelism}`
        : !longMay || threadFits
          ? `max segment size ${max} <= workgroupMaxItems ${policy.workgroupMaxItems}`
          : `${facts.maxSegments} segments >= parallelism ${capabilities.parallelism}: one workgroup per segment keeps the backend busy`,
    },
  ];
  const natural: ScanVariant = threadFits ? 'thread' : multi ? 'multi-workgroup' : 'workgroup';
  return selectVariant('scan', verdicts, natural, policy, tuning.variant);
}

/** Rejects tuning values the kernels cannot run with. */
function checkPolicy(policy: ScanPolicy, capabilities: BackendCapabilities): void {
  checkPositiveIntegers(policy);
  for (const name of ['tilesPerStep', 'scanTilesPerStep'] as const) {
    if (![1, 2, 4].includes(policy[name])) throw new SegkitUsageError(`tuning.policy.${name}: ${policy[name]} is not 1, 2 or 4 (full tiles a step)`);
  }
  if (policy.spineCarries !== 'walk' && policy.spineCarries !== 'parallel') {
    throw new SegkitUsageError(`tuning.policy.spineCarries: ${String(policy.spineCarries)} is not 'walk' or 'parallel' (how the tile totals become carries)`);
  }
  if (policy.spineCarryTiles > spineCarryTilesMax) {
    throw new SegkitUsageError(`tuning.policy.spineCarryTiles: ${policy.spineCarryTiles} exceeds ${spineCarryTilesMax} (carries within one lane of the scan of the tiles of tile totals' totals)`);
  }
  if (policy.passes !== 1 && policy.passes !== 2) throw new SegkitUsageError(`tuning.policy.passes: ${policy.passes} is not 1 or 2 (passes over the items)`);
  if (![1, 2, 4, 8].includes(policy.singlePassTiles)) {
    throw new SegkitUsageError(`tuning.policy.singlePassTiles: ${policy.singlePassTiles} is not 1, 2, 4 or 8 (a workgroup's tiles lie in one lane of the tile totals)`);
  }
  if (policy.loadWords !== 1 && policy.loadWords !== 4) throw new SegkitUsageError(`tuning.policy.loadWords: ${policy.loadWords} is not 1 or 4 (words per load)`);
  if (policy.storeWords !== 1 && policy.storeWords !== 4) throw new SegkitUsageError(`tuning.policy.storeWords: ${policy.storeWords} is not 1 or 4 (words per store)`);
  if (policy.workgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} exceeds the backend's maxWorkgroupSize ${capabilities.maxWorkgroupSize}`);
  }
  // The group phase of a tile runs on 16 invocations at once.
  if (policy.workgroupSize < groupLanes) throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} is below ${groupLanes}, the invocations a tile's group phase needs`);
  if (tileWorkgroupBytes > capabilities.workgroupStorageBytes) {
    throw new SegkitUsageError(`the scan's tile needs ${tileWorkgroupBytes} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`);
  }
}
