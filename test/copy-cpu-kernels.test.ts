import { describe, expect, it } from 'vitest';
import { DeviceBatchedCopy, cpuBackend, env, p, referenceBatchedCopy } from '../src/index.js';
import { deviceWords, moveWords } from '../src/algorithms/batched-copy/cpu/words.js';
import { rng } from './helpers.js';

/*
 * What the CPU copy kernels do beyond the conformance suite: the word moves in memory shared with
 * worker threads (runs whose ends lie at different addresses modulo 8 go through scratch runs) and a
 * plan's context kept across runs.
 */

/** Words with NaN payloads, -0 and infinities among random ones. */
function words(length: number, seed: number): Uint32Array {
  const random = rng(seed);
  const special = [0x7fc00001, 0xffc12345, 0x80000000, 0x7f800000, 0xff800000, 0x00000001];
  return Uint32Array.from({ length }, (_, i) => (i % 7 === 2 ? special[i % special.length]! : Math.floor(random() * 2 ** 32)));
}

/** A view of `length` words at word `at` of a new buffer of either kind. */
function view(kind: 'shared' | 'plain', length: number, at: number): Uint32Array {
  const buffer = kind === 'shared' ? new SharedArrayBuffer((length + at) * 4) : new ArrayBuffer((length + at) * 4);
  return new Uint32Array(buffer, at * 4, length);
}

describe('moveWords (CPU copy kernels)', () => {
  // Runs around the scratch threshold (128 words) and across scratch runs (4096 words each).
  const counts = [0, 1, 127, 128, 129, 4095, 4096, 4097, 8192 + 3];

  for (const kind of ['shared', 'plain'] as const) {
    it(`moves every run word for word, at every relative word offset (${kind} memory)`, () => {
      const length = 9000;
      const initial = words(length + 4, 1);
      for (const sourceStart of [0, 1]) {
        for (const destinationStart of [0, 1]) {
          for (const count of counts) {
            for (const [from, to] of [[0, 0], [1, 2], [3, 0], [2, 3]] as const) {
              const source = view(kind, length + 4, sourceStart);
              source.set(initial);
              const destination = view(kind, length + 4, destinationStart);
              destination.fill(0xdeadbeef);
              moveWords(deviceWords(destination), to, deviceWords(source), from, count);
              const want = new Uint32Array(length + 4).fill(0xdeadbeef);
              want.set(initial.subarray(from, from + count), to);
              const what = `${kind} memory, source at word ${sourceStart}, destination at word ${destinationStart}, ${count} words from ${from} to ${to}`;
              for (let i = 0; i < want.length; i++) if (destination[i] !== want[i]) expect(`${what}: word ${i} = ${destination[i]}`).toBe(`${what}: word ${i} = ${want[i]}`);
            }
          }
        }
      }
    });
  }

  it('knows shared memory and where a view starts modulo 8 bytes', () => {
    expect(deviceWords(view('shared', 4, 1))).toMatchObject({ shared: true, parity: 1 });
    expect(deviceWords(view('plain', 4, 2))).toMatchObject({ shared: false, parity: 0 });
  });
});

describe('a copy plan run again on the CPU', () => {
  for (const workers of [0, 1]) {
    it(`reads device-only values anew, and takes other temporary storage (never the last run's) (${workers} workers)`, async () => {
      const backend = cpuBackend({ workers });
      const source = backend.upload(words(20000, 2));
      const destination = backend.upload(new Uint32Array(20000).fill(7));
      const sizes = backend.upload(new Uint32Array([300, 5000, 0, 2001]));
      const sourceOffsets = [1, 9000, 0, 14001];
      const destinationOffsets = [0, 301, 6400, 8500];
      const plan = DeviceBatchedCopy.plan(
        { source, destination, sizes: p.perSegment(sizes, { max: 8000 }), sourceOffsets: p.perSegment(sourceOffsets), destinationOffsets: p.perSegment(destinationOffsets), numBuffers: p.constant(4) },
        env({ backend }),
      );
      expect(plan.tempStorageBytes).toBeGreaterThan(0);
      const expected = (sizeValues: number[], before: Uint32Array) =>
        Array.from(referenceBatchedCopy({ source: words(20000, 2), destination: before, sourceOffsets, destinationOffsets, sizes: sizeValues }));
      const firstTemp = backend.alloc('u8', plan.tempStorageBytes);
      await plan.run(firstTemp);
      const afterFirst = await backend.download(destination);
      expect(Array.from(afterFirst)).toEqual(expected([300, 5000, 0, 2001], new Uint32Array(20000).fill(7)));

      // New sizes written on the device (by another copy) and another temporary storage array: the
      // same plan copies the new sizes, with either array.
      const resized = backend.upload(new Uint32Array([10, 6000, 1999, 0]));
      await DeviceBatchedCopy.copy({ source: resized, destination: sizes, sizes: p.constant(4), sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.constant(1) }, env({ backend }));
      const secondTemp = backend.alloc('u8', plan.tempStorageBytes);
      await plan.run(secondTemp);
      const afterSecond = await backend.download(destination);
      expect(Array.from(afterSecond)).toEqual(expected([10, 6000, 1999, 0], afterFirst));

      // And back to the first temporary storage array, with sizes changed once more.
      await DeviceBatchedCopy.copy({ source: backend.upload(new Uint32Array([1, 2, 3, 4])), destination: sizes, sizes: p.constant(4), sourceOffsets: p.constant(0), destinationOffsets: p.constant(0), numBuffers: p.constant(1) }, env({ backend }));
      await plan.run(firstTemp);
      expect(Array.from(await backend.download(destination))).toEqual(expected([1, 2, 3, 4], afterSecond));

      // A run never touches temporary storage it was not given: the first array's memory, once
      // destroyed, goes to the next allocation (with workers, device memory is reused).
      firstTemp.destroy();
      const pattern = Uint32Array.from({ length: Math.ceil(plan.tempStorageBytes / 4) }, (_, i) => 0x5eed0000 + i);
      const bystander = backend.upload(pattern);
      await plan.run(secondTemp);
      expect(Array.from(await backend.download(bystander))).toEqual(Array.from(pattern));
      backend.destroy();
    });
  }
});

describe('copy launches and worker threads', () => {
  it('a copy bounded by a small destination stays on the calling thread, however large the size bound', async () => {
    const backend = cpuBackend({ workers: 1 });
    const source = backend.upload(words(4096, 3));
    const destination = backend.alloc('u32', 4096);
    // 64 buffers of up to 1024 words (device-only sizes) would be 64K words by the bound alone, past
    // the threshold for worker threads; into 4096 words of destination they move at most 4096.
    const sizes = backend.upload(new Uint32Array(64).fill(64));
    const offsets = Array.from({ length: 64 }, (_, i) => i * 64);
    await DeviceBatchedCopy.copy({ source, destination, sizes: p.perSegment(sizes, { max: 1024 }), sourceOffsets: p.perSegment(offsets), destinationOffsets: p.perSegment(offsets.slice().reverse()), numBuffers: p.constant(64) }, env({ backend }));
    const got = await backend.download(destination);
    expect(Array.from(got)).toEqual(Array.from(referenceBatchedCopy({ source: words(4096, 3), destination: new Uint32Array(4096), sourceOffsets: offsets, destinationOffsets: offsets.slice().reverse(), sizes: new Array(64).fill(64) })));
    expect((backend as unknown as { workerStats(): { parallelLaunches: number } }).workerStats().parallelLaunches).toBe(0);
    backend.destroy();
  });
});
