import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, inclusiveScanWgsl, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * 'segment-offsets' (grid 1, packed layout with per-segment sizes): the exclusive scan of the sizes
 * into slot `offsets` (maxSegments + 1 words; entries from numSegments on hold the total). Sums
 * saturate at 2^32 - 1 (only under 'trust'), so starts stay past the keys rather than wrapping.
 * One workgroup walks the sizes in chunks of workgroupSize * 8: each invocation sums a contiguous
 * run, a workgroup scan gives the runs' starts, and each invocation writes its run.
 */

const shape: KernelShape = { keys: false, outputs: false, temp: 'u32', branch: 'none' };
const perInvocation = 8;

/** The segment-offsets program for these facts. */
export function segmentOffsetsProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const declarations = `
const PER: u32 = ${perInvocation}u;
var<workgroup> scan: array<u32, ${facts.workgroupSize}>;
${inclusiveScanWgsl('inclusiveScanSat', 'addSat(a, b)')}`;
  const main = `
  if (failed()) { return; }
  let n = activeSegments();
  var carry = 0u;
  for (var base = 0u; base < n; base += WG * PER) {
    let first = base + lid * PER;
    var sum = 0u;
    for (var j = 0u; j < PER; j++) {
      if (first + j < n) { sum = addSat(sum, segmentSizeOf(first + j)); }
    }
    inclusiveScanSat(sum, lid);
    var running = carry;
    if (lid > 0u) { running = addSat(carry, scan[lid - 1u]); }
    for (var j = 0u; j < PER; j++) {
      let i = first + j;
      if (i < n) {
        temp[u.offsetsAt + i] = running;
        running = addSat(running, segmentSizeOf(i));
      }
    }
    carry = addSat(carry, scan[WG - 1u]);
    workgroupBarrier();
  }
  for (var i = n + lid; i <= u.maxSegments; i += WG) { temp[u.offsetsAt + i] = carry; }`;
  return {
    name,
    cacheKey: `segment-offsets|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: kernelUniforms(facts, shape),
    bindings: kernelBindings(facts, shape),
    preamble: topKPreamble(facts, shape),
    declarations,
    main,
  };
}
