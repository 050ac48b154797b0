import { webgpuExecutor } from '../../../backends/webgpu/executor.js';
import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { type SegmentedReduceExecutor, type SegmentedReduceRun, chunksPerSegment, segmentedReduceKernels } from '../problem.js';
import { type ReduceKernelFacts, kernelFacts } from './facts.js';
import { chunkMergeProgram, chunkProgram, mergeProgram, teamProgram, threadProgram } from './programs.js';

/*
 * Reduce on WebGPU: its programs by kernel id and its own uniforms; the generic executor
 * (backends/webgpu/executor.ts) runs every launch of a plan in one encoder, one pass and one submit.
 */

const programs: Record<keyof typeof segmentedReduceKernels, (facts: ReduceKernelFacts, name: string) => WebGpuProgram> = {
  thread: threadProgram,
  subgroup: (facts, name) => teamProgram(facts, name, facts.subgroupSize),
  workgroup: (facts, name) => teamProgram(facts, name, facts.workgroupSize),
  chunk: chunkProgram,
  merge: mergeProgram,
  'chunk-merge': chunkMergeProgram,
};

/** Runs reduce plans on the WebGPU backend: one encoder, one compute pass, one submit. */
export const webgpuSegmentedReduceExecutor: SegmentedReduceExecutor = webgpuExecutor<SegmentedReduceRun, ReduceKernelFacts>({
  kernels: segmentedReduceKernels,
  facts: kernelFacts,
  program(launch, _run, facts) {
    const program = programs[launch.kernel as keyof typeof programs];
    if (program === undefined) throw new Error(`internal: no WebGPU kernel for '${launch.kernel}'`);
    return program(facts, launch.name);
  },
  uniforms: (run) => ({ chunks: chunksPerSegment(run.problem.maxSegmentSize) }),
});
