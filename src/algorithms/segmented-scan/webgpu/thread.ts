import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { ScanKernelFacts } from './facts.js';
import { type ScanShape, levelsWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms } from './preamble.js';

/*
 * 'thread' (grid ceil(maxSegments / WG)): invocation lid of workgroup w scans segment w * WG + lid
 * alone, item after item through the levels of the canonical order (`ingest0`), so an f32 sum has
 * the bits every other variant gives. The CPU twin is cpu/kernels.ts `runThread`.
 */

/** The thread program for these facts. */
export function threadProgram(facts: ScanKernelFacts, name: string): WebGpuProgram {
  const shape: ScanShape = { values: true, temp: facts.startMode === 1 ? 'u32' : 'none' };
  const declarations = `
${orderConstantsWgsl}
${levelsWgsl(3)}`;
  const main = `
  let segment = workgroupIndex * WG + lid;
  if (failed() || segment >= activeSegments()) { return; }
  let s = resolveSegment(segment, 0xffffffffu);
  if (s.size == 0u) { return; }
  if (s.exclusive == 1u) { valuesOut[s.start] = exclusiveFirst(s); }
  startLevel(0u, s.hasInitial != 0u, initialCarry(s));
  let n = s.size - s.exclusive;
  let to = s.start + s.exclusive;
  for (var j = 0u; j < n; j++) {
    valuesOut[to + j] = finishValue(s.op, ingest0(s.op, loadValue(s.op, valuesIn[s.start + j])));
  }`;
  return {
    name,
    cacheKey: `scan/thread|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: scanUniforms(facts, shape),
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
