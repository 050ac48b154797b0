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
 */

/** The kernels of the radix sort. */
export type RadixKernel = 'histogram' | 'scan' | 'scatter';

/** Uniform fields the radix programs read (beyond the adapter's). */
export function radixUniforms(hasValues: boolean): string[] {
  return ['sortTiles', 'sortGroupSegments', 'launchPass', 'sortCountsAt', 'sortKeys0At', 'sortKeys1At', ...(hasValues ? ['sortValues0At', 'sortValues1At'] : [])];
}

/** WGSL the radix programs share, after the adapter's. */
function common(kernel: RadixKernel, hasValues: boolean): string {
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
}`,
  ];
  if (kernel !== 'scan') {
    parts.push(`// Key bits of item j in this digit's pass: from the source (pass 0) or the buffer the previous pass wrote.
fn bitsAt(digit: u32, start: u32, j: u32) -> u32 {
  if (digit == 0u) { return sourceKey(start, j); }
  return temp[select(u.sortKeys1At, u.sortKeys0At, (digit & 1u) == 1u) + start + j];
}`);
  }
  if (kernel === 'scatter' && !hasValues) parts.push('fn sourceValue(start: u32, j: u32) -> u32 { return 0u; }');
  return parts.join('\n');
}

const histogramMain = `
  let segment = (u.launchPass >> 2u) * u.sortGroupSegments + workgroupIndex / u.sortTiles;
  let s = enterRadix(segment, lid);
  if (s.w == 0u) { return; }
  for (var d = lid; d < 256u; d += WG) { atomicStore(&histogram[d], 0u); }
  workgroupBarrier();
  let range = tileRange(s.y, workgroupIndex % u.sortTiles);
  let digit = u.launchPass & 3u;
  let shift = 8u * digit;
  for (var j = range.x + lid; j < range.y; j += WG) { atomicAdd(&histogram[((radixOrderedKey(bitsAt(digit, s.x, j)) ^ s.z) >> shift) & 255u], 1u); }
  workgroupBarrier();
  let at = u.sortCountsAt + workgroupIndex * 256u;
  for (var d = lid; d < 256u; d += WG) { temp[at + d] = atomicLoad(&histogram[d]); }`;

const scanMain = `
  let s = enterRadix((u.launchPass >> 2u) * u.sortGroupSegments + workgroupIndex, lid);
  if (s.w == 0u) { return; }
  let base = u.sortCountsAt + workgroupIndex * u.sortTiles * 256u;
  for (var d = lid; d < 256u; d += WG) {
    var total = 0u;
    for (var t = 0u; t < u.sortTiles; t++) { total += temp[base + t * 256u + d]; }
    totals[d] = total;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var offset = 0u;
    for (var d = 0u; d < 256u; d++) { let count = totals[d]; totals[d] = offset; offset += count; }
  }
  workgroupBarrier();
  for (var d = lid; d < 256u; d += WG) {
    var running = totals[d];
    for (var t = 0u; t < u.sortTiles; t++) {
      let at = base + t * 256u + d;
      let count = temp[at];
      temp[at] = running;
      running += count;
    }
  }`;

function scatterMain(hasValues: boolean): string {
  return `
  let segment = (u.launchPass >> 2u) * u.sortGroupSegments + workgroupIndex / u.sortTiles;
  let s = enterRadix(segment, lid);
  if (s.w == 0u) { return; }
  let start = s.x;
  let at = u.sortCountsAt + workgroupIndex * 256u;
  for (var d = lid; d < 256u; d += WG) { next[d] = temp[at + d]; }
  let range = tileRange(s.y, workgroupIndex % u.sortTiles);
  let digitPass = u.launchPass & 3u;
  let shift = 8u * digitPass;
  let last = digitPass == 3u;
  let toKeys = select(u.sortKeys1At, u.sortKeys0At, (digitPass & 1u) == 0u);
  ${hasValues ? `let fromValues = select(u.sortValues1At, u.sortValues0At, (digitPass & 1u) == 1u);
  let toValues = select(u.sortValues1At, u.sortValues0At, (digitPass & 1u) == 0u);` : ''}
  // Rounds of WG items in index order; an item's place is its digit's next place plus the number of
  // earlier items of the round with the same digit, so the scatter is stable.
  for (var round = range.x; round < range.y; round += WG) {
    workgroupBarrier();
    let j = round + lid;
    let live = j < range.y;
    var bits = 0u;
    var value = 0u;
    var digit = 256u;
    if (live) {
      bits = bitsAt(digitPass, start, j);
      ${hasValues ? 'if (digitPass == 0u) { value = sourceValue(start, j); } else { value = temp[fromValues + start + j]; }' : ''}
      digit = ((radixOrderedKey(bits) ^ s.z) >> shift) & 255u;
    }
    digits[lid] = digit;
    workgroupBarrier();
    var rank = 0u;
    var lastOfDigit = true;
    var to = 0u;
    if (live) {
      for (var m = 0u; m < WG; m++) {
        if (digits[m] == digit) {
          if (m < lid) { rank += 1u; } else if (m > lid) { lastOfDigit = false; }
        }
      }
      to = next[digit] + rank;
    }
    workgroupBarrier();
    if (live) {
      if (lastOfDigit) { next[digit] = to + 1u; }
      if (last) { writeOut(start, to, bits, value); } else { temp[toKeys + start + to] = bits;${hasValues ? ' temp[toValues + start + to] = value;' : ''} }
    }
  }`;
}

/** A radix program's own declarations and entry-point body (the adapter's WGSL goes before). */
export function radixProgramParts(kernel: RadixKernel, hasValues: boolean): { declarations: string; main: string } {
  const shared = common(kernel, hasValues);
  switch (kernel) {
    case 'histogram':
      return { declarations: `var<workgroup> histogram: array<atomic<u32>, 256>;\n${shared}`, main: histogramMain };
    case 'scan':
      return { declarations: `var<workgroup> totals: array<u32, 256>;\n${shared}`, main: scanMain };
    case 'scatter':
      return { declarations: `var<workgroup> next: array<u32, 256>;\nvar<workgroup> digits: array<u32, WG>;\n${shared}`, main: scatterMain(hasValues) };
  }
}
