import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { SegmentExtent, countOf, readSource } from '../../../backends/cpu/segments.js';
import { type MergeSortSource, mergeBlocks } from '../../segmented-sort/cpu/kernels.js';
import { mergePass } from '../../segmented-sort/cpu/merge.js';
import { type RadixSegment, type RadixSortSource, radixHistogram, radixScan, radixScatter } from '../../segmented-sort/cpu/radix.js';
import { type MergeLayout, radixScanShape } from '../../segmented-sort/problem.js';
import type { SelectionSort } from '../problem.js';
import type { TopKContext, TopKKernelParams } from './common.js';

/*
 * Sorted output past a tile on the CPU: the segmented sort's merge kernels (segmented-sort/cpu/kernels.ts
 * `mergeBlocks`, cpu/merge.ts) or radix kernels (segmented-sort/cpu/radix.ts) over each segment's
 * selection in place, as problem.ts chooseSelectionSort chose. Radix-select's finalize wrote the
 * selection in index order at segment * kMax; the sort orders it best first (descending ordered key
 * for 'max', ascending for 'min'), stable, so ties stay in index order: the order finalize's own sort
 * gives a smaller selection. Values (payloads or index values, as finalize wrote them) move with
 * their keys as payloads.
 */

/** What the selection sort reads of a top-k run, resolved on the calling thread (plain data, so worker copies carry it). */
export interface SelectionSortFields {
  /** 'merge''s layout (problem.ts selectionMergeLayout); undefined with radix. */
  readonly merge: MergeLayout | undefined;
  /** The tile of the merge's block sort (the policy's tileItems: problem.ts selectionSortPolicy). */
  readonly tileItems: number;
  /** Radix: tiles per segment and segments per group (1 with merge). */
  readonly tiles: number;
  readonly groupSegments: number;
  /** Digits one scan workgroup covers (segmented-sort/problem.ts `radixScanShape`). */
  readonly scanDigits: number;
  /** Radix without a scan launch (segmented-sort/problem.ts `radixScansInScatter`). */
  readonly scanInScatter: boolean;
  readonly countsSlot: number;
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  /** Radix-select's segment capacity (tiles * radixTileItems), as finalize resolves a segment. */
  readonly capacity: number;
}

/** The fields of a run with a selection sort. */
export function selectionSortFields(ctx: TopKContext, sort: SelectionSort): SelectionSortFields {
  const shape = sort.variant === 'radix' ? sort : { tiles: 1, groupSegments: 1, scanInScatter: false };
  return {
    merge: sort.variant === 'merge' ? sort.layout : undefined,
    tileItems: ctx.policy.tileItems,
    tiles: shape.tiles,
    groupSegments: shape.groupSegments,
    scanDigits: radixScanShape(shape.tiles, ctx.policy.workgroupSize).digitsPerWorkgroup,
    scanInScatter: shape.scanInScatter,
    countsSlot: ctx.slotWords('sortCounts'),
    keysSlots: [ctx.slotWords('sortKeys0'), ctx.slotWords('sortKeys1')],
    valuesSlots: [ctx.slotWords('sortValues0'), ctx.slotWords('sortValues1')],
    capacity: ctx.tilesPerSegment * ctx.policy.radixTileItems,
  };
}

/** Top-k's selection as the radix and merge kernels' source. */
class SelectionSource implements RadixSortSource, MergeSortSource {
  readonly tiles: number;
  readonly groupSegments: number;
  readonly scanDigits: number;
  readonly scanInScatter: boolean;
  readonly tempU32: Uint32Array;
  readonly countsSlot: number;
  readonly keysSlots: readonly [number, number];
  readonly valuesSlots: readonly [number, number];
  readonly keyKind: 0 | 1 | 2;
  readonly hasValues: boolean;
  readonly keysOut: Uint32Array;
  readonly valuesOut: Uint32Array | undefined;
  // The selection is sorted in place: pass 0 reads the outputs, and its values are finalize's.
  readonly sourceKeys: Uint32Array;
  readonly sourceValues: Uint32Array | undefined;
  readonly indexAsF32 = false;
  // The merge kernels' view: values are payloads; the outputs are the source.
  readonly valueMode: 0 | 1;
  readonly inPlace = true;
  readonly tileItems: number;
  private readonly extent = new SegmentExtent();

  constructor(
    private readonly ctx: TopKContext,
    private readonly fields: SelectionSortFields,
  ) {
    this.tiles = fields.tiles;
    this.groupSegments = fields.groupSegments;
    this.scanDigits = fields.scanDigits;
    this.scanInScatter = fields.scanInScatter;
    this.tempU32 = ctx.tempU32;
    this.countsSlot = fields.countsSlot;
    this.keysSlots = fields.keysSlots;
    this.valuesSlots = fields.valuesSlots;
    this.keysOut = new Uint32Array(ctx.keysOut.buffer, ctx.keysOut.byteOffset, ctx.keysOut.length);
    this.valuesOut = ctx.valuesOut === undefined ? undefined : new Uint32Array(ctx.valuesOut.buffer, ctx.valuesOut.byteOffset, ctx.valuesOut.length);
    this.hasValues = this.valuesOut !== undefined && ctx.valueMode !== 0;
    // keys.ts `orderedKey(bits, keyType, 'max')` by key type: the same ordered keys as the sort's.
    this.keyKind = ctx.isF32 ? 0 : ctx.integerKeyXor !== 0 ? 2 : 1;
    this.sourceKeys = this.keysOut;
    this.sourceValues = this.hasValues ? this.valuesOut : undefined;
    this.valueMode = this.hasValues ? 1 : 0;
    this.tileItems = fields.tileItems;
  }

  get merge(): MergeLayout {
    if (this.fields.merge === undefined) throw new Error('internal: a merge launch in a run whose selection sort is radix');
    return this.fields.merge;
  }

  enterMerge(i: number, out: RadixSegment): boolean {
    return this.enterRadix(i, out);
  }

  enterRadix(i: number, out: RadixSegment): boolean {
    const ctx = this.ctx;
    if (ctx.failed() || i >= ctx.activeSegments()) return false;
    ctx.extent(i, this.fields.capacity, this.extent);
    let k = countOf(readSource(ctx.k, i));
    if (k > ctx.kMax) k = ctx.kMax;
    const options = ctx.directionOfOption;
    const option = countOf(readSource(ctx.direction, i));
    const min = options[option < options.length ? option : options.length - 1] === 1;
    out.start = i * ctx.kMax;
    out.size = Math.min(k, this.extent.size);
    // Best first: descending ordered keys for 'max', ascending for 'min'.
    out.mask = min ? 0 : 0xffffffff;
    return true;
  }
}

const sources = new WeakMap<TopKContext, SelectionSource>();

function sourceOf(ctx: TopKContext): SelectionSource {
  let source = sources.get(ctx);
  if (source === undefined) {
    if (ctx.selectionSort === undefined) throw new Error('internal: a selection-sort launch in a run without one');
    source = new SelectionSource(ctx, ctx.selectionSort);
    sources.set(ctx, source);
  }
  return source;
}

export function runSortHistogram(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx, pass }: TopKKernelParams): void {
  radixHistogram(sourceOf(ctx), workgroupId, shared, pass);
}

export function runSortScan(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx, pass }: TopKKernelParams): void {
  radixScan(sourceOf(ctx), workgroupId, shared, pass);
}

export function runSortScatter(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx, pass }: TopKKernelParams): void {
  radixScatter(sourceOf(ctx), workgroupId, shared, pass);
}

export function runSortMergeBlocks(workgroupId: number, _n: number, shared: WorkgroupMemory, { ctx }: TopKKernelParams): void {
  mergeBlocks(sourceOf(ctx), workgroupId, shared);
}

export function runSortMergePass(workgroupId: number, _n: number, _shared: WorkgroupMemory, { ctx, pass }: TopKKernelParams): void {
  mergePass(sourceOf(ctx), workgroupId, pass);
}
