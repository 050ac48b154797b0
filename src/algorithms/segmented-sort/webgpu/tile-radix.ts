import type { BackendCapabilities } from '../../../backends/backend.js';
import type { SingleTileShape } from '../problem.js';
import { warpCountsBeforeWgsl, warpRankItemWgsl } from './radix.js';

/*
 * 'single-tile' by radix ranks (the twin of cpu/kernels.ts's single-tile sort: the same stable order
 * by (sort key, index)): one workgroup of tile / 8 invocations sorts one segment of at most a tile
 * in workgroup memory by four LSD passes over the 8-bit digits of its sort keys. Each pass ranks the
 * keys by warp-level multisplit as the radix scatter does (radix.ts `warpRank`: eight ballots of the
 * digit's bits give each lane the lanes that share its digit; a subgroup's running count of each
 * digit lives in a 16-bit half of a workgroup word, added by the digit's lowest lane and handed on by
 * a shuffle), scans the (digit, subgroup) counts in digit-major order, and places each key at its
 * digit's first place plus its digit's keys in earlier subgroups plus its rank: five barriers a pass
 * where the bitonic network takes one a step of up to four stages (21 for 4096 keys), each stage
 * comparing (key, index) pairs. The keys' bits travel with their indices (each pass takes its digit
 * of the sort key, orderedBits ^ order mask, kept in registers for the placing); places past the
 * segment take digit 255 in every pass, so they rank after every key without a ballot of which lanes
 * count; the writes take the bits from workgroup memory, in order, and a payload by index, as the
 * network's writes do. Subgroup w ranks places [w * S * ITEMS, (w + 1) * S * ITEMS), item i of lane
 * l at place w * S * ITEMS + i * S + l (S the subgroup width), in index order, so the ranks are
 * stable. The workgroup is the program's own (the executor's grid: one workgroup a segment), not the
 * policy's, whose workgroups may hold several segments of the network. Where it runs:
 * {@link tileRadixFor}.
 */

/** How a single-tile workgroup ranks by digits. */
export interface TileRadix {
  /** The device's one subgroup width. */
  readonly subgroupSize: number;
  /** Keys a lane ({@link tileRadixItems}). */
  readonly items: number;
  /** The program's workgroup, whatever the policy's: the tile / items invocations, one segment each. */
  readonly workgroupSize: number;
}

/**
 * Keys a lane of the radix ranks: 8. H200 (bench/gpu/tile-radix-probe.mjs, GPU ms, 2026-12-02,
 * BENCHMARKS.md session 39; 512 invocations of 8 keys / 256 of 16 / the bitonic network):
 * 256x4096 0.0415-0.0419 / 0.0469-0.0471 / 0.0492-0.0494; with 4 keys a lane 512x2048 took
 * 0.0485-0.0566 against the network's 0.0448, and 1024x1024 0.0473-0.0632 against 0.0398.
 */
export const tileRadixItems = 8;

/** Workgroup memory of the radix ranks on `workgroupSize` invocations (the declarations of {@link tileRadixParts}). */
export function tileRadixBytes(workgroupSize: number, subgroupSize: number): number {
  const tile = workgroupSize * tileRadixItems;
  const padded = tile + Math.ceil(tile / 32);
  const words = 2 * padded + (workgroupSize / subgroupSize) * 128 + 256 + 32 + 4;
  return words * 4;
}

/**
 * The radix ranks for a single-tile launch, or undefined where the bitonic network sorts: one
 * segment a workgroup of tile / {@link tileRadixItems} invocations, at least 128 and at most the
 * backend's (the program's own size: the policy's workgroup may hold several segments of the
 * network), every segment longer than half the tile (the host's least size: the network's cost
 * falls with the padded size, the ranks' does not), subgroups of one width (`fixedSubgroupSize`)
 * from 8 to 32 dividing the workgroup, and the arrays within the backend's workgroup memory.
 * H200 (GPU ms, BENCHMARKS.md session 40; the network on the policy's 512 invocations / the ranks
 * on 512 workgroups of 256 / on 256 of 512 holding two segments each): 512x2048 0.0445 / 0.0412 /
 * 0.0436; 1024x1024 0.0398 / 0.0396-0.0398 (128 invocations) / 0.0437-0.0441 (four a workgroup).
 */
export function tileRadixFor(
  options: { readonly shape: SingleTileShape; readonly leastSegmentSize: number },
  capabilities: Pick<BackendCapabilities, 'maxWorkgroupSize' | 'workgroupStorageBytes'>,
  subgroupSize: number | undefined,
): TileRadix | undefined {
  const { shape } = options;
  const width = subgroupSize ?? 0;
  const workgroupSize = shape.tile / tileRadixItems;
  if (!Number.isInteger(workgroupSize) || workgroupSize < 128 || workgroupSize > capabilities.maxWorkgroupSize) return undefined;
  if (width < 8 || width > 32 || (width & (width - 1)) !== 0 || workgroupSize % width !== 0) return undefined;
  if (options.leastSegmentSize * 2 <= shape.tile) return undefined;
  if (tileRadixBytes(workgroupSize, width) > capabilities.workgroupStorageBytes) return undefined;
  return { subgroupSize: width, items: tileRadixItems, workgroupSize };
}

/**
 * The radix-ranks program's declarations and entry-point body. The caller's WGSL (programs.ts)
 * defines `enterSegment(w) -> vec3<u32>` (start, size, order mask), `orderedBits`, `indexValue` and
 * binds `keysIn`, `keysOut` (and `valuesIn`, `valuesOut` as the values need).
 */
export function tileRadixParts(options: { readonly radix: TileRadix; readonly valueMode: 'none' | 'payload' | 'indices' }): { declarations: string; main: string; usesSubgroups: true } {
  const { valueMode } = options;
  const { subgroupSize: width, items, workgroupSize: wg } = options.radix;
  const tile = wg * items;
  const warps = wg / width;
  const chunk = width * items;
  // Subgroups whose lanes hold the 128 digit pairs' totals.
  const pairWarps = 128 / width;
  const each = (body: string) => Array.from({ length: items }, (_, i) => `{\n      const i = ${i}u;${body}\n    }`).join('\n    ');
  const value = valueMode === 'payload' ? '\n  valuesOut[start + at] = valuesIn[start + index];' : valueMode === 'indices' ? '\n  valuesOut[start + at] = indexValue(index);' : '';
  const declarations = `
fn rankPlace(p: u32) -> u32 { return p + (p >> 5u); }
// Place \`at\` of the sorted segment: the key's bits from workgroup memory (consecutive words), its value by index.
fn writeSorted(start: u32, at: u32, bits: u32, index: u32) {
  keysOut[start + at] = bits;${value}
}
// The keys' bits and their indices, by place; one padding word per 32.
var<workgroup> rankKeys: array<u32, ${tile + Math.ceil(tile / 32)}>;
var<workgroup> rankIndices: array<u32, ${tile + Math.ceil(tile / 32)}>;
// Subgroup w's count of digit d: the half d >> 7 of word w * 128 + (d & 127).
var<workgroup> warpCounts: array<atomic<u32>, ${warps * 128}>;
var<workgroup> digitFirst: array<u32, 256>;
var<workgroup> pairSums: array<u32, 32>;
var<workgroup> enteredTile: vec3<u32>;`;
  const main = `
  if (lid == 0u) { enteredTile = enterSegment(workgroupIndex); }
  let s = workgroupUniformLoad(&enteredTile);
  let start = s.x;
  let size = s.y;
  let mask = s.z;
  if (size == 0u) { return; }
  let warp = lid / ${width}u;
  let lane = subgroupLane;
  let lanesBelow = (1u << lane) - 1u;
  var keys: array<u32, ${items}>;
  var indices: array<u32, ${items}>;
  var digits: array<u32, ${items}>;
  var ranks: array<u32, ${items}>;
  // Item i of lane l of subgroup w: place w * ${chunk} + i * ${width} + l, in index order.
  ${each(`
      let p = warp * ${chunk}u + i * ${width}u + lane;
      indices[i] = p;
      keys[i] = 0u;
      if (p < size) { keys[i] = keysIn[start + p]; }`)}
  for (var c = lid; c < ${warps * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }
  workgroupBarrier();
  for (var shift = 0u; shift < 32u; shift += 8u) {
    ${each(`
      // Places past the segment (indices from size on) take digit 255 in every pass: they rank after
      // every key, in index order, and are never written.
      let d = select(((orderedBits(keys[i]) ^ mask) >> shift) & 255u, 255u, indices[i] >= size);
      digits[i] = d;
      ${warpRankItemWgsl(width, true)}`)}
    workgroupBarrier();
    // Invocation q < 128: digits q and q + 128 (both halves at once). Each subgroup's count becomes
    // the digit's keys in earlier subgroups; the pairs' totals are scanned over q.
    var pairTotal = 0u;
    if (lid < 128u) {
      ${warpCountsBeforeWgsl(warps, 'lid', 'pairTotal')}
    }
    let pairBefore = subgroupExclusiveAdd(pairTotal);
    let pairSum = subgroupAdd(pairTotal);
    if (lane == 0u && warp < ${pairWarps}u) { pairSums[warp] = pairSum; }
    workgroupBarrier();
    if (lid < 128u) {
      var first = pairBefore;
      var lows = 0u;
      for (var w = 0u; w < ${pairWarps}u; w++) {
        let part = pairSums[w];
        if (w < warp) { first += part; }
        lows += part & 0xffffu;
      }
      digitFirst[lid] = first & 0xffffu;
      digitFirst[lid + 128u] = lows + (first >> 16u);
    }
    workgroupBarrier();
    ${each(`
      let d = digits[i];
      let earlier = (atomicLoad(&warpCounts[warp * 128u + (d & 127u)]) >> ((d >> 7u) * 16u)) & 0xffffu;
      let to = rankPlace(digitFirst[d] + earlier + ranks[i]);
      rankKeys[to] = keys[i];
      rankIndices[to] = indices[i];`)}
    workgroupBarrier();
    if (shift < 24u) {
      ${each(`
      let p = warp * ${chunk}u + i * ${width}u + lane;
      keys[i] = rankKeys[rankPlace(p)];
      indices[i] = rankIndices[rankPlace(p)];`)}
      for (var c = lid; c < ${warps * 128}u; c += WG) { atomicStore(&warpCounts[c], 0u); }
      workgroupBarrier();
    }
  }
  for (var p = lid; p < size; p += WG) { writeSorted(start, p, rankKeys[rankPlace(p)], rankIndices[rankPlace(p)]); }`;
  return { declarations, main, usesSubgroups: true };
}
