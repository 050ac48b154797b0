import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { ScanKernelFacts } from './facts.js';
import { type ScanShape, enterSegmentWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms, tileWgsl } from './preamble.js';

/*
 * 'multi-workgroup': reduce, then scan (safe on every WebGPU device: no workgroup waits for another,
 * so nothing depends on forward progress between workgroups). Workgroups of a tile launch take
 * segment w / tiles, tile w % tiles. The CPU twins are cpu/kernels.ts `runTileReduce` ... `runTileScan`.
 *
 * - 'tile-reduce': each tile's total -> `tileTotals`;
 * - 'spine-reduce' (segments of more than 2048 tiles): each 2048 tile totals' total -> `spineTotals`;
 * - 'spine-top': `spineTotals` scanned in place from the initial value;
 * - 'spine-scan': each 2048 tile totals scanned in place from their carry (the initial value, or the
 *   scanned spine total before them): word t - 1 is then tile t's carry;
 * - 'tile-scan': each tile scanned from its carry and written (one place on for an exclusive scan).
 *
 * Uniforms `tiles` and `spineTiles`: workgroups per segment of the tile and spine launches.
 */

export type MultiWorkgroupKernel = 'tile-reduce' | 'spine-reduce' | 'spine-top' | 'spine-scan' | 'tile-scan';

const bodies: Record<MultiWorkgroupKernel, { values: boolean; main: string }> = {
  'tile-reduce': {
    values: true,
    main: `
  let segment = workgroupIndex / u.tiles;
  let t = workgroupIndex % u.tiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let offset = t * TILE_ITEMS;
  if (offset >= s.size) { return; }
  let n = min(s.size - offset, TILE_ITEMS);
  loadTileItems(s.start + offset, n, s.op, lid);
  tileTotals(n, s.op, lid);
  if (lid == 0u) { temp[u.tileTotalsAt + segment * u.tiles + t] = finishValue(s.op, tileTotal); }`,
  },
  'spine-reduce': {
    values: false,
    main: `
  let segment = workgroupIndex / u.spineTiles;
  let v = workgroupIndex % u.spineTiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let offset = v * TILE_ITEMS;
  if (offset >= tiles) { return; }
  let n = min(tiles - offset, TILE_ITEMS);
  loadTileWords(u.tileTotalsAt + segment * u.tiles + offset, n, lid);
  tileTotals(n, s.op, lid);
  if (lid == 0u) { temp[u.spineTotalsAt + segment * u.spineTiles + v] = finishValue(s.op, tileTotal); }`,
  },
  'spine-top': {
    values: false,
    main: `
  let segment = workgroupIndex;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let n = min((tiles + TILE_ITEMS - 1u) / TILE_ITEMS, u.spineTiles);
  if (n == 0u) { return; }
  let at0 = u.spineTotalsAt + segment * u.spineTiles;
  loadTileWords(at0, n, lid);
  tileTotals(n, s.op, lid);
  tileScan(n, s.op, s.hasInitial != 0u, initialCarry(s), lid);
  storeTileWords(at0, n, s.op, lid);`,
  },
  'spine-scan': {
    values: false,
    main: `
  let segment = workgroupIndex / u.spineTiles;
  let v = workgroupIndex % u.spineTiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  let offset = v * TILE_ITEMS;
  if (offset >= tiles) { return; }
  let n = min(tiles - offset, TILE_ITEMS);
  let at0 = u.tileTotalsAt + segment * u.tiles + offset;
  var carry = initialCarry(s);
  SPINE_CARRY
  loadTileWords(at0, n, lid);
  tileTotals(n, s.op, lid);
  tileScan(n, s.op, v > 0u || s.hasInitial != 0u, carry, lid);
  storeTileWords(at0, n, s.op, lid);`,
  },
  'tile-scan': {
    values: true,
    main: `
  let segment = workgroupIndex / u.tiles;
  let t = workgroupIndex % u.tiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let offset = t * TILE_ITEMS;
  if (offset >= s.size) { return; }
  let n = min(s.size - offset, TILE_ITEMS);
  if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }
  var carry = initialCarry(s);
  if (t > 0u) { carry = temp[u.tileTotalsAt + segment * u.tiles + t - 1u]; }
  loadTileItems(s.start + offset, n, s.op, lid);
  tileTotals(n, s.op, lid);
  tileScan(n, s.op, t > 0u || s.hasInitial != 0u, carry, lid);
  // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
  storeTileItems(s.start + offset + s.exclusive, min(n, s.size - offset - s.exclusive), s.op, lid);`,
  },
};

/**
 * The program of one multi-workgroup kernel for these facts; `spine`: the plan has `spineTotals`
 * (segments of more than 2048 tiles).
 */
export function multiWorkgroupProgram(kernel: MultiWorkgroupKernel, facts: ScanKernelFacts, name: string, spine: boolean): WebGpuProgram {
  const body = bodies[kernel];
  const main = body.main.replace('SPINE_CARRY', spine ? 'if (v > 0u) { carry = temp[u.spineTotalsAt + segment * u.spineTiles + v - 1u]; }' : '');
  const shape: ScanShape = { values: body.values, temp: 'u32' };
  const declarations = `
${orderConstantsWgsl}
${enterSegmentWgsl}
${tileWgsl(true, body.values)}`;
  return {
    name,
    cacheKey: `scan/${kernel}|${spine}|${JSON.stringify(facts)}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...scanUniforms(facts, shape), 'tiles', 'spineTiles', 'tileTotalsAt', ...(spine && kernel !== 'tile-reduce' && kernel !== 'tile-scan' ? ['spineTotalsAt'] : [])],
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
