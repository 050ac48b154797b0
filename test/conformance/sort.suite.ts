/**
 * The DeviceSegmentedSort conformance suite, written once and run on every backend: random and
 * adversarial keys compared bit for bit with `referenceSegmentedSort` (stable, NaN largest, -0 equal
 * to +0), every variant forced through tuning, every parameter kind, both layouts, and bad input
 * named with outputs untouched. `thorough: false` keeps the cases that cover every kernel and
 * specialization kind once (WebGPU on lavapipe compiles each pipeline slowly).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, type SegmentedSortVariant, type SortOrder, DeviceSegmentedSort, GuaranteeViolationError, SegkitUsageError, env, p, segmentedSortPolicyFor, segmentedSortVariants } from '../../src/index.js';
import { workgroupRadixBytes } from '../../src/algorithms/segmented-sort/problem.js';
import { gpuClass } from '../../src/dispatch/variants.js';
import { rng } from '../helpers.js';
import { starts, untouchedBits } from './common.js';
import { type SortCase, buildSortCase, makeSortCase, runSortCase } from './sort-cases.js';

const randomSizes = (n: number, max: number, seed: number, min = 0) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => min + Math.floor(random() * (max - min + 1)));
};
const hex = (a: Uint32Array) => Array.from(a, (x) => x.toString(16));
const alternating = (n: number) => Array.from({ length: n }, (_, i): 'ascending' | 'descending' => (i % 3 === 1 ? 'descending' : 'ascending'));

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
export function defineSortConformance(backendName: string, makeBackend: () => Promise<Backend>, { thorough = true }: { thorough?: boolean } = {}): void {
  describe(`DeviceSegmentedSort conformance on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    async function expectReference(c: SortCase, variant?: SegmentedSortVariant, policy?: Record<string, number>): Promise<SegmentedSortVariant> {
      const built = buildSortCase(backend, c);
      try {
        const { plan, keys, values } = await runSortCase(backend, built, { variant, policy });
        expect(hex(keys), `${c.name}: keys (${plan.variant})`).toEqual(hex(built.expected.keys));
        if (values !== undefined) expect(hex(values), `${c.name}: values (${plan.variant})`).toEqual(hex(built.expected.values));
        return plan.variant;
      } finally {
        for (const a of built.owned) a.destroy();
      }
    }

    /** The natural choice, then every variant forced that applies. */
    /** The natural plan and every variant forced (but those in `skip`) give the reference; those in `mustRun` ran. */
    async function expectAllVariants(c: SortCase, mustRun: SegmentedSortVariant[] = [], policy?: Record<string, number>, skip: readonly SegmentedSortVariant[] = []): Promise<void> {
      const ran = [await expectReference(c, undefined, policy)];
      for (const variant of segmentedSortVariants.filter((v) => !skip.includes(v))) {
        try {
          await expectReference(c, variant, policy);
          ran.push(variant);
        } catch (error) {
          if (!(error instanceof SegkitUsageError) || !/cannot run for these parameters/.test(error.message)) throw error;
        }
      }
      for (const v of mustRun) expect(ran, `${c.name}: variants run`).toContain(v);
    }

    describe('keys, orders and values, every variant', () => {
      const combos = thorough
        ? (['f32', 'i32', 'u32'] as const).flatMap((keyType) => (['random', 'ties', 'special'] as const).map((flavour) => ({ keyType, flavour })))
        : [
            { keyType: 'f32', flavour: 'special' },
            { keyType: 'i32', flavour: 'ties' },
          ] as const;
      for (const { keyType, flavour } of combos) {
        it(`${keyType} ${flavour}: sizes around the tile, order per segment`, async () => {
          const { tileItems } = segmentedSortPolicyFor(backend.capabilities);
          const small = [0, 1, 2, 3, 17, 0, 255, 256, 257, 1000];
          await expectAllVariants(makeSortCase({ name: `${keyType}/${flavour}/small`, keyType, flavour, sizes: small, orders: alternating(small.length), seed: 3 }), ['single-tile', 'merge', 'workgroup-radix', 'radix']);
          const edges = [tileItems - 1, tileItems, 0, tileItems + 1, 2 * tileItems + 1, 5];
          await expectAllVariants(makeSortCase({ name: `${keyType}/${flavour}/edges`, keyType, flavour, sizes: edges, orders: alternating(edges.length), seed: 5 }), ['merge', 'workgroup-radix', 'radix']);
        });
      }
      it('payloads, f32 and i32 indices, keys only', async () => {
        const sizes = [5, 300, 0, 2100, 64];
        for (const values of thorough ? (['payload', 'indices-f32', 'indices-i32', 'none'] as const) : (['payload', 'indices-f32'] as const)) {
          await expectAllVariants(makeSortCase({ name: `values ${values}`, keyType: 'u32', flavour: 'ties', sizes, orders: 'descending', values, seed: 7 }), ['merge', 'workgroup-radix', 'radix']);
        }
      });
    });

    describe('stability, NaN and signed zeros', () => {
      it('heavy ties keep their input order in both orders, on every variant', async () => {
        const sizes = [3000, 700, 1, 4500];
        const c = makeSortCase({ name: 'ties', keyType: 'i32', flavour: 'ties', sizes, orders: ['descending', 'ascending', 'ascending', 'descending'], values: 'indices-i32', seed: 11 });
        await expectAllVariants(c, ['merge', 'workgroup-radix', 'radix']);
      });
      it('keys compared alone, indices where keys tie: equal keys far apart, runs up to and past the tie run, keys that tie with the padding', async () => {
        // Distinct random keys, then copies of a few of them planted 37 places apart (never within
        // one single-tile invocation's first run of up to 32), in runs of 2 to 20: a sort that
        // compares keys first must still leave each run in index order. Keys whose sort key is the
        // single-tile padding's (NaN 0x7fffffff ascending, 0xffffffff descending) tie with it in
        // segments short of a power of two.
        const tile = segmentedSortPolicyFor(backend.capabilities).tileItems;
        const sizes = [tile, tile - 96, Math.min(1000, tile - 24), Math.min(1000, tile - 24), tile / 2, 17];
        const orders: SortOrder[] = ['ascending', 'descending', 'ascending', 'descending', 'ascending', 'descending'];
        const options = { name: 'sparse ties', keyType: 'f32', flavour: 'random', sizes, orders, orderKind: 'perSegment', seed: 14 } as const;
        const c = makeSortCase({ ...options, values: 'indices-u32' });
        const begin = starts(c);
        const plant = (segment: number, from: number, copies: number, bits?: number) => {
          const at = begin[segment]! + from;
          const value = bits ?? c.keys[at]!;
          for (let j = 0; j < copies; j++) c.keys[at + j * 37] = value;
        };
        for (const [at, copies] of [[0, 2], [0.07, 3], [0.22, 5], [0.51, 8], [0.73, 2]] as const) plant(0, 5 + Math.floor(at * tile), copies);
        plant(1, 10, 20);
        plant(1, Math.floor(0.49 * tile), 4);
        plant(2, 3, 6, 0x7fffffff);
        plant(3, 8, 3, 0xffffffff);
        plant(4, 100, 9);
        const withPayload = makeSortCase({ ...options, values: 'payload' });
        withPayload.keys = c.keys;
        await expectAllVariants(c, ['single-tile', 'merge']);
        for (const policy of [{ tileItemsPerInvocation: 2 }, { tileItemsPerInvocation: 4 }, { tileItemsPerInvocation: 32 }]) expect(await expectReference(c, 'single-tile', policy)).toBe('single-tile');
        expect(await expectReference(withPayload, 'single-tile')).toBe('single-tile');
      });
      it('NaN sorts as the largest key; -0 and +0 are equal (input order, own bits)', async () => {
        // NaN(payload 1), -0, +0, 1, -1, NaN(payload 2), -0
        const row = [0x7fc00001, 0x80000000, 0x00000000, 0x3f800000, 0xbf800000, 0xffc00002, 0x80000000];
        const c = makeSortCase({ name: 'nan-zero', sizes: [7, 7], orders: ['ascending', 'descending'], orderKind: 'perSegment', values: 'indices-u32', seed: 13 });
        c.keys = new Uint32Array([...row, ...row]);
        for (const variant of segmentedSortVariants) {
          const built = buildSortCase(backend, c);
          const { keys, values } = await runSortCase(backend, built, { variant });
          expect(hex(keys)).toEqual(hex(new Uint32Array([0xbf800000, 0x80000000, 0, 0x80000000, 0x3f800000, 0x7fc00001, 0xffc00002, 0x7fc00001, 0xffc00002, 0x3f800000, 0x80000000, 0, 0x80000000, 0xbf800000])));
          expect([...values!]).toEqual([4, 1, 2, 6, 3, 0, 5, 0, 5, 3, 1, 2, 6, 4]);
          for (const a of built.owned) a.destroy();
        }
      });
    });

    describe('long segments and many segments', () => {
      it('segments over many radix tiles', async () => {
        await expectAllVariants(makeSortCase({ name: 'tiles', keyType: 'f32', flavour: 'special', sizes: [50_000, 9000, 3, 0, 4097], orders: alternating(5), seed: 17 }), ['merge', 'workgroup-radix', 'radix']);
        // Small radix tiles: many tiles per segment (tiles per segment is a uniform, no new pipeline).
        const small = makeSortCase({ name: 'small tiles', keyType: 'f32', flavour: 'special', sizes: [5000, 777, 12000], orders: alternating(3), seed: 19 });
        await expectReference(small, 'radix', { radixTileItems: 300 });
        // 40 tiles a segment: a scan launch (from 33 tiles, the built-in policies'), or none (the
        // scatter adds up the tiles' counts: five batches of 8, the last part empty), or a scan
        // launch wherever there is one tile or more.
        const built = buildSortCase(backend, small);
        try {
          const scans = (policy: Record<string, number>) => {
            const made = DeviceSegmentedSort.plan(built.args as never, env({ backend, tuning: { variant: 'radix', policy } })) as { launches: readonly { name: string }[]; destroy(): void };
            made.destroy();
            return made.launches.some((launch) => launch.name.includes('radix/scan'));
          };
          expect(scans({ radixTileItems: 300 }), 'radixScanLaunchMinTiles 33, 40 tiles').toBe(true);
          expect(scans({ radixTileItems: 300, radixScanLaunchMinTiles: 41 }), 'radixScanLaunchMinTiles 41').toBe(false);
        } finally {
          for (const a of built.owned) a.destroy();
        }
        await expectReference(small, 'radix', { radixTileItems: 300, radixScanLaunchMinTiles: 41 });
        await expectReference(small, 'radix', { radixScanLaunchMinTiles: 1 });
        // Segments in groups that reuse the counts (tiles and groups are uniforms and pass words, no new pipeline).
        const grouped = makeSortCase({ name: 'groups', keyType: 'f32', flavour: 'special', sizes: [5000, 3000, 0, 7000, 100, 2500, 1], orders: alternating(7), seed: 20 });
        await expectReference(grouped, 'radix', { radixTileItems: 300, radixMaxTiles: 20 });
        await expectReference(grouped, 'radix', { radixMaxTiles: 2 });
        // Tiles lengthened to 600 and 1200 items while 7 segments keep radixMinTiles: 7 * ceil(7000 / 1200) = 42 tiles.
        await expectReference(grouped, 'radix', { radixTileItems: 300, radixMinTiles: 40 });
        // Each way the radix kernels load (results do not depend on it), with values and without.
        for (const radixLoads of thorough ? [1, 2, 3] : [1, 2]) {
          for (const values of thorough ? (['payload', 'none'] as const) : (['payload'] as const)) {
            const c = makeSortCase({ name: `loads ${radixLoads} ${values}`, keyType: 'f32', flavour: 'special', sizes: [5000, 777, 0, 12000], orders: alternating(4), values, seed: 21 });
            await expectReference(c, 'radix', { radixLoads });
            await expectReference(c, 'radix', { radixLoads, radixTileItems: 300 });
          }
        }
      }, 900_000);
      it('single-tile layouts: segments sharing a workgroup, items per invocation, groups per invocation', async () => {
        // Sizes on both sides of every power of two up to 1024, so a workgroup's segments pad to its largest.
        const sizes = [0, 1, 2, 3, 5, 8, 9, 16, 17, 31, 33, 64, 100, 255, 256, 257, 600, 1023, 1024, 7, 0, 12];
        const c = makeSortCase({ name: 'layouts', keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), values: 'indices-u32', seed: 61 });
        const policies: Record<string, number>[] = thorough
          ? [{}, { tileItemsPerInvocation: 2 }, { tileItemsPerInvocation: 4 }, { tileItemsPerInvocation: 16 }, { tileItemsPerInvocation: 32 }, { workgroupSize: 64 }, { workgroupSize: 64, tileItemsPerInvocation: 2 }]
          : [{ workgroupSize: 64, tileItemsPerInvocation: 2 }, { workgroupSize: 64, tileItemsPerInvocation: 32 }];
        for (const policy of policies) expect(await expectReference(c, 'single-tile', policy)).toBe('single-tile');
        // Loads in flight per invocation (tileLoadBatch): one at a time, a batch past some workgroups'
        // entries (64 invocations, 2 items each), payloads gathered in batches, keys only.
        for (const tileLoadBatch of thorough ? [1, 2, 4, 16] : [1, 16]) {
          expect(await expectReference(c, 'single-tile', { tileLoadBatch })).toBe('single-tile');
          if (thorough) expect(await expectReference(c, 'single-tile', { tileLoadBatch, workgroupSize: 64, tileItemsPerInvocation: 2 })).toBe('single-tile');
          for (const values of ['payload', 'none'] as const) {
            const other = makeSortCase({ name: `layouts ${values}`, keyType: 'i32', flavour: 'ties', sizes, orders: 'descending', values, seed: 63 });
            expect(await expectReference(other, 'single-tile', { tileLoadBatch })).toBe('single-tile');
          }
        }
        // Short rows only: many segments to a workgroup, the last workgroup partly past numSegments.
        const rows = randomSizes(1000, 40, 67);
        await expectReference(makeSortCase({ name: 'short rows', keyType: 'i32', flavour: 'ties', sizes: rows, orders: alternating(rows.length), values: 'payload', seed: 71 }), 'single-tile');
      });
      it('ragged segments taken largest first (the size order), sizes on the host and on the device', async () => {
        // Up to a tile each: one segment a single-tile workgroup, from sizeOrderMinSegments (256) on.
        const { tileItems } = segmentedSortPolicyFor(backend.capabilities);
        const sizes = randomSizes(thorough ? 600 : 300, tileItems, 131);
        // On by default on GPU-class backends only (policy.ts sizeOrderMinSegments): forced here.
        const runs: [SegmentedSortVariant | undefined, Record<string, number>, boolean][] = [
          [undefined, { sizeOrderMinSegments: 256 }, true],
          ['workgroup-radix', { sizeOrderMinSegments: 256 }, true],
          [undefined, { sizeOrderMinSegments: 1_000_000 }, false],
          [undefined, {}, gpuClass(backend.capabilities)],
        ];
        for (const sizeKind of ['perSegment', 'perSegment-device'] as const) {
          const c = makeSortCase({ name: `by size, ${sizeKind}`, keyType: 'f32', flavour: 'special', sizes, sizeKind, sizeBounds: { min: 0, max: tileItems }, orders: alternating(sizes.length), values: 'indices-u32', seed: 137 });
          const built = buildSortCase(backend, c);
          try {
            for (const [variant, policy, ordered] of runs) {
              const { plan, keys, values } = await runSortCase(backend, built, { variant, policy });
              const label = `${c.name} ${plan.variant} ${JSON.stringify(policy)}`;
              expect(plan.launches.some((l) => l.purpose.includes('in order of size')), `${label}: size order`).toBe(ordered);
              expect(hex(keys), `${label}: keys`).toEqual(hex(built.expected.keys));
              expect(hex(values!), `${label}: values`).toEqual(hex(built.expected.values!));
            }
          } finally {
            for (const a of built.owned) a.destroy();
          }
        }
      }, 900_000);
      // The forced radix run over 120k tiny segments is slow on a software rasterizer (97 launches;
      // 835 s on lavapipe with one thread on a loaded 2-core machine, well under 600 s when idle).
      it('100k+ segments of up to 12 keys, every variant', async () => {
        const sizes = randomSizes(120_000, 12, 23);
        // workgroup-radix gives each of the 120k segments a workgroup of its own (the same code as for a
        // few segments, which every other forced case runs on every backend): on a software Vulkan
        // device that run alone outlasts the file's budget, so WebGPU (thorough: false) forces the
        // other two here, and the CPU backends all three.
        const skip: SegmentedSortVariant[] = thorough ? [] : ['workgroup-radix'];
        const c = makeSortCase({ name: 'many', keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), seed: 29 });
        await expectAllVariants(c, (['single-tile', 'merge', 'workgroup-radix', 'radix'] as const).filter((v) => !skip.includes(v)), undefined, skip);
      }, 1_500_000);
    });

    describe('merge: tiles sorted, then runs merged in pairs', () => {
      it('sizes around every run length, small tiles (many passes), each value mode and load batch', async () => {
        // Tiles of 256 keys over 64 invocations: segments of 1 to 24 runs, each leaving after its own last pass.
        const policy = { workgroupSize: 64, tileItems: 256 };
        const sizes = [255, 256, 257, 511, 512, 513, 0, 1024, 1025, 3 * 256 + 1, 6000, 1, 4096 + 255];
        for (const values of thorough ? (['payload', 'indices-f32', 'indices-i32', 'none'] as const) : (['payload', 'none'] as const)) {
          const c = makeSortCase({ name: `merge ${values}`, keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), values, seed: 103 });
          expect(await expectReference(c, 'merge', policy)).toBe('merge');
        }
        const ties = makeSortCase({ name: 'merge ties', keyType: 'i32', flavour: 'ties', sizes, orders: 'descending', values: 'indices-u32', seed: 107 });
        for (const tileLoadBatch of thorough ? [1, 4] : [1]) expect(await expectReference(ties, 'merge', { ...policy, tileLoadBatch })).toBe('merge');
        // Few tiles for the batch: tiles of half tileItems (128 keys, two an invocation), twice the passes.
        expect(await expectReference(ties, 'merge', { ...policy, mergeMinTiles: 1_000_000 })).toBe('merge');
        // The backend's own tile and workgroup: one long segment over several passes.
        expect(await expectReference(makeSortCase({ name: 'merge long', keyType: 'f32', flavour: 'special', sizes: [70_001, 3], orders: alternating(2), seed: 109 }), 'merge')).toBe('merge');
      }, 900_000);
      it('the natural plan picks merge for segments past the tile up to mergeMaxSegmentItems (a backend with many workgroup slots)', async () => {
        const { tileItems } = segmentedSortPolicyFor(backend.capabilities);
        const sizes = [300, tileItems + 1, 0, 3 * tileItems, 1];
        const c = makeSortCase({ name: 'merge natural', keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), values: 'indices-f32', seed: 113 });
        expect(await expectReference(c, undefined, { mergeMaxSegmentItems: 3 * tileItems })).toBe('merge');
        expect(await expectReference(c, undefined, { mergeMaxSegmentItems: 3 * tileItems - 1 })).not.toBe('merge');
      }, 900_000);
    });

    describe('workgroup-radix: one workgroup per segment', () => {
      it('sizes around its rank tile and its workgroup, with small policies (many tiles, several digits per invocation)', async () => {
        const policy = segmentedSortPolicyFor(backend.capabilities);
        const rank = policy.workgroupSize * policy.workgroupRadixItemsPerInvocation;
        const wg = policy.workgroupSize;
        const sizes = [rank - 1, rank, 0, rank + 1, 2 * rank + 1, wg - 1, wg, wg + 1, 1, 2, policy.tileItems + 1, 3 * rank - 7];
        const c = makeSortCase({ name: 'wr-edges', keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), values: 'payload', seed: 73 });
        expect(await expectReference(c, 'workgroup-radix')).toBe('workgroup-radix');
        // 64 invocations: four digits each in the digit scan; rank tiles of 64 keys (one per invocation) and of 1024.
        const small = [0, 1, 63, 64, 65, 1023, 1024, 1025, 5000];
        const s = makeSortCase({ name: 'wr-small', keyType: 'i32', flavour: 'ties', sizes: small, orders: alternating(small.length), values: 'indices-u32', seed: 79 });
        const policies = thorough ? [1, 2, 16].map((items) => ({ workgroupSize: 64, workgroupRadixItemsPerInvocation: items })) : [{ workgroupSize: 64, workgroupRadixItemsPerInvocation: 1 }];
        for (const p of policies) expect(await expectReference(s, 'workgroup-radix', p)).toBe('workgroup-radix');
      }, 900_000);
      it('digits every key of a segment shares are skipped, in any position: stable, both orders', async () => {
        // u32 keys varying in one byte only (the other three passes skip), in two bytes, in none (a copy), and all four.
        const size = 3000;
        const rows: number[][] = [
          Array.from({ length: size }, (_, i) => ((i * 7) % 5) << 24),
          Array.from({ length: size }, (_, i) => (((i * 13) % 9) << 8) | 0x55),
          Array.from({ length: size }, () => 0x12345678),
          Array.from({ length: size }, (_, i) => (((i * 3) % 4) << 16) | ((i % 3) << 0)),
          Array.from({ length: size }, (_, i) => (i * 2654435761) >>> 0),
          [0xffffffff],
        ];
        const sizes = rows.map((r) => r.length);
        const c = makeSortCase({ name: 'wr-constant-digits', keyType: 'u32', sizes, orders: ['ascending', 'descending', 'ascending', 'descending', 'ascending', 'descending'], orderKind: 'perSegment', values: 'payload', seed: 83 });
        c.keys = new Uint32Array(rows.flat());
        await expectAllVariants(c, ['merge', 'workgroup-radix', 'radix']);
      }, 900_000);
      it("the natural plan: single-tile beside workgroup-radix (segments of at most workgroupRadixSegmentItems), radix past it unless there are workgroupRadixMinSegments segments", async () => {
        const { tileItems, workgroupRadixSegmentItems, workgroupRadixMinSegments } = segmentedSortPolicyFor(backend.capabilities);
        const sizes = [300, tileItems + 1, 0, 77, workgroupRadixSegmentItems, 1];
        const c = makeSortCase({ name: 'wr-natural', keyType: 'f32', flavour: 'special', sizes, orders: alternating(sizes.length), values: 'indices-f32', seed: 89 });
        expect(await expectReference(c)).toBe('workgroup-radix');
        const longer = [...sizes, workgroupRadixSegmentItems + 1];
        expect(await expectReference(makeSortCase({ name: 'wr-natural-long', keyType: 'f32', flavour: 'special', sizes: longer, orders: alternating(longer.length), values: 'indices-f32', seed: 97 }))).toBe(longer.length >= workgroupRadixMinSegments ? 'workgroup-radix' : 'radix');
        // A backend of few slots (the CPU emulator) takes workgroup-radix from as many segments as slots: one long segment stays with radix where it has two or more.
        if (workgroupRadixMinSegments > 1) expect(await expectReference(makeSortCase({ name: 'wr-natural-one-long', keyType: 'f32', flavour: 'special', sizes: [workgroupRadixSegmentItems + 1], seed: 101 }))).toBe('radix');
      }, 900_000);
    });

    describe('parameter kinds and layouts', () => {
      const kinds = thorough
        ? ([
            ['constant', 'constant', 'constant'],
            ['uniform', 'uniform', 'uniform'],
            ['uniform-device', 'uniform-device', 'device'],
            ['perSegment-device', 'perSegment-device', 'device'],
            ['perSegment-device-bounds', 'perSegment', 'uniform'],
          ] as const)
        : ([
            ['constant', 'uniform-device', 'constant'],
            ['perSegment-device-bounds', 'perSegment-device', 'device'],
          ] as const);
      for (const [sizeKind, orderKind, numSegmentsKind] of kinds) {
        it(`sizes ${sizeKind}, order ${orderKind}, numSegments ${numSegmentsKind}`, async () => {
          const uniformSizes = sizeKind === 'constant' || sizeKind.startsWith('uniform');
          const sizes = uniformSizes ? [1500, 1500, 1500] : [3, 2500, 0, 900];
          const orders = orderKind === 'constant' || orderKind.startsWith('uniform') ? 'descending' : alternating(sizes.length);
          await expectAllVariants(makeSortCase({ name: `${sizeKind}/${orderKind}/${numSegmentsKind}`, sizes, sizeKind, orderKind, numSegmentsKind, orders, seed: 31 }));
        });
      }
      it('strided segments shorter than the stride, and totalNumItems', async () => {
        await expectAllVariants(makeSortCase({ name: 'strided', keyType: 'i32', sizes: [900, 0, 2000, 77], stride: 2000, orders: alternating(4), values: 'payload', seed: 37 }), ['merge', 'workgroup-radix', 'radix']);
        await expectAllVariants(makeSortCase({ name: 'total', sizes: [10, 3000, 20], totalNumItems: 3030, seed: 41 }), ['merge', 'workgroup-radix', 'radix']);
      });
      it('empty segments and numSegments 0, every variant', async () => {
        await expectAllVariants(makeSortCase({ name: 'empty', sizes: [0, 0, 3, 0, 1, 0], seed: 43 }));
        for (const variant of segmentedSortVariants) {
          const built = buildSortCase(backend, makeSortCase({ name: 'zero', sizes: [], sizeKind: 'perSegment-device', numSegmentsKind: 'device', seed: 47 }));
          const { keys } = await runSortCase(backend, built, { variant });
          expect([...keys]).toEqual([untouchedBits]);
          for (const a of built.owned) a.destroy();
        }
      });
    });

    describe('bad input is named and outputs stay untouched', () => {
      it('host checks', async () => {
        const built = buildSortCase(backend, makeSortCase({ name: 'bad', sizes: [4, 4], seed: 53 }));
        const plan = (args: Record<string, unknown>, tuning = {}) => (DeviceSegmentedSort.plan as unknown as (a: unknown, e: unknown) => unknown)(args, env({ backend, tuning }));
        const short = backend.alloc('f32', 3);
        expect(() => plan({ ...built.args, keysOut: short })).toThrow('keysOut: needs as many elements as keysIn (8), in the same layout; has 3');
        expect(() => plan({ ...built.args, valuesIn: built.args.keysIn, valuesOut: undefined })).toThrow('valuesOut: required when valuesIn is given');
        expect(() => plan({ ...built.args, keysOut: built.args.keysIn })).toThrow('keysIn, keysOut, valuesIn and valuesOut must be distinct arrays (the sort does not run in place)');
        expect(() => plan({ ...built.args, order: p.constantOption('up') })).toThrow(/order: option 'up' is not one of the options \['ascending', 'descending'\]/);
        expect(() => plan({ ...built.args, order: p.perSegment([0, 1]) })).toThrow('order: expected a parameter made with p.constantOption, p.uniformOption or p.perSegmentOption; got a p.perSegment parameter');
        expect(() => plan({ ...built.args, ordre: built.args.order })).toThrow("args: unknown field 'ordre'; the fields are 'keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'order', 'numSegments', 'totalNumItems'");
        expect(() => plan({ ...built.args, segmentSizes: p.perSegment([4, 4], { max: 8 }) }, { variant: 'nope' })).toThrow("tuning.variant: 'nope' is not a segmented sort variant; expected 'single-tile', 'merge', 'workgroup-radix', 'radix'");
        for (const perInvocation of [1, 3, 64]) {
          expect(() => plan(built.args, { policy: { tileItemsPerInvocation: perInvocation } })).toThrow(`tuning.policy.tileItemsPerInvocation: ${perInvocation} is not a power of two from 2 to 32`);
        }
        for (const batch of [3, 32]) {
          expect(() => plan(built.args, { policy: { tileLoadBatch: batch } })).toThrow(`tuning.policy.tileLoadBatch: ${batch} is not a power of two from 1 to 16`);
        }
        expect(() => plan(built.args, { policy: { radixLoads: 4 } })).toThrow('tuning.policy.radixLoads: 4 is not 1, 2 or 3');
        expect(() => plan(built.args, { policy: { radixLoads: 0 } })).toThrow('tuning.policy.radixLoads: 0 is not a positive integer');
        expect(() => plan(built.args, { policy: { sizeOrderMinSegments: 0 } })).toThrow('tuning.policy.sizeOrderMinSegments: 0 is not a positive integer');
        expect(() => plan(built.args, { policy: { radixScanLaunchMinTiles: 0 } })).toThrow('tuning.policy.radixScanLaunchMinTiles: 0 is not a positive integer');
        expect(() => plan(built.args, { policy: { sizeOrderSegmentsPerWorkgroup: 1.5 } })).toThrow('tuning.policy.sizeOrderSegmentsPerWorkgroup: 1.5 is not a positive integer');
        for (const items of [3, 32]) {
          expect(() => plan(built.args, { policy: { workgroupRadixItemsPerInvocation: items } })).toThrow(`tuning.policy.workgroupRadixItemsPerInvocation: ${items} is not a power of two from 1 to 16`);
        }
        const long = { keysIn: backend.alloc('f32', 5004), keysOut: backend.alloc('f32', 5004) };
        expect(() => plan({ ...built.args, ...long, valuesOut: undefined, segmentSizes: p.perSegment([4, 5000]) }, { variant: 'single-tile' })).toThrow(
          `tuning.variant: 'single-tile' cannot run for these parameters: max segment size 5000 > tile ${segmentedSortPolicyFor(backend.capabilities).tileItems}; it sorts the segments that fit, workgroup-radix the rest`,
        );
        // Ranking 16 keys an invocation needs more workgroup memory than any built-in backend has: workgroup-radix cannot run, radix sorts.
        const workgroupSize = Math.min(512, backend.capabilities.maxWorkgroupSize);
        const big = { workgroupSize, workgroupRadixItemsPerInvocation: 16 };
        const bytes = workgroupRadixBytes(workgroupSize, 16, true);
        expect(() => plan({ ...built.args, ...long, valuesOut: undefined, segmentSizes: p.perSegment([4, 5000]) }, { variant: 'workgroup-radix', policy: big })).toThrow(
          `tuning.variant: 'workgroup-radix' cannot run for these parameters: a workgroup of ${workgroupSize} ranking 16 items each needs ${bytes} bytes of workgroup memory; the backend has ${backend.capabilities.workgroupStorageBytes}`,
        );
        expect((plan({ ...built.args, ...long, valuesOut: undefined, segmentSizes: p.perSegment([4, 5000]) }, { policy: big }) as { variant: string }).variant).toBe('radix');
        long.keysIn.destroy();
        long.keysOut.destroy();
        short.destroy();
        for (const a of built.owned) a.destroy();
      });
      it("device-only sizes outside their bounds under 'validate': GuaranteeViolationError, outputs untouched", async () => {
        const c = makeSortCase({ name: 'violation', sizes: [3, 9, 2], sizeKind: 'perSegment-device', sizeBounds: { min: 0, max: 8 }, numSegmentsKind: 'device', seed: 59 });
        c.keys = new Uint32Array(14);
        for (const variant of segmentedSortVariants) {
          const built = buildSortCase(backend, c);
          const error = await runSortCase(backend, built, { variant }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(GuaranteeViolationError);
          expect((error as Error).message).toMatch(/segmentSizes/);
          expect([...new Uint32Array((await backend.download(built.keysOut)).buffer)].every((b) => b === untouchedBits)).toBe(true);
          for (const a of built.owned) a.destroy();
        }
      });
    });

    it('explain() names the variant and the launches: workgroup-radix for few short or many long segments, radix for few long ones, merge where the policy says', () => {
      const built = buildSortCase(backend, makeSortCase({ name: 'explain', sizes: [3, 5000], seed: 61 }));
      type Explained = { explain(): string; variant: string; reachableVariants: readonly string[]; destroy(): void };
      const plan = (args: unknown, tuning = {}) => (DeviceSegmentedSort.plan as unknown as (a: unknown, e: unknown) => Explained)(args, env({ backend, tuning }));
      const short = plan(built.args);
      expect(short.variant).toBe('workgroup-radix');
      expect(short.reachableVariants).toEqual(['single-tile', 'workgroup-radix']);
      expect(short.explain()).toMatch(/DeviceSegmentedSort on/);
      expect(short.explain()).toMatch(/sort\/single-tile/);
      expect(short.explain()).toMatch(/sort\/workgroup-radix\[.*one workgroup per segment longer than/);
      const { workgroupRadixMinSegments } = segmentedSortPolicyFor(backend.capabilities);
      expect(short.explain()).toContain(`max segment size 5000 <= 8192 or 2 segments >= ${workgroupRadixMinSegments}`);
      // The same segments as if they were too long and too few for one workgroup each: radix.
      const long = plan(built.args, { policy: { workgroupRadixSegmentItems: 4999, workgroupRadixMinSegments: 3 } });
      expect(long.variant).toBe('radix');
      expect(long.reachableVariants).toEqual(['single-tile', 'radix']);
      expect(long.explain()).toMatch(/sort\/radix\/scatter/);
      expect(long.explain()).not.toMatch(/sort\/workgroup-radix/);
      // Many of them: workgroup-radix again.
      expect(plan(built.args, { policy: { workgroupRadixSegmentItems: 4999, workgroupRadixMinSegments: 2 } }).variant).toBe('workgroup-radix');
      // A policy that merges segments of up to 5000 keys (a GPU's does up to 65536): the tiles, then the passes.
      const merged = plan(built.args, { policy: { mergeMaxSegmentItems: 5000 } });
      expect(merged.variant).toBe('merge');
      expect(merged.reachableVariants).toEqual(['single-tile', 'merge']);
      expect(merged.explain()).toContain('max segment size 5000 <= mergeMaxSegmentItems 5000');
      expect(merged.explain()).toMatch(/sort\/merge\/blocks\[.*longer than/);
      expect(merged.explain()).toMatch(/sort\/merge\/pass\[.*pass 0: merge the sorted runs of/);
      for (const p of [short, long, merged]) p.destroy();
      for (const a of built.owned) a.destroy();
    });
  });
}
