import { isCpuBackend } from '../../../backends/cpu/cpu-backend.js';
import { type SlabMemory, deviceMemory } from '../../../backends/cpu/memory.js';
import { SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import { type ReduceValueType, sumOrder } from '../ops.js';
import type { SegmentedReducePolicy } from '../policy.js';
import { type SegmentedReduceProblem, type SegmentedReduceRun, chunksPerSegment, extremeKeysOnly } from '../problem.js';
import { simdAvailable } from './simd.js';

/** Value types as the kernels branch on them. */
export const enum ValueKind {
  F32 = 0,
  I32 = 1,
  U32 = 2,
}

/**
 * Everything one reduce run's kernels read beyond the segments (SegmentedContext), resolved once per
 * run: the value and output views, the op table, the initial value's source and the slot offsets.
 * Values kernels write during the run (partials) are read inside the kernels, never here.
 */
export class ReduceContext extends SegmentedContext<SegmentedReduceRun> {
  readonly problem: SegmentedReduceProblem;
  readonly policy: SegmentedReducePolicy;
  readonly valueKind: ValueKind;
  readonly valueType: ReduceValueType;
  /** The values' bits, and the same memory as f32. */
  readonly valueBits: Int32Array;
  readonly valueF32: Float32Array;
  /** The heap slab the values lie in, where they lie in one: the SIMD loops read them there in place (simd.ts). */
  readonly valueSlab: SlabMemory | undefined;
  /** The outputs: valuesOut as bits and as f32, indicesOut as bits (absent when not written). */
  readonly outBits: Int32Array;
  readonly outF32: Float32Array;
  readonly indicesOut: Int32Array | undefined;
  readonly op: ValueSource;
  /** Option index -> op code; indices past the end clamp to the last. */
  readonly opOfOption: readonly number[];
  /** The initial value's bits: a constant, or a device view of its bits (absent without an initial value). */
  readonly initial: ValueSource | undefined;
  /** f32 sums follow the canonical order: under 'run-to-run', and under 'not-guaranteed' where the SIMD loops run. */
  readonly canonical: boolean;
  /** Extremes' chunk partials hold their chunk's first index (problem.ts extremeKeysOnly). */
  readonly keysOnly: boolean;
  /** Word offset of slot `partials`, or -1. */
  readonly partialsSlot: number;
  /** Word offset of slot `arrivals` ('chunk-merge'), or -1. */
  readonly arrivalsSlot: number;
  /** Chunks per segment of the multi-workgroup grid. */
  readonly chunks: number;
  /** The backend lets f32 kernels use their WebAssembly SIMD loops (simd.ts), where a thread can run them. */
  readonly simd: boolean;

  constructor(run: SegmentedReduceRun) {
    super(run);
    const problem = run.problem;
    this.problem = problem;
    this.policy = run.policy;
    this.valueType = problem.valueType;
    this.valueKind = problem.valueType === 'f32' ? ValueKind.F32 : problem.valueType === 'i32' ? ValueKind.I32 : ValueKind.U32;
    const values = deviceMemory(run.arrays.valuesIn);
    this.valueBits = values.i32;
    this.valueF32 = values.f32;
    this.valueSlab = values.slab;
    const out = deviceMemory(run.arrays.valuesOut);
    this.outBits = out.i32;
    this.outF32 = out.f32;
    this.indicesOut = problem.indices && run.arrays.indicesOut !== undefined ? deviceMemory(run.arrays.indicesOut).i32 : undefined;
    this.op = this.source('op');
    this.opOfOption = problem.opOfOption.length > 0 ? problem.opOfOption : [0];
    const initial = problem.sources.initialValue;
    // A constant or uniform initial value is its bits already (plan.ts); a device one is read as bits.
    this.initial =
      initial === undefined
        ? undefined
        : initial.kind === 'constant' || initial.kind === 'uniform'
          ? { constant: initial.value, view: undefined, perSegment: false, length: 1 }
          : { constant: 0, view: deviceMemory(initial.array).u32, perSegment: initial.kind === 'perSegment', length: initial.array.length };
    this.simd = isCpuBackend(run.backend) && run.backend.simd;
    // 'not-guaranteed' lets the CPU take its faster sum: the SIMD loops of the canonical order where
    // this runtime has them (about twice as fast as the float64 chain), else float64 (ops.ts).
    this.canonical = problem.canonical || (this.simd && simdAvailable());
    this.keysOnly = extremeKeysOnly(problem.sources.op, problem.opOfOption, this.indicesOut !== undefined);
    this.partialsSlot = this.slotWords('partials');
    this.arrivalsSlot = this.slotWords('arrivals');
    this.chunks = chunksPerSegment(problem.maxSegmentSize);
  }

  /** The op code of segment `i`. */
  opOf(i: number): number {
    const options = this.opOfOption;
    const option = countOf(readSource(this.op, i));
    return options[option < options.length ? option : options.length - 1]!;
  }

  /** The initial value's bits for segment `i` (as int32); only with an initial value. */
  initialBitsOf(i: number): number {
    return readSource(this.initial!, i) | 0;
  }

  /**
   * The multi-workgroup kernels' device-side branch: with device-only size bounds whose maximum fits
   * one chunk, the chunk kernel writes each segment's result itself and the merge does nothing.
   */
  directBranch(): boolean {
    const bounds = this.sizeDeviceBounds;
    return bounds !== undefined && countOf(readSource(bounds, 1)) <= sumOrder.chunkItems;
  }
}
