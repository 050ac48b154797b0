import { type SegmentKernelFacts, type SourceFact, segmentKernelFacts } from '../../../backends/webgpu/segments.js';
import type { WebGpuRuntime } from '../../../backends/webgpu/webgpu-backend.js';
import type { ReduceValueType } from '../ops.js';
import { type SegmentedReduceRun, partialsPerSegment } from '../problem.js';

/*
 * The static facts of a reduce run that the WGSL is specialized on, and nothing else: two runs with
 * equal facts share every pipeline. Host values that change between calls (numSegments, a uniform op
 * or initial value, slot offsets, chunks per segment) are uniforms; device-only values are read from
 * the run's device block (backends/webgpu/executor.ts).
 */

/** The static facts of a reduce run: the segment facts, with `op` and `initialValue` among the sources. */
export interface ReduceKernelFacts extends SegmentKernelFacts {
  readonly sources: { readonly op: SourceFact; readonly initialValue?: SourceFact };
  readonly valueType: ReduceValueType;
  /** Option index -> op code, for option indices from a constant, a uniform or the device. */
  readonly opOfOption: readonly number[];
  readonly indices: boolean;
  readonly threadMaxItems: number;
  readonly subgroupSize: number;
  readonly chunkTeamSize: number;
  readonly chunkRounds: number;
  /**
   * 'chunk-merge': partials each invocation of the merging workgroup reads one after another (1, 2, 4
   * or 8): the fewest with which one pass over the workgroup covers the longest segment's partials.
   */
  readonly mergeBlock: number;
  readonly loadWords: number;
  /**
   * The device's smallest subgroup width when shaders may use subgroup operations, else 1: tree
   * levels between invocations closer than this go through subgroup shuffles, not workgroup memory.
   */
  readonly shuffleWidth: number;
}

/** The facts of a run. */
export function kernelFacts(run: SegmentedReduceRun, runtime: WebGpuRuntime): ReduceKernelFacts {
  const { problem, policy } = run;
  const segments = segmentKernelFacts(run, policy.workgroupSize);
  return {
    ...segments,
    sources: segments.sources as ReduceKernelFacts['sources'],
    valueType: problem.valueType,
    opOfOption: problem.opOfOption,
    indices: problem.indices && run.arrays.indicesOut !== undefined,
    threadMaxItems: policy.threadMaxItems,
    subgroupSize: policy.subgroupSize,
    chunkTeamSize: policy.chunkTeamSize,
    chunkRounds: policy.chunkRounds,
    mergeBlock: Math.min(8, 2 ** Math.ceil(Math.log2(Math.max(1, partialsPerSegment(problem.maxSegmentSize, policy) / policy.workgroupSize)))),
    loadWords: policy.loadWords,
    shuffleWidth: runtime.subgroups ? 2 ** Math.floor(Math.log2(Math.max(1, run.backend.capabilities.subgroupSize ?? 1))) : 1,
  };
}
