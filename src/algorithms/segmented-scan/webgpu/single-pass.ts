import type { WebGpuProgram } from '../../../backends/webgpu/program.js';
import { publishedWordsWgsl } from '../../../dispatch/published-words.js';
import { laneItems, tileItems } from '../order.js';
import type { ScanKernelFacts } from './facts.js';
import { fetchWgsl, laneWgsl, registersWgsl, vectorWgsl } from './multi-workgroup.js';
import { type ScanShape, enterSegmentWgsl, orderConstantsWgsl, scanBindings, scanPreamble, scanUniforms, tileWgsl } from './preamble.js';

/*
 * The multi-workgroup variant in one pass over the items, where every association order gives the
 * same bits (plan.ts `scanPath`): a decoupled look-back (Merrill & Garland) with fallback (the
 * "decoupled fallback" of SPAA'25), safe without forward progress between workgroups and with
 * relaxed atomics only. The CPU twin is cpu/kernels.ts `runSinglePass`.
 *
 * The `lookback` slot (problem.ts): the tile counter and every tile's two words, zeroed by the
 * executor at the start of every run (a clearBuffer in the run's encoder, before the pass).
 * 'single-pass': a workgroup takes the next tile from the counter (so a tile's predecessors were
 *   all taken by workgroups that started earlier), loads it, and publishes its aggregate (tile 0:
 *   its inclusive value, from the initial value). Then it looks back: the first `lookbackWindow`
 *   invocations read the words of as many predecessors at once, and invocation 0 folds them in from
 *   the nearest on until it meets an inclusive value, window after window. A predecessor whose words
 *   are not ready after `lookbackPolls` windows is not waited for:
 *   the whole workgroup reduces that tile from the input (the same chains as its owner, so the same
 *   aggregate), publishes it, and looks on from there. So a tile finishes whether or not its
 *   predecessors' workgroups ever run alongside it. With its carry, the tile publishes its inclusive
 *   value and writes its scan.
 *
 * Every published word stands on its own: `status << 16 | half`, the low and the high half of the
 * 32-bit value in two words, each written with atomicMax. Status only grows (0 not ready, 1
 * aggregate, 2 inclusive), and every writer of a status writes the same value (a tile's aggregate is
 * the same bits whoever reduces it), so a reader that sees the same status in both words holds both
 * halves of that status's value; no ordering between the two words is needed.
 */

/**
 * WGSL of the look-back words: publishing a value with a status, and the window of predecessors the
 * first `lookbackWindow` invocations read at once (invocation j the (j + 1)-th nearest), which
 * invocation 0 then folds in from the nearest on.
 */
const lookbackWgsl = (workgroupSize: number) => `const NOT_READY: u32 = 0u;
const AGGREGATE: u32 = 1u;
const INCLUSIVE: u32 = 2u;
var<workgroup> tileTicket: u32;
// x: 0 read the window of predecessors before tile y; 1 done, z the carry; 2 reduce tile y from the input.
var<workgroup> lookState: vec3<u32>;
var<workgroup> lookWords: array<vec2<u32>, ${workgroupSize}>;
// Words of segment s's tile t.
fn lookAt(segment: u32, t: u32) -> u32 { return u.lookbackAt + 1u + 2u * (segment * u.tiles + t); }
${publishedWordsWgsl}
fn publish(at: u32, status: u32, value: u32) {
  atomicMax(&temp[at], publishedLow(status, value));
  atomicMax(&temp[at + 1u], publishedHigh(status, value));
}
// Invocation 0's look-back: the predecessors before lookNext are still to fold in; lookAcc combines
// those from lookNext on (lookHasAcc: any); lookPolls counts the windows that stopped at the same
// predecessor not ready.
var<private> lookNext: u32;
var<private> lookAcc: u32;
var<private> lookHasAcc: bool;
var<private> lookPolls: u32;
fn lookFold(op: u32, value: u32) {
  lookAcc = select(value, combine(op, value, lookAcc), lookHasAcc);
  lookHasAcc = true;
}
// Invocation 0, after the window was read: folds in its ready words from the nearest on; the next state.
fn lookWindow(op: u32) -> vec3<u32> {
  let n = min(u.lookbackWindow, lookNext);
  var folded = 0u;
  var stop = 0u;
  for (var j = 0u; j < n; j++) {
    let w = lookWords[j];
    let status = publishedStatus(w.x, w.y);
    if (status == NOT_READY) { stop = 1u; break; }
    lookFold(op, publishedValue(w.x, w.y));
    folded++;
    // Tile 0 publishes only its inclusive value: the walk ends there at the latest.
    if (status == INCLUSIVE) { stop = 2u; break; }
  }
  lookNext -= folded;
  if (folded > 0u) { lookPolls = 0u; }
  if (stop == 2u) { return vec3<u32>(1u, 0u, lookAcc); }
  if (stop == 1u) {
    lookPolls++;
    if (lookPolls >= u.lookbackPolls) { return vec3<u32>(2u, lookNext - 1u, 0u); }
  }
  return vec3<u32>(0u, lookNext, 0u);
}`;

/** The single-pass program: tiles of the lane functions (one lane per invocation), read once; vec4 loads with `loadWords` 4. */
export function singlePassProgram(facts: ScanKernelFacts, name: string): WebGpuProgram {
  if (facts.workgroupSize * laneItems !== tileItems) throw new Error(`internal: the single-pass scan needs one lane per invocation, not workgroupSize ${facts.workgroupSize}`);
  const vector = facts.loadWords === 4;
  const shape: ScanShape = { values: true, temp: 'atomic', vector };
  const fetch = (first: string, n: string) => (vector ? `fetchFull(${first}, ${n}, direct, lid)` : `fetchTile(${first}, ${n}, lid)`);
  // A tile's aggregate into tileTotal (invocation 0), from its loads x.
  const aggregate = (x: string, first: string, n: string) => {
    const staged = `stageTile(${x}, ${first}, ${n}, s.op, lid);
      laneTotals(${n}, s.op, lid);`;
    return `${vector ? `if (direct && ${n} == TILE_ITEMS) {
      laneTotalDirect(${x}, s.op, lid);
    } else {
      ${staged}
    }` : staged}
    laneTileTotal(${n}, s.op, lid);`;
  };
  const staged = `stageTile(x, s.start + offset, n, s.op, lid);
    laneTotals(n, s.op, lid);
    laneScan(n, s.op, hasCarry, carry, lid);
    storeTileLanes(to, count, s.op, lid);`;
  const main = `
  if (lid == 0u) { tileTicket = atomicAdd(&temp[u.lookbackAt], 1u); }
  let ticket = workgroupUniformLoad(&tileTicket);
  let segment = ticket / u.tiles;
  let t = ticket % u.tiles;
  let s = enterSegment(segment, u.tiles * TILE_ITEMS, lid);
  if (s.go == 0u) { return; }
  let tiles = (s.size + TILE_ITEMS - 1u) / TILE_ITEMS;
  if (t >= tiles) { return; }
  ${vector ? 'let direct = (s.start & 3u) == 0u;' : ''}
  let offset = t * TILE_ITEMS;
  let n = min(s.size - offset, TILE_ITEMS);
  let x = ${fetch('s.start + offset', 'n')};
  ${aggregate('x', 's.start + offset', 'n')}
  var own = 0u;
  if (lid == 0u) {
    own = tileTotal;
    if (t == 0u) {
      let inclusive = select(own, combine(s.op, initialCarry(s), own), s.hasInitial != 0u);
      publish(lookAt(segment, 0u), INCLUSIVE, finishValue(s.op, inclusive));
      lookState = vec3<u32>(1u, 0u, initialCarry(s));
    } else {
      publish(lookAt(segment, t), AGGREGATE, finishValue(s.op, own));
      lookNext = t;
      lookHasAcc = false;
      lookPolls = 0u;
      lookState = vec3<u32>(0u, t, 0u);
    }
  }
  // The look-back, window after window; a predecessor not ready after lookbackPolls windows is
  // reduced here from the input, then the walk goes on before it.
  loop {
    let state = workgroupUniformLoad(&lookState);
    if (state.x == 1u) { break; }
    if (state.x == 0u) {
      if (lid < min(u.lookbackWindow, state.y)) {
        let at = lookAt(segment, state.y - 1u - lid);
        lookWords[lid] = vec2<u32>(atomicLoad(&temp[at]), atomicLoad(&temp[at + 1u]));
      }
      workgroupBarrier();
      if (lid == 0u) { lookState = lookWindow(s.op); }
      continue;
    }
    let first = s.start + state.y * TILE_ITEMS;
    let y = ${fetch('first', 'TILE_ITEMS')};
    ${aggregate('y', 'first', 'TILE_ITEMS')}
    if (lid == 0u) {
      // Tile 0 as its owner publishes it: its inclusive value, from the initial value.
      var value = finishValue(s.op, tileTotal);
      if (state.y == 0u) {
        value = finishValue(s.op, select(tileTotal, combine(s.op, initialCarry(s), tileTotal), s.hasInitial != 0u));
        publish(lookAt(segment, 0u), INCLUSIVE, value);
      } else {
        publish(lookAt(segment, state.y), AGGREGATE, value);
      }
      lookFold(s.op, value);
      lookNext = state.y;
      lookPolls = 0u;
      lookState = select(vec3<u32>(0u, state.y, 0u), vec3<u32>(1u, 0u, lookAcc), state.y == 0u);
    }
  }
  let carry = workgroupUniformLoad(&lookState).z;
  let hasCarry = t > 0u || s.hasInitial != 0u;
  if (lid == 0u && t > 0u) { publish(lookAt(segment, t), INCLUSIVE, finishValue(s.op, combine(s.op, carry, own))); }
  if (t == 0u && s.exclusive == 1u && lid == 0u) { valuesOut[s.start] = exclusiveFirst(s); }
  // An exclusive scan writes output j + 1; the segment's last inclusive value goes nowhere.
  let to = s.start + offset + s.exclusive;
  let count = min(n, s.size - offset - s.exclusive);
  ${vector ? `if (direct && n == TILE_ITEMS) {
    laneScanDirect(x, s.op, hasCarry, carry, lid);
    storeTileDirect(to, count, s.op, lid);
  } else {
    ${staged}
  }` : staged}`;
  const declarations = `
${orderConstantsWgsl}
${enterSegmentWgsl}
${tileWgsl(false, true)}
${laneWgsl(true)}
${fetchWgsl}
${vector ? `${registersWgsl}\n${vectorWgsl}` : ''}
${lookbackWgsl(facts.workgroupSize)}`;
  return {
    name,
    cacheKey: `scan/single-pass|${vector}|${JSON.stringify({ ...facts, tilesPerStep: 0 })}`,
    workgroupSize: facts.workgroupSize,
    uniforms: [...scanUniforms(facts, shape), 'tiles', 'lookbackAt', 'lookbackPolls', 'lookbackWindow'],
    bindings: scanBindings(facts, shape),
    preamble: scanPreamble(facts, shape),
    declarations,
    main,
  };
}
