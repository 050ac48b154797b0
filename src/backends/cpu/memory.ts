import type { DType, DeviceArray } from '../backend.js';

/**
 * Views of one CPU device allocation. Kernels read and write device memory through these; nothing
 * outside the backends and kernels can reach them (they are not exported from the package), so
 * device memory stays apart from user memory as on a GPU.
 */
export interface DeviceMemory {
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  readonly u8: Uint8Array;
}

const memoryOf = new WeakMap<DeviceArray, DeviceMemory>();

/** Registers the storage behind a CPU DeviceArray. */
export function attachMemory(array: DeviceArray, buffer: ArrayBuffer | SharedArrayBuffer): void {
  const words = buffer.byteLength >>> 2;
  memoryOf.set(array, {
    u32: new Uint32Array(buffer, 0, words),
    i32: new Int32Array(buffer, 0, words),
    f32: new Float32Array(buffer, 0, words),
    u8: new Uint8Array(buffer),
  });
}

/**
 * The device memory of a CPU DeviceArray, as a kernel sees it. Reading it is a device-side read:
 * it is not a download and is not counted as one.
 */
export function deviceMemory(array: DeviceArray): DeviceMemory {
  const memory = memoryOf.get(array);
  if (memory === undefined) throw new Error(`internal: no CPU device memory behind this ${array.dtype} array`);
  return memory;
}

/** Forgets the storage of a destroyed array. */
export function detachMemory(array: DeviceArray): void {
  memoryOf.delete(array);
}

/** Element view of a dtype within a memory. */
export function viewOf(memory: DeviceMemory, dtype: DType): Uint32Array | Int32Array | Float32Array | Uint8Array {
  return memory[dtype];
}
