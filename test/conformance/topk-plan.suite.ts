/**
 * Plan lifecycle, run on every backend from the conformance suite: host per-segment arrays are
 * copied when planned, a plan exposes its output layout, plans and the environment API release
 * their device memory, device-only guarantee violations are reported without a read-back per run,
 * and the environment API reuses what it safely can.
 */
import { describe, expect, it } from 'vitest';
import {
  type Backend,
  type DeviceArray,
  type Env,
  type TopKPlan,
  DeviceBatchedTopK,
  GuaranteeViolationError,
  SegkitRangeError,
  SegkitUsageError,
  env,
  p,
} from '../../src/index.js';
import { type BuiltCase, bits, buildCase, makeCase, untouchedBits } from './topk-cases.js';

const planOf = DeviceBatchedTopK.plan as unknown as (args: unknown, e: Env) => TopKPlan;
const selectOf = DeviceBatchedTopK.select as unknown as (args: unknown, e: Env) => Promise<void>;

/** Defines the plan-lifecycle tests; `backendOf` gives the suite's backend, `makeBackend` a fresh one. */
export function defineTopKPlanLifecycle(backendOf: () => Backend, makeBackend: () => Promise<Backend>): void {
  async function outputs(backend: Backend, built: BuiltCase) {
    const keys = bits(await backend.download(built.keysOut));
    const values = built.valuesOut === undefined ? undefined : bits(await backend.download(built.valuesOut));
    return { keys, values };
  }
  async function expectUntouched(backend: Backend, built: BuiltCase) {
    const { keys, values } = await outputs(backend, built);
    expect([...keys].every((b) => b === untouchedBits), 'keysOut untouched').toBe(true);
    if (values !== undefined) expect([...values].every((b) => b === untouchedBits), 'valuesOut untouched').toBe(true);
  }
  async function runPlan(backend: Backend, plan: TopKPlan) {
    const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
    try {
      await plan.run(temp);
      await backend.synchronize();
    } finally {
      temp?.destroy();
    }
  }
  /** Temporary storage per plan, kept across its runs (freed by `destroyAll`). */
  const temps = new Map<TopKPlan, DeviceArray<'u8'>>();
  const submit = (backend: Backend, plan: TopKPlan): Promise<void> => {
    let temp = temps.get(plan);
    if (temp === undefined && plan.tempStorageBytes > 0) temps.set(plan, (temp = backend.alloc('u8', plan.tempStorageBytes)));
    return plan.run(temp);
  };
  const destroyAll = (arrays: DeviceArray[]) => {
    for (const temp of temps.values()) temp.destroy();
    temps.clear();
    for (const a of arrays) a.destroy();
  };

  describe('host per-segment arrays are copied when planned', () => {
    it('a plan runs the values it was made with: k, sizes and directions changed afterwards do not reach it', async () => {
      const backend = backendOf();
      const c = makeCase({ name: 'copied', sizes: [5, 6, 7], k: [1, 1, 2], kBound: 2, directions: ['max', 'min', 'max'], seed: 201 });
      const built = buildCase(backend, c);
      const plan = planOf(built.args, env({ backend }));
      // k past its bounds, a segment past the end of keysIn, a direction flipped: none of them may run.
      c.k[1] = 99;
      c.sizes[1] = 1000;
      c.sizes[0] = 3;
      c.directions[0] = 'min';
      await runPlan(backend, plan);
      const { keys, values } = await outputs(backend, built);
      expect(keys).toEqual(built.expected.keys);
      expect(values).toEqual(built.expected.values);
      expect(Array.from(plan.facts.k.hostValues ?? [])).toEqual([1, 1, 2]);
      expect(Array.from(plan.facts.segmentSizes.hostValues ?? [])).toEqual([5, 6, 7]);
      plan.destroy();
      destroyAll(built.owned);
    });

    it('select sees the change: a value now outside its bounds or past keysIn is rejected, outputs untouched; valid new values are used', async () => {
      const backend = backendOf();
      const c = makeCase({ name: 'select-copied', sizes: [5, 6, 7], k: [1, 1, 2], kBound: 2, seed: 203 });
      c.sizeBounds = { min: 0, max: 100 };
      const built = buildCase(backend, c);
      const environment = env({ backend });
      await selectOf(built.args, environment);
      const first = await outputs(backend, built);
      expect(first.keys).toEqual(built.expected.keys);
      c.k[1] = 99;
      const error = await selectOf(built.args, environment).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SegkitRangeError);
      expect((error as Error).message).toBe('k[1]: 99 is outside the static bounds [1, 2]');
      c.k[1] = 1;
      c.sizes[2] = 8;
      await expect(selectOf(built.args, environment)).rejects.toThrow('segmentSizes[2]: segment 2 ends at 19, past the 18 keys of keysIn');
      expect(await outputs(backend, built)).toEqual(first);
      // Valid new contents in the same arrays: planned from them.
      c.sizes[0] = 3;
      c.sizes[1] = 8;
      c.sizes[2] = 7;
      await selectOf(built.args, environment);
      const moved = buildCase(backend, { ...c, sizes: [3, 8, 7] });
      expect((await outputs(backend, built)).keys).toEqual(moved.expected.keys);
      destroyAll([...built.owned, ...moved.owned]);
    });
  });

  describe('the output layout', () => {
    it('plan.kMax and plan.outputLength say where results go', () => {
      const backend = backendOf();
      const keysIn = backend.upload(new Float32Array(100));
      const keysOut = backend.alloc('f32', 40);
      const base = { keysIn, keysOut, segmentSizes: p.constant(10), selectDirection: p.constantOption('max'), numSegments: p.uniform(10) };
      const perSegment = planOf({ ...base, k: p.perSegment([1, 2, 3, 4, 1, 2, 3, 4, 1, 2], { min: 1, max: 4 }) }, env({ backend }));
      expect(perSegment.kMax).toBe(4);
      expect(perSegment.outputLength).toBe(40);
      const narrowed = planOf({ ...base, k: p.perSegment([1, 2, 1, 2, 1, 2, 1, 2, 1, 2], { min: 1, max: 4 }, { min: 1, max: 2 }) }, env({ backend }));
      expect(narrowed.kMax).toBe(2);
      expect(narrowed.outputLength).toBe(20);
      expect(narrowed.explain()).toContain("Outputs: 20 elements of keysOut; segment i's results at [i * 2, i * 2 + min(k_i, size_i))");
      // A device-only number of segments: as many as the outputs hold, up to its static max.
      const count = backend.upload(new Uint32Array([3]));
      const deviceCount = planOf({ ...base, k: p.constant(3), numSegments: p.uniform(count, { min: 0, max: 100 }) }, env({ backend }));
      expect(deviceCount.kMax).toBe(3);
      expect(deviceCount.outputLength).toBe(39);
      destroyAll([keysIn, keysOut, count]);
    });

    it('k without an upper bound says which bound to add; outputs too short say how long they must be', () => {
      const backend = backendOf();
      const keysIn = backend.upload(new Float32Array(40));
      const keysOut = backend.alloc('f32', 8);
      const base = { keysIn, keysOut, segmentSizes: p.constant(10), selectDirection: p.constantOption('max'), numSegments: p.constant(4) };
      const unbounded = () => planOf({ ...base, k: p.perSegment([1, 2, 1, 2]) }, env({ backend }));
      expect(unbounded).toThrow(SegkitRangeError);
      expect(unbounded).toThrow(
        "k: has no upper bound (4294967295), and the output width kMax (slots per segment in keysOut/valuesOut) is k's upper bound: add one, e.g. p.perSegment(ks, { min: 1, max: 8 }), host runtime bounds as the third argument of p.perSegment, or env({ guarantees: { maxK: 8 } })",
      );
      const kOnDevice = backend.upload(new Uint32Array([2]));
      expect(() => planOf({ ...base, k: p.uniform(kOnDevice) }, env({ backend }))).toThrow(/k: has no upper bound \(4294967295\).*e\.g\. p\.uniform\(kOnDevice, \{ min: 1, max: 8 \}\)/);
      // The guarantee is enough.
      expect(planOf({ ...base, k: p.perSegment([1, 2, 1, 2]) }, env({ backend, guarantees: { maxK: 2 } })).kMax).toBe(2);
      expect(() => planOf({ ...base, k: p.perSegment([1, 2, 1, 2], { min: 1, max: 3 }) }, env({ backend }))).toThrow(
        "keysOut: needs numSegments * kMax = 4 * 3 = 12 elements (kMax: k's static max; plan.outputLength); has 8",
      );
      destroyAll([keysIn, keysOut, kOnDevice]);
    });
  });

  describe('plans and the environment API release their device memory', () => {
    it('plan.destroy() frees what the plan holds; a destroyed plan does not run', async () => {
      const backend = backendOf();
      const c = makeCase({ name: 'destroy', sizes: [5, 6, 7], k: [1, 2, 3], kBound: 3, kKind: 'perSegment', sizeKind: 'perSegment-device', seed: 207 });
      const built = buildCase(backend, c);
      const before = backend.stats().liveArrays;
      const plan = planOf(built.args, env({ backend }));
      expect(backend.stats().liveArrays).toBe(before); // planning does no device work
      await runPlan(backend, plan);
      await runPlan(backend, plan);
      expect(backend.stats().liveArrays).toBeGreaterThan(before); // k's copy, status words, their report
      expect(plan.destroyed).toBe(false);
      plan.destroy();
      plan.destroy();
      expect(plan.destroyed).toBe(true);
      await backend.synchronize();
      expect(backend.stats().liveArrays).toBe(before);
      await expect(plan.run()).rejects.toThrow(SegkitUsageError);
      await expect(plan.run()).rejects.toThrow('plan: this plan was destroyed (plan.destroy()) and cannot run; make a new one');
      destroyAll(built.owned);
    });

    it('1000 selects on fresh args objects leave live device arrays flat (host arrays, device-only values, validation)', async () => {
      const backend = backendOf();
      const sizes = [40, 50, 60, 70];
      const keysIn = backend.upload(new Float32Array(220).map((_, i) => Math.sin(i)));
      const keysOut = backend.alloc('f32', 4 * 3);
      const valuesOut = backend.alloc('i32', 4 * 3);
      const deviceSizes = backend.upload(new Uint32Array(sizes));
      const environment = env({ backend });
      const fresh = (i: number) => ({
        keysIn,
        keysOut,
        valuesOut,
        // A new host array every call: a new plan every call, so the cache must let old ones go.
        segmentSizes: i % 2 === 0 ? p.perSegment([...sizes], { min: 0, max: 100 }) : p.perSegment(deviceSizes, { min: 0, max: 100 }),
        k: p.perSegment([1 + (i % 3), 2, 3, 1], { min: 1, max: 3 }),
        selectDirection: p.constantOption('max'),
        numSegments: p.constant(4),
      });
      const liveAfter = async (from: number, to: number) => {
        for (let i = from; i < to; i++) await selectOf(fresh(i), environment);
        await backend.synchronize();
        return backend.stats();
      };
      const warm = await liveAfter(0, 100);
      const soaked = await liveAfter(100, 1000);
      expect(soaked.liveArrays).toBe(warm.liveArrays);
      expect(soaked.liveBytes).toBe(warm.liveBytes);
      destroyAll([keysIn, keysOut, valuesOut, deviceSizes]);
    }, 120_000);

    it('backend.destroy() frees the plans and temporary storage the environment API keeps', async () => {
      const backend = await makeBackend();
      const c = makeCase({ name: 'env-destroy', sizes: [3000, 10, 2500], k: [5, 1, 40], kBound: 40, sizeKind: 'perSegment-device', seed: 211 });
      const built = buildCase(backend, c);
      const environment = env({ backend });
      await selectOf(built.args, environment);
      await selectOf(built.args, env({ backend, tuning: { variant: 'radix-select' } }));
      expect((await outputs(backend, built)).keys).toEqual(built.expected.keys);
      destroyAll(built.owned);
      expect(backend.stats().liveArrays).toBeGreaterThan(0);
      backend.destroy();
      expect(backend.stats()).toMatchObject({ liveArrays: 0, liveBytes: 0 });
    });
  });

  describe("'validate' reports violations without a read-back per run", () => {
    function violating(backend: Backend, name: string, seed: number) {
      // Segment 1's k (9) breaks the static bounds [1, 4]; only the device knows it.
      return buildCase(backend, makeCase({ name, sizes: [5, 6, 7], k: [1, 9, 2], kBound: 4, kKind: 'perSegment-device', seed }));
    }
    function expectViolation(error: unknown) {
      expect(error).toBeInstanceOf(GuaranteeViolationError);
      const violation = error as GuaranteeViolationError;
      expect(violation.message).toBe('k[1]: 9 is outside the static bounds [1, 4] (found on the device)');
      expect([violation.parameter, violation.segment, violation.value, violation.bounds]).toEqual(['k', 1, 9, { min: 1, max: 4 }]);
    }

    it('run resolves at submit with no download; the next synchronize rejects once, outputs untouched', async () => {
      const backend = backendOf();
      const built = violating(backend, 'deferred-sync', 301);
      const plan = planOf(built.args, env({ backend }));
      backend.resetStats();
      for (let i = 0; i < 20; i++) await submit(backend, plan);
      expect(backend.stats().downloads).toBe(0);
      expectViolation(await backend.synchronize().catch((e: unknown) => e));
      expect(backend.stats().downloads).toBeGreaterThanOrEqual(1);
      expect(backend.stats().downloads).toBeLessThanOrEqual(2); // one per report array: 8 slots, then 16
      await backend.synchronize(); // reported once
      await expectUntouched(backend, built);
      plan.destroy();
      destroyAll(built.owned);
    });

    it('a download rejects with it too, and plan.checked() reports its own runs', async () => {
      const backend = backendOf();
      const built = violating(backend, 'deferred-download', 303);
      const plan = planOf(built.args, env({ backend }));
      await submit(backend, plan);
      expectViolation(await backend.download(built.keysOut).catch((e: unknown) => e));
      await expectUntouched(backend, built);
      await submit(backend, plan);
      expectViolation(await plan.checked().catch((e: unknown) => e));
      await plan.checked();
      await backend.synchronize(); // plan.checked() took it
      const valid = buildCase(backend, makeCase({ name: 'checked-valid', sizes: [5, 6], k: [1, 2], kKind: 'perSegment-device', seed: 305 }));
      const validPlan = planOf(valid.args, env({ backend }));
      await submit(backend, validPlan);
      await validPlan.checked();
      expect((await outputs(backend, valid)).keys).toEqual(valid.expected.keys);
      plan.destroy();
      validPlan.destroy();
      destroyAll([...built.owned, ...valid.owned]);
    });

    it('back-to-back runs of several plans: every valid run writes, the earliest violation is reported, later violating runs write nothing', async () => {
      const backend = backendOf();
      const good = buildCase(backend, makeCase({ name: 'b2b-good', sizes: [30, 20], k: [3, 2], kBound: 4, kKind: 'perSegment-device', seed: 307 }));
      const bad = violating(backend, 'b2b-bad', 309);
      const sizes = buildCase(backend, makeCase({ name: 'b2b-sizes', sizes: [5, 6, 7], k: 2, sizeKind: 'perSegment-device-bounds', seed: 311 }));
      // Narrow the device runtime bounds below segment 2's size: a violation of another kind, later.
      const narrowed = backend.upload(new Uint32Array([5, 6]));
      sizes.owned.push(narrowed);
      sizes.args.segmentSizes = p.perSegment((sizes.args.segmentSizes as { values: DeviceArray }).values, { min: 0, max: 7 }, narrowed);
      const environment = env({ backend });
      const [goodPlan, badPlan, sizesPlan] = [good, bad, sizes].map((b) => planOf(b.args, environment));
      // Many runs before anything is read: the report arrays fill and grow.
      for (let i = 0; i < 30; i++) await submit(backend, goodPlan!);
      await submit(backend, badPlan!);
      await submit(backend, sizesPlan!);
      await submit(backend, goodPlan!);
      expectViolation(await backend.synchronize().catch((e: unknown) => e));
      await backend.synchronize();
      expect((await outputs(backend, good)).keys).toEqual(good.expected.keys);
      await expectUntouched(backend, bad);
      await expectUntouched(backend, sizes);
      // The sizes violation was read in the same settle, where only the earliest is thrown; a new run is
      // reported by the plan's own check.
      await submit(backend, sizesPlan!);
      const error = await sizesPlan!.checked().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GuaranteeViolationError);
      expect((error as Error).message).toBe('segmentSizes[2]: 7 is outside the device runtime bounds [5, 6] (found on the device)');
      for (const plan of [goodPlan, badPlan, sizesPlan]) plan!.destroy();
      destroyAll([...good.owned, ...bad.owned, ...sizes.owned]);
    });

    it('select reports a violation at the next synchronize; a destroyed plan still reports runs already submitted', async () => {
      const backend = backendOf();
      const built = violating(backend, 'select-deferred', 313);
      await selectOf(built.args, env({ backend }));
      expectViolation(await backend.synchronize().catch((e: unknown) => e));
      const plan = planOf(built.args, env({ backend }));
      await submit(backend, plan);
      plan.destroy();
      expectViolation(await backend.synchronize().catch((e: unknown) => e));
      await expectUntouched(backend, built);
      destroyAll(built.owned);
    });
  });

  describe('the environment API reuses what it safely can', () => {
    it('host per-segment arrays are uploaded once while they hold the same values, for the same or fresh args objects', async () => {
      const backend = backendOf();
      const c = makeCase({ name: 'reuse', sizes: [50, 60, 70, 80], k: [1, 4, 2, 3], kBound: 4, directions: ['max', 'min', 'min', 'max'], seed: 401 });
      const built = buildCase(backend, c);
      const environment = env({ backend });
      await selectOf(built.args, environment);
      backend.resetStats();
      for (let i = 0; i < 10; i++) await selectOf(built.args, environment);
      for (let i = 0; i < 10; i++) await selectOf({ ...built.args }, environment);
      expect(backend.stats().uploads).toBe(0);
      expect(backend.stats().launches).toBeGreaterThanOrEqual(20);
      expect((await outputs(backend, built)).keys).toEqual(built.expected.keys);
      // A changed value is planned (and uploaded) again.
      c.k[0] = 4;
      await selectOf({ ...built.args }, environment);
      expect(backend.stats().uploads).toBeGreaterThan(0);
      const changed = buildCase(backend, { ...c });
      expect((await outputs(backend, built)).keys).toEqual(changed.expected.keys);
      destroyAll([...built.owned, ...changed.owned]);
    });

    it('a field the planner does not know is never served from the cache: it is named, as on a first call', async () => {
      const backend = backendOf();
      const built = buildCase(backend, makeCase({ name: 'typo', sizes: [5, 6], k: [2, 1], kBound: 2, seed: 403 }));
      const environment = env({ backend });
      await selectOf(built.args, environment);
      const planned = async (args: object) => {
        backend.resetStats();
        await selectOf(args, environment);
        // A plan made afresh uploads its copy of k; a cached one does not.
        return backend.stats().uploads > 0;
      };
      expect(await planned({ ...built.args })).toBe(false);
      await expect(planned({ ...built.args, segmentStrid: p.constant(13) })).rejects.toThrow("unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
      // The same args object, with the field added after a call.
      (built.args as Record<string, unknown>).segmentStrides = p.constant(13);
      await expect(planned(built.args)).rejects.toThrow("unknown field 'segmentStrides' (did you mean 'segmentStride'?)");
      delete (built.args as Record<string, unknown>).segmentStrides;
      expect(await planned(built.args)).toBe(false);
      destroyAll(built.owned);
    });
  });
}
