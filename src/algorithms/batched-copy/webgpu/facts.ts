import { type SegmentKernelFacts, type SourceFact, segmentKernelFacts } from '../../../backends/webgpu/segments.js';
import type { BatchedCopyRun } from '../problem.js';

/*
 * The static facts of a copy run that the WGSL is specialized on, and nothing else: two runs with
 * equal facts share every pipeline. Array lengths, numBuffers and slot offsets are uniforms.
 */

/** The static facts of a copy run: the segment facts, with the offsets among the sources. */
export interface CopyKernelFacts extends SegmentKernelFacts {
  readonly sources: { readonly sourceOffsets: SourceFact; readonly destinationOffsets: SourceFact };
  /** Words one move carries: 4 binds the arrays as vec4<u32>. */
  readonly vectorWidth: 1 | 4;
  readonly teamSize: number;
  readonly chunkItems: number;
  readonly sourceOffsetsParameter: number;
  readonly destinationOffsetsParameter: number;
}

/** The facts of a run. */
export function copyKernelFacts(run: BatchedCopyRun): CopyKernelFacts {
  const { problem, policy } = run;
  const segments = segmentKernelFacts(run, policy.workgroupSize);
  return {
    ...segments,
    sources: segments.sources as CopyKernelFacts['sources'],
    vectorWidth: problem.vectorWidth,
    teamSize: policy.teamSize,
    chunkItems: policy.chunkItems,
    sourceOffsetsParameter: problem.sourceOffsetsParameter,
    destinationOffsetsParameter: problem.destinationOffsetsParameter,
  };
}
