import type { DType } from '../backend.js';
import { type ScalarSource, type SegmentSource, type SegmentedRun, ceilLog2 } from '../../dispatch/problem.js';
import type { ProgramBinding } from './program.js';

/*
 * WGSL every kernel of a segmented algorithm shares, generated from the run's static facts: how a
 * parameter is read (a baked constant, a uniform, or a word of the device block), counts as the CPU
 * twin's `countOf`, saturating arithmetic, the status test, and where segment i starts and ends
 * (`segmentExtent`, the CPU twin's `SegmentedContext.extent`). An algorithm's preamble adds its own.
 *
 * Conventions:
 * - the device block (`block`) holds, from word 0: the status word (written by 'validate'), then
 *   every device-only input the run reads, copied in by the executor; `<name>At` / `<name>Len`
 *   uniforms locate them, and reads past `Len` give 0 (as reads past a device array do on the CPU);
 * - a parameter named `p` is the uniform `u.p` (uniform), or `pAt`/`pLen` in the block (device);
 *   the segment sizes are `segmentSize`, the stride `stride`;
 * - temporary-storage slot `s` starts at word `u.sAt` of the `temp` binding.
 */

/** How a kernel reads one value: baked, a uniform, or device words (one, or one per segment). */
export type SourceFact =
  | { readonly kind: 'constant'; readonly value: number }
  | { readonly kind: 'uniform' }
  | { readonly kind: 'device'; readonly dtype: 'u32' | 'i32' | 'f32' }
  | { readonly kind: 'perSegment'; readonly dtype: 'u32' | 'i32' | 'f32' };

/** The static facts of a segmented run that every kernel is specialized on. */
export interface SegmentKernelFacts {
  readonly numSegments: SourceFact;
  readonly sizes: SourceFact;
  readonly stride: SourceFact | undefined;
  /** 0: start = i * size; 1: start from slot `offsets`; 2: start = i * stride. */
  readonly startMode: 0 | 1 | 2;
  /** The algorithm's own parameters, by name. A constant's value is a count (`countOf`). */
  readonly sources: Readonly<Record<string, SourceFact>>;
  /** A validate kernel runs first: later kernels exit on a non-zero status. */
  readonly validates: boolean;
  /** dtype of the device-only segment-size bounds, when there are any. */
  readonly sizeBounds: 'u32' | 'i32' | 'f32' | undefined;
  readonly workgroupSize: number;
  /**
   * With the size order (SegmentedProblem.sizeOrder): log2 of the segment-size bound rounded up to
   * a power of two, the largest size class (dispatch/problem.ts `sizeOrderClass`); else undefined.
   */
  readonly sizeOrderLog?: number;
}

/** How a kernel binds the run's temporary storage. */
export type TempAccess = 'none' | 'u32' | 'atomic';

/** A number as a count, as the CPU twin's `countOf`: integers in [0, 2^32 - 1], negatives and NaN 0. */
export function countOf(value: number): number {
  return value > 0 ? (value >= 4294967295 ? 4294967295 : Math.floor(value)) : 0;
}

function numericDtype(dtype: DType): 'u32' | 'i32' | 'f32' {
  return dtype === 'u8' ? 'u32' : dtype;
}

/** The static fact of a source: a constant's value is baked (as a count). */
export function sourceFact(source: ScalarSource | SegmentSource): SourceFact {
  switch (source.kind) {
    case 'constant':
      return { kind: 'constant', value: countOf(source.value) };
    case 'uniform':
      return { kind: 'uniform' };
    case 'device':
      return { kind: 'device', dtype: numericDtype(source.array.dtype) };
    case 'perSegment':
      return { kind: 'perSegment', dtype: numericDtype(source.array.dtype) };
  }
}

/** The segment facts of a run. */
export function segmentKernelFacts(run: SegmentedRun, workgroupSize: number): SegmentKernelFacts {
  const { problem } = run;
  const sizes = sourceFact(problem.segmentSizes);
  const sources: Record<string, SourceFact> = {};
  for (const [name, source] of Object.entries(problem.sources)) sources[name] = sourceFact(source);
  return {
    numSegments: sourceFact(problem.numSegments),
    sizes,
    stride: problem.layout.kind === 'strided' ? sourceFact(problem.layout.stride) : undefined,
    startMode: problem.layout.kind === 'strided' ? 2 : sizes.kind === 'perSegment' ? 1 : 0,
    sources,
    validates: run.status !== undefined,
    sizeBounds: problem.segmentSizeDeviceBounds === undefined ? undefined : numericDtype(problem.segmentSizeDeviceBounds.dtype),
    workgroupSize,
    ...(problem.sizeOrder === true ? { sizeOrderLog: ceilLog2(problem.maxSegmentSize) } : {}),
  };
}

const onDevice = (s: SourceFact | undefined) => s !== undefined && (s.kind === 'device' || s.kind === 'perSegment');

/** Whether kernels read the device block at all. */
export function needsBlock(facts: SegmentKernelFacts): boolean {
  return (
    facts.validates ||
    facts.sizeBounds !== undefined ||
    onDevice(facts.numSegments) ||
    onDevice(facts.sizes) ||
    onDevice(facts.stride) ||
    Object.values(facts.sources).some(onDevice)
  );
}

/** What a kernel binds besides its algorithm's arrays. */
export interface SegmentShape {
  readonly temp: TempAccess;
  /** validate binds the block read-write (it writes the status word there). */
  readonly blockWritable?: boolean;
  /** The status words, as plain words or (the spread validate kernel's) atomic words. */
  readonly status?: boolean | 'atomic';
  /**
   * False where the kernel never asks where a segment starts: no `segmentExtent`, and no offsets
   * slot to bind (a plan without 'segment-offsets' has none).
   */
  readonly starts?: boolean;
}

/** Storage bindings of a kernel: the algorithm's arrays, then temporary storage, the block and the status words. */
export function segmentBindings(facts: SegmentKernelFacts, arrays: readonly ProgramBinding[], shape: SegmentShape): ProgramBinding[] {
  const bindings = [...arrays];
  if (shape.temp !== 'none') bindings.push({ name: 'temp', access: 'read_write', element: shape.temp === 'atomic' ? 'atomic<u32>' : 'u32' });
  if (needsBlock(facts)) bindings.push({ name: 'block', access: shape.blockWritable ? 'read_write' : 'read', element: 'u32' });
  if (shape.status) bindings.push({ name: 'status', access: 'read_write', element: shape.status === 'atomic' ? 'atomic<u32>' : 'u32' });
  return bindings;
}

/** The uniforms a source needs: its value (uniform) or its place in the block (device). */
function sourceUniforms(name: string, fact: SourceFact | undefined): string[] {
  if (fact === undefined) return [];
  if (fact.kind === 'uniform') return [name];
  if (fact.kind === 'device' || fact.kind === 'perSegment') return [`${name}At`, `${name}Len`];
  return [];
}

/** Uniform fields every kernel of this shape reads (the kernel adds its own). */
export function segmentUniforms(facts: SegmentKernelFacts, shape: SegmentShape): string[] {
  const fields = ['maxSegments', 'itemsLength'];
  fields.push(...sourceUniforms('numSegments', facts.numSegments), ...sourceUniforms('segmentSize', facts.sizes), ...sourceUniforms('stride', facts.stride));
  for (const [name, fact] of Object.entries(facts.sources)) fields.push(...sourceUniforms(name, fact));
  if (facts.sizeBounds !== undefined) fields.push('sizeBoundsAt', 'sizeBoundsLen');
  if (facts.startMode === 1 && shape.temp !== 'none' && shape.starts !== false) fields.push('offsetsAt');
  return fields;
}

function countFn(dtype: 'u32' | 'i32' | 'f32'): string {
  return `count${dtype.toUpperCase()}`;
}

/** WGSL reading a source as a count (`countOf`); `index` is the segment (per-segment) or ignored. */
export function readCount(name: string, fact: SourceFact, index: string): string {
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

/**
 * WGSL reading a source's raw 32 bits (a device element as stored; a constant or uniform as the
 * executor wrote it); `index` is the segment (per-segment) or ignored.
 */
export function readBits(name: string, fact: SourceFact, index: string, constantBits: (value: number) => number = (v) => v): string {
  switch (fact.kind) {
    case 'constant':
      return `0x${(constantBits(fact.value) >>> 0).toString(16)}u`;
    case 'uniform':
      return `u.${name}`;
    case 'device':
      return `blockWord(u.${name}At, u.${name}Len, 0u)`;
    case 'perSegment':
      return `blockWord(u.${name}At, u.${name}Len, ${index})`;
  }
}

function startExpr(facts: SegmentKernelFacts, temp: TempAccess): string {
  if (facts.startMode === 1) {
    if (temp === 'none') throw new Error('internal: packed per-segment sizes need the offsets slot bound');
    return temp === 'atomic' ? 'atomicLoad(&temp[u.offsetsAt + i])' : 'temp[u.offsetsAt + i]';
  }
  if (facts.startMode === 2) return `mulSat(i, ${readCount('stride', facts.stride!, '0u')})`;
  return 'mulSat(i, size)';
}

/** The shared WGSL of a kernel of this shape. */
export function segmentPreamble(facts: SegmentKernelFacts, shape: SegmentShape): string {
  const parts: string[] = [
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
  if (needsBlock(facts)) parts.push('fn blockWord(at: u32, len: u32, i: u32) -> u32 { if (i < len) { return block[at + i]; } return 0u; }');
  parts.push(
    `fn activeSegments() -> u32 { return min(${readCount('numSegments', facts.numSegments, '0u')}, u.maxSegments); }`,
    `fn segmentSizeOf(i: u32) -> u32 { return ${readCount('segmentSize', facts.sizes, 'i')}; }`,
    `fn failed() -> bool { return ${facts.validates ? 'block[0] != 0u' : 'false'}; }`,
  );
  if (facts.stride !== undefined) parts.push(`fn strideValue() -> u32 { return ${readCount('stride', facts.stride, '0u')}; }`);
  if (!shape.blockWritable && shape.starts !== false) {
    parts.push(`// Segment i's start and size, clamped to the items and to capacity (the CPU twin's extent()).
fn segmentExtent(i: u32, capacity: u32) -> vec2<u32> {
  var size = segmentSizeOf(i);
  let start = min(${startExpr(facts, shape.temp)}, u.itemsLength);
  size = min(min(size, u.itemsLength - start), capacity);
  return vec2<u32>(start, size);
}`);
  }
  if (facts.sizeOrderLog !== undefined && shape.temp !== 'none' && shape.starts !== false) {
    const word = 'temp[u.offsetsAt + u.maxSegments + 1u + w]';
    parts.push(`// The segment a workgroup's w-th place holds: by size, largest first ('segment-offsets' wrote the order).
fn segmentAt(w: u32) -> u32 {
  if (w >= activeSegments()) { return w; }
  return ${shape.temp === 'atomic' ? `atomicLoad(&${word})` : word};
}`);
  }
  return parts.join('\n');
}
