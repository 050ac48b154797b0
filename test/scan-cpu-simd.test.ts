/*
 * The scan's WebAssembly SIMD loops on the CPU (src/algorithms/segmented-scan/cpu/simd.ts) against the
 * reference, bit for bit, on the paths they take and those they leave: packed rows of 8 and 16 (four
 * rows at a time, and the last rows of a workgroup that fill no block of four, which the scalar loop
 * scans), items at the subnormal flush (the flushing twin) and not (the quiet one), NaN, infinities
 * and signed zeros, with no initial value and with initial values that are a subnormal, a magnitude
 * below 2^-103 (no quiet twin then) and an ordinary one. With a worker, the items are read in place
 * in the heap's WebAssembly slabs, on both threads. Exclusive scans, rows of 12 and per-segment
 * initial values keep the scalar loop, against the same reference. Long segments: every full tile of
 * 2048 items (four lanes of 8 at a time, their carries in order), scanned in one pass or by the tile
 * launches, inclusive and exclusive, against the same reference.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { referenceScan } from '../src/algorithms/segmented-scan/reference.js';
import { type Backend, DeviceSegmentedScan, type ScanVariant, env, p } from '../src/index.js';
import { rng, simdComparisonBackends } from './helpers.js';

const backends = simdComparisonBackends();
afterAll(() => {
  for (const [, backend] of backends) backend.destroy();
});

const minNormal = 2 ** -126;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]!);

type Initial = { kind: 'none' } | { kind: 'uniform'; value: number } | { kind: 'perSegment'; values: Float32Array };

/** Scans `rows` packed rows of `size` on a backend (`variant` forced where given); the output's bits. */
async function scan(backend: Backend, values: Float32Array, rows: number, size: number, mode: 'inclusive' | 'exclusive', initial: Initial, variant?: ScanVariant): Promise<number[]> {
  const valuesIn = backend.upload(values);
  const valuesOut = backend.alloc('f32', values.length);
  const initialValue = initial.kind === 'uniform' ? { initialValue: p.uniform(initial.value) } : initial.kind === 'perSegment' ? { initialValue: p.perSegment(initial.values) } : {};
  const plan = DeviceSegmentedScan.plan(
    { valuesIn, valuesOut, segmentSizes: p.uniform(size), op: p.constantOption('sum'), mode: p.constantOption(mode), numSegments: p.uniform(rows), ...initialValue },
    env({ backend, ...(variant === undefined ? {} : { tuning: { variant } }) }),
  );
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  await plan.run(temp);
  temp?.destroy();
  const out = Array.from(new Uint32Array((await backend.download(valuesOut)).buffer));
  valuesIn.destroy();
  valuesOut.destroy();
  return out;
}

function expected(values: Float32Array, rows: number, size: number, mode: 'inclusive' | 'exclusive', initial: Initial): number[] {
  const initialValues = Array.from({ length: rows }, (_, r) => (initial.kind === 'uniform' ? bitsOf(initial.value) : initial.kind === 'perSegment' ? bitsOf(initial.values[r]!) : undefined));
  const out = referenceScan({
    valueType: 'f32',
    values: new Uint32Array(values.buffer),
    segmentStarts: Array.from({ length: rows }, (_, r) => r * size),
    segmentSizes: Array<number>(rows).fill(size),
    ops: Array(rows).fill('sum'),
    modes: Array(rows).fill(mode),
    initialValues,
    outputBefore: new Uint32Array(values.length),
  });
  return Array.from(out);
}

describe.each(backends)('scan SIMD loops (%s)', (_name, backend) => {
  // 3001 rows: 11 workgroups of 256 and one of 185, whose last row fills no block of four.
  const rows = 3001;
  const special = [NaN, -0, 0, Infinity, -Infinity, 3e38, -3e38, 1, -1];
  const tiny = [minNormal / 2, -minNormal / 4, 1.5 * minNormal, -1.5 * minNormal, minNormal, 2 ** -149];
  /** `count` values: ordinary ones, with specials (at `specialRate`) or values at the subnormal flush (30%, or all of them) mixed in. */
  const valuesOf = (count: number, mix: 'ordinary' | 'special' | 'tiny' | 'all tiny', random: () => number, specialRate: number) =>
    Float32Array.from({ length: count }, () => {
      if (mix === 'all tiny') return tiny[Math.floor(random() * tiny.length)]!;
      const r = random();
      if (mix === 'special' && r < specialRate) return special[Math.floor(random() * special.length)]!;
      if (mix === 'tiny' && r < 0.3) return tiny[Math.floor(random() * tiny.length)]!;
      return (random() - 0.5) * 100;
    });
  const initials: Initial[] = [{ kind: 'none' }, { kind: 'uniform', value: 2.5 }, { kind: 'uniform', value: -minNormal / 2 }, { kind: 'uniform', value: 2 ** -110 }];

  for (const size of [8, 16, 12]) {
    it(`packed rows of ${size}: ordinary values, specials, values at the subnormal flush; every initial value`, async () => {
      const random = rng(size);
      for (const mix of ['ordinary', 'special', 'tiny'] as const) {
        const values = valuesOf(rows * size, mix, random, 0.02);
        for (const initial of initials) {
          expect(await scan(backend, values, rows, size, 'inclusive', initial), `${mix} ${JSON.stringify(initial)}`).toEqual(expected(values, rows, size, 'inclusive', initial));
        }
      }
    });
  }

  it('long segments: each full tile of 2048 four lanes at a time (one pass, and the tile launches), the short last tile, exclusive scans', async () => {
    // Two segments of five full tiles and 123 items, and one of exactly three tiles; the lanes'
    // carries cross every group and tile, so a sum added out of the canonical order shows.
    const random = rng(2048);
    for (const [rows, size] of [
      [2, 5 * 2048 + 123],
      [1, 3 * 2048],
    ] as const) {
      // 'all tiny': sums near the flush all along, where a tile total added without the flushes differs.
      for (const mix of ['ordinary', 'special', 'tiny', 'all tiny'] as const) {
        // Specials rarer: a NaN or infinity makes every later sum of its segment NaN or infinite.
        const values = valuesOf(rows * size, mix, random, 0.0005);
        for (const variant of ['workgroup', 'multi-workgroup'] as const) {
          for (const initial of initials.slice(0, 3)) {
            const what = `${rows}x${size} ${mix} ${variant} ${JSON.stringify(initial)}`;
            expect(await scan(backend, values, rows, size, 'inclusive', initial, variant), what).toEqual(expected(values, rows, size, 'inclusive', initial));
          }
          expect(await scan(backend, values, rows, size, 'exclusive', initials[1]!, variant), `${rows}x${size} ${mix} ${variant} exclusive`).toEqual(expected(values, rows, size, 'exclusive', initials[1]!));
        }
      }
    }
  });

  it('exclusive scans and per-segment initial values (the scalar loop)', async () => {
    const random = rng(4);
    const values = Float32Array.from({ length: rows * 16 }, () => (random() - 0.5) * 100);
    const perSegment: Initial = { kind: 'perSegment', values: Float32Array.from({ length: rows }, () => (random() - 0.5) * 10) };
    expect(await scan(backend, values, rows, 16, 'exclusive', { kind: 'none' })).toEqual(expected(values, rows, 16, 'exclusive', { kind: 'none' }));
    expect(await scan(backend, values, rows, 16, 'inclusive', perSegment)).toEqual(expected(values, rows, 16, 'inclusive', perSegment));
  });
});
