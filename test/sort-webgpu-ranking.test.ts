/**
 * The radix scatter's two rankings on WebGPU (segmented-sort/webgpu/radix.ts): warp-level multisplit
 * where subgroups have one fixed width (lavapipe: 8), and four 2-bit splits on a backend without
 * subgroups (`webgpuBackend({ subgroups: false })`, as on an adapter without them). Both must give
 * the reference bit for bit on keys that stress the ranking: heavy ties (whole rank tiles of one
 * digit), NaN, -0 and +0, sizes around the rank tile and the radix tile, keys only and with values,
 * both orders, and a workgroup too small for one digit pair an invocation in the digit scan; and
 * top-k's sorted selections past a tile, which the same kernels sort; each way the scatter loads a
 * rank tile (`radixLoads`). And the single-tile sort's two ways: radix ranks in workgroup memory
 * (segmented-sort/webgpu/tile-radix.ts) where subgroups have one width and every segment fills more
 * than half a tile of 8 keys a lane, the bitonic network elsewhere: the same reference.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { radixRankItemsPerInvocation, radixScatterBytes, radixWarpRankFor, warpRankRegisterBudget, warpRankRegisters } from '../src/algorithms/segmented-sort/webgpu/radix.js';
import { webgpuRuntime } from '../src/backends/webgpu/webgpu-backend.js';
import { type Backend, type SortOrder, type WebGpuBackend, DeviceBatchedTopK, env, p, segmentedSortPolicyFor, webgpuBackend } from '../src/index.js';
import { bitsOf } from './conformance/common.js';
import { type SortCase, type SortValueMode, buildSortCase, runSortCase } from './conformance/sort-cases.js';
import { specialF32Bits } from './conformance/topk-cases.js';
import { referenceOfRows, rng } from './helpers.js';
import { describeOnWebGpu } from './webgpu-adapter.js';

vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const describeRanking = await describeOnWebGpu("the radix scatter's rankings");

const hex = (a: Uint32Array) => Array.from(a, (x) => x.toString(16));

/**
 * f32 keys, segment by segment: mostly five tied values (-0 and +0 among them), specials (NaN
 * payloads, infinities, denormals), some random; a segment given `equalHead` starts with that many
 * copies of one key, so whole rank tiles hold one digit in every pass.
 */
function rankingKeys(sizes: readonly number[], seed: number, equalHead: readonly number[]): Uint32Array {
  const random = rng(seed);
  const ties = [bitsOf(-1), 0x80000000, 0, bitsOf(1), bitsOf(2.5)];
  const keys = new Uint32Array(Math.max(1, sizes.reduce((a, b) => a + b, 0)));
  let at = 0;
  sizes.forEach((size, s) => {
    for (let j = 0; j < size; j++) {
      const r = random();
      keys[at + j] =
        j < (equalHead[s] ?? 0) ? bitsOf(-3.75) : r < 0.55 ? ties[Math.floor(random() * ties.length)]! : r < 0.75 ? specialF32Bits[Math.floor(random() * specialF32Bits.length)]! : bitsOf((random() - 0.5) * 1e6);
    }
    at += size;
  });
  return keys;
}

function rankingCase(name: string, sizes: number[], values: SortValueMode, seed: number, equalHead: readonly number[] = []): SortCase {
  const orders = sizes.map((_, i): SortOrder => (i % 2 === 0 ? 'ascending' : 'descending'));
  return { name, keyType: 'f32', keys: rankingKeys(sizes, seed, equalHead), sizes, orders, sizeKind: 'perSegment', orderKind: 'perSegment', numSegmentsKind: 'uniform', values };
}

/** The WGSL of every shader module the backend compiles from now on. */
function captureShaders(backend: WebGpuBackend): string[] {
  const shaders: string[] = [];
  const device = backend.device;
  const create = device.createShaderModule.bind(device);
  device.createShaderModule = (descriptor: GPUShaderModuleDescriptor) => {
    shaders.push(descriptor.code);
    return create(descriptor);
  };
  return shaders;
}

describeRanking('sort: the radix scatter and the single-tile sort rank by warp-level multisplit, or by 2-bit splits and the bitonic network, with the same results', () => {
  let warp: WebGpuBackend;
  let splits: WebGpuBackend;
  let warpShaders: string[];
  let splitShaders: string[];
  beforeAll(async () => {
    warp = await webgpuBackend();
    splits = await webgpuBackend({ subgroups: false });
    warpShaders = captureShaders(warp);
    splitShaders = captureShaders(splits);
  });
  afterAll(() => {
    warp?.destroy();
    splits?.destroy();
  });

  async function expectReference(backend: Backend, c: SortCase, policy?: Record<string, number>, variant: 'radix' | 'single-tile' = 'radix'): Promise<void> {
    const built = buildSortCase(backend, c);
    try {
      const { plan, keys, values } = await runSortCase(backend, built, { variant, policy });
      expect(plan.variant).toBe(variant);
      expect(hex(keys), `${c.name}: keys`).toEqual(hex(built.expected.keys));
      if (values !== undefined) expect(hex(values), `${c.name}: values`).toEqual(hex(built.expected.values));
    } finally {
      for (const a of built.owned) a.destroy();
    }
  }

  it('the backend knows its fixed subgroup width, and the scatter takes the warp ranking only where it may', () => {
    const runtime = webgpuRuntime(warp);
    // The width where it is fixed is the only one (capabilities give the smallest).
    if (runtime.fixedSubgroupSize !== undefined) expect(runtime.fixedSubgroupSize).toBe(warp.capabilities.subgroupSize);
    if (warp.capabilities.subgroupSize === undefined) expect(runtime.fixedSubgroupSize).toBeUndefined();
    expect(webgpuRuntime(splits).fixedSubgroupSize).toBeUndefined();
    expect(splits.capabilities.subgroupSize).toBeUndefined();
    const options = { hasValues: true, workgroupSize: 512, rankItems: 4096, loads: 3 } as const;
    // An H200 (subgroups of 32, 48 KiB): every subgroup ranks, 8 items a lane.
    expect(radixWarpRankFor(options, 32, 49152)).toEqual({ subgroupSize: 32, subgroups: 16, items: 8 });
    // 38,928 bytes for the splits' declarations (rank keys and indices 2 x 4224 words, offsets, pairs), 8,208 more for the counts and sums.
    expect(radixScatterBytes(options)).toBe(38928);
    expect(radixScatterBytes({ ...options, warpRank: radixWarpRankFor(options, 32, 49152) })).toBe(38928 + 8208);
    // Lavapipe's 32 KiB with 2048-key rank tiles: a quarter of the 64 subgroups rank, 16 items a lane.
    expect(radixWarpRankFor({ ...options, rankItems: 2048 }, 8, 32768)).toEqual({ subgroupSize: 8, subgroups: 16, items: 16 });
    // Widths it does not rank with: unknown or varying (undefined), below 8, past 32, not a power of two, not dividing the workgroup.
    for (const width of [undefined, 4, 64, 24]) expect(radixWarpRankFor(options, width, 49152)).toBeUndefined();
    expect(radixWarpRankFor({ ...options, workgroupSize: 48 }, 32, 49152)).toBeUndefined();
    // Room for 8 subgroups' counts (512 bytes each) and the digit scan's 4 sums beside the splits' 38,928 bytes: 16 items a lane.
    expect(radixWarpRankFor(options, 32, 38928 + 8 * 512 + 16)).toEqual({ subgroupSize: 32, subgroups: 8, items: 16 });
    // Room for 4 only: 32 items a lane would take 512 x 168 registers, past the 65536 a workgroup may
    // hold (an H200 ran such a scatter as a no-op), so the splits rank; at 256 invocations 32 items fit.
    expect(warpRankRegisters(32, options)).toBe(168);
    expect(radixWarpRankFor(options, 32, 38928 + 4 * 512 + 16)).toBeUndefined();
    expect(radixWarpRankFor({ ...options, workgroupSize: 256 }, 32, 49152)).toEqual({ subgroupSize: 32, subgroups: 8, items: 16 });
    // 1024 invocations: 4096-key rank tiles leave room for 8 subgroups (16 items a lane, 104 registers): the splits;
    // 2048-key rank tiles for all 32 (2 items, 48 registers).
    expect(radixWarpRankFor({ ...options, workgroupSize: 1024 }, 32, 49152)).toBeUndefined();
    expect(radixWarpRankFor({ ...options, workgroupSize: 1024, rankItems: 2048 }, 32, 49152)).toEqual({ subgroupSize: 32, subgroups: 32, items: 2 });
    // What the H200 ran and did not (warpRankRegisters' fit): each on its side of the budget.
    const fits = (workgroupSize: number, items: number, carried: boolean) =>
      workgroupSize * warpRankRegisters(items, { hasValues: carried, loads: 3 }) <= warpRankRegisterBudget;
    for (const [size, items] of [[1024, 2], [1024, 4], [512, 8], [512, 16], [256, 16], [256, 32]] as const) expect(fits(size, items, true), `${size} x ${items}`).toBe(true);
    expect(fits(1024, 8, false)).toBe(true);
    for (const [size, items, carried] of [[1024, 8, true], [1024, 16, false], [512, 32, false], [512, 32, true]] as const) expect(fits(size, items, carried), `${size} x ${items}`).toBe(false);
    // Values gathered at the write (loads 1) keep two words a lane, as keys alone do.
    expect(warpRankRegisters(8, { hasValues: true, loads: 1 })).toBe(warpRankRegisters(8, { hasValues: false, loads: 3 }));
  });

  const policy = () => segmentedSortPolicyFor(warp.capabilities);
  const cases = (): { c: SortCase; policy?: Record<string, number> }[] => {
    const { workgroupSize, tileItems } = policy();
    const rank = radixRankItemsPerInvocation({ workgroupSize, rankItems: tileItems }) * workgroupSize;
    const sizes = [tileItems + 1, rank - 1, rank, rank + 1, 2 * rank + 3, 4 * rank + 1, 3 * rank + 9];
    return [
      { c: rankingCase('values, rank-tile boundaries', sizes, 'indices-u32', 3, [0, 0, 0, 0, 0, 0, 3 * rank]) },
      { c: rankingCase('keys only, rank-tile boundaries', sizes, 'none', 5, [0, rank - 1, 0, 0, 2 * rank, 0, 0]) },
      // Radix tiles of 3000 keys: rank tiles that end inside a radix tile and start past another's.
      { c: rankingCase('payload, radix tiles of 3000', [9001, 3000, 6001, 2 * rank + 1], 'payload', 7, [0, 3000]), policy: { radixTileItems: 3000 } },
      // 64 invocations of 8: 2 digit pairs an invocation in the digit scan; 16 items a lane.
      { c: rankingCase('64-invocation workgroups', [5000, 1025, 3 * 1024 + 5], 'indices-f32', 9, [0, 0, 2048]), policy: { workgroupSize: 64, tileItems: 1024, radixTileItems: 3000 } },
    ];
  };

  it('warp-level multisplit (subgroups of one fixed width): the reference, bit for bit', async () => {
    for (const { c, policy } of cases()) await expectReference(warp, c, policy);
    const scatters = warpShaders.filter((code) => code.includes('// sort/radix/scatter'));
    expect(scatters.length).toBeGreaterThan(0);
    // Where the backend has subgroups of one fixed width (lavapipe: 8), every scatter ranks with them.
    if (webgpuRuntime(warp).fixedSubgroupSize !== undefined) {
      for (const code of scatters) expect(code).toContain('subgroupBallot');
      // Both forms ran: where every subgroup ranks (64 invocations), the places past a rank tile take
      // digit 255 and no ballot asks which lanes count; where some sit out (the default policy's
      // quarter on lavapipe's 32 KiB), a ballot of the lanes that count.
      expect(scatters.some((code) => code.includes('padding with digit 255') && !code.includes('subgroupBallot(valid'))).toBe(true);
      expect(scatters.some((code) => code.includes('subgroupBallot(valid'))).toBe(true);
    }
    // Each buffer of the double buffer is a binding of its own, and a scatter (one program per digit
    // parity) never loads from a binding it stores to: the counts in temp are only read.
    const uses = (code: string, buffer: string) => {
      const all = code.match(new RegExp(`\\b${buffer}\\[`, 'g'))?.length ?? 0;
      const stores = code.match(new RegExp(`\\b${buffer}\\[[^\\]]*\\] = `, 'g'))?.length ?? 0;
      return { loads: all - stores, stores };
    };
    for (const code of scatters) {
      expect(code).toMatch(/var<storage, read_write> tempA: array<u32>/);
      expect(code).toMatch(/var<storage, read_write> tempB: array<u32>/);
      expect(uses(code, 'temp').stores, 'counts stored by a scatter').toBe(0);
      for (const buffer of ['tempA', 'tempB']) {
        const { loads, stores } = uses(code, buffer);
        expect(loads === 0 || stores === 0, `a scatter loads from ${buffer} and stores to it`).toBe(true);
      }
    }
    // Both parities ran: one scatter stores to buffer 0 (digits 0 and 2), one to buffer 1 (digits 1 and 3).
    expect(scatters.some((code) => uses(code, 'tempA').stores > 0 && uses(code, 'tempB').loads > 0)).toBe(true);
    expect(scatters.some((code) => uses(code, 'tempB').stores > 0 && uses(code, 'tempA').loads > 0)).toBe(true);
    expectOnePlaceEach(warpShaders, 'sort/radix');
  });

  /**
   * Each histogram and scatter program (marked `// <prefix>/histogram`, `// <prefix>/scatter`) reads
   * its keys (and values) from one place: the source, buffer 0 or buffer 1, never a choice among them
   * at each load (programs.ts digitProgram: the choice cost digit 2's scatter half again its time on
   * an H200). All three ran, for the histogram and the scatter.
   */
  function expectOnePlaceEach(shaders: readonly string[], prefix: string): void {
    const places = (code: string, fn: string) => {
      const body = new RegExp(`fn ${fn}\\([^)]*\\) -> u32 \\{([^}]*)\\}`).exec(code)?.[1] ?? '';
      return ['sourceKey(', 'sourceValue(', 'tempA[', 'tempB['].filter((place) => body.includes(place));
    };
    for (const kernel of ['histogram', 'scatter']) {
      const read = new Set<string>();
      for (const code of shaders.filter((c) => c.includes(`// ${prefix}/${kernel}`))) {
        for (const fn of ['bitsAt', ...(code.includes('fn valueAt(') ? ['valueAt'] : [])]) {
          expect(places(code, fn), `${prefix}/${kernel}: ${fn} reads one place`).toHaveLength(1);
          read.add(places(code, fn)[0]!.replace('Value(', 'Key('));
        }
      }
      expect([...read].sort(), `${prefix}/${kernel}: the places read`).toEqual(['sourceKey(', 'tempA[', 'tempB[']);
    }
  }

  it("top-k's sorted selection past a tile (the same radix kernels): the reference on both", async () => {
    const rows = 3;
    const cols = 9000;
    const k = 5000;
    const keys = new Float32Array(rankingKeys([rows * cols], 11, [2500]).buffer);
    for (const direction of ['max', 'min'] as const) {
      const expected = referenceOfRows(keys, rows, cols, k, direction, k);
      for (const backend of [warp, splits]) {
        const keysIn = backend.upload(keys);
        const keysOut = backend.alloc('f32', rows * k);
        const valuesOut = backend.alloc('i32', rows * k);
        try {
          await DeviceBatchedTopK.select(
            { keysIn, keysOut, valuesOut, segmentSizes: p.constant(cols), k: p.constant(k), selectDirection: p.constantOption(direction), numSegments: p.constant(rows) },
            // The radix selection sort, whatever the sort's policy picks on this backend.
            env({ backend, tuning: { variant: 'radix-select', policy: { selectionSortVariant: 'radix' } } }),
          );
          expect(hex(new Uint32Array((await backend.download(keysOut)).buffer)), `${direction}: keys`).toEqual(hex(expected.keys));
          expect(hex(new Uint32Array((await backend.download(valuesOut)).buffer)), `${direction}: values`).toEqual(hex(expected.values));
        } finally {
          for (const a of [keysIn, keysOut, valuesOut]) a.destroy();
        }
      }
    }
    const scatter = (code: string) => code.includes('// topk/sort-selection/scatter');
    expect(splitShaders.filter(scatter).every((code) => !code.includes('subgroup'))).toBe(true);
    // The segmented sort's programs for each place a digit reads, here too (its selection is the source).
    for (const shaders of [warpShaders, splitShaders]) expectOnePlaceEach(shaders, 'topk/sort-selection');
    if (webgpuRuntime(warp).fixedSubgroupSize !== undefined) {
      expect(warpShaders.filter(scatter).length).toBeGreaterThan(0);
      for (const code of warpShaders.filter(scatter)) expect(code).toContain('subgroupBallot');
    }
  });

  it('every radixLoads (gathered, carried, loaded ahead) on both rankings: the reference, bit for bit', async () => {
    // Loads 3 (the sort's default) ran above; keys only load the same way under 1, 2 and 3 but for the histogram (conformance covers them).
    const withValues = cases().filter(({ c }) => c.values !== 'none');
    for (const radixLoads of [1, 2]) {
      for (const backend of [warp, splits]) {
        for (const { c, policy } of withValues) await expectReference(backend, { ...c, name: `${c.name}, loads ${radixLoads}` }, { ...policy, radixLoads });
      }
    }
    // Loads 1 carries indices and gathers each value at the write; 2 and 3 carry the values.
    const scatters = [...warpShaders, ...splitShaders].filter((code) => code.includes('// sort/radix/scatter') && code.includes('valueAt'));
    expect(scatters.some((code) => code.includes('var<workgroup> rankIndex'))).toBe(true);
    expect(scatters.some((code) => code.includes('var<workgroup> rankValues'))).toBe(true);
  });

  it('four 2-bit splits (no subgroups): the reference, bit for bit', async () => {
    for (const { c, policy } of cases()) await expectReference(splits, c, policy);
    const scatters = splitShaders.filter((code) => code.includes('// sort/radix/scatter'));
    expect(scatters.length).toBeGreaterThan(0);
    for (const code of scatters) expect(code).not.toContain('subgroup');
  });

  // The single-tile sort: radix ranks (webgpu/tile-radix.ts) on the backend with subgroups of one
  // width, the bitonic network without subgroups. Tiles of 1024 keys on 128 invocations (8 keys a
  // lane): the ranks' arrays fit lavapipe's 32 KiB.
  const tilePolicy = { workgroupSize: 128, tileItems: 1024 };
  const sharedTilePolicy = { workgroupSize: 256, tileItems: 2048 };
  const isTile = (code: string) => code.includes('// sort/single-tile');

  it('single-tile by radix ranks where the device has one subgroup width, by the network elsewhere: the reference, bit for bit', async () => {
    const tileCases = [
      rankingCase('segments of 513 to 1024 keys, both orders, indices', [513, 1024, 700, 1000, 600, 1023, 777, 514], 'indices-u32', 71, [0, 1024, 300]),
      rankingCase('segments of 513 to 1024 keys, both orders, payload', [1024, 515, 999, 1024], 'payload', 72, [512]),
      rankingCase('segments of 513 to 1024 keys, both orders, keys only', [1024, 1024, 600], 'none', 73),
    ];
    for (const backend of [warp, splits]) for (const c of tileCases) await expectReference(backend, c, tilePolicy, 'single-tile');
    // The policy's 256 invocations hold two segments of the network's 1024-key tiles; the radix ranks
    // run one segment a workgroup of 128 of their own (the executor's grid: a workgroup a segment).
    const shared = warpShaders.length;
    for (const c of tileCases) await expectReference(warp, { ...c, name: `${c.name}, two segments a policy workgroup` }, sharedTilePolicy, 'single-tile');
    if (webgpuRuntime(warp).fixedSubgroupSize !== undefined) {
      const own = warpShaders.slice(shared).filter(isTile);
      expect(own.length).toBeGreaterThan(0);
      for (const code of own) expect(code).toContain('@workgroup_size(128)');
    }
    expect(splitShaders.filter(isTile).length).toBeGreaterThan(0);
    for (const code of splitShaders.filter(isTile)) expect(code).not.toContain('subgroup');
    if (process.env.CI && webgpuRuntime(warp).fixedSubgroupSize === undefined) throw new Error('CI: the adapter has no subgroups of one width; the radix ranks went untested');
    if (webgpuRuntime(warp).fixedSubgroupSize !== undefined) {
      expect(warpShaders.filter(isTile).length).toBeGreaterThan(0);
      for (const code of warpShaders.filter(isTile)) expect(code).toContain('subgroupBallot');
    }
  });

  it('single-tile with a segment of half a tile or less keeps the network, on either backend', async () => {
    const before = warpShaders.length;
    await expectReference(warp, rankingCase('a segment of 512 keys beside full ones', [1024, 512, 1000], 'indices-i32', 74), tilePolicy, 'single-tile');
    const compiled = warpShaders.slice(before).filter(isTile);
    expect(compiled.length).toBeGreaterThan(0);
    for (const code of compiled) expect(code).not.toContain('subgroupBallot');
  });
});
