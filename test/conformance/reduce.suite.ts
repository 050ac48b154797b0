/**
 * The DeviceSegmentedReduce conformance suite, written once and run on every backend: random and
 * adversarial values compared bit for bit with `referenceSegmentedReduce` (f32 sums in the canonical
 * order, and close to the float64 sum), every variant forced through tuning, every parameter kind,
 * both layouts, and bad input leaving outputs untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Backend,
  type Env,
  type SegmentedReducePlan,
  type SegmentedReducePolicy,
  type SegmentedReduceVariant,
  DeviceSegmentedReduce,
  GuaranteeViolationError,
  SegkitRangeError,
  SegkitUsageError,
  env,
  p,
  segmentedReduceVariants,
} from '../../src/index.js';
import { rng } from '../helpers.js';
import {
  type BuiltCase,
  type Flavour,
  type NumericKind,
  type OptionKind,
  type ReduceCase,
  type ValueType,
  bits,
  bitsOf,
  buildCase,
  cycleOps,
  freshOutputs,
  f32Of,
  makeCase,
  runCase,
  starts,
  untouchedBits,
} from './reduce-cases.js';

const randomSizes = (n: number, max: number, seed: number, min = 0) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => min + Math.floor(random() * (max - min + 1)));
};

/** Sizes around the tile, subgroup, workgroup and chunk boundaries, with empty segments. */
const boundarySizes = [0, 1, 31, 32, 33, 0, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 0, 8191, 8192, 8193, 16385];
/** Segments short enough for 'thread'. */
const shortSizes = [0, 1, 2, 3, 5, 8, 15, 16, 0, 7, 16, 1];

/** Per-segment initial values of a type, some of them extreme. */
function initialValues(valueType: ValueType, n: number, seed: number): number[] {
  const random = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    if (valueType === 'f32') return i % 7 === 3 ? -Infinity : i % 7 === 5 ? -0 : Math.round((random() - 0.5) * 2000) / 8;
    if (valueType === 'i32') return i % 5 === 2 ? -2147483648 : Math.floor((random() - 0.5) * 2 ** 32);
    return i % 5 === 2 ? 4294967295 : Math.floor(random() * 2 ** 32);
  });
}

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
export function defineReduceConformance(backendName: string, makeBackend: () => Promise<Backend>): void {
  describe(`DeviceSegmentedReduce conformance on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    /** Runs a built case on fresh outputs and compares every output bit with the reference; returns the plan's variant. */
    async function expectBuilt(c: ReduceCase, built: BuiltCase, variant?: SegmentedReduceVariant, policy?: Partial<SegmentedReducePolicy>): Promise<SegmentedReduceVariant> {
      freshOutputs(backend, built);
      const { plan, values, indices } = await runCase(backend, built, { variant, policy });
      const n = c.sizes.length;
      expectSameWords(values.subarray(0, n), built.expected.values, `${c.name}: values (${plan.variant})`);
      if (indices !== undefined) expectSameWords(indices.subarray(0, n), built.expected.indices, `${c.name}: indices (${plan.variant})`);
      expectCloseSums(c, built, values);
      return plan.variant;
    }

    /** Runs a case and compares every output bit with the reference; returns the plan's variant. */
    async function expectReference(c: ReduceCase, variant?: SegmentedReduceVariant, policy?: Partial<SegmentedReducePolicy>): Promise<SegmentedReduceVariant> {
      const built = buildCase(backend, c);
      try {
        return await expectBuilt(c, built, variant, policy);
      } finally {
        for (const a of built.owned) a.destroy();
      }
    }

    /** Runs a case with the natural choice and with every variant forced that applies. */
    async function expectAllVariants(c: ReduceCase, mustRun: SegmentedReduceVariant[] = []): Promise<void> {
      const built = buildCase(backend, c);
      try {
        const ran = [await expectBuilt(c, built)];
        for (const variant of segmentedReduceVariants) {
          if (variant === ran[0]) continue;
          try {
            await expectBuilt(c, built, variant);
            ran.push(variant);
          } catch (error) {
            if (!(error instanceof SegkitUsageError) || !/cannot run for these parameters/.test(error.message)) throw error;
          }
        }
        for (const v of mustRun) expect(ran, `${c.name}: variants run`).toContain(v);
      } finally {
        for (const a of built.owned) a.destroy();
      }
    }

    describe('values, ops and initial values, every variant', () => {
      const flavours: Record<ValueType, Flavour[]> = { f32: ['random', 'ties', 'special', 'wrap', 'tiny'], i32: ['random', 'ties', 'special', 'wrap'], u32: ['random', 'ties', 'special', 'wrap'] };
      let seed = 1;
      for (const valueType of ['f32', 'i32', 'u32'] as const) {
        for (const flavour of flavours[valueType]) {
          it(`${valueType} ${flavour}: every op per segment, sizes at boundaries and short`, async () => {
            for (const sizes of [boundarySizes, shortSizes]) {
              const n = sizes.length;
              await expectAllVariants(
                makeCase({ name: `${valueType}/${flavour}/${n}`, valueType, flavour, sizes, ops: cycleOps(n), initial: initialValues(valueType, n, seed), seed: seed++ }),
                sizes === shortSizes ? ['thread', 'subgroup', 'workgroup', 'multi-workgroup'] : ['subgroup', 'workgroup', 'multi-workgroup'],
              );
            }
          });
        }
      }
      it('without an initial value: identities for empty segments, index -1', async () => {
        for (const valueType of ['f32', 'i32', 'u32'] as const) {
          const sizes = [0, 0, 0, 0, 0, 3, 40, 9000];
          await expectAllVariants(makeCase({ name: `identity/${valueType}`, valueType, sizes, ops: cycleOps(sizes.length), flavour: 'special', seed: 71 }));
        }
        const built = buildCase(backend, makeCase({ name: 'identity bits', sizes: [0, 0, 0, 0, 0], ops: cycleOps(5), seed: 73 }));
        const { values, indices } = await runCase(backend, built);
        // sum, min, max, argMin, argMax of nothing: +0, +Infinity, -Infinity, +Infinity, -Infinity; no index.
        expect(hex(values)).toEqual(hex(new Uint32Array([0, 0x7f800000, 0xff800000, 0x7f800000, 0xff800000])));
        expect([...indices!].map((i) => i | 0)).toEqual([-1, -1, -1, -1, -1]);
        for (const a of built.owned) a.destroy();
      });
    });

    describe('f32 sums', () => {
      it('one long segment: the canonical bits on every variant, close to the float64 sum', async () => {
        await expectAllVariants(makeCase({ name: 'long', sizes: [200_003], ops: 'sum', initial: 0.25, seed: 79 }), ['subgroup', 'workgroup', 'multi-workgroup']);
      }, 600_000);
      it('every chunk team size and words per load give the same bits (multi-workgroup and subgroup teams)', async () => {
        // Segments starting at multiples of 4 items and not (vec4 and word loads), full and short
        // chunks, a per-segment op (the generic combine) and a constant one (the specialized one).
        const sizes = [40_000, 3, 17_001, 0, 8192, 8193, 250];
        const teams = [
          ['multi-workgroup', { chunkTeamSize: 4, extremeChunkTeamSize: 4, loadWords: 4 }],
          ['multi-workgroup', { chunkTeamSize: 32, extremeChunkTeamSize: 32, loadWords: 4 }],
          ['multi-workgroup', { chunkTeamSize: 256, extremeChunkTeamSize: 256, loadWords: 1 }],
          ['multi-workgroup', { chunkTeamSize: 64, extremeChunkTeamSize: 64, loadWords: 4, lastChunkMerges: true }],
          ['multi-workgroup', { chunkTeamSize: 16, extremeChunkTeamSize: 16, loadWords: 1, lastChunkMerges: true }],
          // Teams of several chunks: a sum's chunk trees, an extreme's strips (2 or 4 chunks).
          ['multi-workgroup', { chunkTeamSize: 64, extremeChunkTeamSize: 64, loadWords: 4, chunkRounds: 2, extremeChunkRounds: 4, lastChunkMerges: true }],
          ['multi-workgroup', { chunkTeamSize: 128, extremeChunkTeamSize: 256, loadWords: 1, chunkRounds: 4, extremeChunkRounds: 2 }],
          ['subgroup', { subgroupSize: 16, loadWords: 1 }],
          ['subgroup', { subgroupSize: 64, loadWords: 4 }],
        ] as const;
        for (const c of [
          makeCase({ name: 'teams, per-segment op', sizes, ops: ['sum', 'argMin', 'max', 'argMax', 'min', 'sum', 'argMax'], seed: 91 }),
          makeCase({ name: 'teams, argMax', sizes, ops: 'argMax', flavour: 'ties', seed: 93 }),
        ]) {
          const built = buildCase(backend, c);
          for (const [variant, policy] of teams) {
            const { plan, values, indices } = await runCase(backend, built, { variant, policy });
            expect(plan.variant).toBe(variant);
            const label = `${c.name} (${variant}, ${JSON.stringify(policy)})`;
            expectSameWords(values.subarray(0, sizes.length), built.expected.values, `${label}: values`);
            expectSameWords(indices!.subarray(0, sizes.length), built.expected.indices, `${label}: indices`);
          }
          for (const a of built.owned) a.destroy();
        }
      }, 600_000);
      it('plans of extremes alone run chunk teams of extremeChunkTeamSize, others of chunkTeamSize; explain() says which', async () => {
        const sizes = [40_000, 17_001, 8193];
        for (const [ops, why] of [
          ['argMax', 'extremeChunkTeamSize: every op is min, max, argMin or argMax'],
          [['min', 'argMax', 'max'], 'extremeChunkTeamSize: every op is min, max, argMin or argMax'],
          [['sum', 'argMax', 'max'], 'chunkTeamSize: a segment may be summed'],
        ] as const) {
          const built = buildCase(backend, makeCase({ name: `teams of ${String(ops)}`, sizes, ops: ops as never, seed: 95 }));
          const { plan, values } = await runCase(backend, built, { policy: { chunkTeamSize: 32, extremeChunkTeamSize: 64 } });
          expect(plan.variant).toBe('multi-workgroup');
          const extremes = why.startsWith('extreme');
          const team = extremes ? 64 : 32;
          // Strips of 'auto' chunks: one, where 5 chunks leave fewer than 256 partials anyway.
          const rounds = extremes ? "extremeChunkRounds auto: at most 8, and as many as still leave the longest segment's 5 chunks 256 partials" : 'chunkRounds';
          expect(plan.explain()).toContain(`teams of ${team} invocations (${why}), 1 chunk a team (${rounds}); `);
          // Plans of extremes alone merge in the chunk launch on a GPU, as sums alone do.
          const gpu = backend.capabilities.parallelism >= 128;
          expect(plan.launches.map((l) => l.kernel)).toContain(gpu && extremes ? 'chunk-merge' : 'merge');
          expectSameWords(values.subarray(0, sizes.length), built.expected.values, `${String(ops)}: values`);
          for (const a of built.owned) a.destroy();
        }
      });
      it('strips with device-only sizes: the direct branch, and long segments a strip at a time', async () => {
        // Device-only sizes: the host knows only the input's length (past multiWorkgroupMinItems, so
        // multi-workgroup). With device bounds within a chunk the kernels branch to one workgroup a
        // segment; without them teams of strips cover segments of several chunks (and many teams none).
        for (const [name, sizes, ops, sizeKind, indices, rounds] of [
          ['direct branch, max keys only', [3000, 0, 8192, 17], 'max', 'perSegment-device-bounds', 'none', 4],
          ['direct branch, argMin', [3000, 0, 8192, 17], 'argMin', 'perSegment-device-bounds', 'i32', 2],
          ['strips, argMin', [40_000, 0, 70_001, 5, 16_384], 'argMin', 'perSegment-device', 'i32', 2],
          ['strips, min keys only', [40_000, 0, 70_001, 5, 16_384], 'min', 'perSegment-device', 'none', 4],
        ] as const) {
          const c = makeCase({ name, sizes: [...sizes], ops, sizeKind, indices, flavour: 'ties', seed: 99 });
          // Static bounds past a chunk, and items past the last segment, so that the input's length
          // bounds the sizes.
          c.sizeBounds = { min: 0, max: 2 ** 20 };
          const values = new Uint32Array(Math.max(c.values.length, 40_000)).fill(0x3f800000);
          values.set(c.values);
          c.values = values;
          const built = buildCase(backend, c);
          const { plan, values: got, indices: gotIndices } = await runCase(backend, built, { policy: { extremeChunkRounds: rounds } });
          expect(plan.variant, plan.explain()).toBe('multi-workgroup');
          expect(plan.explain()).toContain(`${rounds} chunks a team (extremeChunkRounds)`);
          expectSameWords(got.subarray(0, sizes.length), built.expected.values, `${name}: values`);
          if (gotIndices !== undefined) expectSameWords(gotIndices.subarray(0, sizes.length), built.expected.indices, `${name}: indices`);
          for (const a of built.owned) a.destroy();
        }
      }, 600_000);
      it("sums alone merge in the chunk launch under lastChunkMerges 'auto'; explain() says why", async () => {
        const built = buildCase(backend, makeCase({ name: 'sums merge', sizes: [40_000, 17_001, 8193], ops: 'sum', seed: 96 }));
        const { plan, values } = await runCase(backend, built);
        // A GPU merges sums in the chunk launch; the CPU emulator (few workgroup slots) in a launch of its own.
        const slots = backend.capabilities.parallelism;
        const gpu = slots >= 128;
        expect(plan.launches.map((l) => l.kernel)).toContain(gpu ? 'chunk-merge' : 'merge');
        expect(plan.explain()).toContain(
          gpu
            ? 'teams of 128 invocations (chunkTeamSize: a segment may be summed), 1 chunk a team (chunkRounds); the last chunk workgroup of a segment merges (lastChunkMerges auto: every op is a sum)'
            : `a second launch merges (lastChunkMerges auto: ${slots} workgroup slots (the CPU emulator merges faster in a launch of its own))`,
        );
        expectSameWords(values.subarray(0, 3), built.expected.values, 'sums merge: values');
        for (const a of built.owned) a.destroy();
      });
      it('merge blocks of 8 partials: 8, 9, 16 and 17 chunks in a segment, every op', async () => {
        const chunk = 8192;
        const sizes = [8 * chunk, 8 * chunk + 1, 16 * chunk, 16 * chunk + 5];
        expect(await expectReference(makeCase({ name: 'merge blocks', sizes, ops: ['sum', 'argMax', 'min', 'argMin'], flavour: 'ties', seed: 97 }), 'multi-workgroup')).toBe('multi-workgroup');
        // Sums alone merge in the chunk launch ('auto'); the merge launch's blocks too.
        for (const lastChunkMerges of ['auto', false] as const) {
          expect(await expectReference(makeCase({ name: 'merge blocks, sum', sizes, ops: 'sum', seed: 98 }), 'multi-workgroup', { lastChunkMerges })).toBe('multi-workgroup');
        }
      }, 600_000);
      it('the chunk partials merged by the last chunk workgroup or by a merge launch: the same bits, one temporary storage for every run', async () => {
        // 'chunk-merge' meets in slots zeroed at the start of every run (arrivals, published partials):
        // after a run they hold every count at its end and every partial published, so a run that
        // did not zero them would merge nothing, or merge the previous run's partials. Two inputs of
        // the same shape take turns on one temporary storage, with the two-launch form in between.
        const chunk = 8192;
        const sizes = [0, 3 * chunk + 7, 40_000, 1, 17 * chunk, 0, 5];
        const cases = (seed: number) => [
          makeCase({ name: 'merge forms, per-segment op', sizes, ops: ['sum', 'argMax', 'min', 'argMin', 'max', 'sum', 'argMax'], flavour: 'ties', seed }),
          makeCase({ name: 'merge forms, i32 sum', valueType: 'i32', sizes, ops: 'sum', flavour: 'wrap', initial: 7, seed: seed + 1 }),
        ];
        const [first, second] = [cases(101), cases(111)];
        for (let c = 0; c < first!.length; c++) {
          const built = [buildCase(backend, first![c]!), buildCase(backend, second![c]!)];
          const planOf = (b: BuiltCase, lastChunkMerges: boolean) =>
            (DeviceSegmentedReduce.plan as unknown as (a: unknown, e: Env) => SegmentedReducePlan)(b.args, env({ backend, tuning: { variant: 'multi-workgroup', policy: { lastChunkMerges } } }));
          const runs = [
            ['first', built[0]!, planOf(built[0]!, true)],
            ['second', built[1]!, planOf(built[1]!, true)],
            ['first', built[0]!, planOf(built[0]!, false)],
            ['second', built[1]!, planOf(built[1]!, true)],
            ['first', built[0]!, planOf(built[0]!, true)],
          ] as const;
          expect(runs.slice(0, 3).map(([, , plan]) => plan.launches.map((l) => l.kernel).filter((k) => k !== 'segment-offsets'))).toEqual([['chunk-merge'], ['chunk-merge'], ['chunk', 'merge']]);
          expect(runs[0][2].explain()).toContain('(zeroed at the start of every run)');
          const temp = backend.alloc('u8', Math.max(...runs.map(([, , plan]) => plan.tempStorageBytes)));
          try {
            for (const [input, b, plan] of runs) {
              await plan.run(temp);
              const values = bits(await backend.download(b.valuesOut));
              const label = `${first![c]!.name}, ${input} input (${plan.launches.map((l) => l.kernel).join(', ')})`;
              expectSameWords(values.subarray(0, sizes.length), b.expected.values, `${label}: values`);
              if (b.indicesOut) expectSameWords(bits(await backend.download(b.indicesOut)).subarray(0, sizes.length), b.expected.indices, `${label}: indices`);
            }
          } finally {
            temp.destroy();
            for (const b of built) for (const a of b.owned) a.destroy();
          }
        }
      }, 600_000);
      it('the same bits run after run; NaN written canonically', async () => {
        const c = makeCase({ name: 'repeat', sizes: [100_000, 5, 33], ops: 'sum', seed: 83 });
        c.values[100_003] = 0xffc00001; // a negative NaN with a payload
        const built = buildCase(backend, c);
        const first = await runCase(backend, built);
        const second = await runCase(backend, built);
        expect(hex(second.values)).toEqual(hex(first.values));
        expect(first.values[1]).toBe(0x7fc00000);
        expect(hex(first.values)).toEqual(hex(built.expected.values));
        for (const a of built.owned) a.destroy();
      });
      it("'not-guaranteed' stays close to the float64 sum", async () => {
        const c = makeCase({ name: 'fast', sizes: [120_000, 3000, 17], ops: 'sum', initial: 3, seed: 89 });
        for (const variant of [undefined, 'workgroup', 'multi-workgroup'] as const) {
          const built = buildCase(backend, c);
          const { values } = await runCase(backend, built, { variant, requirements: { determinism: 'not-guaranteed' } });
          expectCloseSums(c, built, values);
          for (const a of built.owned) a.destroy();
        }
      });
    });

    describe('many segments and edge cases', () => {
      it('100k+ segments of up to 12 items, every variant', async () => {
        const sizes = randomSizes(120_000, 12, 97);
        await expectAllVariants(makeCase({ name: 'many', sizes, ops: cycleOps(sizes.length), initial: initialValues('f32', sizes.length, 5), seed: 101 }), ['thread']);
      }, 600_000);
      it('numSegments = 0 writes nothing, every variant', async () => {
        for (const variant of segmentedReduceVariants) {
          const built = buildCase(backend, makeCase({ name: 'zero', sizes: [], ops: 'sum', sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 103 }));
          const { values } = await runCase(backend, built, { variant });
          expect([...values]).toEqual([untouchedBits]);
          for (const a of built.owned) a.destroy();
        }
      });
      it('strided segments shorter than the stride, integer sums that wrap', async () => {
        await expectAllVariants(makeCase({ name: 'strided-wrap', valueType: 'i32', flavour: 'wrap', sizes: [900, 0, 1000, 77], stride: 1000, ops: 'sum', initial: 2147483647, seed: 107 }));
        await expectAllVariants(makeCase({ name: 'strided-u32', valueType: 'u32', flavour: 'wrap', sizes: [12, 9, 16], stride: 20, ops: cycleOps(3), indices: 'u32', seed: 109 }), ['thread']);
      });
      it('ties go to the smaller index; -0 and +0 are equal; NaN orders above +Infinity', async () => {
        const c = makeCase({ name: 'order', sizes: [6, 6, 6, 6], ops: ['argMax', 'argMin', 'max', 'min'], seed: 113 });
        const row = [0x80000000, 0x7f800000, 0x7fc00001, 0x00000000, 0xffc00000, 0x80000000];
        c.values = new Uint32Array([...row, 0x80000000, 0x00000000, 0x3f800000, 0x80000000, 0x00000000, 0x3f800000, ...row, 0x00000000, 0x80000000, 0x3f800000, 0x80000000, 0x00000000, 0x3f800000]);
        const built = buildCase(backend, c);
        const { values, indices } = await runCase(backend, built);
        // argMax: the first NaN (index 2, its payload); argMin: -0 at index 0 (equal to the +0 after
        // it: the smaller index's bits); max: NaN at 2; min: +0 at index 0 (equal to the -0 after it).
        expect(hex(values)).toEqual(hex(new Uint32Array([0x7fc00001, 0x80000000, 0x7fc00001, 0x00000000])));
        expect([...indices!]).toEqual([2, 0, 2, 0]);
        expect(hex(values)).toEqual(hex(built.expected.values));
        for (const a of built.owned) a.destroy();
      });
      describe('extremes at the edges, every variant', () => {
        // Each pattern once per op: the first NaN's bits (a later lane may hold an earlier NaN), -0
        // and +0 equal in both orders, all NaN, all zeros, ±Infinity, subnormals (which a float
        // compare may flush), and the best value twice where lanes, vec4 slots, teams and chunks meet.
        type Pattern = { name: string; size: number; fill: (i: number) => number; at?: Record<number, number> };
        const random = rng(181);
        const between = (lo: number, hi: number) => () => bitsOf(lo + random() * (hi - lo));
        const chunk = 8192;
        const f32: Pattern[] = [
          { name: 'NaN payloads', size: 6, fill: (i) => [0x3f800000, 0x7fc00001, 0x40000000, 0xffc00002, 0x7f800001, 0x40400000][i]! },
          { name: 'all NaN', size: 5, fill: (i) => [0xffc00005, 0x7fc00001, 0x7f800002, 0xffffffff, 0x7fffffff][i]! },
          { name: '-0 then +0', size: 2, fill: (i) => [0x80000000, 0][i]! },
          { name: '+0 then -0', size: 2, fill: (i) => [0, 0x80000000][i]! },
          { name: 'infinities', size: 6, fill: (i) => [0xff800000, 0x7f800000, 0xff800000, 0x7f800000, 0x3f800000, 0xbf800000][i]! },
          { name: 'subnormals', size: 7, fill: (i) => [0x00000001, 0x80000001, 0, 0x00000002, 0x80000000, 0x80000002, 0x00000002][i]! },
          { name: 'zeros, long', size: 3 * 256 + 5, fill: (i) => ((i * 7) % 3 === 0 ? 0x80000000 : 0) },
          { name: 'NaNs, later lane first', size: 2 * chunk + 300, fill: between(-1, 1), at: { 257: 0x7fc00001, 2: 0x7fc00002, 1000: 0xffc00003 } },
          { name: 'zeros among negatives', size: 2 * chunk + 300, fill: between(-2, -1), at: { 301: 0, 46: 0x80000000, 9000: 0 } },
          { name: 'zeros among positives', size: 2 * chunk + 300, fill: between(1, 2), at: { 300: 0x80000000, 45: 0, 9001: 0x80000000 } },
          { name: 'first and last', size: 3 * chunk + 77, fill: between(-1, 1), at: { 0: 0x40a00000, [3 * chunk + 76]: 0x40a00000, 1: 0xc0a00000, [3 * chunk + 75]: 0xc0a00000 } },
          { name: 'vec4 slots 4j+1 and 4j', size: 2 * chunk + 9, fill: between(-1, 1), at: { [4 * 37 + 1]: 0x40a00000, [4 * 37]: 0x40a00000, [chunk + 4 * 9 + 3]: 0xc0a00000, [chunk + 4 * 9 + 2]: 0xc0a00000 } },
          { name: 'lanes and chunks apart', size: 5 * chunk + 1, fill: between(-1, 1), at: { [4 * chunk + 255]: 0x40a00000, [chunk + 256]: 0x40a00000, [2 * chunk + 64 * 4]: 0xc0a00000, [3 * chunk]: 0xc0a00000, [5 * chunk]: 0xc0a00000 } },
        ];
        const int = (valueType: 'i32' | 'u32'): Pattern[] => {
          const [lo, hi] = valueType === 'i32' ? [0x80000000, 0x7fffffff] : [0, 0xffffffff];
          return [
            { name: 'extremes', size: 6, fill: (i) => [5, hi, lo, 7, lo, hi][i]! },
            { name: 'extremes, long', size: 2 * chunk + 13, fill: () => Math.floor(random() * 2 ** 32) >>> 0, at: { [chunk + 4]: hi, 5: hi, [2 * chunk + 12]: lo, 300: lo } },
          ];
        };
        const itemsOf = (q: Pattern) => {
          const items = Array.from({ length: q.size }, (_, i) => q.fill(i));
          for (const [at, b] of Object.entries(q.at ?? {})) items[Number(at)] = b;
          return items;
        };
        const ops = ['min', 'max', 'argMin', 'argMax'] as const;
        for (const [valueType, patterns] of [['f32', f32], ['i32', int('i32')], ['u32', int('u32')]] as const) {
          it(`${valueType}: every op per segment`, async () => {
            for (const short of [true, false]) {
              const chosen = patterns.filter((q) => (q.size <= 16) === short);
              const c = makeCase({ name: `edges/${valueType}/${short ? 'short' : 'long'}`, valueType, sizes: chosen.flatMap((q) => ops.map(() => q.size)), ops: chosen.flatMap(() => [...ops]), seed: 191 });
              c.values = new Uint32Array(chosen.flatMap((q) => ops.flatMap(() => itemsOf(q))));
              await expectAllVariants(c, short ? ['thread', 'subgroup', 'workgroup', 'multi-workgroup'] : ['subgroup', 'workgroup', 'multi-workgroup']);
            }
          }, 600_000);
        }
        // A constant op: the kernels specialized on it (a per-segment op takes the generic path).
        for (const o of ['min', 'argMax'] as const) {
          it(`f32: ${o} as a constant op`, async () => {
            const c = makeCase({ name: `edges/f32/${o}`, sizes: f32.map((q) => q.size), ops: o, seed: 193 });
            c.values = new Uint32Array(f32.flatMap(itemsOf));
            await expectAllVariants(c, ['subgroup', 'workgroup', 'multi-workgroup']);
          }, 600_000);
        }
        // A constant min or max without indicesOut: the lanes keep keys only, and where the extreme's
        // key is one that values of other bits share (-0 and +0, NaNs of other payloads) the team
        // looks through its chunk again for the first item with it (preamble.ts keysOnlyTotal). The
        // first tie sits in a later lane than later ties (item 3, lane 3; item 258, lane 2), later
        // chunks hold ties in their first lanes, and only some segments of a workgroup have a tie.
        describe('a constant min or max without indices: ties of ±0 and NaN found again', () => {
          const tieSizes = [1, 2, 8191, 8192, 8193, 3 * chunk + 5];
          const tiesOf = (size: number, first: number, later: readonly number[]) => {
            const at: Record<number, number> = { [Math.min(3, size - 1)]: first };
            for (const [k, p] of [258, chunk, chunk + 1, 2 * chunk + 1, 3 * chunk + 2, size - 1].filter((p) => p > Math.min(3, size - 1) && p < size).entries()) at[p] = later[k % later.length]!;
            return at;
          };
          const patternsOf = (o: 'min' | 'max'): Pattern[] =>
            tieSizes.flatMap((size) => {
              // max: zeros among negatives; min: zeros among positives.
              const away = o === 'max' ? between(-2, -1) : between(1, 2);
              return [
                ...(size === 1 ? [{ name: 'empty', size: 0, fill: away }] : []),
                { name: `-0 first, ${size}`, size, fill: away, at: tiesOf(size, 0x80000000, [0]) },
                { name: `+0 first, ${size}`, size, fill: away, at: tiesOf(size, 0, [0x80000000]) },
                o === 'max'
                  ? { name: `NaN payloads, ${size}`, size, fill: between(-1, 1), at: tiesOf(size, 0xffc00007, [0x7fc00001, 0x7f800003]) }
                  : { name: `all NaN, ${size}`, size, fill: (i: number) => (i % 2 === 0 ? 0x7fc00000 : 0xff800000) + 1 + (i % 1000) },
                { name: `no tie, ${size}`, size, fill: between(-1, 1) },
              ];
            });
          const runs = [
            ['subgroup', {}],
            ['subgroup', { subgroupSize: 16, loadWords: 1 }],
            ['workgroup', {}],
            ['multi-workgroup', {}],
            ['multi-workgroup', { chunkTeamSize: 32, extremeChunkTeamSize: 32, loadWords: 4 }],
            ['multi-workgroup', { chunkTeamSize: 256, extremeChunkTeamSize: 256, loadWords: 1 }],
            ['multi-workgroup', { lastChunkMerges: true }],
            // Strips of 2 and 4 chunks: the tie search over a team's whole strip.
            ['multi-workgroup', { extremeChunkRounds: 2, lastChunkMerges: false }],
            ['multi-workgroup', { extremeChunkRounds: 4, lastChunkMerges: true }],
          ] as const;
          for (const o of ['min', 'max'] as const) {
            it(`f32 ${o}, every variant`, async () => {
              for (const short of [true, false]) {
                const chosen = patternsOf(o).filter((q) => (q.size <= chunk) === short);
                const c = makeCase({ name: `key ties/${o}/${short ? 'short' : 'long'}`, sizes: chosen.map((q) => q.size), ops: o, indices: 'none', seed: 197 });
                c.values = new Uint32Array(chosen.flatMap(itemsOf));
                const built = buildCase(backend, c);
                try {
                  for (const [variant, policy] of runs) {
                    if (variant === 'subgroup' && !short) continue;
                    const { plan, values } = await runCase(backend, built, { variant, policy });
                    expect(plan.variant).toBe(variant);
                    expectSameWords(values.subarray(0, c.sizes.length), built.expected.values, `${c.name} (${variant}, ${JSON.stringify(policy)}): values`);
                  }
                } finally {
                  for (const a of built.owned) a.destroy();
                }
              }
            }, 600_000);
          }
          it('i32 and u32 max and min: the key gives the bits', async () => {
            for (const valueType of ['i32', 'u32'] as const) {
              for (const o of ['min', 'max'] as const) {
                const chosen = int(valueType).concat(tieSizes.map((size) => ({ name: `random, ${size}`, size, fill: () => Math.floor(random() * 2 ** 32) >>> 0 })));
                await expectAllVariants(
                  Object.assign(makeCase({ name: `keys/${valueType}/${o}`, valueType, sizes: chosen.map((q) => q.size), ops: o, indices: 'none', seed: 199 }), { values: new Uint32Array(chosen.flatMap(itemsOf)) }),
                  ['workgroup', 'multi-workgroup'],
                );
              }
            }
          }, 600_000);
        });
      });
      it('an initial value wins only when strictly better', async () => {
        const c = makeCase({ name: 'initial-ties', sizes: [3, 3, 3], ops: ['argMax', 'argMin', 'argMax'], initial: [5, 5, 6], initialKind: 'perSegment', seed: 127 });
        c.values = new Uint32Array([0x40a00000, 0x3f800000, 0x40a00000, 0x40c00000, 0x40a00000, 0x40a00000, 0x40a00000, 0x40a00000, 0x40a00000].map((b) => b));
        const built = buildCase(backend, c);
        const { values, indices } = await runCase(backend, built);
        expect([...indices!].map((i) => i | 0)).toEqual([0, 1, -1]);
        expect(hex(values)).toEqual(hex(new Uint32Array([0x40a00000, 0x40a00000, 0x40c00000])));
        for (const a of built.owned) a.destroy();
      });
    });

    describe('every parameter kind', () => {
      const sizeKinds: NumericKind[] = ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device', 'perSegment-device-bounds'];
      const opKinds: OptionKind[] = ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device'];
      const initialKinds = ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device', undefined] as const;
      const numSegmentsKinds = ['constant', 'uniform', 'device'] as const;
      const valueTypes: ValueType[] = ['f32', 'i32', 'u32'];
      // Every kind of every parameter at least twice, across layouts, value types and index dtypes.
      for (let i = 0; i < 12; i++) {
        const sizeKind = sizeKinds[i % 6]!;
        const opKind = opKinds[(i * 2) % 5]!;
        const initialKind = initialKinds[(i * 5) % 6];
        const numSegmentsKind = numSegmentsKinds[i % 3]!;
        const valueType = valueTypes[(i + 1) % 3]!;
        const indices = (['i32', 'u32', 'none'] as const)[Math.floor(i / 2) % 3]!;
        const stride = i % 4 < 2 ? undefined : 450;
        it(`sizes ${sizeKind}, op ${opKind}, initial value ${initialKind ?? 'none'}, numSegments ${numSegmentsKind}, ${valueType}, indices ${indices}, ${stride === undefined ? 'packed' : 'strided'}`, async () => {
          const n = 9;
          const uniformSize = sizeKind === 'constant' || sizeKind.startsWith('uniform');
          const sizes = uniformSize ? Array.from({ length: n }, () => 400 - 37 * i) : randomSizes(n, 440, 131 + i);
          const opOptions = indices === 'none' ? (['max', 'sum', 'min'] as const) : (['argMax', 'sum', 'min', 'max', 'argMin'] as const);
          const ops = opKind.startsWith('perSegment') ? cycleOps(n, [...opOptions].reverse()) : Array.from({ length: n }, () => opOptions[i % opOptions.length]!);
          const uniformInitial = initialKind === 'constant' || initialKind === 'uniform' || initialKind === 'uniform-device';
          const initial = initialKind === undefined ? undefined : uniformInitial ? initialValues(valueType, 1, i)[0]! : initialValues(valueType, n, i);
          await expectReference(
            makeCase({
              name: `kinds-${i}`,
              valueType,
              flavour: 'special',
              sizes,
              stride,
              ops,
              opOptions: [...opOptions],
              opKind,
              initial,
              ...(initialKind === undefined ? {} : { initialKind }),
              sizeKind,
              numSegmentsKind,
              indices,
              seed: 137 + i,
            }),
          );
        });
      }
    });

    describe('requirements', () => {
      it("'trust' with device-only values makes no transfer", async () => {
        const sizes = randomSizes(7, 300, 139);
        const c = makeCase({
          name: 'trust',
          sizes,
          sizeKind: 'perSegment-device',
          ops: cycleOps(7),
          opKind: 'perSegment-device',
          initial: initialValues('f32', 7, 3),
          initialKind: 'perSegment-device',
          numSegmentsKind: 'device',
          seed: 149,
        });
        const built = buildCase(backend, c);
        const environment = env({ backend, requirements: { guaranteeChecks: 'trust' } });
        const plan = (DeviceSegmentedReduce.plan as unknown as (a: unknown, e: Env) => SegmentedReducePlan)(built.args, environment);
        const temp = plan.tempStorageBytes ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
        backend.resetStats();
        await plan.run(temp);
        await backend.synchronize();
        const stats = backend.stats();
        expect(stats.uploads + stats.downloads).toBe(0);
        expect(stats.launches).toBeGreaterThan(0);
        expect(hex(bits(await backend.download(built.valuesOut)))).toEqual(hex(built.expected.values));
        temp?.destroy();
        for (const a of built.owned) a.destroy();
      });
      it("'validate' reads back one status word only", async () => {
        const built = buildCase(backend, makeCase({ name: 'validate', sizes: [10, 20], sizeKind: 'perSegment-device', ops: 'max', seed: 151 }));
        backend.resetStats();
        await runCase(backend, built);
        // The status word, then the test's own downloads of valuesOut and indicesOut.
        expect(backend.stats().downloads).toBe(3);
        for (const a of built.owned) a.destroy();
      });
    });

    describe('bad input leaves outputs untouched', () => {
      async function expectUntouched(built: BuiltCase) {
        expect([...bits(await backend.download(built.valuesOut))].every((b) => b === untouchedBits)).toBe(true);
        if (built.indicesOut) expect([...bits(await backend.download(built.indicesOut))].every((b) => b === untouchedBits)).toBe(true);
      }
      async function expectRejected(c: ReduceCase, change: (built: BuiltCase) => void, check: (error: unknown) => void) {
        const built = buildCase(backend, c);
        change(built);
        const error = await runCase(backend, built).catch((e: unknown) => e);
        check(error);
        await expectUntouched(built);
        for (const a of built.owned) a.destroy();
      }
      const base = () => makeCase({ name: 'bad', sizes: [5, 6, 7], ops: 'sum', seed: 157 });

      it('host initial values outside their bounds or their type', async () => {
        await expectRejected(base(), (b) => (b.args.initialValue = p.perSegment([1, 20, 3], { min: 0, max: 10 })), (error) => {
          expect(error).toBeInstanceOf(SegkitRangeError);
          expect((error as Error).message).toBe('initialValue[1]: 20 is outside the static bounds [0, 10]');
        });
        await expectRejected(makeCase({ name: 'bad-i32', valueType: 'i32', sizes: [5], ops: 'sum', seed: 1 }), (b) => (b.args.initialValue = p.constant(1.5)), (error) => {
          expect(error).toBeInstanceOf(SegkitRangeError);
          expect((error as Error).message).toBe('initialValue: 1.5 is not an integer');
        });
        await expectRejected(makeCase({ name: 'bad-u32', valueType: 'u32', sizes: [5], ops: 'sum', seed: 1 }), (b) => (b.args.initialValue = p.uniform(-1)), (error) => {
          expect(error).toBeInstanceOf(SegkitRangeError);
          expect((error as Error).message).toBe('initialValue: -1 is outside the static bounds [0, 4294967295]');
        });
      });
      it('device-only initial values outside their bounds: named, read in their type', async () => {
        await expectRejected(
          base(),
          (b) => {
            const device = backend.upload(new Float32Array([0.5, -3.25, 2]));
            b.owned.push(device);
            b.args.initialValue = p.perSegment(device, { min: 0, max: 10 });
          },
          (error) => {
            expect(error).toBeInstanceOf(GuaranteeViolationError);
            expect((error as GuaranteeViolationError).value).toBe(-3.25);
            expect((error as Error).message).toBe('initialValue[1]: -3.25 is outside the static bounds [0, 10] (found on the device)');
          },
        );
        await expectRejected(
          base(),
          (b) => {
            const device = backend.upload(new Float32Array([NaN]));
            b.owned.push(device);
            b.args.initialValue = p.uniform(device);
          },
          (error) => {
            expect(error).toBeInstanceOf(GuaranteeViolationError);
            expect((error as Error).message).toBe('initialValue: NaN is outside the static bounds [-Infinity, Infinity] (found on the device)');
          },
        );
        await expectRejected(
          makeCase({ name: 'bad-i32-device', valueType: 'i32', sizes: [5, 6], ops: 'min', seed: 3 }),
          (b) => {
            const device = backend.upload(new Int32Array([-7, -100]));
            b.owned.push(device);
            b.args.initialValue = p.perSegment(device, { min: -50, max: 50 });
          },
          (error) => expect((error as Error).message).toBe('initialValue[1]: -100 is outside the static bounds [-50, 50] (found on the device)'),
        );
      });
      it('a device-only op index past the option set', async () => {
        await expectRejected(
          makeCase({ name: 'bad-op', sizes: [5, 6, 7], ops: ['sum', 'max', 'min'], opKind: 'perSegment-device', seed: 163 }),
          (b) => {
            const device = backend.upload(new Uint32Array([1, 7, 2]));
            b.owned.push(device);
            b.args.op = p.perSegmentOption(device, ['argMax', 'sum', 'min', 'max', 'argMin']);
          },
          (error) => {
            expect(error).toBeInstanceOf(GuaranteeViolationError);
            expect((error as Error).message).toBe('op[1]: 7 is outside the static bounds [0, 4] (found on the device)');
          },
        );
      });
      it('misuse: an arg op without indicesOut, an unknown field, segments past the values, a wrong dtype, a forced variant that cannot run', async () => {
        const built = buildCase(backend, base());
        const plan = (args: Record<string, unknown>, e: Env = env({ backend })) => () => (DeviceSegmentedReduce.plan as unknown as (a: unknown, e: Env) => unknown)(args, e);
        expect(plan({ ...built.args, indicesOut: undefined, op: p.uniformOption('sum', ['sum', 'argMax']) })).toThrow(new SegkitUsageError("indicesOut: required when op may be 'argMin' or 'argMax'"));
        expect(plan({ ...built.args, segmentStrid: p.constant(4) })).toThrow("args: unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
        expect(plan({ ...built.args, numSegments: undefined })).toThrow("args: missing required field 'numSegments'");
        expect(plan({ ...built.args, segmentSizes: p.perSegment([5, 6, 8]) })).toThrow('segmentSizes[2]: segment 2 ends at 19, past the 18 values of valuesIn');
        expect(plan({ ...built.args, valuesOut: built.indicesOut })).toThrow("valuesOut: dtype 'i32' is not accepted here; expected 'f32'");
        expect(plan({ ...built.args, segmentSizes: p.perSegment([5, 6, 7]) }, env({ backend, tuning: { variant: 'thread' } }))).not.toThrow();
        const long = buildCase(backend, makeCase({ name: 'long', sizes: [100], ops: 'sum', seed: 1 }));
        expect(plan(long.args, env({ backend, tuning: { variant: 'thread' } }))).toThrow("tuning.variant: 'thread' cannot run for these parameters: max segment size 100 > threadMaxItems 16");
        const tuned = (policy: object) => plan(built.args, env({ backend, tuning: { policy } }));
        expect(tuned({ loadWords: 2 })).toThrow(new SegkitUsageError('tuning.policy.loadWords: 2 is not 1 or 4 (words per load)'));
        expect(tuned({ chunkTeamSize: 48 })).toThrow('tuning.policy.chunkTeamSize: 48 is not a power of two at most');
        expect(tuned({ extremeChunkTeamSize: 12 })).toThrow('tuning.policy.extremeChunkTeamSize: 12 is not a power of two at most');
        expect(tuned({ chunkRounds: 3 })).toThrow(new SegkitUsageError('tuning.policy.chunkRounds: 3 is not a power of two at most 64 (chunks a team)'));
        expect(tuned({ extremeChunkRounds: 128 })).toThrow(new SegkitUsageError("tuning.policy.extremeChunkRounds: 128 is not a power of two at most 64 (chunks a team, or 'auto')"));
        expect(tuned({ extremeChunkRounds: 'many' })).toThrow("tuning.policy.extremeChunkRounds: many is not a power of two at most 64 (chunks a team, or 'auto')");
        expect(tuned({ lastChunkMerges: 'sometimes' })).toThrow("tuning.policy.lastChunkMerges: sometimes is not true, false or 'auto'");
        await expectUntouched(built);
        for (const a of [...built.owned, ...long.owned]) a.destroy();
      });
    });
  });
}

const hex = (a: Uint32Array) => Array.from(a, (b) => b.toString(16));

/** Word-for-word equality, reporting the first difference (a deep diff of 100k words is slow and unreadable). */
function expectSameWords(actual: Uint32Array, expected: Uint32Array, label: string): void {
  expect(actual.length, `${label}: length`).toBe(expected.length);
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  if (at < actual.length) expect(hex(actual.subarray(at, at + 4)), `${label}: first difference at ${at}`).toEqual(hex(expected.subarray(at, at + 4)));
}

/**
 * f32 sums within a few units of rounding of the float64 sum (relative to the sum of magnitudes) where
 * every item is finite; integer sums exact modulo 2^32.
 */
function expectCloseSums(c: ReduceCase, built: BuiltCase, values: Uint32Array): void {
  const segmentStarts = starts(c);
  c.sizes.forEach((size, s) => {
    if (c.ops[s] !== 'sum' || s >= values.length) return;
    if (c.valueType !== 'f32') {
      expect(values[s], `${c.name}[${s}]: wrapped sum`).toBe(((built.exactSums[s]! % 2 ** 32) + 2 ** 32) % 2 ** 32);
      return;
    }
    let magnitude = c.initial === undefined ? 0 : Math.abs(c.initial[c.initial.length === 1 ? 0 : s]!);
    for (let i = 0; i < size; i++) magnitude += Math.abs(f32Of(c.values[segmentStarts[s]! + i]!));
    const exact = built.exactSums[s]!;
    if (!Number.isFinite(exact) || !Number.isFinite(magnitude) || magnitude > 1e38) return;
    const got = f32Of(values[s]!);
    // The canonical order's error bound: about (32 + 8 + log2 chunks) roundings; flushed subnormals add 2^-126 each.
    expect(Math.abs(got - exact), `${c.name}[${s}]: ${got} vs float64 ${exact}`).toBeLessThanOrEqual(1e-5 * magnitude + size * 2 ** -125);
  });
}

