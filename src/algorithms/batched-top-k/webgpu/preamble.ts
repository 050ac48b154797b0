import type { ProgramBinding } from '../../../backends/webgpu/program.js';
import { type SegmentShape, type TempAccess, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import { indexValueWgsl, orderedBitsWgsl } from '../../../backends/webgpu/numerics.js';
import { keyFillBits, valueFillBits } from '../keys.js';
import { type TopKKernelFacts, directionOf } from './facts.js';

/*
 * WGSL shared by every top-k kernel, on top of the segment preamble (backends/webgpu/segments.ts):
 * the ordered-key transform (bit for bit keys.ts), fills, values of indices, k and the direction of
 * a segment, segment resolution (the CPU twin's `resolveSegment`), the device-side single-tile
 * branch and output writes.
 *
 * Conventions:
 * - keys are bound as `array<u32>` (their bits) whatever their dtype;
 * - `Segment.go` is 0 when the workgroup has nothing to do; `enterSegment` resolves the segment in
 *   one invocation and shares it with `workgroupUniformLoad`, so later branches on it are uniform.
 */

/** What a kernel binds and which variant's branch it is on. */
export interface KernelShape extends SegmentShape {
  readonly keys: boolean;
  /** Also bind the keys as `keysIn4: array<vec4<u32>>` (the same buffer; allocations are whole 16-byte words). */
  readonly keys4?: boolean;
  readonly outputs: boolean;
  readonly temp: TempAccess;
  /** single-tile runs when the device-side branch chooses it; radix-select when it does not. */
  readonly branch: 'single-tile' | 'radix' | 'none';
}

export const sentinelIndex = 0xffffffff;

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** Storage bindings of a kernel of this shape, in binding order. */
export function kernelBindings(facts: TopKKernelFacts, shape: KernelShape): ProgramBinding[] {
  const arrays: ProgramBinding[] = [];
  if (shape.keys) arrays.push({ name: 'keysIn', access: 'read', element: 'u32' });
  if (shape.keys4) arrays.push({ name: 'keysIn4', array: 'keysIn', access: 'read', element: 'vec4<u32>' });
  if (shape.outputs) {
    arrays.push({ name: 'keysOut', access: 'read_write', element: 'u32' });
    if (facts.valueMode === 'payload') arrays.push({ name: 'valuesIn', access: 'read', element: 'u32' });
    if (facts.valueMode !== 'none') arrays.push({ name: 'valuesOut', access: 'read_write', element: 'u32' });
  }
  return segmentBindings(facts, arrays, shape);
}

/** Uniform fields every top-k kernel of this shape reads (the kernel adds its own). */
export function kernelUniforms(facts: TopKKernelFacts, shape: KernelShape): string[] {
  return ['kMax', ...segmentUniforms(facts, shape)];
}

function directionFn(facts: TopKKernelFacts): string {
  const fact = facts.sources.selectDirection;
  if (fact.kind === 'constant') return `fn segmentDirectionOf(i: u32) -> u32 { return ${directionOf(facts.directionOfOption, fact.value)}u; }`;
  const options = facts.directionOfOption.length > 0 ? facts.directionOfOption : [0];
  const last = options.length - 1;
  const table = `array<u32, ${options.length}>(${options.map((o) => `${o === 1 ? 1 : 0}u`).join(', ')})`;
  return `const directionOfOption = ${table};
fn segmentDirectionOf(i: u32) -> u32 { return directionOfOption[min(${readCount('selectDirection', fact, 'i')}, ${last}u)]; }`;
}

function branchExpr(facts: TopKKernelFacts, shape: KernelShape): string {
  if (shape.branch === 'none') return 'true';
  // The CPU twin's singleTileBranch().
  let singleTile: string;
  if (facts.sizeBounds === undefined) singleTile = facts.hasSingleTile ? 'true' : 'false';
  else if (!facts.hasSingleTile) singleTile = 'false';
  else if (!facts.hasRadix) singleTile = 'true';
  else singleTile = `(count${facts.sizeBounds.toUpperCase()}(blockWord(u.sizeBoundsAt, u.sizeBoundsLen, 1u)) <= ${facts.tileItems}u)`;
  return shape.branch === 'single-tile' ? singleTile : `!${singleTile}`;
}

/** The shared WGSL of a kernel of this shape. */
export function topKPreamble(facts: TopKKernelFacts, shape: KernelShape): string {
  const parts: string[] = [
    segmentPreamble(facts, shape),
    `const SENTINEL: u32 = ${hex(sentinelIndex)};`,
    orderedBitsWgsl(facts.keyType),
    'fn orderedKey(bits: u32, direction: u32) -> u32 { return orderedBits(bits) ^ (0u - direction); }',
    `fn keyFill(direction: u32) -> u32 { return select(${hex(keyFillBits(facts.keyType, 'max'))}, ${hex(keyFillBits(facts.keyType, 'min'))}, direction == 1u); }`,
    `const VALUE_FILL: u32 = ${hex(valueFillBits(facts.valueType))};`,
    indexValueWgsl(facts.valueType),
    `fn segmentKOf(i: u32) -> u32 { return ${readCount('k', facts.sources.k, 'i')}; }`,
    directionFn(facts),
    'struct Segment { start: u32, size: u32, k: u32, take: u32, direction: u32, go: u32 }',
  ];
  if (!shape.blockWritable) {
    parts.push(`fn resolveSegment(i: u32, capacity: u32) -> Segment {
  let extent = segmentExtent(i, capacity);
  let k = min(segmentKOf(i), u.kMax);
  return Segment(extent.x, extent.y, k, min(k, extent.y), segmentDirectionOf(i), 1u);
}
var<workgroup> enteredSegment: Segment;
fn enterSegment(i: u32, capacity: u32, lid: u32) -> Segment {
  if (lid == 0u) {
    var s = Segment(0u, 0u, 0u, 0u, 0u, 0u);
    if (!failed() && ${branchExpr(facts, shape)} && i < activeSegments()) { s = resolveSegment(i, capacity); }
    enteredSegment = s;
  }
  return workgroupUniformLoad(&enteredSegment);
}`);
  }
  if (shape.outputs) {
    const values =
      facts.valueMode === 'payload'
        ? '  valuesOut[at] = valuesIn[start + index];\n'
        : facts.valueMode === 'indices'
          ? '  valuesOut[at] = indexValue(index);\n'
          : '';
    parts.push(
      `fn writeResult(at: u32, start: u32, index: u32) {\n  keysOut[at] = keysIn[start + index];\n${values}}`,
      `fn writeFill(at: u32, direction: u32) {\n  keysOut[at] = keyFill(direction);\n${facts.valueMode === 'none' ? '' : '  valuesOut[at] = VALUE_FILL;\n'}}`,
    );
  }
  return parts.join('\n');
}
