import { describe, expect, it } from 'vitest';
import { DeviceSegmentedSort, cpuBackend, env, p } from '../src/index.js';
import { segmentedSortPolicyFor, selectSegmentedSortVariant } from '../src/algorithms/segmented-sort/policy.js';
import { mergePassWorkgroupBytes, mergeTileFor, singleTileShape, tilesPerSegment } from '../src/algorithms/segmented-sort/problem.js';
import { tileRadixBytes, tileRadixFor, tileRadixParts } from '../src/algorithms/segmented-sort/webgpu/tile-radix.js';

/*
 * The radix tile rule: tiles of radixTileItems, lengthened up to four times while the batch keeps
 * radixMinTiles tiles. Merge's tile rule and its workgroup memory.
 */

const gpu = cpuBackend({ capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } }).capabilities;
const policy = segmentedSortPolicyFor(gpu);
const rows = (maxSegments: number, maxSegmentSize: number) => ({ maxSegments, maxSegmentSize });

describe('sort policy: radix tiles', () => {
  it('one 16M-key segment gets 512 tiles of 32768 keys; 64 x 32768 keeps tiles of 8192', () => {
    expect(policy.radixTileItems).toBe(8192);
    expect(policy.radixMinTiles).toBe(512);
    expect(tilesPerSegment(rows(1, 1 << 24), policy)).toBe(512);
    expect(tilesPerSegment(rows(64, 32768), policy)).toBe(4);
    // 2 * 4096 tiles at 8192 items, 2048 at 16384, 1024 at 32768: four times as long at most.
    expect(tilesPerSegment(rows(2, 1 << 25), policy)).toBe(1024);
    // 1024 tiles at 8192 keys and 512 at 16384: lengthened once.
    expect(tilesPerSegment(rows(1, 1 << 23), policy)).toBe(512);
    expect(tilesPerSegment(rows(1, (1 << 23) + 1), policy)).toBe(513);
  });

  it('radixMaxTiles still caps the tiles, and radixMinTiles above the batch leaves radixTileItems', () => {
    expect(tilesPerSegment(rows(1, 1 << 24), { ...policy, radixMaxTiles: 100 })).toBe(100);
    expect(tilesPerSegment(rows(1, 1 << 24), { ...policy, radixMinTiles: 1 << 30 })).toBe(2048);
    const { radixMinTiles: _, ...leftOut } = policy;
    expect(tilesPerSegment(rows(1, 1 << 24), leftOut)).toBe(512);
  });
});

describe('sort policy: merge', () => {
  it('merges up to mergeMaxSegmentItems on a GPU, never by itself on the CPU emulator', () => {
    expect(selectSegmentedSortVariant({ segmentSize: { min: 0, max: 65536 }, segments: 4 }, gpu).variant).toBe('merge');
    expect(selectSegmentedSortVariant({ segmentSize: { min: 0, max: 65537 }, segments: 4 }, gpu).variant).toBe('radix');
    expect(selectSegmentedSortVariant({ segmentSize: { min: 0, max: 65536 }, segments: 4 }, cpuBackend({ workers: 0 }).capabilities).variant).not.toBe('merge');
  });

  it('gives radix the segments merge would take three passes or more in batches past mergeLongMaxItems keys', () => {
    const pick = (rowsOf: number, cols: number, tuning?: Parameters<typeof selectSegmentedSortVariant>[2], min = cols) => selectSegmentedSortVariant({ segmentSize: { min, max: cols }, segments: rowsOf }, gpu, tuning);
    expect(segmentedSortPolicyFor(gpu).mergeLongMaxItems).toBe(524288);
    // Three or four merge passes over 1M keys or more: radix (not workgroup-radix, even past 80 segments).
    for (const [r, c] of [[32, 32768], [64, 32768], [256, 32768], [16, 65536], [32, 65536]] as const) expect(pick(r, c).variant, `${r}x${c}`).toBe('radix');
    expect(pick(64, 32768).why).toContain('merge would take at least 3 passes (>= 3) in a batch of at least 2097152 keys (> mergeLongMaxItems 524288)');
    // Ragged (the least size from the host) or unknown least sizes: merge.
    for (const min of [0, 1, 16384]) expect(pick(256, 65536, undefined, min).variant, `256x(${min}..65536)`).toBe('merge');
    expect(pick(256, 65536, undefined, 16385).variant).toBe('radix');
    expect(pick(64, 32768).verdicts.find((v) => v.variant === 'merge')!.reason).toContain('> mergeLongMaxItems 524288');
    // Up to 512K keys, or two passes or fewer: merge.
    for (const [r, c] of [[16, 32768], [1, 65536], [4, 65536], [128, 16384], [1024, 8192]] as const) expect(pick(r, c).variant, `${r}x${c}`).toBe('merge');
    expect(pick(64, 32768, { policy: { mergeLongMaxItems: 1 << 30 } }).variant).toBe('merge');
    expect(pick(64, 32768, { variant: 'merge' }).variant).toBe('merge');
    expect(() => pick(64, 32768, { policy: { mergeLongMaxItems: 0 } })).toThrow('tuning.policy.mergeLongMaxItems: 0 is not a positive integer');
  });

  it('tiles of half tileItems below mergeMinTiles tiles, while half still gives each invocation a key', () => {
    expect(policy.tileItems).toBe(4096);
    expect(mergeTileFor(rows(1, 65536), policy)).toBe(2048);
    expect(mergeTileFor(rows(31, 16384), policy)).toBe(2048);
    expect(mergeTileFor(rows(32, 16384), policy)).toBe(4096);
    expect(mergeTileFor(rows(64, 32768), policy)).toBe(4096);
    expect(mergeTileFor(rows(1, 65536), { ...policy, workgroupSize: 4096 })).toBe(4096);
  });

  it("merge needs its workgroup memory: the CPU emulator given a GPU's capabilities refuses it where it would not fit", () => {
    // 36 KiB: a tile of 4096 keys fits; a merge workgroup of 1024 invocations over it does not.
    const capabilities = { workgroupStorageBytes: 36864, maxWorkgroupSize: 1024, parallelism: 1024 };
    const tight = cpuBackend({ capabilities, workers: 0 });
    expect(segmentedSortPolicyFor(tight.capabilities).tileItems).toBe(4096);
    const bytes = mergePassWorkgroupBytes(4096, 1024, true);
    expect(bytes).toBeGreaterThan(36864);
    expect(mergePassWorkgroupBytes(4096, 512, true)).toBeLessThanOrEqual(36864);
    // 64 segments of 10000 keys make 192 tiles of 4096, so merge keeps whole tiles.
    const keysIn = tight.alloc('f32', 640000);
    const keysOut = tight.alloc('f32', 640000);
    const args = { keysIn, keysOut, segmentSizes: p.constant(10000), numSegments: p.constant(64), order: p.constantOption('ascending') } as const;
    expect(() => DeviceSegmentedSort.plan(args, env({ backend: tight, tuning: { variant: 'merge', policy: { workgroupSize: 1024 } } }))).toThrow(
      `tuning.variant: 'merge' cannot run for these parameters: a merge workgroup of 1024 invocations over tiles of 4096 keys needs ${bytes} bytes of workgroup memory; the backend has 36864`,
    );
    // Not forced: the selector takes a radix variant instead; with 512 invocations merge fits.
    expect(DeviceSegmentedSort.plan(args, env({ backend: tight, tuning: { policy: { workgroupSize: 1024 } } })).variant).toBe('radix');
    expect(DeviceSegmentedSort.plan(args, env({ backend: tight })).variant).toBe('merge');
    // One segment: tiles of 2048 keys, whose merge workgroup of 1024 invocations fits.
    const one = { ...args, segmentSizes: p.constant(10000), numSegments: p.constant(1) };
    expect(DeviceSegmentedSort.plan(one, env({ backend: tight, tuning: { variant: 'merge', policy: { workgroupSize: 1024 } } })).variant).toBe('merge');
    tight.destroy();
  });
});

describe('sort policy: single-tile by radix ranks (tileRadixFor)', () => {
  const h200 = { maxWorkgroupSize: 1024, workgroupStorageBytes: 49152, subgroupSize: 32, maxStorageBufferBytes: 2 ** 31, maxBufferBytes: 2 ** 31, maxWorkgroupsPerDimension: 65535, parallelism: 2112 };
  const policy = segmentedSortPolicyFor(h200);
  const shape = (max: number) => singleTileShape(max, policy);
  const h200Memory = { maxWorkgroupSize: 1024, workgroupStorageBytes: 49152 };
  it('takes tiles of 8 keys a lane, one segment a workgroup of its own size (128 to the backend\'s largest), every segment past half the tile, subgroups of one width from 8 to 32', () => {
    // 4096-key tiles on 512 invocations: 256x4096 (H200: 0.0436 ms against the network's 0.0463).
    expect(tileRadixFor({ shape: shape(4096), leastSegmentSize: 4096 }, h200Memory, 32)).toEqual({ subgroupSize: 32, items: 8, workgroupSize: 512 });
    expect(tileRadixFor({ shape: shape(4096), leastSegmentSize: 2049 }, h200Memory, 32)).toEqual({ subgroupSize: 32, items: 8, workgroupSize: 512 });
    // 2048- and 1024-key tiles, which the policy's 512 invocations hold two and four of (the
    // network's layout), on 256 and 128 invocations of their own: 512x2048 0.0412 ms against 0.0445.
    expect(shape(2048).segmentsPerWorkgroup).toBe(2);
    expect(tileRadixFor({ shape: shape(2048), leastSegmentSize: 2048 }, h200Memory, 32)).toEqual({ subgroupSize: 32, items: 8, workgroupSize: 256 });
    expect(shape(1024).segmentsPerWorkgroup).toBe(4);
    expect(tileRadixFor({ shape: shape(1024), leastSegmentSize: 513 }, h200Memory, 32)).toEqual({ subgroupSize: 32, items: 8, workgroupSize: 128 });
    // A segment of half the tile or less (ragged rows): the network.
    expect(tileRadixFor({ shape: shape(4096), leastSegmentSize: 2048 }, h200Memory, 32)).toBeUndefined();
    expect(tileRadixFor({ shape: shape(1024), leastSegmentSize: 512 }, h200Memory, 32)).toBeUndefined();
    // Tiles of 512 keys (64 invocations: the digit scan takes 128), and tiles past the backend's workgroup.
    expect(tileRadixFor({ shape: shape(512), leastSegmentSize: 512 }, h200Memory, 32)).toBeUndefined();
    expect(tileRadixFor({ shape: { tile: 8192, itemsPerInvocation: 8, segmentsPerWorkgroup: 1 }, leastSegmentSize: 8192 }, { maxWorkgroupSize: 512, workgroupStorageBytes: 1 << 20 }, 32)).toBeUndefined();
    expect(tileRadixFor({ shape: { tile: 8192, itemsPerInvocation: 8, segmentsPerWorkgroup: 1 }, leastSegmentSize: 8192 }, { maxWorkgroupSize: 1024, workgroupStorageBytes: 1 << 20 }, 32)).toEqual({ subgroupSize: 32, items: 8, workgroupSize: 1024 });
    // No fixed width, widths out of range, or a width that does not divide the workgroup.
    for (const width of [undefined, 4, 64, 24]) expect(tileRadixFor({ shape: shape(4096), leastSegmentSize: 4096 }, h200Memory, width)).toBeUndefined();
    // The arrays must fit: 4096 keys and indices, 16 subgroups' counts (43,152 bytes), not in 32 KiB;
    // 1024 keys with subgroups of 8 (17,808 bytes) do.
    expect(tileRadixBytes(512, 32)).toBe(43152);
    expect(tileRadixFor({ shape: shape(4096), leastSegmentSize: 4096 }, { maxWorkgroupSize: 1024, workgroupStorageBytes: 32768 }, 32)).toBeUndefined();
    expect(tileRadixBytes(128, 8)).toBe(17808);
  });
  it('counts the workgroup memory the program declares (each variable rounded up to 16 bytes, as WebGPU counts it)', () => {
    for (const [workgroupSize, subgroupSize] of [[512, 32], [128, 8], [256, 16], [1024, 32]] as const) {
      const { declarations } = tileRadixParts({ radix: { subgroupSize, items: 8, workgroupSize }, valueMode: 'payload' });
      const sizes = [...declarations.matchAll(/var<workgroup> \w+: (?:array<(?:u32|atomic<u32>), (\d+)>|vec3<u32>);/g)].map((m) => Math.ceil((m[1] === undefined ? 12 : Number(m[1]) * 4) / 16) * 16);
      expect(sizes.length).toBe((declarations.match(/var<workgroup>/g) ?? []).length);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(tileRadixBytes(workgroupSize, subgroupSize));
    }
  });
  it("explain() names the radix ranks where the capabilities allow them", () => {
    const cpu = cpuBackend({ capabilities: h200, workers: 0 });
    try {
      const gpuLike = cpu;
      const keys = cpu.upload(new Float32Array(256 * 4096));
      const out = cpu.alloc('f32', 256 * 4096);
      const plan = DeviceSegmentedSort.plan({ keysIn: keys, keysOut: out, segmentSizes: p.constant(4096), numSegments: p.constant(256), order: p.constantOption('ascending') }, env({ backend: gpuLike }));
      expect(plan.explain()).toContain('by radix ranks in workgroup memory instead of the network');
      // 512 rows of 2048: on 256 invocations of their own, where the policy's 512 hold two rows.
      const rows2048 = DeviceSegmentedSort.plan({ keysIn: keys, keysOut: out, segmentSizes: p.constant(2048), numSegments: p.constant(512), order: p.constantOption('ascending') }, env({ backend: gpuLike }));
      expect(rows2048.explain()).toContain('2 segments per workgroup');
      expect(rows2048.explain()).toContain('one segment a workgroup of 256 invocations');
      // Ragged rows (the least size half the tile or less) keep the network.
      const sizes = Array.from({ length: 256 }, (_, i) => (i % 2 === 0 ? 4096 : 10));
      const ragged = DeviceSegmentedSort.plan({ keysIn: keys, keysOut: out, segmentSizes: p.perSegment(sizes, { min: 1, max: 4096 }), numSegments: p.constant(256), order: p.constantOption('ascending') }, env({ backend: gpuLike }));
      expect(ragged.explain()).not.toContain('radix ranks');
    } finally {
      cpu.destroy();
    }
  });
});
