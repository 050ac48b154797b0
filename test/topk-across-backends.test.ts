/**
 * Top-k conformance cases run through segkit/testing on every backend available here (CPU, CPU with
 * workers, WebGPU), every variant forced, the outputs compared bit for bit with each other and with
 * the reference. In CI, WebGPU is required (a missing adapter fails the file).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { TopKVariant } from '../src/index.js';
import { type BackendRun, firstDifference, testBackends } from '../src/testing.js';
import { type CaseOptions, buildCase, kMaxOf, makeCase, runCase } from './conformance/topk-cases.js';

process.env.LP_NUM_THREADS ??= '1';
// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

const backends = await testBackends({ workers: 1, required: process.env.CI ? ['webgpu'] : [] });
afterAll(() => backends.destroy());
for (const entry of backends.entries) if (entry.skip) console.warn(`[segkit] top-k across backends without ${entry.name}: ${entry.skip}`);

/**
 * A few of the conformance suite's cases (the suite itself runs every case on every backend against
 * the reference); WebGPU on lavapipe compiles each new pipeline through LLVM, so each case forces
 * only the variants that its natural choice does not cover.
 */
const cases: { options: CaseOptions; variants: (TopKVariant | undefined)[] }[] = [
  {
    options: { name: 'f32 special, per-segment sizes', keyType: 'f32', flavour: 'special', sizes: [0, 1, 7, 300, 999, 64, 513], k: 6, seed: 3 },
    variants: [undefined, 'single-tile', 'radix-select'],
  },
  {
    options: {
      name: 'device-only sizes, k, directions and count; payload',
      flavour: 'special',
      sizes: [90, 700, 3, 0, 512],
      sizeKind: 'perSegment-device',
      k: [2, 8, 1, 4, 7],
      kKind: 'perSegment-device',
      directions: ['min', 'max', 'max', 'min', 'max'],
      directionKind: 'perSegment-device',
      numSegmentsKind: 'device',
      values: 'payload',
      seed: 11,
    },
    variants: [undefined],
  },
  { options: { name: 'i32 ties, strided, min, f32 indices', keyType: 'i32', flavour: 'ties', sizes: [333, 0, 333], stride: 400, k: 5, directions: 'min', values: 'indices-f32', seed: 13 }, variants: [undefined] },
];

describe('top-k: the same bits on every backend', () => {
  for (const { options, variants: forced } of cases) {
    it(options.name, async () => {
      const c = makeCase(options);
      for (const variant of forced) {
        const slotsPerSegment = kMaxOf(c);
        let reference: BackendRun | undefined;
        const variants = new Set<string>();
        const comparison = await backends.compare(async (backend, run) => {
          const built = buildCase(backend, c);
          run.track(built.owned[0]!, ...built.owned.slice(1));
          const { plan, keys, values } = await runCase(backend, built, { variant });
          variants.add(plan.variant);
          reference ??= { name: 'reference', outputs: values ? { keys: built.expected.keys, values: built.expected.values } : { keys: built.expected.keys } };
          return { keys, values };
        }, { slotsPerSegment });
        const label = `${c.name} (${variant ?? 'natural choice'})`;
        expect(comparison.difference?.message, label).toBeUndefined();
        expect(firstDifference([...comparison.runs, reference!], { slotsPerSegment })?.message, label).toBeUndefined();
        expect(comparison.runs.length).toBe(backends.available.length);
        if (variant !== undefined) expect([...variants], label).toEqual([variant]);
      }
    });
  }
});
