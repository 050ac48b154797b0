import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, SegkitUsageError, type TopKPolicy, cpuBackend, env, p, selectTopKVariant, topKPolicyFor } from '../src/index.js';
import { chooseSelectionSort, radixHistogramTiles } from '../src/algorithms/batched-top-k/problem.js';
import { segmentedSortPolicyFor } from '../src/algorithms/segmented-sort/policy.js';
import { perInvocationWorkgroupSize, radixFewTilesPerSlot, radixFoldsFallback, radixFoldsFinalize, radixInitParts, radixPickOf, radixSampleFloorMinTake, radixSampleFloorRank, radixWideWorkgroup, radixSample, radixSampleCap, radixSampleCompactedDivisor, radixSampleWideOf, radixTileItemsFor, reduceChunkItemsFor, reduceMergesInChunks } from '../src/algorithms/batched-top-k/policy.js';
import { scanSubgroupWidthFor } from '../src/algorithms/batched-top-k/webgpu/facts.js';
import { spreadPickOf } from '../src/algorithms/batched-top-k/webgpu/radix-common.js';

/*
 * The policy values of the speed round: radix digit width (11 bits where the histogram fits beside
 * finalize's sort, on long segments), the tuning values the kernels cannot run with, and reduce's
 * one-invocation-per-segment threshold.
 */

const capabilitiesWith = (workgroupStorageBytes: number) => cpuBackend({ capabilities: { workgroupStorageBytes } }).capabilities;
const longRows = { k: { min: 1, max: 2048 }, segmentSize: { min: 1, max: 131072 }, segmentSizeDeviceBounds: false };

describe('top-k policy', () => {
  it('the spread pick (radixPickSpread) is built only with the pick, sorted output and a value within the workgroup, at least WG / 256', () => {
    const facts = { radixPick: true, sorted: true, radixPickSpread: 8, workgroupSize: 256 };
    expect(topKPolicyFor(cpuBackend({ workers: 0 }).capabilities).radixPickSpread).toBe(8);
    expect(spreadPickOf(facts)).toBe(8);
    // A workgroup's ranks live in the histogram's 256 words: at 512 invocations, at least 2 a candidate.
    expect(spreadPickOf({ ...facts, radixPickSpread: 1, workgroupSize: 512 })).toBe(2);
    expect(spreadPickOf({ ...facts, sorted: false })).toBeUndefined();
    expect(spreadPickOf({ ...facts, radixPick: false })).toBeUndefined();
    expect(spreadPickOf({ ...facts, radixPickSpread: 257 })).toBeUndefined();
    expect(spreadPickOf({ ...facts, radixPickSpread: 256 })).toBe(256);
    const backend = cpuBackend({ workers: 0 });
    const keysIn = backend.alloc('f32', 4);
    expect(() => DeviceBatchedTopK.plan({ keysIn, keysOut: backend.alloc('f32', 1), segmentSizes: p.uniform(4), k: p.uniform(1), selectDirection: p.constantOption('max'), numSegments: p.uniform(1) }, env({ backend, tuning: { policy: { radixPickSpread: 0 } } }))).toThrow('tuning.policy.radixPickSpread: 0 is not a positive integer');
  });

  it('radix-select uses 11-bit digits on segments of at least radixWideDigitItems keys where the histogram fits, else 8', () => {
    const roomy = capabilitiesWith(32768);
    expect(topKPolicyFor(roomy).radixBits).toBe(11);
    expect(selectTopKVariant(longRows, roomy).policy.radixBits).toBe(11);
    // Shorter segments (many of them): 8-bit histograms stay small.
    expect(selectTopKVariant({ ...longRows, segmentSize: { min: 1, max: 65535 } }, roomy).policy.radixBits).toBe(8);
    // 16 KiB of workgroup memory: a 1024-item sort plus an 8 KiB histogram do not fit.
    expect(topKPolicyFor(capabilitiesWith(16384)).radixBits).toBe(8);
    expect(selectTopKVariant(longRows, capabilitiesWith(16384)).policy.radixBits).toBe(8);
    // Tuning wins on any segment size.
    expect(selectTopKVariant({ ...longRows, segmentSize: { min: 1, max: 5000 } }, roomy, { policy: { radixBits: 11 } }).policy.radixBits).toBe(11);
  });

  it('radix-select spreads pass 0 over four workgroups per slot on a GPU, one workgroup a tile on the CPU emulator', () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    expect(topKPolicyFor(gpu).radixHistogramWorkgroups).toBe(4096);
    const geometry = (maxSegments: number, maxSegmentSize: number) => ({ maxSegments, maxSegmentSize });
    // One row of 16M in tiles of 2048: 8192 tiles over 4096 workgroups, two a workgroup.
    expect(radixHistogramTiles(geometry(1, 1 << 24), { ...topKPolicyFor(gpu), radixTileItems: 2048 })).toBe(4096);
    // 256 rows of 64 tiles: 16 workgroups a row.
    expect(radixHistogramTiles(geometry(256, 262144), topKPolicyFor(gpu))).toBe(16);
    // Never more workgroups than tiles.
    expect(radixHistogramTiles(geometry(1, 5000), topKPolicyFor(gpu))).toBe(2);
    const cpu = cpuBackend().capabilities;
    expect(radixHistogramTiles(geometry(1, 1 << 22), topKPolicyFor(cpu))).toBe((1 << 22) / topKPolicyFor(cpu).radixTileItems);
    expect(() => selectTopKVariant(longRows, gpu, { policy: { radixHistogramWorkgroups: 0 } })).toThrow(/radixHistogramWorkgroups/);
  });

  it("radix-select halves its pass-0 tile where whole tiles would give fewer than radixFewTilesPerSlot workgroups per slot", () => {
    // A GPU's capabilities: 1024 workgroup slots, so 8192 workgroups is the bound.
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    const full = topKPolicyFor(gpu).radixTileItems;
    expect(full).toBe(4096);
    const rows = (maxSegments: number, size: number) => ({ k: { min: 1, max: 100 }, segmentSize: { min: 1, max: size }, segmentSizeDeviceBounds: false, maxSegments });
    // 64 rows of 151936: 38 tiles each, 2432 workgroups < 8192: 2048-key tiles.
    expect(selectTopKVariant(rows(64, 151936), gpu).policy.radixTileItems).toBe(2048);
    // One row of 16M: 4096 tiles < 8192: halved; 256 rows of 262144: 16384 tiles: kept.
    expect(selectTopKVariant(rows(1, 1 << 24), gpu).policy.radixTileItems).toBe(2048);
    expect(selectTopKVariant(rows(256, 262144), gpu).policy.radixTileItems).toBe(4096);
    expect(selectTopKVariant(rows(512, 65536), gpu).policy.radixTileItems).toBe(4096);
    expect(selectTopKVariant(rows(511, 65536), gpu).policy.radixTileItems).toBe(2048);
    // Tuning wins; other variants keep the policy's tile.
    expect(selectTopKVariant(rows(64, 151936), gpu, { policy: { radixTileItems: 4096 } }).policy.radixTileItems).toBe(4096);
    expect(selectTopKVariant(rows(64, 151936), gpu, { variant: 'row-radix' }).policy.radixTileItems).toBe(4096);
    // Never below 8 keys an invocation.
    expect(radixTileItemsFor(1, 5000, { radixTileItems: 2048, workgroupSize: 256 }, 1024)).toBe(2048);
    expect(radixTileItemsFor(1, 5000, { radixTileItems: 4096, workgroupSize: 256 }, 1024)).toBe(2048);
    expect(radixFewTilesPerSlot).toBe(8);
  });

  it("radix-select's pass 0 takes a misleading sample's histogram on segments of at most radixFoldFallbackMaxItems keys; longer ones keep the fallback launch", () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } });
    expect(topKPolicyFor(gpu.capabilities).radixFoldFallbackMaxItems).toBe(131072);
    expect(radixFoldsFallback(131072, topKPolicyFor(gpu.capabilities))).toBe(true);
    expect(radixFoldsFallback(131073, topKPolicyFor(gpu.capabilities))).toBe(false);
    const launchesOf = (cols: number, policy?: Partial<TopKPolicy>) => {
      const keysIn = gpu.alloc('f32', cols);
      const keysOut = gpu.alloc('f32', 100);
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, segmentSizes: p.uniform(cols), k: p.constant(100), selectDirection: p.constantOption('max'), numSegments: p.uniform(1) },
        env({ backend: gpu, tuning: { variant: 'radix-select', ...(policy === undefined ? {} : { policy }) } }),
      );
      const names = plan.launches.map((l) => l.name.replace(/^topk\/radix-select\/|\[.*$/g, ''));
      const explained = plan.explain();
      plan.destroy();
      return { names, explained };
    };
    const folded = launchesOf(131072);
    expect(folded.names).toEqual(['init', 'histogram', 'filter', 'filter-finalize']);
    expect(folded.explained).toContain("the segment's last workgroup to finish adds the keys below it: segments of at most 131072 keys, radixFoldFallbackMaxItems");
    const launched = launchesOf(131073);
    expect(launched.names).toEqual(['init', 'histogram', 'fallback', 'filter', 'filter-finalize']);
    expect(launched.explained).toContain('segments of up to 131073 keys, past radixFoldFallbackMaxItems 131072: spread over the device');
    expect(launchesOf(131072, { radixFoldFallbackMaxItems: 65536 }).names).toContain('fallback');
    expect(() => launchesOf(131072, { radixFoldFallbackMaxItems: 0 })).toThrow(/tuning\.policy\.radixFoldFallbackMaxItems/);
    gpu.destroy();
  });

  it('radix-init samples a segment past 256 x radixSampleCap keys with up to radixInitWorkgroups workgroups, one key in 256, where the rank stays within the ranked maxima', () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } });
    const policy = topKPolicyFor(gpu.capabilities);
    expect(policy.radixInitWorkgroups).toBe(8);
    const cap = radixSampleCap(policy.workgroupSize);
    const wide = radixSampleWideOf(policy);
    expect(wide).toEqual({ workgroups: 8, maxJ: 16 });
    // One row of 16M keys, k = 100: 65536 samples over 8 workgroups, a step of 256, rank 9.
    expect(radixSample(16777216, 100, cap, policy.tileItems, false, wide)).toEqual({ m: 65536, step: 256, j: 9, parts: 8 });
    expect(radixSample(16777216, 100, cap, policy.tileItems)).toEqual({ m: 8192, step: 2048, j: 9, parts: 1 });
    // 3M keys: the sample grows only to one key in 256 (11718 keys, 2 workgroups).
    expect(radixSample(3000000, 100, cap, policy.tileItems, false, wide)).toEqual({ m: 11712, step: 256, j: 9, parts: 2 });
    // A take whose rank passes 16 keeps one workgroup's sample.
    expect(radixSample(16777216, 3000, cap, policy.tileItems, false, wide)).toEqual(radixSample(16777216, 3000, cap, policy.tileItems));
    // Up to 2M keys one workgroup already samples one key in 256.
    expect(radixSample(2097152, 100, cap, policy.tileItems, false, wide)!.parts).toBe(1);
    expect(radixInitParts(2097152, policy)).toBe(1);
    expect(radixInitParts(2097152 + 2048, policy)).toBe(2);
    expect(radixInitParts(16777216, policy)).toBe(8);
    expect(radixInitParts(1 << 30, policy)).toBe(8);
    expect(radixInitParts(16777216, { ...policy, radixInitWorkgroups: 1 })).toBe(1);
    // The last workgroup ranks every list at once: at most workgroupSize / 16 lists.
    expect(radixSampleWideOf({ workgroupSize: 64, radixInitWorkgroups: 8 })).toEqual({ workgroups: 4, maxJ: 16 });
    // Finalize folds into the last filter where every segment's candidates are expected within the pick's tile.
    const folds = (maxSegmentSize: number, kMax: number, radixInitWorkgroups = 8) => radixFoldsFinalize({ ...policy, radixInitWorkgroups }, { pickBuilt: true, maxSegmentSize, kMax });
    expect(folds(16777216, 100)).toBe(true);
    expect(folds(16777216, 100, 1)).toBe(false);
    expect(folds(16777216, 3000)).toBe(false);
    expect(folds(2 * 16777216, 100)).toBe(false);
    const launchesOf = (cols: number, k: number, tuning?: Partial<TopKPolicy>) => {
      const keysIn = gpu.alloc('f32', cols);
      const keysOut = gpu.alloc('f32', k);
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(1) },
        env({ backend: gpu, tuning: { variant: 'radix-select', ...(tuning === undefined ? {} : { policy: tuning }) } }),
      );
      const launches = plan.launches.map((l) => `${l.name.replace(/^topk\/radix-select\/|\[.*$/g, '')} x${l.grid}`);
      const explained = plan.explain();
      const temp = plan.tempStorageBytes;
      plan.destroy();
      keysIn.destroy();
      keysOut.destroy();
      return { launches, explained, temp };
    };
    const long = launchesOf(16777216, 100);
    expect(long.launches.slice(0, 1)).toEqual(['init x8']);
    expect(long.launches.at(-1)).toMatch(/^filter-finalize /);
    expect(long.explained).toContain('up to 8 workgroups a segment past 2097152 keys, radixInitWorkgroups, one key in 256 where the threshold\'s rank is at most 16');
    const one = launchesOf(16777216, 100, { radixInitWorkgroups: 1 });
    expect(one.launches.slice(0, 1)).toEqual(['init x1']);
    expect(one.launches.at(-1)).toMatch(/^finalize /);
    // The arrival word and the lists: 1 + 8 x 16 x 2 words, zeroed every run.
    expect(long.temp - one.temp).toBe(Math.ceil(((1 + 8 * 16 * 2) * 4) / 256) * 256);
    expect(() => launchesOf(16777216, 100, { radixInitWorkgroups: 0 })).toThrow('tuning.policy.radixInitWorkgroups: 0 is not a positive integer');
    gpu.destroy();
  });

  it('radix-select leaves the fallback launch out where no segment samples a threshold (every take above a quarter of its segment, or above the tile and a sixteenth where the plan compacts)', () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } });
    const { tileItems } = topKPolicyFor(gpu.capabilities);
    const namesOf = (cols: number, k: number, kBounds?: { min: number; max: number }, policy: Partial<TopKPolicy> = {}) => {
      const keysIn = gpu.alloc('f32', cols);
      const keysOut = gpu.alloc('f32', kBounds?.max ?? k);
      // Bounds: k on the device, only its bounds known to the plan.
      const ks = kBounds === undefined ? undefined : gpu.upload(new Uint32Array([k]));
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, segmentSizes: p.uniform(cols), k: ks === undefined ? p.uniform(k) : p.perSegment(ks, kBounds), selectDirection: p.constantOption('max'), numSegments: p.uniform(1) },
        env({ backend: gpu, tuning: { variant: 'radix-select', policy } }),
      );
      const names = plan.launches.map((l) => l.name.replace(/^topk\/radix-select\/|\[.*$/g, ''));
      plan.destroy();
      for (const a of [keysIn, keysOut, ks]) a?.destroy();
      return names;
    };
    const cols = 1 << 20;
    // Without the compaction, k past a quarter of the segment: no sample, no fallback launch.
    const uncompacted = { radixCompactPastTile: false };
    expect(namesOf(cols, cols / 4 + 1, undefined, uncompacted)).not.toContain('fallback');
    expect(namesOf(cols, cols / 4, undefined, uncompacted)).toContain('fallback');
    // Compacted takes past the tile sample up to a sixteenth (policy.ts radixSampleCompactedDivisor).
    expect(radixSampleCompactedDivisor).toBe(16);
    expect(namesOf(cols, cols / 16 + 1)).toEqual(expect.arrayContaining(['compact-write']));
    expect(namesOf(cols, cols / 16 + 1)).not.toContain('fallback');
    expect(namesOf(cols, cols / 16)).toContain('fallback');
    // A k on the device whose bounds let some k sample keeps it; bounds that rule sampling out do not.
    expect(namesOf(cols, cols / 2, { min: tileItems, max: cols / 2 })).toContain('fallback');
    expect(namesOf(cols, cols / 2, { min: cols / 16 + 1, max: cols / 2 })).not.toContain('fallback');
    gpu.destroy();
  });

  it("radix-select's last filter takes finalize's work where the pick is expected to leave it nothing ('auto')", () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } });
    const launchesOf = (rows: number, cols: number, options: { policy?: Partial<TopKPolicy>; unsorted?: boolean; deviceSizes?: boolean } = {}) => {
      const keysIn = gpu.alloc('f32', rows * cols);
      const keysOut = gpu.alloc('f32', rows * 100);
      const sizes = options.deviceSizes === true ? gpu.upload(new Uint32Array(rows).fill(cols)) : undefined;
      const plan = DeviceBatchedTopK.plan(
        {
          keysIn,
          keysOut,
          segmentSizes: sizes === undefined ? p.uniform(cols) : p.perSegment(sizes, { max: cols }),
          k: p.constant(100),
          selectDirection: p.constantOption('max'),
          numSegments: p.uniform(rows),
        },
        env({
          backend: gpu,
          tuning: { variant: 'radix-select', ...(options.policy === undefined ? {} : { policy: options.policy }) },
          ...(options.unsorted === true ? { requirements: { outputOrdering: 'unsorted' } } : {}),
        }),
      );
      const names = plan.launches.map((l) => l.name.replace(/^topk\/radix-select\/|\[.*$/g, '')).filter((n) => !n.startsWith('topk/'));
      const explained = plan.explain();
      plan.destroy();
      return { names, explained };
    };
    expect(topKPolicyFor(gpu.capabilities).radixFinalizeInFilter).toBe('auto');
    // 64 rows of 151936 keys: the pick is built and a sample step of 19 keys keeps its candidates within the tile.
    const vocabulary = launchesOf(64, 151936);
    expect(vocabulary.names).toEqual(['init', 'histogram', 'fallback', 'filter', 'filter-finalize']);
    expect(vocabulary.explained).toContain("by the segment's last filter workgroup to finish (radixFinalizeInFilter 'auto')");
    // One row of 16M keys: sampled over 8 workgroups, a step of 256 keys, about 2.3K candidates, within the tile.
    expect(launchesOf(1, 1 << 24).names).toEqual(['init', 'histogram', 'fallback', 'filter', 'filter-finalize']);
    // Sampled by one workgroup: a step of 2048 keys, about 18K candidates, past the pick's tile: finalize works, in its own launch.
    expect(launchesOf(1, 1 << 24, { policy: { radixInitWorkgroups: 1 } }).names).toEqual(['init', 'histogram', 'fallback', 'filter', 'filter', 'finalize']);
    // Device-only sizes: no pick built.
    expect(launchesOf(64, 65536, { deviceSizes: true }).names.at(-1)).toBe('finalize');
    // Unsorted output alike; 'always' and 'never' force either.
    expect(launchesOf(64, 65536, { unsorted: true }).names.at(-1)).toBe('filter-finalize');
    expect(launchesOf(1, 1 << 24, { policy: { radixFinalizeInFilter: 'always' } }).names.at(-1)).toBe('filter-finalize');
    expect(launchesOf(64, 65536, { deviceSizes: true, policy: { radixFinalizeInFilter: 'always' } }).names.at(-1)).toBe('filter-finalize');
    expect(launchesOf(64, 151936, { policy: { radixFinalizeInFilter: 'never' } }).names.at(-1)).toBe('finalize');
    expect(() => launchesOf(64, 151936, { policy: { radixFinalizeInFilter: true as never } })).toThrow("tuning.policy.radixFinalizeInFilter: true is not one of 'auto', 'always', 'never'");
    gpu.destroy();
  });

  it('rejects tuning values the radix kernels cannot run with, naming the value', () => {
    const roomy = capabilitiesWith(32768);
    expect(() => selectTopKVariant(longRows, roomy, { policy: { radixBits: 3 } })).toThrow('tuning.policy.radixBits: 3 is outside [4, 11] (digits of 4 to 11 bits: 3 to 8 passes)');
    expect(() => selectTopKVariant(longRows, roomy, { policy: { radixBits: 12 } })).toThrow('tuning.policy.radixBits: 12 is outside [4, 11]');
    expect(() => selectTopKVariant(longRows, capabilitiesWith(16384), { policy: { radixBits: 11 } })).toThrow(
      'tuning.policy.radixBits: 11-bit digits with tileItems 1024 need 18176 bytes of workgroup memory; the backend has 16384',
    );
    expect(() => selectTopKVariant(longRows, roomy, { policy: { radixTileItems: 1000 } })).toThrow('tuning.policy.radixTileItems: 1000 is not a multiple of workgroupSize 256');
  });

  it('row-radix takes rows past the tile within its bounds; its workgroup is the largest that fits, and tuning past it is refused by name', () => {
    // A GPU's capabilities (parallelism: its workgroup slots).
    const capabilities = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    const rows = { k: { min: 1, max: 2048 }, segmentSize: { min: 1, max: 16384 }, segmentSizeDeviceBounds: false, maxSegments: 128 };
    const row = selectTopKVariant(rows, capabilities);
    expect(row.variant).toBe('row-radix');
    // Rows of at most rowRadixWideItems: 256 invocations. Wider rows (here a selection past the tile): a 4096-item
    // tile with its sort's pad words (34 KiB), a 256-bin histogram and a 4 KiB scan fit 48 KiB: 1024 invocations.
    expect(row.policy.rowRadixWorkgroupSize).toBe(256);
    const wide = { ...rows, k: { min: 1, max: 8192 }, segmentSize: { min: 1, max: 32768 } };
    expect(selectTopKVariant(wide, capabilities).policy.rowRadixWorkgroupSize).toBe(1024);
    expect(row.verdicts.find((v) => v.variant === 'radix-select')!.reason).toContain('row-radix is preferred');
    // Past its bounds radix-select runs, and explain() says which bound.
    const many = selectTopKVariant({ ...rows, maxSegments: 1025 }, capabilities);
    expect(many.variant).toBe('radix-select');
    expect(many.verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe('1025 segments of up to 16384 keys (16793600) > rowRadixMaxTotalItems 16777216');
    // Rows past rowRadixMaxItems: radix-select, unless kMax is past the tile (then up to rowRadixPastTileMaxItems).
    const longer = { ...rows, segmentSize: { min: 1, max: 65536 }, maxSegments: 128 };
    expect(selectTopKVariant(longer, capabilities).variant).toBe('row-radix');
    const longest = { ...rows, segmentSize: { min: 1, max: 65537 }, maxSegments: 128 };
    expect(selectTopKVariant(longest, capabilities).verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe('max segment size 65537 > rowRadixMaxItems 65536');
    expect(selectTopKVariant(longest, capabilities).variant).toBe('radix-select');
    expect(selectTopKVariant(longer, capabilities, { policy: { rowRadixMaxItems: 32768 } }).variant).toBe('radix-select');
    // Few rows (under rowRadixFewRows): row-radix only up to rowRadixFewRowsMaxItems (32768) keys a row.
    const few = { ...longer, maxSegments: 64 };
    const fewLong = selectTopKVariant(few, capabilities);
    expect(fewLong.variant).toBe('radix-select');
    expect(fewLong.verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe('64 segments (< rowRadixFewRows 128) of up to 65536 keys > rowRadixFewRowsMaxItems 32768');
    expect(selectTopKVariant({ ...few, segmentSize: { min: 1, max: 32768 } }, capabilities).variant).toBe('row-radix');
    expect(selectTopKVariant(few, capabilities, { policy: { rowRadixFewRowsMaxItems: 65536 } }).variant).toBe('row-radix');
    expect(selectTopKVariant(few, capabilities, { policy: { rowRadixFewRows: 64 } }).variant).toBe('row-radix');
    expect(() => selectTopKVariant(longer, capabilities, { policy: { radixCandidateSelect: 'yes' as never } })).toThrow('tuning.policy.radixCandidateSelect: yes is not a boolean');
    expect(() => selectTopKVariant(longer, capabilities, { policy: { rankSortMinItems: 0 } })).toThrow('tuning.policy.rankSortMinItems: 0 is not a positive integer');
    // A selection past the tile is not held to the few-rows limit: 16 rows of 65536, k = 10000.
    const pastTile = selectTopKVariant({ ...longer, maxSegments: 16, k: { min: 1, max: 10_000 } }, capabilities);
    expect(pastTile.variant).toBe('row-radix');
    expect(pastTile.verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe(
      'max segment size 65536 <= rowRadixPastTileMaxItems 65536 (kMax 10000 > tile 4096) with kMax 10000 >= rowRadixWideMinK 1024, 1048576 keys in all <= rowRadixMaxTotalItems 16777216',
    );
    expect(selectTopKVariant({ ...longer, k: { min: 1, max: 10_000 }, segmentSize: { min: 1, max: 65537 } }, capabilities).variant).toBe('radix-select');
    // Wide rows (past rowRadixWideItems) with a small k: radix-select; narrow rows get 256 invocations.
    const wideRows = selectTopKVariant({ ...rows, k: { min: 1, max: 512 }, segmentSize: { min: 1, max: 32768 } }, capabilities);
    expect(wideRows.variant).toBe('radix-select');
    expect(wideRows.verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe('rows past rowRadixWideItems 16384 (max segment size 32768) with kMax 512 < rowRadixWideMinK 1024');
    const narrow = selectTopKVariant({ k: { min: 1, max: 256 }, segmentSize: { min: 16, max: 8192 }, segmentSizeDeviceBounds: false, maxSegments: 512 }, capabilities);
    expect([narrow.variant, narrow.policy.rowRadixWorkgroupSize]).toEqual(['row-radix', 256]);
    // 12 KiB: the 1024-item tile, histogram and scan fit 1024 invocations no more; the default shrinks, tuning is refused.
    const small = cpuBackend({ capabilities: { workgroupStorageBytes: 12288, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    expect(selectTopKVariant(wide, small).policy.rowRadixWorkgroupSize).toBe(512);
    expect(() => selectTopKVariant(rows, small, { policy: { rowRadixWorkgroupSize: 1024 } })).toThrow(
      'tuning.policy.rowRadixWorkgroupSize: 1024 invocations with tileItems 1024 and 8-bit digits need 14080 bytes of workgroup memory; the backend has 12288',
    );
    // Few workgroup slots (the CPU emulator, lavapipe): radix-select is natural, row-radix still runs when forced, with 256 invocations.
    const fewSlots = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 8 } }).capabilities;
    const onFew = selectTopKVariant(rows, fewSlots);
    expect(onFew.variant).toBe('radix-select');
    expect(onFew.verdicts.find((v) => v.variant === 'row-radix')!.reason).toBe('the backend has 8 workgroup slots (< 128): one workgroup per row would run its passes alone');
    expect(selectTopKVariant(rows, fewSlots, { variant: 'row-radix' }).policy.rowRadixWorkgroupSize).toBe(256);
    expect(() => selectTopKVariant(rows, capabilities, { policy: { rowRadixWorkgroupSize: 2048 } })).toThrow(
      "tuning.policy.rowRadixWorkgroupSize: 2048 exceeds 1024 (the backend's maxWorkgroupSize, and at most 1024)",
    );
  });

  it('reduce gives segments of at most reduceSmallSegmentItems keys one invocation each, keeping the full workgroup', () => {
    const capabilities = capabilitiesWith(32768);
    const router = selectTopKVariant({ k: { min: 1, max: 2 }, segmentSize: { min: 16, max: 16 }, segmentSizeDeviceBounds: false }, capabilities);
    expect(router.variant).toBe('reduce');
    expect(router.policy.reduceSmallSegmentItems).toBe(32);
    // Per invocation, a workgroup holds workgroupSize segments: it is not narrowed to the segment.
    expect(router.policy.workgroupSize).toBe(topKPolicyFor(capabilities).workgroupSize);
    const wider = selectTopKVariant({ k: { min: 1, max: 8 }, segmentSize: { min: 1, max: 256 }, segmentSizeDeviceBounds: false }, capabilities);
    expect(wider.policy.workgroupSize).toBeLessThan(topKPolicyFor(capabilities).workgroupSize);
  });

  it('reduce spreads many short segments over smaller workgroups until they make a quarter of reduceWorkgroups', () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 32768, parallelism: 1024 } }).capabilities;
    // 16384 routers of 16 experts: 256 workgroups of 64 instead of 64 of 256.
    const router = selectTopKVariant({ k: { min: 1, max: 1 }, segmentSize: { min: 16, max: 16 }, segmentSizeDeviceBounds: false, maxSegments: 16384 }, gpu);
    expect(router.policy.workgroupSize).toBe(64);
    expect(perInvocationWorkgroupSize(16384, 256, 1024, gpu)).toBe(64);
    // Never below one subgroup, never above the policy's size; tuning wins.
    expect(perInvocationWorkgroupSize(10, 256, 1024, gpu)).toBe(32);
    expect(perInvocationWorkgroupSize(1 << 20, 256, 1024, gpu)).toBe(256);
    expect(selectTopKVariant({ k: { min: 1, max: 1 }, segmentSize: { min: 16, max: 16 }, segmentSizeDeviceBounds: false, maxSegments: 16384 }, gpu, { policy: { workgroupSize: 128 } }).policy.workgroupSize).toBe(128);
  });

  it("reduce lengthens its chunks over long rows so the grid is about reduceChunkWorkgroups workgroups (a quarter of a GPU's slots)", () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 32768, parallelism: 1024 } }).capabilities;
    // Greedy decoding, 64 x 151936: 4 chunks of 40960 keys per row (256 workgroups), not 38 of 4096.
    const greedy = selectTopKVariant({ k: { min: 1, max: 1 }, segmentSize: { min: 151936, max: 151936 }, segmentSizeDeviceBounds: false, maxSegments: 64 }, gpu);
    expect(greedy.policy.reduceWorkgroups).toBe(1024);
    expect(greedy.policy.reduceChunkWorkgroups).toBe(256);
    expect(greedy.policy.reduceChunkItems).toBe(40960);
    // The CPU emulator (few workgroup slots) keeps one chunk per slot.
    const fewSlots = cpuBackend({ capabilities: { workgroupStorageBytes: 32768, parallelism: 4 } }).capabilities;
    expect(selectTopKVariant({ k: { min: 1, max: 1 }, segmentSize: { min: 151936, max: 151936 }, segmentSizeDeviceBounds: false, maxSegments: 1 }, fewSlots).policy.reduceChunkWorkgroups).toBe(4);
    expect(reduceChunkItemsFor(64, 151936, 4096, 1024)).toBe(12288);
    // Few long rows, or many short ones: one loop trip per chunk as before.
    expect(reduceChunkItemsFor(1, 128256, 4096, 1024)).toBe(4096);
    expect(reduceChunkItemsFor(16384, 256, 4096, 1024)).toBe(4096);
    // Whole loop trips, never fewer workgroups than segments.
    expect(reduceChunkItemsFor(4096, 100_000, 4096, 1024)).toBe(102400);
    expect(selectTopKVariant({ k: { min: 1, max: 1 }, segmentSize: { min: 151936, max: 151936 }, segmentSizeDeviceBounds: false, maxSegments: 64 }, gpu, { policy: { reduceChunkItems: 4096 } }).policy.reduceChunkItems).toBe(4096);
  });

  it('reduce gives way to the radix selects for kMax past 4 over rows past 65535 keys, from reduceLongListRadixItems keys in all (a GPU only)', () => {
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    const cpu = cpuBackend({ workers: 0 }).capabilities;
    const facts = (rows: number, size: number, k: number) => ({ k: { min: k, max: k }, segmentSize: { min: size, max: size }, segmentSizeDeviceBounds: false, maxSegments: rows });
    // Top-k sampling over 64 vocabularies of 151936 keys with k = 8 (9.7M keys): radix-select.
    const vocab = selectTopKVariant(facts(64, 151936, 8), gpu);
    expect(vocab.variant).toBe('radix-select');
    expect(vocab.verdicts.find((v) => v.variant === 'reduce')).toEqual({
      variant: 'reduce',
      applicable: true,
      reachable: false,
      reason: "kMax 8 > 4 over rows of up to 151936 keys (> 65535), 9723904 keys in all >= reduceLongListRadixItems 8388608: reduce's lists of 8 cost more per key than the radix selects",
    });
    expect(selectTopKVariant(facts(128, 65536, 5), gpu).variant).toBe('radix-select');
    expect(selectTopKVariant(facts(1, 16777216, 8), gpu).variant).toBe('radix-select');
    // Reduce keeps lists of 4, rows of up to 65535 keys, calls of fewer keys, the CPU, and a tuned limit.
    expect(selectTopKVariant(facts(64, 151936, 4), gpu).variant).toBe('reduce');
    expect(selectTopKVariant(facts(512, 16384, 8), gpu).variant).toBe('reduce');
    expect(selectTopKVariant(facts(127, 65536, 8), gpu).variant).toBe('reduce');
    expect(selectTopKVariant(facts(64, 151936, 8), cpu).variant).toBe('reduce');
    expect(selectTopKVariant(facts(64, 151936, 8), gpu, { policy: { reduceLongListRadixItems: 2 ** 30 } }).variant).toBe('reduce');
    // Forced, reduce still runs there.
    expect(selectTopKVariant(facts(64, 151936, 8), gpu, { variant: 'reduce' }).variant).toBe('reduce');
  });

  it("reduce merges the chunks in their own launch where kMax is 1 ('auto'), else in a launch of its own; tuning forces either, a bad value is named", () => {
    const auto = { reduceLastChunkMerges: 'auto' } as const;
    expect(reduceMergesInChunks(auto, 1)).toEqual({ merges: true, why: "reduceLastChunkMerges 'auto', and kMax is 1: the last chunk workgroup of a segment merges" });
    expect(reduceMergesInChunks(auto, 2).merges).toBe(false);
    expect(reduceMergesInChunks(auto, 8).why).toBe("reduceLastChunkMerges 'auto', and kMax 8 > 1: lists of more than one entry merged faster in a launch of their own");
    expect(reduceMergesInChunks({ reduceLastChunkMerges: 'always' }, 8)).toEqual({ merges: true, why: "tuning.policy.reduceLastChunkMerges 'always'" });
    expect(reduceMergesInChunks({ reduceLastChunkMerges: 'never' }, 1).merges).toBe(false);
    const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 32768, parallelism: 1024 } }).capabilities;
    const facts = { k: { min: 1, max: 1 }, segmentSize: { min: 151936, max: 151936 }, segmentSizeDeviceBounds: false, maxSegments: 64 };
    expect(() => selectTopKVariant(facts, gpu, { policy: { reduceLastChunkMerges: 'sometimes' as never } })).toThrow("tuning.policy.reduceLastChunkMerges: sometimes is not one of 'auto', 'always', 'never'");
  });
});

describe("radix-select's wide workgroups: radixWideWorkgroupSize from radixWideWorkgroupMinK, with the pick built", () => {
  const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
  const rows = (maxSegments: number, size: number, k: number, sizeMin = size) => ({ k: { min: k, max: k }, segmentSize: { min: sizeMin, max: size }, segmentSizeDeviceBounds: false, maxSegments });

  it('the indexer shapes take workgroups of 512 and tiles of 8192; smaller k, no pick, the CPU emulator and a tuned workgroup size keep 256', () => {
    expect(topKPolicyFor(gpu).radixWideWorkgroupSize).toBe(512);
    expect(topKPolicyFor(gpu).radixWideWorkgroupMinK).toBe(512);
    const indexer = selectTopKVariant(rows(64, 65536, 2048), gpu);
    expect(indexer.variant).toBe('radix-select');
    expect(indexer.policy.workgroupSize).toBe(512);
    expect(indexer.policy.radixTileItems).toBe(8192);
    expect(indexer.why).toContain('workgroups of 512 invocations, tiles of 8192 keys (kMax 2048 >= radixWideWorkgroupMinK 512 with the pick built');
    expect(selectTopKVariant(rows(64, 65536, 512), gpu).policy.workgroupSize).toBe(512);
    // k below the bound (the anchor's 256 measured slower in workgroups of 512).
    const anchor = selectTopKVariant(rows(256, 262144, 256), gpu);
    expect(anchor.policy.workgroupSize).toBe(256);
    expect(anchor.why).not.toContain('radixWideWorkgroupMinK');
    // No pick: ragged rows whose least size the host knows is 1, or ties taken as found.
    expect(radixPickOf(topKPolicyFor(gpu), { sizeMin: 1, kMin: 512, kMax: 512 }, false).built).toBe(false);
    expect(selectTopKVariant(rows(128, 65536, 512, 1), gpu).policy.workgroupSize).toBe(256);
    expect(selectTopKVariant({ ...rows(64, 65536, 2048), tiesAsFound: true }, gpu).policy.workgroupSize).toBe(256);
    // The CPU emulator's own capabilities (few workgroup slots) and lavapipe-like ones.
    expect(selectTopKVariant(rows(64, 65536, 2048), cpuBackend().capabilities).policy.workgroupSize).toBe(topKPolicyFor(cpuBackend().capabilities).workgroupSize);
    expect(selectTopKVariant(rows(64, 65536, 2048), cpuBackend({ capabilities: { workgroupStorageBytes: 32768, maxWorkgroupSize: 1024, parallelism: 4 } }).capabilities).policy.workgroupSize).toBe(256);
    // Tuning wins: a workgroup size, a tile, the bound, or a wide size no larger than the workgroup.
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { workgroupSize: 256 } }).policy.workgroupSize).toBe(256);
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixTileItems: 4096 } }).policy).toMatchObject({ workgroupSize: 512, radixTileItems: 4096 });
    // A tuned tile that is no whole number of rows of 512 invocations keeps the workgroups of 256.
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixTileItems: 4352 } }).policy).toMatchObject({ workgroupSize: 256, radixTileItems: 4352 });
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixWideWorkgroupMinK: 4096 } }).policy.workgroupSize).toBe(256);
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixWideWorkgroupSize: 256 } }).policy.workgroupSize).toBe(256);
    expect(selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixWideWorkgroupSize: 1024 } }).policy.workgroupSize).toBe(1024);
    // Other variants never take it.
    expect(selectTopKVariant(rows(64, 32768, 2048), gpu).variant).toBe('row-radix');
    expect(selectTopKVariant(rows(64, 32768, 2048), gpu).policy.workgroupSize).toBe(256);
  });

  it("a wide size past the backend's maxWorkgroupSize is refused by name; one whose workgroup memory does not fit is not taken", () => {
    expect(() => selectTopKVariant(rows(64, 65536, 2048), gpu, { policy: { radixWideWorkgroupSize: 2048 } })).toThrow(
      new SegkitUsageError("tuning.policy.radixWideWorkgroupSize: 2048 exceeds the backend's maxWorkgroupSize 1024"),
    );
    // 28 KiB of workgroup memory: a 2048-item tile's sort, 11-bit digits and a scan of 1024 words take 29952 bytes.
    const small = cpuBackend({ capabilities: { workgroupStorageBytes: 28672, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
    expect(radixWideWorkgroup({ ...topKPolicyFor(small), radixWideWorkgroupSize: 1024 }, { kMax: 2048, pick: true }, small)).toBeUndefined();
    expect(radixWideWorkgroup(topKPolicyFor(small), { kMax: 2048, pick: true }, small)?.workgroupSize).toBe(512);
    expect(radixWideWorkgroup(topKPolicyFor(gpu), { kMax: 2048, pick: true }, gpu)?.workgroupSize).toBe(512);
    expect(radixWideWorkgroup(topKPolicyFor(gpu), { kMax: 2048, pick: false }, gpu)).toBeUndefined();
  });

  it('explain() says so; the plan runs in workgroups of 512 on the CPU emulator given a GPU\'s capabilities, matching the reference', async () => {
    const backend = cpuBackend({ workers: 0, capabilities: gpu });
    const rowsN = 3;
    const cols = 65536;
    const k = 600;
    const keys = new Float32Array(rowsN * cols);
    let state = 12345;
    for (let i = 0; i < keys.length; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      keys[i] = i % 101 === 0 ? -0 : (state >>> 8) % 5000;
    }
    const keysIn = backend.upload(keys);
    const keysOut = backend.alloc('f32', rowsN * k);
    const valuesOut = backend.alloc('u32', rowsN * k);
    const plan = DeviceBatchedTopK.plan(
      { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rowsN) },
      env({ backend }),
    );
    expect(plan.explain()).toContain('workgroups of 512 invocations, tiles of 8192 keys');
    const temp = backend.alloc('u8', plan.tempStorageBytes);
    await plan.run(temp);
    const got = await backend.download(keysOut);
    const gotIndices = await backend.download(valuesOut);
    for (let r = 0; r < rowsN; r++) {
      const order = Array.from({ length: cols }, (_, i) => i).sort((a, b) => keys[r * cols + b]! - keys[r * cols + a]! || a - b);
      for (let j = 0; j < k; j++) {
        expect(gotIndices[r * k + j], `row ${r} slot ${j}`).toBe(order[j]);
        expect(Object.is(got[r * k + j], keys[r * cols + order[j]!]), `row ${r} slot ${j} key`).toBe(true);
      }
    }
    temp.destroy();
    plan.destroy();
    backend.destroy();
  });
});

describe("radix-init's sample rank: at least 3.5 spreads above a take of 512 or more, where the pick is built", () => {
  it('raises the rank of the wide takes to the least with 3.5 spreads, within the halfway rank; smaller takes, no pick and coarse steps keep theirs', () => {
    expect(radixSampleFloorMinTake).toBe(512);
    // 64x65536 (m = 2048, step 32) with the pick's tile of 4096: k = 512 32 -> 38, 1024 56 -> 59, 2048 at the halfway rank (96).
    expect(radixSample(65536, 512, 16384, 4096)!.j).toBe(38);
    expect(radixSample(65536, 512, 16384, 0)!.j).toBe(32);
    expect(radixSample(65536, 1024, 16384, 4096)!.j).toBe(59);
    expect(radixSample(65536, 2048, 16384, 4096)!.j).toBe(96);
    // The least rank with 3.5 spreads: (j step - take)^2 >= 12.25 step^2 j, and not the one before.
    for (const [take, j] of [[512, 38], [1024, 59]] as const) {
      expect(4 * (j * 32 - take) ** 2).toBeGreaterThanOrEqual(49 * 32 * 32 * j);
      expect(4 * ((j - 1) * 32 - take) ** 2).toBeLessThan(49 * 32 * 32 * (j - 1));
    }
    // Takes under 512 (the vocabulary's 50, the anchor's 256) keep their rank; so does a step past 256.
    expect(radixSample(151936, 50, 8192, 4096)!.j).toBe(11);
    expect(radixSample(262144, 256, 8192, 4096)!.j).toBe(20);
    expect(radixSampleFloorRank(9, 600, 2048, 4096)).toBe(9);
    // Never past the rank halfway to the pick's candidates: take 1900 over a tile of 2048 stops at 62.
    expect(radixSampleFloorRank(40, 1900, 32, 2048)).toBe(Math.floor((1900 + 2048) / 64));
    expect(radixSampleFloorRank(40, 2100, 32, 2048)).toBe(40);
  });
});

describe("top-k's selection sort past the tile: the segmented sort's merge or radix", () => {
  const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
  const cpu = cpuBackend({ workers: 0 }).capabilities;
  // A software adapter's: lavapipe reports few workgroup slots.
  const fewSlots = cpuBackend({ capabilities: { workgroupStorageBytes: 32768, maxWorkgroupSize: 1024, parallelism: 8 } }).capabilities;

  it("merge for selections up to the sort's mergeMaxSegmentItems on a GPU's capabilities, radix past it and on the CPU's own", () => {
    const limit = segmentedSortPolicyFor(gpu).mergeMaxSegmentItems;
    expect(limit).toBe(65536);
    const policy = topKPolicyFor(gpu);
    for (const selected of [policy.tileItems + 1, 10_000, limit]) {
      const { sort, why } = chooseSelectionSort(16, selected, policy, gpu);
      expect(sort.variant, `${selected}`).toBe('merge');
      expect(why).toContain(`merge, as the segmented sort's policy decides for segments of up to ${selected} keys: segments longer than a tile`);
    }
    // 16 selections of 10000 keys: tiles of half the top-k tile (few tiles: the sort's mergeTileFor), 5 a selection.
    const tenThousand = chooseSelectionSort(16, 10_000, policy, gpu).sort;
    expect(tenThousand).toEqual({ variant: 'merge', layout: expect.objectContaining({ tile: policy.tileItems / 2, tilesPerSegment: 5 }) });
    const past = chooseSelectionSort(16, limit + 1, policy, gpu);
    expect(past.sort.variant).toBe('radix');
    expect(past.why).toBe(`radix, as the segmented sort's policy decides for segments of up to ${limit + 1} keys: max segment size ${limit + 1} > mergeMaxSegmentItems ${limit}`);
    for (const capabilities of [cpu, fewSlots]) {
      const own = chooseSelectionSort(16, 10_000, topKPolicyFor(capabilities), capabilities);
      expect(own.sort.variant).toBe('radix');
      expect(own.why).toContain('max segment size 10000 > mergeMaxSegmentItems 1');
    }
  });

  it('radix where the merge workgroup cannot run; selectionSortVariant forces either, and is checked', () => {
    const single = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1, parallelism: 1024 } }).capabilities;
    const narrow = chooseSelectionSort(4, 10_000, topKPolicyFor(single), single);
    expect(narrow.sort.variant).toBe('radix');
    expect(narrow.why).toContain('a merge workgroup needs at least 2 invocations');
    expect(() => chooseSelectionSort(4, 10_000, { ...topKPolicyFor(single), selectionSortVariant: 'merge' }, single)).toThrow(
      new SegkitUsageError("tuning.policy.selectionSortVariant: 'merge' cannot run for these parameters: a merge workgroup needs at least 2 invocations (one searches where its range starts, one where it ends)"),
    );
    expect(chooseSelectionSort(16, 10_000, { ...topKPolicyFor(gpu), selectionSortVariant: 'radix' }, gpu)).toEqual({ sort: expect.objectContaining({ variant: 'radix' }), why: "radix, forced by tuning.policy.selectionSortVariant 'radix'" });
    expect(chooseSelectionSort(16, 10_000, { ...topKPolicyFor(cpu), selectionSortVariant: 'merge' }, cpu).sort.variant).toBe('merge');
    expect(() => selectTopKVariant(longRows, gpu, { policy: { selectionSortVariant: 'fast' as 'auto' } })).toThrow("tuning.policy.selectionSortVariant: fast is not one of 'auto', 'merge', 'radix'");
  });

  it('explain() says which selection sort runs and why; temporary storage has no radix counts with merge', () => {
    const explain = (capabilities: typeof gpu, policy = {}) => {
      const backend = cpuBackend({ workers: 0, capabilities });
      const rows = 16;
      const keysIn = backend.upload(new Float32Array(rows * 65536));
      const keysOut = backend.alloc('f32', rows * 10_000);
      const valuesOut = backend.alloc('i32', rows * 10_000);
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, valuesOut, segmentSizes: p.constant(65536), k: p.constant(10_000), selectDirection: p.constantOption('max'), numSegments: p.constant(rows) },
        env({ backend, tuning: { variant: 'radix-select', policy } }),
      );
      const text = plan.explain();
      plan.destroy();
      backend.destroy();
      return text;
    };
    const merge = explain(gpu);
    expect(merge).toContain(
      "Sorted output past the tile: each selection (up to 10000 keys) is sorted after it is selected by DeviceSegmentedSort's merge, as the segmented sort's policy decides for segments of up to 10000 keys: segments longer than a tile, max segment size 10000 <= mergeMaxSegmentItems 65536: each tile of 2048 keys sorted in workgroup memory, then 3 passes merging runs in pairs",
    );
    expect(merge).toContain('topk/sort-selection/merge-blocks[f32,max] x80 workgroups: sort the selection (up to 10000 keys) by the segmented sort\'s merge: each tile of 2048 keys in workgroup memory by (sort key, index), into buffer 0 (a selection of one tile in place, into the outputs)');
    expect(merge).toContain('topk/sort-selection/merge-pass[f32,max] x80 workgroups: sort the selection, pass 2: merge the sorted runs of 8192 keys in pairs (stable), 2048 places a workgroup, buffer 0 into the outputs, best first');
    expect(merge).not.toContain('sortCounts');
    expect(merge).not.toContain('sort-selection/histogram');
    const radix = explain(gpu, { selectionSortVariant: 'radix' });
    expect(radix).toContain("by DeviceSegmentedSort's radix, forced by tuning.policy.selectionSortVariant 'radix'");
    expect(radix).toContain('sortCounts');
    expect(radix).not.toContain('merge-pass');
    expect(explain(cpu)).toContain("by DeviceSegmentedSort's radix, as the segmented sort's policy decides for segments of up to 10000 keys: max segment size 10000 > mergeMaxSegmentItems 1");
  });
});

describe("radix-select's pick among the sampled candidates: tuning.policy.radixPick", () => {
  const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
  const policy = topKPolicyFor(gpu);

  it("'auto' builds it only where every segment the host can see samples a threshold; 'always' and 'never' force it", () => {
    const built = (sizeMin: number, kMax: number, kMin = 1, values: Partial<TopKPolicy> = {}, tiesAsFound = false) => radixPickOf({ ...policy, ...values }, { sizeMin, kMin, kMax }, tiesAsFound).built;
    // radix-init samples a segment of at least 1024 keys taking at most a quarter of them.
    expect(built(1024, 256)).toBe(true);
    expect(built(1023, 1)).toBe(false);
    expect(built(1024, 257)).toBe(false);
    expect(built(151936, 50)).toBe(true);
    expect(built(262144, 256)).toBe(true);
    expect(built(65536, 2048)).toBe(true);
    expect(built(1, 512)).toBe(false);
    expect(built(0, 512)).toBe(false);
    // Every take past the tile: the pick could never run.
    expect(built(65536, 10_000, 10_000)).toBe(false);
    expect(built(65536, 10_000, policy.tileItems)).toBe(true);
    // Samples of fewer than 256 keys (workgroups under 8 invocations) may place the threshold's rank past half the sample.
    expect(built(65536, 100, 1, { workgroupSize: 4 })).toBe(false);
    expect(built(65536, 100, 1, { workgroupSize: 8 })).toBe(true);
    for (const sizeMin of [0, 100, 1024, 65536]) {
      expect(built(sizeMin, 512, 1, { radixPick: 'always' })).toBe(true);
      expect(built(sizeMin, 512, 1, { radixPick: 'never' })).toBe(false);
      // Ties taken as found: the pick never runs, under any value.
      expect(built(sizeMin, 512, 1, { radixPick: 'always' }, true)).toBe(false);
    }
    expect(radixPickOf(policy, { sizeMin: 1, kMin: 1, kMax: 512 }, false).why).toContain('the least segment size the host knows is 1 (< 1024)');
    expect(radixPickOf(policy, { sizeMin: 2000, kMin: 1, kMax: 600 }, false).why).toContain('kMax 600 > 500 (a quarter of the least segment size 2000)');
  });

  it("'auto' mirrors radix-init's condition: from 1024 keys and a take of at most a quarter, every sample of 256 keys or more finds a threshold", () => {
    // radixSample's last condition (the threshold's rank within half the sample) follows from the
    // other two at the largest take, which gives the largest rank (radixPickOf).
    for (const workgroupSize of [8, 9, 16, 64, 100, 256, 1024]) {
      const cap = radixSampleCap(workgroupSize);
      expect(cap).toBeGreaterThanOrEqual(256);
      for (let size = 1024; size <= 2 ** 21; size++) {
        if (radixSample(size, Math.floor(size / 4), cap) === undefined) expect.unreachable(`size ${size}, cap ${cap}: no threshold`);
      }
    }
    // Where 'auto' builds the pick, every segment and take it allows samples.
    for (const [sizeMin, kMax] of [[1024, 256], [5000, 1250], [65536, 2048]] as const) {
      expect(radixPickOf(policy, { sizeMin, kMin: 1, kMax }, false).built).toBe(true);
      for (const size of [sizeMin, sizeMin + 1, sizeMin * 3 + 7]) for (const take of [1, kMax]) expect(radixSample(size, take, radixSampleCap(policy.workgroupSize))).toBeDefined();
    }
  });

  it('a value other than the three is refused, naming tuning.policy.radixPick', () => {
    const longRows = { k: { min: 1, max: 512 }, segmentSize: { min: 1, max: 65536 }, segmentSizeDeviceBounds: false };
    expect(() => selectTopKVariant(longRows, gpu, { policy: { radixPick: 'sometimes' as 'auto' } })).toThrow(new SegkitUsageError("tuning.policy.radixPick: sometimes is not one of 'auto', 'always', 'never'"));
    expect(() => selectTopKVariant(longRows, gpu, { policy: { radixPick: true as unknown as 'auto' } })).toThrow("tuning.policy.radixPick: true is not one of 'auto', 'always', 'never'");
    const backend = cpuBackend({ workers: 0 });
    const keysIn = backend.upload(new Float32Array(4096));
    const keysOut = backend.alloc('f32', 64);
    // Under any variant: the policy is checked whatever the selector chooses.
    for (const variant of [undefined, 'radix-select'] as const) {
      expect(() =>
        DeviceBatchedTopK.plan(
          { keysIn, keysOut, segmentSizes: p.constant(4096), k: p.constant(64), selectDirection: p.constantOption('max'), numSegments: p.constant(1) },
          env({ backend, tuning: { ...(variant === undefined ? {} : { variant }), policy: { radixPick: 'yes' as 'auto' } } }),
        ),
      ).toThrow(new SegkitUsageError("tuning.policy.radixPick: yes is not one of 'auto', 'always', 'never'"));
    }
    backend.destroy();
  });

  it("explain() says whether filter pass 0's pick is built and why: not for ragged device-only sizes, for uniform long rows", () => {
    const backend = cpuBackend({ workers: 0, capabilities: gpu });
    const rows = 8;
    const cols = 65536;
    const keysIn = backend.upload(new Float32Array(rows * cols));
    const keysOut = backend.alloc('f32', rows * 1024);
    const deviceSizes = backend.upload(new Uint32Array(rows).fill(cols));
    const filter0 = (segmentSizes: ReturnType<typeof p.uniform> | ReturnType<typeof p.perSegment>, radixPick?: TopKPolicy['radixPick'], k = 512) => {
      const plan = DeviceBatchedTopK.plan(
        { keysIn, keysOut, segmentSizes, segmentStride: p.constant(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) },
        env({ backend, tuning: { variant: 'radix-select', ...(radixPick === undefined ? {} : { policy: { radixPick } }) } }),
      );
      const line = plan.explain().split('\n').find((l) => l.includes('/filter[') && l.includes('digit 0'))!;
      plan.destroy();
      return line;
    };
    // Ragged rows with device-only sizes: the host knows only their static bounds.
    const ragged = filter0(p.perSegment(deviceSizes, { min: 1, max: cols }));
    expect(ragged).toContain("the pick is not built: radixPick 'auto' builds it only where every segment samples a threshold, and the least segment size the host knows is 1 (< 1024)");
    expect(ragged).not.toContain('the best picked among them');
    expect(filter0(p.perSegment(deviceSizes, { min: 1, max: cols }), 'always')).toContain("the best picked among them in one workgroup, by a radix select or a sort: policy.ts radixCandidateShortcut; the pick is built: tuning.policy.radixPick 'always'");
    // Static bounds that promise long rows are enough.
    expect(filter0(p.perSegment(deviceSizes, { min: 4096, max: cols }))).toContain("the pick is built: radixPick 'auto', and every segment samples a threshold: segments of at least 4096 keys (>= 1024), kMax 512 <= 1024 (a quarter of 4096)");
    // Host sizes: their true range.
    const hostSizes = [cols, 3000, cols, cols, cols, cols, cols, cols];
    expect(filter0(p.perSegment(hostSizes, { min: 0, max: cols }))).toContain('the pick is built: radixPick \'auto\', and every segment samples a threshold: segments of at least 3000 keys');
    expect(filter0(p.perSegment(hostSizes, { min: 0, max: cols }), undefined, 751)).toContain('the pick is not built: radixPick \'auto\' builds it only where every segment samples a threshold, and kMax 751 > 750');
    // Uniform long rows: every row samples.
    expect(filter0(p.uniform(cols))).toContain("the pick is built: radixPick 'auto', and every segment samples a threshold: segments of at least 65536 keys (>= 1024), kMax 512 <= 16384 (a quarter of 65536)");
    expect(filter0(p.uniform(cols), 'never')).toContain("(no pick among the sampled candidates, which digit 0 filters as any other: the pick is not built: tuning.policy.radixPick 'never')");
    backend.destroy();
  });
});

describe("the workgroup scans within subgroups: scanSubgroupWidthFor", () => {
  it('takes subgroups of one power-of-two width from 4 to 128 that divides every workgroup size, else none', () => {
    const sizes = [256, 1024];
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 32 }, sizes)).toBe(32);
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 8 }, sizes)).toBe(8);
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 64 }, sizes)).toBe(64);
    // No subgroups, widths that vary (no fixed size), widths out of range or not a power of two.
    expect(scanSubgroupWidthFor({ subgroups: false, fixedSubgroupSize: 32 }, sizes)).toBeUndefined();
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: undefined }, sizes)).toBeUndefined();
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 2 }, sizes)).toBeUndefined();
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 256 }, sizes)).toBeUndefined();
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 24 }, [48, 96])).toBeUndefined();
    // A width that does not divide one of the workgroups (a tuned workgroup of 16).
    expect(scanSubgroupWidthFor({ subgroups: true, fixedSubgroupSize: 32 }, [16, 1024])).toBeUndefined();
  });
});
