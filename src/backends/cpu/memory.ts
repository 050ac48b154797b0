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

/**
 * Registers the storage behind a CPU DeviceArray: `bytes` bytes (a multiple of 4) at `byteOffset`
 * of `buffer`.
 */
export function attachMemory(array: DeviceArray, buffer: ArrayBuffer | SharedArrayBuffer, byteOffset = 0, bytes = buffer.byteLength - byteOffset): void {
  const words = bytes >>> 2;
  memoryOf.set(array, {
    u32: new Uint32Array(buffer, byteOffset, words),
    i32: new Int32Array(buffer, byteOffset, words),
    f32: new Float32Array(buffer, byteOffset, words),
    u8: new Uint8Array(buffer, byteOffset, bytes),
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

/** A range of a {@link SharedDeviceHeap}: `bytes` bytes at `offset` of `buffer`. */
export interface HeapRange {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly bytes: number;
}

/** One slab of small allocations, with its free ranges sorted by offset (disjoint, never adjacent). */
interface Slab {
  readonly buffer: SharedArrayBuffer;
  readonly freeOffsets: number[];
  readonly freeSizes: number[];
}

/** Alignment of every range: WebGPU's storage-offset alignment, and no cache line shared by two arrays. */
const rangeAlignment = 256;
/** Bytes of a slab shared by small arrays. */
const smallSlabBytes = 16 << 20;
/** Arrays of this size and more get a slab of their own. */
const largeArrayBytes = 4 << 20;

const alignUp = (bytes: number, alignment: number) => Math.ceil(bytes / alignment) * alignment;

/**
 * Device memory of a CPU backend whose kernels run on worker threads: SharedArrayBuffer slabs that
 * the backend hands out in ranges and takes back when an array is destroyed, for the next one.
 *
 * Why not one SharedArrayBuffer per array: V8 frees shared memory only after every thread that
 * received it has garbage-collected its handle, and shared memory adds nothing to any thread's
 * garbage-collection pressure. A worker thread allocates almost nothing, so it almost never
 * collects: it kept every array a launch had shown it, and a loop of upload, select, destroy on
 * 3 Mi keys grew the process by ~38 MB a call without bound. Slabs are few and live as long as the
 * backend, so what a worker holds is never more than the slabs.
 *
 * Small arrays share 16 MiB slabs (best fit, free ranges merged on release); an array of 4 MiB or
 * more gets a slab of its own, of a power-of-two size, which later arrays of that size class reuse.
 * The heap therefore holds no more than the most memory that was live at once in each size class
 * (for a run of ever larger arrays, less than four times the largest), and lets it all go when the
 * backend is destroyed.
 */
export class SharedDeviceHeap {
  private readonly slabs: Slab[] = [];
  /** Free slabs of large arrays by size. */
  private readonly freeLarge = new Map<number, SharedArrayBuffer[]>();
  private readonly empty = new SharedArrayBuffer(0);
  private reserved = 0;

  /** Bytes of all slabs (in use or free). */
  get reservedBytes(): number {
    return this.reserved;
  }

  /** A range of at least `bytes` bytes, zero-filled when `zero` (contents are undefined otherwise). */
  allocate(bytes: number, zero: boolean): HeapRange {
    if (bytes === 0) return { buffer: this.empty, offset: 0, bytes: 0 };
    if (bytes >= largeArrayBytes) return this.allocateLarge(bytes, zero);
    const size = alignUp(bytes, rangeAlignment);
    let best: Slab | undefined;
    let bestIndex = -1;
    for (const slab of this.slabs) {
      for (let i = 0; i < slab.freeSizes.length; i++) {
        const free = slab.freeSizes[i]!;
        if (free >= size && (best === undefined || free < best.freeSizes[bestIndex]!)) {
          best = slab;
          bestIndex = i;
        }
      }
    }
    if (best === undefined) {
      best = { buffer: new SharedArrayBuffer(smallSlabBytes), freeOffsets: [0], freeSizes: [smallSlabBytes] };
      this.slabs.push(best);
      this.reserved += smallSlabBytes;
      bestIndex = 0;
    }
    const offset = best.freeOffsets[bestIndex]!;
    if (best.freeSizes[bestIndex] === size) {
      best.freeOffsets.splice(bestIndex, 1);
      best.freeSizes.splice(bestIndex, 1);
    } else {
      best.freeOffsets[bestIndex] = offset + size;
      best.freeSizes[bestIndex] = best.freeSizes[bestIndex]! - size;
    }
    if (zero) new Uint8Array(best.buffer, offset, size).fill(0);
    return { buffer: best.buffer, offset, bytes: size };
  }

  private allocateLarge(bytes: number, zero: boolean): HeapRange {
    let size = largeArrayBytes;
    while (size < bytes) size *= 2;
    const reused = this.freeLarge.get(size)?.pop();
    if (reused !== undefined) {
      if (zero) new Uint8Array(reused).fill(0);
      return { buffer: reused, offset: 0, bytes: size };
    }
    this.reserved += size;
    return { buffer: new SharedArrayBuffer(size), offset: 0, bytes: size };
  }

  /** Takes a range back; it must not be used afterwards. */
  release(range: HeapRange): void {
    if (range.bytes === 0) return;
    if (range.bytes >= largeArrayBytes) {
      let free = this.freeLarge.get(range.bytes);
      if (free === undefined) this.freeLarge.set(range.bytes, (free = []));
      free.push(range.buffer);
      return;
    }
    const slab = this.slabs.find((s) => s.buffer === range.buffer);
    if (slab === undefined) throw new Error('internal: a CPU device range released to a heap that does not hold it');
    const { freeOffsets, freeSizes } = slab;
    let i = 0;
    while (i < freeOffsets.length && freeOffsets[i]! < range.offset) i++;
    let offset = range.offset;
    let size = range.bytes;
    // Merge with the free range that ends where this one starts, and with the one that starts where it ends.
    if (i > 0 && freeOffsets[i - 1]! + freeSizes[i - 1]! === offset) {
      i--;
      offset = freeOffsets[i]!;
      size += freeSizes[i]!;
      freeOffsets.splice(i, 1);
      freeSizes.splice(i, 1);
    }
    if (i < freeOffsets.length && offset + size === freeOffsets[i]) {
      size += freeSizes[i]!;
      freeOffsets.splice(i, 1);
      freeSizes.splice(i, 1);
    }
    freeOffsets.splice(i, 0, offset);
    freeSizes.splice(i, 0, size);
  }

  /** Lets every slab go (the backend was destroyed). */
  clear(): void {
    this.slabs.length = 0;
    this.freeLarge.clear();
    this.reserved = 0;
  }
}
