import { deviceMemory } from '../../../backends/cpu/memory.js';
import { SegmentExtent, SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import type { SegmentedSortPolicy } from '../policy.js';
import { type MergeLayout, type SegmentedSortRun, type SingleTileShape, mergeLayout, radixScanShape, singleTileShape } from '../problem.js';
import type { MergeSortSource } from './kernels.js';
import type { RadixSegment, RadixSortSource } from './radix.js';

/**
 * Everything one sort run's kernels read beyond the segments (SegmentedContext), resolved once per
 * run: key and value views, the order table, the slot offsets and the variant split. Values kernels
 * write during the run (counts, the double buffer) are read inside the kernels, never here.
 */
export class SortContext extends SegmentedContext<SegmentedSortRun> implements RadixSortSource, MergeSortSource {
  readonly policy: SegmentedSortPolicy;
  /** Key bits, input and output. */
  readonly keysIn: Uint32Array;
  readonly keysOut: Uint32Array;
  readonly valuesIn: Uint32Array | undefined;
  readonly valuesOut: Uint32Array | undefined;
  /** The radix kernels' pass-0 reads: the inputs (values only as a payload; else indices). */
  readonly sourceKeys: Uint32Array;
  readonly sourceValues: Uint32Array | undefined;
  /** 0 f32 (ordered through its bits' special cases), 1 i32, 2 u32. */
  readonly keyKind: 0 | 1 | 2;
  /** 0: no values; 1: payload; 2: segment-local indices. */
  readonly valueMode: 0 | 1 | 2;
  /** Indices are written as f32 values. */
  readonly indexAsF32: boolean;
  readonly order: ValueSource;
  /** Option index -> 0 ascending, 1 descending. */
  readonly orderOfOption: readonly number[];
  readonly tileItems: number;
  /** The single-tile layout (segments per workgroup, tile per segment). */
  readonly singleTile: SingleTileShape;
  readonly tiles: number;
  readonly groupSegments: number;
  readonly scanDigits: number;
  readonly scanInScatter: boolean;
  /** Whether the launches include single-tile and radix or workgroup-radix (then a segment's size picks one). */
  readonly hasSingleTile: boolean;
  readonly hasRadix: boolean;
  readonly hasWorkgroupRadix: boolean;
  readonly hasMerge: boolean;
  /** 'merge''s tile, workgroups per segment and block launch layout (problem.ts `mergeLayout`). */
  readonly merge: MergeLayout;
  /** The items a kernel covers per segment: the host bound with radix, workgroup-radix or merge, else the tile. */
  readonly capacity: number;
  // Temporary-storage slots, word offsets (-1 when absent).
  readonly countsSlot: number;
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  readonly hasValues: boolean;
  /** The sort reads its input and writes its outputs, distinct arrays (plan.ts checks them). */
  readonly inPlace = false;

  constructor(run: SegmentedSortRun) {
    super(run);
    const problem = run.problem;
    this.policy = run.policy;
    this.keysIn = deviceMemory(run.arrays.keysIn).u32;
    this.keysOut = deviceMemory(run.arrays.keysOut).u32;
    this.valuesIn = run.arrays.valuesIn === undefined ? undefined : deviceMemory(run.arrays.valuesIn).u32;
    this.valuesOut = run.arrays.valuesOut === undefined ? undefined : deviceMemory(run.arrays.valuesOut).u32;
    this.keyKind = problem.keyType === 'f32' ? 0 : problem.keyType === 'i32' ? 1 : 2;
    this.valueMode = this.valuesOut === undefined ? 0 : problem.valueMode === 'payload' ? 1 : 2;
    this.indexAsF32 = problem.valueType === 'f32';
    this.order = this.source('order');
    this.orderOfOption = problem.orderOfOption.length > 0 ? problem.orderOfOption : [0];
    this.tileItems = run.policy.tileItems;
    this.singleTile = singleTileShape(problem.maxSegmentSize, run.policy);
    this.tiles = problem.tilesPerSegment;
    this.groupSegments = problem.groupSegments;
    this.scanDigits = radixScanShape(problem.tilesPerSegment, run.policy.workgroupSize).digitsPerWorkgroup;
    this.hasSingleTile = run.launches.some((l) => l.kernel === 'single-tile');
    this.hasRadix = run.launches.some((l) => l.kernel === 'radix-histogram');
    this.scanInScatter = this.hasRadix && !run.launches.some((l) => l.kernel === 'radix-scan');
    this.hasWorkgroupRadix = run.launches.some((l) => l.kernel === 'workgroup-radix');
    this.hasMerge = run.launches.some((l) => l.kernel === 'merge-blocks');
    this.merge = mergeLayout(problem, run.policy);
    this.capacity = this.hasRadix || this.hasWorkgroupRadix || this.hasMerge ? problem.maxSegmentSize : run.policy.tileItems;
    this.countsSlot = this.slotWords('sortCounts');
    this.keysSlots = [this.slotWords('sortKeys0'), this.slotWords('sortKeys1')];
    this.valuesSlots = [this.slotWords('sortValues0'), this.slotWords('sortValues1')];
    this.hasValues = this.valueMode !== 0;
    this.sourceKeys = this.keysIn;
    this.sourceValues = this.valueMode === 1 ? this.valuesIn : undefined;
  }

  /** 0xFFFFFFFF for a descending segment, else 0: XOR with an ordered key gives the sort key. */
  orderMaskOf(i: number): number {
    const options = this.orderOfOption;
    const option = countOf(readSource(this.order, i));
    return options[option < options.length ? option : options.length - 1] === 1 ? 0xffffffff : 0;
  }

  /**
   * Resolves segment `i` for a kernel of `variant` into `out`; false when the kernel has nothing to
   * do for it (a failed validation, past numSegments, or the other variant's segment).
   */
  enter(i: number, variant: 'single-tile' | 'merge' | 'radix' | 'workgroup-radix', out: SegmentExtent): boolean {
    if (this.failed() || i >= this.activeSegments()) return false;
    this.extent(i, this.capacity, out);
    if (this.hasSingleTile && (this.hasRadix || this.hasWorkgroupRadix || this.hasMerge)) return (out.size <= this.tileItems) === (variant === 'single-tile');
    return true;
  }

  private readonly extentScratch = new SegmentExtent();

  enterRadix(i: number, out: RadixSegment): boolean {
    return this.enterSorted(i, 'radix', out);
  }

  enterMerge(i: number, out: RadixSegment): boolean {
    return this.enterSorted(i, 'merge', out);
  }

  private enterSorted(i: number, variant: 'radix' | 'merge', out: RadixSegment): boolean {
    const extent = this.extentScratch;
    if (!this.enter(i, variant, extent)) return false;
    out.start = extent.start;
    out.size = extent.size;
    out.mask = this.orderMaskOf(i);
    return true;
  }
}

export { SegmentExtent };
