import { describe, expect, it } from 'vitest';
import { DeviceBatchedTopK, SegkitRangeError, cpuBackend, env, p } from '../src/index.js';

/*
 * The runtime twins of the compile-time rules on DeviceBatchedTopK's arguments: the same words,
 * thrown as SegkitRangeError before any device work, for values the compiler could not see.
 */
const backend = cpuBackend();
const keysIn = backend.upload(new Float32Array(2560));
const keysOut = backend.alloc('f32', 640);
const base = { keysIn, keysOut, segmentSizes: p.constant(256), selectDirection: p.constantOption('max'), numSegments: p.uniform(10) };
const plan = DeviceBatchedTopK.plan as unknown as (args: unknown, e?: unknown) => unknown;

function rangeError(fn: () => unknown): SegkitRangeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SegkitRangeError);
    expect(error).toBeInstanceOf(RangeError);
    return error as SegkitRangeError;
  }
  throw new Error('expected a SegkitRangeError');
}

describe('runtime twins of the top-k argument rules', () => {
  it('a constant k outside the domain', () => {
    expect(rangeError(() => plan({ ...base, k: p.constant(0 as 1) })).message).toBe('k: 0 is outside the static bounds [1, 4294967295]');
  });
  it('an option outside top-k directions', () => {
    const error = rangeError(() => plan({ ...base, k: p.constant(2), selectDirection: p.uniformOption('max' as string, ['max', 'median']) }));
    expect(error.message).toBe("selectDirection: option 'median' is not one of the options ['max', 'min']");
  });
  it('bounds that miss an environment guarantee, on either side', () => {
    const guaranteed = (g: object) => env({ backend, guarantees: g });
    expect(rangeError(() => plan({ ...base, k: p.uniform(9 as number, { min: 8, max: 16 }) }, guaranteed({ maxK: 4 }))).message).toBe(
      'k: bounds [8, 16] do not intersect the guarantee maxK [1, 4]',
    );
    const sizes = p.uniform(300 as number, { min: 256, max: 512 });
    expect(rangeError(() => plan({ ...base, segmentSizes: sizes, k: p.constant(2) }, guaranteed({ minSegmentSize: 1000 }))).message).toBe(
      'segmentSizes: bounds [256, 512] do not intersect the guarantee minSegmentSize [1000, 4294967295]',
    );
    expect(rangeError(() => plan({ ...base, segmentSizes: sizes, k: p.constant(2) }, guaranteed({ maxSegmentSize: 100 }))).message).toBe(
      'segmentSizes: bounds [256, 512] do not intersect the guarantee maxSegmentSize [0, 100]',
    );
  });
  it('a guarantee narrows the bounds the plan works from', () => {
    const narrowed = plan({ ...base, segmentSizes: p.uniform(200, { min: 1, max: 100000 }), k: p.uniform(20, { max: 64 }) }, env({ backend, guarantees: { maxSegmentSize: 256 } })) as {
      facts: { segmentSizes: { staticBounds: unknown } };
      variant: string;
    };
    expect(narrowed.facts.segmentSizes.staticBounds).toEqual({ min: 1, max: 256 });
    expect(narrowed.variant).toBe('single-tile');
  });
  it('a uniform host value outside its bounds names the parameter', () => {
    const error = rangeError(() => plan({ ...base, k: p.uniform(16 as number, { min: 1, max: 8 }) }));
    expect(error.message).toBe('k: 16 is outside the static bounds [1, 8]');
    expect(error.parameter).toBe('k');
    expect(error.value).toBe(16);
    expect(error.bounds).toEqual({ min: 1, max: 8 });
  });
  it('explain() names the facts, the choice, the pruned variants, the temp layout and the launches', () => {
    const text = (plan({ ...base, k: p.uniform(40, { min: 1, max: 64 }), segmentSizes: p.perSegment(new Array(10).fill(256), { min: 1, max: 8192 }) }, env({ backend })) as { explain(): string }).explain();
    expect(text).toContain('segmentSizes: perSegment, static bounds [1, 8192], host runtime bounds [256, 256]');
    expect(text).toContain('Chosen variant: single-tile (max segment size 256 <= tile');
    expect(text).toContain('reduce: pruned (kMax 40 > reduceMaxK 8)');
    expect(text).toContain('radix-select: pruned (every segment fits a tile');
    expect(text).toContain('offsets: 44 bytes at offset 0');
    expect(text).toMatch(/Launches \(2\):\n {2}1\. topk\/segment-offsets x1 workgroups/);
  });
  it('explain() says what tieBreak and determinism change in the plan, for every value', () => {
    const explain = (k: number, requirements: object) =>
      (plan({ ...base, k: p.constant(k as 40), segmentSizes: p.constant(256) }, env({ backend, requirements, tuning: k > 8 ? { variant: 'radix-select' } : {} })) as { explain(): string }).explain();
    const finalize = (spec: string) => `topk/radix-select/finalize[f32,max${spec}]`;
    expect(explain(40, {})).not.toMatch(/tieBreak '|determinism '/);
    expect(explain(40, { tieBreak: 'any' })).toContain("tieBreak 'any': ties still go to the smaller index: under determinism 'run-to-run' the choice must repeat");
    expect(explain(40, { tieBreak: 'any', determinism: 'not-guaranteed' })).toContain(`tieBreak 'any' (not-guaranteed): ${finalize(',tie=any')} takes the tied items of the threshold key in the order the filter appended them`);
    expect(explain(40, { outputOrdering: 'unsorted', determinism: 'not-guaranteed' })).toContain(`determinism 'not-guaranteed' (unsorted): ${finalize(',order=any')} writes the selection in the order it was found (no sort)`);
    expect(explain(40, { determinism: 'not-guaranteed' })).toContain("determinism 'not-guaranteed': 'sorted' output with ties by index fixes every output slot, so results repeat anyway");
    expect(explain(4, { tieBreak: 'any', determinism: 'not-guaranteed', outputOrdering: 'unsorted' })).toContain(
      "tieBreak 'any' (not-guaranteed): this plan's kernels find items in index order at no cost, so results are those of the defaults",
    );
  });
  it('host runtime bounds prune the double buffer', () => {
    const general = plan({ ...base, k: p.uniform(40, { min: 1, max: 64 }), segmentSizes: p.perSegment(new Array(10).fill(256), { min: 1, max: 8192 }) }, env({ backend, tuning: { variant: 'radix-select' } })) as { tempStorageBytes: number };
    const fits = plan({ ...base, k: p.uniform(40, { min: 1, max: 64 }), segmentSizes: p.perSegment(new Array(10).fill(256), { min: 1, max: 8192 }) }, env({ backend })) as { tempStorageBytes: number; variant: string };
    expect(general.tempStorageBytes).toBeGreaterThan(2 * 2560 * 4);
    expect(fits.variant).toBe('single-tile');
    expect(fits.tempStorageBytes).toBeLessThan(512);
  });
});

describe('the environment API reuses plans only where nothing can have changed', () => {
  const cpu = cpuBackend({ workers: 0 });
  const e = env({ backend: cpu });
  const select = DeviceBatchedTopK.select as unknown as (args: object, e?: unknown) => Promise<void>;
  const keys = cpu.upload(new Float32Array([5, 1, 4, 2, 3, 9, 8, 7]));
  const out = cpu.alloc('f32', 4);

  it('a host per-segment array changed between calls is checked again', async () => {
    const ks = [1, 2];
    const args = { keysIn: keys, keysOut: out, segmentSizes: p.constant(4), k: p.perSegment(ks, { min: 1, max: 2 }), selectDirection: p.constantOption('max'), numSegments: p.constant(2) };
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, -Infinity, 9, 8]);
    ks[0] = 3;
    await expect(select(args, e)).rejects.toThrow('k[0]: 3 is outside the static bounds [1, 2]');
    ks[0] = 2;
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, 4, 9, 8]);
  });

  it('a typed array or a per-segment option array changed in place is read again', async () => {
    const ks = new Uint32Array([1, 2]);
    const directions: ('max' | 'min')[] = ['max', 'max'];
    const args = { keysIn: keys, keysOut: out, segmentSizes: p.constant(4), k: p.perSegment(ks, { min: 1, max: 2 }), selectDirection: p.perSegmentOption(directions, ['max', 'min']), numSegments: p.constant(2) };
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, -Infinity, 9, 8]);
    ks[0] = 2;
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, 4, 9, 8]);
    directions[1] = 'min';
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, 4, 3, 7]);
    ks[1] = 3;
    await expect(select(args, e)).rejects.toThrow('k[1]: 3 is outside the static bounds [1, 2]');
  });

  it('a field replaced on the same args object is planned again', async () => {
    const args: Record<string, unknown> = { keysIn: keys, keysOut: out, segmentSizes: p.constant(4), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.constant(2) };
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([5, 4, 9, 8]);
    args.selectDirection = p.constantOption('min');
    await select(args, e);
    expect([...(await cpu.download(out))]).toEqual([1, 2, 3, 7]);
    args.k = p.constant(1);
    await select(args, e);
    expect([...(await cpu.download(out))].slice(0, 2)).toEqual([1, 3]);
  });

  it('a destroyed array is rejected even when the plan is reused', async () => {
    const keysOut = cpu.alloc('f32', 4);
    const args = { keysIn: keys, keysOut, segmentSizes: p.constant(4), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.constant(2) };
    await select(args, e);
    keysOut.destroy();
    await expect(select(args, e)).rejects.toThrow('keysOut: the DeviceArray was destroyed and cannot be used');
  });
});
