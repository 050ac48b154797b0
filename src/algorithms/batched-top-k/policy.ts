import type { BackendCapabilities } from '../../backends/backend.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';

/** The variants of DeviceBatchedTopK. */
export type TopKVariant = 'single-tile' | 'reduce' | 'radix-select';
/** Every variant, in the order `explain()` lists them. */
export const topKVariants: readonly TopKVariant[] = ['single-tile', 'reduce', 'radix-select'];

/** Policy values: what the kernels of each variant are sized by. */
export interface TopKPolicy {
  /** Invocations per workgroup. */
  readonly workgroupSize: number;
  /** Most items a single-tile workgroup holds in workgroup memory (keys and indices). */
  readonly tileItems: number;
  /** Largest `kMax` the reduce variant handles. */
  readonly reduceMaxK: number;
  /** Items one reduce workgroup scans; longer segments are split across workgroups and merged. */
  readonly reduceChunkItems: number;
  /**
   * Reduce: segments of at most this many keys get one invocation each (workgroupSize segments per
   * workgroup, no merge) instead of a workgroup each.
   */
  readonly reduceSmallSegmentItems: number;
  /** Items one radix-select histogram/filter workgroup scans. */
  readonly radixTileItems: number;
  /** Bits per radix-select digit (passes = 32 / bits). */
  readonly radixBits: number;
}

/**
 * Static limits every built-in policy lies within. `TopKVariantsFor` reads the same numbers as
 * literal types, so compile-time pruning can never rule out what a policy picks.
 */
export const topKPolicyLimits = {
  /** Every policy's `reduceMaxK`. */
  reduceMaxK: 8,
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
 * 2026-11); radix digits of 8 bits keep the histogram in 1 KiB of workgroup memory.
 */
export function topKPolicyFor(capabilities: BackendCapabilities): TopKPolicy {
  const workgroupSize = Math.min(256, capabilities.maxWorkgroupSize);
  const tileItems = tileItemsFor(capabilities.workgroupStorageBytes);
  return {
    workgroupSize,
    tileItems,
    reduceMaxK: topKPolicyLimits.reduceMaxK,
    reduceChunkItems: workgroupSize * 16,
    reduceSmallSegmentItems: 32,
    radixTileItems: workgroupSize * 16,
    radixBits: 8,
  };
}

/** The facts the selector reads: effective bounds, after every static and host runtime bound. */
export interface TopKSelectorFacts {
  /** Bounds of `kMax` (the output width) and of each segment's `k`. */
  readonly k: Bounds;
  /** Bounds of the segment sizes known on the host. */
  readonly segmentSize: Bounds;
  /** Whether tighter segment-size bounds exist on the device only (a uniform branch can use them). */
  readonly segmentSizeDeviceBounds: boolean;
}

/** Why a variant can or cannot run for given facts. */
export interface VariantVerdict {
  readonly variant: TopKVariant;
  /** Applicable: it computes correct results for every value the bounds allow. */
  readonly applicable: boolean;
  /** Reachable: the selector could pick it for some values the bounds allow (on the host or on the device). */
  readonly reachable: boolean;
  readonly reason: string;
}

/** The selector's answer. */
export interface TopKSelection {
  readonly variant: TopKVariant;
  readonly policy: TopKPolicy;
  readonly why: string;
  readonly verdicts: readonly VariantVerdict[];
  /** Variants the run may take: the chosen one, plus single-tile where a device-side branch can take it. */
  readonly reachable: readonly TopKVariant[];
}

/**
 * The policy selector: a pure function from parameter facts and backend capabilities to a variant
 * and its policy. Thresholds are the policy's named values; a forced variant (tuning) wins when it
 * is applicable, else throws with the reason.
 *
 * reduce when `kMax <= reduceMaxK` (a handful of rounds beat any sort); single-tile when every
 * segment fits one workgroup's tile; radix-select otherwise.
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
  const reduceFits = kMax <= policy.reduceMaxK;
  const tileFits = maxSize <= policy.tileItems;
  const tileMayFit = facts.segmentSizeDeviceBounds && facts.segmentSize.min <= policy.tileItems;

  const verdicts: VariantVerdict[] = [
    {
      variant: 'reduce',
      applicable: reduceFits,
      reachable: reduceFits,
      reason: reduceFits
        ? `kMax ${kMax} <= reduceMaxK ${policy.reduceMaxK}`
        : `kMax ${kMax} > reduceMaxK ${policy.reduceMaxK}`,
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
      variant: 'radix-select',
      applicable: true,
      reachable: !reduceFits && !tileFits,
      reason: reduceFits
        ? `reduce is preferred for kMax <= ${policy.reduceMaxK}`
        : tileFits
          ? `every segment fits a tile (max segment size ${maxSize} <= ${policy.tileItems})`
          : 'the general case',
    },
  ];

  const reachable = verdicts.filter((v) => v.reachable).map((v) => v.variant);
  const natural: TopKVariant = reduceFits ? 'reduce' : tileFits ? 'single-tile' : 'radix-select';
  const chosen = tuning.variant ?? natural;
  if (chosen === 'reduce' && tuning.policy?.workgroupSize === undefined && !reducePerInvocation(policy, maxSize)) {
    policy.workgroupSize = reduceWorkgroupSize(maxSize, policy.workgroupSize, capabilities);
    if (tuning.policy?.reduceChunkItems === undefined) policy.reduceChunkItems = policy.workgroupSize * 16;
  }
  if (tuning.variant !== undefined) {
    const forced = verdicts.find((v) => v.variant === tuning.variant);
    if (forced === undefined) {
      throw new SegkitUsageError(`tuning.variant: '${String(tuning.variant)}' is not a top-k variant; expected ${topKVariants.map((v) => `'${v}'`).join(', ')}`);
    }
    if (!forced.applicable) throw new SegkitUsageError(`tuning.variant: '${forced.variant}' cannot run for these parameters: ${forced.reason}`);
    return { variant: forced.variant, policy, why: `forced by tuning (${forced.reason})`, verdicts, reachable };
  }
  return { variant: natural, policy, why: verdicts.find((v) => v.variant === natural)!.reason, verdicts, reachable };
}

/** Rejects tuning values the kernels cannot run with. */
function checkPolicy(policy: TopKPolicy, capabilities: BackendCapabilities): void {
  const positive = (name: keyof TopKPolicy) => {
    if (!Number.isInteger(policy[name]) || policy[name] < 1) {
      throw new SegkitUsageError(`tuning.policy.${name}: ${policy[name]} is not a positive integer`);
    }
  };
  for (const name of Object.keys(policy) as (keyof TopKPolicy)[]) positive(name);
  // The WGSL kernels use one 256-bin histogram per pass, and the pass count is 32 / radixBits.
  if (policy.radixBits !== 8) throw new SegkitUsageError(`tuning.policy.radixBits: ${policy.radixBits} is not supported; the kernels use 8-bit digits`);
  if (policy.workgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} exceeds the backend's maxWorkgroupSize ${capabilities.maxWorkgroupSize}`);
  }
  if (policy.tileItems * 8 + 4096 > capabilities.workgroupStorageBytes && policy.tileItems > tileItemsFor(capabilities.workgroupStorageBytes)) {
    throw new SegkitUsageError(
      `tuning.policy.tileItems: ${policy.tileItems} items need ${policy.tileItems * 8 + 4096} bytes of workgroup memory; the backend has ${capabilities.workgroupStorageBytes}`,
    );
  }
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
