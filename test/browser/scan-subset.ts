/**
 * DeviceSegmentedScan's browser subset: every variant forced once on f32 (every op and both modes per
 * segment, specials, per-segment initial values, segments across tiles), NaN / -0 / Infinity at
 * known places, i32 with device-only sizes and numSegments, and a device-only size past the values
 * under 'validate'. Outputs come back with the reference's (`referenceScan`, through the case builders).
 */
import { type Backend, type Env, type ScanPlan, type ScanVariant, DeviceSegmentedScan, env, p, scanVariants, webgpuBackend } from '../../dist/index.js';
import { type ScanCase, buildCase, makeCase, runCase, untouchedBits } from '../conformance/scan-cases.js';
import { type SubsetCase, type SubsetOutcome, compared, onBackend, violationOf } from './subset.js';
import { runWithOwnTemp } from '../conformance/common.js';

async function scanCase(backend: Backend, c: ScanCase, forced: ScanVariant[] | [undefined]): Promise<SubsetCase[]> {
  const out: SubsetCase[] = [];
  for (const variant of forced) {
    // Fresh outputs per variant (prefilled), so each run is seen writing what it writes.
    const built = buildCase(backend, c);
    try {
      const started = performance.now();
      const { plan, out: words } = await runCase(backend, built, { variant });
      out.push({ name: c.name, variant: plan.variant, forced: variant, outputs: [compared('valuesOut', words, built.expected)], ms: performance.now() - started });
    } finally {
      for (const a of built.owned) a.destroy();
    }
  }
  return out;
}

/** The scan subset on a fresh WebGPU backend. */
export function runScanSubset(): Promise<SubsetOutcome> {
  return onBackend('DeviceSegmentedScan', scanVariants, () => webgpuBackend(), async (backend) => {
    const cases: SubsetCase[] = [];
    // Sizes around lanes, workgroups and the 2048-item tile; one program serves every op and mode.
    const sizes = [0, 1, 7, 8, 9, 33, 129, 257, 2049, 40];
    const f32 = makeCase({ name: 'f32 special, every op and mode per segment', flavour: 'special', sizes, ops: ['sum', 'min', 'max'], modes: ['inclusive', 'exclusive', 'exclusive', 'inclusive'], initial: true, seed: 11 });
    cases.push(...(await scanCase(backend, f32, [...scanVariants])));

    // NaN, -0 and Infinity where the test knows the answer (the suite's 'nan-zero' case).
    const nanZero = makeCase({ name: 'NaN, -0, Infinity', sizes: [8, 8], ops: ['max', 'min'], modes: 'inclusive', opKind: 'perSegment', seed: 37 });
    const row = [0x80000000, 0x00000000, 0x7f800000, 0x7fc00001, 0x3f800000, 0xffc00002, 0xff800000, 0x80000000];
    nanZero.values.set([...row, ...row]);
    cases.push(...(await scanCase(backend, nanZero, [undefined])));

    // i32 sums that wrap, with sizes and numSegments only on the device.
    const i32 = makeCase({ name: 'i32 wrap, device-only sizes and numSegments', valueType: 'i32', flavour: 'wrap', sizes: [300, 0, 2500, 17, 1], ops: ['sum', 'max', 'min'], modes: ['exclusive', 'inclusive'], initial: true, sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 43 });
    cases.push(...(await scanCase(backend, i32, [undefined])));

    // A device-only size whose segment ends past the values: found by the device check, nothing written.
    const built = buildCase(backend, makeCase({ name: 'bad', valueType: 'i32', sizes: [5, 6], ops: ['sum', 'max'], modes: ['exclusive', 'inclusive'], initial: true, sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 127 }));
    const deviceSizes = backend.upload(new Uint32Array([5, 7]));
    built.owned.push(deviceSizes);
    built.args.segmentSizes = p.perSegment(deviceSizes, { max: 100 });
    const violation = await violationOf(
      backend,
      async () => {
        const plan = (DeviceSegmentedScan.plan as unknown as (a: unknown, e: Env) => ScanPlan)(built.args, env({ backend, requirements: { guaranteeChecks: 'validate' } }));
        await runWithOwnTemp(backend, plan);
      },
      [{ array: built.valuesOut, before: new Uint32Array(11).fill(untouchedBits) }],
    );
    for (const a of built.owned) a.destroy();
    return { cases, violation };
  });
}
