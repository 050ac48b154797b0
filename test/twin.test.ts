/**
 * The CPU and WGSL twins of every kernel, compared launch by launch rather than only by final
 * outputs: one plan per backend on the same inputs (the CPU given the WebGPU device's capabilities,
 * so both plans have the same launches), each run one launch further every time, and after each
 * launch the temporary-storage slots that the kernel table says every backend produces identically
 * are compared word for word.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { radixSample, radixSampleCap, topKPolicyFor } from '../src/algorithms/batched-top-k/policy.js';
import { topKKernels } from '../src/algorithms/batched-top-k/problem.js';
import { type Plan, planInternals } from '../src/dispatch/plan.js';
import { type Backend, type DeviceArray, DeviceBatchedTopK, type TopKPolicy, type TopKVariant, cpuBackend, env, p, webgpuBackend } from '../src/index.js';
import { rng } from './helpers.js';
import { compareLaunchByLaunch, identicalSlotsOf } from './twin-slots.js';
import { describeOnWebGpu } from './webgpu-adapter.js';

// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const describeTwins = await describeOnWebGpu("the launch-by-launch twin test");

const identicalSlots = identicalSlotsOf(topKKernels);

interface TwinCase {
  readonly name: string;
  readonly sizes: readonly number[];
  readonly k: number;
  readonly variant: TopKVariant;
  /** Per-segment k on the device: the plan validates (a 'validate' launch runs first). */
  readonly deviceK?: boolean;
  readonly policy?: Partial<TopKPolicy>;
  /** Key `i` of a segment (default: small integers with ties, 5% NaN). */
  readonly key?: (i: number, random: () => number) => number;
  /** Every launch name of the plan contains one of these (the kernels the case is about ran). */
  readonly launches?: readonly string[];
  /** Routing weights: the 'weights' launch writes weightsOut (no temporary storage), compared after it runs. */
  readonly weights?: 'softmax' | 'sigmoid-renormalize';
  /** Output order (default sorted). */
  readonly outputOrdering?: 'sorted' | 'unsorted';
  /**
   * Every segment takes filter pass 0's pick among its sampled candidates, which writes the
   * selection in a fixed order (rank order, or index order from the select where its index buckets
   * hold the segment): the `selected` slot is compared after that launch too.
   */
  readonly pickedSelection?: boolean;
  /** The grid of the launch whose name contains each key. */
  readonly grids?: Readonly<Record<string, number>>;
}

const tiesAndNaN = (_i: number, random: () => number) => (random() < 0.05 ? NaN : Math.round(random() * 200) - 100);

/** The k = 1 reduce cases' rows, chunks and launches: long segments of 3 chunks each (12 reduce workgroups), and a short one. */
const kOneOverLongRows = { sizes: [20000, 151, 30001, 5], k: 1, variant: 'reduce', policy: { reduceChunkWorkgroups: 12 }, launches: ['reduce-chunk-merge'] } satisfies Partial<TwinCase>;

/**
 * Rows whose sample rank the adapter's pick tile bounds (k just under half the tile, rows of 2 to
 * 2.44 tiles: tiles of 1024, 2048 and 4096 all bind), set once the adapter is known.
 */
const boundedRankFor = (tile: number) => ({ sizes: [2 * tile, Math.floor(2.44 * tile), Math.floor(2.2 * tile)], k: Math.floor(0.49 * tile) });
const boundedRank = boundedRankFor(2048);

const cases: TwinCase[] = [
  {
    name: 'reduce over long ragged segments (chunks, partials, merge; vec4 reads from unaligned starts), device-only k validated',
    sizes: [9000, 0, 4097, 12000],
    k: 8,
    variant: 'reduce',
    deviceK: true,
    // A software adapter's few workgroup slots would give each segment one chunk: 12 keep 3 per segment.
    policy: { reduceChunkWorkgroups: 12 },
    launches: ['reduce-merge'],
  },
  {
    name: 'reduce, k = 8, the chunks merged in their own launch (published lists, arrival words, the last chunk workgroup merges)',
    sizes: [9000, 0, 4097, 12000],
    k: 8,
    variant: 'reduce',
    policy: { reduceChunkWorkgroups: 12, reduceLastChunkMerges: 'always' },
    launches: ['reduce-chunk-merge'],
  },
  {
    name: 'reduce, k = 1, the chunks merged by a launch of their own',
    ...kOneOverLongRows,
    policy: { reduceChunkWorkgroups: 12, reduceLastChunkMerges: 'never' },
    launches: ['reduce-merge'],
  },
  {
    // The register lists compare cheaper keys than the ordered keys the partials hold (reduce.ts listKey).
    name: 'reduce, k = 1, over long segments of ties, -0 and +0, subnormals, infinities and NaN (chunks, partials, merge)',
    ...kOneOverLongRows,
    key: (_i, random) => {
      const r = random();
      return r < 0.02 ? NaN : r < 0.2 ? [0, -0, 1e-40, -1e-40, 2 ** -149, -(2 ** -149), Infinity, -Infinity][Math.floor(random() * 8)]! : Math.round(random() * 20) - 10;
    },
  },
  {
    name: 'reduce, k = 1: the largest keys are -0 and +0 among negative subnormals (ties by index across chunks)',
    ...kOneOverLongRows,
    key: (_i, random) => [0, -0, -1e-40, -(2 ** -149), -Infinity, -1][Math.floor(random() * 6)]!,
  },
  {
    name: 'reduce, k = 1: subnormals above zeros (a float compare that flushes them would see ties)',
    ...kOneOverLongRows,
    key: (i, random) => (i === 17 ? 2 ** -148 : [0, -0, 1e-40, 2 ** -149, -1e-40][Math.floor(random() * 5)]!),
  },
  {
    name: 'reduce with one invocation per segment (16-expert router, k = 2)',
    sizes: Array.from({ length: 300 }, (_, i) => (i % 7 === 3 ? 9 : 16)),
    k: 2,
    variant: 'reduce',
    launches: ['per-invocation'],
  },
  { name: 'single-tile over packed per-segment sizes', sizes: [300, 1024, 0, 77], k: 40, variant: 'single-tile' },
  {
    // k near half the pick's tile: init bounds the sample's rank halfway to the tile (policy.ts
    // radixSampleMidRank; the test below checks that it binds on this adapter).
    name: 'radix-select, sampled ranks bounded halfway to the pick\'s tile',
    get sizes() {
      return boundedRank.sizes;
    },
    get k() {
      return boundedRank.k;
    },
    variant: 'radix-select',
    policy: { radixPick: 'always' },
  },
  {
    // Tuned here: the wide workgroups' rule (policy.ts radixWideWorkgroup) takes GPU-class backends only.
    // k >= radixSampleFloorMinTake: init raises its sample rank toward 3.5 spreads above take.
    name: "radix-select in workgroups of 512 (radixWideWorkgroupSize's shape): pass 0 in tiles of 8192, init's rank floor, the pick sorting a take of 600",
    sizes: [65536, 30001, 16384, 5000],
    k: 600,
    variant: 'radix-select',
    policy: { workgroupSize: 512, radixTileItems: 8192 },
    key: (i, random) => (i % 211 === 0 ? NaN : i % 97 === 0 ? -0 : random() < 0.3 ? Math.round(random() * 40) : random() * 2 - 1),
    pickedSelection: true,
  },
  { name: 'radix-select over packed per-segment sizes (8-bit digits)', sizes: [20000, 5000, 1, 9000], k: 300, variant: 'radix-select', policy: { radixBits: 8 } },
  {
    name: 'radix-select, 11-bit digits, a sampled threshold that misleads (the last pass-0 workgroup adds the keys below it to the histogram), several filter workgroups per segment',
    sizes: [70000, 0, 30001, 4097],
    k: 300,
    variant: 'radix-select',
    policy: { radixBits: 11, radixFilterWorkgroups: 64 },
    // The first 8 keys of every 256 are large: the long segment's sample (runs of 8 keys every
    // 8 x 32 there) holds only large keys, so its threshold is reached by fewer than k keys.
    key: (i, random) => (i % 256 < 8 ? 1000 + Math.round(random() * 4000) : Math.round(random() * 500)),
    launches: ['filter', 'init', 'histogram', 'finalize'],
  },
  {
    name: 'radix-select, the same misleading threshold with a launch of its own for the histogram below it (radixFoldFallbackMaxItems 1)',
    sizes: [70000, 0, 30001, 4097],
    k: 300,
    variant: 'radix-select',
    policy: { radixBits: 11, radixFilterWorkgroups: 64, radixFoldFallbackMaxItems: 1 },
    key: (i, random) => (i % 256 < 8 ? 1000 + Math.round(random() * 4000) : Math.round(random() * 500)),
    launches: ['fallback', 'filter', 'init', 'histogram', 'finalize'],
  },
  {
    name: 'radix-select, sampled thresholds that hold (pass 0 collects the keys past them), small k over long rows',
    sizes: [65536, 1024, 80000],
    k: 50,
    variant: 'radix-select',
    key: (_i, random) => random() * 2 - 1,
  },
  {
    name: "radix-select, finalize in a launch of its own (radixFinalizeInFilter 'never') after the digit passes",
    sizes: [65536, 1024, 80000],
    k: 50,
    variant: 'radix-select',
    policy: { radixFinalizeInFilter: 'never', radixPick: 'never' },
    key: (_i, random) => random() * 2 - 1,
    launches: ['init', 'histogram', 'filter', '/finalize['],
  },
  {
    name: "radix-select, the last filter's last workgroup finalizes: heavy ties past the tile at the last digit (the digit's filter and the select over tied indices), one filter workgroup and many",
    sizes: [40000, 3000, 0, 9000],
    k: 700,
    variant: 'radix-select',
    policy: { radixPick: 'never', radixFilterWorkgroups: 64, radixFinalizeInFilter: 'always' },
    key: (i, random) => (random() < 0.6 ? 7 : i % 3 === 0 ? -0 : random() < 0.1 ? NaN : Math.round(random() * 50)),
    launches: ['init', 'histogram', 'filter-finalize', 'filter'],
  },
  {
    // Past 256 x radixSampleCap keys (2097152 with workgroups of 256) a segment takes one key in 256
    // over several init workgroups (policy.ts radixInitParts), whose lists the last to arrive ranks;
    // the short segment samples in one.
    name: 'radix-select, a long segment sampled by several init workgroups (radixInitWorkgroups): the last to arrive ranks their published keys',
    sizes: [2200000, 3000],
    k: 50,
    variant: 'radix-select',
    grids: { '/init[': 2 * 2 },
    key: (_i, random) => random() * 2 - 1,
    launches: ['init', 'histogram', 'filter'],
  },
  {
    name: 'radix-select, pass 0 over fewer workgroups than tiles (each takes every third tile of its segment, the next in flight), collecting past sampled thresholds',
    sizes: [65536, 1024, 80000, 30001],
    k: 50,
    variant: 'radix-select',
    policy: { radixHistogramWorkgroups: 12 },
    key: (_i, random) => random() * 2 - 1,
  },
  {
    name: 'radix-select, pass 0 over fewer workgroups than tiles, the histogram of every key (k past a quarter of the segment: no sample)',
    sizes: [20000, 9000],
    k: 6000,
    variant: 'radix-select',
    policy: { radixHistogramWorkgroups: 4 },
    key: (_i, random) => Math.round(random() * 3000) - 1500,
  },
  { name: 'reduce, then softmax routing weights', sizes: [128, 0, 77, 128], k: 8, variant: 'reduce', deviceK: true, weights: 'softmax' },
  { name: 'single-tile, then sigmoid-renormalize routing weights', sizes: [300, 1024, 0, 77], k: 40, variant: 'single-tile', weights: 'sigmoid-renormalize' },
  {
    name: "radix-select unsorted: filter pass 0 selects the best k among the sampled candidates (radix select in workgroup memory, 8-bit digits, then index order)",
    sizes: [16384, 9000, 16384, 4097],
    k: 400,
    variant: 'radix-select',
    outputOrdering: 'unsorted',
    launches: ['filter'],
    pickedSelection: true,
  },
  {
    name: 'radix-select unsorted, 11-bit digits: the select over random keys, ties, NaN and -0',
    sizes: [16384, 20000, 5000],
    k: 300,
    variant: 'radix-select',
    outputOrdering: 'unsorted',
    policy: { radixBits: 11 },
    key: (i, random) => (i % 97 === 0 ? NaN : i % 89 === 0 ? -0 : random() < 0.5 ? Math.round(random() * 50) : random()),
    pickedSelection: true,
  },
  {
    // Every key within 600 ulps of 0.5 (about 27 copies of each): the select's rounds over the distance
    // from the least candidate decide it in one digit, then the tied indices.
    name: 'radix-select unsorted, 11-bit digits: the select over keys a few hundred ulps apart, tied at the threshold',
    sizes: [16384, 20000],
    k: 300,
    variant: 'radix-select',
    outputOrdering: 'unsorted',
    policy: { radixBits: 11 },
    key: (i, random) => 0.5 + Math.floor(random() * 600) * 2 ** -24,
    pickedSelection: true,
  },
  {
    // 8-bit digits over distances of 12 bits: two rounds, of 8 bits and then 4.
    name: 'radix-select sorted with radixCandidateSelectSorted, 8-bit digits: the select over keys a few thousand ulps apart',
    sizes: [16384, 9000],
    k: 200,
    variant: 'radix-select',
    policy: { radixBits: 8, radixCandidateSelectSorted: true },
    key: (i, random) => -0.75 + Math.floor(random() * 3000) * 2 ** -24,
    pickedSelection: true,
  },
  {
    name: 'radix-select sorted with radixCandidateSelectSorted: the select, then the sort of the selection alone',
    sizes: [16384, 9000],
    k: 400,
    variant: 'radix-select',
    policy: { radixCandidateSelectSorted: true },
    pickedSelection: true,
  },
  {
    // Every filter workgroup of a segment ranks a share of its candidates (radixPickSpread 2, many
    // filter workgroups): ties, NaN and -0 among them, one rank per candidate by key, then index.
    name: 'radix-select sorted, the spread pick: the segment\'s filter workgroups rank its candidates together',
    sizes: [16384, 9000, 5000],
    k: 200,
    variant: 'radix-select',
    policy: { radixPickSpread: 2, radixFilterWorkgroups: 3 * 64 },
    key: (i, random) => (i % 97 === 0 ? NaN : i % 89 === 0 ? -0 : random() < 0.5 ? Math.round(random() * 300) : random() * 300),
    pickedSelection: true,
  },
  {
    // Fewer workgroups than a round of one invocation a candidate needs: workgroup 0 picks alone.
    name: 'radix-select sorted, too few filter workgroups for the spread pick (radixPickSpread 64): the first workgroup picks',
    sizes: [16384, 9000],
    k: 30,
    variant: 'radix-select',
    policy: { radixPickSpread: 64, radixFilterWorkgroups: 4 },
    key: tiesAndNaN,
    pickedSelection: true,
  },
  {
    name: 'radix-select sorted, every workgroup sort by ranks within buckets (rankSortMinItems 2): the pick, finalize',
    sizes: [16384, 9000, 700],
    k: 400,
    variant: 'radix-select',
    policy: { rankSortMinItems: 2 },
    key: (i, random) => (i % 97 === 0 ? NaN : i % 89 === 0 ? -0 : random() < 0.3 ? Math.round(random() * 20) : random()),
  },
  // The radix selection sort (forced: a device of many workgroup slots picks the merge by the sort's policy).
  { name: 'radix-select sorted past the tile (the radix selection sort)', sizes: [9000, 6000, 3], k: 5000, variant: 'radix-select', policy: { selectionSortVariant: 'radix' }, launches: ['sort-selection/scatter'] },
  // The selection written by the compaction launches (a GPU-class backend's default, radixCompactPastTile).
  {
    name: 'radix-select sorted past the tile, the selection compacted over every tile (then the radix selection sort)',
    sizes: [9000, 6000, 3],
    k: 5000,
    variant: 'radix-select',
    policy: { selectionSortVariant: 'radix', radixCompactPastTile: true },
    launches: ['radix-select/compact-write', 'sort-selection/scatter'],
  },
  {
    // Exactly k keys per segment in [1.5, 1.55), the rest in [1, 1.05): the take ends with digit 1's
    // bucket, and the filter that ends it writes the selection's least key (its digit-0 prefix).
    name: 'radix-select sorted past the tile, compacted, a take the filters end with a whole bucket',
    sizes: [9000, 6000],
    k: 5000,
    variant: 'radix-select',
    policy: { selectionSortVariant: 'radix', radixCompactPastTile: true },
    key: (i, random) => {
      const [j, size] = i < 9000 ? [i, 9000] : [i - 9000, 6000];
      return ((j * 7919) % size < 5000 ? 1.5 : 1) + Math.round(random() * 50) / 1024;
    },
    launches: ['radix-select/compact-write', 'sort-selection/scatter'],
  },
  {
    // A take past the tile samples a threshold only up to a sixteenth of its segment where the plan
    // compacts (policy.ts radixSampleCompactedDivisor): the long segment samples, the short one
    // (a quarter, which sampled before) does not.
    name: 'radix-select sorted past the tile, compacted: a take of a sixteenth samples, one of a quarter does not',
    sizes: [90000, 20000],
    k: 5000,
    variant: 'radix-select',
    policy: { selectionSortVariant: 'radix', radixCompactPastTile: true },
    launches: ['radix-select/compact-write', 'sort-selection/scatter'],
  },
  { name: 'radix-select sorted past the tile, then softmax routing weights (they read the sorted keysOut)', sizes: [5000, 2100], k: 2100, variant: 'radix-select', policy: { selectionSortVariant: 'radix' }, weights: 'softmax' },
  {
    // Forced: a software adapter's few workgroup slots leave the selection to radix by the sort's policy.
    name: "radix-select sorted past the tile through the segmented sort's merge (the short segment's selection is one tile, sorted in place)",
    sizes: [9000, 6000, 3],
    k: 5000,
    variant: 'radix-select',
    policy: { selectionSortVariant: 'merge' },
    launches: ['merge-blocks', 'merge-pass'],
  },
  {
    name: "radix-select sorted past the tile through the merge, then softmax routing weights",
    sizes: [5000, 2100],
    k: 2100,
    variant: 'radix-select',
    policy: { selectionSortVariant: 'merge' },
    weights: 'softmax',
    launches: ['merge-blocks', 'merge-pass'],
  },
];

describeTwins('CPU and WGSL twins, launch by launch', () => {
  let gpu: Backend;
  let cpu: Backend;
  beforeAll(async () => {
    gpu = await webgpuBackend();
    cpu = cpuBackend({ capabilities: gpu.capabilities, workers: 0 });
    Object.assign(boundedRank, boundedRankFor(topKPolicyFor(gpu.capabilities).tileItems));
  });
  afterAll(() => {
    gpu?.destroy();
    cpu?.destroy();
  });

  it("the bounded-rank case's ranks are bounded on this adapter (radixSampleMidRank binds)", () => {
    const policy = topKPolicyFor(gpu.capabilities);
    for (const size of boundedRank.sizes) {
      const cap = radixSampleCap(policy.workgroupSize);
      const bounded = radixSample(size, boundedRank.k, cap, policy.tileItems)!;
      expect(bounded.j, `size ${size}, k ${boundedRank.k}, tile ${policy.tileItems}`).toBeLessThan(radixSample(size, boundedRank.k, cap)!.j);
    }
  });

  for (const c of cases) {
    it(c.name, async () => {
      const random = rng(c.sizes.length * 7919 + c.k);
      const total = c.sizes.reduce((a, b) => a + b, 0);
      // By default keys with ties and specials so the partial lists hold equal keys.
      const keyOf = c.key ?? tiesAndNaN;
      const keys = new Float32Array(total);
      let at = 0;
      for (const size of c.sizes) for (let i = 0; i < size; i++) keys[at++] = keyOf(i, random);
      const n = c.sizes.length;

      const planOn = (backend: Backend) => {
        const keysIn = backend.upload(keys);
        const keysOut = backend.alloc('f32', n * c.k);
        const valuesOut = backend.alloc('u32', n * c.k);
        const weightsOut = backend.alloc('f32', n * c.k);
        const ks = new Uint32Array(n).fill(c.k);
        const k = c.deviceK === true ? p.perSegment(backend.upload(ks), { min: 1, max: c.k }) : p.constant(c.k as 1); // a case table's k: checked when planning, not typed as a literal
        const plan = DeviceBatchedTopK.plan(
          { keysIn, keysOut, valuesOut, ...(c.weights === undefined ? {} : { weights: { kind: c.weights, scale: 2.5 }, weightsOut }), segmentSizes: p.perSegment([...c.sizes], { min: 0, max: total }), k, selectDirection: p.constantOption('max'), numSegments: p.uniform(n) },
          env({ backend, requirements: { outputOrdering: c.outputOrdering ?? 'sorted' }, tuning: { variant: c.variant, ...(c.policy === undefined ? {} : { policy: c.policy }) } }),
        ) as Plan;
        return { plan, keysOut, valuesOut, weightsOut, owned: [keysIn, keysOut, valuesOut, weightsOut] as DeviceArray[] };
      };
      const onGpu = planOn(gpu);
      const onCpu = planOn(cpu);
      try {
        expect(onCpu.plan.launches.map((l) => `${l.name} x${l.grid}`)).toEqual(onGpu.plan.launches.map((l) => `${l.name} x${l.grid}`));
        for (const part of c.launches ?? []) expect(onGpu.plan.launches.some((l) => l.name.includes(part)), `a launch named *${part}*`).toBe(true);
        for (const [part, grid] of Object.entries(c.grids ?? {})) expect(onGpu.plan.launches.find((l) => l.name.includes(part))?.grid, `the grid of *${part}*`).toBe(grid);
        let compared = await compareLaunchByLaunch({ plan: onGpu.plan, backend: gpu }, { plan: onCpu.plan, backend: cpu }, identicalSlots);
        if (c.pickedSelection === true) {
          const filter0 = onGpu.plan.launches.findIndex((l) => l.kernel === 'radix-filter') + 1;
          expect(filter0).toBeGreaterThan(0);
          compared += await compareLaunchByLaunch({ plan: onGpu.plan, backend: gpu }, { plan: onCpu.plan, backend: cpu }, (kernel) => (kernel === 'radix-filter' ? ['selected'] : []), filter0);
        }
        if (c.weights !== undefined) {
          // The weights launch writes no temporary storage: compare its output after the last launch.
          expect(onGpu.plan.launches.at(-1)!.kernel).toBe('weights');
          const weightsAfter = async (side: { plan: Plan; weightsOut: DeviceArray }, backend: Backend) => {
            const temp = backend.alloc('u8', Math.max(4, side.plan.tempStorageBytes));
            try {
              await planInternals(side.plan).runPrefix(temp, side.plan.launches.length);
              return new Uint32Array((await backend.download(side.weightsOut)).buffer);
            } finally {
              temp.destroy();
            }
          };
          const [a, b] = [await weightsAfter(onGpu, gpu), await weightsAfter(onCpu, cpu)];
          const first = a.findIndex((word, i) => word !== b[i]);
          expect(first, `weightsOut: first differing word ${first} (webgpu ${a[first]}, cpu ${b[first]})`).toBe(-1);
          expect(a.some((word) => word !== 0)).toBe(true);
          compared++;
        }
        // The whole plan: outputs bit for bit (sorted, ties by index: one answer).
        for (const [side, backend] of [[onGpu, gpu], [onCpu, cpu]] as const) {
          const temp = backend.alloc('u8', Math.max(4, side.plan.tempStorageBytes));
          try {
            await side.plan.run(temp);
          } finally {
            temp.destroy();
          }
        }
        const [gpuKeys, cpuKeys, gpuValues, cpuValues] = await Promise.all([gpu.download(onGpu.keysOut), cpu.download(onCpu.keysOut), gpu.download(onGpu.valuesOut), cpu.download(onCpu.valuesOut)]);
        expect(new Uint32Array(gpuKeys.buffer)).toEqual(new Uint32Array(cpuKeys.buffer));
        expect(Array.from(gpuValues)).toEqual(Array.from(cpuValues));
        compared++;
        expect(compared).toBeGreaterThan(1);
      } finally {
        for (const side of [onGpu, onCpu]) {
          side.plan.destroy();
          for (const a of side.owned) a.destroy();
        }
      }
    });
  }
});
