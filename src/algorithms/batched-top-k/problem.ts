import type { Backend, DeviceArray } from '../../backends/backend.js';
import type { Bounds } from '../../params/param.js';
import type { TempStorageLayout } from '../../dispatch/temp-storage.js';
import type { KeyType } from './keys.js';
import type { TopKPolicy, TopKVariant } from './policy.js';

/*
 * The one description of a top-k call that host and kernels read the same way (Circle's "one data
 * structure for host and device"). The plan builds it; each backend's executor runs its launches.
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
  | { readonly kind: 'packed' } // starts are the exclusive prefix sum of the sizes (slot `offsets`)
  | { readonly kind: 'strided'; readonly stride: ScalarSource };

/**
 * Everything the kernels need, with every host per-segment array already uploaded.
 *
 * Conventions every kernel follows:
 * - keys are read as u32 bits and ranked by `orderedKey` (keys.ts): larger ordered key first, then
 *   the smaller segment-local index;
 * - `direction` sources hold option indices; `directionOfOption[index]` is 0 for 'max', 1 for 'min'
 *   (indices past the end clamp to the last entry);
 * - segments `>= numSegments` (and, under 'trust', sizes past the keys or k past kMax) are clamped,
 *   so no write lands outside the outputs;
 * - when a status slot exists, a kernel first reads `status[0]` and exits if it is non-zero.
 */
export interface TopKProblem {
  readonly keyType: KeyType;
  /** 'payload': copy `valuesIn`; 'indices': segment-local indices; 'none': no values output. */
  readonly valueMode: 'none' | 'payload' | 'indices';
  /** dtype of `valuesOut` when values are written. */
  readonly valueType: 'f32' | 'i32' | 'u32';
  /** Output slots per segment. */
  readonly kMax: number;
  /** Grid bound on segments: the host value of `numSegments`, or the most the outputs can hold. */
  readonly maxSegments: number;
  /** Host-known bound on every segment's size (sizes the grids of multi-workgroup variants). */
  readonly maxSegmentSize: number;
  /** Number of keys in `keysIn` (no read goes past it). */
  readonly keysLength: number;
  readonly numSegments: ScalarSource;
  readonly segmentSizes: SegmentSource;
  readonly layout: SegmentLayout;
  readonly k: SegmentSource;
  readonly direction: SegmentSource;
  /** Option index -> 0 ('max') or 1 ('min'). */
  readonly directionOfOption: readonly number[];
  /** Sort each segment's results (best first). */
  readonly sorted: boolean;
  /** Device-only runtime bounds `[min, max]` of the segment sizes, for the device-side single-tile branch. */
  readonly segmentSizeDeviceBounds: DeviceArray | undefined;
}

/** One device-side check of the validate kernel (device-only values under `guaranteeChecks: 'validate'`). */
export interface DeviceCheck {
  /** Which parameter, as reported in `GuaranteeViolationError` (index into `deviceCheckParameters`). */
  readonly parameter: DeviceCheckParameter;
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

/** Parameters a device check can name, by status code. */
export const deviceCheckParameters = ['segmentSizes', 'k', 'selectDirection', 'numSegments', 'segmentStride', 'totalNumItems'] as const;
/** A parameter a device check can name. */
export type DeviceCheckParameter = (typeof deviceCheckParameters)[number];

/**
 * Status words written by the validate kernel (8 u32):
 * [0] 0 = ok, else what failed (see `StatusCode`); [1] parameter index; [2] segment (0xFFFFFFFF
 * for none); [3] value (for `PastKeys` the segment's end, for `BadDeviceBounds` the failing end);
 * [4] bound min; [5] bound max (for `BadDeviceBounds` the device bounds' own words; for `PastKeys`
 * [5] is the number of keys; for `LargerThanStride` [5] is the stride). A failing scalar is reported
 * before any segment; among segments the lowest index wins.
 */
export const enum StatusCode {
  Ok = 0,
  /** A value outside its static (or host runtime) bounds. */
  OutsideStatic = 1,
  /** A value outside its device runtime bounds. */
  OutsideDevice = 2,
  /** Device runtime bounds that are empty or outside the static bounds. */
  BadDeviceBounds = 3,
  /** A segment whose keys reach past `keysIn` (value = its end). */
  PastKeys = 4,
  /** The sum of the sizes outside the `totalNumItems` bounds (value = the sum). */
  TotalOutside = 5,
  /** A segment size larger than the stride. */
  LargerThanStride = 6,
}

/** The kernels of top-k. */
export type TopKKernelId =
  | 'validate'
  | 'segment-offsets'
  | 'single-tile'
  | 'reduce'
  | 'reduce-merge'
  | 'radix-init'
  | 'radix-histogram'
  | 'radix-fallback'
  | 'radix-filter'
  | 'radix-finalize';

/** One kernel launch of a plan, in order. */
export interface TopKLaunch {
  readonly kernel: TopKKernelId;
  /** The variant this launch belongs to, or undefined for shared prologue kernels. */
  readonly variant: TopKVariant | undefined;
  /** `topk/<variant>[specialization]`, as counted in `stats().launchesByKernel`. */
  readonly name: string;
  /** Workgroups. */
  readonly grid: number;
  /** Radix pass (0-based) for radix kernels, else 0. */
  readonly pass: number;
  /** Why this launch exists, for `explain()`. */
  readonly purpose: string;
}

/** Everything an executor needs for one run. */
export interface TopKRun {
  readonly backend: Backend;
  readonly problem: TopKProblem;
  readonly policy: TopKPolicy;
  readonly launches: readonly TopKLaunch[];
  readonly layout: TempStorageLayout;
  /** Caller-owned temporary storage, present iff `layout.totalBytes > 0`. */
  readonly temp: DeviceArray<'u8'> | undefined;
  /** Status words (8 u32), present iff the plan validates device-only values. */
  readonly status: DeviceArray<'u32'> | undefined;
  readonly checks: readonly DeviceCheck[];
  /** `totalNumItems` bounds for the device check of the sum of sizes, when sizes are device-only. */
  readonly totalNumItems: Bounds | undefined;
  readonly keysIn: DeviceArray;
  readonly keysOut: DeviceArray;
  readonly valuesIn: DeviceArray | undefined;
  readonly valuesOut: DeviceArray | undefined;
  /**
   * One object per plan, the same for every run of it: executors may key what they resolve once per
   * plan (programs, pipelines, bind groups) on it. Absent: nothing is cached.
   */
  readonly cache?: object;
}

/** Runs a plan's launches on one kind of backend. Work is submitted (not necessarily done) when it returns. */
export interface TopKExecutor {
  execute(run: TopKRun): void;
}

/*
 * Temporary-storage slots (u32 words unless said), shared by every backend:
 * - `offsets`: maxSegments + 1 segment starts (packed layout with per-segment sizes), written by
 *   'segment-offsets' (exclusive scan of the sizes; entry maxSegments = the total).
 * - reduce: `partials`: maxSegments * chunksPerSegment * kMax pairs (ordered key, index) when a
 *   segment spans several chunks (sentinel pair (0, 0xFFFFFFFF) ranks below every real item).
 * - radix-select (radix-plan.ts): `segmentState`: maxSegments * 32 words [0 mode (1: a sampled
 *   threshold, 0: none), 1 the threshold T (an ordered key), 2 keys that reached T (appended to
 *   candidates0 by pass 0), 8 + p items selected by digit p, 16 + p candidates kept by digit p];
 *   `histogram`: maxSegments * passes * 2^radixBits words, one histogram per digit;
 *   `selected`: maxSegments * kMax indices (digit p appends after the items of digits < p);
 *   `candidates0`, `candidates1`: candidate indices, each as long as the keys (a segment's
 *   candidates live at its own start): digit p's filter reads buffer p & 1 (pass 0: the keys that
 *   reached T, or every key) and writes buffer (p + 1) & 1.
 */
