/**
 * DeviceSegmentedReduce's browser subset: every variant forced once on f32 (every op per segment,
 * specials, per-segment initial values), NaN / -0 / Infinity at known places, i32 with device-only
 * sizes and numSegments, and a device-only size outside its bounds under 'validate'. Outputs come
 * back with the reference's (`referenceSegmentedReduce`, through the case builders).
 */
import { type Backend, type Env, type SegmentedReducePlan, type SegmentedReduceVariant, DeviceSegmentedReduce, env, p, segmentedReduceVariants, webgpuBackend } from '../../dist/index.js';
import { type ReduceCase, buildCase, cycleOps, freshOutputs, makeCase, runCase, untouchedBits } from '../conformance/reduce-cases.js';
import { type SubsetCase, type SubsetOutcome, compared, onBackend, violationOf } from './subset.js';
import { runWithOwnTemp } from '../conformance/common.js';

async function reduceCase(backend: Backend, c: ReduceCase, forced: SegmentedReduceVariant[] | [undefined]): Promise<SubsetCase[]> {
  const built = buildCase(backend, c);
  const out: SubsetCase[] = [];
  try {
    for (const variant of forced) {
      freshOutputs(backend, built);
      const started = performance.now();
      const { plan, values, indices } = await runCase(backend, built, { variant });
      const n = c.sizes.length;
      const outputs = [compared('values', values, built.expected.values, n)];
      if (indices !== undefined) outputs.push(compared('indices', indices, built.expected.indices, n));
      out.push({ name: c.name, variant: plan.variant, forced: variant, outputs, ms: performance.now() - started });
    }
  } finally {
    for (const a of built.owned) a.destroy();
  }
  return out;
}

/** The reduce subset on a fresh WebGPU backend. */
export function runReduceSubset(): Promise<SubsetOutcome> {
  return onBackend('DeviceSegmentedReduce', segmentedReduceVariants, () => webgpuBackend(), async (backend) => {
    const cases: SubsetCase[] = [];
    // Segments of at most 16 items, so that every variant applies; one program serves every op.
    const short = [0, 1, 2, 3, 5, 8, 15, 16, 0, 7, 16, 1];
    const initial = short.map((_, i) => (i % 4 === 1 ? -Infinity : i % 4 === 2 ? -0 : i * 1.5 - 4));
    cases.push(...(await reduceCase(backend, makeCase({ name: 'f32 special, every op per segment', flavour: 'special', sizes: short, ops: cycleOps(short.length), initial, seed: 5 }), [...segmentedReduceVariants])));

    // NaN, -0 and Infinity where the test knows the answer (the suite's 'order' case): ties go to
    // the smaller index, -0 equals +0, NaN orders above +Infinity.
    const order = makeCase({ name: 'NaN, -0, Infinity', sizes: [6, 6, 6, 6], ops: ['argMax', 'argMin', 'max', 'min'], seed: 113 });
    const row = [0x80000000, 0x7f800000, 0x7fc00001, 0x00000000, 0xffc00000, 0x80000000];
    order.values = new Uint32Array([...row, 0x80000000, 0x00000000, 0x3f800000, 0x80000000, 0x00000000, 0x3f800000, ...row, 0x00000000, 0x80000000, 0x3f800000, 0x80000000, 0x00000000, 0x3f800000]);
    cases.push(...(await reduceCase(backend, order, [undefined])));

    // i32 extremes (sums wrap) with sizes and numSegments only on the device.
    const deviceSizes = [40, 0, 300, 1, 129, 77, 256];
    const i32 = makeCase({ name: 'i32 special, device-only sizes and numSegments', valueType: 'i32', flavour: 'special', sizes: deviceSizes, ops: cycleOps(deviceSizes.length), initial: -2147483648, sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 17 });
    cases.push(...(await reduceCase(backend, i32, [undefined])));

    // A device-only size past its static bounds: found by the device check, nothing written.
    const bad = makeCase({ name: 'bad', valueType: 'i32', sizes: [3, 9, 2], ops: cycleOps(3), initial: -2147483648, sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 19 });
    const built = buildCase(backend, bad);
    const sizes = backend.upload(new Uint32Array([3, 9, 2]));
    built.owned.push(sizes);
    built.args.segmentSizes = p.perSegment(sizes, { min: 0, max: 8 });
    const violation = await violationOf(
      backend,
      async () => {
        const plan = (DeviceSegmentedReduce.plan as unknown as (a: unknown, e: Env) => SegmentedReducePlan)(built.args, env({ backend, requirements: { guaranteeChecks: 'validate' } }));
        await runWithOwnTemp(backend, plan);
      },
      [
        { array: built.valuesOut, before: new Uint32Array(3).fill(untouchedBits) },
        { array: built.indicesOut!, before: new Uint32Array(3).fill(untouchedBits) },
      ],
    );
    for (const a of built.owned) a.destroy();
    return { cases, violation };
  });
}
