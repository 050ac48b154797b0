import { webgpuExecutor } from '../../../backends/webgpu/executor.js';
import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { radixDigitProgram } from '../../segmented-sort/webgpu/radix.js';
import { type TopKExecutor, type TopKRun, radixFilterTiles, radixHistogramTiles, radixTiles, reduceChunks, topKKernels } from '../problem.js';
import { radixCandidateShortcut, reducePerInvocation } from '../policy.js';
import { type TopKKernelFacts, kernelFacts } from './facts.js';
import { radixCompactCountProgram, radixCompactWriteProgram } from './radix-compact.js';
import { radixFilterProgram } from './radix-filter.js';
import { radixFinalizeProgram } from './radix-finalize.js';
import { radixHistogramProgram } from './radix-histogram.js';
import { radixInitProgram } from './radix-init.js';
import { reduceMergeProgram, reduceProgram } from './reduce.js';
import { rowRadixProgram } from './row-radix.js';
import { weightsProgram } from './routing.js';
import { singleTileProgram } from './single-tile.js';
import { selectionMergeProgram, selectionSortProgram } from './sorted.js';

/*
 * Top-k on WebGPU: its programs by kernel id and its own uniforms; the generic executor
 * (backends/webgpu/executor.ts) runs every launch of a plan in one encoder, one pass and one submit.
 */

/** Reduce splits segments over several workgroups (and merges their partial lists in a second launch). */
const multiChunk = (run: TopKRun) => !reducePerInvocation(run.policy, run.problem.maxSegmentSize) && reduceChunks(run.problem.maxSegmentSize, run.policy) > 1;

/** Top-k's WGSL programs, by kernel id. */
const programs: Record<keyof typeof topKKernels, (facts: TopKKernelFacts, name: string, run: TopKRun, pass: number) => WebGpuProgram> = {
  'single-tile': singleTileProgram,
  reduce: (facts, name, run) => reduceProgram(facts, name, multiChunk(run)),
  'reduce-merge': reduceMergeProgram,
  'reduce-chunk-merge': (facts, name) => reduceProgram(facts, name, true, true),
  'radix-init': radixInitProgram,
  'radix-histogram': (facts, name) => radixHistogramProgram(facts, name),
  'radix-fallback': (facts, name) => radixHistogramProgram(facts, name, true),
  'radix-filter': (facts, name, run) => radixFilterProgram(facts, name, run.problem.tiesAsFound, shortcutOf(run)),
  'radix-filter-finalize': (facts, name, run) => radixFilterProgram(facts, name, run.problem.tiesAsFound, shortcutOf(run), relaxationsOf(run)),
  'radix-finalize': (facts, name, run) => radixFinalizeProgram(facts, name, relaxationsOf(run), shortcutOf(run)),
  'radix-compact-count': radixCompactCountProgram,
  'radix-compact-write': radixCompactWriteProgram,
  'row-radix': rowRadixProgram,
  'sort-histogram': (facts, name, _run, pass) => selectionSortProgram('histogram', facts, name, radixDigitProgram(pass)),
  'sort-scan': (facts, name) => selectionSortProgram('scan', facts, name, 0),
  'sort-scatter': (facts, name, _run, pass) => selectionSortProgram('scatter', facts, name, radixDigitProgram(pass)),
  'sort-merge-blocks': (facts, name) => selectionMergeProgram('blocks', facts, name),
  'sort-merge-pass': (facts, name) => selectionMergeProgram('pass', facts, name),
  weights: (facts, name, run) => weightsProgram(facts, name, run.problem.weights?.kind ?? 0),
};

/** How filter pass 0 picks the best take among few candidates (policy.ts radixCandidateShortcut). */
const shortcutOf = (run: TopKRun) => radixCandidateShortcut(run.policy, run.problem.sorted);

/** Only finalize (and the filters, for ties) read the requirements' relaxations; keying the other kernels on them would compile the same WGSL twice. */
const relaxationsOf = (run: TopKRun) => ({ tiesAsFound: run.problem.tiesAsFound, orderAsFound: run.problem.orderAsFound });

/** Runs top-k plans on the WebGPU backend: one encoder, one compute pass, one submit. */
export const webgpuTopKExecutor: TopKExecutor = webgpuExecutor<TopKRun, TopKKernelFacts>({
  kernels: topKKernels,
  facts: kernelFacts,
  program(launch, run, facts) {
    const program = programs[launch.kernel as keyof typeof programs];
    if (program === undefined) throw new Error(`internal: no WebGPU kernel for '${launch.kernel}'`);
    return program(facts, launch.name, run, launch.pass);
  },
  programKey: (launch, run) =>
    launch.kernel === 'reduce'
      ? String(multiChunk(run))
      : launch.kernel === 'radix-finalize' || launch.kernel === 'radix-filter-finalize'
        ? `${JSON.stringify(relaxationsOf(run))},${shortcutOf(run)}`
        : launch.kernel === 'radix-filter'
          ? `${run.problem.tiesAsFound},${shortcutOf(run)}`
        : launch.kernel === 'weights'
          ? String(run.problem.weights?.kind ?? 0)
          : launch.kernel === 'sort-histogram' || launch.kernel === 'sort-scatter'
            ? String(radixDigitProgram(launch.pass))
            : '',
  uniforms(run) {
    const { problem, policy, layout } = run;
    return {
      kMax: problem.kMax,
      chunks: reduceChunks(problem.maxSegmentSize, policy),
      tiles: radixTiles(problem.maxSegmentSize, policy),
      filterTiles: radixFilterTiles(problem, policy),
      histogramTiles: radixHistogramTiles(problem, policy),
      ...(layout.has('candidates0') ? { candidatesLen: layout.slot('candidates0').bytes >>> 2 } : {}),
      ...(layout.has('rowCandidates') ? { rowCandidatesLen: layout.slot('rowCandidates').bytes >>> 2 } : {}),
      ...(problem.weights === undefined ? {} : { weightScale: problem.weights.scaleBits }),
      ...(problem.selectionSort?.variant === 'radix' ? { sortTiles: problem.selectionSort.tiles, sortGroupSegments: problem.selectionSort.groupSegments } : {}),
      ...(problem.selectionSort?.variant === 'merge' ? { mergeTiles: problem.selectionSort.layout.tilesPerSegment } : {}),
    };
  },
});
