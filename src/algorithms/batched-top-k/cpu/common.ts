import { isCpuBackend } from '../../../backends/cpu/cpu-backend.js';
import { type SlabMemory, deviceMemory } from '../../../backends/cpu/memory.js';
import { signBit } from '../../../backends/cpu/numerics.js';
import { type KernelParams, SegmentExtent, SegmentedContext, type ValueSource, countOf, readSource } from '../../../backends/cpu/segments.js';
import { keyFillBits, selectDirections, valueFillBits } from '../keys.js';
import { type TopKPolicy, radixFoldsFallback, radixInitParts, radixPasses, reducePerInvocation } from '../policy.js';
import { type TopKProblem, type TopKRun, radixFilterTiles, radixHistogramTiles, radixTiles, reduceChunks } from '../problem.js';
import { type SelectionSortFields, selectionSortFields } from './sorted.js';

/*
 * What every CPU top-k kernel shares: the device views of one run, per-segment resolution, the
 * ordered-key transform in the form the hot loops use, output writing and the selection sort.
 *
 * Signed ordered keys. The hot loops hold a key as `orderedKey(bits) ^ 0x80000000` read as an int32
 * (written `sk` below): signed comparison of two `sk` is unsigned comparison of their ordered keys,
 * so every compare is one int32 compare. `sk ^ 0x80000000` (stored through a u32/i32 view) is the
 * exact `orderedKey` of keys.ts, which is what temporary storage holds (partials), and radix digits
 * are the digits of that ordered key, as in the WGSL twins. The twins run the same launches over the
 * same slots; where the CPU takes a shortcut inside a launch (radix pass 0's sampled threshold), its
 * intermediate values differ but its outputs do not.
 */

/** Ordered keys are the framework's (backends/cpu/numerics.ts); re-exported for the kernels here. */
export { f32Signed, signBit } from '../../../backends/cpu/numerics.js';

/*
 * Counting and masks in hot loops take a condition as 1 or 0 with `+condition`, without a branch: V8
 * compiles it to a flag-to-register move, where `condition ? 1 : 0` is a (mispredictable) branch.
 * Written in place: through an imported helper (`bit()`, once here) the same loops ran slower, on one
 * thread radix pass 0's collect of 128x4096 k=64 0.96 against 0.70 ms and single-tile 256x2048 k=64
 * 5.37 against 4.92 ms (2026-11).
 */

/** Scratch for f32 index values. */
const indexScratch = new Float32Array(1);
const indexScratchBits = new Int32Array(indexScratch.buffer);

/**
 * Everything one top-k run's kernels read beyond the segments (SegmentedContext), resolved once per
 * run: key and value views, fills, slot offsets and the radix geometry. Values that kernels write
 * during the run (radix state) are read inside the kernels, never here.
 */
export class TopKContext extends SegmentedContext<TopKRun> {
  readonly problem: TopKProblem;
  readonly policy: TopKPolicy;
  /** Key bits as int32. */
  readonly keys: Int32Array;
  /** The same key memory as f32 (for float compares, where those are exact and cheaper). */
  readonly keysF32: Float32Array;
  /** The heap slab the keys lie in, where they lie in one: the SIMD collect reads them there in place (simd.ts). */
  readonly keySlab: SlabMemory | undefined;
  readonly keysOut: Int32Array;
  readonly valuesIn: Int32Array | undefined;
  readonly valuesOut: Int32Array | undefined;
  readonly kMax: number;
  readonly isF32: boolean;
  /** XOR that turns integer key bits into a signed ordered key for 'max' (i32: 0, u32: sign bit). */
  readonly integerKeyXor: number;
  /** Fill bits of the key slots past `take`, by direction (0 'max', 1 'min'), as int32. */
  readonly keyFill: readonly [number, number];
  /** Fill bits of the value slots past `take`, as int32. */
  readonly valueFill: number;
  /** 0: no values; 1: payload; 2: segment-local indices. */
  readonly valueMode: 0 | 1 | 2;
  /** Indices are written as f32 values. */
  readonly indexAsF32: boolean;
  readonly k: ValueSource;
  readonly direction: ValueSource;
  readonly directionOfOption: readonly number[];
  /** Whether the launches include single-tile and radix-select or row-radix (then the device branch picks one). */
  readonly hasSingleTile: boolean;
  readonly hasRadix: boolean;
  // Temporary-storage slots, word offsets (-1 when absent).
  readonly partialsSlot: number;
  /** 'reduce-chunk-merge': the chunk workgroups of each segment done so far, a word per segment. */
  readonly arrivalsSlot: number;
  readonly stateSlot: number;
  readonly histogramSlot: number;
  readonly selectedSlot: number;
  readonly candidatesSlot: readonly [number, number];
  /** Radix-select's compaction of selections past the tile (radix-plan.ts): its launches run, and their counts' slot (-1 without). */
  readonly radixCompacts: boolean;
  readonly compactCountsSlot: number;
  /** Reduce: workgroups per segment. Radix: tiles per segment. */
  readonly chunksPerSegment: number;
  /** Reduce with one invocation per segment: segments per workgroup (policy.workgroupSize); else 0. */
  readonly reduceSegmentsPerWorkgroup: number;
  readonly tilesPerSegment: number;
  /** Radix select: workgroups per segment of the filter passes. */
  readonly filterTilesPerSegment: number;
  /** Radix pass-0 workgroups per segment (problem.ts `radixHistogramTiles`). */
  readonly histogramTilesPerSegment: number;
  /** Radix pass 0 takes a misleading sampled threshold's histogram in its last workgroup (policy.ts radixFoldsFallback). */
  readonly radixFoldsFallback: boolean;
  /** radix-init's workgroups a segment (policy.ts radixInitParts). */
  readonly radixInitParts: number;
  /** Radix select: bits per digit (4 to 11), digits (histogram bins) per pass, passes, shift of the top digit. */
  readonly radixBits: number;
  readonly radixDigits: number;
  readonly radixPasses: number;
  readonly radixTopShift: number;
  /** Words each candidates buffer holds (a segment's candidates live at its start). */
  readonly candidateWords: number;
  /** row-radix: word offset of `rowCandidates` (-1 when absent) and the words it holds. */
  readonly rowCandidatesSlot: number;
  readonly rowCandidateWords: number;
  /** Sort each segment's results (problem.sorted). */
  readonly sorted: boolean;
  /** Take tied items as found, not by index (problem.tiesAsFound). */
  readonly tiesAsFound: boolean;
  /** Radix-select's filter pass 0 may pick among the sampled candidates (problem.radixPick). */
  readonly radixPick: boolean;
  /** Keep an unsorted selection as found, not in index order (problem.orderAsFound). */
  readonly orderAsFound: boolean;
  /** The selection sort's shape and slots when the selection is sorted after radix-select (cpu/sorted.ts). */
  readonly selectionSort: SelectionSortFields | undefined;
  /** Output key bits, for the routing-weights epilogue. */
  readonly keysOutBits: Uint32Array;
  /** The routing weights' output, its kind (routingWeightsKinds index) and the scale's f32 bits. */
  readonly weightsOut: Uint32Array | undefined;
  readonly weightsKind: number;
  readonly weightScaleBits: number;
  /** The backend lets f32 kernels use their WebAssembly SIMD loops (simd.ts), where a thread can run them. */
  readonly simd: boolean;

  constructor(run: TopKRun) {
    super(run);
    const problem = run.problem;
    this.problem = problem;
    this.policy = run.policy;
    const { keysIn, keysOut, valuesIn, valuesOut } = run.arrays;
    this.keys = deviceMemory(keysIn).i32;
    this.keysF32 = deviceMemory(keysIn).f32;
    this.keySlab = deviceMemory(keysIn).slab;
    this.keysOut = deviceMemory(keysOut).i32;
    this.valuesIn = valuesIn === undefined ? undefined : deviceMemory(valuesIn).i32;
    this.valuesOut = valuesOut === undefined ? undefined : deviceMemory(valuesOut).i32;
    this.kMax = problem.kMax;
    this.isF32 = problem.keyType === 'f32';
    this.integerKeyXor = problem.keyType === 'u32' ? signBit : 0;
    this.keyFill = [keyFillBits(problem.keyType, selectDirections[0]!) | 0, keyFillBits(problem.keyType, selectDirections[1]!) | 0];
    this.valueFill = valueFillBits(problem.valueType) | 0;
    this.valueMode = this.valuesOut === undefined || problem.valueMode === 'none' ? 0 : problem.valueMode === 'payload' ? 1 : 2;
    if (this.valueMode === 1 && this.valuesIn === undefined) throw new Error('internal: valueMode payload without valuesIn');
    this.indexAsF32 = problem.valueType === 'f32';
    this.k = this.source('k');
    this.direction = this.source('selectDirection');
    this.directionOfOption = problem.directionOfOption.length > 0 ? problem.directionOfOption : [0];
    this.hasSingleTile = run.launches.some((launch) => launch.kernel === 'single-tile');
    this.hasRadix = run.launches.some((launch) => launch.kernel === 'radix-histogram' || launch.kernel === 'row-radix');
    this.partialsSlot = this.slotWords('partials');
    this.arrivalsSlot = this.slotWords('arrivals');
    this.stateSlot = this.slotWords('segmentState');
    this.histogramSlot = this.slotWords('histogram');
    this.selectedSlot = this.slotWords('selected');
    this.candidatesSlot = [this.slotWords('candidates0'), this.slotWords('candidates1')];
    this.radixCompacts = run.launches.some((l) => l.kernel === 'radix-compact-count');
    this.compactCountsSlot = this.slotWords('compactCounts');
    this.chunksPerSegment = reduceChunks(problem.maxSegmentSize, run.policy);
    this.reduceSegmentsPerWorkgroup = reducePerInvocation(run.policy, problem.maxSegmentSize) ? run.policy.workgroupSize : 0;
    this.tilesPerSegment = radixTiles(problem.maxSegmentSize, run.policy);
    this.filterTilesPerSegment = radixFilterTiles(problem, run.policy);
    this.histogramTilesPerSegment = radixHistogramTiles(problem, run.policy);
    this.radixFoldsFallback = radixFoldsFallback(problem.maxSegmentSize, run.policy);
    this.radixInitParts = radixInitParts(problem.maxSegmentSize, run.policy);
    const bits = run.policy.radixBits;
    if (this.hasRadix && !(Number.isInteger(bits) && bits >= 4 && bits <= 11)) throw new Error(`internal: radix-select needs radixBits in [4, 11]; got ${bits}`);
    this.radixBits = bits;
    this.radixDigits = 1 << bits;
    this.radixPasses = radixPasses(bits);
    this.radixTopShift = 32 - bits;
    this.rowCandidatesSlot = this.slotWords('rowCandidates');
    this.rowCandidateWords = run.layout.has('rowCandidates') ? run.layout.slot('rowCandidates').bytes >>> 2 : 0;
    this.candidateWords = run.layout.has('candidates0') ? Math.min(run.layout.slot('candidates0').bytes, run.layout.slot('candidates1').bytes) >>> 2 : 0;
    this.sorted = problem.sorted;
    this.selectionSort = problem.selectionSort === undefined ? undefined : selectionSortFields(this, problem.selectionSort);
    this.tiesAsFound = problem.tiesAsFound;
    this.radixPick = problem.radixPick;
    this.orderAsFound = problem.orderAsFound;
    this.keysOutBits = deviceMemory(keysOut).u32;
    const weightsOut = run.arrays.weightsOut;
    this.weightsOut = weightsOut === undefined || problem.weights === undefined ? undefined : deviceMemory(weightsOut).u32;
    this.weightsKind = problem.weights?.kind ?? 0;
    this.weightScaleBits = problem.weights?.scaleBits ?? 0;
    this.simd = isCpuBackend(run.backend) && run.backend.simd;
  }

  /**
   * Whether another run of the same plan can use this context: it binds the same temporary storage
   * and status words (everything else a context views — the arrays, the uploaded host values, the
   * policy, the launches — is fixed when the plan is made).
   */
  fits(run: TopKRun): boolean {
    return run.temp === this.run.temp && run.status === this.run.status;
  }

  /**
   * The device-side single-tile branch: true when single-tile does the work. Without device size
   * bounds (or without the other variant launched) the launched variant always runs.
   */
  singleTileBranch(): boolean {
    const bounds = this.sizeDeviceBounds;
    if (bounds === undefined) return this.hasSingleTile;
    if (!this.hasSingleTile) return false;
    if (!this.hasRadix) return true;
    return countOf(readSource(bounds, 1)) <= this.policy.tileItems;
  }
}

/** One resolved segment; kernels reuse one instance (no allocation per segment). */
export class Segment extends SegmentExtent {
  /** k, clamped to kMax. */
  k = 0;
  /** min(k, size): results written. */
  take = 0;
  /** 0 'max', 1 'min'. */
  direction = 0;
  /** XOR that turns a 'max' signed ordered key into this direction's (0 or -1). */
  mask = 0;
}

/**
 * Resolves segment `i` (which must be < activeSegments()). `capacity` is the most keys the variant's
 * grid covers per segment; only a guarantee broken under 'trust' makes it bind.
 */
export function resolveSegment(ctx: TopKContext, i: number, capacity: number, out: Segment): void {
  ctx.extent(i, capacity, out);
  let k = countOf(readSource(ctx.k, i));
  if (k > ctx.kMax) k = ctx.kMax;
  const options = ctx.directionOfOption;
  const option = countOf(readSource(ctx.direction, i));
  const direction = options[option < options.length ? option : options.length - 1] === 1 ? 1 : 0;
  out.k = k;
  out.take = k < out.size ? k : out.size;
  out.direction = direction;
  out.mask = -direction;
}

/**
 * Writes segment `segment`'s outputs: `count` results whose segment-local indices are
 * `indices[indexBase + j]` (in output order), then the fills up to kMax. Their key bits are read from
 * the keys, or from `bits[bitsBase + j]` where given (a copy made while the keys were in cache).
 */
export function writeSegmentOutputs(
  ctx: TopKContext,
  segment: number,
  seg: Segment,
  indices: Int32Array,
  indexBase: number,
  count: number,
  bits?: Int32Array,
  bitsBase = 0,
): void {
  const kMax = ctx.kMax;
  const out = segment * kMax;
  const keys = ctx.keys;
  const keysOut = ctx.keysOut;
  const start = seg.start;
  if (bits !== undefined) for (let j = 0; j < count; j++) keysOut[out + j] = bits[bitsBase + j]!;
  else for (let j = 0; j < count; j++) keysOut[out + j] = keys[start + indices[indexBase + j]!]!;
  writeSegmentFills(ctx, out + count, out + kMax, seg.direction);
  const valuesOut = ctx.valuesOut;
  if (ctx.valueMode === 0 || valuesOut === undefined) return;
  if (ctx.valueMode === 1) {
    const valuesIn = ctx.valuesIn!;
    for (let j = 0; j < count; j++) valuesOut[out + j] = valuesIn[start + indices[indexBase + j]!]!;
  } else if (ctx.indexAsF32) {
    for (let j = 0; j < count; j++) {
      indexScratch[0] = indices[indexBase + j]!;
      valuesOut[out + j] = indexScratchBits[0]!;
    }
  } else {
    for (let j = 0; j < count; j++) valuesOut[out + j] = indices[indexBase + j]!;
  }
}

/** Output `at` of the outputs (a segment's slot j at segment * kMax + j) from item `index` of a segment starting at `start`, as writeSegmentOutputs writes each. */
export function writeSegmentOutput(ctx: TopKContext, at: number, start: number, index: number): void {
  ctx.keysOut[at] = ctx.keys[start + index]!;
  const valuesOut = ctx.valuesOut;
  if (ctx.valueMode === 0 || valuesOut === undefined) return;
  if (ctx.valueMode === 1) valuesOut[at] = ctx.valuesIn![start + index]!;
  else if (ctx.indexAsF32) {
    indexScratch[0] = index;
    valuesOut[at] = indexScratchBits[0]!;
  } else valuesOut[at] = index;
}

/** The fills of outputs [from, to) of a segment in direction `direction`. */
export function writeSegmentFills(ctx: TopKContext, from: number, to: number, direction: number): void {
  if (from >= to) return;
  ctx.keysOut.fill(ctx.keyFill[direction]!, from, to);
  if (ctx.valueMode !== 0 && ctx.valuesOut !== undefined) ctx.valuesOut.fill(ctx.valueFill, from, to);
}

// ---------------------------------------------------------------------------------------------
// Sorting a selection by (signed ordered key descending, index ascending), without allocation.

let sortKeysA = new Int32Array(4096);
let sortIndicesA = new Int32Array(4096);
let sortKeysB = new Int32Array(4096);
let sortIndicesB = new Int32Array(4096);
const sortCounts = new Int32Array(4 * 256);
const sortDigits = new Int32Array(4);

/** Below this many items an insertion sort beats the radix sort's histograms. */
const insertionSortItems = 48;

/**
 * Sorts entries [base, base + n) of (`keys`, `indices`) — `keys` signed ordered keys, `indices`
 * segment-local indices, the same entry positions in both arrays (which may be one array at two
 * offsets: `indexOffset` is added to each index position) — best first: larger key, then smaller
 * index. An LSD radix sort on the key (stable, skipping digits all entries share), then runs of
 * equal keys are put in index order, unless `tiesByIndex` is false (equal keys may then stay in
 * any order: the one they came in, for the radix sort). With `best` < n only the best `best`
 * entries need to be right (a selection from candidates): past them the entries may be any.
 */
export function sortByRank(keys: Int32Array, indices: Int32Array, base: number, indexOffset: number, n: number, tiesByIndex = true, best = n): void {
  if (n <= 1) return;
  if (n <= insertionSortItems) {
    insertionSortByRank(keys, indices, base, indexOffset, n);
    return;
  }
  if (sortKeysA.length < n) {
    const grown = Math.max(n, sortKeysA.length * 2);
    sortKeysA = new Int32Array(grown);
    sortIndicesA = new Int32Array(grown);
    sortKeysB = new Int32Array(grown);
    sortIndicesB = new Int32Array(grown);
  }
  if (sortByBuckets(keys, indices, base, indexOffset, n, best)) return;
  const counts = sortCounts;
  counts.fill(0);
  // Sort u = sk ^ 0x7fffffff, whose ascending unsigned order is descending sk. The first digit pass
  // reads the caller's arrays and the last writes them back, with scratch ping-pong in between.
  const indexBase = base + indexOffset;
  for (let j = base, end = base + n; j < end; j++) {
    const u = keys[j]! ^ 0x7fffffff;
    counts[u & 255]!++;
    counts[256 + ((u >>> 8) & 255)]!++;
    counts[512 + ((u >>> 16) & 255)]!++;
    counts[768 + (u >>> 24)]!++;
  }
  const first = keys[base]! ^ 0x7fffffff;
  let digits = 0;
  const needed = sortDigits;
  for (let digit = 0; digit < 4; digit++) {
    if (counts[digit * 256 + ((first >>> (digit * 8)) & 255)] !== n) needed[digits++] = digit; // else every entry shares it
  }
  if (digits === 0) {
    if (tiesByIndex) orderTies(keys, indices, base, indexOffset, n);
    return;
  }
  for (let pass = 0; pass < digits; pass++) {
    const digit = needed[pass]!;
    const shift = digit * 8;
    const histogram = digit * 256;
    let sum = 0;
    for (let d = histogram; d < histogram + 256; d++) {
      const c = counts[d]!;
      counts[d] = sum;
      sum += c;
    }
    const fromCaller = pass === 0;
    const toCaller = pass === digits - 1 && digits > 1;
    const srcKeys = fromCaller ? keys : (pass & 1) === 1 ? sortKeysA : sortKeysB;
    const srcIndices = fromCaller ? indices : (pass & 1) === 1 ? sortIndicesA : sortIndicesB;
    const srcBase = fromCaller ? base : 0;
    const srcIndexBase = fromCaller ? indexBase : 0;
    const dstKeys = toCaller ? keys : (pass & 1) === 0 ? sortKeysA : sortKeysB;
    const dstIndices = toCaller ? indices : (pass & 1) === 0 ? sortIndicesA : sortIndicesB;
    const dstBase = toCaller ? base : 0;
    const dstIndexBase = toCaller ? indexBase : 0;
    for (let j = 0; j < n; j++) {
      const key = srcKeys[srcBase + j]!;
      const at = counts[histogram + (((key ^ 0x7fffffff) >>> shift) & 255)]!++;
      dstKeys[dstBase + at] = key;
      dstIndices[dstIndexBase + at] = srcIndices[srcIndexBase + j]!;
    }
  }
  if (digits === 1) {
    // One pass went to scratch A: copy back.
    for (let j = 0; j < n; j++) {
      keys[base + j] = sortKeysA[j]!;
      indices[indexBase + j] = sortIndicesA[j]!;
    }
  }
  if (tiesByIndex) orderTies(keys, indices, base, indexOffset, n);
}

const bucketCounts = new Int32Array(2048);

/**
 * The bucket passes' output: entries in rank order at the front, and from `pickedPast` the entries of
 * the buckets past the best (each bucket's counter starts there, so the pass has no branch). Up to
 * 8192 entries (more go to the radix sort). Module constants, not the growable scratch above: V8
 * embeds them, where arrays it must load keep reloading their base and length after every store of
 * a loop (the sort of 224 candidates ran ~20% slower so).
 */
const bucketSortItems = 8192;
const pickedPast = bucketSortItems;
const pickedKeys = new Int32Array(2 * bucketSortItems);
const pickedIndices = new Int32Array(2 * bucketSortItems);

/**
 * The bucket passes of {@link sortByBuckets} and {@link bestByBuckets}: entries [0, n) from `base`
 * (indices from base + indexOffset; n <= bucketSortItems) counted into `buckets` buckets by
 * u = sk ^ 0x7fffffff (ascending u is descending sk) from bit `shift`; the buckets that hold the best
 * `best` entries are placed at the front of pickedKeys / pickedIndices and put in rank order (keys only
 * move within their bucket), the others' entries sent past pickedPast. Returns how many entries lead
 * in order (whole buckets, at least `best`), or -1, having changed nothing, when one of those buckets
 * holds more than 32 keys (clustered keys or ties: the caller sorts otherwise).
 */
function orderBestBuckets(keys: Int32Array, indices: Int32Array, base: number, indexOffset: number, n: number, best: number, shift: number, buckets: number): number {
  const bucketMask = buckets - 1;
  const counts = bucketCounts;
  counts.fill(0, 0, buckets);
  const end = base + n;
  for (let j = base; j < end; j++) counts[((keys[j]! ^ 0x7fffffff) >>> shift) & bucketMask]!++;
  let placed = 0;
  let bucket = 0;
  for (; bucket < buckets; bucket++) {
    const c = counts[bucket]!;
    if (c > 32) return -1;
    counts[bucket] = placed;
    placed += c;
    if (placed >= best) break;
  }
  counts.fill(pickedPast, bucket + 1, buckets);
  const ib = base + indexOffset;
  for (let j = 0; j < n; j++) {
    const key = keys[base + j]!;
    const at = counts[((key ^ 0x7fffffff) >>> shift) & bucketMask]!++;
    pickedKeys[at] = key;
    pickedIndices[at] = indices[ib + j]!;
  }
  insertionSortByRank(pickedKeys, pickedIndices, 0, 0, placed);
  return placed;
}

/**
 * {@link sortByRank} for keys that spread: the bucket pass on the ~log2(n) bits below the prefix
 * every key shares (so the buckets hold about one key each), over the buckets that hold the best
 * `best` entries. Returns false, having changed nothing, when every key is equal or one of those
 * buckets holds more than 32 keys (the radix sort does them).
 */
function sortByBuckets(keys: Int32Array, indices: Int32Array, base: number, indexOffset: number, n: number, best: number): boolean {
  if (n > bucketSortItems) return false;
  const end = base + n;
  const first = keys[base]!;
  let diff = 0;
  for (let j = base + 1; j < end; j++) diff |= keys[j]! ^ first;
  if (diff === 0) return false;
  const bits = Math.min(11, 32 - Math.clz32(n));
  const highest = 31 - Math.clz32(diff);
  const sorted = orderBestBuckets(keys, indices, base, indexOffset, n, best, highest + 1 > bits ? highest + 1 - bits : 0, 1 << bits);
  if (sorted < 0) return false;
  const ib = base + indexOffset;
  for (let j = 0; j < sorted; j++) {
    keys[base + j] = pickedKeys[j]!;
    indices[ib + j] = pickedIndices[j]!;
  }
  return true;
}

/**
 * The best `take` of entries [0, n) of (`keys`, `indices`) (n <= 8192; signed ordered keys and
 * segment-local indices, `diff` the OR of every key XOR keys[0]) to [0, take) in rank order (larger
 * key, then smaller index), as `sortByRank(keys, indices, 0, 0, n, true, take)` puts them; entries
 * past take may be any. The bucket pass on the 8 bits below the prefix every key shares, placing
 * only the buckets that hold the best `take`. Returns false, having changed nothing, when every key
 * is equal or one of those buckets holds more than 32 keys (the caller sorts). The best 64 of ~226
 * candidates (128x4096 k=64), gather included, 1.9 against 3.2 us a row with sortByRank; the whole
 * call on one thread, median of 100, 1.28 -> 1.20 ms, and 1.45 -> 1.37 after 12 ms of other work
 * (2026-11-28).
 */
export function bestByBuckets(keys: Int32Array, indices: Int32Array, n: number, take: number, diff: number): boolean {
  if (diff === 0 || n > bucketSortItems || take <= 0) return false;
  const highest = 31 - Math.clz32(diff);
  if (orderBestBuckets(keys, indices, 0, 0, n, take, highest > 7 ? highest - 7 : 0, 256) < 0) return false;
  for (let j = 0; j < take; j++) {
    keys[j] = pickedKeys[j]!;
    indices[j] = pickedIndices[j]!;
  }
  return true;
}

/** Sorts n entries from `base` best first (larger key, then smaller index) by insertion: for short or nearly ordered runs. */
function insertionSortByRank(keys: Int32Array, indices: Int32Array, base: number, indexOffset: number, n: number): void {
  const ib = base + indexOffset;
  for (let j = 1; j < n; j++) {
    const key = keys[base + j]!;
    const index = indices[ib + j]!;
    let at = j;
    while (at > 0) {
      const prev = keys[base + at - 1]!;
      if (prev > key || (prev === key && indices[ib + at - 1]! < index)) break;
      keys[base + at] = prev;
      indices[ib + at] = indices[ib + at - 1]!;
      at--;
    }
    keys[base + at] = key;
    indices[ib + at] = index;
  }
}

/** Puts each run of equal keys in ascending index order (the stable sort kept the input order). */
function orderTies(keys: Int32Array, indices: Int32Array, base: number, indexOffset: number, n: number): void {
  const ib = base + indexOffset;
  let runStart = 0;
  let ordered = true;
  for (let j = 1; j <= n; j++) {
    if (j < n && keys[base + j] === keys[base + j - 1]) {
      if (indices[ib + j]! < indices[ib + j - 1]!) ordered = false;
      continue;
    }
    if (!ordered) indices.subarray(ib + runStart, ib + j).sort();
    runStart = j;
    ordered = true;
  }
}

/** Ascending order of `list[from, to)` (candidate indices on the CPU come ascending; this checks, and sorts otherwise). */
export function ensureAscending(list: Int32Array, from: number, to: number): void {
  for (let j = from + 1; j < to; j++) {
    if (list[j]! < list[j - 1]!) {
      list.subarray(from, to).sort();
      return;
    }
  }
}

/** Kernel parameters: the run's context and the launch's radix pass. */
export type TopKKernelParams = KernelParams<TopKContext>;
