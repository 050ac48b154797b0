import { isCpuBackend } from '../../../backends/cpu/cpu-backend.js';
import { type SlabMemory, deviceMemory } from '../../../backends/cpu/memory.js';
import { type KernelParams, SegmentExtent, SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import type { ScanValueType } from '../order.js';
import type { ScanPolicy } from '../policy.js';
import { type ScanProblem, type ScanRun, type SpineForm, spansPerSegment, spineForm, spineTilesPerSegment, tileSpan, tilesPerSegment } from '../problem.js';

/*
 * What every CPU scan kernel reads beyond the segments (SegmentedContext), resolved once per run:
 * the value views, the operator, mode and initial value of a segment, the temporary-storage slots.
 */

/** One resolved segment; kernels reuse one instance (no allocation per segment). */
export class ScanSegment extends SegmentExtent {
  /** Operator code (order.ts `OpCode`). */
  op = 0;
  /** 0 inclusive, 1 exclusive. */
  exclusive = 0;
  /** Whether the segment has an initial value, and its bits. */
  hasInitial = false;
  initialBits = 0;
}

/** The scan's run, as its CPU kernels read it (on worker threads without `run` and `problem`). */
export class ScanContext extends SegmentedContext<ScanRun> {
  readonly problem: ScanProblem;
  readonly policy: ScanPolicy;
  readonly inF32: Float32Array;
  readonly inI32: Int32Array;
  /** The heap slab the values lie in, where they lie in one: the SIMD loops read them there in place (simd.ts). */
  readonly inSlab: SlabMemory | undefined;
  readonly outF32: Float32Array;
  readonly outI32: Int32Array;
  readonly outU32: Uint32Array;
  readonly valueType: ScanValueType;
  readonly isF32: boolean;
  /** XOR that turns integer bits into a signed ordered key (i32: 0, u32: the sign bit). */
  readonly integerKeyXor: number;
  readonly op: ValueSource;
  readonly mode: ValueSource;
  readonly opOfOption: readonly number[];
  readonly modeOfOption: readonly number[];
  /** 0 none, 1 constant or uniform (`initialBits`), 2 device (`initialWords`, one word or one per segment). */
  readonly initialKind: 0 | 1 | 2;
  readonly initialBits: number;
  readonly initialWords: Uint32Array;
  readonly initialPerSegment: boolean;
  readonly initialLength: number;
  /** f32 sums in the canonical order ('run-to-run'). */
  readonly canonical: boolean;
  /** The backend lets f32 kernels use their WebAssembly SIMD loops (simd.ts), where a thread can run them. */
  readonly simd: boolean;
  /** Temporary storage as f32 (sums of tiles). */
  readonly tempF32: Float32Array;
  // Slots, word offsets (-1 when absent).
  readonly tileTotalsSlot: number;
  readonly spineTotalsSlot: number;
  readonly spineLaneCarriesSlot: number;
  readonly lookbackSlot: number;
  /** How 'tile-scan' finds a tile's carry (problem.ts `SpineForm`). */
  readonly spineForm: SpineForm;
  readonly tilesPerSegment: number;
  readonly spineTilesPerSegment: number;
  /** Tiles per workgroup of the tile launches, and workgroups per segment (problem.ts `tileSpan`). */
  readonly tileSpan: number;
  readonly spans: number;

  constructor(run: ScanRun) {
    super(run);
    const problem = run.problem;
    this.problem = problem;
    this.policy = run.policy;
    const input = deviceMemory(run.arrays.valuesIn);
    const output = deviceMemory(run.arrays.valuesOut);
    this.inF32 = input.f32;
    this.inI32 = input.i32;
    this.inSlab = input.slab;
    this.outF32 = output.f32;
    this.outI32 = output.i32;
    this.outU32 = output.u32;
    this.valueType = problem.valueType;
    this.isF32 = problem.valueType === 'f32';
    this.integerKeyXor = problem.valueType === 'u32' ? -0x80000000 : 0;
    this.op = this.source('op');
    this.mode = this.source('mode');
    this.opOfOption = problem.opOfOption.length > 0 ? problem.opOfOption : [0];
    this.modeOfOption = problem.modeOfOption.length > 0 ? problem.modeOfOption : [0];
    const initial = problem.sources.initialValue;
    this.initialKind = initial === undefined ? 0 : initial.kind === 'constant' || initial.kind === 'uniform' ? 1 : 2;
    this.initialBits = problem.initialBits ?? 0;
    this.initialWords = initial !== undefined && (initial.kind === 'device' || initial.kind === 'perSegment') ? deviceMemory(initial.array).u32 : new Uint32Array(0);
    this.initialPerSegment = initial?.kind === 'perSegment';
    this.initialLength = initial !== undefined && (initial.kind === 'device' || initial.kind === 'perSegment') ? initial.array.length : 0;
    this.canonical = problem.canonical;
    this.simd = isCpuBackend(run.backend) && run.backend.simd;
    this.tempF32 = run.temp === undefined ? new Float32Array(0) : deviceMemory(run.temp).f32;
    this.tileTotalsSlot = this.slotWords('tileTotals');
    this.spineTotalsSlot = this.slotWords('spineTotals');
    this.spineLaneCarriesSlot = this.slotWords('spineLaneCarries');
    this.lookbackSlot = this.slotWords('lookback');
    this.tilesPerSegment = tilesPerSegment(problem.maxSegmentSize);
    this.spineTilesPerSegment = spineTilesPerSegment(problem.maxSegmentSize);
    this.tileSpan = tileSpan(problem, run.policy);
    this.spans = spansPerSegment(problem, run.policy);
    this.spineForm = spineForm(problem, run.policy);
  }
}

/** Kernel parameters of the scan's CPU kernels. */
export type ScanKernelParams = KernelParams<ScanContext>;

/**
 * Resolves segment `i` (which must be < activeSegments()): its extent (clamped to `capacity`, the
 * most items the variant's grid covers), operator, mode and initial value — the WGSL twins'
 * `enterSegment`.
 */
export function resolveScanSegment(ctx: ScanContext, i: number, capacity: number, out: ScanSegment): void {
  ctx.extent(i, capacity, out);
  const ops = ctx.opOfOption;
  const op = countOf(readSource(ctx.op, i));
  out.op = ops[op < ops.length ? op : ops.length - 1]!;
  const modes = ctx.modeOfOption;
  const mode = countOf(readSource(ctx.mode, i));
  out.exclusive = modes[mode < modes.length ? mode : modes.length - 1]!;
  out.hasInitial = ctx.initialKind !== 0;
  if (ctx.initialKind === 1) out.initialBits = ctx.initialBits;
  else if (ctx.initialKind === 2) {
    const at = ctx.initialPerSegment ? i : 0;
    out.initialBits = at < ctx.initialLength ? ctx.initialWords[at]! : 0;
  }
}
