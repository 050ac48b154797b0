import type { WebGpuRuntime } from '../../../backends/webgpu/webgpu-backend.js';
import { type SegmentKernelFacts, type SourceFact, segmentKernelFacts } from '../../../backends/webgpu/segments.js';
import { defaultTileLoadBatch } from '../policy.js';
import { type MergeLayout, type SegmentedSortRun, type SingleTileShape, mergeLayout, singleTileShape } from '../problem.js';
import { type RadixLoads, type RadixWarpRank, radixWarpRankFor, sortRadixLoads } from './radix.js';
import { type TileRadix, tileRadixFor } from './tile-radix.js';

/*
 * The static facts of a sort run that the WGSL is specialized on, and nothing else: two runs with
 * equal facts share every pipeline. Host values that change between calls (numSegments, tiles per
 * segment, slot offsets, the pass) are uniforms.
 */

/** The static facts of a sort run: the segment facts, with `order` among the sources. */
export interface SortKernelFacts extends SegmentKernelFacts {
  readonly sources: { readonly order: SourceFact };
  readonly keyType: 'f32' | 'i32' | 'u32';
  readonly valueMode: 'none' | 'payload' | 'indices';
  readonly valueType: 'f32' | 'i32' | 'u32';
  /** Option index -> order (0 ascending, 1 descending). */
  readonly orderOfOption: readonly number[];
  readonly hasSingleTile: boolean;
  readonly hasRadix: boolean;
  readonly hasWorkgroupRadix: boolean;
  readonly hasMerge: boolean;
  readonly tileItems: number;
  /** Items each 'workgroup-radix' invocation ranks per tile (0 without that kernel). */
  readonly workgroupRadixItemsPerInvocation: number;
  /** The single-tile layout (problem.ts `singleTileShape`): its tile is static, so each size bound's power of two has its own pipeline. */
  readonly singleTile: SingleTileShape;
  /** How single-tile ranks by digits (tile-radix.ts `tileRadixFor`); undefined: the bitonic network (or no single-tile launch). */
  readonly tileRadix: TileRadix | undefined;
  /** 'merge''s tile and its block launch's layout (problem.ts `mergeLayout`); undefined without merge launches. */
  readonly merge: MergeLayout | undefined;
  /** How the radix scatter ranks by warp-level multisplit (radix.ts `radixWarpRankFor`); undefined: four 2-bit splits. */
  readonly radixWarpRank: RadixWarpRank | undefined;
  /** Loads each single-tile invocation has in flight at once (policy.ts `tileLoadBatch`); undefined without a single-tile or merge launch. */
  readonly tileLoadBatch: number | undefined;
  /** How the radix scatter loads a rank tile (policy.ts `radixLoads`); undefined without radix launches. */
  readonly radixLoads: RadixLoads | undefined;
  /** The radix scatter adds up its digits' places from the tiles' counts: the plan has no scan launch (problem.ts `radixScansInScatter`). */
  readonly radixScanInScatter: boolean;
}

/** The facts of a run. */
export function sortKernelFacts(run: SegmentedSortRun, runtime: Pick<WebGpuRuntime, 'fixedSubgroupSize'>): SortKernelFacts {
  const { problem, policy } = run;
  const segments = segmentKernelFacts(run, policy.workgroupSize);
  const hasWorkgroupRadix = run.launches.some((l) => l.kernel === 'workgroup-radix');
  const hasRadix = run.launches.some((l) => l.kernel === 'radix-histogram');
  const hasSingleTile = run.launches.some((l) => l.kernel === 'single-tile');
  const hasMerge = run.launches.some((l) => l.kernel === 'merge-blocks');
  const valueMode = run.arrays.valuesOut === undefined ? 'none' : problem.valueMode;
  const radixLoads = (policy.radixLoads as RadixLoads | undefined) ?? sortRadixLoads;
  const radixOptions = { hasValues: valueMode !== 'none', workgroupSize: policy.workgroupSize, rankItems: policy.tileItems, loads: radixLoads };
  const singleTile = singleTileShape(problem.maxSegmentSize, policy);
  return {
    ...segments,
    sources: segments.sources as SortKernelFacts['sources'],
    keyType: problem.keyType,
    valueMode,
    valueType: problem.valueType,
    orderOfOption: problem.orderOfOption,
    hasSingleTile,
    hasRadix,
    hasWorkgroupRadix,
    hasMerge,
    tileItems: policy.tileItems,
    workgroupRadixItemsPerInvocation: hasWorkgroupRadix ? (policy.workgroupRadixItemsPerInvocation ?? 1) : 0,
    singleTile,
    tileRadix: hasSingleTile ? tileRadixFor({ shape: singleTile, leastSegmentSize: problem.leastSegmentSize }, run.backend.capabilities, runtime.fixedSubgroupSize) : undefined,
    merge: hasMerge ? mergeLayout(problem, policy) : undefined,
    tileLoadBatch: hasSingleTile || hasMerge ? (policy.tileLoadBatch ?? defaultTileLoadBatch) : undefined,
    radixWarpRank: hasRadix ? radixWarpRankFor(radixOptions, runtime.fixedSubgroupSize, run.backend.capabilities.workgroupStorageBytes) : undefined,
    radixLoads: hasRadix ? radixLoads : undefined,
    radixScanInScatter: hasRadix && !run.launches.some((l) => l.kernel === 'radix-scan'),
  };
}
