/**
 * The single-pass scan's carry from the unit totals (a unit: 2048 tile totals), worked out alone: on
 * a segment of more than 2048 tiles, each tile's carry starts from output V - 1 of the scan of the
 * unit totals before its unit, in the canonical order one level up (order.ts). The CPU twin advances
 * that scan a unit at a time (`unitsCarryBits`), the WGSL works it out directly (`unitsCarry`); both
 * must give the reference scan's bits for every count of units a segment can have before a tile
 * (1 to 255, across the lanes of 8 and the groups of 16 that long segments alone reach), f32 sums
 * of values whose order shows in the rounding, with and without an initial value.
 *
 * No adapter: in CI (process.env.CI set) the WebGPU half fails; elsewhere it is skipped and says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { f32SumWgsl } from '../src/backends/webgpu/numerics.js';
import { unitsCarryBits } from '../src/algorithms/segmented-scan/cpu/kernels.js';
import { laneItems, groupLanes } from '../src/algorithms/segmented-scan/order.js';
import { maxCarryUnits } from '../src/algorithms/segmented-scan/problem.js';
import { referenceScan } from '../src/algorithms/segmented-scan/reference.js';
import { unitsCarryWgsl } from '../src/algorithms/segmented-scan/webgpu/single-pass.js';
import { type WebGpuBackend, webgpuBackend } from '../src/index.js';
import { rng } from './helpers.js';
import { describeOnWebGpu } from './webgpu-adapter.js';
import { runShader } from './webgpu-shader.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]!);
const valueOf = (bits: number) => ((u32[0] = bits), f32[0]!);
const flush = (x: number) => (x !== 0 && Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x);
/** The canonical f32 addition (order.ts): rounded, then flushed. */
const add = (a: number, b: number) => bitsOf(flush(Math.fround(valueOf(a) + valueOf(b))));

/** Unit totals of many magnitudes and both signs (so that the order of additions shows), and the initial values. */
const random = rng(71);
const units = Uint32Array.from({ length: maxCarryUnits }, () => bitsOf((random() - 0.5) * 10 ** Math.floor(random() * 12 - 4)));
const initials: (number | undefined)[] = [undefined, bitsOf(0.1), bitsOf(-3e7)];

/** The reference: output count - 1 of the canonical scan of the first `count` unit totals. */
function expected(count: number, initial: number | undefined): number {
  const out = referenceScan({
    valueType: 'f32',
    values: units.subarray(0, count),
    segmentStarts: [0],
    segmentSizes: [count],
    ops: ['sum'],
    modes: ['inclusive'],
    initialValues: [initial],
    outputBefore: new Uint32Array(count),
  });
  return out[count - 1]!;
}

const counts = Array.from({ length: maxCarryUnits - 1 }, (_, i) => i + 1);

describe('the units carry on the CPU', () => {
  it(`every count from 1 to ${maxCarryUnits - 1} (lanes of ${laneItems}, groups of ${groupLanes}), with and without an initial value`, () => {
    for (const initial of initials) {
      for (const count of counts) {
        expect(unitsCarryBits(add, initial !== undefined, initial ?? 0, [...units.subarray(0, count)]), `count ${count}, initial ${initial}`).toBe(expected(count, initial));
      }
    }
  });
});

const describeCarry = await describeOnWebGpu('the single-pass scan units carry');

/** One workgroup per count: invocation 0 copies the unit totals into unitWords and works out the carry. */
const shader = (initial: number | undefined) => `${f32SumWgsl}
const LANE_ITEMS: u32 = ${laneItems}u;
const GROUP_LANES: u32 = ${groupLanes}u;
@group(0) @binding(0) var<storage, read> totals: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
var<workgroup> unitWords: array<u32, ${maxCarryUnits}>;
fn combine(op: u32, a: u32, b: u32) -> u32 { return addF32(a, b); }
${unitsCarryWgsl}
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) id: vec3<u32>) {
  for (var i = 0u; i < ${maxCarryUnits}u; i++) { unitWords[i] = totals[i]; }
  out[id.x] = unitsCarry(0u, ${initial !== undefined}, ${initial ?? 0}u, id.x + 1u);
}`;

describeCarry('the units carry on WebGPU', () => {
  let backend: WebGpuBackend;
  beforeAll(async () => {
    backend = await webgpuBackend();
  });
  afterAll(() => backend?.destroy());

  it(`every count from 1 to ${maxCarryUnits - 1}, with and without an initial value: the reference's bits`, async () => {
    for (const initial of initials) {
      const got = await runShader(backend.device, shader(initial), [units], counts.length, counts.length);
      const wrong = counts.filter((count) => got[count - 1] !== expected(count, initial));
      expect(wrong, `initial ${initial}`).toEqual([]);
    }
  });
});
