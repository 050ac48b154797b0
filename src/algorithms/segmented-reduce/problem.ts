import type { DeviceArray } from '../../backends/backend.js';
import type { Executor, KernelTable, Launch, SegmentSource, SegmentedProblem, SegmentedRun } from '../../dispatch/problem.js';
import { OpCode, type ReduceValueType, sumOrder } from './ops.js';
import type { SegmentedReducePolicy, SegmentedReduceVariant } from './policy.js';

/*
 * What a segmented reduction adds to the segmented problem (dispatch/problem.ts) that host and
 * kernels read the same way, and its kernel table.
 */

/**
 * Everything the reduce kernels need, with every host per-segment array already uploaded. The
 * segmented input is `valuesIn`; `sources` holds `op` (option indices) and, when given,
 * `initialValue` as the bits of a value of `valueType` (a constant or uniform is its bits; a device
 * array holds values of `valueType`).
 *
 * Conventions every kernel follows (beyond the segmented problem's):
 * - values are read as u32 bits; min/max compare ordered keys (ops.ts);
 * - `opOfOption[index]` is the op code of option `index` (indices past the end clamp to the last);
 * - f32 sums follow the canonical order of ops.ts when `canonical`.
 */
export interface SegmentedReduceProblem extends SegmentedProblem {
  readonly valueType: ReduceValueType;
  readonly sources: { readonly op: SegmentSource; readonly initialValue?: SegmentSource };
  /** Option index -> op code (ops.ts `OpCode`). */
  readonly opOfOption: readonly number[];
  /** `indicesOut` is written. */
  readonly indices: boolean;
  /** f32 sums follow the canonical order (determinism 'run-to-run'). */
  readonly canonical: boolean;
}

/** The kernels of DeviceSegmentedReduce. */
export type SegmentedReduceKernelId = 'validate' | 'segment-offsets' | 'thread' | 'subgroup' | 'workgroup' | 'chunk' | 'merge' | 'chunk-merge';

/** One kernel launch of a reduce plan, in order. */
export type SegmentedReduceLaunch = Launch<SegmentedReduceKernelId, SegmentedReduceVariant>;

/** Everything an executor needs for one run of a reduce plan. */
export type SegmentedReduceRun = SegmentedRun<SegmentedReduceProblem, SegmentedReducePolicy, SegmentedReduceKernelId> & {
  readonly arrays: { readonly valuesIn: DeviceArray; readonly valuesOut: DeviceArray; readonly indicesOut: DeviceArray | undefined };
};

/** Runs a reduce plan's launches on one kind of backend. */
export type SegmentedReduceExecutor = Executor<SegmentedReduceRun>;

/**
 * The op (`op`, a source of option indices) is a constant 'min' or 'max' and no index is written
 * (`indices`: indicesOut is): then an extreme's chunk partial holds the index of the chunk's first
 * item, not the extreme's (on WebGPU the lanes keep keys and no rows, preamble.ts teamReduceWgsl).
 * The merge reads partial indices only to break ties, where an earlier chunk's first index is
 * smaller, as its extreme's is.
 */
export function extremeKeysOnly(op: { readonly kind: string; readonly value?: number }, opOfOption: readonly number[], indices: boolean): boolean {
  if (indices) return false;
  const code = constantOpOf(op, opOfOption);
  return code === OpCode.Min || code === OpCode.Max;
}

/** The op code of every segment when the op (`op`, a source of option indices) is a constant; undefined otherwise. */
export function constantOpOf(op: { readonly kind: string; readonly value?: number }, opOfOption: readonly number[]): number | undefined {
  if (op.kind !== 'constant' || op.value === undefined) return undefined;
  const options = opOfOption.length > 0 ? opOfOption : [OpCode.Sum];
  return options[Math.min(op.value, options.length - 1)];
}

/** Chunks of the summation order a segment of `maxSegmentSize` items spans: the multi-workgroup grid per segment. */
export function chunksPerSegment(maxSegmentSize: number): number {
  return Math.max(1, Math.ceil(maxSegmentSize / sumOrder.chunkItems));
}

/** Segments one 'subgroup' workgroup reduces. */
export function segmentsPerTeamWorkgroup(policy: SegmentedReducePolicy): number {
  return policy.workgroupSize / policy.subgroupSize;
}

/** Chunks one 'multi-workgroup' chunk workgroup reduces: chunkRounds adjacent ones for each of its teams of chunkTeamSize invocations. */
export function chunksPerWorkgroup(policy: SegmentedReducePolicy): number {
  return (policy.workgroupSize / policy.chunkTeamSize) * policy.chunkRounds;
}

/** 'multi-workgroup' partials of a segment of `size` items: one per team of chunkRounds chunks (none for an empty segment). */
export function segmentPartials(size: number, policy: SegmentedReducePolicy): number {
  return Math.ceil(Math.ceil(size / sumOrder.chunkItems) / policy.chunkRounds);
}

/** 'multi-workgroup' partials the longest segment (`maxSegmentSize` items) may leave, at least one. */
export function partialsPerSegment(maxSegmentSize: number, policy: SegmentedReducePolicy): number {
  return Math.max(1, segmentPartials(maxSegmentSize, policy));
}

/** 'multi-workgroup' chunk workgroups per segment: its chunks, chunksPerWorkgroup at a time. */
export function chunkGroupsPerSegment(maxSegmentSize: number, policy: SegmentedReducePolicy): number {
  return Math.ceil(chunksPerSegment(maxSegmentSize) / chunksPerWorkgroup(policy));
}

/**
 * Chunk workgroups of a segment of `size` items that run the chunk kernels' body (and, in
 * 'chunk-merge', arrive): those whose first chunk is inside the segment, and at least the first, so
 * an empty segment's result is written too.
 */
export function enteringChunkGroups(size: number, policy: SegmentedReducePolicy): number {
  return Math.max(1, Math.ceil(Math.ceil(size / sumOrder.chunkItems) / chunksPerWorkgroup(policy)));
}

/**
 * The reduce kernel table: the slots each kernel binds and its grid, read by the planner (plan.ts)
 * and by both executors. 'chunk' writes one partial per team of each segment (chunkRounds chunks) to
 * slot `partials` (identical on every backend; a chunk workgroup reduces chunksPerWorkgroup
 * consecutive chunks of one segment); 'merge' combines them. 'chunk-merge' is both in one launch:
 * each chunk workgroup publishes its partials, then counts itself in its segment's word of
 * `arrivals`; the last of the segment's workgroups to arrive combines the partials and writes the
 * result.
 */
export const segmentedReduceKernels: KernelTable<Exclude<SegmentedReduceKernelId, 'validate' | 'segment-offsets'>, SegmentedReduceProblem, SegmentedReducePolicy> = {
  thread: { slots: ['offsets'], grid: (problem, policy) => Math.ceil(problem.maxSegments / policy.workgroupSize) },
  subgroup: { slots: ['offsets'], grid: (problem, policy) => Math.ceil(problem.maxSegments / segmentsPerTeamWorkgroup(policy)) },
  workgroup: { slots: ['offsets'], grid: (problem) => problem.maxSegments },
  chunk: { slots: ['offsets', 'partials'], grid: (problem, policy) => problem.maxSegments * chunkGroupsPerSegment(problem.maxSegmentSize, policy), identicalSlots: ['partials'] },
  merge: { slots: ['offsets', 'partials'], grid: (problem) => problem.maxSegments },
  'chunk-merge': {
    slots: ['offsets', 'partials', 'arrivals'],
    grid: (problem, policy) => problem.maxSegments * chunkGroupsPerSegment(problem.maxSegmentSize, policy),
    identicalSlots: ['partials', 'arrivals'],
  },
};

/*
 * Temporary-storage slots (u32 words), shared by every backend:
 * - `offsets`: maxSegments + 1 segment starts (packed layout with per-segment sizes), written by
 *   'segment-offsets'.
 * - multi-workgroup: `partials`: maxSegments * chunksPerSegment pairs [bits, index], the partial of
 *   team k of segment s (its chunkRounds chunks from chunk k * chunkRounds) at pair
 *   s * chunksPerSegment + k: a sum's bits (f32: the chunk tree's canonical total over the team's
 *   chunks; integers: the wrapped sum) with index 0, or the team's extreme (its bits and its
 *   segment-local index, or the team's first index under {@link extremeKeysOnly}; 0xFFFFFFFF for
 *   none). Teams past a segment's end are not written.
 *   'chunk-merge' publishes the same pair as four words, the bits and the index each as two
 *   published words with status 1 (dispatch/published-words.ts): the merging workgroup needs no
 *   ordering between another workgroup's stores, and takes a partial once all four words carry the
 *   status. Zeroed every run.
 * - 'chunk-merge': `arrivals`: maxSegments words, the chunk workgroups of each segment done so far.
 *   Zeroed every run; a segment's word ends at {@link enteringChunkGroups}.
 */
export const partialWords = 2;
/** Words of a published partial ('chunk-merge'). */
export const publishedPartialWords = 4;
/** The status 'chunk-merge' publishes its partials with. */
export const partialStatus = 1;
