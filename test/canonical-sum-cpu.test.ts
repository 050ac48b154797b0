/*
 * The CPU's canonical f32 sums (reduce and scan) at the edges of the subnormal flush, bit for bit
 * with the references: the kernels test only `|x| >= 2^-126` per input and per result (reduce skips
 * even that where every value is zero or at least 2^-103, when no flush can change anything) and keep lanes
 * in locals and tiles in three loops, so these cases put sums exactly on 2^-126, one ulp below it,
 * -0 + -0, +Inf + -Inf and subnormal inputs in every place those loops treat apart: a chunk's full
 * rows (8 lanes at a time), its partial last row, the tree of a short segment, a scan's full tile
 * (unrolled lanes) and partial tile, on every variant, without and with worker threads.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { referenceSegmentedReduce } from '../src/algorithms/segmented-reduce/reference.js';
import { referenceScan } from '../src/algorithms/segmented-scan/reference.js';
import {
  type Backend,
  DeviceSegmentedReduce,
  DeviceSegmentedScan,
  cpuBackend,
  env,
  p,
  scanVariants,
  segmentedReduceVariants,
} from '../src/index.js';
import { rng } from './helpers.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]!);

const minNormal = 2 ** -126;
const smallestSubnormal = 2 ** -149;
/** 2^-125 and the two normal values that bring it exactly to 2^-126 or one ulp below it (a subnormal, flushed). */
const twice = 2 * minNormal;
const above = 1.5 * minNormal;
const toMinNormal = -minNormal;
const belowMinNormal = -(minNormal + smallestSubnormal);

/** Values near the flush boundary: partial sums of these keep crossing 2^-126 both ways. */
const tiny = [above, -above, minNormal, -minNormal, toMinNormal, belowMinNormal, -belowMinNormal, 2 * minNormal, -2 * minNormal, 0, -0, smallestSubnormal, -3 * smallestSubnormal, 0x7fffff * smallestSubnormal];

interface Segments {
  readonly sizes: number[];
  readonly values: Float32Array;
}

/** The segments, each with its designed items; the rest are tiny values at random. */
function segments(seed: number): Segments {
  const random = rng(seed);
  const designs: { size: number; at?: Record<number, number>; fill?: number }[] = [
    // Two full rows: lane 5 reaches exactly 2^-126 (kept), lane 6 one ulp below (flushed), lane 7 -0 + -0.
    { size: 512, fill: 0, at: { 5: twice, 261: toMinNormal, 6: twice, 262: belowMinNormal, 7: -0, 263: -0 } },
    // Three rows and a partial one: the same sums where row 1 is a full row and row 3 the partial one.
    { size: 3 * 256 + 88, fill: 0, at: { 5: twice, 261: toMinNormal, 6: twice, 774: belowMinNormal, 8: 1e-40, 776: smallestSubnormal } },
    // All -0: the total is -0.
    { size: 700, fill: -0 },
    { size: 13, fill: -0 },
    // +Inf + -Inf in one lane's rows: NaN, written as the canonical NaN.
    { size: 700, fill: 0, at: { 7: Infinity, 263: -Infinity } },
    // A short segment whose tree pairs item j with item j + 8 (and j + 64).
    { size: 16, fill: 0, at: { 0: twice, 8: belowMinNormal, 1: twice, 9: toMinNormal } },
    { size: 100, fill: 0, at: { 3: twice, 67: belowMinNormal } },
    // Random tiny values: every kind of boundary crossing, in short, one-chunk and several-chunk segments.
    { size: 16 },
    { size: 255 },
    { size: 257 },
    { size: 2048 },
    { size: 2100 },
    { size: 8192 + 300 },
    { size: 4 * 8192 + 17 },
  ];
  const sizes = designs.map((d) => d.size);
  const values = new Float32Array(sizes.reduce((a, b) => a + b, 0));
  let start = 0;
  for (const design of designs) {
    for (let j = 0; j < design.size; j++) values[start + j] = design.fill ?? tiny[Math.floor(random() * tiny.length)]!;
    for (const [j, v] of Object.entries(design.at ?? {})) values[start + Number(j)] = v;
    start += design.size;
  }
  return { sizes, values };
}

const startsOf = (sizes: readonly number[]) => {
  const out: number[] = [];
  let at = 0;
  for (const size of sizes) {
    out.push(at);
    at += size;
  }
  return out;
};

const backends: [string, Backend][] = [
  ['cpu', cpuBackend({ workers: 0 })],
  // A threshold of 1 item sends every launch through the pool: the worker's copy of the kernels runs too.
  ['cpu with a worker', cpuBackend({ workers: 1, parallelThreshold: 1 })],
  // Reduce's scalar loops, which the WebAssembly SIMD loops replace where the runtime has them.
  ['cpu, scalar loops', cpuBackend({ workers: 0, simd: false })],
];
afterAll(() => {
  for (const [, backend] of backends) backend.destroy();
});

describe.each(backends)('canonical f32 sums at the flush boundary (%s)', (_name, backend) => {
  const { sizes, values } = segments(11);
  const bits = new Uint32Array(values.buffer);
  const starts = startsOf(sizes);

  it('reduce: every variant gives the reference bits', async () => {
    const expected = referenceSegmentedReduce({ valueType: 'f32', values: bits, segmentStarts: starts, segmentSizes: sizes, ops: sizes.map(() => 'sum') }).values;
    // The designed segments do cross the boundary: the flushed lane gives +0, so segment 0's total is 2^-126 exactly.
    expect(expected[0]).toBe(bitsOf(minNormal));
    expect(expected[1]).toBe(bitsOf(minNormal));
    expect(expected[2]).toBe(0x80000000);
    expect(expected[3]).toBe(0x80000000);
    expect(expected[4]).toBe(0x7fc00000);
    expect(expected[5]).toBe(bitsOf(minNormal));
    expect(expected[6]).toBe(0);
    // 'thread' takes segments of at most 16 items: it gets those segments on their own.
    const short = sizes.flatMap((size, i) => (size <= 16 ? [i] : []));
    const cases = [
      { name: 'all segments', sizes, starts, values, expected },
      {
        name: 'short segments',
        sizes: short.map((i) => sizes[i]!),
        starts: startsOf(short.map((i) => sizes[i]!)),
        values: Float32Array.from(short.flatMap((i) => [...values.subarray(starts[i]!, starts[i]! + sizes[i]!)])),
        expected: Uint32Array.from(short.map((i) => expected[i]!)),
      },
    ];
    for (const variant of segmentedReduceVariants) {
      const c = variant === 'thread' ? cases[1]! : cases[0]!;
      const valuesIn = backend.upload(c.values);
      const valuesOut = backend.alloc('f32', c.sizes.length);
      const args = { valuesIn, valuesOut, segmentSizes: p.perSegment(Uint32Array.from(c.sizes)), op: p.constantOption('sum'), numSegments: p.uniform(c.sizes.length) };
      await DeviceSegmentedReduce.reduce(args, env({ backend, tuning: { variant } }));
      expect([...new Uint32Array((await backend.download(valuesOut)).buffer)], `${variant}, ${c.name}`).toEqual([...c.expected]);
      valuesIn.destroy();
      valuesOut.destroy();
    }
  });

  it('reduce: rows of one size (2 to 16 items, packed and strided) give the reference bits, with and without values below 2^-103', async () => {
    // Rows of one size up to 16 take a short path (cpu/kernels.ts sumShortSegments): without flush
    // tests where every value is zero or at least 2^-103, the flushing tree elsewhere. These rows mix
    // both, in runs long enough that a whole workgroup's rows pass the test, and rows with one tiny value.
    const random = rng(29);
    const quietValues = [0.75, -0.5, 1e30, -3e-20, 2 ** -103, -(2 ** -103), 0, -0, Infinity, -Infinity, 1 / 3];
    const pick = (from: readonly number[]) => from[Math.floor(random() * from.length)]!;
    for (const size of [2, 3, 5, 8, 13, 16]) {
      for (const stride of [undefined, size + 3]) {
        const rows = 700;
        const step = stride ?? size;
        const data = new Float32Array(rows * step).fill(NaN);
        for (let r = 0; r < rows; r++) {
          // Rows 0..299: quiet values only (NaN in row 7); 300..: a tiny value in every third row.
          for (let j = 0; j < size; j++) data[r * step + j] = r >= 300 && r % 3 === 0 && j === r % size ? pick(tiny) : random() < 0.2 ? pick(quietValues) : random() * 2 - 1;
        }
        data[7 * step + size - 1] = NaN;
        const dataBits = new Uint32Array(data.buffer);
        const expected = referenceSegmentedReduce({
          valueType: 'f32',
          values: dataBits,
          segmentStarts: Array.from({ length: rows }, (_, r) => r * step),
          segmentSizes: Array.from({ length: rows }, () => size),
          ops: Array.from({ length: rows }, () => 'sum'),
        }).values;
        const valuesIn = backend.upload(data);
        const valuesOut = backend.alloc('f32', rows);
        for (const variant of segmentedReduceVariants) {
          const args = {
            valuesIn,
            valuesOut,
            segmentSizes: p.uniform(size),
            ...(stride === undefined ? {} : { segmentStride: p.uniform(stride) }),
            op: p.constantOption('sum'),
            numSegments: p.uniform(rows),
          };
          await DeviceSegmentedReduce.reduce(args, env({ backend, tuning: { variant } }));
          const got = new Uint32Array((await backend.download(valuesOut)).buffer);
          let mismatch = -1;
          for (let r = 0; r < rows && mismatch < 0; r++) if (got[r] !== expected[r]) mismatch = r;
          expect(mismatch, `size ${size}, stride ${stride ?? 'packed'}, ${variant}: first mismatch at row ${mismatch}`).toBe(-1);
        }
        valuesIn.destroy();
        valuesOut.destroy();
      }
    }
  });

  it('reduce: segments over 16 items whose values are all zero or at least 2^-103 give the reference bits, and so do those with a subnormal', async () => {
    // Such chunks add without flush tests (cpu/kernels.ts quietChunkTotalF32, shortTotalF32); a subnormal sends its chunk to the flushing loops.
    const random = rng(31);
    const quietValues = [0, -0, 2 ** -103, -(2 ** -103), 1e-30, -7e-25, 1e30];
    const sizes = [100, 255, 300, 700, 2048, 2100, 8192 + 300, 3 * 8192 + 5];
    const starts = startsOf(sizes);
    const data = new Float32Array(sizes.reduce((a, b) => a + b, 0));
    for (let j = 0; j < data.length; j++) data[j] = random() < 0.3 ? quietValues[Math.floor(random() * quietValues.length)]! : (random() * 2 - 1) * 1e-20;
    for (const variant of segmentedReduceVariants) {
      if (variant === 'thread') continue; // segments of at most 16 items
      for (const tinyAt of [-1, 1, 100 + 254, 355 + 1, 355 + 2047 + 300, data.length - 1]) {
        // The segment holding `tinyAt` becomes zeros and one subnormal: its canonical total is +0 (the subnormal is flushed).
        const values = data.slice();
        const segment = tinyAt < 0 ? -1 : starts.filter((start) => start <= tinyAt).length - 1;
        if (segment >= 0) {
          values.fill(0, starts[segment]!, starts[segment]! + sizes[segment]!);
          values[tinyAt] = 3 * smallestSubnormal;
        }
        const expected = referenceSegmentedReduce({ valueType: 'f32', values: new Uint32Array(values.buffer), segmentStarts: starts, segmentSizes: sizes, ops: sizes.map(() => 'sum') }).values;
        const valuesIn = backend.upload(values);
        const valuesOut = backend.alloc('f32', sizes.length);
        const args = { valuesIn, valuesOut, segmentSizes: p.perSegment(Uint32Array.from(sizes)), op: p.constantOption('sum'), numSegments: p.uniform(sizes.length) };
        await DeviceSegmentedReduce.reduce(args, env({ backend, tuning: { variant } }));
        if (segment >= 0) expect(expected[segment]).toBe(0);
        expect([...new Uint32Array((await backend.download(valuesOut)).buffer)], `${variant}, tiny value at ${tinyAt}`).toEqual([...expected]);
        valuesIn.destroy();
        valuesOut.destroy();
      }
    }
  });

  it('scan: every variant gives the reference bits, inclusive and exclusive', async () => {
    const valuesIn = backend.upload(values);
    const valuesOut = backend.alloc('f32', values.length);
    for (const mode of ['inclusive', 'exclusive'] as const) {
      const expected = referenceScan({
        valueType: 'f32',
        values: bits,
        segmentStarts: starts,
        segmentSizes: sizes,
        ops: sizes.map(() => 'sum'),
        modes: sizes.map(() => mode),
        outputBefore: new Uint32Array(values.length),
      });
      for (const variant of scanVariants) {
        const args = { valuesIn, valuesOut, segmentSizes: p.perSegment(Uint32Array.from(sizes)), op: p.constantOption('sum'), mode: p.constantOption(mode), numSegments: p.uniform(sizes.length) };
        await DeviceSegmentedScan.scan(args, env({ backend, tuning: { variant } }));
        const got = new Uint32Array((await backend.download(valuesOut)).buffer);
        let mismatch = -1;
        for (let j = 0; j < got.length && mismatch < 0; j++) if (got[j] !== expected[j]) mismatch = j;
        expect(mismatch, `${mode} ${variant}: first mismatch at ${mismatch}`).toBe(-1);
      }
    }
    valuesIn.destroy();
    valuesOut.destroy();
  });
});
