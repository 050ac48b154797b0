import { describe, expect, it } from 'vitest';
import { DeviceSegmentedScan, type ScanPlan, type ScanPolicy, SegkitRangeError, SegkitUsageError, cpuBackend, env, p, scanPolicyFor, selectScanVariant } from '../src/index.js';

/*
 * DeviceSegmentedScan's host side: the runtime twins of the compile-time rules (same words), the
 * policy selector, explain(), the environment API's plan reuse, and the shorthands.
 */
const backend = cpuBackend({ workers: 0 });
const valuesIn = backend.upload(new Float32Array(2560).map((_, i) => i % 5));
const valuesOut = backend.alloc('f32', 2560);
const base = { valuesIn, valuesOut, segmentSizes: p.constant(256), numSegments: p.uniform(10), op: p.constantOption('sum'), mode: p.constantOption('inclusive') };
const planOn = DeviceSegmentedScan.plan as unknown as (args: unknown, e?: unknown) => ScanPlan;
const plan = (args: unknown, e: unknown = env({ backend })) => planOn(args, e);

function rangeError(fn: () => unknown): SegkitRangeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SegkitRangeError);
    return error as SegkitRangeError;
  }
  throw new Error('expected a SegkitRangeError');
}

describe('runtime twins of the scan argument rules', () => {
  it('an option outside the scan operators or modes', () => {
    expect(rangeError(() => plan({ ...base, op: p.constantOption('product') })).message).toBe("op: option 'product' is not one of the options ['sum', 'min', 'max']");
    expect(rangeError(() => plan({ ...base, mode: p.uniformOption('inclusive' as string, ['inclusive', 'reverse']) })).message).toBe(
      "mode: option 'reverse' is not one of the options ['inclusive', 'exclusive']",
    );
  });
  it("an initial value outside the values' type", () => {
    const u32In = backend.alloc('u32', 10);
    const u32Out = backend.alloc('u32', 10);
    const ints = { ...base, valuesIn: u32In, valuesOut: u32Out, segmentSizes: p.constant(1) };
    expect(rangeError(() => plan({ ...ints, initialValue: p.constant(-1) })).message).toBe('initialValue: -1 is outside the static bounds [0, 4294967295]');
    expect(rangeError(() => plan({ ...ints, initialValue: p.uniform(-3, { min: -5, max: -1 }) })).message).toBe(
      'initialValue: bounds [-5, -1] do not intersect the guarantee domain [0, 4294967295]',
    );
    u32In.destroy();
    u32Out.destroy();
  });
  it('a kind the parameter does not take, a guarantee the bounds miss', () => {
    expect(() => plan({ ...base, numSegments: p.perSegment([1]) })).toThrow('numSegments: must be p.constant or p.uniform; got a perSegment parameter');
    expect(rangeError(() => plan({ ...base, segmentSizes: p.uniform(300, { min: 256, max: 512 }) }, env({ backend, guarantees: { maxSegmentSize: 100 } }))).message).toBe(
      'segmentSizes: bounds [256, 512] do not intersect the guarantee maxSegmentSize [0, 100]',
    );
  });
  it('a device-only initial value with bounds the device cannot check', () => {
    const initial = backend.upload(new Float32Array([1]));
    expect(() => plan({ ...base, initialValue: p.uniform(initial, { min: 0, max: 10 }) })).toThrow(
      "initialValue: bounds [0, 10] on a device-only initial value cannot be checked on the device; leave them out (the values' whole range)",
    );
    expect(plan({ ...base, initialValue: p.uniform(initial) }).variant).toBe('workgroup');
    initial.destroy();
  });
  it('unknown fields, and op or mode given to a shorthand', async () => {
    expect(() => plan({ ...base, segmentStrid: p.constant(256) })).toThrow(SegkitUsageError);
    await expect(DeviceSegmentedScan.inclusiveSum({ ...base, op: p.constantOption('max') } as never, env({ backend }))).rejects.toThrow(
      "args: unknown field 'op' (inclusiveSum fixes op and mode)",
    );
  });
});

describe('the policy selector', () => {
  const cpu = backend.capabilities;
  const gpuLike = { ...cpu, parallelism: 1024 };
  it('picks thread for tiny segments, workgroup for many or short ones, multi-workgroup for few long ones', () => {
    expect(selectScanVariant({ segmentSize: { min: 0, max: 16 }, maxSegments: 100000 }, gpuLike).variant).toBe('thread');
    expect(selectScanVariant({ segmentSize: { min: 0, max: 17 }, maxSegments: 100000 }, gpuLike).variant).toBe('workgroup');
    expect(selectScanVariant({ segmentSize: { min: 0, max: 1 << 24 }, maxSegments: 1 }, gpuLike).variant).toBe('multi-workgroup');
    expect(selectScanVariant({ segmentSize: { min: 0, max: 1 << 24 }, maxSegments: 4096 }, gpuLike).variant).toBe('workgroup');
    expect(selectScanVariant({ segmentSize: { min: 0, max: 4096 }, maxSegments: 1 }, gpuLike).variant).toBe('workgroup');
    // One thread on the CPU: one pass over a long segment beats two.
    expect(selectScanVariant({ segmentSize: { min: 0, max: 1 << 24 }, maxSegments: 1 }, cpu).variant).toBe('workgroup');
  });
  it('a forced variant and policy values win; bad ones are refused by name', () => {
    const forced = selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { variant: 'multi-workgroup' });
    expect(forced.variant).toBe('multi-workgroup');
    expect(forced.why).toMatch(/^forced by tuning/);
    expect(selectScanVariant({ segmentSize: { min: 0, max: 100 }, maxSegments: 1 }, cpu, { policy: { threadMaxItems: 100 } }).variant).toBe('thread');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { variant: 'warp' as never })).toThrow(
      "tuning.variant: 'warp' is not a scan variant; expected 'thread', 'workgroup', 'multi-workgroup'",
    );
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { workgroupSize: 8 } })).toThrow(
      'tuning.policy.workgroupSize: 8 is below 16, the invocations a tile',
    );
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { tile: 4 } as never })).toThrow('tuning.policy.tile: not a policy value of this algorithm');
    expect(scanPolicyFor(cpu)).toEqual({ workgroupSize: 256, threadMaxItems: 16, workgroupMaxItems: 4096, spineCarries: 'walk', spineCarryTiles: 9, spineWorkgroupMaxTiles: 14336, tileWorkgroups: 4 * cpu.parallelism, loadWords: 4, tilesPerStep: 2, scanTilesPerStep: 1, storeWords: 4, passes: 2, lookbackPolls: 64, singlePassTiles: 8 });
    // Twice the parallelism on a GPU-class backend (at least 128 slots), four times on the CPU emulator.
    expect(scanPolicyFor(gpuLike).tileWorkgroups).toBe(2048);
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { tileWorkgroups: 0 } })).toThrow('tuning.policy.tileWorkgroups');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { loadWords: 2 } })).toThrow('tuning.policy.loadWords: 2 is not 1 or 4 (words per load)');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { storeWords: 2 } })).toThrow('tuning.policy.storeWords: 2 is not 1 or 4 (words per store)');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { tilesPerStep: 3 } })).toThrow('tuning.policy.tilesPerStep: 3 is not 1, 2 or 4 (full tiles a step)');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { scanTilesPerStep: 8 } })).toThrow('tuning.policy.scanTilesPerStep: 8 is not 1, 2 or 4 (full tiles a step)');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { passes: 3 } })).toThrow('tuning.policy.passes: 3 is not 1 or 2 (passes over the items)');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { singlePassTiles: 3 } })).toThrow(
      'tuning.policy.singlePassTiles: 3 is not 1, 2, 4 or 8 (a workgroup\'s tiles lie in one lane of the tile totals)',
    );
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { lookbackWindow: 32 } as never })).toThrow('tuning.policy.lookbackWindow: not a policy value of this algorithm');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { lookbackPolls: 0 } })).toThrow('tuning.policy.lookbackPolls: 0 is not a positive integer');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { spineCarries: 'tree' as never } })).toThrow("tuning.policy.spineCarries: tree is not 'walk' or 'parallel'");
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { spineCarryTiles: 10 } })).toThrow('tuning.policy.spineCarryTiles: 10 exceeds 9');
    expect(() => selectScanVariant({ segmentSize: { min: 0, max: 8 }, maxSegments: 1 }, cpu, { policy: { spineCarryTiles: 0 } })).toThrow('tuning.policy.spineCarryTiles: 0 is not a positive integer');
  });
  it('the host bounds that pick the variant: the stride, the values, the static minimum', () => {
    const strided = plan({ ...base, segmentSizes: p.perSegment([3, 5], { max: 1 << 20 }), segmentStride: p.constant(8), numSegments: p.constant(2) });
    expect(strided.variant).toBe('thread');
    // Sizes of at least 100 cannot fit 16 values: no segment can exist, but the choice never undercuts the static minimum.
    const tiny = backend.upload(new Float32Array(16));
    const tinyOut = backend.alloc('f32', 16);
    expect(plan({ ...base, valuesIn: tiny, valuesOut: tinyOut, segmentSizes: p.uniform(100, { min: 100, max: 200 }), numSegments: p.constant(0) }).variant).toBe('workgroup');
    tiny.destroy();
    tinyOut.destroy();
  });
});

describe('explain() and temporary storage', () => {
  it('names the facts, the choice, the pruned variants, the temp layout and the launches', () => {
    const args = { ...base, segmentSizes: p.perSegment(new Array(10).fill(256), { max: 1 << 20 }), op: p.perSegmentOption(new Array(10).fill('max'), ['sum', 'max']), initialValue: p.constant(0) };
    const text = plan(args, env({ backend, tuning: { variant: 'multi-workgroup', policy: { passes: 2 } } })).explain();
    expect(text).toContain('multi-workgroup path: reduce-then-scan: policy passes 2');
    expect(text).toContain('DeviceSegmentedScan on cpu: 10 segments, f32 values, max segment size 256');
    expect(text).toContain('segmentSizes: perSegment, static bounds [0, 1048576], host runtime bounds [256, 256]');
    expect(text).toContain('op: perSegment, options [sum, max], value max');
    expect(text).toContain('initialValue: constant, value 0, static bounds [0, 0]');
    expect(text).toContain('Chosen variant: multi-workgroup (forced by tuning');
    expect(text).toContain('thread: pruned (max segment size 256 > threadMaxItems 16)');
    expect(text).toContain('tileTotals: 40 bytes at offset 256');
    expect(text).toMatch(/Launches \(4\):\n {2}1\. scan\/segment-offsets x1 workgroups/);
    expect(text).toContain('scan/multi-workgroup/tile-reduce[f32,op=per-segment,inclusive,init] x10 workgroups: 1 workgroup per segment');
    // The single pass where asked for (passes 1), its counter and words (1 + 2 x 10 segments x (1 tile, 1 group, 1 unit), zeroed by the executor), one launch after the offsets.
    const single = plan(args, env({ backend, tuning: { variant: 'multi-workgroup', policy: { passes: 1 } } })).explain();
    expect(single).toContain("multi-workgroup path: single pass (policy passes 1): each tile's carry put together in the canonical order from the totals other tiles publish");
    expect(single).toContain('lookback: 244 bytes at offset 256 (zeroed at the start of every run)');
    expect(single).toMatch(/Launches \(2\):\n {2}1\. scan\/segment-offsets x1 workgroups/);
    expect(single).toContain('scan/multi-workgroup/single-pass[f32,op=per-segment,inclusive,init] x10 workgroups: 1 workgroup per segment of 8 tiles, taken in the order workgroups start: each publishes its tiles\' totals');
  });
  it('no temporary storage where none is needed; the tile totals per segment where segments split', () => {
    expect(plan(base).tempStorageBytes).toBe(0);
    const long = plan({ ...base, segmentSizes: p.constant(2560), numSegments: p.constant(1) }, env({ backend, tuning: { variant: 'multi-workgroup' } }));
    expect(long.tempStorageBytes).toBe(256);
    expect(long.launches.map((l) => l.kernel)).toEqual(['tile-reduce', 'spine-scan', 'tile-scan']);
  });
  it('segments of more than 2048 tiles: the carries in parallel (spine-lanes), from spine-top past spineCarryTiles, or walked; the slots of each', () => {
    const items = 12_582_912; // 3 x 2048 x 2048
    const values = backend.alloc('f32', items);
    const valuesOut = backend.alloc('f32', items);
    const long = (policy: Partial<ScanPolicy>) => plan({ ...base, valuesIn: values, valuesOut, segmentSizes: p.constant(items), numSegments: p.constant(1) }, env({ backend, tuning: { variant: 'multi-workgroup', policy } }));
    const kernels = (q: ScanPlan) => q.launches.map((l) => l.kernel);
    // 6144 tiles, 3 tiles of 2048 tile totals.
    const parallel = long({ spineCarries: 'parallel' });
    expect(kernels(parallel)).toEqual(['tile-reduce', 'spine-lanes', 'tile-scan']);
    const text = parallel.explain();
    expect(text).toContain('tileTotals: 24576 bytes');
    expect(text).toContain('spineTotals: 12 bytes');
    expect(text).toContain('spineLaneCarries: 3072 bytes');
    expect(text).toContain('scan/multi-workgroup/spine-lanes[f32,sum,inclusive] x3 workgroups: 3 workgroups per segment, all at once');
    expect(text).toContain("the totals of the 2048 tile totals before");
    expect(kernels(long({ spineCarries: 'parallel', spineCarryTiles: 3 }))).toEqual(['tile-reduce', 'spine-lanes', 'tile-scan']);
    const top = long({ spineCarries: 'parallel', spineCarryTiles: 2 });
    expect(kernels(top)).toEqual(['tile-reduce', 'spine-lanes', 'spine-top', 'tile-scan']);
    expect(top.explain()).toContain('the carry into its 2048 tile totals');
    const walked = long({});
    expect(kernels(walked)).toEqual(['tile-reduce', 'spine-walk', 'tile-scan']);
    expect(walked.explain()).not.toContain('spineTotals');
    expect(kernels(long({ spineCarries: 'walk', spineWorkgroupMaxTiles: 6143 }))).toEqual(['tile-reduce', 'spine-reduce', 'spine-top', 'spine-scan', 'tile-scan']);
    values.destroy();
    valuesOut.destroy();
  });
});

describe('the environment API', () => {
  const e = env({ backend });
  const small = backend.upload(new Float32Array([1, 2, 3, 4, 5, 6]));
  const out = backend.alloc('f32', 6);

  it('shorthands fix the operator and mode', async () => {
    const args = { valuesIn: small, valuesOut: out, segmentSizes: p.constant(3), numSegments: p.constant(2) };
    await DeviceSegmentedScan.inclusiveSum(args, e);
    expect([...(await backend.download(out))]).toEqual([1, 3, 6, 4, 9, 15]);
    await DeviceSegmentedScan.exclusiveSum({ ...args, initialValue: p.constant(10) }, e);
    expect([...(await backend.download(out))]).toEqual([10, 11, 13, 10, 14, 19]);
    await DeviceSegmentedScan.inclusiveMin({ ...args, valuesIn: backend.upload(new Float32Array([3, 1, 2, 5, 6, 4])) }, e);
    expect([...(await backend.download(out))]).toEqual([3, 1, 1, 5, 5, 4]);
    await DeviceSegmentedScan.inclusiveMax({ ...args, valuesIn: backend.upload(new Float32Array([3, 1, 2, 5, 6, 4])) }, e);
    expect([...(await backend.download(out))]).toEqual([3, 3, 3, 5, 6, 6]);
  });

  it('a host per-segment array changed between calls is checked again', async () => {
    const ops: ('sum' | 'max')[] = ['sum', 'max'];
    const args = { valuesIn: small, valuesOut: out, segmentSizes: p.constant(3), numSegments: p.constant(2), op: p.perSegmentOption(ops, ['sum', 'max']), mode: p.constantOption('inclusive') };
    await DeviceSegmentedScan.scan(args, e);
    expect([...(await backend.download(out))]).toEqual([1, 3, 6, 4, 5, 6]);
    ops[1] = 'min' as 'max';
    await expect(DeviceSegmentedScan.scan(args, e)).rejects.toThrow("op[1]: option 'min' is not one of the options ['sum', 'max']");
    ops[1] = 'sum';
    await DeviceSegmentedScan.scan(args, e);
    expect([...(await backend.download(out))]).toEqual([1, 3, 6, 4, 9, 15]);
  });
});
