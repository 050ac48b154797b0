import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { defaultTileLoadBatch } from '../../segmented-sort/policy.js';
import { mergePassParts } from '../../segmented-sort/webgpu/merge.js';
import { mergeBlocksParts } from '../../segmented-sort/webgpu/programs.js';
import { type RadixDigitProgram, type RadixKernel, radixProgramParts, radixUniforms, sortRadixLoads } from '../../segmented-sort/webgpu/radix.js';
import type { TopKKernelFacts } from './facts.js';
import { type KernelShape, kernelBindings, kernelUniforms, topKPreamble } from './preamble.js';

/*
 * Sorted output past a tile on WebGPU: the segmented sort's merge programs (segmented-sort/webgpu/merge.ts
 * and the blocks mode of programs.ts) or radix programs (segmented-sort/webgpu/radix.ts) over each
 * segment's selection in place, as problem.ts chooseSelectionSort chose, with top-k's segment
 * resolution as their source (the CPU twin is cpu/sorted.ts): segment i's selection is
 * min(k_i, size_i) items at i * kMax, in index order; it is sorted best first and stably. Values
 * (payloads or index values, as finalize wrote them) move with their keys as payloads.
 */

// keysIn is bound because the top-k preamble's output helpers name it.
const shape: KernelShape = { keys: true, outputs: true, temp: 'u32', branch: 'none' };

/** The adapter's WGSL: the selection as the sort programs' source and destination, entered as `entry` (radixSegment or enterMerge). */
function adapter(facts: TopKKernelFacts, entry: string): string {
  const values = facts.valueMode !== 'none';
  return `fn ${entry}(i: u32) -> vec4<u32> {
  if (failed() || i >= activeSegments()) { return vec4<u32>(0u, 0u, 0u, 0u); }
  let s = resolveSegment(i, mulSat(u.tiles, ${facts.radixTileItems}u));
  // Best first: descending ordered keys for 'max', ascending for 'min'.
  return vec4<u32>(i * u.kMax, s.take, select(0xffffffffu, 0u, s.direction == 1u), 1u);
}
fn radixOrderedKey(bits: u32) -> u32 { return orderedBits(bits); }
fn sourceKey(start: u32, j: u32) -> u32 { return keysOut[start + j]; }
${values ? 'fn sourceValue(start: u32, j: u32) -> u32 { return valuesOut[start + j]; }\nfn finalValue(value: u32) -> u32 { return value; }' : ''}
fn writeOut(start: u32, at: u32, bits: u32, value: u32) {
  keysOut[start + at] = bits;${values ? '\n  valuesOut[start + at] = value;' : ''}
}`;
}

/**
 * The program of a radix selection-sort launch; a histogram or scatter is built for the place its
 * digit reads (`digit`: segmented-sort/webgpu/radix.ts `radixDigitProgram`), as the segmented
 * sort's are: digit 0 the selection in the outputs, digit 2 buffer 1, digits 1 and 3 buffer 0,
 * each buffer in a binding of its own.
 */
export function selectionSortProgram(kernel: RadixKernel, facts: TopKKernelFacts, name: string, digit: RadixDigitProgram): WebGpuProgram {
  const values = facts.valueMode !== 'none';
  // Ranks in tiles of top-k's single-tile capacity: they fit the workgroup memory finalize's sort has.
  const parts = radixProgramParts(kernel, { hasValues: values, workgroupSize: facts.workgroupSize, rankItems: facts.tileItems, warpRank: facts.radixWarpRank, loads: sortRadixLoads, digit, scanInScatter: facts.radixScanInScatter });
  return {
    name,
    cacheKey: `sort-selection/${kernel}${kernel === 'scan' ? '' : `/${digit}`}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), 'tiles', ...radixUniforms(values)],
    bindings: [...kernelBindings(facts, shape), ...parts.bindings],
    preamble: `${topKPreamble(facts, shape)}\n${adapter(facts, 'radixSegment')}`,
    declarations: parts.declarations,
    main: parts.main,
    usesSubgroups: parts.usesSubgroups === true,
  };
}

/**
 * The program of a merge selection-sort launch: the block launch (each tile sorted in workgroup
 * memory; a selection of one tile in place, gathered before it is written) or a merge pass.
 */
export function selectionMergeProgram(kernel: 'blocks' | 'pass', facts: TopKKernelFacts, name: string): WebGpuProgram {
  const values = facts.valueMode !== 'none';
  // Set wherever the plan has merge launches (facts.ts).
  const merge = facts.selectionMerge!;
  const parts =
    kernel === 'blocks'
      ? mergeBlocksParts({ merge, batch: defaultTileLoadBatch, valueMode: values ? 'payload' : 'none', inPlace: true })
      : mergePassParts({ hasValues: values, workgroupSize: facts.workgroupSize, tileItems: merge.tile });
  return {
    name,
    cacheKey: `sort-selection/merge-${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...kernelUniforms(facts, shape), 'tiles', 'mergeTiles', 'launchPass', 'sortKeys0At', 'sortKeys1At', ...(values ? ['sortValues0At', 'sortValues1At'] : [])],
    bindings: kernelBindings(facts, shape),
    preamble: `${topKPreamble(facts, shape)}\n${adapter(facts, 'enterMerge')}`,
    declarations: parts.declarations,
    main: parts.main,
  };
}
