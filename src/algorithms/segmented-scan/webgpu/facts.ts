import { type SegmentKernelFacts, type SourceFact, segmentKernelFacts } from '../../../backends/webgpu/segments.js';
import type { ScanValueType } from '../order.js';
import type { ScanRun } from '../problem.js';

/*
 * The static facts of a scan run that the WGSL is specialized on, and nothing else: two runs with
 * equal facts share every pipeline. Host values that change between calls (numSegments, a uniform
 * initial value, slot offsets, tile counts) are uniforms; device-only values are read from the run's
 * device block (backends/webgpu/executor.ts).
 */

/** The static facts of a scan run: the segment facts, with `op`, `mode` and `initialValue` among the sources. */
export interface ScanKernelFacts extends SegmentKernelFacts {
  readonly sources: { readonly op: SourceFact; readonly mode: SourceFact; readonly initialValue?: SourceFact };
  readonly valueType: ScanValueType;
  /** Option index -> operator code, and -> 0 inclusive / 1 exclusive. */
  readonly opOfOption: readonly number[];
  readonly modeOfOption: readonly number[];
  /** A constant initial value's bits (the source fact holds it as a count). */
  readonly initialConstantBits: number | undefined;
  /** f32 sums in the canonical order. */
  readonly canonical: boolean;
  /** Words the multi-workgroup tile launches load at a time where a segment starts at a multiple of 4 items (policy `loadWords`). */
  readonly loadWords: number;
  /** Full tiles the vec4 path of 'tile-reduce' takes at once (policy `tilesPerStep`). */
  readonly tilesPerStep: number;
  /** The same for 'tile-scan' (policy `scanTilesPerStep`). */
  readonly scanTilesPerStep: number;
  /** Words 'tile-scan' stores at a time: 4 where every store is a whole vec4 of one invocation (plan.ts `scanStores`). */
  readonly storeWords: 1 | 4;
}

/** The facts of a run. */
export function scanKernelFacts(run: ScanRun): ScanKernelFacts {
  const { problem, policy } = run;
  const segments = segmentKernelFacts(run, policy.workgroupSize);
  const initial = problem.sources.initialValue;
  return {
    ...segments,
    sources: segments.sources as ScanKernelFacts['sources'],
    valueType: problem.valueType,
    opOfOption: problem.opOfOption,
    modeOfOption: problem.modeOfOption,
    initialConstantBits: initial?.kind === 'constant' ? problem.initialBits : undefined,
    canonical: problem.canonical,
    loadWords: policy.loadWords,
    tilesPerStep: policy.tilesPerStep,
    scanTilesPerStep: policy.scanTilesPerStep,
    storeWords: problem.storeWords,
  };
}
