/*
 * Moving a run of raw 32-bit words from one device array to another on the CPU emulator, with
 * `TypedArray.prototype.set` (a copy moves bits, never values: NaN payloads and -0 stay as they are).
 *
 * Device memory shared with worker threads is a SharedArrayBuffer, and V8 copies into or out of one
 * with a "relaxed" memcpy: 8 bytes at a time only when the source and the destination lie at the
 * same address modulo 8, byte by byte otherwise. Two word arrays whose starts differ by an odd number
 * of words were measured 3-4x slower that way (runs of 4096 words, Node 20: 1.33 ns/word against
 * 0.39 for an even difference). Such a run goes through two unshared scratch runs instead:
 * one at the source's address modulo 8, one at the destination's, with a plain memmove between them
 * (0.66 ns/word). Below 128 words the three calls cost more than the bytes do (measured), so a short
 * run is moved directly.
 */

/** Words moved through the scratch runs at a time. */
const scratchRunWords = 4096;
/** The shortest odd-offset run in shared memory worth moving through the scratch runs. */
const scratchMinWords = 128;
/**
 * Where the second scratch run starts: half a page past the first's end, so that the memmove between
 * them does not read and write addresses 4 KiB apart (a store-to-load false dependency that made it
 * as slow as the byte copy).
 */
const secondScratch = scratchRunWords + 2 + 512;

/** This thread's scratch runs (every worker thread has its own module instance). */
let scratch: Uint32Array | undefined;

const sharedMemoryAvailable = typeof SharedArrayBuffer !== 'undefined';

/**
 * The words of one device array, with what a move needs to know about its memory (plain data: a
 * context sent to a worker thread carries it).
 */
export interface DeviceWords {
  readonly words: Uint32Array;
  /** In a SharedArrayBuffer (a backend with worker threads). */
  readonly shared: boolean;
  /** 1 when word 0 lies at an address of 4 modulo 8 (an ArrayBuffer's memory starts 8-byte aligned). */
  readonly parity: number;
}

/** {@link DeviceWords} of a device array's u32 view. */
export function deviceWords(words: Uint32Array): DeviceWords {
  return { words, shared: sharedMemoryAvailable && words.buffer instanceof SharedArrayBuffer, parity: (words.byteOffset >>> 2) & 1 };
}

/** Copies `count` words from `source.words[from..]` to `destination.words[to..]` (two different arrays). */
export function moveWords(destination: DeviceWords, to: number, source: DeviceWords, from: number, count: number): void {
  const target = destination.words;
  const words = source.words;
  if (count < scratchMinWords || (!destination.shared && !source.shared) || ((source.parity + from) & 1) === ((destination.parity + to) & 1)) {
    target.set(words.subarray(from, from + count), to);
    return;
  }
  scratch ??= new Uint32Array(secondScratch + scratchRunWords + 2);
  const sourceParity = (source.parity + from) & 1;
  const destinationParity = secondScratch + ((destination.parity + to) & 1);
  for (let done = 0; done < count; done += scratchRunWords) {
    const n = Math.min(scratchRunWords, count - done);
    const atSource = scratch.subarray(sourceParity, sourceParity + n);
    atSource.set(words.subarray(from + done, from + done + n));
    const atDestination = scratch.subarray(destinationParity, destinationParity + n);
    atDestination.set(atSource);
    target.set(atDestination, to + done);
  }
}
