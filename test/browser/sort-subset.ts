/**
 * DeviceSegmentedSort's browser subset: every variant forced once on f32 (specials, order per
 * segment, indices as values), NaN / -0 / +0 at known places, i32 with ties and device-only sizes
 * and numSegments, and a device-only size outside its bounds under 'validate'. Outputs come back with
 * the reference's (`referenceSegmentedSort`, through the case builders).
 */
import { type Backend, type Env, type SegmentedSortPlan, type SegmentedSortVariant, DeviceSegmentedSort, env, segmentedSortVariants, webgpuBackend } from '../../dist/index.js';
import { runWithOwnTemp, untouchedBits } from '../conformance/common.js';
import { type SortCase, buildSortCase, makeSortCase, runSortCase } from '../conformance/sort-cases.js';
import { type SubsetCase, type SubsetOutcome, compared, onBackend, violationOf } from './subset.js';

async function sortCase(backend: Backend, c: SortCase, forced: SegmentedSortVariant[] | [undefined]): Promise<SubsetCase[]> {
  const out: SubsetCase[] = [];
  for (const variant of forced) {
    const built = buildSortCase(backend, c);
    try {
      const started = performance.now();
      const { plan, keys, values } = await runSortCase(backend, built, { variant });
      const outputs = [compared('keysOut', keys, built.expected.keys)];
      if (values !== undefined) outputs.push(compared('valuesOut', values, built.expected.values));
      out.push({ name: c.name, variant: plan.variant, forced: variant, outputs, ms: performance.now() - started });
    } finally {
      for (const a of built.owned) a.destroy();
    }
  }
  return out;
}

const alternating = (n: number) => Array.from({ length: n }, (_, i): 'ascending' | 'descending' => (i % 3 === 1 ? 'descending' : 'ascending'));

/** The sort subset on a fresh WebGPU backend. */
export function runSortSubset(): Promise<SubsetOutcome> {
  return onBackend('DeviceSegmentedSort', segmentedSortVariants, () => webgpuBackend(), async (backend) => {
    const cases: SubsetCase[] = [];
    // Segments that fit one tile, so that every variant applies.
    const small = [0, 1, 2, 3, 17, 0, 255, 256, 257, 1000];
    const f32 = makeSortCase({ name: 'f32 special, order per segment', keyType: 'f32', flavour: 'special', sizes: small, orders: alternating(small.length), seed: 3 });
    cases.push(...(await sortCase(backend, f32, [...segmentedSortVariants])));

    // NaN sorts as the largest key; -0 and +0 are equal and keep their input order (the suite's case).
    const nanZero = makeSortCase({ name: 'NaN, -0, +0', sizes: [7, 7], orders: ['ascending', 'descending'], orderKind: 'perSegment', seed: 13 });
    const row = [0x7fc00001, 0x80000000, 0x00000000, 0x3f800000, 0xbf800000, 0xffc00002, 0x80000000];
    nanZero.keys = new Uint32Array([...row, ...row]);
    cases.push(...(await sortCase(backend, nanZero, [undefined])));

    // i32 ties (stability) past one tile, with sizes and numSegments only on the device.
    const i32 = makeSortCase({ name: 'i32 ties, device-only sizes and numSegments', keyType: 'i32', flavour: 'ties', sizes: [3, 2500, 0, 900], orders: alternating(4), sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 31 });
    cases.push(...(await sortCase(backend, i32, [undefined])));

    // A device-only size outside its static bounds: found by the device check, nothing written.
    const bad = makeSortCase({ name: 'bad', keyType: 'i32', sizes: [3, 9, 2], orders: alternating(3), sizeKind: 'perSegment-device', sizeBounds: { min: 0, max: 8 }, numSegmentsKind: 'device', seed: 59 });
    const built = buildSortCase(backend, bad);
    const violation = await violationOf(
      backend,
      async () => {
        const plan = (DeviceSegmentedSort.plan as unknown as (a: unknown, e: Env) => SegmentedSortPlan)(built.args, env({ backend, requirements: { guaranteeChecks: 'validate' } }));
        await runWithOwnTemp(backend, plan);
      },
      [
        { array: built.keysOut, before: new Uint32Array(14).fill(untouchedBits) },
        { array: built.valuesOut!, before: new Uint32Array(14).fill(untouchedBits) },
      ],
    );
    for (const a of built.owned) a.destroy();
    return { cases, violation };
  });
}
