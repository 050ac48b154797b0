import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import type { TopKKernelFacts } from './facts.js';
import { enterRadixSegment, radixProgram } from './radix-common.js';

/*
 * A selection past the tile, written in index order over every tile of its segment (radix-plan.ts;
 * the CPU twin is cpu/radix-select.ts `runRadixCompactCount`, `runRadixCompactWrite`). Finalize left
 * in the segment's state the selection's threshold T (ordered key bits) and how many keys equal to
 * T are taken (the smallest indices first; all of them, 0xffffffff, where the filters selected the
 * whole take and T is the least key they selected): every key above T is selected.
 *
 * - 'radix-compact-count' (grid maxSegments * tiles): tile t's keys above T and equal to T, into
 *   words 2 (segment * tiles + t) and + 1 of `compactCounts`;
 * - 'radix-compact-write' (grid maxSegments * tiles): the keys above T and equal to T in the earlier
 *   tiles added up (a workgroup's invocations share the tiles), then the tile in runs of consecutive
 *   keys an invocation, whose two counts (packed in 16 bits each: a tile holds fewer than 65536
 *   keys) one workgroup scan turns into the counts before each run. A key above T goes to place
 *   (keys above T before it) + min(keys equal to T before it, ties); one equal to T, while fewer
 *   than `ties` equal keys come before it, to (keys above T before it) + (equal keys before it).
 *   Tile 0's workgroup writes the fills past the take.
 */

/** The compaction's state words (radix-common.ts declares their offsets), as the workgroup reads them once. */
const compactInfoWgsl = 'var<workgroup> compactInfo: vec3<u32>;';

/** Enters tile `tile` of segment `segment` where the compaction is pending; leaves `info` (pending, T, ties) and the tile's keys [begin, end). */
const enterTile = `
  let segment = workgroupIndex / u.tiles;
  let tile = workgroupIndex % u.tiles;${enterRadixSegment('segment')}
  if (lid == 0u) {
    compactInfo = vec3<u32>(atomicLoad(&temp[state + STATE_COMPACT]), atomicLoad(&temp[state + STATE_COMPACT_T]), atomicLoad(&temp[state + STATE_COMPACT_TIES]));
  }
  let info = workgroupUniformLoad(&compactInfo);
  if (info.x == 0u) { return; }
  let threshold = info.y;
  let begin = min(s.size, tile * RADIX_TILE);
  let end = min(s.size, begin + RADIX_TILE);`;

/** The 'radix-compact-count' program. */
export function radixCompactCountProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const declarations = `${compactInfoWgsl}
var<workgroup> tileAbove: atomic<u32>;
var<workgroup> tileEqual: atomic<u32>;`;
  const main = `${enterTile}
  var above = 0u;
  var equal = 0u;
  for (var j = begin + lid; j < end; j += WG) {
    let key = orderedKey(keysIn[s.start + j], s.direction);
    above += select(0u, 1u, key > threshold);
    equal += select(0u, 1u, key == threshold);
  }
  if (above != 0u) { atomicAdd(&tileAbove, above); }
  if (equal != 0u) { atomicAdd(&tileEqual, equal); }
  workgroupBarrier();
  if (lid == 0u) {
    let at = u.compactCountsAt + 2u * (segment * u.tiles + tile);
    atomicStore(&temp[at], atomicLoad(&tileAbove));
    atomicStore(&temp[at + 1u], atomicLoad(&tileEqual));
  }`;
  return withCounts(radixProgram('radix-compact-count', facts, name, { keys: true, outputs: false }, declarations, main));
}

/** The 'radix-compact-write' program. */
export function radixCompactWriteProgram(facts: TopKKernelFacts, name: string): WebGpuProgram {
  const run = Math.ceil(facts.radixTileItems / facts.workgroupSize);
  const declarations = `${compactInfoWgsl}
const RUN: u32 = ${run}u;
var<workgroup> aboveBefore: atomic<u32>;
var<workgroup> equalBefore: atomic<u32>;`;
  const main = `${enterTile}
  let ties = info.z;
  // The keys above T and equal to T in the segment's earlier tiles.
  let counts = u.compactCountsAt + 2u * segment * u.tiles;
  var above = 0u;
  var equal = 0u;
  for (var t = lid; t < tile; t += WG) {
    above += atomicLoad(&temp[counts + 2u * t]);
    equal += atomicLoad(&temp[counts + 2u * t + 1u]);
  }
  if (above != 0u) { atomicAdd(&aboveBefore, above); }
  if (equal != 0u) { atomicAdd(&equalBefore, equal); }
  // This invocation's run of RUN consecutive keys: above T in the low 16 bits, equal in the high.
  let first = begin + lid * RUN;
  var mine = 0u;
  for (var r = 0u; r < RUN; r++) {
    let j = first + r;
    if (j < end) {
      let key = orderedKey(keysIn[s.start + j], s.direction);
      mine += select(0u, 1u, key > threshold) + select(0u, 0x10000u, key == threshold);
    }
  }
  // The scan's barriers also order the atomics above before their reads.
  let before = inclusiveScan(mine, lid) - mine;
  var a = atomicLoad(&aboveBefore) + (before & 0xffffu);
  var e = atomicLoad(&equalBefore) + (before >> 16u);
  let out = segment * u.kMax;
  for (var r = 0u; r < RUN; r++) {
    let j = first + r;
    if (j < end) {
      let key = orderedKey(keysIn[s.start + j], s.direction);
      if (key > threshold) {
        let at = a + min(e, ties);
        if (at < s.take) { writeResult(out + at, s.start, j); }
        a += 1u;
      } else if (key == threshold) {
        if (e < ties && a + e < s.take) { writeResult(out + a + e, s.start, j); }
        e += 1u;
      }
    }
  }
  if (tile == 0u) {
    for (var j = s.take + lid; j < u.kMax; j += WG) { writeFill(out + j, s.direction); }
  }`;
  return withCounts(radixProgram('radix-compact-write', facts, name, { keys: true, outputs: true }, declarations, main));
}

/** The program with the `compactCounts` slot's uniform. */
const withCounts = (program: WebGpuProgram): WebGpuProgram => ({ ...program, uniforms: [...program.uniforms, 'compactCountsAt'] });
