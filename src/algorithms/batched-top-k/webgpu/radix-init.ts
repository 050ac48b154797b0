import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * 'radix-init' (grid maxSegments): zeroes the segment's histogram and state; state[0] = take,
 * state[6] = done when there is nothing to take, state[7] = k clamped.
 */

/** The radix-init program. */
export function radixInitProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const main = `
  let segment = workgroupIndex;${enterRadixSegment('segment')}
  let histogram = u.histogramAt + segment * 256u;
  for (var d = lid; d < 256u; d += WG) { atomicStore(&temp[histogram + d], 0u); }
  if (lid < 8u) {
    var word = 0u;
    if (lid == 0u) { word = s.take; }
    if (lid == 6u && s.take == 0u) { word = 1u; }
    if (lid == 7u) { word = s.k; }
    atomicStore(&temp[state + lid], word);
  }`;
  return radixProgram('radix-init', facts, name, { keys: false, outputs: false }, '', main);
}
