import type { DType, DeviceArray } from '../backend.js';
import { maxWasmPages } from './wasm.js';

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
  /** The heap slab's WebAssembly memory that holds these views, where there is one (with workers). */
  readonly slab: SlabMemory | undefined;
}

const memoryOf = new WeakMap<DeviceArray, DeviceMemory>();

/**
 * Registers the storage behind a CPU DeviceArray: `bytes` bytes (a multiple of 4) at `byteOffset`
 * of `buffer`, which is `slab`'s memory where it has one.
 */
export function attachMemory(array: DeviceArray, buffer: ArrayBuffer | SharedArrayBuffer, byteOffset = 0, bytes = buffer.byteLength - byteOffset, slab?: SlabMemory): void {
  const words = bytes >>> 2;
  memoryOf.set(array, {
    u32: new Uint32Array(buffer, byteOffset, words),
    i32: new Int32Array(buffer, byteOffset, words),
    f32: new Float32Array(buffer, byteOffset, words),
    u8: new Uint8Array(buffer, byteOffset, bytes),
    slab,
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

/**
 * A heap slab as a shared WebAssembly memory, so that the kernels' WebAssembly loops (wasm.ts) read
 * its arrays in place: a typed array over it is a view of `memory.buffer`, at the array's byteOffset.
 * Beyond the arrays' bytes, from `scratchAt`, it holds a word that counts the scratch regions claimed
 * and `regions` regions of {@link wasmScratchBytes}, one for each thread that runs the backend's
 * kernels (what a loop writes beside its items: lanes, rows' results), claimed by
 * {@link slabThread}.
 *
 * Why in place: `TypedArray.set` from a SharedArrayBuffer into a module's own memory is V8's
 * relaxed-atomic copy, word by word. On the 2-core AMD EPYC it took 0.16-0.20 ms per 4 MB (0.10 from
 * an ArrayBuffer), against 0.20 ms for the packed rows' sums over the same 4 MB that it fed: the copy
 * was nearly half of the MoE sum's work.
 */
export interface SlabMemory {
  readonly memory: WebAssembly.Memory;
  /**
   * The slab's id, unique among the slabs made on its thread: a worker thread is sent a new Memory
   * object with every context, and knows the slab by this.
   */
  readonly id: number;
  /** Byte offset of the claimed-regions count; the regions follow its header. */
  readonly scratchAt: number;
  /** Scratch regions: the backend's threads (the calling one and its workers). */
  readonly regions: number;
}

/** Bytes of each thread's scratch region in a slab. */
export const wasmScratchBytes = 8192;
/** Bytes before the first scratch region: the claimed-regions count, a cache line of its own. */
const scratchHeaderBytes = 256;
const wasmPageBytes = 65536;

/** What this thread holds for one slab: its scratch region, and kernels built over the slab's memory (by their module). */
export interface SlabThread {
  /** Byte offset of this thread's scratch region in the slab's memory. */
  readonly scratch: number;
  readonly kernels: Map<WebAssembly.Module, object>;
}

/** This thread's slabs by id; null where no scratch region was left. */
const slabThreads = new Map<number, SlabThread | null>();

/**
 * This thread's part of `slab`: on first use a scratch region claimed from the slab's count (a thread
 * claims one per slab, and the heap made one for each thread of its backend). Undefined where none
 * was left, which those counts rule out; kernels then copy their items as without a slab.
 */
export function slabThread(slab: SlabMemory): SlabThread | undefined {
  let thread = slabThreads.get(slab.id);
  if (thread === undefined) {
    const claimed = Atomics.add(new Int32Array(slab.memory.buffer, slab.scratchAt, 1), 0, 1);
    thread = claimed < slab.regions ? { scratch: slab.scratchAt + scratchHeaderBytes + claimed * wasmScratchBytes, kernels: new Map() } : null;
    slabThreads.set(slab.id, thread);
  }
  return thread ?? undefined;
}

let nextSlabId = 1;

/** A range of a {@link SharedDeviceHeap}: `bytes` bytes at `offset` of `buffer`, `slab`'s memory where it has one. */
export interface HeapRange {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly bytes: number;
  readonly slab: SlabMemory | undefined;
}

/** The memory of one slab: `buffer`, and the WebAssembly memory it is, where it is one. */
interface SlabBuffer {
  readonly buffer: SharedArrayBuffer;
  readonly slab: SlabMemory | undefined;
}

/** One slab of small allocations, with its free ranges sorted by offset (disjoint, never adjacent). */
interface Slab extends SlabBuffer {
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
 *
 * Each slab is a shared WebAssembly memory ({@link SlabMemory}: its `buffer` is a SharedArrayBuffer
 * like any other), with a scratch region per thread after its arrays (8 KiB each, the slab rounded up
 * to whole 64 KiB pages), so that SIMD loops read arrays where they lie. A worker holds, beside the
 * slabs, one instance of a kernel module per slab it ran on, as bounded as the slabs are.
 */
export class SharedDeviceHeap {
  private readonly slabs: Slab[] = [];
  /** Free slabs of large arrays by size. */
  private readonly freeLarge = new Map<number, SlabBuffer[]>();
  /** Ids of the slabs that are WebAssembly memories, to forget this thread's part of them on {@link clear}. */
  private readonly slabIds: number[] = [];
  private readonly empty = new SharedArrayBuffer(0);
  private reserved = 0;

  /** `threads`: the threads that run the backend's kernels (each slab has a scratch region for each). */
  constructor(private readonly threads: number) {}

  /** Bytes of all slabs (in use or free), their scratch regions included. */
  get reservedBytes(): number {
    return this.reserved;
  }

  /**
   * A slab of `bytes` bytes for arrays: a shared WebAssembly memory with the scratch regions after
   * them, where the runtime makes one; else (no WebAssembly, a slab past wasm32's 4 GiB, or a
   * memory the runtime refuses) a SharedArrayBuffer, whose arrays SIMD loops copy as without workers.
   */
  private makeSlab(bytes: number): SlabBuffer {
    const scratchAt = bytes;
    const pages = Math.ceil((scratchAt + scratchHeaderBytes + this.threads * wasmScratchBytes) / wasmPageBytes);
    if (typeof WebAssembly !== 'undefined' && pages <= maxWasmPages) {
      try {
        const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
        const slab = { memory, id: nextSlabId++, scratchAt, regions: this.threads };
        this.slabIds.push(slab.id);
        this.reserved += pages * wasmPageBytes;
        return { buffer: memory.buffer as unknown as SharedArrayBuffer, slab };
      } catch {
        // A SharedArrayBuffer below.
      }
    }
    this.reserved += bytes;
    return { buffer: new SharedArrayBuffer(bytes), slab: undefined };
  }

  /** A range of at least `bytes` bytes, zero-filled when `zero` (contents are undefined otherwise). */
  allocate(bytes: number, zero: boolean): HeapRange {
    if (bytes === 0) return { buffer: this.empty, offset: 0, bytes: 0, slab: undefined };
    // Large by the aligned size, as release() decides: a range just under 4 MiB that aligns to it
    // would otherwise go back to the large slabs' free list while it sits in a shared one.
    const size = alignUp(bytes, rangeAlignment);
    if (size >= largeArrayBytes) return this.allocateLarge(size, zero);
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
      best = { ...this.makeSlab(smallSlabBytes), freeOffsets: [0], freeSizes: [smallSlabBytes] };
      this.slabs.push(best);
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
    return { buffer: best.buffer, offset, bytes: size, slab: best.slab };
  }

  private allocateLarge(bytes: number, zero: boolean): HeapRange {
    let size = largeArrayBytes;
    while (size < bytes) size *= 2;
    const reused = this.freeLarge.get(size)?.pop();
    if (reused !== undefined) {
      if (zero) new Uint8Array(reused.buffer, 0, size).fill(0);
      return { buffer: reused.buffer, offset: 0, bytes: size, slab: reused.slab };
    }
    const made = this.makeSlab(size);
    return { buffer: made.buffer, offset: 0, bytes: size, slab: made.slab };
  }

  /** Takes a range back; it must not be used afterwards. */
  release(range: HeapRange): void {
    if (range.bytes === 0) return;
    if (range.bytes >= largeArrayBytes) {
      let free = this.freeLarge.get(range.bytes);
      if (free === undefined) this.freeLarge.set(range.bytes, (free = []));
      free.push({ buffer: range.buffer, slab: range.slab });
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

  /** Lets every slab go (the backend was destroyed), with this thread's part of them (its workers stop). */
  clear(): void {
    for (const id of this.slabIds) slabThreads.delete(id);
    this.slabIds.length = 0;
    this.slabs.length = 0;
    this.freeLarge.clear();
    this.reserved = 0;
  }
}
