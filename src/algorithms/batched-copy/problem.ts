import type { DeviceArray } from '../../backends/backend.js';
import type { Executor, KernelTable, Launch, SegmentSource, SegmentedProblem, SegmentedRun } from '../../dispatch/problem.js';
import type { BatchedCopyPolicy, BatchedCopyVariant } from './policy.js';

/*
 * What a batched copy adds to the segmented problem (dispatch/problem.ts) that host and kernels read
 * the same way, and its kernel table. A buffer is a segment: `segmentSizes` are the buffers' sizes,
 * and their prefix sum (slot `offsets`, or i * size) places each buffer in the concatenation of all
 * buffers, which the 'chunked' grid walks. The segmented input is `source`, but no buffer is packed
 * in it: `itemsLength` is 2^32 - 1, so the shared geometry checks never bind and the range checks
 * are this algorithm's own ('check-*' kernels).
 */

/** Everything the copy kernels need, with every host per-buffer array already uploaded. */
export interface BatchedCopyProblem extends SegmentedProblem {
  readonly sources: { readonly sourceOffsets: SegmentSource; readonly destinationOffsets: SegmentSource };
  /** Elements of `source` and `destination`: no read or write goes past them. */
  readonly sourceLength: number;
  readonly destinationLength: number;
  /** 4: every offset and size is a multiple of 4 (known on the host), and kernels move vec4<u32>; else 1. */
  readonly vectorWidth: 1 | 4;
  /** Host bound on the sum of the sizes: the 'chunked' grid covers it. */
  readonly maxTotalItems: number;
  /** Parameter indices (into the run's parameterNames) of the offsets, for the status words. */
  readonly sourceOffsetsParameter: number;
  readonly destinationOffsetsParameter: number;
}

/** The kernels of DeviceBatchedCopy. */
export type BatchedCopyKernelId = 'validate' | 'segment-offsets' | 'check-clear' | 'check-mark' | 'check-scan' | 'check-report' | 'team' | 'workgroup' | 'chunked';

/** One kernel launch of a copy plan, in order. */
export type BatchedCopyLaunch = Launch<BatchedCopyKernelId, BatchedCopyVariant>;

/** Everything an executor needs for one run of a copy plan. */
export type BatchedCopyRun = SegmentedRun<BatchedCopyProblem, BatchedCopyPolicy, BatchedCopyKernelId> & {
  readonly arrays: { readonly source: DeviceArray; readonly destination: DeviceArray };
};

/** Runs a copy plan's launches on one kind of backend. */
export type BatchedCopyExecutor = Executor<BatchedCopyRun>;

/** The 'no buffer' word of the check slot. */
export const noBuffer = 0xffffffff;

/** Words of one bitmap over the destination (one bit per element). */
export function bitmapWords(destinationLength: number): number {
  return Math.ceil(destinationLength / 32);
}

/*
 * Slot `check` (u32 words), the device-side range and overlap check under 'validate':
 * [0] the lowest buffer whose range ends past its array, [1] the lowest buffer whose destination
 * range holds another non-empty buffer's start (0xFFFFFFFF: none), then `starts` (one bit per
 * destination element: a non-empty buffer starts there) and `shared` (a bit of `starts` set twice),
 * each bitmapWords(destinationLength) words.
 */
export function checkSlotWords(destinationLength: number): number {
  return 2 + 2 * bitmapWords(destinationLength);
}

/** Buffers one 'team' workgroup copies. */
export function buffersPerTeamWorkgroup(policy: BatchedCopyPolicy): number {
  return policy.workgroupSize / policy.teamSize;
}

type Geometry = Pick<BatchedCopyProblem, 'maxSegments' | 'maxSegmentSize'> & Partial<Pick<BatchedCopyProblem, 'destinationLength' | 'maxTotalItems'>>;

/**
 * The copy kernel table: the slots each kernel binds and its grid, read by the planner (plan.ts)
 * and by both executors. The planner passes the destination's length and the bound on the total.
 */
export const batchedCopyKernels: KernelTable<Exclude<BatchedCopyKernelId, 'validate' | 'segment-offsets'>, BatchedCopyProblem, BatchedCopyPolicy> = {
  'check-clear': { slots: ['check'], grid: (problem, policy) => Math.ceil(checkSlotWords((problem as Geometry).destinationLength ?? 0) / policy.workgroupSize), identicalSlots: ['check'] },
  'check-mark': { slots: ['check'], grid: (problem, policy) => Math.ceil(problem.maxSegments / policy.workgroupSize), identicalSlots: ['check'] },
  'check-scan': { slots: ['check'], grid: (problem) => problem.maxSegments, identicalSlots: ['check'] },
  'check-report': { slots: ['check'], grid: () => 1 },
  team: { slots: [], grid: (problem, policy) => Math.ceil(problem.maxSegments / buffersPerTeamWorkgroup(policy)) },
  workgroup: { slots: [], grid: (problem) => problem.maxSegments },
  chunked: { slots: ['offsets'], grid: (problem, policy) => Math.ceil(((problem as Geometry).maxTotalItems ?? 0) / policy.chunkItems) },
};
