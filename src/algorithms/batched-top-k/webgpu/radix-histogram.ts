import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixTile, radixPassInputCount, radixProgram } from './radix-common.js';

/*
 * 'radix-histogram' (grid maxSegments * tiles, one launch per pass): tile t of a segment counts the
 * digit `pass` (bits 24 - 8 pass) of radixTileItems items — keys in pass 0, the candidates of buffer
 * (pass - 1) & 1 after — in a workgroup histogram, then adds its non-zero bins to the segment's
 * histogram with one atomic each.
 */

/** The radix-histogram program. */
export function radixHistogramProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const declarations = `
var<workgroup> localHistogram: array<atomic<u32>, 256>;
var<workgroup> tileInfo: vec2<u32>;`;
  const main = `${enterRadixTile}
  if (lid == 0u) {${radixPassInputCount}
    tileInfo = vec2<u32>(atomicLoad(&temp[state + 6u]), count);
  }
  let info = workgroupUniformLoad(&tileInfo);
  let begin = tile * RADIX_TILE;
  let to = min(begin + RADIX_TILE, info.y);
  if (info.x != 0u || begin >= to) { return; }
  for (var d = lid; d < 256u; d += WG) { atomicStore(&localHistogram[d], 0u); }
  workgroupBarrier();
  if (u.launchPass == 0u) {
    for (var i = begin + lid; i < to; i += WG) {
      atomicAdd(&localHistogram[orderedKey(keysIn[s.start + i], s.direction) >> 24u], 1u);
    }
  } else {
    let shift = 24u - 8u * u.launchPass;
    let candidates = select(u.candidates0At, u.candidates1At, ((u.launchPass - 1u) & 1u) == 1u) + s.start;
    for (var c = begin + lid; c < to; c += WG) {
      let index = atomicLoad(&temp[candidates + c]);
      atomicAdd(&localHistogram[(orderedKey(keysIn[s.start + index], s.direction) >> shift) & 255u], 1u);
    }
  }
  workgroupBarrier();
  let histogram = u.histogramAt + segment * 256u;
  for (var d = lid; d < 256u; d += WG) {
    let count = atomicLoad(&localHistogram[d]);
    if (count != 0u) { atomicAdd(&temp[histogram + d], count); }
  }`;
  return radixProgram('radix-histogram', facts, name, { keys: true, outputs: false }, declarations, main);
}
