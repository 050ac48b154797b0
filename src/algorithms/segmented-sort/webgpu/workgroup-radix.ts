/*
 * 'workgroup-radix' in WGSL, the twin of cpu/workgroup-radix.ts: one workgroup sorts one segment
 * with an LSD radix sort over the four 8-bit digits of the sort key, in a single launch (CUB's
 * segmented sort gives a medium or large segment one block the same way). The caller's WGSL
 * (programs.ts) defines `enterWorkgroupRadix(i) -> vec4<u32>` (start, size, order mask, go),
 * `sourceKey`, `sourceValue`, `radixOrderedKey` and `writeOut`, and binds `temp` with the uniforms
 * `sortKeys0At`, `sortKeys1At` (and `sortValues0At`, `sortValues1At` with values).
 *
 * One read of the segment counts all four digits (4 x 256 workgroup counters). A digit every key
 * shares is skipped: the pass would keep the order. Each other pass scans its digit's counts into
 * each digit's first place, then goes through the segment tile by tile in index order (TILE keys,
 * ITEMS per invocation, loads coalesced): it sorts the tile stably by the digit in workgroup memory
 * with two 4-bit splits (each invocation counts its run of ITEMS keys in packed 16-bit counters, the
 * counters are scanned in digit-major order: CUB's BlockRadixRank; they live in the keys' workgroup
 * array while the keys are in registers, which leaves room for twice the tile), then writes place p of digit d to
 * (digit d's next place in the segment + p - the tile's first place of d), so consecutive keys of a
 * digit land in consecutive words. The k-th pass that runs writes buffer k % 2, the last the outputs;
 * when none runs the keys are copied to the outputs.
 */

/** What the program is specialized on. */
export interface WorkgroupRadixOptions {
  readonly hasValues: boolean;
  readonly workgroupSize: number;
  /** Items each invocation ranks per tile (policy.ts `workgroupRadixItemsPerInvocation`). */
  readonly itemsPerInvocation: number;
}

/** Uniform fields the program reads beyond the segment's. */
export function workgroupRadixUniforms(hasValues: boolean): string[] {
  return ['sortKeys0At', 'sortKeys1At', ...(hasValues ? ['sortValues0At', 'sortValues1At'] : [])];
}

/** The program's declarations and entry-point body (problem.ts `workgroupRadixBytes` counts the arrays). */
export function workgroupRadixParts(options: WorkgroupRadixOptions): { declarations: string; main: string } {
  const { hasValues, workgroupSize: wg, itemsPerInvocation: items } = options;
  const tile = wg * items;
  const padded = (n: number) => n + Math.ceil(n / 32);
  const ifValues = (text: string, otherwise = '') => (hasValues ? text : otherwise);
  const declarations = `const ITEMS = ${items}u;
const TILE = ${tile}u;
// Rank-tile places and counter words, one padding word per 32 (blocked reads hit distinct banks).
fn rankAt(p: u32) -> u32 { return p + (p >> 5u); }
fn counterAt(w: u32) -> u32 { return w + (w >> 5u); }
// The rank tile's keys; during a split's count and scan, while every key is in registers, the
// counters: invocation t's count of 4-bit digits b and b + 8 (16 bits each) at word (b % 8) * WG + t.
var<workgroup> rankKeys: array<u32, ${Math.max(padded(tile), padded(8 * wg))}>;
${ifValues(`var<workgroup> rankValues: array<u32, ${padded(tile)}>;\n`)}
// Digit d of pass k counted at k * 256 + d.
var<workgroup> histograms: array<atomic<u32>, 1024>;
// Where digit d's next key goes in the segment, two copies (tile by tile in turn).
var<workgroup> digitNext: array<u32, 512>;
// Digit d's first place in the sorted rank tile.
var<workgroup> tileFirst: array<u32, 256>;
var<workgroup> scanBuffers: array<u32, ${2 * wg}>;
var<workgroup> enteredSegment: vec4<u32>;
var<workgroup> constantBits: atomic<u32>;
var<workgroup> constantDigits: u32;

// An exclusive scan over the workgroup (Hillis-Steele, two buffers: one barrier a step): (exclusive, total).
fn scanWorkgroup(value: u32, lid: u32) -> vec2<u32> {
  scanBuffers[lid] = value;
  workgroupBarrier();
  var readBase = 0u;
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var v = scanBuffers[readBase + lid];
    if (lid >= offset) { v += scanBuffers[readBase + lid - offset]; }
    readBase = WG - readBase;
    scanBuffers[readBase + lid] = v;
    workgroupBarrier();
  }
  let result = vec2<u32>(scanBuffers[readBase + lid] - value, scanBuffers[readBase + WG - 1u]);
  workgroupBarrier();
  return result;
}

fn digitOf(bits: u32, mask: u32, shift: u32) -> u32 { return ((radixOrderedKey(bits) ^ mask) >> shift) & 255u; }

// Sorts rank places [0, n) stably by the 4 bits of the sort key at splitShift.
fn splitTile(n: u32, mask: u32, splitShift: u32, lid: u32) {
  var keys: array<u32, ITEMS>;
  ${ifValues('var values: array<u32, ITEMS>;')}
  for (var i = 0u; i < ITEMS; i++) {
    let p = lid * ITEMS + i;
    if (p < n) {
      keys[i] = rankKeys[rankAt(p)];
      ${ifValues('values[i] = rankValues[rankAt(p)];')}
    }
  }
  // Every key is in registers: rankKeys holds the counters until the keys go back.
  workgroupBarrier();
  // Bits 0..3: the 4-bit digit; from bit 4: the key's place among this invocation's keys of that digit.
  var local: array<u32, ITEMS>;
  for (var l = 0u; l < 8u; l++) { rankKeys[counterAt(l * WG + lid)] = 0u; }
  for (var i = 0u; i < ITEMS; i++) {
    let p = lid * ITEMS + i;
    if (p < n) {
      let b = ((radixOrderedKey(keys[i]) ^ mask) >> splitShift) & 15u;
      let at = counterAt((b & 7u) * WG + lid);
      let field = (b >> 3u) * 16u;
      let word = rankKeys[at];
      local[i] = b | (((word >> field) & 0xffffu) << 4u);
      rankKeys[at] = word + (1u << field);
    }
  }
  workgroupBarrier();
  // The 8 * WG counter words in order, 8 to an invocation: low halves count digits 0..7, high halves 8..15.
  var sum = 0u;
  for (var c = 0u; c < 8u; c++) { sum += rankKeys[counterAt(lid * 8u + c)]; }
  let scanned = scanWorkgroup(sum, lid);
  var running = scanned.x;
  for (var c = 0u; c < 8u; c++) {
    let at = counterAt(lid * 8u + c);
    let count = rankKeys[at];
    rankKeys[at] = running;
    running += count;
  }
  // Digits 8..15 come after every key of digits 0..7.
  let lowTotal = (scanned.y & 0xffffu) << 16u;
  workgroupBarrier();
  for (var i = 0u; i < ITEMS; i++) {
    let p = lid * ITEMS + i;
    if (p < n) {
      let b = local[i] & 15u;
      let word = rankKeys[counterAt((b & 7u) * WG + lid)] + lowTotal;
      local[i] = ((word >> ((b >> 3u) * 16u)) & 0xffffu) + (local[i] >> 4u);
    }
  }
  workgroupBarrier();
  for (var i = 0u; i < ITEMS; i++) {
    let p = lid * ITEMS + i;
    if (p < n) {
      rankKeys[rankAt(local[i])] = keys[i];
      ${ifValues('rankValues[rankAt(local[i])] = values[i];')}
    }
  }
  workgroupBarrier();
}

// Key bits and value of item j from the inputs (source 0) or buffer source - 1.
fn keyFrom(source: u32, start: u32, j: u32) -> u32 {
  if (source == 0u) { return sourceKey(start, j); }
  return temp[select(u.sortKeys1At, u.sortKeys0At, source == 1u) + start + j];
}
${ifValues(`fn valueFrom(source: u32, start: u32, j: u32) -> u32 {
  if (source == 0u) { return sourceValue(start, j); }
  return temp[select(u.sortValues1At, u.sortValues0At, source == 1u) + start + j];
}`)}`;

  const perThread = Math.ceil(256 / wg);
  const main = `
  if (lid == 0u) { enteredSegment = enterWorkgroupRadix(workgroupIndex); }
  let s = workgroupUniformLoad(&enteredSegment);
  if (s.w == 0u || s.y == 0u) { return; }
  let start = s.x;
  let size = s.y;
  let mask = s.z;
  for (var d = lid; d < 1024u; d += WG) { atomicStore(&histograms[d], 0u); }
  if (lid == 0u) { atomicStore(&constantBits, 0u); }
  workgroupBarrier();
  for (var j = lid; j < size; j += WG) {
    let key = radixOrderedKey(sourceKey(start, j)) ^ mask;
    atomicAdd(&histograms[key & 255u], 1u);
    atomicAdd(&histograms[256u + ((key >> 8u) & 255u)], 1u);
    atomicAdd(&histograms[512u + ((key >> 16u) & 255u)], 1u);
    atomicAdd(&histograms[768u + (key >> 24u)], 1u);
  }
  workgroupBarrier();
  for (var d = lid; d < 1024u; d += WG) { if (atomicLoad(&histograms[d]) == size) { atomicOr(&constantBits, 1u << (d >> 8u)); } }
  workgroupBarrier();
  if (lid == 0u) { constantDigits = atomicLoad(&constantBits); }
  let constants = workgroupUniformLoad(&constantDigits);
  if (constants == 15u) {
    for (var j = lid; j < size; j += WG) { writeOut(start, j, sourceKey(start, j), ${ifValues('sourceValue(start, j)', '0u')}); }
    return;
  }
  var lastPass = 0u;
  for (var digit = 0u; digit < 4u; digit++) { if (((constants >> digit) & 1u) == 0u) { lastPass = digit; } }
  // 0: the inputs; 1 + b: buffer b.
  var source = 0u;
  var passes = 0u;
  for (var digit = 0u; digit < 4u; digit++) {
    if (((constants >> digit) & 1u) != 0u) { continue; }
    let last = digit == lastPass;
    let to = passes & 1u;
    let toKeys = select(u.sortKeys1At, u.sortKeys0At, to == 0u);
    ${ifValues('let toValues = select(u.sortValues1At, u.sortValues0At, to == 0u);')}
    let shift = 8u * digit;
    // Each digit's first place: the counts of smaller digits (${perThread} per invocation).
    var sum = 0u;
    for (var c = 0u; c < ${perThread}u; c++) {
      let d = lid * ${perThread}u + c;
      if (d < 256u) { sum += atomicLoad(&histograms[digit * 256u + d]); }
    }
    var running = scanWorkgroup(sum, lid).x;
    for (var c = 0u; c < ${perThread}u; c++) {
      let d = lid * ${perThread}u + c;
      if (d < 256u) { digitNext[d] = running; running += atomicLoad(&histograms[digit * 256u + d]); }
    }
    workgroupBarrier();
    var copy = 0u;
    for (var sub = 0u; sub < size; sub += TILE) {
      let n = min(TILE, size - sub);
      for (var i = 0u; i < ITEMS; i++) {
        let p = i * WG + lid;
        if (p < n) {
          rankKeys[rankAt(p)] = keyFrom(source, start, sub + p);
          ${ifValues('rankValues[rankAt(p)] = valueFrom(source, start, sub + p);')}
        }
      }
      workgroupBarrier();
      splitTile(n, mask, shift, lid);
      splitTile(n, mask, shift + 4u, lid);
      let now = copy * 256u;
      let then = 256u - now;
      for (var d = lid; d < 256u; d += WG) { digitNext[then + d] = digitNext[now + d]; }
      for (var i = 0u; i < ITEMS; i++) {
        let p = i * WG + lid;
        if (p < n) {
          let d = digitOf(rankKeys[rankAt(p)], mask, shift);
          if (p == 0u || digitOf(rankKeys[rankAt(p - 1u)], mask, shift) != d) { tileFirst[d] = p; }
        }
      }
      workgroupBarrier();
      for (var i = 0u; i < ITEMS; i++) {
        let p = i * WG + lid;
        if (p < n) {
          let bits = rankKeys[rankAt(p)];
          ${ifValues('let value = rankValues[rankAt(p)];', 'let value = 0u;')}
          let d = digitOf(bits, mask, shift);
          let at = digitNext[now + d] + p - tileFirst[d];
          if (last) { writeOut(start, at, bits, value); } else { temp[toKeys + start + at] = bits;${ifValues(' temp[toValues + start + at] = value;')} }
          if (p + 1u == n || digitOf(rankKeys[rankAt(p + 1u)], mask, shift) != d) { digitNext[then + d] = at + 1u; }
        }
      }
      workgroupBarrier();
      copy = 1u - copy;
    }
    source = 1u + to;
    passes++;
  }`;
  return { declarations, main };
}
