import type { BackendCapabilities, DeviceArray } from '../../backends/backend.js';
import { bytesPerElement } from '../../backends/backend.js';
import { type TempStorageLayout, slotAlignment } from '../../dispatch/temp-storage.js';
import { SegkitRangeError, SegkitUsageError } from '../../errors.js';
import type { Bounds } from '../../params/param.js';
import type { TopKKernelId, TopKLaunch } from './problem.js';

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
  if (chosen === 'reduce' && tuning.policy?.workgroupSize === undefined) {
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
 * What top-k can do on a backend, from its capabilities and the policy (which tuning may change).
 * Each is a property of the algorithm's kernels on a device with those capabilities, so every
 * backend enforces them the same way, at planning: the CPU emulator given a GPU's capabilities
 * refuses what that GPU refuses, with the same message.
 */
export interface TopKLimits {
  /**
   * Most results per segment that sorted radix-select returns: its last kernel sorts a segment's
   * selection (keys and indices, 8 bytes an item) in the workgroup memory of one tile, the policy's
   * `tileItems` (2048 with 32 KiB of workgroup memory, 1024 with WebGPU's default 16 KiB). The
   * other variants never select more than a tile per segment.
   */
  readonly maxSortedSelection: number;
  /**
   * Bytes one storage binding holds (`maxStorageBufferBytes`): each array a kernel reads or writes
   * (keys and values, in and out) and the part of temporary storage one kernel binds.
   */
  readonly maxBindingBytes: number;
  /** Workgroups of one launch: `maxWorkgroupsPerDimension` in x, as many rows of those in y. */
  readonly maxWorkgroups: number;
}

/**
 * The limits of top-k on a backend with `capabilities` (see {@link TopKLimits}).
 *
 * @example
 * ```ts
 * topKLimits(cpuBackend().capabilities).maxSortedSelection; // 2048 (32 KiB of workgroup memory)
 * ```
 */
export function topKLimits(capabilities: BackendCapabilities, policy: TopKPolicy = topKPolicyFor(capabilities)): TopKLimits {
  return {
    maxSortedSelection: policy.tileItems,
    maxBindingBytes: capabilities.maxStorageBufferBytes,
    maxWorkgroups: capabilities.maxWorkgroupsPerDimension * capabilities.maxWorkgroupsPerDimension,
  };
}

/** Temporary-storage slots each kernel reads or writes. */
const temporaryStorageSlots: Record<TopKKernelId, readonly string[]> = {
  validate: [],
  'segment-offsets': ['offsets'],
  'single-tile': ['offsets'],
  reduce: ['offsets', 'partials'],
  'reduce-merge': ['offsets', 'partials'],
  'radix-init': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-histogram': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-choose': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-filter': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-finalize': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
};

/** The part of temporary storage one kernel binds: byte offset and size, and its slots' word offsets within it. */
export interface TemporaryStorageBinding {
  readonly offset: number;
  readonly size: number;
  /** Word offset of each slot the kernel uses, relative to `offset`, by slot name. */
  readonly slotWords: Readonly<Record<string, number>>;
}

/**
 * The range of temporary storage `kernel` binds: all of it when it fits one binding, else the span
 * of the slots the kernel uses (slots start on 256-byte boundaries, so the span starts on a valid
 * storage-binding offset). Undefined when the kernel uses no slot of this layout.
 */
export function temporaryStorageBinding(kernel: TopKKernelId, layout: TempStorageLayout, maxBindingBytes: number): TemporaryStorageBinding | undefined {
  const used = temporaryStorageSlots[kernel].filter((slot) => layout.has(slot)).map((slot) => layout.slot(slot));
  if (used.length === 0) return undefined;
  let offset = 0;
  let end = layout.totalBytes;
  if (end > maxBindingBytes) {
    offset = Math.min(...used.map((s) => s.offset));
    offset -= offset % slotAlignment;
    end = Math.max(...used.map((s) => s.offset + s.bytes));
  }
  const slotWords: Record<string, number> = {};
  for (const slot of used) slotWords[slot.name] = (slot.offset - offset) >>> 2;
  return { offset, size: Math.max(4, Math.ceil((end - offset) / 4) * 4), slotWords };
}

/** A per-segment or device-only value a run reads on the device: `words` 32-bit words of `values`. */
export interface DeviceInput {
  readonly parameter: string;
  /** The DeviceArray or host array; one used by several parameters is read once. */
  readonly values: object;
  readonly words: number;
}

/** What {@link checkTopKLimits} reads of a plan. */
export interface TopKPlanShape {
  readonly kMax: number;
  readonly maxSegmentSize: number;
  readonly sorted: boolean;
  /** The arrays kernels bind, by parameter name. */
  readonly arrays: Readonly<Record<string, DeviceArray | undefined>>;
  readonly launches: readonly TopKLaunch[];
  readonly layout: TempStorageLayout;
  readonly deviceInputs: readonly DeviceInput[];
}

/**
 * Words the kernels read the per-segment and device-only values through: they are gathered into one
 * binding (a WebGPU stage is sure of only 8 storage bindings), after a 4-word header.
 */
function deviceInputWords(inputs: readonly DeviceInput[]): number {
  const words = new Map<object, number>();
  for (const input of inputs) words.set(input.values, Math.max(words.get(input.values) ?? 0, input.words));
  let total = 4;
  for (const w of words.values()) total += w;
  return total;
}

/**
 * Rejects, at planning and the same way on every backend, a plan that a backend with
 * `capabilities` cannot run (see {@link TopKLimits}).
 */
export function checkTopKLimits(selection: TopKSelection, capabilities: BackendCapabilities, plan: TopKPlanShape): void {
  const limits = topKLimits(capabilities, selection.policy);
  const selected = Math.min(plan.kMax, plan.maxSegmentSize);
  if (selection.variant === 'radix-select' && plan.sorted && selected > limits.maxSortedSelection) {
    throw new SegkitRangeError(
      'k',
      `sorted radix-select returns at most ${limits.maxSortedSelection} keys per segment on this backend (the tile it sorts in workgroup memory); kMax ${plan.kMax} with segments of up to ${plan.maxSegmentSize} keys selects up to ${selected}. Bound k or the segment sizes, or ask for outputOrdering 'unsorted'`,
      { value: plan.kMax },
    );
  }
  for (const [name, array] of Object.entries(plan.arrays)) {
    if (array === undefined) continue;
    const bytes = array.length * bytesPerElement[array.dtype];
    if (bytes > limits.maxBindingBytes) {
      throw new SegkitUsageError(
        `${name}: ${array.length} elements (${bytes} bytes) exceed the ${limits.maxBindingBytes} bytes one storage binding of this backend holds (maxStorageBufferBytes); split the call into batches of segments`,
      );
    }
  }
  const inputBytes = deviceInputWords(plan.deviceInputs) * 4;
  if (inputBytes > limits.maxBindingBytes) {
    const names = [...new Set(plan.deviceInputs.map((input) => input.parameter))].join(', ');
    throw new SegkitUsageError(
      `${names}: per-segment and device-only values of one call take ${inputBytes} bytes, read through one storage binding of at most ${limits.maxBindingBytes} bytes on this backend (maxStorageBufferBytes); split the call into batches of segments`,
    );
  }
  for (const launch of plan.launches) {
    if (launch.grid === 0) continue;
    if (launch.grid > limits.maxWorkgroups) {
      throw new SegkitUsageError(
        `${launch.name}: ${launch.grid} workgroups exceed this backend's dispatch limit of ${capabilities.maxWorkgroupsPerDimension}^2 (maxWorkgroupsPerDimension); split the call into batches of segments`,
      );
    }
    const temp = temporaryStorageBinding(launch.kernel, plan.layout, limits.maxBindingBytes);
    if (temp !== undefined && temp.size > limits.maxBindingBytes) {
      throw new SegkitUsageError(
        `${launch.name}: needs ${temp.size} bytes of temporary storage in one binding; this backend binds at most ${limits.maxBindingBytes} bytes (maxStorageBufferBytes). Bound the total number of items (totalNumItems) or use smaller segments`,
      );
    }
  }
}
