/*
 * Reduce's WebAssembly SIMD loops on the CPU (src/algorithms/segmented-reduce/cpu/simd.ts) against the
 * reference and the scalar loops, bit for bit, where they treat values apart: an extreme found a chunk
 * at a time (ties, -0 against +0 and NaN on both sides of a chunk boundary, and of a boundary between
 * the calling thread's workgroups and a worker's), packed rows of 8 and 16 (the tournament: ties in
 * every lane pairing, NaN rows, which take the scalar loop), and canonical chunk totals of every
 * length around the lanes' rows (padding with -0) with values at the subnormal flush. With a worker,
 * device memory is the heap's WebAssembly slabs, which the loops read in place where no padding is
 * needed (on both threads), and copy elsewhere.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { referenceSegmentedReduce } from '../src/algorithms/segmented-reduce/reference.js';
import { type Backend, type ReduceOp, DeviceSegmentedReduce, env, p } from '../src/index.js';
import { rng, simdComparisonBackends } from './helpers.js';

const backends = simdComparisonBackends();
afterAll(() => {
  for (const [, backend] of backends) backend.destroy();
});

const chunk = 8192;
const minNormal = 2 ** -126;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]!);

/** Runs `op` over segments of `sizes` (packed) on a backend; its value and index bits. */
async function reduce(backend: Backend, values: Float32Array, sizes: number[], op: ReduceOp, determinism: 'run-to-run' | 'not-guaranteed' = 'run-to-run'): Promise<{ values: number[]; indices: number[] }> {
  const valuesIn = backend.upload(values);
  const valuesOut = backend.alloc('f32', sizes.length);
  const indicesOut = backend.alloc('u32', sizes.length);
  const uniform = sizes.every((s) => s === sizes[0]);
  await DeviceSegmentedReduce.reduce(
    { valuesIn, valuesOut, indicesOut, segmentSizes: uniform ? p.uniform(sizes[0]!) : p.perSegment(sizes), op: p.constantOption(op), numSegments: p.uniform(sizes.length) },
    env({ backend, requirements: { determinism } }),
  );
  const out = { values: Array.from(new Uint32Array((await backend.download(valuesOut)).buffer)), indices: Array.from(await backend.download(indicesOut)) };
  valuesIn.destroy();
  valuesOut.destroy();
  indicesOut.destroy();
  return out;
}

/** The reference's value and index bits. */
function expected(values: Float32Array, sizes: number[], op: ReduceOp, canonical = true): { values: number[]; indices: number[] } {
  const segmentStarts: number[] = [];
  let start = 0;
  for (const size of sizes) {
    segmentStarts.push(start);
    start += size;
  }
  const out = referenceSegmentedReduce({ valueType: 'f32', values: new Uint32Array(values.buffer), segmentStarts, segmentSizes: sizes, ops: sizes.map(() => op), canonical });
  return { values: Array.from(out.values), indices: Array.from(out.indices) };
}

const extremes: ReduceOp[] = ['min', 'max', 'argMin', 'argMax'];

describe.each(backends)('reduce SIMD loops (%s)', (name, backend) => {
  it('one long segment: the extreme at chunk boundaries, ties, -0 against +0, NaN in either chunk', async () => {
    const size = 5 * chunk + 77;
    const random = rng(11);
    const base = Float32Array.from({ length: size }, () => Math.round((random() - 0.5) * 64) / 8);
    // Each case sets a few items; the rest are in [-4, 4].
    const cases: Record<number, number>[] = [
      // The same largest value last in chunk 0 and first in chunk 1: index chunk - 1.
      { [chunk - 1]: 100, [chunk]: 100 },
      // Equal extremes in chunks 1 and 3 (the largest and the smallest): chunk 1's win.
      { [chunk + 5]: -100, [3 * chunk + 2]: -100, [chunk + 6]: 100, [3 * chunk + 1]: 100 },
      // -0 first, +0 later, as the only extremes (every other item is moved off zero).
      { 0: -0, [2 * chunk + 3]: 0 },
      // +Infinity and -Infinity at the ends, and the last partial chunk's last item.
      { [size - 1]: Infinity, [chunk - 2]: -Infinity },
      // NaN in the last chunk: max finds it; min ignores it.
      { [size - 3]: NaN, [7]: 50 },
      // NaN in chunk 0 and chunk 4.
      { [12]: NaN, [4 * chunk + 9]: NaN },
    ];
    for (const [c, set] of cases.entries()) {
      const values = base.slice();
      if (c === 2) for (let i = 0; i < size; i++) values[i] = values[i] === 0 ? 0.5 : Math.abs(values[i]!) + 1;
      for (const [at, v] of Object.entries(set)) values[Number(at)] = v;
      for (const op of extremes) {
        expect(await reduce(backend, values, [size], op), `case ${c}, ${op}`).toEqual(expected(values, [size], op));
      }
    }
  });

  it('ragged segments of 1 to 3 chunks with ties and NaN, every extreme', async () => {
    const random = rng(5);
    const sizes = [1, 7, 63, 64, 65, 200, chunk - 1, chunk, chunk + 1, 2 * chunk + 100, 0, 3];
    const total = sizes.reduce((a, b) => a + b, 0);
    const values = Float32Array.from({ length: total }, () => {
      const r = random();
      return r < 0.001 ? NaN : r < 0.01 ? -0 : r < 0.02 ? 0 : Math.round((random() - 0.5) * 16);
    });
    for (const op of extremes) expect(await reduce(backend, values, sizes, op), op).toEqual(expected(values, sizes, op));
  });

  it('packed rows of 8 and 16 (and 12, the scalar rows): ties in every lane pairing, NaN rows, signed zeros, infinities', async () => {
    const random = rng(9);
    const pool = [NaN, -0, 0, Infinity, -Infinity, 1, -1, 2, minNormal / 2, -minNormal / 4, 3e38, -3e38];
    for (const size of [8, 16, 12]) {
      const rows = 3000;
      const values = Float32Array.from({ length: rows * size }, () => {
        const r = random();
        return r < 0.02 ? pool[Math.floor(random() * pool.length)]! : Math.floor(random() * 5) - 2;
      });
      const sizes = Array<number>(rows).fill(size);
      for (const op of [...extremes, 'sum'] as ReduceOp[]) {
        expect(await reduce(backend, values, sizes, op), `${size} ${op}`).toEqual(expected(values, sizes, op));
      }
    }
  });

  it('canonical sums of every length around the rows of 256 lanes, with values at the subnormal flush', async () => {
    const random = rng(3);
    const tiny = [1.5 * minNormal, -1.5 * minNormal, minNormal, -minNormal, -(minNormal + 2 ** -149), 2 * minNormal, 0, -0, 2 ** -149, 1e-39];
    const sizes = [17, 127, 128, 129, 255, 256, 257, 511, 1000, 4095, chunk - 1, chunk, chunk + 129, 3 * chunk + 5];
    const total = sizes.reduce((a, b) => a + b, 0);
    for (const scale of [1, 0]) {
      const values = Float32Array.from({ length: total }, () => (scale === 1 ? (random() - 0.5) * 1000 : tiny[Math.floor(random() * tiny.length)]!));
      expect(await reduce(backend, values, sizes, 'sum'), `scale ${scale}`).toEqual(expected(values, sizes, 'sum'));
    }
    // All -0: -0 (the padding adds nothing); a lone NaN: the canonical NaN.
    const zeros = new Float32Array(1000).fill(-0);
    expect((await reduce(backend, zeros, [1000], 'sum')).values).toEqual([bitsOf(-0)]);
    zeros[500] = NaN;
    expect((await reduce(backend, zeros, [1000], 'sum')).values).toEqual([0x7fc00000]);
  });

  it("'not-guaranteed' sums: the canonical order where the SIMD loops run, float64 left to right on the scalar loops", async () => {
    const random = rng(5);
    const sizes = [16, 16, 8, 300, chunk + 3, 3 * chunk + 1];
    const values = Float32Array.from({ length: sizes.reduce((a, b) => a + b, 0) }, () => (random() - 0.5) * 1e4);
    const got = await reduce(backend, values, sizes, 'sum', 'not-guaranteed');
    const canonical = name !== 'scalar';
    const want = expected(values, sizes, 'sum', canonical);
    expect(got).toEqual(want);
    // The two orders differ on these values, so the test tells them apart.
    expect(want.values).not.toEqual(expected(values, sizes, 'sum', !canonical).values);
  });
});
