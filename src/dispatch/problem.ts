import type { Backend, DeviceArray } from '../backends/backend.js';
import type { Bounds } from '../params/param.js';
import type { TempStorageLayout } from './temp-storage.js';

/*
 * The one description of a segmented call that the host and every backend's kernels read the same
 * way (Circle's "one data structure for host and device"): where the segments are, where each
 * parameter's values come from, which launches run and which temporary-storage slots they share.
 * An algorithm's plan builds it; each backend's executor runs its launches.
 */

/** A value for the whole call: baked into the kernel, a host uniform, or a 1-element device array. */
export type ScalarSource =
  | { readonly kind: 'constant'; readonly value: number }
  | { readonly kind: 'uniform'; readonly value: number }
  | { readonly kind: 'device'; readonly array: DeviceArray };

/** A value that may differ per segment: a scalar source, or one device element per segment. */
export type SegmentSource = ScalarSource | { readonly kind: 'perSegment'; readonly array: DeviceArray };

/** Where segment `i` starts. */
export type SegmentLayout =
  | { readonly kind: 'packed' } // starts are the exclusive prefix sum of the sizes (slot `offsets` when sizes vary)
  | { readonly kind: 'strided'; readonly stride: ScalarSource };

/**
 * The segments of a call, as every kernel resolves them.
 *
 * Conventions every kernel follows:
 * - segments `>= numSegments` (and, under 'trust', sizes past the items) are clamped, so no read or
 *   write leaves its array;
 * - when a status slot exists, a kernel first tests the status word and exits if it is non-zero.
 */
export interface SegmentedProblem {
  /** Grid bound on segments: the host value of `numSegments`, or the most the outputs can hold. */
  readonly maxSegments: number;
  /** Host-known bound on every segment's size (sizes the grids of multi-workgroup variants). */
  readonly maxSegmentSize: number;
  /** Elements of the segmented input array (no read goes past it). */
  readonly itemsLength: number;
  readonly numSegments: ScalarSource;
  readonly segmentSizes: SegmentSource;
  readonly layout: SegmentLayout;
  /** Device-only runtime bounds `[min, max]` of the segment sizes, for device-side variant branches. */
  readonly segmentSizeDeviceBounds: DeviceArray | undefined;
  /**
   * The algorithm's own parameters by name (`k`, `selectDirection`, `op`, ...), every host
   * per-segment array already on the device. Option parameters hold option indices.
   */
  readonly sources: Readonly<Record<string, SegmentSource>>;
  /**
   * 'segment-offsets' also writes the segments in order of size ({@link sizeOrderClass}), for
   * kernels that give each workgroup segments of its own: they take them largest first, so that the
   * longest ones do not start last and run on alone. Left out: false.
   */
  readonly sizeOrder?: boolean;
}

/** Size classes of {@link SegmentedProblem.sizeOrder}: the last one also holds every smaller size. */
export const sizeOrderClasses = 8;

/**
 * The size class of a segment of `size` items where the largest is at most `maxSize`: 0 for sizes
 * of the largest power of two's class (above half of it), 1 for the class below, and so on, the
 * last class holding every smaller size (empty segments too). Both backends order by it the same
 * way: by class, then by index.
 */
export function sizeOrderClass(size: number, maxSize: number): number {
  return Math.min(sizeOrderClasses - 1, Math.max(0, ceilLog2(maxSize) - ceilLog2(size)));
}

/** log2 of `n` rounded up to a power of two (0 for n <= 1), as the WGSL's size classes take it. */
export function ceilLog2(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

/** One device-side check of the validate kernel (device-only values under `guaranteeChecks: 'validate'`). */
export interface DeviceCheck {
  /** Which parameter, as reported in `GuaranteeViolationError`: an index into the run's `parameterNames`. */
  readonly parameter: number;
  readonly kind:
    | 'scalar' // array[0] within bounds
    | 'per-segment' // array[i] for i < numSegments within bounds, and within `deviceBounds` if given
    | 'device-bounds'; // deviceBounds itself: min <= max and within bounds
  readonly array: DeviceArray;
  /** Static (and host runtime) bounds, integers. */
  readonly bounds: Bounds;
  /** Device runtime bounds `[min, max]` the values must also lie in. */
  readonly deviceBounds: DeviceArray | undefined;
}

/**
 * The status words written by the validate kernel: {@link statusWords} u32, word by word:
 * [0] 0 = ok, else what failed (see `StatusCode`); [1] parameter index (into the run's
 * `parameterNames`); [2] segment (0xFFFFFFFF for none); [3] value (for `PastItems` the segment's
 * end, for `BadDeviceBounds` the failing end); [4] bound min; [5] bound max (for `BadDeviceBounds`
 * the device bounds' own words; for `PastItems` [5] is the number of items; for `LargerThanStride`
 * [5] is the stride). A failing scalar is reported before any segment; among segments the lowest
 * index wins.
 */
export const StatusWord = {
  code: 0,
  parameter: 1,
  segment: 2,
  value: 3,
  min: 4,
  max: 5,
} as const;

/** Words of the status buffer. */
export const statusWords = 8;

/** The segment word of a violation that concerns no single segment. */
export const noSegment = 0xffffffff;

/** What the validate kernel found. */
export const enum StatusCode {
  Ok = 0,
  /** A value outside its static (or host runtime) bounds. */
  OutsideStatic = 1,
  /** A value outside its device runtime bounds. */
  OutsideDevice = 2,
  /** Device runtime bounds that are empty or outside the static bounds. */
  BadDeviceBounds = 3,
  /** A segment whose items reach past the segmented array (value = its end). */
  PastItems = 4,
  /** The sum of the sizes outside the `totalNumItems` bounds (value = the sum). */
  TotalOutside = 5,
  /** A segment size larger than the stride. */
  LargerThanStride = 6,
  /**
   * Batched copy: a buffer's source or destination range ends past its array. Words: [1] the
   * offsets parameter, [2] the buffer, [3] the range's end, [4] its start, [5] the array's length.
   */
  RangePastEnd = 7,
  /**
   * Batched copy: two destination ranges overlap. Words: [2] the buffer, [3] the other buffer, [4]
   * and [5] the buffer's range, [6] and [7] the other's.
   */
  RangesOverlap = 8,
}

/** One kernel launch of a plan, in order. */
export interface Launch<KernelId extends string = string, Variant extends string = string> {
  readonly kernel: KernelId;
  /** The variant this launch belongs to, or undefined for shared prologue kernels (validate, segment offsets). */
  readonly variant: Variant | undefined;
  /** `<algorithm>/<kernel>[specialization]`, as counted in `stats().launchesByKernel`. */
  readonly name: string;
  /** Workgroups. */
  readonly grid: number;
  /** Pass (0-based) for multi-pass kernels, else 0. */
  readonly pass: number;
  /** Why this launch exists, for `explain()`. */
  readonly purpose: string;
}

/** Everything an executor needs for one run of a plan. */
export interface SegmentedRun<Problem extends SegmentedProblem = SegmentedProblem, Policy = unknown, KernelId extends string = string> {
  readonly backend: Backend;
  /** The algorithm, as executors are registered (`topk`, `reduce`, ...). */
  readonly algorithm: string;
  readonly problem: Problem;
  readonly policy: Policy;
  readonly launches: readonly Launch<KernelId>[];
  readonly layout: TempStorageLayout;
  /** Caller-owned temporary storage, present iff `layout.totalBytes > 0`. */
  readonly temp: DeviceArray<'u8'> | undefined;
  /** Status words ({@link statusWords} u32), present iff the plan validates device-only values. */
  readonly status: DeviceArray<'u32'> | undefined;
  /**
   * Where the executor copies the status words once the launches are done, on the device and in
   * queue order (no read-back): the plan reads the copies later (status-reports.ts), so one status
   * buffer serves back-to-back runs. Present iff `status` is.
   */
  readonly statusReport?: { readonly array: DeviceArray<'u32'>; readonly word: number } | undefined;
  readonly checks: readonly DeviceCheck[];
  /** The names a check's `parameter` index refers to. */
  readonly parameterNames: readonly string[];
  /** `totalNumItems` bounds for the device check of the sum of sizes, when sizes are device-only. */
  readonly totalNumItems: Bounds | undefined;
  /** The call's arrays by binding name (`keysIn`, `valuesOut`, ...); the first is the segmented input. */
  readonly arrays: Readonly<Record<string, DeviceArray | undefined>>;
  /**
   * One object per plan, the same for every run of it: executors may key what they resolve once per
   * plan (programs, pipelines, bind groups) on it. Absent: nothing is cached.
   */
  readonly cache?: object;
}

/** Runs a plan's launches on one kind of backend. Work is submitted (not necessarily done) when it returns. */
export interface Executor<Run extends SegmentedRun = SegmentedRun> {
  execute(run: Run): void;
}

/**
 * One entry of an algorithm's kernel table: what the planner and every backend's executor read
 * about a kernel. The bodies (a CPU function, a WGSL program) live beside it, one per backend.
 */
export interface KernelSpec<Problem extends SegmentedProblem = SegmentedProblem, Policy = unknown> {
  /** Temporary-storage slots the kernel reads or writes; the WebGPU executor binds their range and passes `<slot>At` word offsets. */
  readonly slots: readonly string[];
  /** Workgroups of one launch. */
  grid(problem: Pick<Problem, 'maxSegments' | 'maxSegmentSize'>, policy: Policy): number;
  /**
   * Slots this kernel writes whose contents after the launch are the same on every backend (the twin
   * test compares them launch by launch). A slot is left out where a backend takes a shortcut inside
   * the launch (the CPU's sampled radix threshold) that changes intermediate values but not results.
   */
  readonly identicalSlots?: readonly string[];
}

/** An algorithm's kernel table, by kernel id. */
export type KernelTable<KernelId extends string, Problem extends SegmentedProblem = SegmentedProblem, Policy = unknown> = Readonly<
  Record<KernelId, KernelSpec<Problem, Policy>>
>;
