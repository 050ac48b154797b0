import type { BackendCapabilities } from '../../backends/backend.js';
import { SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import { type VariantSelection, type VariantVerdict, checkPolicyNames, checkPositiveIntegers, selectVariant } from '../../dispatch/variants.js';

/** The variants of DeviceBatchedCopy, from the smallest buffers to the largest. */
export type BatchedCopyVariant = 'team' | 'workgroup' | 'chunked';
/** Every variant, in the order `explain()` lists them. */
export const batchedCopyVariants: readonly BatchedCopyVariant[] = ['team', 'workgroup', 'chunked'];

/** Policy values: what the copy kernels are sized by and where the selector switches. */
export interface BatchedCopyPolicy {
  /** Invocations per workgroup (a power of two). */
  readonly workgroupSize: number;
  /** 'team': invocations per buffer (a power of two, at most workgroupSize); workgroupSize / teamSize buffers per workgroup. */
  readonly teamSize: number;
  /** The largest buffer the selector gives 'team'. */
  readonly teamMaxItems: number;
  /** The largest buffer the selector gives 'workgroup' (one workgroup per buffer); larger ones are split ('chunked'). */
  readonly workgroupMaxItems: number;
  /** 'chunked': items one workgroup copies, a multiple of 4 (so vectorized chunks stay whole vec4s). */
  readonly chunkItems: number;
}

/**
 * The thresholds every built-in policy uses, as literal numbers: `BatchedCopyVariantsFor` reads the
 * same numbers as types, so compile-time pruning never rules out what a policy picks.
 *
 * Provenance: chosen on the CPU emulator and Mesa lavapipe (bench/copy-cpu.ts, bench/copy-webgpu.ts,
 * 2026-11), not yet measured on a discrete GPU: a team of 32 invocations moves a buffer of up to 1024
 * items in at most 32 rounds (a 256-wide workgroup would idle 7/8 of its invocations on buffers that
 * small); up to 16384 items one workgroup per buffer needs no prefix sum; past that a buffer of 64K
 * items would keep one workgroup busy while the rest of the device idles, so the work is cut into
 * chunks of 4096 items over the buffers' prefix offsets.
 */
export const batchedCopyPolicyLimits = {
  teamSize: 32,
  teamMaxItems: 1024,
  workgroupMaxItems: 16384,
  chunkItems: 4096,
} as const;

const largestPowerOfTwoAtMost = (n: number) => 2 ** Math.floor(Math.log2(Math.max(1, n)));

/** The policy for a backend's capabilities (CUB's `policy_selector(cc)`). */
export function batchedCopyPolicyFor(capabilities: BackendCapabilities): BatchedCopyPolicy {
  const workgroupSize = Math.min(256, largestPowerOfTwoAtMost(capabilities.maxWorkgroupSize));
  return {
    workgroupSize,
    teamSize: Math.min(workgroupSize, batchedCopyPolicyLimits.teamSize),
    teamMaxItems: batchedCopyPolicyLimits.teamMaxItems,
    workgroupMaxItems: batchedCopyPolicyLimits.workgroupMaxItems,
    chunkItems: batchedCopyPolicyLimits.chunkItems,
  };
}

/** The facts the selector reads: the buffer-size bounds known on the host. */
export interface BatchedCopySelectorFacts {
  readonly bufferSize: Bounds;
}

/** The selector's answer. */
export type BatchedCopySelection = VariantSelection<BatchedCopyVariant, BatchedCopyPolicy>;

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;

function checkPolicy(policy: BatchedCopyPolicy, capabilities: BackendCapabilities): void {
  checkPositiveIntegers(policy);
  if (!isPowerOfTwo(policy.workgroupSize) || policy.workgroupSize > capabilities.maxWorkgroupSize) {
    throw new SegkitUsageError(`tuning.policy.workgroupSize: ${policy.workgroupSize} is not a power of two at most ${capabilities.maxWorkgroupSize} (the backend's maxWorkgroupSize)`);
  }
  if (!isPowerOfTwo(policy.teamSize) || policy.teamSize > policy.workgroupSize) {
    throw new SegkitUsageError(`tuning.policy.teamSize: ${policy.teamSize} is not a power of two at most ${policy.workgroupSize} (the workgroup size)`);
  }
  if (policy.chunkItems % 4 !== 0) throw new SegkitUsageError(`tuning.policy.chunkItems: ${policy.chunkItems} is not a multiple of 4 (chunks are whole vec4s)`);
}

/**
 * The policy selector: a pure function from the buffer-size bounds and the backend's capabilities to
 * a variant and its policy. 'team' for buffers of at most `teamMaxItems`, 'workgroup' up to
 * `workgroupMaxItems`, 'chunked' beyond. Every variant copies buffers of any size correctly, so a
 * forced variant (tuning) always runs.
 */
export function selectBatchedCopyVariant(
  facts: BatchedCopySelectorFacts,
  capabilities: BackendCapabilities,
  tuning: { variant?: BatchedCopyVariant; policy?: Partial<BatchedCopyPolicy> } = {},
): BatchedCopySelection {
  const base = batchedCopyPolicyFor(capabilities);
  checkPolicyNames(tuning.policy, base);
  const policy: BatchedCopyPolicy = { ...base, ...tuning.policy };
  checkPolicy(policy, capabilities);
  const max = facts.bufferSize.max;
  const natural: BatchedCopyVariant = max <= policy.teamMaxItems ? 'team' : max <= policy.workgroupMaxItems ? 'workgroup' : 'chunked';
  const verdicts: VariantVerdict<BatchedCopyVariant>[] = [
    {
      variant: 'team',
      applicable: true,
      reachable: natural === 'team',
      reason: max <= policy.teamMaxItems ? `max buffer size ${max} <= teamMaxItems ${policy.teamMaxItems}: ${policy.teamSize} invocations per buffer, ${policy.workgroupSize / policy.teamSize} buffers per workgroup` : `max buffer size ${max} > teamMaxItems ${policy.teamMaxItems}`,
    },
    {
      variant: 'workgroup',
      applicable: true,
      reachable: natural === 'workgroup',
      reason:
        natural === 'team'
          ? 'team is preferred for buffers this small'
          : max <= policy.workgroupMaxItems
            ? `max buffer size ${max} <= workgroupMaxItems ${policy.workgroupMaxItems}: one workgroup per buffer`
            : `max buffer size ${max} > workgroupMaxItems ${policy.workgroupMaxItems}`,
    },
    {
      variant: 'chunked',
      applicable: true,
      reachable: natural === 'chunked',
      reason:
        natural === 'chunked'
          ? `max buffer size ${max} > workgroupMaxItems ${policy.workgroupMaxItems}: chunks of ${policy.chunkItems} items over the buffers' prefix offsets, several workgroups per large buffer`
          : `max buffer size ${max} <= workgroupMaxItems ${policy.workgroupMaxItems}`,
    },
  ];
  return selectVariant('batched-copy', verdicts, natural, policy, tuning.variant);
}
