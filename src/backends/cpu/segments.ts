import type { DeviceArray } from '../backend.js';
import type { ScalarSource, SegmentSource, SegmentedRun } from '../../dispatch/problem.js';
import { deviceMemory } from './memory.js';

/*
 * What every CPU kernel of a segmented algorithm shares: the device views of one run, how a
 * parameter's value is read for a segment (a baked/uniform number or a device read), and where a
 * segment starts and ends — the WGSL twins' `segmentExtent` (webgpu/segments.ts) bit for bit.
 * An algorithm's context extends {@link SegmentedContext} with its own fields.
 */

/** A parameter as the kernels read it: a baked/uniform value or a device view. */
export interface ValueSource {
  readonly constant: number;
  /** Device view (by dtype) when the value lives on the device. */
  readonly view: Int32Array | Uint32Array | Float32Array | undefined;
  /** One element per segment. */
  readonly perSegment: boolean;
  /** Elements the device array holds (reads past it give 0). */
  readonly length: number;
}

/** A typed view of a device array by its dtype (u8 is read as u32 words). */
export function numericView(array: DeviceArray): Int32Array | Uint32Array | Float32Array {
  const memory = deviceMemory(array);
  return array.dtype === 'f32' ? memory.f32 : array.dtype === 'i32' ? memory.i32 : memory.u32;
}

/** How kernels read a source. */
export function sourceOf(source: ScalarSource | SegmentSource): ValueSource {
  if (source.kind === 'constant' || source.kind === 'uniform') {
    return { constant: source.value, view: undefined, perSegment: false, length: 1 };
  }
  return { constant: 0, view: numericView(source.array), perSegment: source.kind === 'perSegment', length: source.array.length };
}

/** The raw value of a source for segment `i` (a device read for device sources). */
export function readSource(source: ValueSource, i: number): number {
  const view = source.view;
  if (view === undefined) return source.constant;
  const at = source.perSegment ? i : 0;
  return at < source.length ? view[at]! : 0;
}

/** A raw value as a count: integers in [0, 2^32 - 1]; negatives and NaN (possible only under 'trust') become 0. */
export function countOf(value: number): number {
  return value > 0 ? (value >= 4294967295 ? 4294967295 : Math.floor(value)) : 0;
}

/** One segment's place in the input; kernels reuse one instance (no allocation per segment). */
export class SegmentExtent {
  /** First item (global index into the input). */
  start = 0;
  /** Items, clamped to the input and to what the variant's grid covers. */
  size = 0;
}

const revivedContexts = new WeakMap<object, SegmentedContext>();

/**
 * A context per plan (`SegmentedRun.cache`), made again only when a run binds other temporary
 * storage (`fits` says whether it still serves): a run's host work is then its launches, and a
 * worker thread is sent the context once per plan instead of once per run (its kernels see one
 * context object, not a new one each run). `make` builds a context for a run.
 */
export function contextPerPlan<Run extends SegmentedRun, Context extends { fits(run: Run): boolean }>(make: (run: Run) => Context): (run: Run) => Context {
  const contexts = new WeakMap<object, Context>();
  return (run) => {
    const cached = run.cache === undefined ? undefined : contexts.get(run.cache);
    if (cached !== undefined && cached.fits(run)) return cached;
    const context = make(run);
    if (run.cache !== undefined) contexts.set(run.cache, context);
    return context;
  };
}

/**
 * Everything one run's kernels read about the segments, resolved once per run: device views
 * (reading them is a device-side read, not a download), slot offsets and the decoded sources.
 * Values that kernels write during the run (status, offsets) are read inside the kernels, never here.
 */
export class SegmentedContext<Run extends SegmentedRun = SegmentedRun> {
  readonly maxSegments: number;
  readonly maxSegmentSize: number;
  /** Items of the segmented input, at most the device array's length. */
  readonly itemsLength: number;
  /** Status words, when the plan validates device-only values. */
  readonly status: Uint32Array | undefined;
  /** Temporary storage as int32 words (counts and indices fit: a buffer holds < 2^31 words). */
  readonly temp: Int32Array;
  /** Temporary storage as u32 words. */
  readonly tempU32: Uint32Array;
  readonly numSegments: ValueSource;
  readonly sizes: ValueSource;
  readonly stride: ValueSource | undefined;
  /** The algorithm's own parameters, by name. */
  readonly sources: Readonly<Record<string, ValueSource>>;
  /** 0 packed (constant/uniform sizes: start = i * size), 1 packed through the `offsets` slot, 2 strided. */
  readonly startMode: 0 | 1 | 2;
  /** Device runtime bounds [min, max] of the segment sizes (device-side variant branches). */
  readonly sizeDeviceBounds: ValueSource | undefined;
  /** Word offset of slot `offsets`, or -1. */
  readonly offsetsSlot: number;
  /** 'segment-offsets' writes the segments' order by size after the starts (SegmentedProblem.sizeOrder). */
  readonly sizeOrder: boolean;

  constructor(readonly run: Run) {
    const problem = run.problem;
    const input = Object.values(run.arrays)[0];
    this.maxSegments = problem.maxSegments;
    this.maxSegmentSize = problem.maxSegmentSize;
    this.itemsLength = Math.min(problem.itemsLength, input?.length ?? 0);
    this.status = run.status === undefined ? undefined : deviceMemory(run.status).u32;
    const temp = run.temp === undefined ? undefined : deviceMemory(run.temp);
    this.temp = temp === undefined ? new Int32Array(0) : temp.i32;
    this.tempU32 = temp === undefined ? new Uint32Array(0) : temp.u32;
    this.numSegments = sourceOf(problem.numSegments);
    this.sizes = sourceOf(problem.segmentSizes);
    this.stride = problem.layout.kind === 'strided' ? sourceOf(problem.layout.stride) : undefined;
    const sources: Record<string, ValueSource> = {};
    for (const [name, source] of Object.entries(problem.sources)) sources[name] = sourceOf(source);
    this.sources = sources;
    this.startMode = problem.layout.kind === 'strided' ? 2 : this.sizes.perSegment ? 1 : 0;
    this.sizeDeviceBounds = problem.segmentSizeDeviceBounds === undefined ? undefined : sourceOf({ kind: 'perSegment', array: problem.segmentSizeDeviceBounds });
    // -1 where the plan never asks where a segment starts (prologueLaunches `starts: false`).
    this.offsetsSlot = this.slotWords('offsets');
    this.sizeOrder = problem.sizeOrder === true;
  }

  /** The 'offsets' slot of packed per-segment sizes (the segment starts). */
  packedStartsSlot(): number {
    if (this.offsetsSlot < 0) throw new Error("internal: packed per-segment sizes need the 'offsets' slot to say where a segment starts");
    return this.offsetsSlot;
  }

  /**
   * The segment a workgroup's `w`-th place holds: its index by size where 'segment-offsets' wrote
   * the size order (SegmentedProblem.sizeOrder), else `w` itself.
   */
  segmentAt(w: number): number {
    if (!this.sizeOrder || w >= this.activeSegments()) return w;
    return this.tempU32[this.packedStartsSlot() + this.maxSegments + 1 + w]!;
  }

  /** Word offset of a temporary-storage slot, or -1 when the layout has none. */
  slotWords(name: string): number {
    return this.run.layout.has(name) ? this.run.layout.slot(name).offset >>> 2 : -1;
  }

  /** A parameter source by name (the algorithm's own parameters). */
  source(name: string): ValueSource {
    const source = this.sources[name];
    if (source === undefined) throw new Error(`internal: no source '${name}' in this run`);
    return source;
  }

  /** True when the validate kernel found a violation: every later kernel exits (a uniform branch). */
  failed(): boolean {
    const status = this.status;
    return status !== undefined && status[0] !== 0;
  }

  /** Segments to process: the numSegments value (a device read when device-only), at most maxSegments. */
  activeSegments(): number {
    const n = countOf(readSource(this.numSegments, 0));
    return n < this.maxSegments ? n : this.maxSegments;
  }

  /**
   * Where segment `i` (< activeSegments()) is: its start and size, clamped to the input and to
   * `capacity` (the most items the variant's grid covers per segment; only a guarantee broken under
   * 'trust' makes either bind).
   */
  extent(i: number, capacity: number, out: SegmentExtent): void {
    const size0 = countOf(readSource(this.sizes, i));
    let start: number;
    if (this.startMode === 1) start = this.tempU32[this.packedStartsSlot() + i]!;
    else start = i * (this.startMode === 2 ? countOf(readSource(this.stride!, 0)) : size0);
    const itemsLength = this.itemsLength;
    if (start > itemsLength) start = itemsLength;
    let size = size0;
    if (size > itemsLength - start) size = itemsLength - start;
    if (size > capacity) size = capacity;
    out.start = start;
    out.size = size;
  }

  private workerCopy: object | undefined;

  /**
   * This context as a worker thread gets it: every field but `run` and `problem` (which hold backend objects),
   * structured-cloneable; its typed arrays are views of shared device memory. Only kernels that
   * never read them run on workers.
   */
  forWorker(): object {
    if (this.workerCopy === undefined) {
      const copy = { ...this } as unknown as Record<string, unknown>;
      delete copy.run;
      delete copy.problem;
      delete copy.workerCopy;
      this.workerCopy = copy;
    }
    return this.workerCopy;
  }

  /** The context a worker rebuilds from {@link SegmentedContext.forWorker}'s copy, with this class's prototype (the same object each time for one copy). */
  static fromWorkerCopy<C extends SegmentedContext>(this: abstract new (...args: never[]) => C, copy: object): C {
    const revived = revivedContexts.get(copy);
    if (revived !== undefined) return revived as C;
    const ctx = Object.setPrototypeOf(copy, this.prototype) as C;
    revivedContexts.set(copy, ctx);
    return ctx;
  }
}

/** Kernel parameters: the run's context and the launch's pass. */
export interface KernelParams<Context extends SegmentedContext = SegmentedContext> {
  readonly ctx: Context;
  readonly pass: number;
}
