import type { DType } from '../../../backends/backend.js';
import { reducePerInvocation } from '../policy.js';
import type { ScalarSource, SegmentSource, TopKRun } from '../problem.js';

/*
 * The static facts of a run that the WGSL is specialized on, and nothing else: two runs with equal
 * facts share every pipeline. Host values that change between calls (numSegments, kMax, a uniform
 * k, slot offsets, ...) are uniforms; device-only values are read from the run's device block (see
 * executor.ts).
 */

/** How a kernel reads one value: baked, a uniform, or device words (one, or one per segment). */
export type SourceFact =
  | { readonly kind: 'constant'; readonly value: number }
  | { readonly kind: 'uniform' }
  | { readonly kind: 'device'; readonly dtype: 'u32' | 'i32' | 'f32' }
  | { readonly kind: 'perSegment'; readonly dtype: 'u32' | 'i32' | 'f32' };

/** The static facts of a top-k run. */
export interface TopKKernelFacts {
  readonly keyType: 'f32' | 'i32' | 'u32';
  readonly valueMode: 'none' | 'payload' | 'indices';
  readonly valueType: 'f32' | 'i32' | 'u32';
  readonly sorted: boolean;
  readonly numSegments: SourceFact;
  readonly sizes: SourceFact;
  readonly k: SourceFact;
  /** A constant is the resolved direction (0 'max', 1 'min'); a uniform is resolved on the host too. */
  readonly direction: SourceFact;
  readonly stride: SourceFact | undefined;
  /** 0: start = i * size; 1: start from slot `offsets`; 2: start = i * stride. */
  readonly startMode: 0 | 1 | 2;
  /** Option index -> direction, for device option indices. */
  readonly directionOfOption: readonly number[];
  /** A validate kernel runs first: later kernels exit on a non-zero status. */
  readonly validates: boolean;
  /** dtype of the device-only segment-size bounds, when there are any. */
  readonly sizeBounds: 'u32' | 'i32' | 'f32' | undefined;
  readonly hasSingleTile: boolean;
  readonly hasRadix: boolean;
  readonly workgroupSize: number;
  readonly tileItems: number;
  readonly reduceChunkItems: number;
  readonly reduceMaxK: number;
  /** Reduce gives each segment one invocation (policy.ts reducePerInvocation). */
  readonly reducePerInvocation: boolean;
  readonly radixTileItems: number;
  /** Bits per radix digit. */
  readonly radixBits: number;
  /** The device has subgroups (the reduce merge shuffles within them). */
  readonly subgroups: boolean;
}

/** A number as a count, as the CPU twin's `countOf`: integers in [0, 2^32 - 1], negatives and NaN 0. */
export function countOf(value: number): number {
  return value > 0 ? (value >= 4294967295 ? 4294967295 : Math.floor(value)) : 0;
}

function numericDtype(dtype: DType): 'u32' | 'i32' | 'f32' {
  return dtype === 'u8' ? 'u32' : dtype;
}

function sourceFact(source: ScalarSource | SegmentSource): SourceFact {
  switch (source.kind) {
    case 'constant':
      return { kind: 'constant', value: countOf(source.value) };
    case 'uniform':
      return { kind: 'uniform' };
    case 'device':
      return { kind: 'device', dtype: numericDtype(source.array.dtype) };
    case 'perSegment':
      return { kind: 'perSegment', dtype: numericDtype(source.array.dtype) };
  }
}

/** Direction index of an option index, as the kernels resolve it (indices past the end clamp to the last). */
export function directionOf(directionOfOption: readonly number[], option: number): number {
  const options = directionOfOption.length > 0 ? directionOfOption : [0];
  return options[Math.min(option, options.length - 1)] === 1 ? 1 : 0;
}

/** The facts of a run. */
export function kernelFacts(run: TopKRun, subgroups: boolean): TopKKernelFacts {
  const { problem, policy } = run;
  const direction = problem.direction;
  const directionFact: SourceFact =
    direction.kind === 'constant'
      ? { kind: 'constant', value: directionOf(problem.directionOfOption, countOf(direction.value)) }
      : sourceFact(direction);
  const sizes = sourceFact(problem.segmentSizes);
  return {
    keyType: problem.keyType,
    valueMode: run.valuesOut === undefined ? 'none' : problem.valueMode,
    valueType: problem.valueType,
    sorted: problem.sorted,
    numSegments: sourceFact(problem.numSegments),
    sizes,
    k: sourceFact(problem.k),
    direction: directionFact,
    stride: problem.layout.kind === 'strided' ? sourceFact(problem.layout.stride) : undefined,
    startMode: problem.layout.kind === 'strided' ? 2 : sizes.kind === 'perSegment' ? 1 : 0,
    directionOfOption: problem.directionOfOption,
    validates: run.status !== undefined,
    sizeBounds: problem.segmentSizeDeviceBounds === undefined ? undefined : numericDtype(problem.segmentSizeDeviceBounds.dtype),
    hasSingleTile: run.launches.some((l) => l.kernel === 'single-tile'),
    hasRadix: run.launches.some((l) => l.kernel === 'radix-histogram'),
    workgroupSize: policy.workgroupSize,
    tileItems: policy.tileItems,
    reduceChunkItems: policy.reduceChunkItems,
    reduceMaxK: policy.reduceMaxK,
    reducePerInvocation: run.launches.some((l) => l.kernel === 'reduce') && reducePerInvocation(policy, problem.maxSegmentSize),
    radixTileItems: policy.radixTileItems,
    radixBits: policy.radixBits,
    subgroups,
  };
}

/** Whether kernels read the device block at all. */
export function needsBlock(facts: TopKKernelFacts): boolean {
  const device = (s: SourceFact | undefined) => s !== undefined && (s.kind === 'device' || s.kind === 'perSegment');
  return (
    facts.validates ||
    facts.sizeBounds !== undefined ||
    device(facts.numSegments) ||
    device(facts.sizes) ||
    device(facts.k) ||
    device(facts.direction) ||
    device(facts.stride)
  );
}
