/**
 * The batched-copy bench shapes, shared by bench/copy-cpu.ts and bench/copy-webgpu.ts (and mirrored by
 * bench/gpu/torch_copy.py): buffers laid out apart in a shuffled order in the destination, read from
 * random places in a source as long as the destination.
 */
export interface CopyShape {
  readonly name: string;
  readonly sizes: Uint32Array;
  readonly sourceOffsets: Uint32Array;
  readonly destinationOffsets: Uint32Array;
  readonly length: number;
  readonly total: number;
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function shape(name: string, n: number, min: number, max: number, seed: number): CopyShape {
  const r = random(seed);
  const sizes = Uint32Array.from({ length: n }, () => min + Math.floor(r() * (max - min + 1)));
  const order = Array.from({ length: n }, (_, i) => i).sort(() => r() - 0.5);
  const destinationOffsets = new Uint32Array(n);
  let at = 0;
  for (const i of order) {
    destinationOffsets[i] = at;
    at += sizes[i]!;
  }
  const sourceOffsets = Uint32Array.from(sizes, (size) => Math.floor(r() * (at - size + 1)));
  return { name, sizes, sourceOffsets, destinationOffsets, length: Math.max(1, at), total: at };
}

/** The three shapes of the issue, by name. */
export function copyShapes(only?: readonly string[]): CopyShape[] {
  const all = [
    () => shape('4096 x 1..256', 4096, 1, 256, 1),
    () => shape('256 x 4K..64K', 256, 4096, 65536, 2),
    () => shape('1 x 16M', 1, 16 * 1024 * 1024, 16 * 1024 * 1024, 3),
  ];
  const names = ['small', 'medium', 'large'];
  return all.filter((_, i) => only === undefined || only.includes(names[i]!)).map((make) => make());
}

export const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
