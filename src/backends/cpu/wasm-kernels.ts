import { type SlabMemory, slabThread, wasmScratchBytes } from './memory.js';
import { type WasmFunction, compileWasm, wasmModule } from './wasm.js';

/*
 * A WebAssembly kernel module's instances on one thread: one over a memory of its own, which items
 * are copied into, and one over each heap slab (memory.ts SlabMemory) the thread meets, which reads
 * its items where they lie. Every function of such a module takes the byte address of its items
 * and, where it writes beside them, of the thread's scratch region, so the same code serves both
 * (over the own memory, whose scratch region is at 0, a kernel may use constant addresses instead).
 */

/** What every kernel set's instance has beside its functions. */
export interface WasmKernelMemory {
  /** The memory's words. */
  readonly i32: Int32Array;
  /** Byte address of this thread's scratch region ({@link wasmScratchBytes}). */
  readonly scratch: number;
}

/** Where copied items go in the own memory (one page): after its scratch region, up to 56 KiB of them. */
export const ownItemsAt = wasmScratchBytes;

/** The instance of `module` over `memory`, its exports with the memory's words and the scratch region at `scratch`. */
function kernelsOf<K extends WasmKernelMemory>(module: WebAssembly.Module, memory: WebAssembly.Memory, scratch: number): K {
  const exports = new WebAssembly.Instance(module, { env: { memory } }).exports;
  return { ...exports, i32: new Int32Array(memory.buffer), scratch } as unknown as K;
}

/**
 * The instances of one kernel module on this thread, made on first use. `functions` gives the
 * module's functions for the own memory ('unshared'), whose scratch region is at 0, so that a
 * kernel may address it with constants there, or for a slab's ('shared').
 */
export class WasmKernelSet<K extends WasmKernelMemory> {
  /** Over the own memory: null where WebAssembly SIMD is missing. */
  private own: K | null | undefined;
  /** The module over a slab's shared memory (null where it cannot be compiled). */
  private slabModule: WebAssembly.Module | null | undefined;
  /** Where {@link place} put the items: their byte address in its kernels' memory. */
  itemsAt = 0;

  constructor(private readonly functions: (memory: 'unshared' | 'shared') => readonly WasmFunction[]) {}

  /** Whether this thread can run the kernels. */
  available(): boolean {
    if (this.own === undefined) {
      const module = compileWasm(wasmModule({ imported: 'unshared' }, this.functions('unshared')));
      this.own = module === undefined ? null : kernelsOf<K>(module, new WebAssembly.Memory({ initial: 1 }), 0);
    }
    return this.own !== null;
  }

  /** This thread's kernels over `slab`'s memory; undefined where they cannot be made. */
  private over(slab: SlabMemory): K | undefined {
    const thread = slabThread(slab);
    if (thread === undefined) return undefined;
    if (this.slabModule === undefined) this.slabModule = compileWasm(wasmModule({ imported: 'shared' }, this.functions('shared'))) ?? null;
    if (this.slabModule === null) return undefined;
    let kernels = thread.kernels.get(this.slabModule) as K | undefined;
    if (kernels === undefined) {
      kernels = kernelsOf<K>(this.slabModule, slab.memory, thread.scratch);
      thread.kernels.set(this.slabModule, kernels);
    }
    return kernels;
  }

  /**
   * The kernels for `n` items of `bits` from `base`, with their address in {@link itemsAt}: in place
   * where `bits` lies in a heap slab (`slab`) and `padded` (the items the loop reads) is `n`; else
   * copied into the own memory (at {@link ownItemsAt}), whose items from `n` to `padded` the caller
   * fills. Only where {@link available}.
   */
  place(bits: Int32Array, slab: SlabMemory | undefined, base: number, n: number, padded: number): K {
    const inPlace = slab !== undefined && padded === n ? this.over(slab) : undefined;
    if (inPlace !== undefined) {
      this.itemsAt = bits.byteOffset + base * 4;
      return inPlace;
    }
    const k = this.own!;
    k.i32.set(bits.subarray(base, base + n), ownItemsAt >> 2);
    this.itemsAt = ownItemsAt;
    return k;
  }
}
