import { deviceMemory } from '../../../backends/cpu/memory.js';
import { SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import type { BatchedCopyPolicy } from '../policy.js';
import type { BatchedCopyRun } from '../problem.js';

/** One buffer's copy as the kernels do it: clamped to both arrays (only 'trust' lets a clamp bind). */
export class BufferCopy {
  source = 0;
  destination = 0;
  /** Elements copied: the size, cut at either array's end, whole vec4s under vectorWidth 4. */
  count = 0;
}

/**
 * Everything one copy run's kernels read beyond the segments (SegmentedContext), resolved once per
 * run: the arrays as words (a copy moves bits: NaN payloads and -0 stay as they are), the offsets'
 * sources, the policy and the check slot.
 */
export class CopyContext extends SegmentedContext<BatchedCopyRun> {
  readonly policy: BatchedCopyPolicy;
  readonly sourceWords: Uint32Array;
  readonly destinationWords: Uint32Array;
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
    this.sourceWords = deviceMemory(run.arrays.source).u32;
    this.destinationWords = deviceMemory(run.arrays.destination).u32;
    this.sourceLength = Math.min(problem.sourceLength, run.arrays.source.length);
    this.destinationLength = Math.min(problem.destinationLength, run.arrays.destination.length);
    this.vectorWidth = problem.vectorWidth;
    this.sourceOffsets = this.source('sourceOffsets');
    this.destinationOffsets = this.source('destinationOffsets');
    this.sourceOffsetsParameter = problem.sourceOffsetsParameter;
    this.destinationOffsetsParameter = problem.destinationOffsetsParameter;
    this.checkSlot = this.slotWords('check');
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

  /** Buffer i's copy, clamped to both arrays (the WGSL twin's `bufferCopy`). */
  bufferCopy(i: number, out: BufferCopy): void {
    const source = Math.min(this.sourceOffsetOf(i), this.sourceLength);
    const destination = Math.min(this.destinationOffsetOf(i), this.destinationLength);
    let count = Math.min(this.sizeOf(i), this.sourceLength - source, this.destinationLength - destination);
    if (this.vectorWidth === 4) count -= count % 4;
    out.source = source;
    out.destination = destination;
    out.count = count;
  }

  /** Where buffer i starts in the concatenation of all buffers (saturating at 2^32 - 1, as the WGSL twin's mulSat). */
  concatStart(i: number): number {
    if (this.startMode === 1) return this.tempU32[this.offsetsSlot + i]!;
    return Math.min(i * this.sizeOf(0), 4294967295);
  }
}
