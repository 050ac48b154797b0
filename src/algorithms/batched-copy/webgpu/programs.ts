import type { ProgramBinding, WebGpuProgram } from '../../../backends/webgpu/program.js';
import { type SegmentShape, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import { StatusCode } from '../../../dispatch/problem.js';
import type { CopyKernelFacts } from './facts.js';

/*
 * The copy programs, twins of cpu/kernels.ts. Elements are moved as u32 words whatever their dtype
 * (bits unchanged: NaN payloads, -0), or as vec4<u32> where every offset and size is a known
 * multiple of 4 (the arrays are then bound as vec4<u32>: a writable buffer may not be bound twice).
 *
 * - 'team' (grid ceil(maxSegments / (WG / team))): `team` invocations per buffer.
 * - 'workgroup' (grid maxSegments): one workgroup per buffer.
 * - 'chunked' (grid ceil(maxTotalItems / chunkItems)): a chunk of the concatenated buffers per
 *   workgroup; each invocation finds the chunk's first buffer by binary search over the prefix
 *   offsets (no barrier, so a failed status may return early), then the workgroup walks the buffers
 *   that start before the chunk's end.
 * - 'check-clear', 'check-mark', 'check-scan', 'check-report': the device range and overlap check
 *   (ranges.ts states the rule; problem.ts the slot).
 */

/**
 * A copy kernel's shape: only 'chunked' asks where a buffer starts in the concatenation (the
 * 'offsets' slot, with packed per-buffer sizes); every other kernel reads a buffer's own offsets.
 */
function copyShape(facts: CopyKernelFacts, starts: boolean): SegmentShape {
  return starts && facts.startMode === 1 ? { temp: 'u32' } : { temp: 'none', starts: false };
}

function copyBindings(facts: CopyKernelFacts, shape: SegmentShape): ProgramBinding[] {
  const element = facts.vectorWidth === 4 ? 'vec4<u32>' : 'u32';
  return segmentBindings(facts, [{ name: 'source', access: 'read', element }, { name: 'destination', access: 'read_write', element }], shape);
}

/** WGSL every copy and check kernel shares: a buffer's numbers, its clamped copy, its place in the concatenation. */
function copyPreamble(facts: CopyKernelFacts, shape: SegmentShape): string {
  const concat =
    facts.startMode === 1
      ? shape.temp === 'atomic'
        ? 'atomicLoad(&temp[u.offsetsAt + i])'
        : 'temp[u.offsetsAt + i]'
      : 'mulSat(i, segmentSizeOf(0u))';
  return `${segmentPreamble(facts, shape)}
const NONE: u32 = 0xffffffffu;
const W: u32 = ${facts.vectorWidth}u;
fn sizeOf(i: u32) -> u32 { return segmentSizeOf(i); }
fn sourceOffsetOf(i: u32) -> u32 { return ${readCount('sourceOffsets', facts.sources.sourceOffsets, 'i')}; }
fn destinationOffsetOf(i: u32) -> u32 { return ${readCount('destinationOffsets', facts.sources.destinationOffsets, 'i')}; }
// Buffer i's copy (source, destination, count), cut at either array's end (the CPU twin's bufferCopy).
fn bufferCopy(i: u32) -> vec3<u32> {
  let s = min(sourceOffsetOf(i), u.sourceLength);
  let d = min(destinationOffsetOf(i), u.destinationLength);
  var c = min(min(sizeOf(i), u.sourceLength - s), u.destinationLength - d);
  c = c - c % W;
  return vec3<u32>(s, d, c);
}
${shape.starts === false ? '' : `fn concatStart(i: u32) -> u32 { return ${facts.startMode === 2 ? '0u' : concat}; }`}`;
}

/** The move loop: elements [first, to) of buffer i, invocation \`lane\` of \`step\`. */
const copyRangeWgsl = `
fn copyRange(i: u32, first: u32, to: u32, lane: u32, step: u32) {
  let r = bufferCopy(i);
  let end = min(r.z, to) / W;
  let s = r.x / W;
  let d = r.y / W;
  for (var k = first / W + lane; k < end; k += step) { destination[d + k] = source[s + k]; }
}`;

function program(facts: CopyKernelFacts, name: string, kernel: string, shape: SegmentShape, bindings: ProgramBinding[], declarations: string, main: string, uniforms: string[] = []): WebGpuProgram {
  return {
    name,
    cacheKey: `copy/${kernel}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...segmentUniforms(facts, shape), 'sourceLength', 'destinationLength', ...uniforms],
    bindings,
    preamble: copyPreamble(facts, shape),
    declarations,
    main,
  };
}

/** 'team' (team = teamSize) and 'workgroup' (team = WG): a team of invocations per buffer. */
export function teamProgram(facts: CopyKernelFacts, name: string, team: number): WebGpuProgram {
  const shape = copyShape(facts, false);
  const main = `
  let i = workgroupIndex * (WG / ${team}u) + lid / ${team}u;
  if (failed() || i >= activeSegments()) { return; }
  copyRange(i, 0u, NONE, lid % ${team}u, ${team}u);`;
  return program(facts, name, `team,${team}`, shape, copyBindings(facts, shape), copyRangeWgsl, main);
}

/** 'chunked': a chunk of the concatenated buffers per workgroup. */
export function chunkedProgram(facts: CopyKernelFacts, name: string): WebGpuProgram {
  const shape = copyShape(facts, true);
  const total = facts.startMode === 1 ? 'concatStart(n)' : 'mulSat(n, sizeOf(0u))';
  const first =
    facts.startMode === 1
      ? `var lo = 0u;
  var hi = n - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) / 2u;
    if (concatStart(mid) <= chunkStart) { lo = mid; } else { hi = mid - 1u; }
  }
  var b = lo;`
      : 'var b = chunkStart / sizeOf(0u);';
  const main = `
  if (failed()) { return; }
  let n = activeSegments();
  if (n == 0u) { return; }
  let chunkStart = mulSat(workgroupIndex, ${facts.chunkItems}u);
  let chunkEnd = min(addSat(chunkStart, ${facts.chunkItems}u), ${total});
  if (chunkStart >= chunkEnd) { return; }
  ${first}
  for (; b < n; b++) {
    let start = concatStart(b);
    if (start >= chunkEnd) { break; }
    copyRange(b, max(start, chunkStart) - start, min(addSat(start, sizeOf(b)), chunkEnd) - start, lid, WG);
  }`;
  return program(facts, name, 'chunked', shape, copyBindings(facts, shape), copyRangeWgsl, main);
}

const bitmaps = `
fn startsAt() -> u32 { return u.checkAt + 2u; }
fn sharedAt() -> u32 { return u.checkAt + 2u + u.bitmapWords; }`;

/** 'check-clear': zeroes the bitmaps; no failing buffer yet. */
export function checkClearProgram(facts: CopyKernelFacts, name: string): WebGpuProgram {
  const shape: SegmentShape = { temp: 'u32', starts: false };
  const main = `
  if (failed()) { return; }
  let w = workgroupIndex * WG + lid;
  if (w < u.checkWords) { temp[u.checkAt + w] = select(0u, NONE, w < 2u); }`;
  return program(facts, name, 'check-clear', shape, segmentBindings(facts, [], shape), '', main, ['checkAt', 'checkWords']);
}

/** 'check-mark': each buffer's ranges against its arrays; each non-empty buffer's destination start marked (a second mark sets its shared bit). */
export function checkMarkProgram(facts: CopyKernelFacts, name: string): WebGpuProgram {
  const shape: SegmentShape = { temp: 'atomic', starts: false };
  const main = `
  if (failed()) { return; }
  let i = workgroupIndex * WG + lid;
  if (i >= activeSegments()) { return; }
  let size = sizeOf(i);
  if (size == 0u) { return; }
  let d = destinationOffsetOf(i);
  if (addSat(sourceOffsetOf(i), size) > u.sourceLength || addSat(d, size) > u.destinationLength) {
    atomicMin(&temp[u.checkAt], i);
    return;
  }
  let bit = 1u << (d & 31u);
  let old = atomicOr(&temp[startsAt() + (d >> 5u)], bit);
  if ((old & bit) != 0u) { atomicOr(&temp[sharedAt() + (d >> 5u)], bit); }`;
  return program(facts, name, 'check-mark', shape, segmentBindings(facts, [], shape), bitmaps, main, ['checkAt', 'bitmapWords']);
}

/** 'check-scan': one workgroup per buffer: does its destination range hold another non-empty buffer's start? */
export function checkScanProgram(facts: CopyKernelFacts, name: string): WebGpuProgram {
  const shape: SegmentShape = { temp: 'atomic', starts: false };
  const declarations = `${bitmaps}
var<workgroup> found: atomic<u32>;`;
  const main = `
  if (lid == 0u) { atomicStore(&found, 0u); }
  workgroupBarrier();
  let i = workgroupIndex;
  var size = 0u;
  if (!failed() && atomicLoad(&temp[u.checkAt]) == NONE && i < activeSegments()) { size = sizeOf(i); }
  if (size > 0u) {
    let a = destinationOffsetOf(i);
    if (lid == 0u && (atomicLoad(&temp[sharedAt() + (a >> 5u)]) & (1u << (a & 31u))) != 0u) { atomicStore(&found, 1u); }
    let lo = a + 1u;
    let last = a + size - 1u;
    if (lo <= last) {
      for (var w = (lo >> 5u) + lid; w <= (last >> 5u); w += WG) {
        var mask = 0xffffffffu;
        if (w == (lo >> 5u)) { mask &= 0xffffffffu << (lo & 31u); }
        if (w == (last >> 5u) && (last & 31u) != 31u) { mask &= (1u << ((last & 31u) + 1u)) - 1u; }
        if ((atomicLoad(&temp[startsAt() + w]) & mask) != 0u) { atomicStore(&found, 1u); }
      }
    }
  }
  workgroupBarrier();
  if (lid == 0u && atomicLoad(&found) != 0u) { atomicMin(&temp[u.checkAt + 1u], i); }`;
  return program(facts, name, 'check-scan', shape, segmentBindings(facts, [], shape), declarations, main, ['checkAt', 'bitmapWords']);
}

/** 'check-report' (grid 1): the lowest failing buffer into the status words, and word 0 of the block, where later kernels test it. */
export function checkReportProgram(facts: CopyKernelFacts, name: string): WebGpuProgram {
  const shape: SegmentShape = { temp: 'u32', blockWritable: true, status: true, starts: false };
  const declarations = `
var<workgroup> otherBuffer: atomic<u32>;
fn report(code: u32, parameter: u32, buffer: u32, value: u32, w4: u32, w5: u32, w6: u32, w7: u32) {
  status[0] = code; status[1] = parameter; status[2] = buffer; status[3] = value;
  status[4] = w4; status[5] = w5; status[6] = w6; status[7] = w7;
  block[0] = code;
}`;
  const main = `
  if (lid == 0u) { atomicStore(&otherBuffer, NONE); }
  workgroupBarrier();
  let stop = failed();
  let past = temp[u.checkAt];
  let overlap = temp[u.checkAt + 1u];
  var a = 0u;
  var b = 0u;
  if (!stop && past == NONE && overlap != NONE) {
    a = destinationOffsetOf(overlap);
    b = a + sizeOf(overlap);
    let n = activeSegments();
    for (var j = lid; j < n; j += WG) {
      if (j != overlap && sizeOf(j) > 0u) {
        let c = destinationOffsetOf(j);
        if (c >= a && c < b) { atomicMin(&otherBuffer, j); }
      }
    }
  }
  workgroupBarrier();
  if (lid != 0u || stop) { return; }
  if (past != NONE) {
    let size = sizeOf(past);
    let s = sourceOffsetOf(past);
    if (addSat(s, size) > u.sourceLength) {
      report(${StatusCode.RangePastEnd}u, ${facts.sourceOffsetsParameter}u, past, addSat(s, size), s, u.sourceLength, 0u, 0u);
    } else {
      let d = destinationOffsetOf(past);
      report(${StatusCode.RangePastEnd}u, ${facts.destinationOffsetsParameter}u, past, addSat(d, size), d, u.destinationLength, 0u, 0u);
    }
    return;
  }
  if (overlap != NONE) {
    let j = atomicLoad(&otherBuffer);
    let c = destinationOffsetOf(j);
    report(${StatusCode.RangesOverlap}u, ${facts.destinationOffsetsParameter}u, overlap, j, a, b, c, c + sizeOf(j));
  }`;
  return program(facts, name, 'check-report', shape, segmentBindings(facts, [], shape), declarations, main, ['checkAt']);
}
