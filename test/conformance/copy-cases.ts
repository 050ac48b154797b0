/**
 * DeviceBatchedCopy's case builders, shared by the conformance suite and the browser page (no vitest
 * here: the page bundles this module): buffer layouts with gaps, source words with specials, and the
 * destination the reference writes.
 */
import { referenceBatchedCopy } from '../../src/index.js';
import { rng } from '../rng.js';

/** A batched copy described on the host: per buffer its size and offsets, and the two arrays' lengths. */
export interface CopyCase {
  readonly name: string;
  readonly sizes: number[];
  readonly sourceOffsets: number[];
  readonly destinationOffsets: number[];
  readonly sourceLength: number;
  readonly destinationLength: number;
}

/** Buffers laid out apart in a shuffled order, with gaps; sources anywhere (they may overlap). */
export function layoutCase(name: string, sizes: number[], seed: number, align = 1): CopyCase {
  const random = rng(seed);
  const order = sizes.map((_, i) => i).sort(() => random() - 0.5);
  const destinationOffsets = new Array<number>(sizes.length).fill(0);
  let at = 0;
  for (const i of order) {
    at += align * Math.floor(random() * 3);
    destinationOffsets[i] = at;
    at += sizes[i]!;
  }
  const sourceLength = Math.max(1, ...sizes) * 2 + 7 * align;
  const sourceOffsets = sizes.map((size) => align * Math.floor((random() * (sourceLength - size + 1)) / align));
  return { name, sizes, sourceOffsets, destinationOffsets, sourceLength, destinationLength: at + 5 };
}

/** Source words with NaN payloads, -0, infinities and plain numbers as f32 bits. */
export function sourceWords(length: number, seed: number): Uint32Array {
  const random = rng(seed);
  const special = [0x7fc00001, 0xffc12345, 0x80000000, 0x7f800000, 0xff800000, 0x00000001];
  return Uint32Array.from({ length }, (_, i) => (i % 11 === 3 ? special[i % special.length]! : Math.floor(random() * 2 ** 32)));
}

/** The destination's words before a case runs (each word its own, so any stray write shows). */
export const destinationBefore = (c: CopyCase) => Uint32Array.from({ length: c.destinationLength }, (_, i) => 0xdead0000 + i);

/** The destination's words after the case, by the reference (the source is `sourceWords(sourceLength, sizes.length + 1)`). */
export function expectedDestination(c: CopyCase): Uint32Array {
  return referenceBatchedCopy({ source: sourceWords(c.sourceLength, c.sizes.length + 1), destination: destinationBefore(c), sourceOffsets: c.sourceOffsets, destinationOffsets: c.destinationOffsets, sizes: c.sizes });
}
