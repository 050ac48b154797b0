/*
 * The radix sort's WGSL programs over any source of segments (the sort's input, or top-k's
 * selection), twins of cpu/radix.ts: the same launches, tiles, groups and slots. The caller's WGSL
 * (`adapter`) defines where items come from and go:
 *
 * - `fn radixSegment(i: u32) -> vec4<u32>`: (start, size, order mask, go) of segment i, go 0 when
 *   the radix kernels have nothing to do for it (called by one invocation);
 * - `fn sourceKey(start: u32, j: u32) -> u32` and `fn sourceValue(start: u32, j: u32) -> u32`: pass 0's
 *   key bits and value of item j;
 * - `fn radixOrderedKey(bits: u32) -> u32`: the ordered key of key bits;
 * - `fn writeOut(start: u32, at: u32, bits: u32, value: u32)`: the last pass's write;
 *
 * and binds `temp` (u32) with the uniforms {@link radixUniforms}.
 *
 * One LSD pass over 8 bits of the sort key is three launches, reduce-then-scan (no workgroup waits on
 * another, so it is safe on every WebGPU device): the histogram counts each tile's digits; the scan
 * turns them, digit by digit (a digit's tile counts are adjacent: problem.ts), into the items of
 * that digit in earlier tiles, and each digit's total; the scatter ranks its tile in workgroup memory
 * (rank tiles of `rankItems`, looping when a tile is longer): four stable 2-bit splits, each one
 * workgroup scan of packed counters, so the tile ends up stably sorted by the digit, and then writes
 * item p of digit d to (smaller digits' totals + digit d in earlier tiles + p - first p of digit d).
 * A pass whose digit is the same for every item of the segment (the totals say so) copies instead.
 */

/** The kernels of the radix sort. */
export type RadixKernel = 'histogram' | 'scan' | 'scatter';

/** What the radix programs are specialized on. */
export interface RadixProgramOptions {
  /** Values move with the keys. */
  readonly hasValues: boolean;
  readonly workgroupSize: number;
  /**
   * Items the scatter ranks at once in workgroup memory (8 bytes each with values, 4 without, plus
   * 4 KiB at most): the caller's single-tile capacity, which fits the same memory. Rounded down to a
   * multiple of the workgroup size, at most 16 items per invocation.
   */
  readonly rankItems: number;
}

/** Uniform fields the radix programs read (beyond the adapter's). */
export function radixUniforms(hasValues: boolean): string[] {
  return ['sortTiles', 'sortGroupSegments', 'launchPass', 'sortCountsAt', 'sortKeys0At', 'sortKeys1At', ...(hasValues ? ['sortValues0At', 'sortValues1At'] : [])];
}

/** Items per invocation in the scatter's ranking. */
export function radixRankItemsPerInvocation(options: Pick<RadixProgramOptions, 'workgroupSize' | 'rankItems'>): number {
  return Math.max(1, Math.min(16, Math.floor(options.rankItems / options.workgroupSize)));
}

/** WGSL the radix programs share, after the adapter's. */
function common(kernel: RadixKernel): string {
  const parts = [
    `var<workgroup> enteredRadix: vec4<u32>;
fn enterRadix(i: u32, lid: u32) -> vec4<u32> {
  if (lid == 0u) { enteredRadix = radixSegment(i); }
  return workgroupUniformLoad(&enteredRadix);
}`,
    `// Tile t of a segment of size items: [lo, hi).
fn tileRange(size: u32, t: u32) -> vec2<u32> {
  let chunk = (size + u.sortTiles - 1u) / u.sortTiles;
  let lo = min(size, t * chunk);
  return vec2<u32>(lo, min(size, lo + chunk));
}
// Segment g of the group's counts: 256 digits x tiles (digit-major), then 256 digit totals.
fn countsBase(g: u32) -> u32 { return u.sortCountsAt + g * (u.sortTiles + 1u) * 256u; }`,
  ];
  if (kernel !== 'scan') {
    parts.push(`// Key bits of item j in this digit's pass: from the source (pass 0) or the buffer the previous pass wrote.
fn bitsAt(digit: u32, start: u32, j: u32) -> u32 {
  if (digit == 0u) { return sourceKey(start, j); }
  return temp[select(u.sortKeys1At, u.sortKeys0At, (digit & 1u) == 1u) + start + j];
}`);
  }
  if (kernel !== 'histogram') {
    parts.push(`// A workgroup inclusive scan of packed counters (Hillis-Steele); the total is left in pairs[WG - 1].
fn scanPairs(value: vec2<u32>, lid: u32) -> vec2<u32> {
  pairs[lid] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var a = vec2<u32>(0u, 0u);
    if (lid >= offset) { a = pairs[lid - offset]; }
    workgroupBarrier();
    pairs[lid] = pairs[lid] + a;
    workgroupBarrier();
  }
  return pairs[lid];
}`);
  }
  return parts.join('\n');
}

const histogramMain = `
  let inGroup = workgroupIndex / u.sortTiles;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  for (var d = lid; d < 256u; d += WG) { atomicStore(&histogram[d], 0u); }
  workgroupBarrier();
  let tile = workgroupIndex % u.sortTiles;
  let range = tileRange(s.y, tile);
  let digit = u.launchPass & 3u;
  let shift = 8u * digit;
  for (var j = range.x + lid; j < range.y; j += WG) { atomicAdd(&histogram[((radixOrderedKey(bitsAt(digit, s.x, j)) ^ s.z) >> shift) & 255u], 1u); }
  workgroupBarrier();
  let at = countsBase(inGroup) + tile;
  for (var d = lid; d < 256u; d += WG) { temp[at + d * u.sortTiles] = atomicLoad(&histogram[d]); }`;

// problem.ts radixScanShape, in WGSL: threads per digit, digits per workgroup.
const scanMain = `
  var threads = 1u;
  while (threads * 16u < u.sortTiles && threads < WG) { threads = threads << 1u; }
  threads = min(threads, WG);
  let digits = max(1u, min(256u, WG / threads));
  let perSegment = (256u + digits - 1u) / digits;
  let inGroup = workgroupIndex / perSegment;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  let digit = (workgroupIndex % perSegment) * digits + lid / threads;
  let live = lid / threads < digits && digit < 256u;
  let lane = lid % threads;
  let per = (u.sortTiles + threads - 1u) / threads;
  let first = min(u.sortTiles, lane * per);
  let end = min(u.sortTiles, first + per);
  let base = countsBase(inGroup);
  let at = base + digit * u.sortTiles;
  var sum = 0u;
  if (live) { for (var t = first; t < end; t++) { sum += temp[at + t]; } }
  // An inclusive scan over the lanes of each digit (segments of \`threads\` invocations).
  pairs[lid] = vec2<u32>(sum, 0u);
  workgroupBarrier();
  for (var offset = 1u; offset < threads; offset = offset << 1u) {
    var a = 0u;
    if (lane >= offset) { a = pairs[lid - offset].x; }
    workgroupBarrier();
    pairs[lid].x = pairs[lid].x + a;
    workgroupBarrier();
  }
  var running = pairs[lid].x - sum;
  if (live) {
    for (var t = first; t < end; t++) { let count = temp[at + t]; temp[at + t] = running; running += count; }
    if (lane == threads - 1u) { temp[base + 256u * u.sortTiles + digit] = running; }
  }`;

function scatterMain(options: RadixProgramOptions): string {
  const { hasValues } = options;
  const perThread = Math.ceil(256 / options.workgroupSize);
  return `
  let inGroup = workgroupIndex / u.sortTiles;
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + inGroup, lid);
  if (s.w == 0u) { return; }
  let tile = workgroupIndex % u.sortTiles;
  let range = tileRange(s.y, tile);
  if (range.x >= range.y) { return; }
  let start = s.x;
  let mask = s.z;
  let digitPass = u.launchPass & 3u;
  let shift = 8u * digitPass;
  let last = digitPass == 3u;
  let toKeys = select(u.sortKeys1At, u.sortKeys0At, (digitPass & 1u) == 0u);
  ${hasValues ? `let fromValues = select(u.sortValues1At, u.sortValues0At, (digitPass & 1u) == 1u);
  let toValues = select(u.sortValues1At, u.sortValues0At, (digitPass & 1u) == 0u);` : ''}
  // Where digit d's first item of this tile goes: the totals of smaller digits (a scan over the 256
  // totals, ${perThread} per invocation) plus digit d's items in earlier tiles.
  let base = countsBase(inGroup);
  let totalsAt = base + 256u * u.sortTiles;
  var sum = 0u;
  var everyItem = 0u;
  for (var c = 0u; c < ${perThread}u; c++) {
    let d = lid * ${perThread}u + c;
    if (d < 256u) { let total = temp[totalsAt + d]; sum += total; everyItem += select(0u, 1u, total == s.y); }
  }
  var running = scanPairs(vec2<u32>(sum, everyItem), lid).x - sum;
  // One digit holds every item of the segment: the pass keeps the order (a copy).
  let constant = workgroupUniformLoad(&pairs[WG - 1u]).y != 0u;
  for (var c = 0u; c < ${perThread}u; c++) {
    let d = lid * ${perThread}u + c;
    if (d < 256u) { offsets[d] = running + temp[base + d * u.sortTiles + tile]; running += temp[totalsAt + d]; }
  }
  workgroupBarrier();
  if (constant) {
    for (var j = range.x + lid; j < range.y; j += WG) {
      let bits = bitsAt(digitPass, start, j);
      ${hasValues ? `var value = 0u;
      if (digitPass == 0u) { value = sourceValue(start, j); } else { value = temp[fromValues + start + j]; }` : 'let value = 0u;'}
      if (last) { writeOut(start, j, bits, value); } else { temp[toKeys + start + j] = bits;${hasValues ? ' temp[toValues + start + j] = value;' : ''} }
    }
    return;
  }
  for (var sub = range.x; sub < range.y; sub += RANK) {
    let n = min(RANK, range.y - sub);
    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) { rankKeys[rankAt(p)] = bitsAt(digitPass, start, sub + p);${hasValues ? ' rankIndex[rankAt(p)] = p;' : ''} }
    }
    workgroupBarrier();
    // Four stable splits by 2 bits of the digit, least significant first. Invocation lid owns rank
    // places [lid * ITEMS, (lid + 1) * ITEMS); places from n on are padding, in the last bucket.
    for (var split = 0u; split < 8u; split += 2u) {
      let splitShift = shift + split;
      var keys: array<u32, ITEMS>;
      ${hasValues ? 'var index: array<u32, ITEMS>;' : ''}
      var place: array<u32, ITEMS>;
      // Bucket b's count in 16 bits: word b / 2, bits 16 * (b % 2).
      var counts = vec2<u32>(0u, 0u);
      for (var i = 0u; i < ITEMS; i++) {
        let p = lid * ITEMS + i;
        let key = rankKeys[rankAt(p)];
        keys[i] = key;
        ${hasValues ? 'index[i] = rankIndex[rankAt(p)];' : ''}
        var b = 3u;
        if (p < n) { b = ((radixOrderedKey(key) ^ mask) >> splitShift) & 3u; }
        let field = (b & 1u) * 16u;
        let word = counts[b >> 1u];
        place[i] = b | (((word >> field) & 0xffffu) << 2u);
        counts[b >> 1u] = word + (1u << field);
      }
      let before = scanPairs(counts, lid) - counts;
      let total = pairs[WG - 1u];
      let t0 = total.x & 0xffffu;
      let t1 = t0 + (total.x >> 16u);
      let bucketStart = vec4<u32>(0u, t0, t1, t1 + (total.y & 0xffffu));
      workgroupBarrier();
      for (var i = 0u; i < ITEMS; i++) {
        let b = place[i] & 3u;
        let to = bucketStart[b] + ((before[b >> 1u] >> ((b & 1u) * 16u)) & 0xffffu) + (place[i] >> 2u);
        rankKeys[rankAt(to)] = keys[i];
        ${hasValues ? 'rankIndex[rankAt(to)] = index[i];' : ''}
      }
      workgroupBarrier();
    }
    // The rank tile is stably sorted by the digit: place p of digit d goes to offsets[d] + p - (d's first place).
    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let d = digitOf(rankKeys[rankAt(p)], mask, shift);
        if (p == 0u || digitOf(rankKeys[rankAt(p - 1u)], mask, shift) != d) { pairs[d >> 1u][d & 1u] = p; }
      }
    }
    workgroupBarrier();
    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let bits = rankKeys[rankAt(p)];
        let d = digitOf(bits, mask, shift);
        let to = offsets[d] + p - pairs[d >> 1u][d & 1u];
        ${hasValues ? `let j = sub + rankIndex[rankAt(p)];
        var value = 0u;
        if (digitPass == 0u) { value = sourceValue(start, j); } else { value = temp[fromValues + start + j]; }` : 'let value = 0u;'}
        if (last) { writeOut(start, to, bits, value); } else { temp[toKeys + start + to] = bits;${hasValues ? ' temp[toValues + start + to] = value;' : ''} }
      }
    }
    workgroupBarrier();
    for (var i = 0u; i < ITEMS; i++) {
      let p = i * WG + lid;
      if (p < n) {
        let d = digitOf(rankKeys[rankAt(p)], mask, shift);
        if (p + 1u == n || digitOf(rankKeys[rankAt(p + 1u)], mask, shift) != d) { offsets[d] += p + 1u - pairs[d >> 1u][d & 1u]; }
      }
    }
    workgroupBarrier();
  }`;
}

/** A radix program's own declarations and entry-point body (the adapter's WGSL goes before). */
export function radixProgramParts(kernel: RadixKernel, options: RadixProgramOptions): { declarations: string; main: string } {
  const shared = common(kernel);
  const pairs = `var<workgroup> pairs: array<vec2<u32>, ${Math.max(options.workgroupSize, 128)}>;`;
  switch (kernel) {
    case 'histogram':
      return { declarations: `var<workgroup> histogram: array<atomic<u32>, 256>;\n${shared}`, main: histogramMain };
    case 'scan':
      return { declarations: `${pairs}\n${shared}`, main: scanMain };
    case 'scatter': {
      const items = radixRankItemsPerInvocation(options);
      const rank = items * options.workgroupSize;
      // One padding word per 32 keeps the invocations' runs of ITEMS places in distinct banks.
      const padded = rank + Math.ceil(rank / 32);
      const declarations = `const ITEMS = ${items}u;
const RANK = ${rank}u;
fn rankAt(p: u32) -> u32 { return p + (p >> 5u); }
var<workgroup> rankKeys: array<u32, ${padded}>;
${options.hasValues ? `var<workgroup> rankIndex: array<u32, ${padded}>;\n` : ''}// Where digit d's next item goes in the segment.
var<workgroup> offsets: array<u32, 256>;
// The split scans; then, as 256 words, each digit's first rank place.
${pairs}
fn digitOf(bits: u32, mask: u32, shift: u32) -> u32 { return ((radixOrderedKey(bits) ^ mask) >> shift) & 255u; }
${shared}`;
      return { declarations, main: scatterMain(options) };
    }
  }
}
