import { webgpuExecutor } from '../../../backends/webgpu/executor.js';
import { countOf } from '../../../backends/webgpu/segments.js';
import { valueBits } from '../order.js';
import { type ScanExecutor, type ScanRun, scanKernels, spansPerSegment, spineForm, spineTilesPerSegment, tileSpan, tilesPerSegment } from '../problem.js';
import { type ScanKernelFacts, scanKernelFacts } from './facts.js';
import { type MultiWorkgroupKernel, multiWorkgroupProgram, spineProgramKey } from './multi-workgroup.js';
import { singlePassProgram } from './single-pass.js';
import { threadProgram } from './thread.js';
import { workgroupProgram } from './workgroup.js';

/*
 * The scan on WebGPU: its programs by kernel id and its own uniforms; the generic executor
 * (backends/webgpu/executor.ts) runs every launch of a plan in one encoder, one pass and one submit.
 */

/** How the run's reduce-then-scan turns tile totals into carries (problem.ts `SpineForm`; ignored by the other kernels). */
const formOf = (run: ScanRun) => spineForm(run.problem, run.policy);

/** Runs scan plans on the WebGPU backend: one encoder, one compute pass, one submit. */
export const webgpuScanExecutor: ScanExecutor = webgpuExecutor<ScanRun, ScanKernelFacts>({
  kernels: scanKernels,
  facts: (run) => scanKernelFacts(run),
  program(launch, run, facts) {
    if (launch.kernel === 'thread') return threadProgram(facts, launch.name);
    if (launch.kernel === 'workgroup') return workgroupProgram(facts, launch.name);
    if (launch.kernel === 'single-pass') return singlePassProgram(facts, launch.name);
    if (launch.kernel in scanKernels) return multiWorkgroupProgram(launch.kernel as MultiWorkgroupKernel, facts, launch.name, formOf(run));
    throw new Error(`internal: no WebGPU kernel for '${launch.kernel}'`);
  },
  programKey: (launch, run) => spineProgramKey(launch.kernel, formOf(run)),
  uniforms(run) {
    const { problem, policy } = run;
    return {
      tiles: tilesPerSegment(problem.maxSegmentSize),
      spineTiles: spineTilesPerSegment(problem.maxSegmentSize),
      tileSpan: tileSpan(problem, policy),
      spans: spansPerSegment(problem, policy),
      lookbackPolls: policy.lookbackPolls,
      passTiles: policy.singlePassTiles,
    };
  },
  // A uniform initial value is a value of the scan's type: its bits, not a count.
  uniformWord: (name, value, run) => (name === 'initialValue' ? valueBits(value, run.problem.valueType) : countOf(value)),
});
