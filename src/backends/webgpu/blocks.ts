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
 * A workgroup bitonic sort of entries [0, p), p = count rounded up to a power of two, best first.
 * An entry is a vec2<u32> (key, index), best first by key descending, then index ascending. The
 * kernel defines `sortLoad(i: u32) -> vec2<u32>` and `sortStore(i: u32, entry: vec2<u32>)` over its
 * workgroup memory, and pads entries [count, p) so they rank last. `count` must be
 * workgroup-uniform.
 *
 * Register-blocked: each round loads groups of up to 8 entries and runs up to three stages of the
 * network on them before storing, so 4096 entries take 30 barriers and 30 passes over workgroup
 * memory instead of one per stage (78); on the H200, radix-select's finalize of a 2048-item selection
 * 0.059 -> 0.040 ms, of 4096 items 0.110 -> 0.062 ms. Groups shrink to 4 or 2 entries where there are
 * fewer than 8 per invocation.
 */
export const bitonicSortWgsl = `fn sortBefore(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x > b.x || (a.x == b.x && a.y < b.y); }
${[1, 2, 3].map(bitonicRoundWgsl).join('\n')}
fn bitonicSort(count: u32, lid: u32) {
  let p = nextPowerOfTwo(count);
  // Rounds as wide as keep every invocation busy: a few entries (a top-k of 64) sort fastest one
  // stage per barrier over many invocations, not in long chains on a few.
  let wide = select(select(1u, 2u, (p >> 2u) >= WG), 3u, (p >> 3u) >= WG);
  for (var size = 2u; size <= p; size = size << 1u) {
    var j = size >> 1u;
    loop {
      if (j == 0u) { break; }
      if (wide == 3u && j >= 4u) {
        bitonicRound3(p, size, j, lid);
        j = j >> 3u;
      } else if (wide >= 2u && j >= 2u) {
        bitonicRound2(p, size, j, lid);
        j = j >> 2u;
      } else {
        bitonicRound1(p, size, j, lid);
        j = j >> 1u;
      }
      workgroupBarrier();
    }
  }
}
fn nextPowerOfTwo(count: u32) -> u32 { var p = 1u; while (p < count) { p = p << 1u; } return p; }`;

/**
 * A workgroup inclusive scan of one word per invocation over the kernel's `scan` (WG words), with
 * `combine` (an expression of `a` and `b`); returns lid's result and leaves every result in `scan`.
 */
export function inclusiveScanWgsl(name = 'inclusiveScan', combine = 'a + b'): string {
  return `fn ${name}(value: u32, lid: u32) -> u32 {
  scan[lid] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var a = 0u;
    if (lid >= offset) { a = scan[lid - offset]; }
    workgroupBarrier();
    let b = scan[lid];
    scan[lid] = ${combine};
    workgroupBarrier();
  }
  return scan[lid];
}`;
}
