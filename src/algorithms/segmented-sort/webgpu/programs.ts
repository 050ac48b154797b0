import { bitonicSortWgsl } from '../../../backends/webgpu/blocks.js';
import type { ProgramBinding, WebGpuProgram } from '../../../backends/webgpu/program.js';
import { indexValueWgsl, orderedBitsWgsl } from '../../../backends/webgpu/numerics.js';
import { type TempAccess, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import type { SortKernelFacts } from './facts.js';
import { radixProgramParts, radixUniforms } from './radix.js';

/*
 * The sort's WGSL programs, twins of cpu/kernels.ts launch for launch and slot for slot.
 *
 * Conventions: keys (and values) are bound as `array<u32>` (their bits) whatever their dtype;
 * `enterSegment` resolves the segment in one invocation and shares it with `workgroupUniformLoad`
 * (start, size, order mask, go), so every later branch on it is uniform.
 */

type Kernel = 'single-tile' | 'radix-histogram' | 'radix-scan' | 'radix-scatter';

interface Shape {
  readonly keys: boolean;
  readonly outputs: boolean;
  readonly temp: TempAccess;
  readonly variant: 'single-tile' | 'radix';
}

const shapes: Record<Kernel, (facts: SortKernelFacts) => Shape> = {
  'single-tile': (facts) => ({ keys: true, outputs: true, temp: facts.startMode === 1 ? 'u32' : 'none', variant: 'single-tile' }),
  'radix-histogram': () => ({ keys: true, outputs: false, temp: 'u32', variant: 'radix' }),
  'radix-scan': () => ({ keys: false, outputs: false, temp: 'u32', variant: 'radix' }),
  'radix-scatter': () => ({ keys: true, outputs: true, temp: 'u32', variant: 'radix' }),
};

function bindings(facts: SortKernelFacts, shape: Shape): ProgramBinding[] {
  const arrays: ProgramBinding[] = [];
  if (shape.keys) arrays.push({ name: 'keysIn', access: 'read', element: 'u32' });
  if (shape.outputs) {
    arrays.push({ name: 'keysOut', access: 'read_write', element: 'u32' });
    if (facts.valueMode === 'payload') arrays.push({ name: 'valuesIn', access: 'read', element: 'u32' });
    if (facts.valueMode !== 'none') arrays.push({ name: 'valuesOut', access: 'read_write', element: 'u32' });
  }
  return segmentBindings(facts, arrays, shape);
}

function uniforms(facts: SortKernelFacts, shape: Shape): string[] {
  const fields = ['capacity', ...segmentUniforms(facts, shape)];
  if (shape.variant === 'radix') fields.push(...radixUniforms(facts.valueMode !== 'none'));
  return fields;
}

function orderMaskFn(facts: SortKernelFacts): string {
  const fact = facts.sources.order;
  const options = facts.orderOfOption.length > 0 ? facts.orderOfOption : [0];
  const maskOf = (o: number | undefined) => (o === 1 ? '0xffffffffu' : '0u');
  if (fact.kind === 'constant') return `fn orderMaskOf(i: u32) -> u32 { return ${maskOf(options[Math.min(fact.value, options.length - 1)])}; }`;
  const table = `array<u32, ${options.length}>(${options.map(maskOf).join(', ')})`;
  return `const orderMasks = ${table};
fn orderMaskOf(i: u32) -> u32 { return orderMasks[min(${readCount('order', fact, 'i')}, ${options.length - 1}u)]; }`;
}

/** Whether segment `size` belongs to this kernel's variant (the CPU twin's `SortContext.enter`). */
function branchExpr(facts: SortKernelFacts, shape: Shape): string {
  if (!(facts.hasSingleTile && facts.hasRadix)) return 'true';
  return shape.variant === 'single-tile' ? `extent.y <= ${facts.tileItems}u` : `extent.y > ${facts.tileItems}u`;
}

function preamble(facts: SortKernelFacts, shape: Shape): string {
  const parts = [segmentPreamble(facts, shape), orderedBitsWgsl(facts.keyType), orderMaskFn(facts)];
  if (shape.variant === 'single-tile') parts.push(`var<workgroup> enteredSegment: vec4<u32>;
// (start, size, order mask, go) of segment i for this kernel, the same in every invocation.
fn enterSegment(i: u32, lid: u32) -> vec4<u32> {
  if (lid == 0u) {
    var s = vec4<u32>(0u, 0u, 0u, 0u);
    if (!failed() && i < activeSegments()) {
      let extent = segmentExtent(i, u.capacity);
      if (${branchExpr(facts, shape)}) { s = vec4<u32>(extent.x, extent.y, orderMaskOf(i), 1u); }
    }
    enteredSegment = s;
  }
  return workgroupUniformLoad(&enteredSegment);
}`);
  if (shape.outputs) {
    parts.push(indexValueWgsl(facts.valueType));
    const values = facts.valueMode === 'payload' ? '  valuesOut[start + at] = valuesIn[start + index];\n' : facts.valueMode === 'indices' ? '  valuesOut[start + at] = indexValue(index);\n' : '';
    parts.push(`fn writeItem(start: u32, at: u32, index: u32) {\n  keysOut[start + at] = keysIn[start + index];\n${values}}`);
  }
  if (shape.variant === 'radix') {
    parts.push(`fn radixSegment(i: u32) -> vec4<u32> {
  if (failed() || i >= activeSegments()) { return vec4<u32>(0u, 0u, 0u, 0u); }
  let extent = segmentExtent(i, u.capacity);
  if (!(${branchExpr(facts, shape)})) { return vec4<u32>(0u, 0u, 0u, 0u); }
  return vec4<u32>(extent.x, extent.y, orderMaskOf(i), 1u);
}
fn radixOrderedKey(bits: u32) -> u32 { return orderedBits(bits); }`);
    if (shape.keys) parts.push('fn sourceKey(start: u32, j: u32) -> u32 { return keysIn[start + j]; }');
    if (shape.outputs) {
      const value = facts.valueMode === 'payload' ? 'valuesIn[start + j]' : 'indexValue(j)';
      if (facts.valueMode !== 'none') parts.push(`fn sourceValue(start: u32, j: u32) -> u32 { return ${value}; }`);
      parts.push(`fn writeOut(start: u32, at: u32, bits: u32, value: u32) {\n  keysOut[start + at] = bits;${facts.valueMode === 'none' ? '' : '\n  valuesOut[start + at] = value;'}\n}`);
    }
  }
  return parts.join('\n');
}

function singleTile(facts: SortKernelFacts): { declarations: string; main: string } {
  const tile = facts.tileItems;
  return {
    declarations: `
var<workgroup> sortKeys: array<u32, ${tile}>;
var<workgroup> indices: array<u32, ${tile}>;
fn entryBefore(a: u32, b: u32) -> bool { return sortKeys[a] < sortKeys[b] || (sortKeys[a] == sortKeys[b] && indices[a] < indices[b]); }
fn swapEntries(a: u32, b: u32) {
  let k = sortKeys[a]; sortKeys[a] = sortKeys[b]; sortKeys[b] = k;
  let i = indices[a]; indices[a] = indices[b]; indices[b] = i;
}
${bitonicSortWgsl}`,
    main: `
  let s = enterSegment(workgroupIndex, lid);
  if (s.w == 0u || s.y == 0u) { return; }
  let start = s.x;
  let size = s.y;
  // Padding ranks after every item: the largest sort key with an index no item has.
  let padded = nextPowerOfTwo(size);
  for (var j = lid; j < padded; j += WG) {
    if (j < size) { sortKeys[j] = orderedBits(keysIn[start + j]) ^ s.z; indices[j] = j; } else { sortKeys[j] = 0xffffffffu; indices[j] = 0xffffffffu; }
  }
  workgroupBarrier();
  bitonicSort(size, lid);
  for (var j = lid; j < size; j += WG) { writeItem(start, j, indices[j]); }`,
  };
}

/** The program of one of the sort's kernels for these facts. */
export function sortProgram(kernel: Kernel, facts: SortKernelFacts, name: string): WebGpuProgram {
  const shape = shapes[kernel](facts);
  if (kernel === 'single-tile' && facts.tileItems % facts.workgroupSize !== 0) throw new Error(`internal: tileItems ${facts.tileItems} is not a multiple of the workgroup size ${facts.workgroupSize}`);
  const body = kernel === 'single-tile' ? singleTile(facts) : radixProgramParts(kernel === 'radix-histogram' ? 'histogram' : kernel === 'radix-scan' ? 'scan' : 'scatter', {
          hasValues: facts.valueMode !== 'none',
          workgroupSize: facts.workgroupSize,
          rankItems: facts.tileItems,
        });
  return {
    name,
    cacheKey: `sort/${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: uniforms(facts, shape),
    bindings: bindings(facts, shape),
    preamble: preamble(facts, shape),
    declarations: body.declarations,
    main: body.main,
  };
}
