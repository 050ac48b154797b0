import { webgpuExecutor } from '../../../backends/webgpu/executor.js';
import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { type BatchedCopyExecutor, type BatchedCopyRun, batchedCopyKernels, bitmapWords, checkSlotWords } from '../problem.js';
import { type CopyKernelFacts, copyKernelFacts } from './facts.js';
import { checkClearProgram, checkMarkProgram, checkReportProgram, checkScanProgram, chunkedProgram, teamProgram } from './programs.js';

/*
 * Batched copy on WebGPU: its programs by kernel id and its own uniforms; the generic executor
 * (backends/webgpu/executor.ts) runs every launch of a plan in one encoder, one pass and one submit.
 */

const programs: Record<keyof typeof batchedCopyKernels, (facts: CopyKernelFacts, name: string) => WebGpuProgram> = {
  'check-clear': checkClearProgram,
  'check-mark': checkMarkProgram,
  'check-scan': checkScanProgram,
  'check-report': checkReportProgram,
  team: (facts, name) => teamProgram(facts, name, facts.teamSize),
  workgroup: (facts, name) => teamProgram(facts, name, facts.workgroupSize),
  chunked: chunkedProgram,
};

/** Runs copy plans on the WebGPU backend: one encoder, one compute pass, one submit, no read-back. */
export const webgpuBatchedCopyExecutor: BatchedCopyExecutor = webgpuExecutor<BatchedCopyRun, CopyKernelFacts>({
  kernels: batchedCopyKernels,
  facts: copyKernelFacts,
  program(launch, _run, facts) {
    const program = programs[launch.kernel as keyof typeof programs];
    if (program === undefined) throw new Error(`internal: no WebGPU kernel for '${launch.kernel}'`);
    return program(facts, launch.name);
  },
  uniforms: (run) => ({
    sourceLength: Math.min(run.problem.sourceLength, run.arrays.source.length),
    destinationLength: Math.min(run.problem.destinationLength, run.arrays.destination.length),
    checkWords: checkSlotWords(run.problem.destinationLength),
    bitmapWords: bitmapWords(run.problem.destinationLength),
  }),
});
