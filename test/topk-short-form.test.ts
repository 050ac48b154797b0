/**
 * The one-call form `DeviceBatchedTopK.topk(scores, { rows, k, weights })` on every backend here
 * (CPU, CPU with workers, WebGPU on lavapipe when an adapter answers): the same bits as the two-step
 * plan/run with the same parameters, outputs allocated when not given (owned by the caller) and
 * used when given, bad options refused naming the field with nothing left allocated.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type Backend, DeviceBatchedTopK, SegkitUsageError, env, p } from '../src/index.js';
import { testBackends } from '../src/testing.js';
import { rng } from './helpers.js';
import { runWithOwnTemp } from './conformance/common.js';

process.env.LP_NUM_THREADS ??= '1';
// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const backends = await testBackends();
afterAll(() => backends.destroy());

const rows = 37;
const cols = 64;
const random = rng(5);
const scores = Float32Array.from({ length: rows * cols }, () => Math.round((random() - 0.5) * 40) / 4);

/** The two-step API's outputs for the same call. */
async function twoStep(backend: Backend, k: number, largest: boolean, weights: 'softmax' | 'sigmoid-renormalize' | undefined, scale?: number) {
  const keysIn = backend.upload(scores);
  const keysOut = backend.alloc('f32', rows * k);
  const valuesOut = backend.alloc('u32', rows * k);
  const weightsOut = weights === undefined ? undefined : backend.alloc('f32', rows * k);
  const plan = DeviceBatchedTopK.plan(
    {
      keysIn,
      keysOut,
      valuesOut,
      weightsOut,
      weights: weights === undefined ? undefined : { kind: weights, scale },
      segmentSizes: p.constant(cols),
      k: p.uniform(k, { min: 1, max: 64 }),
      selectDirection: p.constantOption(largest ? 'max' : 'min'),
      numSegments: p.uniform(rows),
    },
    env({ backend }),
  );
  await runWithOwnTemp(backend, plan);
  const out = {
    keys: await backend.download(keysOut),
    indices: await backend.download(valuesOut),
    weights: weightsOut === undefined ? undefined : await backend.download(weightsOut),
  };
  plan.destroy();
  for (const a of [keysIn, keysOut, valuesOut, weightsOut]) a?.destroy();
  return out;
}

for (const entry of backends.entries) {
  describe.skipIf(entry.skip !== undefined)(`DeviceBatchedTopK.topk on ${entry.name}${entry.skip === undefined ? '' : ` (skipped: ${entry.skip})`}`, () => {
    it('gives the two-step API\'s bits, allocating what is not given', async () => {
      const backend = await entry.backend();
      const scoresDevice = backend.upload(scores);
      const before = backend.stats().liveArrays;
      const { keys, indices, weights } = await DeviceBatchedTopK.topk(scoresDevice, { rows, k: 2, weights: 'softmax' });
      expect(backend.stats().liveArrays - before).toBe(3);
      const expected = await twoStep(backend, 2, true, 'softmax');
      expect(await backend.download(keys)).toEqual(expected.keys);
      expect(await backend.download(indices)).toEqual(expected.indices);
      expect(await backend.download(weights)).toEqual(expected.weights);
      for (const a of [keys, indices, weights]) a.destroy();

      // The smallest, sigmoid weights with a scale, no weights; given outputs are used, not allocated.
      const keysOut = backend.alloc('f32', rows * 5);
      const small = await DeviceBatchedTopK.topk(scoresDevice, { rows, k: 5, largest: false, weights: { kind: 'sigmoid-renormalize', scale: 2.5 }, keysOut });
      expect(small.keys).toBe(keysOut);
      const expectedSmall = await twoStep(backend, 5, false, 'sigmoid-renormalize', 2.5);
      expect(await backend.download(small.keys)).toEqual(expectedSmall.keys);
      expect(await backend.download(small.indices)).toEqual(expectedSmall.indices);
      expect(await backend.download(small.weights)).toEqual(expectedSmall.weights);
      for (const a of [small.keys, small.indices, small.weights]) a.destroy();
      const plain = await DeviceBatchedTopK.topk(scoresDevice, { rows, k: 3 });
      expect(plain.weights).toBeUndefined();
      expect(await backend.download(plain.indices)).toEqual((await twoStep(backend, 3, true, undefined)).indices);
      plain.keys.destroy();
      plain.indices.destroy();
      expect(backend.stats().liveArrays).toBe(before);
      scoresDevice.destroy();
    });

    it('refuses bad options naming the field, leaving nothing allocated', async () => {
      const backend = await entry.backend();
      const scoresDevice = backend.upload(scores);
      const before = backend.stats().liveArrays;
      const cases: [object, string][] = [
        [{ rows: 7, k: 2 }, "rows: 7 rows do not divide scores' 2368 elements into equal rows"],
        [{ rows, k: 0 }, 'k: expected an integer in [1, 4294967295]; got number 0'],
        [{ rows, k: 2.5 }, 'k: expected an integer in [1, 4294967295]; got number 2.5'],
        [{ rows, k: 2, rowz: 3 }, "topk options: unknown field 'rowz' (did you mean 'rows'?)"],
        [{ k: 2 }, "topk options: missing required field 'rows'"],
        [{ rows, k: 2, weights: 'softmx' }, "weights.kind: expected 'softmax' or 'sigmoid-renormalize'; got string softmx"],
        [{ rows, k: 2, largest: 'yes' }, 'largest: expected true or false; got string yes'],
      ];
      for (const [options, message] of cases) {
        const error = await DeviceBatchedTopK.topk(scoresDevice, options as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, message).toBeInstanceOf(SegkitUsageError);
        expect((error as Error).message).toBe(message);
      }
      expect(backend.stats().liveArrays).toBe(before);
      scoresDevice.destroy();
    });
  });
}
