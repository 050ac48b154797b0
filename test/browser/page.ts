/**
 * The browser page of test/browser/webgpu-browser.test.ts: a subset of each algorithm's conformance
 * suite on WebGPU through `navigator.gpu`, against the built package (dist/, bundled by esbuild; the
 * suites' case builders are bundled against dist too). `runTopKSubset()` here and the other
 * algorithms' subsets (reduce-subset.ts, scan-subset.ts, sort-subset.ts, copy-subset.ts) return every
 * case's outputs next to the reference's, for the test to compare.
 */
import { GuaranteeViolationError, webgpuBackend } from '../../dist/index.js';
import { type TopKCase, buildCase, makeCase, runCase } from '../conformance/topk-cases.js';
import { rng } from '../rng.js';
import { runCopySubset } from './copy-subset.js';
import { runReduceSubset } from './reduce-subset.js';
import { runScanSubset } from './scan-subset.js';
import { runSortSubset } from './sort-subset.js';


interface CaseResult {
  name: string;
  variant: string;
  keys: number[];
  expectedKeys: number[];
  values: number[] | undefined;
  expectedValues: number[] | undefined;
  ms: number;
  compiled: number;
}

const sizes = (n: number, max: number, seed: number) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => Math.floor(random() * (max + 1)));
};

function cases(): { c: TopKCase; variants: ('reduce' | 'single-tile' | 'row-radix' | 'radix-select' | undefined)[] }[] {
  const list: { c: TopKCase; variants: ('reduce' | 'single-tile' | 'row-radix' | 'radix-select' | undefined)[] }[] = [];
  // Every variant on f32; i32 and u32 keys through one variant each (SwiftShader compiles a pipeline in ~0.5 s).
  list.push({ c: makeCase({ name: 'f32 small k', keyType: 'f32', flavour: 'special', sizes: sizes(12, 300, 3), k: 5, seed: 11 }), variants: [undefined, 'radix-select'] });
  list.push({
    c: makeCase({ name: 'f32 larger k, both directions', keyType: 'f32', flavour: 'ties', sizes: sizes(6, 900, 5), k: 40, directions: ['max', 'min', 'max', 'min', 'min', 'max'], seed: 13 }),
    variants: [undefined, 'row-radix', 'radix-select'],
  });
  list.push({ c: makeCase({ name: 'i32 small k', keyType: 'i32', flavour: 'special', sizes: sizes(12, 300, 3), k: 5, seed: 17 }), variants: [undefined] });
  list.push({ c: makeCase({ name: 'u32 larger k, min', keyType: 'u32', flavour: 'special', sizes: sizes(6, 900, 5), k: 40, directions: 'min', seed: 19 }), variants: [undefined] });
  list.push({ c: makeCase({ name: 'long segment', sizes: [9000], k: 7, seed: 29 }), variants: [undefined, 'radix-select'] });
  list.push({
    c: makeCase({ name: 'device-only sizes, k and directions', sizes: sizes(9, 600, 61), sizeKind: 'perSegment-device', k: [12, 1, 30, 4, 5, 64, 7, 8, 9], kKind: 'perSegment-device', directions: ['min', 'max', 'max', 'min', 'max', 'min', 'max', 'min', 'max'], directionKind: 'perSegment-device', numSegmentsKind: 'device', values: 'payload', seed: 101 }),
    variants: [undefined],
  });
  list.push({ c: makeCase({ name: 'strided, f32 indices', sizes: [333, 333, 333], stride: 400, sizeKind: 'uniform', k: 9, values: 'indices-f32', seed: 103 }), variants: [undefined] });
  return list;
}

async function runTopKSubset(): Promise<{ adapter: string; results: CaseResult[]; violation: string }> {
  const backend = await webgpuBackend();
  const results: CaseResult[] = [];
  try {
    for (const { c, variants } of cases()) {
      for (const variant of variants) {
        const built = buildCase(backend, c);
        const started = performance.now();
        try {
          const { plan, keys, values } = await runCase(backend, built, { variant });
          const n = c.sizes.length * built.kMax;
          results.push({
            name: c.name,
            variant: plan.variant,
            keys: [...keys.subarray(0, n)],
            expectedKeys: [...built.expected.keys.subarray(0, n)],
            values: values === undefined ? undefined : [...values.subarray(0, n)],
            expectedValues: values === undefined ? undefined : [...built.expected.values.subarray(0, n)],
            ms: performance.now() - started,
            compiled: backend.stats().kernelsCompiled,
          });
        } finally {
          for (const a of built.owned) a.destroy();
        }
      }
    }
    // A device-only k outside its static bounds: found on the device, outputs untouched.
    const bad = buildCase(backend, makeCase({ name: 'bad-device', sizes: [5, 6, 7], k: [1, 9, 2], kBound: 4, kKind: 'perSegment-device', seed: 101 }));
    let violation = 'no error';
    try {
      await runCase(backend, bad);
    } catch (error) {
      violation = error instanceof GuaranteeViolationError ? `${error.name}: ${error.message}` : `unexpected ${String(error)}`;
    }
    for (const a of bad.owned) a.destroy();
    const info = backend.adapterInfo;
    return { adapter: `${info?.vendor ?? ''} ${info?.architecture ?? ''} ${info?.description ?? ''}`.trim(), results, violation };
  } finally {
    backend.destroy();
  }
}

Object.assign(globalThis, { runTopKSubset, runReduceSubset, runScanSubset, runSortSubset, runCopySubset });
document.title = 'segkit webgpu ready';
