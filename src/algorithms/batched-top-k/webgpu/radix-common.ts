import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * What the radix-select kernels share (radix-init, -histogram, -choose, -filter, -finalize): temporary
 * storage bound as atomic words, the slots' word offsets as uniforms, and the segment entry on the
 * radix side of the device-side single-tile branch. State words per segment (problem.ts):
 * [0 remaining, 1 selectedCount, 2 candidateCount0, 3 candidateCount1, 4 threshold digit,
 * 5 takeBucket, 6 done, 7 k clamped].
 */

/** Uniforms of every radix kernel beyond the shared ones. */
const radixUniforms = ['tiles', 'launchPass', 'segmentStateAt', 'histogramAt', 'selectedAt', 'candidates0At', 'candidates1At', 'candidatesLen'];

/** A radix kernel's program from its parts. */
export function radixProgram(
  kernel: string,
  facts: TopKKernelFacts,
  name: string,
  io: { keys: boolean; outputs: boolean },
  declarations: string,
  main: string,
): WebGpuProgram {
  const shape: KernelShape = { ...io, temp: 'atomic', branch: 'radix' };
  return {
    name,
    cacheKey: `${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), ...radixUniforms],
    bindings: kernelBindings(facts, shape),
    preamble: topKPreamble(facts, shape),
    declarations: `const RADIX_TILE: u32 = ${facts.radixTileItems}u;\nconst TILE: u32 = ${facts.tileItems}u;\n${declarations}`,
    main,
  };
}

/** Enters segment `segment` (the grid covers tiles * radixTileItems keys per segment); `s` is the segment. */
export const enterRadixSegment = (segment: string) => `
  let s = enterSegment(${segment}, mulSat(u.tiles, RADIX_TILE), lid);
  if (s.go == 0u) { return; }
  let state = u.segmentStateAt + (${segment}) * 8u;`;

/** Enters the tile of a histogram or filter workgroup: the grid is segments x u.tiles. */
export const enterRadixTile = `
  let tiles = u.tiles;
  let segment = workgroupIndex / tiles;
  let tile = workgroupIndex - segment * tiles;${enterRadixSegment('segment')}`;

/** WGSL: declares `count`, the items this pass reads for the segment (its keys in pass 0, the previous pass's candidates after). */
export const radixPassInputCount = `
    var count = s.size;
    if (u.launchPass > 0u) { count = atomicLoad(&temp[state + 2u + ((u.launchPass - 1u) & 1u)]); }`;

