import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { radixSampleCap } from '../policy.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * 'radix-init' (grid maxSegments): zeroes the segment's state and histograms, and estimates the
 * threshold T of pass 0 (the CPU twin's sampledThreshold): on a segment of at least 1024 keys with
 * take <= size / 4, m = min(cap, max(256, size / 32)) keys at a stride of step = floor(size / m),
 * and T = the j-th largest of them, j = 8 + ceil(1.5 take / step): about 1.5 take + 8 step keys
 * reach it. The samples stay in registers; an 8-bit radix select over them (four histograms in
 * workgroup memory) finds T. Mode 1 (state word 0) when T exists and is not the smallest key.
 */

/** The radix-init program. */
export function radixInitProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const cap = radixSampleCap(facts.workgroupSize);
  const declarations = `
const SAMPLE_CAP: u32 = ${cap}u;
const SAMPLE_PER: u32 = ${Math.ceil(cap / facts.workgroupSize)}u;`;
  const main = `
  let segment = workgroupIndex;${enterRadixSegment('segment')}
  for (var w = lid; w < STATE_WORDS; w += WG) { atomicStore(&temp[state + w], 0u); }
  let histogram = histogramOf(segment, 0u);
  for (var d = lid; d < PASSES * BINS; d += WG) { atomicStore(&temp[histogram + d], 0u); }
  storageBarrier();
  var threshold = 0u;
  if (s.size >= 1024u && s.take <= s.size / 4u && s.take > 0u) {
    let m = min(SAMPLE_CAP, max(256u, s.size >> 5u));
    let step = s.size / m;
    let j = 8u + (3u * s.take + 2u * step - 1u) / (2u * step);
    if (j * 2u <= m) {
      var samples: array<u32, SAMPLE_PER>;
      for (var r = 0u; r < SAMPLE_PER; r++) {
        let i = r * WG + lid;
        if (i < m) { samples[r] = orderedKey(keysIn[s.start + i * step], s.direction); }
      }
      var prefix = 0u;
      var remaining = j;
      for (var digitPass = 0u; digitPass < 4u; digitPass++) {
        let shift = 24u - 8u * digitPass;
        let fixed = select(0xffffffffu << (shift + 8u), 0u, digitPass == 0u);
        clearHistogram(256u, lid);
        for (var r = 0u; r < SAMPLE_PER; r++) {
          let i = r * WG + lid;
          if (i < m && (samples[r] & fixed) == prefix) { atomicAdd(&localHistogram[(samples[r] >> shift) & 255u], 1u); }
        }
        workgroupBarrier();
        let c = chooseDigit(256u, remaining, lid);
        prefix = prefix | (c.x << shift);
        remaining = remaining - c.y;
      }
      threshold = prefix;
    }
  }
  if (lid == 0u) {
    atomicStore(&temp[state + STATE_MODE], select(0u, 1u, threshold != 0u));
    atomicStore(&temp[state + STATE_THRESHOLD], threshold);
  }`;
  return radixProgram('radix-init', facts, name, { keys: true, outputs: false }, declarations, main);
}
