import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { type RadixKernel, defaultRadixLoads, radixProgramParts, radixUniforms } from '../../segmented-sort/webgpu/radix.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * Sorted output past a tile on WebGPU: the segmented sort's radix programs
 * (segmented-sort/webgpu/radix.ts) over each segment's selection in place, with top-k's segment
 * resolution as their source (the CPU twin is cpu/sorted.ts): segment i's selection is
 * min(k_i, size_i) items at i * kMax, in index order; it is sorted best first and stably.
 */

// keysIn is bound because the top-k preamble's output helpers name it.
const shape: KernelShape = { keys: true, outputs: true, temp: 'u32', branch: 'none' };

function adapter(facts: TopKKernelFacts): string {
  const values = facts.valueMode !== 'none';
  return `fn radixSegment(i: u32) -> vec4<u32> {
  if (failed() || i >= activeSegments()) { return vec4<u32>(0u, 0u, 0u, 0u); }
  let s = resolveSegment(i, mulSat(u.tiles, ${facts.radixTileItems}u));
  // Best first: descending ordered keys for 'max', ascending for 'min'.
  return vec4<u32>(i * u.kMax, s.take, select(0xffffffffu, 0u, s.direction == 1u), 1u);
}
fn radixOrderedKey(bits: u32) -> u32 { return orderedBits(bits); }
fn sourceKey(start: u32, j: u32) -> u32 { return keysOut[start + j]; }
${values ? 'fn sourceValue(start: u32, j: u32) -> u32 { return valuesOut[start + j]; }' : ''}
fn writeOut(start: u32, at: u32, bits: u32, value: u32) {
  keysOut[start + at] = bits;${values ? '\n  valuesOut[start + at] = value;' : ''}
}`;
}

/** The program of a selection-sort launch. */
export function selectionSortProgram(kernel: RadixKernel, facts: TopKKernelFacts, name: string): WebGpuProgram {
  const values = facts.valueMode !== 'none';
  // Ranks in tiles of top-k's single-tile capacity: they fit the workgroup memory finalize's sort has.
  const parts = radixProgramParts(kernel, { hasValues: values, workgroupSize: facts.workgroupSize, rankItems: facts.tileItems, warpRank: facts.radixWarpRank, loads: defaultRadixLoads });
  return {
    name,
    cacheKey: `sort-selection/${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), 'tiles', ...radixUniforms(values)],
    bindings: kernelBindings(facts, shape),
    preamble: `${topKPreamble(facts, shape)}\n${adapter(facts)}`,
    declarations: parts.declarations,
    main: parts.main,
    usesSubgroups: parts.usesSubgroups === true,
  };
}
