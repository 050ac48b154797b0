import type { BackendCapabilities } from '../../backends/backend.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import { type VariantSelection, type VariantVerdict, checkPolicyNames, checkPositiveIntegers, gpuClass, selectVariant } from '../../dispatch/variants.js';
import { type ReduceOp, reduceOps, sumOrder } from './ops.js';

/** The variants of DeviceSegmentedReduce, from the shortest segments to the longest. */
export type SegmentedReduceVariant = 'thread' | 'subgroup' | 'workgroup' | 'multi-workgroup';
/** Every variant, in the order `explain()` lists them. */
export const segmentedReduceVariants: readonly SegmentedReduceVariant[] = ['thread', 'subgroup', 'workgroup', 'multi-workgroup'];

/** Policy values: what the kernels of each variant are sized by and where the selector switches. */
export interface SegmentedReducePolicy {
  /** Invocations per workgroup: a power of two, at most the summation order's 256 lanes. */
  readonly workgroupSize: number;
  /** 'thread': the longest segment one invocation reduces (a power of two, at most 256). */
  readonly threadMaxItems: number;
  /** 'subgroup': invocations per segment (a power of two, at most workgroupSize). */
  readonly subgroupSize: number;
  /** The longest segment the selector gives 'subgroup'. */
  readonly subgroupMaxItems: number;
  /** Segments longer than this are split across workgroups ('multi-workgroup'). */
  readonly multiWorkgroupMinItems: number;
  /**
   * 'multi-workgroup': invocations per chunk (a power of two, at most workgroupSize); a workgroup
   * reduces workgroupSize / chunkTeamSize consecutive chunks, one per team.
   */
  readonly chunkTeamSize: number;
  /**
   * 'multi-workgroup' where every op the plan may meet is an extreme (min, max, argMin, argMax: no
   * sum): the team size instead of `chunkTeamSize` (a power of two, at most workgroupSize). An
   * extreme's chunk keeps one key a lane and ends on a search for tied keys, where a sum's ends on its
   * tree: they run best at different sizes.
   */
  readonly extremeChunkTeamSize: number;
  /**
   * Words one invocation loads at a time (1 or 4): with 4, an invocation of a team of at most 64
   * owns groups of 4 adjacent lanes and reads them as one vec4 where the segment starts at a multiple
   * of 4 items; the summation order is the same.
   */
  readonly loadWords: number;
  /**
   * 'multi-workgroup': adjacent chunks one team reduces into one partial (a power of two, at most 64):
   * a sum one chunk at a time (the canonical lanes are a chunk's) onto the team's chunk tree, whose
   * total is a subtree of the segment's (the same bits); an extreme all as one strip. Fewer, longer
   * teams leave the merge fewer partials to read, and cost a sum a tree a chunk in sequence.
   */
  readonly chunkRounds: number;
  /**
   * 'multi-workgroup' where every op the plan may meet is an extreme: the chunks a team reduces as
   * one strip instead of `chunkRounds` (a power of two, at most 64), or 'auto' (the default): the
   * most, up to 8, that still leave the longest segment workgroupSize partials (teams enough to fill
   * the device, and at most two partials for each invocation of the merging workgroup below 8); one
   * for segments of fewer chunks than that.
   */
  readonly extremeChunkRounds: number | 'auto';
  /**
   * 'multi-workgroup': the last chunk workgroup of a segment to finish combines the segment's
   * partials ('chunk-merge', one launch: one dispatch less of host time), or (false) a second launch
   * does ('chunk', 'merge'). 'auto' (the default): one launch on a GPU where every op the plan may
   * meet is a sum, or every op an extreme; two where a segment may take either. The same bits either
   * way.
   */
  readonly lastChunkMerges: boolean | 'auto';
}

/**
 * The thresholds every built-in policy uses, as literal numbers: `SegmentedReduceVariantsFor` reads
 * the same numbers as types, so compile-time pruning never rules out what a policy picks.
 *
 * Provenance: threadMaxItems and multiWorkgroupMinItems from the CPU emulator and Mesa lavapipe
 * (bench/reduce-cpu.ts --variants, 2026-11): a segment of up to 16 items costs one invocation less
 * than a team's tree; past 4 chunks (32768 items) one workgroup per segment leaves the device idle
 * while a merge launch costs one more dispatch. subgroupMaxItems from an NVIDIA H200 (Dawn/Vulkan,
 * GPU time from timestamps, bench/reduce-scan-webgpu.ts --configs, 2026-11-23): on 2048 ragged
 * segments of 1..4096 f32 items a team of 32 (one subgroup, shuffles only, 8 segments per
 * workgroup) took 0.014 ms for a sum and 0.021-0.028 ms for max, a 256-wide workgroup per segment
 * 0.033 / 0.042 ms; one chunk (8192 items) is the most a team reduces in one round.
 */
export const segmentedReducePolicyLimits = {
  threadMaxItems: 16,
  subgroupMaxItems: sumOrder.chunkItems,
  multiWorkgroupMinItems: 4 * sumOrder.chunkItems,
} as const;

/**
 * The longest strip 'auto' gives an extreme's team. H200, one segment of 16M f32 items, GPU ms
 * (bench/reduce-scan-webgpu.ts --cases=long --configs, 2026-11-30 08:50 UTC, two rounds), strips of
 * 1 / 2 / 4 / 8 / 16 chunks with the merge in the chunk launch: max 0.039 / 0.039 / 0.0326 /
 * 0.0321-0.0327 / 0.0365, argMax 0.042 / 0.040 / 0.0356 / 0.0344-0.0347 / 0.0388; strips of 8 with
 * a merge launch: max 0.0363-0.0369, argMax 0.0387; the committed build (a chunk a team, a merge
 * launch) in the same call: max 0.0368-0.0373, argMax 0.040.
 */
const autoStripRounds = 8;

const largestPowerOfTwoAtMost = (n: number) => 2 ** Math.floor(Math.log2(Math.max(1, n)));

/** The policy for a backend's capabilities (CUB's `policy_selector(cc)`). */
export function segmentedReducePolicyFor(capabilities: BackendCapabilities): SegmentedReducePolicy {
  const workgroupSize = Math.min(sumOrder.lanes, largestPowerOfTwoAtMost(capabilities.maxWorkgroupSize));
  return {
    workgroupSize,
    threadMaxItems: segmentedReducePolicyLimits.threadMaxItems,
    subgroupSize: Math.min(workgroupSize, largestPowerOfTwoAtMost(capabilities.subgroupSize ?? 32)),
    subgroupMaxItems: segmentedReducePolicyLimits.subgroupMaxItems,
    multiWorkgroupMinItems: segmentedReducePolicyLimits.multiWorkgroupMinItems,
    // H200, one segment of 16M f32 items (GPU ms, teams of 32 / 64 / 128 / 256): sum 0.039 / 0.036 /
    // 0.034 / 0.036, max 0.050 / 0.044 / 0.058 / 0.050, argMax 0.051 / 0.045 / 0.066 / 0.063. Since
    // extremes keep one key a lane (2026-11-28, bench/reduce-scan-webgpu.ts --configs, two rounds;
    // teams of 64 / 128): sum 0.036 / 0.034, max 0.045-0.046 / 0.042, argMax 0.045-0.046 / 0.0424-0.0428.
    chunkTeamSize: Math.min(workgroupSize, 128),
    // H200, one segment of 16M f32 items, GPU ms (bench/reduce-scan-webgpu.ts --cases=long --configs,
    // 2026-11-29 20:11 UTC, teams of 128 / 64 / 256, two rounds of 128): sum 0.0344-0.0345 / 0.0349 /
    // 0.0365, max 0.0407-0.0408 / 0.0431 / 0.0384, argMax 0.0429-0.0435 / 0.0467 / 0.0414. So sums
    // keep 128 and plans of extremes alone take 256 (one team a workgroup: its tie search's barriers
    // hold no second team).
    extremeChunkTeamSize: Math.min(workgroupSize, 256),
    loadWords: 4,
    // H200, one segment of 16M f32 items, GPU ms (bench/reduce-scan-webgpu.ts --cases=long --configs,
    // 2026-11-30 08:59 UTC, two rounds, one launch): sum with 1 / 2 / 4 / 8 chunks a team 0.0315-0.0317
    // / 0.0332-0.0334 / 0.0348-0.0355 / 0.0421-0.0423 (teams of 256: 1 / 2 chunks 0.033 / 0.0327):
    // each chunk's tree waits in turn, more than the merge's fewer partials save. So sums keep 1.
    chunkRounds: 1,
    // The strips' longest in 'auto': autoStripRounds.
    extremeChunkRounds: 'auto',
    // H200, one segment of 16M f32 items, GPU ms (bench/reduce-scan-webgpu.ts --configs, 2026-11-28,
    // two calls): sum 0.043 in one launch against 0.036 in two, max 0.052 against 0.044. Timing-only
    // builds put the difference in the merge itself: the chunk phase with its arrivals alone takes
    // 0.029 (sum), as the chunk launch does, and the last workgroup's merge of 2048 partials then
    // takes ~14 us, where the merge launch adds ~7 us to the pass. Since 2026-11-29 (the chunk tree in
    // workgroup memory, the last workgroup's partials read one at a time; bench/reduce-scan-webgpu.ts
    // --cases=long --configs, two rounds): one launch / two, sum 0.0311-0.0315 / 0.0327-0.0334, max
    // 0.0413-0.042 / 0.0397-0.0401, argMax 0.0436-0.0439 / 0.0425-0.0429; timing builds without the
    // merge's code put the one launch's chunks at 0.027 (sum) and 0.0314 (max). With extremes in teams
    // of 256 (2026-11-29 20:19-20:27 UTC, three calls, one launch / two): sum 0.0312-0.0322 /
    // 0.0331-0.0337, max 0.0387-0.039 / 0.037-0.0382, argMax 0.0412-0.0415 / 0.0407-0.0415. The CPU
    // emulator (2 workers, bench/reduce-cpu.ts --shapes=long, two alternating rounds): sum 9.8-10.1 ms
    // in one launch against 7.3-8.5 in two. So 'auto': one launch for plans of sums alone on a GPU
    // (at least 128 workgroup slots), two elsewhere. Since the merge's block of 8 partials is written
    // out (20:44 UTC, three rounds) the sum's two launches cost the GPU what one does (0.0315-0.0324
    // / 0.0315-0.0323), and the one launch saves the host a dispatch.
    lastChunkMerges: 'auto',
  };
}

/** The facts the selector reads: bounds after every static and host runtime bound. */
export interface SegmentedReduceSelectorFacts {
  /** Bounds of the segment sizes known on the host. */
  readonly segmentSize: Bounds;
  /** Whether tighter segment-size bounds exist on the device only (a uniform branch can use them). */
  readonly segmentSizeDeviceBounds: boolean;
  /** The ops a segment may take (default: every op); they pick the chunk teams and where partials merge. */
  readonly ops?: readonly ReduceOp[];
}

/** The selector's answer. */
export type SegmentedReduceSelection = VariantSelection<SegmentedReduceVariant, SegmentedReducePolicy>;

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;

/** Rejects tuning values the kernels cannot run with. */
function checkPolicy(policy: SegmentedReducePolicy, capabilities: BackendCapabilities): void {
  checkPositiveIntegers(policy);
  const power = (name: Exclude<keyof SegmentedReducePolicy, 'lastChunkMerges'>, most: number, why: string) => {
    const value = policy[name];
    if (typeof value !== 'number' || !isPowerOfTwo(value) || value > most) {
      throw new SegkitUsageError(`tuning.policy.${name}: ${policy[name]} is not a power of two at most ${most} (${why})`);
    }
  };
  power('workgroupSize', Math.min(sumOrder.lanes, capabilities.maxWorkgroupSize), `the summation order's ${sumOrder.lanes} lanes and the backend's maxWorkgroupSize`);
  power('subgroupSize', policy.workgroupSize, 'the workgroup size');
  power('threadMaxItems', sumOrder.lanes, 'one item per lane of the summation order');
  power('chunkTeamSize', policy.workgroupSize, 'the workgroup size');
  power('extremeChunkTeamSize', policy.workgroupSize, 'the workgroup size');
  power('chunkRounds', 64, 'chunks a team');
  if (policy.extremeChunkRounds !== 'auto') power('extremeChunkRounds', 64, "chunks a team, or 'auto'");
  if (policy.loadWords !== 1 && policy.loadWords !== 4) throw new SegkitUsageError(`tuning.policy.loadWords: ${policy.loadWords} is not 1 or 4 (words per load)`);
  if (typeof policy.lastChunkMerges !== 'boolean' && policy.lastChunkMerges !== 'auto') {
    throw new SegkitUsageError(`tuning.policy.lastChunkMerges: ${String(policy.lastChunkMerges)} is not true, false or 'auto'`);
  }
}

/**
 * The policy selector: a pure function from the size bounds and the backend's capabilities to a
 * variant and its policy. 'thread' for segments of at most `threadMaxItems`, 'subgroup' up to
 * `subgroupMaxItems`, 'workgroup' up to `multiWorkgroupMinItems`, 'multi-workgroup' beyond. A forced
 * variant (tuning) wins when it is applicable, else throws with the reason.
 */
export function selectSegmentedReduceVariant(
  facts: SegmentedReduceSelectorFacts,
  capabilities: BackendCapabilities,
  tuning: { variant?: SegmentedReduceVariant; policy?: Partial<SegmentedReducePolicy> } = {},
): SegmentedReduceSelection {
  const base = segmentedReducePolicyFor(capabilities);
  checkPolicyNames(tuning.policy, base);
  const tuned: SegmentedReducePolicy = { ...base, ...tuning.policy };
  checkPolicy(tuned, capabilities);
  // The chunk teams the kernels run: extremeChunkTeamSize where no segment is summed; and where the
  // partials merge, 'auto' resolved: in the chunk launch where every segment is summed.
  const ops = facts.ops ?? reduceOps;
  const extremesOnly = !ops.includes('sum');
  const sumsOnly = ops.every((op) => op === 'sum');
  const auto = tuned.lastChunkMerges === 'auto';
  const gpu = gpuClass(capabilities);
  // Extremes' strips ('auto'): the longest that still leaves the longest segment workgroupSize partials.
  const chunks = Math.max(1, Math.ceil(facts.segmentSize.max / sumOrder.chunkItems));
  const stripRounds = tuned.extremeChunkRounds === 'auto' ? Math.min(autoStripRounds, largestPowerOfTwoAtMost(chunks / tuned.workgroupSize)) : tuned.extremeChunkRounds;
  const policy: SegmentedReducePolicy = {
    ...tuned,
    chunkTeamSize: extremesOnly ? tuned.extremeChunkTeamSize : tuned.chunkTeamSize,
    chunkRounds: extremesOnly ? stripRounds : tuned.chunkRounds,
    lastChunkMerges: auto ? (sumsOnly || extremesOnly) && gpu : tuned.lastChunkMerges,
  };
  const autoWhy = !gpu
    ? `: ${capabilities.parallelism} workgroup slots (the CPU emulator merges faster in a launch of its own)`
    : sumsOnly
      ? ': every op is a sum'
      : extremesOnly
        ? ': every op is an extreme'
        : ': a segment may take a sum or an extreme';
  const roundsWhy = !extremesOnly
    ? 'chunkRounds'
    : tuned.extremeChunkRounds === 'auto'
      ? `extremeChunkRounds auto: at most ${autoStripRounds}, and as many as still leave the longest segment's ${chunks} chunks ${tuned.workgroupSize} partials`
      : 'extremeChunkRounds';
  const merge = `${policy.lastChunkMerges === true ? 'the last chunk workgroup of a segment merges' : 'a second launch merges'} (lastChunkMerges ${String(tuned.lastChunkMerges)}${auto ? autoWhy : ''})`;
  const max = facts.segmentSize.max;
  const natural: SegmentedReduceVariant =
    max <= policy.threadMaxItems ? 'thread' : max <= policy.subgroupMaxItems ? 'subgroup' : max <= policy.multiWorkgroupMinItems ? 'workgroup' : 'multi-workgroup';
  // Device-only size bounds: the multi-workgroup kernels branch (uniformly) to one workgroup per
  // segment when every segment fits one chunk.
  const directMayRun = facts.segmentSizeDeviceBounds && facts.segmentSize.min <= sumOrder.chunkItems;
  const verdicts: VariantVerdict<SegmentedReduceVariant>[] = [
    {
      variant: 'thread',
      applicable: max <= policy.threadMaxItems,
      reachable: natural === 'thread',
      reason: max <= policy.threadMaxItems ? `max segment size ${max} <= threadMaxItems ${policy.threadMaxItems}` : `max segment size ${max} > threadMaxItems ${policy.threadMaxItems}`,
    },
    {
      variant: 'subgroup',
      applicable: true,
      reachable: natural === 'subgroup',
      reason:
        natural === 'thread'
          ? 'thread is preferred for segments this short'
          : max <= policy.subgroupMaxItems
            ? `max segment size ${max} <= subgroupMaxItems ${policy.subgroupMaxItems}: ${policy.subgroupSize} invocations per segment`
            : `max segment size ${max} > subgroupMaxItems ${policy.subgroupMaxItems}`,
    },
    {
      variant: 'workgroup',
      applicable: true,
      reachable: natural === 'workgroup' || (natural === 'multi-workgroup' && directMayRun),
      reason:
        natural === 'workgroup'
          ? `max segment size ${max} <= multiWorkgroupMinItems ${policy.multiWorkgroupMinItems}: one workgroup per segment`
          : natural === 'multi-workgroup'
            ? directMayRun
              ? `max segment size ${max} > multiWorkgroupMinItems ${policy.multiWorkgroupMinItems} on the host, but the device bounds may fit one chunk (${sumOrder.chunkItems} items): the multi-workgroup kernels branch to one workgroup per segment on the device`
              : `max segment size ${max} > multiWorkgroupMinItems ${policy.multiWorkgroupMinItems}`
            : 'a shorter-segment variant is preferred',
    },
    {
      variant: 'multi-workgroup',
      applicable: true,
      reachable: natural === 'multi-workgroup',
      reason:
        natural === 'multi-workgroup'
          ? `max segment size ${max} > multiWorkgroupMinItems ${policy.multiWorkgroupMinItems}: chunks of ${sumOrder.chunkItems} items in parallel, then a merge; teams of ${policy.chunkTeamSize} invocations (${extremesOnly ? 'extremeChunkTeamSize: every op is min, max, argMin or argMax' : 'chunkTeamSize: a segment may be summed'}), ${policy.chunkRounds} chunk${policy.chunkRounds === 1 ? '' : 's'} a team (${roundsWhy}); ${merge}`
          : `max segment size ${max} <= multiWorkgroupMinItems ${policy.multiWorkgroupMinItems}`,
    },
  ];
  return selectVariant('segmented-reduce', verdicts, natural, policy, tuning.variant);
}
