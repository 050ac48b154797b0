/*
 * A 32-bit value that one workgroup publishes for others within a launch, as two words that each
 * stand on their own: word 0 is `status << 16 | low half`, word 1 `status << 16 | high half`.
 * WebGPU's atomics are relaxed, so nothing orders the two stores as another workgroup sees them; a
 * reader takes the value only when both words carry the same status, and status 0 means not
 * published (the words live in temporary-storage slots zeroed at the start of every run). Reduce's
 * one-launch merge publishes its partials with status 1, top-k reduce's chunk merge its chunks'
 * lists, and the scan's single pass its tile, group and unit totals. The CPU twins use the
 * functions, the kernels {@link publishedWordsWgsl}.
 */

/** Bits of a word below its status: one half of the value. */
export const publishedHalfBits = 16;

/** The two words of `value` published with `status` (at least 1). */
export function publishedWords(status: number, value: number): [low: number, high: number] {
  return [((status << publishedHalfBits) | (value & 0xffff)) >>> 0, ((status << publishedHalfBits) | (value >>> publishedHalfBits)) >>> 0];
}

/** The status both words carry, or 0 when they do not carry the same one (not published, or not yet whole). */
export function publishedStatus(low: number, high: number): number {
  const status = low >>> publishedHalfBits;
  return status === high >>> publishedHalfBits ? status : 0;
}

/** The value two words hold (meaningful where {@link publishedStatus} is not 0). */
export function publishedValue(low: number, high: number): number {
  return ((low & 0xffff) | (high << publishedHalfBits)) >>> 0;
}

/**
 * WGSL over `temp` bound as atomic words, for a value one workgroup publishes once and another reads
 * after it knows the writer issued its stores (the last workgroup to arrive at a counter):
 * `publish(at, value)` stores the two words with `status`, `awaitPublished(at)` reads them again
 * until both carry it (a wait only for stores already issued, so no forward progress between
 * workgroups is needed). Reduce's and top-k's one-launch merges; needs {@link publishedWordsWgsl}.
 */
export function publishOnceWgsl(status: number): string {
  return `fn publish(at: u32, value: u32) {
  atomicStore(&temp[at], publishedLow(${status}u, value));
  atomicStore(&temp[at + 1u], publishedHigh(${status}u, value));
}
fn awaitPublished(at: u32) -> u32 {
  loop {
    let low = atomicLoad(&temp[at]);
    let high = atomicLoad(&temp[at + 1u]);
    if (publishedStatus(low, high) == ${status}u) { return publishedValue(low, high); }
  }
}`;
}

/** The same in WGSL: `publishedLow`/`publishedHigh` make the words, `publishedStatus`/`publishedValue` read them. */
export const publishedWordsWgsl = `fn publishedLow(status: u32, value: u32) -> u32 { return (status << 16u) | (value & 0xffffu); }
fn publishedHigh(status: u32, value: u32) -> u32 { return (status << 16u) | (value >> 16u); }
fn publishedStatus(low: u32, high: u32) -> u32 { return select(0u, low >> 16u, (low >> 16u) == (high >> 16u)); }
fn publishedValue(low: u32, high: u32) -> u32 { return (low & 0xffffu) | (high << 16u); }`;
