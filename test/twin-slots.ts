/**
 * The launch-by-launch comparison of the twin tests (test/twin.test.ts, test/sort-twin.test.ts): one
 * plan per backend with the same launches, run one launch further every time; after each launch the
 * temporary-storage slots that the prologue and the kernel table say every backend writes identically
 * are compared word for word.
 */
import { expect } from 'vitest';
import { type Plan, planInternals } from '../src/dispatch/plan.js';
import type { Backend } from '../src/index.js';

/** A kernel table's answer to "which slots does this kernel write identically on every backend". */
export function identicalSlotsOf(kernels: object): (kernel: string) => readonly string[] {
  const table = kernels as Record<string, { identicalSlots?: readonly string[] }>;
  return (kernel) => (kernel === 'segment-offsets' ? ['offsets'] : (table[kernel]?.identicalSlots ?? []));
}

/** Compares every identical slot after every launch of `gpu.plan` against `cpu.plan`'s; returns how many slots were compared. */
export async function compareLaunchByLaunch(
  gpu: { plan: Plan; backend: Backend },
  cpu: { plan: Plan; backend: Backend },
  identicalSlots: (kernel: string) => readonly string[],
  lastLaunch = gpu.plan.launches.length,
): Promise<number> {
  let compared = 0;
  for (let count = 1; count <= lastLaunch; count++) {
    const launch = gpu.plan.launches[count - 1]!;
    const slots = identicalSlots(launch.kernel);
    if (slots.length === 0) continue;
    const after = async (side: { plan: Plan; backend: Backend }) => {
      const temp = side.backend.alloc('u8', Math.max(4, side.plan.tempStorageBytes));
      try {
        await planInternals(side.plan).runPrefix(temp, count);
        return new Uint32Array((await side.backend.download(temp)).buffer);
      } finally {
        temp.destroy();
      }
    };
    const [gpuWords, cpuWords] = [await after(gpu), await after(cpu)];
    const { layout } = planInternals(gpu.plan);
    for (const slot of slots) {
      if (!layout.has(slot)) continue;
      const range = layout.slot(slot);
      const a = gpuWords.subarray(range.offset / 4, (range.offset + range.bytes) / 4);
      const b = cpuWords.subarray(range.offset / 4, (range.offset + range.bytes) / 4);
      const first = a.findIndex((word, i) => word !== b[i]);
      expect(first, `after launch ${count} (${launch.name}), slot ${slot}: first differing word ${first} (webgpu ${a[first]}, cpu ${b[first]})`).toBe(-1);
      compared++;
    }
  }
  return compared;
}
