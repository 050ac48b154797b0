/**
 * The DeviceBatchedCopy conformance suite, written once and run on every backend: random and
 * adversarial buffers compared word for word with `referenceBatchedCopy`, every variant forced
 * through tuning, every parameter kind (constant, uniform, per-buffer host and device, device-only
 * numBuffers), vec4 and word moves, and bad input (ranges past an array, overlapping destinations,
 * short per-buffer arrays, a misspelled field) named, with the destination untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Backend,
  type BatchedCopyVariant,
  DeviceBatchedCopy,
  GuaranteeViolationError,
  SegkitRangeError,
  SegkitUsageError,
  batchedCopyVariants,
  env,
  p,
} from '../../src/index.js';
import { rng } from '../helpers.js';
import { P, runWithOwnTemp } from './common.js';
import { type CopyCase, destinationBefore, expectedDestination, layoutCase, sourceWords } from './copy-cases.js';

const boundarySizes = [0, 1, 31, 32, 33, 0, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097];

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
export function defineCopyConformance(backendName: string, makeBackend: () => Promise<Backend>): void {
  describe(`DeviceBatchedCopy conformance on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    type Kind = 'host' | 'device';
    interface RunOptions {
      readonly kinds?: { sizes?: Kind; sourceOffsets?: Kind; destinationOffsets?: Kind; numBuffers?: 'constant' | 'uniform' | 'device' };
      readonly variant?: BatchedCopyVariant;
      readonly dtype?: 'f32' | 'u32' | 'i32';
      readonly guaranteeChecks?: 'validate' | 'trust';
    }

    /** Runs a case; returns the destination's words after the run (and rejects as the run does). */
    async function runCopy(c: CopyCase, options: RunOptions = {}): Promise<{ words: Uint32Array; before: Uint32Array; variant: BatchedCopyVariant }> {
      const dtype = options.dtype ?? 'f32';
      const words = sourceWords(c.sourceLength, c.sizes.length + 1);
      const as = (w: Uint32Array) => (dtype === 'f32' ? new Float32Array(w.buffer) : dtype === 'i32' ? new Int32Array(w.buffer) : w);
      const source = backend.upload(as(words.slice()));
      const before = destinationBefore(c);
      const destination = backend.upload(as(before.slice()));
      const owned: { destroy(): void }[] = [source, destination];
      const param = (values: number[], kind: Kind | undefined) => {
        if (kind !== 'device') return p.perSegment(values);
        const array = backend.upload(Uint32Array.from(values));
        owned.push(array);
        return p.perSegment(array);
      };
      const n = c.sizes.length;
      const numBuffers = options.kinds?.numBuffers === 'device' ? p.uniform(backend.upload(new Uint32Array([n]))) : options.kinds?.numBuffers === 'uniform' ? p.uniform(n) : P.constant!(n);
      try {
        const plan = DeviceBatchedCopy.plan(
          {
            source,
            destination,
            sizes: param(c.sizes, options.kinds?.sizes),
            sourceOffsets: param(c.sourceOffsets, options.kinds?.sourceOffsets),
            destinationOffsets: param(c.destinationOffsets, options.kinds?.destinationOffsets),
            numBuffers,
          },
          env({ backend, requirements: { guaranteeChecks: options.guaranteeChecks ?? 'validate' }, tuning: options.variant === undefined ? {} : { variant: options.variant } }),
        );
        const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
        if (temp !== undefined) owned.push(temp);
        await plan.run(temp);
        const failure = await plan.checked().then(() => undefined, (error: unknown) => error);
        const out = await backend.download(destination);
        const result = new Uint32Array(out.buffer, out.byteOffset, out.length);
        plan.destroy();
        if (failure !== undefined) throw Object.assign(failure as Error, { words: result, before });
        return { words: result, before, variant: plan.variant };
      } finally {
        for (const array of owned) array.destroy();
      }
    }

    const expected = expectedDestination;

    const expectWords = (got: Uint32Array, want: Uint32Array, what: string) => {
      expect(got.length, what).toBe(want.length);
      for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) expect(`${what}: word ${i} = ${got[i]}`).toBe(`${what}: word ${i} = ${want[i]}`);
    };

    it('boundary sizes, every variant forced, word for word (NaN payloads and -0 kept)', async () => {
      const c = layoutCase('boundary', boundarySizes, 1);
      for (const variant of batchedCopyVariants) {
        const { words, variant: ran } = await runCopy(c, { variant });
        expect(ran).toBe(variant);
        expectWords(words, expected(c), `boundary (${variant})`);
      }
    });

    it('random sizes with every parameter kind, host and device', async () => {
      const random = rng(7);
      const c = layoutCase('random', Array.from({ length: 300 }, () => (random() < 0.1 ? 0 : Math.floor(random() * 300))), 2);
      const kinds: RunOptions['kinds'][] = [
        {},
        { sizes: 'device', numBuffers: 'uniform' },
        { sourceOffsets: 'device', destinationOffsets: 'device' },
        { sizes: 'device', sourceOffsets: 'device', destinationOffsets: 'device', numBuffers: 'device' },
      ];
      for (const k of kinds) {
        const { words } = await runCopy(c, { kinds: k });
        expectWords(words, expected(c), `random ${JSON.stringify(k)}`);
      }
    });

    it('uniform and constant sizes and offsets (a broadcast of one source range)', async () => {
      const source = backend.upload(Uint32Array.from({ length: 64 }, (_, i) => i * 3));
      const destination = backend.upload(new Uint32Array(40).fill(7));
      const offsets = [0, 8, 16, 24, 32];
      await DeviceBatchedCopy.copy({ source, destination, sourceOffsets: p.uniform(5), destinationOffsets: p.perSegment(offsets), sizes: p.constant(8), numBuffers: p.uniform(5) }, env({ backend }));
      const got = await backend.download(destination);
      expect(Array.from(got)).toEqual(Array.from({ length: 40 }, (_, i) => (5 + (i % 8)) * 3));
      source.destroy();
      destination.destroy();
    });

    it('vec4 moves where every offset and size is a multiple of 4, and one buffer of 120000 items', async () => {
      const aligned = layoutCase('aligned', [4, 0, 256, 1024, 4096, 32, 20000], 3, 4);
      const plan = aligned.sizes.every((s) => s % 4 === 0) && aligned.destinationOffsets.every((d) => d % 4 === 0);
      expect(plan).toBe(true);
      for (const variant of batchedCopyVariants) expectWords((await runCopy(aligned, { variant })).words, expected(aligned), `aligned (${variant})`);
      const big = layoutCase('big', [120_001], 4);
      const run = await runCopy(big, { dtype: 'i32' });
      expect(run.variant).toBe('chunked');
      expectWords(run.words, expected(big), 'one buffer of 120001');
    });

    it('numBuffers 0 (constant and device-only) copies nothing', async () => {
      const c: CopyCase = { name: 'none', sizes: [], sourceOffsets: [], destinationOffsets: [], sourceLength: 4, destinationLength: 4 };
      expectWords((await runCopy(c)).words, expected(c), 'numBuffers 0');
      const source = backend.upload(new Uint32Array(8).fill(1));
      const destination = backend.upload(new Uint32Array(8));
      const sizes = backend.upload(new Uint32Array([4, 4]));
      const plan = DeviceBatchedCopy.plan({ source, destination, sizes: p.perSegment(sizes), sourceOffsets: p.constant(0), destinationOffsets: p.perSegment([0, 4]), numBuffers: p.uniform(backend.upload(new Uint32Array([0]))) }, env({ backend }));
      await runWithOwnTemp(backend, plan);
      expect(Array.from(await backend.download(destination))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
      plan.destroy();
    });

    describe('bad input is named, and the destination is left untouched', () => {
      const base = () => layoutCase('bad', [5, 40, 3, 0, 17], 5);

      async function expectRejected(c: CopyCase, options: RunOptions, type: typeof SegkitRangeError | typeof GuaranteeViolationError, parameter: string, buffer: number, text: RegExp) {
        const error = await runCopy(c, options).then(() => undefined, (e: unknown) => e as Error & { parameter: string; segment: number; words?: Uint32Array; before?: Uint32Array });
        expect(error, 'the call must be rejected').toBeInstanceOf(type);
        expect(error!.parameter).toBe(parameter);
        expect(error!.segment).toBe(buffer);
        expect(error!.message).toMatch(text);
        if (error!.words !== undefined) expectWords(error!.words, error!.before!, 'destination after a rejected run');
      }

      for (const where of ['host', 'device'] as const) {
        const type = where === 'host' ? SegkitRangeError : GuaranteeViolationError;
        const kinds = where === 'host' ? {} : { sizes: 'device', sourceOffsets: 'device', destinationOffsets: 'device' } as const;
        it(`a source range past the source (${where})`, async () => {
          const c = base();
          c.sourceOffsets[2] = c.sourceLength - 2;
          await expectRejected(c, { kinds }, type, 'sourceOffsets', 2, /the source range \[\d+, \d+\) ends past the source's \d+ elements/);
        });
        it(`a destination range past the destination (${where})`, async () => {
          const c = base();
          c.destinationOffsets[4] = c.destinationLength - 16;
          await expectRejected(c, { kinds }, type, 'destinationOffsets', 4, /the destination range \[\d+, \d+\) ends past the destination's \d+ elements/);
        });
        it(`overlapping destination ranges, the lowest buffer holding another's start named (${where})`, async () => {
          const c = base();
          c.destinationOffsets[3] = c.destinationOffsets[1]!; // buffer 3 is empty: no overlap
          c.destinationOffsets[2] = c.destinationOffsets[1]! + 39; // buffer 2 starts on buffer 1's last element
          await expectRejected(c, { kinds }, type, 'destinationOffsets', 1, /the destination range \[\d+, \d+\) overlaps buffer 2's destination range/);
        });
        it(`two buffers starting at the same place (${where})`, async () => {
          const c = base();
          c.destinationOffsets[4] = c.destinationOffsets[0]!;
          await expectRejected(c, { kinds }, type, 'destinationOffsets', 0, /overlaps buffer 4's/);
        });
      }

      it("under 'trust' a device range past its array is cut at the array's end (no write outside it)", async () => {
        const c = base();
        c.destinationOffsets[4] = c.destinationLength - 3;
        const { words } = await runCopy(c, { kinds: { destinationOffsets: 'device' }, guaranteeChecks: 'trust' });
        expect(words.length).toBe(c.destinationLength);
      });

      it('a per-buffer array shorter than numBuffers, and a misspelled field', async () => {
        const source = backend.upload(new Uint32Array(8));
        const destination = backend.upload(new Uint32Array(8));
        expect(() => DeviceBatchedCopy.plan({ source, destination, sizes: p.perSegment([1, 1]), sourceOffsets: p.perSegment([0]), destinationOffsets: p.perSegment([0, 1]), numBuffers: p.constant(2) }, env({ backend }))).toThrow(
          /sourceOffsets: 1 per-segment values for numSegments 2/,
        );
        const bad = { source, destination, sizes: p.constant(1), sourceOffset: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.constant(1) };
        await expect(DeviceBatchedCopy.copy(bad as never, env({ backend }))).rejects.toThrow(SegkitUsageError);
        await expect(DeviceBatchedCopy.copy(bad as never, env({ backend }))).rejects.toThrow(/unknown field 'sourceOffset' \(did you mean 'sourceOffsets'\?\)/);
        expect(() => DeviceBatchedCopy.plan({ source, destination: source, sizes: p.constant(1), sourceOffsets: p.constant(0), destinationOffsets: p.constant(1), numBuffers: p.constant(1) }, env({ backend }))).toThrow(/another array than source/);
        expect(Array.from(await backend.download(destination))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
        source.destroy();
        destination.destroy();
      });
    });
  });
}
