/*
 * Workgroup-level WGSL building blocks shared by the kernels of several algorithms (CUB's block
 * scope): a scan and a bitonic sort over workgroup memory. `WG` (the workgroup size) is in scope in
 * every program (program.ts).
 */

/**
 * One round of the bitonic network in WGSL: stages of strides j, j / 2, ..., j / 2^(bits - 1) of
 * merge `size`, on groups of 2^bits entries held in registers. The entries one stage pairs differ in
 * one index bit, so a group (indices that differ only in bits log2(j) - bits + 1 .. log2(j)) is
 * closed under all of the round's stages; invocations take the p / 2^bits groups in turn.
 */
function bitonicRoundWgsl(bits: number): string {
  const n = 2 ** bits;
  const entries = Array.from({ length: n }, (_, m) => m);
  const load = entries.map((m) => `    var e${m} = sortLoad(i0 + ${m}u * step);`).join('\n');
  const stages: string[] = [];
  for (let q = 0; q < bits; q++) {
    const d = n >> (q + 1);
    for (const m of entries) {
      if ((m & d) !== 0) continue;
      const a = `e${m}`;
      const b = `e${m + d}`;
      stages.push(`    { let swap = sortBefore(${b}, ${a}) == (((i0 + ${m}u * step) & size) == 0u); let t = ${a}; ${a} = select(${a}, ${b}, swap); ${b} = select(${b}, t, swap); }`);
    }
  }
  const store = entries.map((m) => `    sortStore(i0 + ${m}u * step, e${m});`).join('\n');
  return `fn bitonicRound${bits}(p: u32, size: u32, j: u32, lid: u32) {
  let step = j >> ${bits - 1}u;
  let low = step - 1u;
  for (var t = lid; t < (p >> ${bits}u); t += WG) {
    let i0 = ((t & ~low) << ${bits}u) | (t & low);
${load}
${stages.join('\n')}
${store}
  }
}`;
}

/**
 * Workgroup words an array of n sort entries takes: one pad word after every 16 (see `sortSlot`).
 */
export function sortSlotsFor(n: number): number {
  return n + (n >> 4);
}

/**
 * WGSL: `sortSlot(i)`, where entry i of a sort lives in its workgroup arrays: one pad word after
 * every 16. A round of the network on groups of 8 entries at a small stride (j of 4, 2 or 1) has
 * lane t read words 8t + m; without the pad 8 lanes of a warp hit each memory bank (8-way conflicts),
 * with it at most 2 (groups of 16 read words 17t + m: none).
 */
const sortSlotWgsl = `fn sortSlot(i: u32) -> u32 { return i + (i >> 4u); }`;

/** How a kernel's bitonic sort groups its entries ({@link bitonicSortWgsl}). */
export interface BitonicOptions {
  /**
   * A round groups 2^b entries only where there are at least this many groups (or one per
   * invocation): fewer barriers and fewer passes over workgroup memory pay for idle invocations,
   * down to this many. 128 on the H200 (2026-11-24, groups of 8 against one stage per barrier):
   * top-k 64x65536 k=2048 0.139 -> 0.107 ms, row-radix 64x32768 k=2048 0.112 -> 0.100 and k=4096
   * 0.125 -> 0.113.
   */
  readonly wideGroups: number;
  /** The most stages a round runs between barriers (groups of up to 2^maxBits entries). */
  readonly maxBits: number;
}

/** Groups of up to 16 entries from 128 groups on; a kernel narrows or widens it for its sorts (top-k: batched-top-k/webgpu/facts.ts `bitonicOf`). */
export const defaultBitonic: BitonicOptions = { wideGroups: 128, maxBits: 4 };

/**
 * A workgroup bitonic sort of entries [0, p), p = count rounded up to a power of two, best first.
 * An entry is a vec2<u32> (key, index), best first by key descending, then index ascending. The
 * kernel defines `sortLoad(i: u32) -> vec2<u32>` and `sortStore(i: u32, entry: vec2<u32>)` over its
 * workgroup memory (entry i at `sortSlot(i)` of arrays of `sortSlotsFor(n)` words), and pads
 * entries [count, p) so they rank last. `count` must be workgroup-uniform.
 *
 * Register-blocked: each round loads groups of up to 2^maxBits entries and runs up to maxBits
 * stages of the network on them before storing: 4096 entries take 30 barriers in groups of 8 and
 * 22 in groups of 16, where one stage per barrier takes 78. Groups shrink where there are fewer
 * than `wideGroups` groups of that size. On the H200 (GPU ms): groups of 8 against one stage
 * (2026-11-24) took radix-select's finalize of a 2048-item selection 0.059 -> 0.040, of 4096 items
 * 0.110 -> 0.062; groups of 16 (2026-11-29) took top-k 32x131072 k=2048 0.0804 -> 0.0756 and
 * 64x65536 k=2048 0.0806 -> 0.0766 (the pick's sort of ~3.3K candidates), within 0.0011 elsewhere.
 */
export function bitonicSortWgsl(options: BitonicOptions = defaultBitonic): string {
  const widths = Array.from({ length: options.maxBits - 1 }, (_, i) => options.maxBits - i);
  return `${sortSlotWgsl}
const WIDE_GROUPS: u32 = ${options.wideGroups}u;
fn sortBefore(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x > b.x || (a.x == b.x && a.y < b.y); }
${Array.from({ length: options.maxBits }, (_, i) => bitonicRoundWgsl(i + 1)).join('\n')}
fn bitonicSort(count: u32, lid: u32) {
  let p = nextPowerOfTwo(count);
  // Wide rounds where there are WIDE_GROUPS groups or more: a few entries (a top-k of 64) sort
  // fastest one stage per barrier over many invocations, not in long chains on a few. (The width
  // as one expression: found in a loop, it cost 2-3 us a sort on the H200.)
  let busy = min(WG, WIDE_GROUPS);
  let wide = ${widths.reduceRight((inner, b) => `select(${inner}, ${b}u, (p >> ${b}u) >= busy)`, '1u')};
  for (var size = 2u; size <= p; size = size << 1u) {
    var j = size >> 1u;
    loop {
      if (j == 0u) { break; }
      ${widths.map((b) => `if (wide >= ${b}u && j >= ${2 ** (b - 1)}u) {
        bitonicRound${b}(p, size, j, lid);
        j = j >> ${b}u;
      } else `).join('')}{
        bitonicRound1(p, size, j, lid);
        j = j >> 1u;
      }
      workgroupBarrier();
    }
  }
}
fn nextPowerOfTwo(count: u32) -> u32 { var p = 1u; while (p < count) { p = p << 1u; } return p; }`;
}

/**
 * A workgroup inclusive scan of one value per invocation over the kernel's `array` (WG values of
 * `type`; default `scan`, u32 words), with `combine` (an expression of `a` and `b`); returns lid's
 * result and leaves every result in the array.
 *
 * With `subgroupWidth` (sums of u32 only; every subgroup that many invocations wide, formed of runs
 * of consecutive local indices as drivers form them for a 1-D workgroup), the scan runs within each
 * subgroup and then over the subgroups' sums: three barriers where the Hillis-Steele steps take two
 * each (16 at 256 invocations). The program then enables subgroups and its `main` sets `scanLane`
 * first ({@link scanLaneWgsl}). Each lane adds the value of its run's place `lane`, so the result is
 * in local-index order whichever way a driver numbers the lanes of a run. The one-workgroup steps of
 * radix-select (chooseDigit: a histogram's threshold bucket; the rank sort's starts) are chains of
 * such scans: see batched-top-k/webgpu/facts.ts `scanSubgroupWidth` for what it saved.
 */
export function inclusiveScanWgsl(
  name = 'inclusiveScan',
  combine = 'a + b',
  { array = 'scan', type = 'u32', subgroupWidth, workgroupSize }: { readonly array?: string; readonly type?: string; readonly subgroupWidth?: number; readonly workgroupSize?: number } = {},
): string {
  if (subgroupWidth !== undefined) {
    if (combine !== 'a + b' || type !== 'u32') throw new Error(`internal: a subgroup scan adds u32 values (asked: ${combine} of ${type})`);
    // The runs before this one: where a subgroup can hold every run's sum (WG <= width^2), each
    // subgroup scans them (lane r: run r) and the lane of this run hands its share on; else a loop.
    const runsBefore =
      workgroupSize !== undefined && workgroupSize / subgroupWidth <= subgroupWidth
        ? `let runTotal = select(0u, ${name}Totals[min(scanLane, ${workgroupSize / subgroupWidth - 1}u)], scanLane < ${workgroupSize / subgroupWidth}u);
  let before = subgroupShuffle(subgroupExclusiveAdd(runTotal), run);`
        : `var before = 0u;
  for (var r = 0u; r < run; r++) { before += ${name}Totals[r]; }`;
    return `// The sums of the subgroups' runs of ${subgroupWidth} places, in order.
var<workgroup> ${name}Totals: array<u32, WG / ${subgroupWidth}u>;
fn ${name}(value: u32, lid: u32) -> u32 {
  ${array}[lid] = value;
  workgroupBarrier();
  let run = lid / ${subgroupWidth}u;
  let place = run * ${subgroupWidth}u + scanLane;
  let within = subgroupInclusiveAdd(${array}[place]);
  if (scanLane == ${subgroupWidth - 1}u) { ${name}Totals[run] = within; }
  workgroupBarrier();
  ${runsBefore}
  ${array}[place] = before + within;
  workgroupBarrier();
  return ${array}[lid];
}`;
  }
  return `fn ${name}(value: ${type}, lid: u32) -> ${type} {
  ${array}[lid] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var a = ${type === 'u32' ? '0u' : `${type}()`};
    if (lid >= offset) { a = ${array}[lid - offset]; }
    workgroupBarrier();
    let b = ${array}[lid];
    ${array}[lid] = ${combine};
    workgroupBarrier();
  }
  return ${array}[lid];
}`;
}

/**
 * The private word the subgroup scan reads its lane from ({@link inclusiveScanWgsl}), and the
 * statement that sets it, first in `main` (where the program's builtins are in scope).
 */
export const scanLaneWgsl = { declaration: 'var<private> scanLane: u32;', set: '  scanLane = subgroupLane;' } as const;

/** How a kernel's {@link rankSortWgsl} is sized. */
export interface RankSortOptions {
  /** Most entries each invocation holds (ceil of the largest count over the workgroup size). */
  readonly perInvocation: number;
  /** The kernel's workgroup array of atomic<u32> the sort counts its buckets in (free during the sort). */
  readonly buckets: string;
  /** log2 of that array's length: the most buckets the sort spreads entries over. */
  readonly bucketBits: number;
  /** Most entries a bucket may hold; past it the entries are sorted by the bitonic network instead. */
  readonly bucketMax: number;
  /** Fewest entries the rank sort takes: fewer take the bitonic sort. */
  readonly minCount: number;
}

/**
 * A workgroup sort by buckets and ranks of entries [0, count), best first (the order of
 * `sortBefore`: key descending, then index ascending), in place, for `count` of at most WG x
 * perInvocation (workgroup-uniform). Needs `sortLoad`, `sortStore`, `sortBefore` and `bitonicSort`
 * ({@link bitonicSortWgsl}), an `inclusiveScan` ({@link inclusiveScanWgsl}) and the bucket array.
 *
 * Each entry is a 64-bit value v = (best key - key) * 2^ib + (index - least index), ib the bits of
 * the indices' span: v orders entries as `sortBefore` does, and its top bits below the span's name a
 * bucket (the count rounded up to a power of two, at most 2^bucketBits: an entry or two a bucket
 * on average). Entries are counted into their buckets, the counts scanned into the buckets'
 * starts, each entry stored among its bucket's members, and its place is its bucket's start plus
 * the members that rank before it. The network's
 * barriers are its cost (4096 entries, 22 of them; 128 entries, 28: one stage a barrier); this
 * takes about a dozen. Where keys crowd into a bucket past `bucketMax` (a few keys over a wide span,
 * heavy ties with indices far apart), the entries, still where they were, take the bitonic sort,
 * which needs them padded to a power of two as it always does.
 */
export function rankSortWgsl(options: RankSortOptions): string {
  const { perInvocation, buckets, bucketBits, bucketMax, minCount } = options;
  // Entry r of the invocation in named registers (e{r}, its bucket b{r}, slot and place p{r}): a
  // private array indexed in loops was kept in memory, not registers.
  const each = (body: (r: number) => string) => Array.from({ length: perInvocation }, (_, r) => `  if (${r}u * WG + lid < count) {\n${body(r)}\n  }`).join('\n');
  const registers = Array.from({ length: perInvocation }, (_, r) => `  var e${r} = vec2<u32>(0u, 0u);\n  var b${r} = 0u;\n  var p${r} = 0u;`).join('\n');
  return `const RANK_BITS: u32 = ${bucketBits}u;
const RANK_BUCKET_MAX: u32 = ${bucketMax}u;
// [0] least key, [1] best key, [2] least index, [3] largest index, [4] a bucket past RANK_BUCKET_MAX.
var<workgroup> rankBounds: array<atomic<u32>, 5>;
// Best key, least index, index bits, shift of v to its bucket.
var<workgroup> rankShape: vec4<u32>;
// 1 where a bucket holds more than RANK_BUCKET_MAX entries (the network sorts instead).
var<workgroup> rankTooFull: u32;
fn rankSpanBits(span: u32) -> u32 { return select(firstLeadingBit(span) + 1u, 0u, span == 0u); }
fn rankBucket(entry: vec2<u32>, shape: vec4<u32>) -> u32 {
  let high = shape.x - entry.x;
  let low = entry.y - shape.y;
  if (shape.w >= shape.z) { return high >> (shape.w - shape.z); }
  return (high << (shape.z - shape.w)) | (low >> shape.w);
}
fn rankSort(count: u32, lid: u32) {
  if (count < ${Math.max(2, minCount)}u) {
    bitonicSort(count, lid);
    return;
  }
  // Buckets: the count rounded up to a power of two, at most 2^RANK_BITS (4096 entries: two a bucket).
  let bits = min(RANK_BITS, firstLeadingBit(count - 1u) + 1u);
  let bucketCount = 1u << bits;
  if (lid < 5u) { atomicStore(&rankBounds[lid], select(0u, 0xffffffffu, lid == 0u || lid == 2u)); }
  for (var b = lid; b < bucketCount; b += WG) { atomicStore(&${buckets}[b], 0u); }
${registers}
  var keyLow = 0xffffffffu;
  var keyHigh = 0u;
  var indexLow = 0xffffffffu;
  var indexHigh = 0u;
${each((r) => `    e${r} = sortLoad(${r}u * WG + lid);
    keyLow = min(keyLow, e${r}.x);
    keyHigh = max(keyHigh, e${r}.x);
    indexLow = min(indexLow, e${r}.y);
    indexHigh = max(indexHigh, e${r}.y);`)}
  workgroupBarrier();
  if (lid < count) {
    atomicMin(&rankBounds[0], keyLow);
    atomicMax(&rankBounds[1], keyHigh);
    atomicMin(&rankBounds[2], indexLow);
    atomicMax(&rankBounds[3], indexHigh);
  }
  workgroupBarrier();
  if (lid == 0u) {
    let best = atomicLoad(&rankBounds[1]);
    let least = atomicLoad(&rankBounds[2]);
    let indexBits = rankSpanBits(atomicLoad(&rankBounds[3]) - least);
    let total = rankSpanBits(best - atomicLoad(&rankBounds[0])) + indexBits;
    rankShape = vec4<u32>(best, least, indexBits, select(total - bits, 0u, total <= bits));
  }
  let shape = workgroupUniformLoad(&rankShape);
${each((r) => `    b${r} = rankBucket(e${r}, shape);
    p${r} = atomicAdd(&${buckets}[b${r}], 1u);`)}
  workgroupBarrier();
  // The counts scanned into starts (each invocation a run of buckets), and whether one is too full.
  let per = (bucketCount + WG - 1u) / WG;
  let lo = min(lid * per, bucketCount);
  let hi = min(lo + per, bucketCount);
  var sum = 0u;
  var most = 0u;
  for (var b = lo; b < hi; b++) {
    let c = atomicLoad(&${buckets}[b]);
    sum += c;
    most = max(most, c);
  }
  if (most > RANK_BUCKET_MAX) { atomicStore(&rankBounds[4], 1u); }
  var running = inclusiveScan(sum, lid) - sum;
  for (var b = lo; b < hi; b++) {
    let c = atomicLoad(&${buckets}[b]);
    atomicStore(&${buckets}[b], running);
    running += c;
  }
  workgroupBarrier();
  if (lid == 0u) { rankTooFull = atomicLoad(&rankBounds[4]); }
  if (workgroupUniformLoad(&rankTooFull) != 0u) {
    bitonicSort(count, lid);
    return;
  }
  // Each entry among its bucket's members (p: its place there, then its bucket's start), then at
  // its bucket's start plus the members that rank before it (p: its place in the order).
${each((r) => `    let first = atomicLoad(&${buckets}[b${r}]);
    sortStore(first + p${r}, e${r});
    p${r} = first;`)}
  workgroupBarrier();
${each((r) => `    let end = select(count, atomicLoad(&${buckets}[min(b${r} + 1u, bucketCount - 1u)]), b${r} + 1u < bucketCount);
    var place = p${r};
    for (var m = p${r}; m < end; m++) { place += select(0u, 1u, sortBefore(sortLoad(m), e${r})); }
    p${r} = place;`)}
  workgroupBarrier();
${each((r) => `    sortStore(p${r}, e${r});`)}
  workgroupBarrier();
}`;
}
