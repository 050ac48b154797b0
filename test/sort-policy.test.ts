import { describe, expect, it } from 'vitest';
import { cpuBackend } from '../src/index.js';
import { segmentedSortPolicyFor } from '../src/algorithms/segmented-sort/policy.js';
import { tilesPerSegment } from '../src/algorithms/segmented-sort/problem.js';

/* The radix tile rule: tiles of radixTileItems, lengthened up to four times while the batch keeps radixMinTiles tiles. */

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
