/*
 * Workgroup-level WGSL building blocks shared by the kernels of several algorithms (CUB's block
 * scope): a scan and a bitonic sort over workgroup memory. `WG` (the workgroup size) is in scope in
 * every program (program.ts).
 */

/**
 * A workgroup bitonic sort of entries [0, p), p = count rounded up to a power of two, best first.
 * The kernel defines `entryBefore(a, b)` (entry a ranks before entry b) and `swapEntries(a, b)`, and
 * pads entries [count, p) so they rank last. `count` must be workgroup-uniform.
 */
export const bitonicSortWgsl = `fn bitonicSort(count: u32, lid: u32) {
  var p = 1u;
  while (p < count) { p = p << 1u; }
  for (var size = 2u; size <= p; size = size << 1u) {
    for (var stride = size >> 1u; stride > 0u; stride = stride >> 1u) {
      for (var t = lid; t < (p >> 1u); t += WG) {
        let i = ((t & ~(stride - 1u)) << 1u) | (t & (stride - 1u));
        let l = i + stride;
        if (entryBefore(l, i) == ((i & size) == 0u)) { swapEntries(i, l); }
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
