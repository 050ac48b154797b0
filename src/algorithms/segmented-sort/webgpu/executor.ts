import { webgpuExecutor } from '../../../backends/webgpu/executor.js';
import { type SegmentedSortExecutor, type SegmentedSortRun, mergeLayout, segmentedSortKernels } from '../problem.js';
import { type SortKernelFacts, sortKernelFacts } from './facts.js';
import { digitProgram, sortProgram } from './programs.js';

/** Runs sort plans on the WebGPU backend: one encoder, one compute pass, one submit. */
export const webgpuSegmentedSortExecutor: SegmentedSortExecutor = webgpuExecutor<SegmentedSortRun, SortKernelFacts>({
  kernels: segmentedSortKernels,
  facts: sortKernelFacts,
  program(launch, _run, facts) {
    if (!(launch.kernel in segmentedSortKernels)) throw new Error(`internal: no WebGPU kernel for '${launch.kernel}'`);
    return sortProgram(launch.kernel as keyof typeof segmentedSortKernels, facts, launch.name, digitProgram(launch));
  },
  programKey: (launch) => String(digitProgram(launch)),
  // The radix ranks sort one segment a workgroup of their own size (tile-radix.ts `tileRadixFor`).
  grid: (launch, run, facts) => (launch.kernel === 'single-tile' && facts.tileRadix !== undefined ? run.problem.maxSegments : launch.grid),
  uniforms(run) {
    const long = run.launches.some((l) => l.kernel === 'radix-histogram' || l.kernel === 'workgroup-radix' || l.kernel === 'merge-blocks');
    return {
      sortTiles: run.problem.tilesPerSegment,
      sortGroupSegments: run.problem.groupSegments,
      mergeTiles: mergeLayout(run.problem, run.policy).tilesPerSegment,
      capacity: long ? run.problem.maxSegmentSize : run.policy.tileItems,
    };
  },
});
