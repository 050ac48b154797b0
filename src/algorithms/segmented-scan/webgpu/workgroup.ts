import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { tileLanes } from '../order.js';
import type { ScanKernelFacts } from './facts.js';
import { fetchWgsl, laneWgsl } from './multi-workgroup.js';
import { type ScanShape, enterSegmentWgsl, levelsWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms, tileWgsl } from './preamble.js';

/*
 * 'workgroup' (grid maxSegments): workgroup w scans segment w tile after tile. Each tile is loaded,
 * its totals taken and scanned from its carry in workgroup memory (`tileTotals`, `tileScan`), then
 * written; invocation 0 advances the upper levels of the canonical order with the tile's total
 * (`ingest1`), which gives the next tile's carry. The CPU twin is cpu/kernels.ts `runWorkgroup`.
 */

const genericLoop = `for (var offset = 0u; offset < n; offset += TILE_ITEMS) {
    let count = min(n - offset, TILE_ITEMS);
    loadTileItems(s.start + offset, count, s.op, lid);
    tileTotals(count, s.op, lid);
    let carry = workgroupUniformLoad(&tileCarry);
    tileScan(count, s.op, carry.x != 0u, carry.y, lid);
    storeTileItems(s.start + offset + s.exclusive, count, s.op, lid);
    if (lid == 0u) { tileCarry = vec2<u32>(1u, ingest1(s.op, tileTotal)); }
  }`;

// One lane per invocation (multi-workgroup.ts laneWgsl): the next tile's loads in flight while this one is added up.
const laneLoop = `var v = fetchTile(s.start, min(n, TILE_ITEMS), lid);
  for (var offset = 0u; offset < n; offset += TILE_ITEMS) {
    let count = min(n - offset, TILE_ITEMS);
    stageTile(v, s.start + offset, count, s.op, lid);
    if (offset + TILE_ITEMS < n) { v = fetchTile(s.start + offset + TILE_ITEMS, min(n - offset - TILE_ITEMS, TILE_ITEMS), lid); }
    laneTotals(count, s.op, lid);
    let carry = workgroupUniformLoad(&tileCarry);
    laneScan(count, s.op, carry.x != 0u, carry.y, lid);
    storeTileLanes(s.start + offset + s.exclusive, count, s.op, lid);
    if (lid == 0u) { tileCarry = vec2<u32>(1u, ingest1(s.op, tileTotal)); }
  }`;

/** The workgroup program for these facts. */
export function workgroupProgram(facts: ScanKernelFacts, name: string): WebGpuProgram {
  const shape: ScanShape = { values: true, temp: facts.startMode === 1 ? 'u32' : 'none' };
  const declarations = `
${orderConstantsWgsl}
${enterSegmentWgsl}
${levelsWgsl(2)}
${tileWgsl(false, true)}
${facts.workgroupSize === tileLanes ? `${laneWgsl(true)}\n${fetchWgsl}` : ''}
var<workgroup> tileCarry: vec2<u32>;`;
  const lanes = facts.workgroupSize === tileLanes;
  const main = `
  let s = enterSegment(workgroupIndex, 0xffffffffu, lid);
  if (s.go == 0u || s.size == 0u) { return; }
  if (lid == 0u) {
    if (s.exclusive == 1u) { valuesOut[s.start] = exclusiveFirst(s); }
    startLevel(1u, s.hasInitial != 0u, initialCarry(s));
    tileCarry = vec2<u32>(s.hasInitial, initialCarry(s));
  }
  // An exclusive scan needs the inclusive outputs of all items but the last, written one place on.
  let n = s.size - s.exclusive;
  ${lanes ? laneLoop : genericLoop}`;
  return {
    name,
    cacheKey: `scan/workgroup|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: scanUniforms(facts, shape),
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
