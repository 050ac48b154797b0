import { deviceMemory } from '../../../backends/cpu/memory.js';
import { SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import type { BatchedCopyPolicy } from '../policy.js';
import type { BatchedCopyRun } from '../problem.js';
import { type DeviceWords, deviceWords, moveWords } from './words.js';

/** A per-buffer source's u32 words when they cover buffers [0, end) (reading them is then countOf's identity). */
function wordsOf(source: ValueSource, end: number): Uint32Array | undefined {
  return source.perSegment && source.view instanceof Uint32Array && source.length >= end ? source.view : undefined;
}

/**
 * Everything one copy run's kernels read beyond the segments (SegmentedContext), resolved once per
 * plan and temporary storage (executor.ts): the arrays as words (a copy moves bits: NaN payloads and -0 stay as they are), the offsets'
 * sources, the policy and the check slot.
 */
export class CopyContext extends SegmentedContext<BatchedCopyRun> {
  readonly policy: BatchedCopyPolicy;
  readonly sourceWords: DeviceWords;
  readonly destinationWords: DeviceWords;
  readonly sourceLength: number;
  readonly destinationLength: number;
  readonly vectorWidth: 1 | 4;
  readonly sourceOffsets: ValueSource;
  readonly destinationOffsets: ValueSource;
  readonly sourceOffsetsParameter: number;
  readonly destinationOffsetsParameter: number;
  /** Word offset of slot `check`, or -1. */
  readonly checkSlot: number;

  constructor(run: BatchedCopyRun) {
    super(run);
    const problem = run.problem;
    this.policy = run.policy;
    this.sourceWords = deviceWords(deviceMemory(run.arrays.source).u32);
    this.destinationWords = deviceWords(deviceMemory(run.arrays.destination).u32);
    this.sourceLength = Math.min(problem.sourceLength, run.arrays.source.length);
    this.destinationLength = Math.min(problem.destinationLength, run.arrays.destination.length);
    this.vectorWidth = problem.vectorWidth;
    this.sourceOffsets = this.source('sourceOffsets');
    this.destinationOffsets = this.source('destinationOffsets');
    this.sourceOffsetsParameter = problem.sourceOffsetsParameter;
    this.destinationOffsetsParameter = problem.destinationOffsetsParameter;
    this.checkSlot = this.slotWords('check');
  }

  /**
   * Whether another run of the same plan can use this context: it binds the same temporary storage
   * and status words (everything else a context views — the arrays, the uploaded host values, the
   * policy — is fixed when the plan is made).
   */
  fits(run: BatchedCopyRun): boolean {
    return run.temp === this.run.temp && run.status === this.run.status;
  }

  sizeOf(i: number): number {
    return countOf(readSource(this.sizes, i));
  }

  sourceOffsetOf(i: number): number {
    return countOf(readSource(this.sourceOffsets, i));
  }

  destinationOffsetOf(i: number): number {
    return countOf(readSource(this.destinationOffsets, i));
  }

  /** Copies items [from, to) of buffer i (a whole buffer, or a chunk's share of it). */
  copyBuffer(i: number, from: number, to: number): void {
    this.move(this.sourceOffsetOf(i), this.destinationOffsetOf(i), this.sizeOf(i), from, to);
  }

  /**
   * Copies buffers [first, end) whole. Per-buffer values held as u32 words (host arrays, u32 device
   * arrays) are read straight from them, as a host loop reads its offsets; others through countOf.
   */
  copyBuffers(first: number, end: number): void {
    const sizes = wordsOf(this.sizes, end);
    const sourceOffsets = wordsOf(this.sourceOffsets, end);
    const destinationOffsets = wordsOf(this.destinationOffsets, end);
    if (sizes === undefined || sourceOffsets === undefined || destinationOffsets === undefined) {
      for (let i = first; i < end; i++) this.copyBuffer(i, 0, Infinity);
      return;
    }
    for (let i = first; i < end; i++) this.move(sourceOffsets[i]!, destinationOffsets[i]!, sizes[i]!, 0, Infinity);
  }

  /**
   * Items [from, to) of a buffer of `size` items at `source` going to `destination`, cut at either
   * array's end (only 'trust' lets a cut bind) and to whole vec4s under vectorWidth 4 (the WGSL twin's
   * `bufferCopy`), moved as one run of raw words (words.ts).
   */
  private move(source: number, destination: number, size: number, from: number, to: number): void {
    const sourceLength = this.sourceLength;
    const destinationLength = this.destinationLength;
    if (source > sourceLength) source = sourceLength;
    if (destination > destinationLength) destination = destinationLength;
    let count = size;
    if (count > sourceLength - source) count = sourceLength - source;
    if (count > destinationLength - destination) count = destinationLength - destination;
    if (this.vectorWidth === 4) count -= count & 3;
    const end = to < count ? to : count;
    if (from < end) moveWords(this.destinationWords, destination + from, this.sourceWords, source + from, end - from);
  }

  /** Where buffer i starts in the concatenation of all buffers (saturating at 2^32 - 1, as the WGSL twin's mulSat). */
  concatStart(i: number): number {
    if (this.startMode === 1) return this.tempU32[this.packedStartsSlot() + i]!;
    return Math.min(i * this.sizeOf(0), 4294967295);
  }
}
