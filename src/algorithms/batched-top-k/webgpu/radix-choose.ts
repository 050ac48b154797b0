import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { inclusiveScanWgsl } from '../../../backends/webgpu/blocks.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * 'radix-choose' (grid maxSegments, one launch per pass): remaining = take - selectedCount; done when
 * nothing remains. Else the threshold digit b from the top (a workgroup scan over digits 255..0):
 * the digit whose bucket holds the remaining-th best, and takeBucket when the whole bucket is needed.
 * Zeroes the candidate counter this pass's filter appends to, and the histogram for the next pass.
 */

/** The radix-choose program. */
export function radixChooseProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const declarations = `
var<workgroup> scan: array<u32, ${facts.workgroupSize}>;
var<workgroup> stateInfo: vec3<u32>;
${inclusiveScanWgsl()}`;
  const main = `
  let segment = workgroupIndex;${enterRadixSegment('segment')}
  if (lid == 0u) { stateInfo = vec3<u32>(atomicLoad(&temp[state + 6u]), atomicLoad(&temp[state + 1u]), atomicLoad(&temp[state + 7u])); }
  let info = workgroupUniformLoad(&stateInfo);
  if (info.x != 0u) { return; }
  let take = min(info.z, s.size);
  if (lid == 0u) { atomicStore(&temp[state], take - info.y); }
  if (info.y >= take) {
    if (lid == 0u) { atomicStore(&temp[state + 6u], 1u); }
    return;
  }
  let remaining = take - info.y;
  let histogram = u.histogramAt + segment * 256u;
  // Invocation t holds digit 255 - t: an inclusive scan is the count at or above the digit.
  var atOrAbove = 0u;
  for (var base = 0u; base < 256u; base += WG) {
    let digit = 255u - min(base + lid, 255u);
    let value = select(0u, atomicLoad(&temp[histogram + digit]), base + lid < 256u);
    let sum = inclusiveScan(value, lid) + atOrAbove;
    if (sum - value < remaining && remaining <= sum) {
      atomicStore(&temp[state + 4u], digit);
      atomicStore(&temp[state + 5u], select(0u, 1u, sum == remaining));
    }
    atOrAbove = atOrAbove + scan[WG - 1u];
    workgroupBarrier();
  }
  if (lid == 0u) {
    if (atOrAbove < remaining) {
      // Fewer candidates than remaining: only inconsistent input under 'trust' gets here. Take them all.
      atomicStore(&temp[state + 4u], 0u);
      atomicStore(&temp[state + 5u], 1u);
    }
    atomicStore(&temp[state + 2u + (u.launchPass & 1u)], 0u);
  }
  storageBarrier();
  for (var d = lid; d < 256u; d += WG) { atomicStore(&temp[histogram + d], 0u); }`;
  return radixProgram('radix-choose', facts, name, { keys: false, outputs: false }, declarations, main);
}
