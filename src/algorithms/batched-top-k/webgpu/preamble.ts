import { keyFillBits, valueFillBits } from '../keys.js';
import { type SourceFact, type TopKKernelFacts, needsBlock } from './facts.js';
import type { ProgramBinding } from '../../../backends/webgpu/program.js';

/*
 * WGSL shared by every top-k kernel, generated from the run's static facts: the ordered-key transform
 * (bit for bit keys.ts), fills, values of indices, how a value is read from its source (baked
 * constant, uniform, or a word of the device block), segment resolution (the CPU twin's
 * `resolveSegment`), the status test, the device-side single-tile branch, output writes and a
 * workgroup bitonic sort.
 *
 * Conventions:
 * - keys are bound as `array<u32>` (their bits) whatever their dtype;
 * - the device block (`block`) holds, from word 0: the status word (written by 'validate'), then
 *   every device-only input the run reads, copied in by the executor; `<name>At` / `<name>Len`
 *   uniforms locate them, and reads past `Len` give 0 (as reads past a device array do on the CPU);
 * - `Segment.go` is 0 when the workgroup has nothing to do; `enterSegment` resolves the segment in
 *   one invocation and shares it with `workgroupUniformLoad`, so later branches on it are uniform.
 */

/** How a kernel binds the run's temporary storage. */
export type TempAccess = 'none' | 'u32' | 'atomic';

/** What a kernel binds and which variant's branch it is on. */
export interface KernelShape {
  readonly keys: boolean;
  /** Also bind the keys as `keysIn4: array<vec4<u32>>` (the same buffer; allocations are whole 16-byte words). */
  readonly keys4?: boolean;
  readonly outputs: boolean;
  readonly temp: TempAccess;
  /** single-tile runs when the device-side branch chooses it; radix-select when it does not. */
  readonly branch: 'single-tile' | 'radix' | 'none';
  /** validate binds the block read-write (it writes the status word there). */
  readonly blockWritable?: boolean;
  readonly status?: boolean;
}

export const sentinelIndex = 0xffffffff;

const hex = (value: number) => `0x${(value >>> 0).toString(16)}u`;

/** Storage bindings of a kernel of this shape, in binding order. */
export function kernelBindings(facts: TopKKernelFacts, shape: KernelShape): ProgramBinding[] {
  const bindings: ProgramBinding[] = [];
  if (shape.keys) bindings.push({ name: 'keysIn', access: 'read', element: 'u32' });
  if (shape.keys4) bindings.push({ name: 'keysIn4', access: 'read', element: 'vec4<u32>' });
  if (shape.outputs) {
    bindings.push({ name: 'keysOut', access: 'read_write', element: 'u32' });
    if (facts.valueMode === 'payload') bindings.push({ name: 'valuesIn', access: 'read', element: 'u32' });
    if (facts.valueMode !== 'none') bindings.push({ name: 'valuesOut', access: 'read_write', element: 'u32' });
  }
  if (shape.temp !== 'none') bindings.push({ name: 'temp', access: 'read_write', element: shape.temp === 'atomic' ? 'atomic<u32>' : 'u32' });
  if (needsBlock(facts)) bindings.push({ name: 'block', access: shape.blockWritable ? 'read_write' : 'read', element: 'u32' });
  if (shape.status) bindings.push({ name: 'status', access: 'read_write', element: 'u32' });
  return bindings;
}

/** Uniform fields every top-k kernel of this shape reads (the kernel adds its own). */
export function kernelUniforms(facts: TopKKernelFacts, shape: KernelShape): string[] {
  const fields = ['kMax', 'maxSegments', 'keysLength'];
  const source = (name: string, fact: SourceFact | undefined) => {
    if (fact === undefined) return;
    if (fact.kind === 'uniform') fields.push(name);
    if (fact.kind === 'device' || fact.kind === 'perSegment') fields.push(`${name}At`, `${name}Len`);
  };
  source('numSegments', facts.numSegments);
  source('segmentSize', facts.sizes);
  source('stride', facts.stride);
  source('k', facts.k);
  source('direction', facts.direction);
  if (facts.sizeBounds !== undefined) fields.push('sizeBoundsAt', 'sizeBoundsLen');
  if (facts.startMode === 1 && shape.temp !== 'none') fields.push('offsetsAt');
  return fields;
}

function orderedBitsFn(keyType: TopKKernelFacts['keyType']): string {
  if (keyType === 'f32') {
    return `fn orderedBits(bits: u32) -> u32 {
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; } // NaN ranks above +Infinity
  if (bits == 0x80000000u) { return 0x80000000u; } // -0 is +0
  if ((bits & 0x80000000u) != 0u) { return ~bits; }
  return bits | 0x80000000u;
}`;
  }
  return keyType === 'i32' ? 'fn orderedBits(bits: u32) -> u32 { return bits ^ 0x80000000u; }' : 'fn orderedBits(bits: u32) -> u32 { return bits; }';
}

function indexValueFn(facts: TopKKernelFacts): string {
  if (facts.valueType !== 'f32') return 'fn indexValue(i: u32) -> u32 { return i; }';
  // f32(i) rounded to nearest even by hand: WGSL leaves the rounding of inexact conversions open.
  return `fn indexValue(i: u32) -> u32 {
  if (i < 0x1000000u) { return bitcast<u32>(f32(i)); }
  var drop = 8u - countLeadingZeros(i);
  var mantissa = i >> drop;
  let rest = i & ((1u << drop) - 1u);
  let half = 1u << (drop - 1u);
  if (rest > half || (rest == half && (mantissa & 1u) == 1u)) { mantissa += 1u; }
  if (mantissa == 0x1000000u) { mantissa = 0x800000u; drop += 1u; }
  return ((127u + 23u + drop) << 23u) | (mantissa & 0x7fffffu);
}`;
}

function countFn(dtype: 'u32' | 'i32' | 'f32'): string {
  return `count${dtype.toUpperCase()}`;
}

/** WGSL reading a source: `index` is the segment (per-segment) or ignored. */
function readSource(name: string, fact: SourceFact, index: string): string {
  switch (fact.kind) {
    case 'constant':
      return `${fact.value}u`;
    case 'uniform':
      return `u.${name}`;
    case 'device':
      return `${countFn(fact.dtype)}(blockWord(u.${name}At, u.${name}Len, 0u))`;
    case 'perSegment':
      return `${countFn(fact.dtype)}(blockWord(u.${name}At, u.${name}Len, ${index}))`;
  }
}

function directionFn(facts: TopKKernelFacts): string {
  const fact = facts.direction;
  if (fact.kind === 'constant' || fact.kind === 'uniform') {
    return `fn segmentDirectionOf(i: u32) -> u32 { return ${fact.kind === 'constant' ? `${fact.value}u` : 'u.direction'}; }`;
  }
  const options = facts.directionOfOption.length > 0 ? facts.directionOfOption : [0];
  const last = options.length - 1;
  const table = `array<u32, ${options.length}>(${options.map((o) => `${o === 1 ? 1 : 0}u`).join(', ')})`;
  return `const directionOfOption = ${table};
fn segmentDirectionOf(i: u32) -> u32 { return directionOfOption[min(${readSource('direction', fact, 'i')}, ${last}u)]; }`;
}

function startExpr(facts: TopKKernelFacts, shape: KernelShape): string {
  if (facts.startMode === 1) {
    if (shape.temp === 'none') throw new Error('internal: packed per-segment sizes need the offsets slot bound');
    return shape.temp === 'atomic' ? 'atomicLoad(&temp[u.offsetsAt + i])' : 'temp[u.offsetsAt + i]';
  }
  if (facts.startMode === 2) return `mulSat(i, ${readSource('stride', facts.stride!, '0u')})`;
  return 'mulSat(i, size)';
}

function branchExpr(facts: TopKKernelFacts, shape: KernelShape): string {
  if (shape.branch === 'none') return 'true';
  // The CPU twin's singleTileBranch().
  let singleTile: string;
  if (facts.sizeBounds === undefined) singleTile = facts.hasSingleTile ? 'true' : 'false';
  else if (!facts.hasSingleTile) singleTile = 'false';
  else if (!facts.hasRadix) singleTile = 'true';
  else singleTile = `(${countFn(facts.sizeBounds)}(blockWord(u.sizeBoundsAt, u.sizeBoundsLen, 1u)) <= ${facts.tileItems}u)`;
  return shape.branch === 'single-tile' ? singleTile : `!${singleTile}`;
}

/** The shared WGSL of a kernel of this shape. */
export function topKPreamble(facts: TopKKernelFacts, shape: KernelShape): string {
  const block = needsBlock(facts);
  const parts: string[] = [
    `const SENTINEL: u32 = ${hex(sentinelIndex)};`,
    orderedBitsFn(facts.keyType),
    'fn orderedKey(bits: u32, direction: u32) -> u32 { return orderedBits(bits) ^ (0u - direction); }',
    `fn keyFill(direction: u32) -> u32 { return select(${hex(keyFillBits(facts.keyType, 'max'))}, ${hex(keyFillBits(facts.keyType, 'min'))}, direction == 1u); }`,
    `const VALUE_FILL: u32 = ${hex(valueFillBits(facts.valueType))};`,
    indexValueFn(facts),
    'fn mulSat(a: u32, b: u32) -> u32 { if (b != 0u && a > 0xffffffffu / b) { return 0xffffffffu; } return a * b; }',
    'fn addSat(a: u32, b: u32) -> u32 { let s = a + b; return select(s, 0xffffffffu, s < a); }',
    // Counts as the CPU twin's countOf: NaN and negatives are 0, floats floored, at most 2^32 - 1.
    'fn countU32(bits: u32) -> u32 { return bits; }',
    'fn countI32(bits: u32) -> u32 { return select(bits, 0u, bits >= 0x80000000u); }',
    `fn countF32(bits: u32) -> u32 {
  if ((bits & 0x7fffffffu) > 0x7f800000u || (bits & 0x80000000u) != 0u) { return 0u; }
  let f = bitcast<f32>(bits);
  if (f >= 4294967296.0) { return 0xffffffffu; }
  return u32(floor(f));
}`,
  ];
  if (block) parts.push('fn blockWord(at: u32, len: u32, i: u32) -> u32 { if (i < len) { return block[at + i]; } return 0u; }');
  parts.push(
    `fn activeSegments() -> u32 { return min(${readSource('numSegments', facts.numSegments, '0u')}, u.maxSegments); }`,
    `fn segmentSizeOf(i: u32) -> u32 { return ${readSource('segmentSize', facts.sizes, 'i')}; }`,
    `fn segmentKOf(i: u32) -> u32 { return ${readSource('k', facts.k, 'i')}; }`,
    directionFn(facts),
    `fn failed() -> bool { return ${facts.validates ? 'block[0] != 0u' : 'false'}; }`,
    'struct Segment { start: u32, size: u32, k: u32, take: u32, direction: u32, go: u32 }',
  );
  if (facts.stride !== undefined) parts.push(`fn strideValue() -> u32 { return ${readSource('stride', facts.stride, '0u')}; }`);
  if (!shape.blockWritable) {
    parts.push(`fn resolveSegment(i: u32, capacity: u32) -> Segment {
  var size = segmentSizeOf(i);
  let start = min(${startExpr(facts, shape)}, u.keysLength);
  size = min(min(size, u.keysLength - start), capacity);
  let k = min(segmentKOf(i), u.kMax);
  return Segment(start, size, k, min(k, size), segmentDirectionOf(i), 1u);
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

/**
 * A workgroup bitonic sort of entries [0, p), p = count rounded up to a power of two, best first.
 * The kernel defines `entryBefore(a, b)` (entry a ranks before entry b) and `swapEntries(a, b)`, and
 * pads entries [count, p) so they rank last. `count` must be workgroup-uniform.
 */
export const bitonicSortWgsl = `fn bitonicSort(count: u32, lid: u32) {
  var p = 1u;
  while (p < count) { p = p << 1u; }
  for (var size = 2u; size <= p; size = size << 1u) {
    for (var stride = size >> 1u; stride > 0u; stride = stride >> 1u) {
      for (var t = lid; t < (p >> 1u); t += WG) {
        let i = ((t & ~(stride - 1u)) << 1u) | (t & (stride - 1u));
        let l = i + stride;
        if (entryBefore(l, i) == ((i & size) == 0u)) { swapEntries(i, l); }
      }
      workgroupBarrier();
    }
  }
}
fn nextPowerOfTwo(count: u32) -> u32 { var p = 1u; while (p < count) { p = p << 1u; } return p; }`;

/**
 * A workgroup inclusive scan of one word per invocation over the kernel's `scan` (WG words), with
 * `combine` (an expression of `a` and `b`); returns lid's result and leaves every result in `scan`.
 */
export function inclusiveScanWgsl(name = 'inclusiveScan', combine = 'a + b'): string {
  return `fn ${name}(value: u32, lid: u32) -> u32 {
  scan[lid] = value;
  workgroupBarrier();
  for (var offset = 1u; offset < WG; offset = offset << 1u) {
    var a = 0u;
    if (lid >= offset) { a = scan[lid - offset]; }
    workgroupBarrier();
    let b = scan[lid];
    scan[lid] = ${combine};
    workgroupBarrier();
  }
  return scan[lid];
}`;
}
