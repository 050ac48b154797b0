/**
 * The scan conformance suite, written once and run on every backend: random and adversarial cases
 * compared bit for bit with `referenceScan`, every variant forced through tuning, every parameter
 * kind, both layouts, the device-only item count, and bad input leaving outputs untouched.
 *
 * Cases are grouped so that a WebGPU run compiles few pipelines: the operator and mode are mostly
 * per-segment (one program serves them all), and the parameter kinds vary one at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Backend,
  type DeviceArray,
  type ScanOp,
  type ScanPlan,
  type ScanPolicy,
  type ScanVariant,
  DeviceSegmentedScan,
  GuaranteeViolationError,
  SegkitRangeError,
  SegkitUsageError,
  env,
  p,
  scanVariants,
} from '../../src/index.js';
import { planInternals } from '../../src/dispatch/plan.js';
import { rng } from '../rng.js';
import { type BuiltCase, type ScanCase, bits, bitsOf, buildCase, makeCase, runCase, untouchedBits } from './scan-cases.js';

/**
 * Overwrites a case's f32 values with ones whose sums show the order of the additions: -1 to 1 (a
 * full mantissa each: sums of any length round, and stay small), and about one in 2000 a 1e8 (whose
 * ulp is 8) cancelled by a -1e8 1 to 8 items on: a lane, group or tile that holds one of a pair and
 * not the other rounds to 8, and the sums around it do not. A carry added in another order than the
 * canonical one gives other bits in most outputs after it.
 */
function orderMatters(c: ScanCase, seed: number): ScanCase {
  const random = rng(seed);
  const n = c.values.length;
  for (let i = 0; i < n; i++) c.values[i] = bitsOf(2 * random() - 1);
  for (let i = 0; i < n; i++) {
    const j = i + 1 + Math.floor(random() * 8);
    if (random() < 0.0005 && j < n) {
      const big = random() < 0.5 ? 1e8 : -1e8;
      c.values[i] = bitsOf(big);
      c.values[j] = bitsOf(-big);
      // The next pair starts past this one: none is left without its other half.
      i = j;
    }
  }
  return c;
}

/** Sizes at every boundary of the canonical order: lanes (8), warps (32), groups (128), workgroups (256), tiles (2048). */
const boundarySizes = [0, 1, 2, 7, 8, 9, 31, 32, 33, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 6143, 6144, 6145];

const randomSizes = (n: number, max: number, seed: number) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => Math.floor(random() * (max + 1)));
};

const allOps = ['sum', 'min', 'max'] as const;
const bothModes = ['inclusive', 'exclusive', 'exclusive', 'inclusive'] as const;

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
export function defineScanConformance(backendName: string, makeBackend: () => Promise<Backend>): void {
  describe(`DeviceSegmentedScan conformance on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    const owned = (built: BuiltCase) => () => {
      for (const a of built.owned) a.destroy();
    };

    /** The first differing output position, for a readable failure. */
    function expectBits(got: Uint32Array, expected: Uint32Array, what: string): void {
      const at = got.findIndex((b, i) => b !== expected[i]);
      if (at >= 0) expect(`${what}: output ${at} is 0x${got[at]!.toString(16)}`).toBe(`${what}: output ${at} is 0x${expected[at]!.toString(16)}`);
      expect(got.length).toBe(expected.length);
    }

    async function expectReference(c: ScanCase, variant?: ScanVariant, policy?: Partial<ScanPolicy>): Promise<ScanPlan> {
      const built = buildCase(backend, c);
      try {
        const { plan, out } = await runCase(backend, built, { variant, policy });
        expectBits(out, built.expected, `${c.name} (${plan.variant})`);
        return plan;
      } finally {
        owned(built)();
      }
    }

    /** Runs one case under several policies, the reference computed once, each run into outputs of its own. */
    async function expectReferenceRuns(c: ScanCase, variant: ScanVariant, policies: readonly Partial<ScanPolicy>[]): Promise<ScanPlan[]> {
      const built = buildCase(backend, c);
      const plans: ScanPlan[] = [];
      try {
        for (const policy of policies) {
          const before = new Uint32Array(built.expected.length).fill(untouchedBits);
          const out = backend.upload(c.valueType === 'f32' ? new Float32Array(before.buffer) : c.valueType === 'i32' ? new Int32Array(before.buffer) : before);
          built.args.valuesOut = out;
          built.valuesOut = out;
          try {
            const { plan, out: got } = await runCase(backend, built, { variant, policy });
            expectBits(got, built.expected, `${c.name} (${plan.variant}, ${JSON.stringify(policy)})`);
            plans.push(plan);
          } finally {
            out.destroy();
          }
        }
      } finally {
        owned(built)();
      }
      return plans;
    }

    /** Runs a case with the natural choice and with every variant forced: all give the reference's bits. */
    async function expectAllVariants(c: ScanCase): Promise<void> {
      const natural = await expectReference(c);
      for (const variant of scanVariants) if (variant !== natural.variant) await expectReference(c, variant);
    }

    describe('random and adversarial values, every variant', () => {
      for (const valueType of ['f32', 'i32', 'u32'] as const) {
        for (const flavour of ['random', 'special'] as const) {
          it(`${valueType} ${flavour}: every boundary size, every operator and mode, per-segment initial values`, async () => {
            const sizes = [...boundarySizes, ...randomSizes(9, 3000, 3)];
            await expectAllVariants(makeCase({ name: `${valueType}-${flavour}`, valueType, flavour: valueType === 'f32' ? flavour : flavour === 'special' ? 'wrap' : 'random', sizes, ops: [...allOps], modes: [...bothModes], initial: true, seed: 11 }));
          });
        }
        it(`${valueType} ties: no initial value`, async () => {
          await expectAllVariants(makeCase({ name: `${valueType}-ties`, valueType, flavour: 'ties', sizes: [...boundarySizes].reverse(), ops: [...allOps], modes: [...bothModes], seed: 13 }));
        });
      }
    });

    describe('long segments', () => {
      /** A plan's kernels after the prologue's. */
      const ownKernels = (plan: ScanPlan) => plan.launches.map((l) => l.kernel).filter((k) => k !== 'validate' && k !== 'segment-offsets');
      it('100k+ items: many tiles in one segment, every variant', async () => {
        await expectAllVariants(makeCase({ name: 'long', sizes: [150_001, 3, 123_457], ops: ['sum', 'max', 'sum'], modes: ['inclusive', 'inclusive', 'exclusive'], initial: true, seed: 17 }));
      });
      it('more than 2048 tiles in a segment: the scan of the tile totals has tiles of its own; carries in parallel, through spine-top, or walked', async () => {
        const c = orderMatters(makeCase({ name: 'spine', sizes: [2049 * 2048 + 5], ops: 'sum', modes: 'exclusive', initial: 0.5, seed: 19 }), 20);
        // 2050 tiles, 2 tiles of tile totals: a workgroup per 2048 tile totals leaves the parts of the
        // carries and each tile-scan workgroup adds up its own (spineCarries 'parallel'); spine-top
        // scans the 2048s' totals first past spineCarryTiles.
        const parallel = await expectReference(c, 'multi-workgroup', { spineCarries: 'parallel' });
        expect(ownKernels(parallel)).toEqual(['tile-reduce', 'spine-lanes', 'tile-scan']);
        const top = await expectReference(c, 'multi-workgroup', { spineCarries: 'parallel', spineCarryTiles: 1 });
        expect(ownKernels(top)).toEqual(['tile-reduce', 'spine-lanes', 'spine-top', 'tile-scan']);
        // spineCarries 'walk' (the default): one workgroup walks the tile totals, three launches past the policy's limit.
        const walked = await expectReference(c, 'multi-workgroup');
        expect(ownKernels(walked)).toEqual(['tile-reduce', 'spine-walk', 'tile-scan']);
        const three = await expectReference(c, 'multi-workgroup', { spineCarries: 'walk', spineWorkgroupMaxTiles: 2049 });
        expect(ownKernels(three)).toEqual(['tile-reduce', 'spine-reduce', 'spine-top', 'spine-scan', 'tile-scan']);
        await expectReference(c, 'workgroup');
      }, 600_000);
      it('tile spans: a workgroup of the tile launches takes one tile, a few, or a whole segment (tileWorkgroups)', async () => {
        const c = makeCase({ name: 'spans', sizes: [7 * 2048 + 1, 2 * 2048, 2048, 5, 3 * 2048 - 1, 0], ops: ['sum', 'max', 'sum', 'min', 'sum', 'sum'], modes: [...bothModes, 'exclusive', 'inclusive'], initial: true, seed: 29 });
        // 8 tiles a segment over 6 segments: spans of 1 (48 workgroups or more), 5, 8 (one workgroup a segment).
        for (const tileWorkgroups of [100_000, 10, 1]) await expectReference(c, 'multi-workgroup', { tileWorkgroups });
      });
      it('tile loads: vec4 (the full tiles of segments starting at a multiple of 4 items, 1, 2 or 4 tiles a step) and a word at a time (loadWords, tilesPerStep, scanTilesPerStep)', async () => {
        // Starts 0 (8 full tiles and a short one), 16385 (odd), 20484 (a multiple of 4: 3 full tiles,
        // exclusive: the last stores 2047 outputs), 26628, 26629: full and short tiles on both paths.
        const sizes = [8 * 2048 + 1, 2 * 2048 + 3, 3 * 2048, 1, 2048 + 6];
        const modes = ['exclusive', 'inclusive', 'exclusive', 'inclusive', 'inclusive'] as const;
        const c = makeCase({ name: 'loads', sizes, ops: ['sum', 'sum', 'max', 'sum', 'min'], modes: [...modes], initial: true, seed: 31 });
        for (const loadWords of [4, 1]) await expectReference(c, 'multi-workgroup', { loadWords, tileWorkgroups: 10 });
        // A constant op: full tiles 2 or 4 a step. Spans of 5 tiles (tileWorkgroups 10): steps, the short
        // last tile alone and the tiles left at the bottom one at a time.
        const sum = makeCase({ name: 'loads-sum', sizes, ops: 'sum', modes: [...modes], initial: true, seed: 37 });
        for (const tilesPerStep of [2, 4]) await expectReference(sum, 'multi-workgroup', { tilesPerStep, scanTilesPerStep: tilesPerStep, tileWorkgroups: 10 });
        await expectReference(sum, 'multi-workgroup', { tilesPerStep: 1, scanTilesPerStep: 2, tileWorkgroups: 10 });
      });
      it('tile stores: whole vec4s from registers where every segment starts and ends at a multiple of 4 items and the scan is inclusive (storeWords), else a word at a time; explain() says which', async () => {
        const stores = (plan: ScanPlan) => plan.launches.find((l) => l.kernel === 'tile-scan')?.purpose ?? '';
        // Segments of 8 full tiles and a short one of 4 outputs, 2 tiles and 8, 3 full tiles, 4 items,
        // 1 tile and 12, none: full tiles from registers, short tiles four outputs an invocation.
        const sizes = [8 * 2048 + 4, 2 * 2048 + 8, 3 * 2048, 4, 2048 + 12, 0];
        const c = makeCase({ name: 'stores', sizes, ops: ['sum', 'max', 'sum', 'min', 'sum', 'sum'], modes: 'inclusive', initial: true, seed: 41 });
        const [vec4, words] = await expectReferenceRuns(c, 'multi-workgroup', [{ tileWorkgroups: 10 }, { tileWorkgroups: 10, storeWords: 1 }]);
        if (backend.name === 'cpu') {
          expect(stores(vec4!)).toContain('outputs a word at a time (the CPU emulator)');
          return;
        }
        expect(stores(vec4!)).toContain("outputs as whole vec4s, a lane's from registers (an inclusive scan, every segment starting and ending at a multiple of 4 items)");
        expect(stores(words!)).toContain('outputs a word at a time, staged through workgroup memory (policy storeWords 1)');
        // A constant op: full tiles 1, 2 or 4 a step, each lane's outputs from registers.
        const sum = makeCase({ name: 'stores-sum', sizes, ops: 'sum', modes: 'inclusive', initial: true, seed: 43 });
        await expectReferenceRuns(sum, 'multi-workgroup', [1, 2, 4].map((scanTilesPerStep) => ({ scanTilesPerStep, tileWorkgroups: 10 })));
        // Not provable on the host: an exclusive scan, a size not a multiple of 4, word loads.
        const exclusive = await expectReference(makeCase({ name: 'stores-exclusive', sizes, ops: 'sum', modes: 'exclusive', seed: 47 }), 'multi-workgroup');
        expect(stores(exclusive)).toContain('outputs a word at a time, staged through workgroup memory (an exclusive scan writes its outputs one word on)');
        const odd = await expectReference(makeCase({ name: 'stores-odd', sizes: [...sizes, 6], ops: 'sum', modes: 'inclusive', seed: 53 }), 'multi-workgroup');
        expect(stores(odd)).toContain('(segment sizes not known on the host to be multiples of 4)');
        const integers = await expectReference(makeCase({ name: 'stores-i32', valueType: 'i32', sizes, ops: 'sum', modes: 'inclusive', seed: 59 }), 'multi-workgroup');
        expect(stores(integers)).toContain('(i32 values: measured faster than from registers)');
        // Strided segments: a stride that is a multiple of 4 keeps the vec4 stores, and the elements
        // between segments stay as they were (the reference checks every output word); one that is
        // not (2 * 2048 + 6) does not.
        const strided = await expectReference(makeCase({ name: 'stores-strided', sizes: [2 * 2048 + 4, 8, 0, 2048], stride: 2 * 2048 + 8, ops: 'max', modes: 'inclusive', initial: true, seed: 61 }), 'multi-workgroup', { tileWorkgroups: 3 });
        expect(stores(strided)).toContain('outputs as whole vec4s');
        const oddStride = await expectReference(makeCase({ name: 'stores-odd-stride', sizes: [2 * 2048 + 4, 8, 0, 2048], stride: 2 * 2048 + 6, ops: 'max', modes: 'inclusive', seed: 67 }), 'multi-workgroup');
        expect(stores(oddStride)).toContain('(a segment stride not known on the host to be a multiple of 4)');
        const wordLoads = await expectReference(sum, 'multi-workgroup', { loadWords: 1 });
        expect(stores(wordLoads)).toContain('(policy loadWords 1: no vec4 path)');
      });
      it('spine boundaries: 2048 tiles and one item, 2048 tiles less one item; spineWorkgroupMaxTiles at the tiles and one below', async () => {
        const c = makeCase({ name: 'spine-edges', sizes: [2048 * 2048 + 1, 4097, 2048 * 2048 - 1], ops: ['max', 'sum', 'sum'], modes: ['inclusive', 'exclusive', 'inclusive'], initial: true, seed: 23 });
        // 2049 tiles: the second 2048 tile totals hold one, in lane 0 (its carry from the first 2048's total alone).
        const parallel = await expectReference(c, 'multi-workgroup', { spineCarries: 'parallel' });
        expect(parallel.launches.map((l) => l.kernel)).toContain('spine-lanes');
        // The kernels' bodies for workgroups of fewer invocations than a tile has lanes.
        const narrow = await expectReference(c, 'multi-workgroup', { spineCarries: 'parallel', workgroupSize: 128 });
        expect(narrow.launches.map((l) => l.kernel)).toContain('spine-lanes');
        const walked = await expectReference(c, 'multi-workgroup', { spineCarries: 'walk', spineWorkgroupMaxTiles: 2049 });
        expect(walked.launches.map((l) => l.kernel)).toContain('spine-walk');
        const three = await expectReference(c, 'multi-workgroup', { spineCarries: 'walk', spineWorkgroupMaxTiles: 2048 });
        expect(three.launches.map((l) => l.kernel)).toContain('spine-reduce');
      }, 600_000);
      // 8M+ items: on the CPU backends only (Mesa's lavapipe takes minutes; the two tests above run the same kernels there).
      it.runIf(backendName.startsWith('cpu'))(
        'carries in parallel over 3 tiles of tile totals among short segments: sums whose bits depend on the order, every operator and mode, with and without initial values, NaN, ±0 and subnormals',
        async () => {
          // Segment 0: 3 tiles of tile totals, the last partial (the carries into the second and third
          // from one and two of their totals); 1: 2048 tiles and one item; the rest: tile edges.
          const sizes = [2 * 2048 * 2048 + 300 * 2048 + 5, 3 * 2048 + 1, 2048 * 2048 + 1, 2049, 0, 2047, 2048 * 3 - 1];
          const ops: ScanOp[] = ['sum', 'sum', 'sum', 'sum', 'sum', 'max', 'min'];
          const modes = ['inclusive', 'exclusive', 'exclusive', 'inclusive', 'inclusive', 'exclusive', 'inclusive'] as const;
          const c = orderMatters(makeCase({ name: 'lanes', sizes, ops, modes: [...modes], initial: [0.1, 1e-40, -2.5, 3, -0, 7, -1], seed: 137 }), 139);
          // Segment 3: NaNs with payloads, ±0, ±Inf and subnormals among the values.
          const special = makeCase({ name: 'special', sizes: [2049], flavour: 'special', seed: 149 });
          const at3 = sizes[0]! + sizes[1]! + sizes[2]!;
          c.values.set(special.values.subarray(0, 2049), at3);
          // The carries into the 2048s added up by tile-scan (1 and 2 totals), or scanned by spine-top; spans of many tiles; walked.
          const plans = await expectReferenceRuns(c, 'multi-workgroup', [{ spineCarries: 'parallel' }, { spineCarries: 'parallel', spineCarryTiles: 2 }, { spineCarries: 'parallel', spineCarryTiles: 1, tileWorkgroups: 7 }, {}]);
          expect(plans.map(ownKernels)).toEqual([
            ['tile-reduce', 'spine-lanes', 'tile-scan'],
            ['tile-reduce', 'spine-lanes', 'spine-top', 'tile-scan'],
            ['tile-reduce', 'spine-lanes', 'spine-top', 'tile-scan'],
            ['tile-reduce', 'spine-walk', 'tile-scan'],
          ]);
          await expectReferenceRuns({ ...c, initial: undefined }, 'multi-workgroup', [{ spineCarries: 'parallel' }, { spineCarries: 'parallel', spineCarryTiles: 1 }]);
          // i32 sums that wrap and i32 max: every order gives the same bits, through the same launches.
          const wrap = makeCase({ name: 'lanes-i32', valueType: 'i32', flavour: 'wrap', sizes: [2048 * 2048 + 5 * 2048 + 1, 2048 * 2048 + 9], ops: ['sum', 'max'], modes: ['exclusive', 'inclusive'], initial: true, seed: 151 });
          await expectReferenceRuns(wrap, 'multi-workgroup', [{ spineCarries: 'parallel' }, { spineCarries: 'parallel', spineCarryTiles: 1 }]);
        },
        600_000,
      );
    });

    describe('single pass (policy passes 1: carries put together from published totals, with fallback)', () => {
      const ownKernels = (plan: ScanPlan) => plan.launches.map((l) => l.kernel).filter((k) => k !== 'validate' && k !== 'segment-offsets');
      const singlePass = ['single-pass'];
      const planOf = (c: ScanCase, tuning: { variant?: ScanVariant; policy?: Partial<ScanPolicy> }, requirements?: { determinism: 'not-guaranteed' }) => {
        const built = buildCase(backend, c);
        try {
          return (DeviceSegmentedScan.plan as unknown as (a: unknown, e: unknown) => ScanPlan)(built.args, env({ backend, tuning, requirements }));
        } finally {
          owned(built)();
        }
      };
      /** Sizes around tile boundaries (2048 items), empty and single-item segments among long ones. */
      const longSizes = [150_001, 0, 2048, 2049, 2047, 5 * 2048, 5 * 2048 + 1, 1, 4097, 123_457, 3 * 2048 - 1];

      it('taken for every operator and determinism under policy passes 1, and explain() says which path and why', () => {
        // The single pass is selectable (policy passes 1); reduce-then-scan is the default (passes 2).
        const multi = { variant: 'multi-workgroup' as const, policy: { passes: 1 } };
        const why = (plan: ScanPlan) => plan.explain().split('\n').find((line) => line.includes('multi-workgroup path:'));
        for (const [valueType, ops] of [['i32', 'sum'], ['u32', ['sum', 'min', 'max']], ['f32', ['min', 'max']], ['f32', ['sum', 'max']]] as const) {
          const plan = planOf(makeCase({ name: 'path', valueType, sizes: [100_000, 5], ops: ops as ScanOp | ScanOp[], seed: 1 }), multi);
          expect(ownKernels(plan), valueType).toEqual(singlePass);
          expect(why(plan)).toContain("single pass (policy passes 1): each tile's carry put together in the canonical order");
        }
        // Without tuning, one long segment takes reduce-then-scan (passes 2, the default: policy.ts has the measurements).
        const natural = planOf(makeCase({ name: 'path', valueType: 'i32', sizes: [100_000], ops: 'max', seed: 1 }), {});
        if (natural.variant === 'multi-workgroup') {
          expect(ownKernels(natural)).toContain('tile-reduce');
          expect(why(natural)).toContain('reduce-then-scan: policy passes 2');
        }
        // f32 sums take it under either determinism.
        const f32Sum = makeCase({ name: 'path', sizes: [100_000, 5], ops: ['sum', 'max'], seed: 1 });
        expect(ownKernels(planOf(f32Sum, multi, { determinism: 'not-guaranteed' }))).toEqual(singlePass);
        // The policy keeps reduce-then-scan selectable.
        const twoPasses = planOf(makeCase({ name: 'path', valueType: 'i32', sizes: [100_000], seed: 1 }), { ...multi, policy: { passes: 2 } });
        expect(ownKernels(twoPasses)).toEqual(['tile-reduce', 'spine-scan', 'tile-scan']);
        expect(why(twoPasses)).toContain('reduce-then-scan: policy passes 2');
        const narrow = planOf(makeCase({ name: 'path', valueType: 'i32', sizes: [100_000], seed: 1 }), { ...multi, policy: { passes: 1, workgroupSize: 128 } });
        expect(why(narrow)).toContain('the single pass needs workgroupSize 256');
        expect(() => planOf(makeCase({ name: 'path', valueType: 'i32', sizes: [100_000], seed: 1 }), { ...multi, policy: { passes: 3 } })).toThrow('tuning.policy.passes');
        expect(() => planOf(makeCase({ name: 'path', valueType: 'i32', sizes: [100_000], seed: 1 }), { ...multi, policy: { lookbackWindow: 32 } as Partial<ScanPolicy> })).toThrow('tuning.policy.lookbackWindow');
      });

      for (const valueType of ['i32', 'u32', 'f32'] as const) {
        const ops: ScanOp[] = valueType === 'f32' ? ['sum', 'min', 'max', 'sum', 'min'] : ['sum', 'min', 'max', 'sum', 'sum'];
        it(`${valueType}: long segments at tile boundaries, every operator and mode, initial values; totals worked out at the first miss (lookbackPolls 1); vec4 and word loads`, async () => {
          // f32: NaNs with payloads, -0, ±Inf, subnormals; integers: sums that wrap.
          const c = makeCase({ name: `single-${valueType}`, valueType, flavour: valueType === 'f32' ? 'special' : 'wrap', sizes: longSizes, ops, modes: [...bothModes], initial: true, seed: 41 });
          // Reduce-then-scan on the same case: the same bits.
          // Spans of 8 tiles (a lane of the tile totals: the default), of 1 and of 2.
          const plans = await expectReferenceRuns(c, 'multi-workgroup', [
            { passes: 1 },
            { passes: 1, lookbackPolls: 1 },
            { passes: 1, lookbackPolls: 1, loadWords: 1 },
            { passes: 1, singlePassTiles: 1 },
            { passes: 1, singlePassTiles: 2, lookbackPolls: 1 },
            { passes: 2 },
          ]);
          for (const plan of plans.slice(0, 5)) expect(ownKernels(plan)).toEqual(singlePass);
        }, 600_000);
      }

      it('f32 sums: the canonical bits through group and unit totals (segments of more than 128 and 2048 tiles), at the first miss too', async () => {
        const sizes = [2048 * 2048 + 3 * 2048 + 5, 129 * 2048, 128 * 2048 - 1, 300_001];
        const c = makeCase({ name: 'single-units', sizes, ops: 'sum', modes: ['inclusive', 'exclusive', 'inclusive', 'exclusive'], initial: [0.5, -0, 3, -7], seed: 61 });
        const plans = await expectReferenceRuns(c, 'multi-workgroup', [{ passes: 1 }, { passes: 1, lookbackPolls: 1 }, { passes: 1, singlePassTiles: 1, lookbackPolls: 1 }]);
        for (const plan of plans) expect(ownKernels(plan)).toEqual(singlePass);
      }, 900_000);

      it("f32 sums under 'not-guaranteed': exact sums (small integers) give the reference's bits in one pass", async () => {
        const c = makeCase({ name: 'single-fast', sizes: [130_001, 2048, 7, 4 * 2048], ops: 'sum', modes: ['inclusive', 'exclusive'], initial: [3, -0, 1e6, -2], seed: 43 });
        const random = rng(47);
        for (let i = 0; i < c.values.length; i++) c.values[i] = bitsOf(Math.floor(random() * 17) - 8);
        const built = buildCase(backend, c);
        for (const lookbackPolls of [64, 1]) {
          const { plan, out } = await runCase(backend, built, { variant: 'multi-workgroup', policy: { passes: 1, lookbackPolls }, requirements: { determinism: 'not-guaranteed' } });
          expect(ownKernels(plan)).toEqual(singlePass);
          expectBits(out, built.expected, 'single-fast');
        }
        owned(built)();
      }, 600_000);

      it('device-only sizes and item count', async () => {
        const c = makeCase({ name: 'single-device', valueType: 'i32', flavour: 'wrap', sizes: [5 * 2048 + 17, 2048, 60_000], sizeKind: 'perSegment-device', numSegmentsKind: 'device', ops: 'sum', modes: 'exclusive', initial: 7, seed: 53 });
        const plan = await expectReference(c, 'multi-workgroup', { passes: 1, lookbackPolls: 1 });
        expect(ownKernels(plan)).toEqual(singlePass);
      }, 600_000);

      it('the look-back words after a run: the counter at the grid, every tile total, and the group and unit totals that a later tile reads (workgroups of 1 and 8 tiles)', async () => {
        for (const singlePassTiles of [1, 8]) {
        const sizes = [2049 * 2048 + 3, 300 * 2048, 0];
        const c = makeCase({ name: 'single-words', valueType: 'u32', flavour: 'wrap', sizes, ops: 'sum', modes: 'inclusive', initial: 9, seed: 59 });
        const built = buildCase(backend, c);
        const plan = (DeviceSegmentedScan.plan as unknown as (a: unknown, e: unknown) => ScanPlan)(built.args, env({ backend, tuning: { variant: 'multi-workgroup', policy: { passes: 1, lookbackPolls: 1, singlePassTiles } } }));
        const temp = backend.alloc('u8', plan.tempStorageBytes);
        await plan.run(temp);
        const words = bits(await backend.download(temp));
        const tiles = Math.ceil(Math.max(...sizes) / 2048);
        const groups = Math.ceil(tiles / 128);
        const units = Math.ceil(tiles / 2048);
        const at = planInternals(plan).layout.slot('lookback').offset / 4;
        expect(words[at]).toBe(sizes.length * Math.ceil(tiles / singlePassTiles));
        const sum = (from: number, to: number) => {
          let total = 0;
          for (let i = from; i < to; i++) total = (total + c.values[i]!) >>> 0;
          return total;
        };
        let start = 0;
        sizes.forEach((size, segment) => {
          const entry = (e: number) => {
            const lo = words[at + 1 + 2 * (segment * (tiles + groups + units) + e)]!;
            const hi = words[at + 1 + 2 * (segment * (tiles + groups + units) + e) + 1]!;
            return lo === 0 && hi === 0 ? undefined : [lo >>> 16, hi >>> 16, ((lo & 0xffff) | (hi << 16)) >>> 0];
          };
          const segmentTiles = Math.ceil(size / 2048);
          for (let t = 0; t < tiles; t++) {
            // The totals of the items alone: no initial value.
            expect(entry(t), `segment ${segment} tile ${t}`).toEqual(t < segmentTiles ? [1, 1, sum(start + t * 2048, start + Math.min(size, (t + 1) * 2048))] : undefined);
          }
          // A group's (a unit's) total where a tile after its last reads it.
          for (let g = 0; g < groups; g++) {
            expect(entry(tiles + g), `segment ${segment} group ${g}`).toEqual((g + 1) * 128 < segmentTiles ? [1, 1, sum(start + g * 128 * 2048, start + (g + 1) * 128 * 2048)] : undefined);
          }
          for (let v = 0; v < units; v++) {
            expect(entry(tiles + groups + v), `segment ${segment} unit ${v}`).toEqual((v + 1) * 2048 < segmentTiles ? [1, 1, sum(start + v * 2048 * 2048, start + (v + 1) * 2048 * 2048)] : undefined);
          }
          start += size;
        });
        expectBits(bits(await backend.download(built.valuesOut)), built.expected, 'single-words');
        temp.destroy();
        owned(built)();
        }
      }, 900_000);
    });

    describe('edge cases', () => {
      it('empty segments, single items, all equal values', async () => {
        await expectAllVariants(makeCase({ name: 'empty', sizes: [0, 1, 0, 0, 2, 0, 1], ops: [...allOps], modes: [...bothModes], seed: 23 }));
        const c = makeCase({ name: 'all-equal', sizes: [3000, 17], ops: [...allOps], modes: [...bothModes], seed: 29 });
        c.values.fill(bitsOf(0.1));
        await expectAllVariants(c);
      });
      it('numSegments = 0 writes nothing', async () => {
        const built = buildCase(backend, makeCase({ name: 'zero', sizes: [], ops: 'sum', seed: 31 }));
        const { out } = await runCase(backend, built);
        expect([...out]).toEqual([untouchedBits]);
        owned(built)();
      });
      it('min and max: NaN above +Infinity, -0 equal to +0, ties keep the earlier bits', async () => {
        const c = makeCase({ name: 'nan-zero', sizes: [8, 8], ops: ['max', 'min'], modes: 'inclusive', opKind: 'perSegment', seed: 37 });
        const row = [0x80000000, 0x00000000, 0x7f800000, 0x7fc00001, 0x3f800000, 0xffc00002, 0xff800000, 0x80000000];
        c.values.set([...row, ...row]);
        await expectAllVariants(c);
        const built = buildCase(backend, c);
        const { out } = await runCase(backend, built);
        // max: -0 stays (+0 ties it), +Inf, then the first NaN's own bits for good.
        expect([...out.subarray(0, 8)]).toEqual([0x80000000, 0x80000000, 0x7f800000, 0x7fc00001, 0x7fc00001, 0x7fc00001, 0x7fc00001, 0x7fc00001]);
        // min: -0 stays through +0, +Inf, NaN, 1; -Inf takes over.
        expect([...out.subarray(8, 16)]).toEqual([0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0xff800000, 0xff800000]);
        owned(built)();
      });
      it('f32 sums: subnormals flushed, NaN written as 0x7fc00000, -0 kept where nothing is added', async () => {
        const c = makeCase({ name: 'f32-special', sizes: [4, 3, 2], ops: 'sum', modes: 'inclusive', seed: 41 });
        c.values.set([0x80000000, 0x00000001, 0x00800000, 0x80800001, 0x7f800000, 0xff800000, 0x3f800000, 0x7f800001, 0x3f800000]);
        await expectAllVariants(c);
        const built = buildCase(backend, c);
        const { out } = await runCase(backend, built);
        // -0; -0 + subnormal(flushed to +0) = +0; + 2^-126; + (-2^-126 - ulp) = subnormal, flushed to -0.
        expect([...out.subarray(0, 4)]).toEqual([0x80000000, 0x00000000, 0x00800000, 0x80000000]);
        // +Inf + -Inf = NaN, canonical; NaN + 1 stays NaN.
        expect([...out.subarray(4, 7)]).toEqual([0x7f800000, 0x7fc00000, 0x7fc00000]);
        expect([...out.subarray(7, 9)]).toEqual([0x7fc00000, 0x7fc00000]);
        owned(built)();
      });
      it('integer sums wrap modulo 2^32', async () => {
        const c = makeCase({ name: 'wrap', valueType: 'i32', sizes: [3], ops: 'sum', modes: 'inclusive', initial: 2147483647, seed: 43 });
        c.values.set([1, 0xffffffff, 0x80000000]);
        const built = buildCase(backend, c);
        const { out } = await runCase(backend, built);
        expect([...out]).toEqual([0x80000000, 0x7fffffff, 0xffffffff]);
        owned(built)();
        await expectAllVariants(makeCase({ name: 'wrap-u32', valueType: 'u32', flavour: 'wrap', sizes: [5000, 70], ops: 'sum', modes: 'inclusive', seed: 47 }));
      });
      it('strided segments: elements between segments are left as they were', async () => {
        await expectAllVariants(makeCase({ name: 'strided', sizes: [700, 0, 999, 1000, 5], stride: 1000, ops: [...allOps], modes: [...bothModes], initial: true, seed: 53 }));
      });
      it('a segment-size guarantee (totalNumItems) smaller than the values', async () => {
        const c = makeCase({ name: 'total', sizes: [2500, 2500], ops: 'sum', seed: 59 });
        for (const variant of scanVariants) {
          const built = buildCase(backend, c);
          built.args.totalNumItems = p.guarantee({ max: 5000 });
          const { out, plan } = await runCase(backend, built, { variant });
          expectBits(out, built.expected, `total (${plan.variant})`);
          owned(built)();
        }
      });
    });

    describe('every parameter kind', () => {
      const sizes = [300, 0, 4096, 17, 2049, 1, 555];
      const base = { sizes, ops: ['sum', 'max', 'min', 'sum', 'sum', 'min', 'max'] as ('sum' | 'min' | 'max')[], modes: ['exclusive', 'inclusive', 'inclusive', 'exclusive', 'inclusive', 'exclusive', 'inclusive'] as ('inclusive' | 'exclusive')[] };
      const equal = sizes.map(() => 2049);
      it('segment sizes: constant, uniform, device uniform, per-segment on the host and the device, device bounds', async () => {
        for (const sizeKind of ['constant', 'uniform', 'uniform-device'] as const) {
          await expectReference(makeCase({ name: `sizes ${sizeKind}`, ...base, sizes: equal, sizeKind, seed: 61 }));
        }
        for (const sizeKind of ['perSegment', 'perSegment-device', 'perSegment-device-bounds'] as const) {
          await expectReference(makeCase({ name: `sizes ${sizeKind}`, ...base, sizeKind, seed: 67 }));
        }
      });
      it('numSegments: constant, uniform, device', async () => {
        for (const numSegmentsKind of ['constant', 'uniform', 'device'] as const) await expectReference(makeCase({ name: `numSegments ${numSegmentsKind}`, ...base, numSegmentsKind, seed: 71 }));
      });
      it('op and mode: constant, uniform, device uniform, per-segment on the host and the device', async () => {
        for (const opKind of ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device'] as const) {
          await expectReference(makeCase({ name: `op ${opKind}`, ...base, opKind, ops: opKind.startsWith('perSegment') ? base.ops : ['max'], seed: 73 }));
        }
        for (const modeKind of ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device'] as const) {
          await expectReference(makeCase({ name: `mode ${modeKind}`, ...base, modeKind, modes: modeKind.startsWith('perSegment') ? base.modes : ['exclusive'], seed: 79 }));
        }
      });
      it('initialValue: constant, uniform, device uniform, per-segment on the host and the device, for every value type', async () => {
        for (const valueType of ['f32', 'i32', 'u32'] as const) {
          for (const initialKind of ['constant', 'uniform', 'uniform-device', 'perSegment', 'perSegment-device'] as const) {
            await expectReference(makeCase({ name: `initialValue ${initialKind} ${valueType}`, valueType, ...base, initial: true, initialKind, seed: 83 }));
          }
        }
      });
      it('a device-only initial value may be any value of its type, NaN included', async () => {
        const c = makeCase({ name: 'initial NaN', sizes: [5, 5], ops: ['max', 'sum'], modes: 'exclusive', opKind: 'perSegment', initial: 0, initialKind: 'perSegment-device', seed: 89 });
        const built = buildCase(backend, c);
        const nan = backend.upload(new Uint32Array([0x7fc00007, 0x7fc00007]));
        built.owned.push(nan);
        built.args.initialValue = p.perSegment(nan as unknown as DeviceArray<'u32'>);
        // The values are f32: a u32 array is rejected, so upload the bits as f32.
        expect(() => (DeviceSegmentedScan.plan as unknown as (a: unknown, e: unknown) => unknown)(built.args, env({ backend }))).toThrow(
          "initialValue: dtype 'u32' is not accepted here; expected 'f32'",
        );
        const nanF32 = backend.upload(new Float32Array(new Uint32Array([0x7fc00007, 0x7fc00007]).buffer));
        built.owned.push(nanF32);
        built.args.initialValue = p.perSegment(nanF32);
        const { out } = await runCase(backend, built);
        // max from a NaN stays that NaN (its own bits); a sum from it is NaN, written canonical.
        expect([...out.subarray(0, 5)]).toEqual([0x7fc00007, 0x7fc00007, 0x7fc00007, 0x7fc00007, 0x7fc00007]);
        expect([...out.subarray(5, 10)]).toEqual([0x7fc00007, 0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000]);
        owned(built)();
      });
      it('one segment whose size lives only on the device (an earlier kernel wrote it), numSegments constant 1', async () => {
        const valuesIn = backend.upload(new Float32Array(10_000).map((_, i) => (i % 7) - 3));
        const valuesOut = backend.upload(new Float32Array(10_000).fill(-1));
        const count = backend.upload(new Uint32Array([6000]));
        const args = { valuesIn, valuesOut, numSegments: p.constant(1), segmentSizes: p.uniform(count, { max: 10_000 }) };
        backend.resetStats();
        await DeviceSegmentedScan.inclusiveSum(args, env({ backend }));
        // No read-back: the device check's status is read at the next synchronize or download.
        expect(backend.stats().downloads).toBe(0);
        await backend.synchronize();
        await DeviceSegmentedScan.inclusiveSum(args, env({ backend, requirements: { guaranteeChecks: 'trust' } }));
        const out = await backend.download(valuesOut);
        let sum = 0;
        for (let i = 0; i < 6000; i++) {
          sum += (i % 7) - 3;
          expect(out[i]).toBe(sum);
        }
        expect([...out.subarray(6000, 6003)]).toEqual([-1, -1, -1]);
        for (const a of [valuesIn, valuesOut, count]) a.destroy();
      });
      it('download(array, into) fills one host buffer call after call; a violation leaves it as it was; a wrong buffer is named', async () => {
        const valuesIn = backend.upload(new Float32Array(4000).map((_, i) => (i % 5) - 2));
        const valuesOut = backend.alloc('f32', 4000);
        const count = backend.upload(new Uint32Array([3000]));
        const args = { valuesIn, valuesOut, numSegments: p.constant(1), segmentSizes: p.uniform(count, { max: 4000 }) };
        const into = new Float32Array(4000);
        await DeviceSegmentedScan.inclusiveSum(args, env({ backend }));
        expect(await backend.download(valuesOut, into)).toBe(into);
        expect([...into.subarray(0, 6)]).toEqual([-2, -3, -3, -2, 0, -2]);
        // A size past its bound: the run writes nothing, and the download that reports it leaves `into` alone.
        const bad = backend.upload(new Uint32Array([4001]));
        into.fill(7);
        await DeviceSegmentedScan.inclusiveSum({ ...args, segmentSizes: p.uniform(bad, { max: 4000 }) }, env({ backend }));
        await expect(backend.download(valuesOut, into)).rejects.toBeInstanceOf(GuaranteeViolationError);
        expect(into.every((x) => x === 7)).toBe(true);
        await backend.download(valuesOut, into);
        expect(into[2999]).toBe([...Array(3000).keys()].reduce((a, i) => a + ((i % 5) - 2), 0));
        await expect(backend.download(valuesOut, new Float32Array(3999))).rejects.toThrow('download(array, into): into holds 3999 elements; the DeviceArray holds 4000');
        await expect(backend.download(valuesOut, new Int32Array(4000) as never)).rejects.toThrow(
          "download(array, into): into must be a Float32Array for a DeviceArray of dtype 'f32', got a Int32Array",
        );
        for (const a of [valuesIn, valuesOut, count, bad]) a.destroy();
      });
    });

    describe('requirements', () => {
      it("'not-guaranteed' f32 sums are close to the canonical ones; everything else is exact", async () => {
        const c = makeCase({ name: 'fast', sizes: [5000, 300, 20], ops: ['sum', 'max', 'sum'], modes: ['inclusive', 'inclusive', 'exclusive'], initial: [1, 2, 3], seed: 97 });
        for (const variant of scanVariants) {
          const built = buildCase(backend, c);
          const { out, plan } = await runCase(backend, built, { variant, requirements: { determinism: 'not-guaranteed' } });
          const got = new Float32Array(out.buffer);
          const expected = new Float32Array(built.expected.buffer);
          for (let i = 0; i < got.length; i++) expect(Math.abs(got[i]! - expected[i]!), `${plan.variant} ${i}`).toBeLessThanOrEqual(0.5 + 1e-4 * Math.abs(expected[i]!));
          expect([...out.subarray(5000, 5300)]).toEqual([...built.expected.subarray(5000, 5300)]);
          owned(built)();
        }
      });
      it("'trust' with device-only values makes no transfer", async () => {
        const c = makeCase({ name: 'trust', ...{ sizes: randomSizes(5, 3000, 101) }, sizeKind: 'perSegment-device', ops: [...allOps], opKind: 'perSegment-device', modes: [...bothModes], modeKind: 'perSegment-device', initial: true, initialKind: 'perSegment-device', numSegmentsKind: 'device', seed: 103 });
        const built = buildCase(backend, c);
        const plan = (DeviceSegmentedScan.plan as unknown as (a: unknown, e: unknown) => ScanPlan)(built.args, env({ backend, requirements: { guaranteeChecks: 'trust' } }));
        const temp = plan.tempStorageBytes ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
        backend.resetStats();
        await plan.run(temp);
        await backend.synchronize();
        expect(backend.stats().uploads + backend.stats().downloads).toBe(0);
        expect(bits(await backend.download(built.valuesOut))).toEqual(built.expected);
        temp?.destroy();
        owned(built)();
      });
    });

    describe('bad input leaves outputs untouched', () => {
      async function expectUntouched(built: BuiltCase) {
        expect([...bits(await backend.download(built.valuesOut))].every((b) => b === untouchedBits)).toBe(true);
      }
      const plan = DeviceSegmentedScan.plan as unknown as (a: unknown, e?: unknown) => ScanPlan;

      it('a host option outside the set, a host initial value outside its type', async () => {
        const built = buildCase(backend, makeCase({ name: 'bad-host', sizes: [5, 6], ops: 'sum', seed: 107 }));
        built.args.op = p.perSegmentOption(['sum', 'product' as 'sum'], ['sum', 'min', 'max']);
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SegkitRangeError);
        expect((error as Error).message).toBe("op[1]: option 'product' is not one of the options ['sum', 'min', 'max']");
        built.args.op = p.constantOption('sum');
        built.args.initialValue = p.uniform(Number.NaN);
        await expect(runCase(backend, built)).rejects.toThrow('initialValue: expected a number, got number NaN');
        built.args.initialValue = undefined;
        // Policy values out of their sets, on a plan that would take them (multi-workgroup).
        await expect(runCase(backend, built, { variant: 'multi-workgroup', policy: { storeWords: 2 } })).rejects.toThrow('tuning.policy.storeWords: 2 is not 1 or 4 (words per store)');
        await expect(runCase(backend, built, { variant: 'multi-workgroup', policy: { scanTilesPerStep: 3 } })).rejects.toThrow('tuning.policy.scanTilesPerStep: 3 is not 1, 2 or 4 (full tiles a step)');
        await expectUntouched(built);
        owned(built)();
        const ints = buildCase(backend, makeCase({ name: 'bad-u32', valueType: 'u32', sizes: [5], ops: 'sum', seed: 109 }));
        ints.args.initialValue = p.constant(-1);
        await expect(runCase(backend, ints)).rejects.toThrow('initialValue: -1 is outside the static bounds [0, 4294967295]');
        ints.args.initialValue = p.uniform(1.5);
        await expect(runCase(backend, ints)).rejects.toThrow('initialValue: 1.5 is not an integer');
        await expectUntouched(ints);
        owned(ints)();
      });
      it('a device-only operator index past the options', async () => {
        const built = buildCase(backend, makeCase({ name: 'bad-device-op', sizes: [5, 6, 7], ops: ['sum', 'min', 'max'], opKind: 'perSegment-device', seed: 113 }));
        const indices = backend.upload(new Uint32Array([0, 1, 3]));
        built.owned.push(indices);
        built.args.op = p.perSegmentOption(indices, ['sum', 'min', 'max']);
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuaranteeViolationError);
        expect((error as GuaranteeViolationError).parameter).toBe('op');
        expect((error as GuaranteeViolationError).segment).toBe(2);
        expect((error as Error).message).toBe('op[2]: 3 is outside the static bounds [0, 2] (found on the device)');
        await expectUntouched(built);
        owned(built)();
      });
      it('device-only sizes past the values, a device-only count past the outputs', async () => {
        const built = buildCase(backend, makeCase({ name: 'bad-device-size', sizes: [5, 6], ops: 'sum', sizeKind: 'perSegment-device', seed: 127 }));
        const sizes = backend.upload(new Uint32Array([5, 7]));
        built.owned.push(sizes);
        built.args.segmentSizes = p.perSegment(sizes, { max: 100 });
        const error = await runCase(backend, built).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GuaranteeViolationError);
        expect((error as Error).message).toBe('segmentSizes[1]: the segment ends at 12, past the 11 values of valuesIn (found on the device)');
        await expectUntouched(built);
        built.args.segmentSizes = p.constant(5);
        const count = backend.upload(new Uint32Array([3]));
        built.owned.push(count);
        built.args.numSegments = p.uniform(count, { max: 2 });
        const tooMany = await runCase(backend, built).catch((e: unknown) => e);
        expect(tooMany).toBeInstanceOf(GuaranteeViolationError);
        expect((tooMany as GuaranteeViolationError).parameter).toBe('numSegments');
        await expectUntouched(built);
        owned(built)();
      });
      it('arrays: wrong dtype, too short, the same array, destroyed, another backend; unknown fields; missing temporary storage', async () => {
        const built = buildCase(backend, makeCase({ name: 'misuse', sizes: [5000], ops: 'sum', seed: 131 }));
        const { args } = built;
        const wrongType = backend.alloc('i32', 5000);
        const short = backend.alloc('f32', 4999);
        built.owned.push(wrongType, short);
        expect(() => plan({ ...args, valuesOut: wrongType }, env({ backend }))).toThrow("valuesOut: dtype 'i32' is not accepted here; expected 'f32'");
        expect(() => plan({ ...args, valuesOut: short }, env({ backend }))).toThrow('valuesOut: needs as many elements as valuesIn (5000), in the same layout; has 4999');
        expect(() => plan({ ...args, valuesOut: args.valuesIn }, env({ backend }))).toThrow('valuesOut: must not be valuesIn');
        expect(() => plan({ ...args, segmentStrid: p.constant(5000) }, env({ backend }))).toThrow(SegkitUsageError);
        expect(() => plan({ ...args, segmentStrid: p.constant(5000) }, env({ backend }))).toThrow("args: unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
        expect(() => plan({ ...args, mode: undefined }, env({ backend }))).toThrow("args: missing required field 'mode'");
        expect(() => plan({ ...args, segmentSizes: p.perSegment([5001]) }, env({ backend }))).toThrow('segmentSizes[0]: segment 0 ends at 5001, past the 5000 values of valuesIn');
        const multi = plan(args, env({ backend, tuning: { variant: 'multi-workgroup' } }));
        expect(multi.tempStorageBytes).toBeGreaterThan(0);
        await expect(multi.run()).rejects.toThrow(/tempStorage: this plan needs \d+ bytes/);
        await expectUntouched(built);
        owned(built)();
        const temp = backend.alloc('u8', multi.tempStorageBytes);
        await expect(multi.run(temp)).rejects.toThrow('valuesIn: the DeviceArray was destroyed and cannot be used');
        temp.destroy();
      });
    });
  });
}
