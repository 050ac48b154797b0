import { describe, expect, it } from 'vitest';
import { type Backend, type DeviceArray, cpuBackend } from '../src/index.js';
import { checkDeviceArray } from '../src/backends/backend.js';
import { deviceMemory, slabThread, wasmScratchBytes } from '../src/backends/cpu/memory.js';
import { thrown, expectUsageError, rng } from './helpers.js';

describe('cpuBackend: device memory is apart from host memory', () => {
  it('upload copies: changing the source afterwards does not reach the device', async () => {
    const cpu = cpuBackend();
    const source = new Float32Array([1, 2, 3]);
    const device = cpu.upload(source);
    source[0] = 99;
    source.fill(-1);
    expect(Array.from(await cpu.download(device))).toEqual([1, 2, 3]);
  });

  it('download copies: changing a downloaded array does not reach the device', async () => {
    const cpu = cpuBackend();
    const device = cpu.upload(new Int32Array([5, -6, 7]));
    const first = await cpu.download(device);
    first[1] = 0;
    const second = await cpu.download(device);
    expect(second).not.toBe(first);
    expect(Array.from(second)).toEqual([5, -6, 7]);
  });

  it('upload of a subarray copies only the view, bit-exactly', async () => {
    const cpu = cpuBackend();
    const whole = new Float32Array([0, NaN, -0, Infinity, 4]);
    const device = cpu.upload(whole.subarray(1, 4));
    expect(device.length).toBe(3);
    const back = await cpu.download(device);
    expect(Number.isNaN(back[0])).toBe(true);
    expect(Object.is(back[1], -0)).toBe(true);
    expect(back[2]).toBe(Infinity);
  });

  it('keeps dtype and length; download returns the dtype’s typed array', async () => {
    const cpu = cpuBackend();
    const f32 = cpu.upload(new Float32Array([1.5]));
    const i32 = cpu.upload(new Int32Array([-1]));
    const u32 = cpu.upload(new Uint32Array([0xffffffff]));
    expect([f32.dtype, i32.dtype, u32.dtype]).toEqual(['f32', 'i32', 'u32']);
    expect(await cpu.download(f32)).toEqual(new Float32Array([1.5]));
    expect(await cpu.download(i32)).toEqual(new Int32Array([-1]));
    expect(await cpu.download(u32)).toEqual(new Uint32Array([0xffffffff]));
    expect(f32.backend).toBe(cpu);
  });

  it('alloc gives zero-filled arrays of every dtype, including u8 of any length', async () => {
    const cpu = cpuBackend();
    for (const dtype of ['f32', 'i32', 'u32', 'u8'] as const) {
      const array = cpu.alloc(dtype, 5);
      expect(array.dtype).toBe(dtype);
      expect(array.length).toBe(5);
      const host = await cpu.download(array);
      expect(host.length).toBe(5);
      expect(Array.from(host)).toEqual([0, 0, 0, 0, 0]);
    }
    expect(await cpu.download(cpu.alloc('u8', 0))).toEqual(new Uint8Array(0));
    expect(await cpu.download(cpu.alloc('u8', 3))).toBeInstanceOf(Uint8Array);
  });

  it('with workers, arrays just under 4 MiB released and arrays of 4 MiB allocated after them never share memory', async () => {
    const backend = cpuBackend({ workers: 1 });
    try {
      // 1048575 u32 align to exactly 4 MiB: they sit in a shared slab and must go back to it.
      backend.upload(new Uint32Array(1048575)).destroy();
      backend.upload(new Uint32Array(1048575)).destroy();
      const x = backend.upload(Uint32Array.from({ length: 1048576 }, (_, i) => i));
      const y = backend.upload(new Uint32Array(1048576).fill(7));
      expect(Array.from((await backend.download(x)).subarray(0, 4))).toEqual([0, 1, 2, 3]);
      expect((await backend.download(y))[0]).toBe(7);
    } finally {
      backend.destroy();
    }
  });

  it('a DeviceArray exposes no host view of its data', () => {
    const cpu = cpuBackend();
    const device = cpu.upload(new Float32Array([1, 2]));
    expect(ArrayBuffer.isView(device)).toBe(false);
    for (const value of Object.values(device)) {
      expect(ArrayBuffer.isView(value) || value instanceof ArrayBuffer).toBe(false);
    }
    expect((device as unknown as { [index: number]: unknown })[0]).toBeUndefined();
  });
});

describe('cpuBackend: stats', () => {
  it('counts uploads, downloads and their bytes; resetStats zeroes them', async () => {
    const cpu = cpuBackend();
    expect(cpu.stats()).toEqual({
      uploads: 0,
      downloads: 0,
      bytesUploaded: 0,
      bytesDownloaded: 0,
      launches: 0,
      kernelsCompiled: 0,
      launchesByKernel: {},
      liveArrays: 0,
      liveBytes: 0,
    });
    const a = cpu.upload(new Float32Array(10));
    cpu.upload(new Int32Array(3).subarray(1));
    const b = cpu.alloc('u8', 7);
    await cpu.download(a);
    await cpu.download(b);
    expect(cpu.stats()).toMatchObject({ uploads: 2, bytesUploaded: 40 + 8, downloads: 2, bytesDownloaded: 40 + 7, launches: 0 });
    cpu.resetStats();
    expect(cpu.stats()).toMatchObject({ uploads: 0, downloads: 0, bytesUploaded: 0, bytesDownloaded: 0 });
  });

  for (const workers of [0, 1]) {
    it(`counts live arrays and their bytes until destroyed, through resetStats (${workers} workers)`, () => {
      const cpu = cpuBackend({ workers });
      const a = cpu.upload(new Float32Array(10));
      const b = cpu.alloc('u8', 7);
      const c = cpu.alloc('i32', 0);
      expect(cpu.stats()).toMatchObject({ liveArrays: 3, liveBytes: 40 + 7 });
      cpu.resetStats();
      expect(cpu.stats()).toMatchObject({ liveArrays: 3, liveBytes: 40 + 7 });
      a.destroy();
      a.destroy();
      expect(cpu.stats()).toMatchObject({ liveArrays: 2, liveBytes: 7 });
      b.destroy();
      c.destroy();
      expect(cpu.stats()).toMatchObject({ liveArrays: 0, liveBytes: 0 });
      cpu.destroy();
    });
  }

  it('alloc and synchronize are no transfers', async () => {
    const cpu = cpuBackend();
    cpu.alloc('f32', 100);
    await cpu.synchronize();
    expect(cpu.stats()).toMatchObject({ uploads: 0, downloads: 0, bytesUploaded: 0, bytesDownloaded: 0 });
  });

  it('returns a snapshot: changing it does not change the counters', () => {
    const cpu = cpuBackend();
    const snapshot = cpu.stats();
    snapshot.uploads = 5;
    snapshot.launchesByKernel['x'] = 1;
    expect(cpu.stats()).toMatchObject({ uploads: 0, launchesByKernel: {} });
  });

  it('counts per backend', () => {
    const one = cpuBackend();
    const two = cpuBackend();
    one.upload(new Uint32Array(1));
    expect(two.stats().uploads).toBe(0);
  });

  it('reports its capabilities, with overrides', () => {
    expect(cpuBackend().name).toBe('cpu');
    const caps = cpuBackend().capabilities;
    expect(caps.maxWorkgroupSize).toBeGreaterThan(0);
    expect(caps.workgroupStorageBytes).toBeGreaterThan(0);
    expect(caps.maxStorageBufferBytes).toBeGreaterThan(0);
    expect(caps.maxBufferBytes).toBeGreaterThanOrEqual(caps.maxStorageBufferBytes);
    expect(cpuBackend({ capabilities: { workgroupStorageBytes: 16384 } }).capabilities.workgroupStorageBytes).toBe(16384);
    expect(Object.isFrozen(caps)).toBe(true);
  });
});

describe('DeviceArray misuse', () => {
  const cpu = cpuBackend();

  it('a DeviceArray of another backend', () => {
    const other = cpuBackend();
    const array = other.upload(new Float32Array(2));
    expectUsageError(
      thrown(() => checkDeviceArray(array, cpu, 'keysIn')),
      'keysIn: the DeviceArray belongs to another cpu backend instance than the one running this call; upload the data to this backend',
    );
  });

  it('download of another backend’s DeviceArray', async () => {
    const other = cpuBackend();
    const array = other.upload(new Float32Array(2));
    const error = await cpu.download(array).catch((e: unknown) => e);
    expectUsageError(
      error,
      'download(array): the DeviceArray belongs to another cpu backend instance than the one running this call; upload the data to this backend',
    );
  });

  it('a destroyed DeviceArray', () => {
    const array = cpu.upload(new Float32Array(2));
    array.destroy();
    expect(array.destroyed).toBe(true);
    array.destroy(); // twice is harmless
    expectUsageError(thrown(() => checkDeviceArray(array, cpu, 'keysIn')), 'keysIn: the DeviceArray was destroyed and cannot be used');
  });

  it('download after destroy rejects', async () => {
    const array = cpu.upload(new Int32Array([1]));
    array.destroy();
    expectUsageError(await cpu.download(array).catch((e: unknown) => e), 'download(array): the DeviceArray was destroyed and cannot be used');
  });

  it('the wrong dtype', () => {
    const array = cpu.alloc('u8', 4);
    expectUsageError(
      thrown(() => checkDeviceArray(array, cpu, 'keysIn', ['f32', 'i32', 'u32'])),
      "keysIn: dtype 'u8' is not accepted here; expected 'f32' or 'i32' or 'u32'",
    );
    expect(() => checkDeviceArray(cpu.alloc('f32', 1), cpu, 'keysIn', ['f32', 'i32', 'u32'])).not.toThrow();
  });

  it('something that is not a DeviceArray', () => {
    for (const [value, got] of [
      [new Float32Array(2), 'a Float32Array'],
      [[1, 2, 3], 'an array of length 3'],
      [null, 'null'],
      [undefined, 'undefined undefined'],
      [{ dtype: 'f32', length: 1 }, 'an object (Object)'],
      [4, 'number 4'],
    ] as const) {
      expectUsageError(thrown(() => checkDeviceArray(value as unknown as DeviceArray, cpu, 'keysIn')), `keysIn: expected a DeviceArray, got ${got}`);
    }
  });

  it('upload of something that is not a Float32Array, Int32Array or Uint32Array', () => {
    for (const [value, got] of [
      [[1, 2, 3], 'an array of length 3'],
      [new Float64Array(2), 'a Float64Array'],
      [new Uint8Array(2), 'a Uint8Array'],
      [null, 'null'],
    ] as const) {
      expectUsageError(
        thrown(() => cpu.upload(value as unknown as Float32Array)),
        `upload(data): data must be a Float32Array, Int32Array or Uint32Array; got ${got}`,
      );
    }
  });

  it('alloc of a bad dtype or length', () => {
    expectUsageError(
      thrown(() => cpu.alloc('f64' as 'f32', 4)),
      "alloc(dtype): 'f64' is not a dtype; expected 'f32', 'i32', 'u32' or 'u8'",
    );
    for (const length of [-1, 1.5, NaN, Infinity]) {
      expectUsageError(thrown(() => cpu.alloc('f32', length)), `alloc(length): ${length} is not a non-negative integer`);
    }
    const small = cpuBackend({ capabilities: { maxBufferBytes: 1024 } });
    expectUsageError(thrown(() => small.alloc('f32', 257)), "alloc(length): 257 f32 elements (1028 bytes) exceed the backend's largest buffer of 1024 bytes (maxBufferBytes)");
    expectUsageError(thrown(() => small.upload(new Int32Array(257))), "upload(data): 257 i32 elements (1028 bytes) exceed the backend's largest buffer of 1024 bytes (maxBufferBytes)");
    expect(small.alloc('f32', 256).length).toBe(256);
    expect(small.stats().liveArrays).toBe(1);
    // A binding limit is no allocation limit (as on WebGPU): kernels check what they bind.
    expect(cpuBackend({ capabilities: { maxStorageBufferBytes: 1024 } }).alloc('f32', 257).length).toBe(257);
  });

  it('a destroyed backend', async () => {
    const dead: Backend = cpuBackend();
    const array = dead.upload(new Float32Array(1));
    dead.destroy();
    const message = 'the cpu backend was destroyed and cannot be used';
    expectUsageError(thrown(() => dead.upload(new Float32Array(1))), message);
    expectUsageError(thrown(() => dead.alloc('f32', 1)), message);
    expectUsageError(await dead.download(array).catch((e: unknown) => e), message);
    expectUsageError(await dead.synchronize().catch((e: unknown) => e), message);
  });
});

describe('cpuBackend with workers: device memory from a shared heap', () => {
  const heapBytes = (backend: unknown) => (backend as { heapBytes(): number }).heapBytes();
  const MiB = 1 << 20;

  it('reuses the memory of destroyed arrays, small and large, whatever the order', async () => {
    const cpu = cpuBackend({ workers: 1 });
    const random = rng(3);
    const live: DeviceArray[] = [];
    // Sizes from 1 byte to 6 MiB (both sides of the 4 MiB large-array size); at most 8 alive.
    const step = () => {
      const bytes = 1 + Math.floor(random() ** 3 * 6 * MiB);
      live.push(cpu.alloc('u8', bytes));
      if (live.length > 8) live.splice(Math.floor(random() * live.length), 1)[0]!.destroy();
    };
    for (let i = 0; i < 400; i++) step();
    // At most 9 arrays alive at once: large ones (4 to 6 MiB) each in an 8 MiB slab, small ones at
    // worst each in a 16 MiB slab of its own. Without reuse, 400 arrays of ~1.5 MiB on average.
    expect(heapBytes(cpu)).toBeLessThanOrEqual(9 * 8 * MiB + 9 * 16 * MiB);
    for (const array of live) array.destroy();
    const idle = heapBytes(cpu);
    for (let i = 0; i < 100; i++) cpu.alloc('f32', 1000 + i).destroy();
    expect(heapBytes(cpu)).toBe(idle);
    cpu.destroy();
    expect(heapBytes(cpu)).toBe(0);
  });

  it('slabs are shared WebAssembly memories, with a scratch region per thread after every array', () => {
    const cpu = cpuBackend({ workers: 1 });
    // A small array, a small slab filled to its end, a large array that fills its slab.
    for (const bytes of [4000, 16 * MiB - 4096, 4 * MiB]) {
      const array = cpu.alloc('u8', bytes);
      const memory = deviceMemory(array);
      const slab = memory.slab!;
      expect(slab.memory.buffer).toBe(memory.u8.buffer);
      expect(memory.u8.byteOffset + memory.u8.byteLength).toBeLessThanOrEqual(slab.scratchAt);
      // The calling thread and the worker.
      expect(slab.regions).toBe(2);
      const thread = slabThread(slab)!;
      expect(slabThread(slab)).toBe(thread);
      expect(thread.scratch).toBeGreaterThan(slab.scratchAt);
      expect(thread.scratch + wasmScratchBytes).toBeLessThanOrEqual(slab.memory.buffer.byteLength);
    }
    cpu.destroy();
    // Without workers, plain ArrayBuffers: no module's memory.
    const plain = cpuBackend({ workers: 0 });
    expect(deviceMemory(plain.alloc('f32', 10)).slab).toBeUndefined();
    plain.destroy();
  });

  it('alloc returns zeros over reused memory; arrays never overlap', async () => {
    const cpu = cpuBackend({ workers: 1 });
    for (const length of [5, 1000, 2 * MiB]) {
      const dirty = cpu.upload(new Uint32Array(length).fill(0xdeadbeef));
      dirty.destroy();
      const fresh = cpu.alloc('u32', length);
      expect((await cpu.download(fresh)).every((x) => x === 0)).toBe(true);
      fresh.destroy();
    }
    const arrays = Array.from({ length: 40 }, (_, i) => cpu.upload(new Int32Array(1 + ((i * 37) % 300)).fill(i)));
    for (let i = 0; i < arrays.length; i += 3) arrays[i]!.destroy();
    const more = Array.from({ length: 20 }, (_, i) => cpu.upload(new Int32Array(1 + ((i * 53) % 200)).fill(100 + i)));
    for (const [i, array] of arrays.entries()) {
      if (i % 3 !== 0) expect((await cpu.download(array)).every((x) => x === i)).toBe(true);
    }
    for (const [i, array] of more.entries()) expect((await cpu.download(array)).every((x) => x === 100 + i)).toBe(true);
    cpu.destroy();
  });
});
