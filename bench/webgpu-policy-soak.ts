/**
 * Policy soak on WebGPU: the conformance cases of every algorithm (test/conformance/*-cases.ts, the
 * CPU reference built into each case) run with every variant forced through `tuning.variant`, and
 * the natural choice, under a list of `tuning.policy` overrides: workgroup sizes above all, then
 * other policy values. Every output is compared bit for bit with the reference (top-k's unsorted
 * cases through topKViolations); each mismatch is a FAILURE. Written after a silent failure on an
 * H200 (Dawn/Vulkan): the sort's radix scatter under `{"variant":"radix","policy":{"workgroupSize":1024}}`
 * wrote all zeros with no WebGPU error (the driver does not run a pipeline whose registers exceed
 * its budget), which lavapipe never shows. No vitest: it runs on the GPU machine as one bundle.
 *
 *   node dist/bench/webgpu-policy-soak.mjs [--algorithms=sort,topk,reduce,scan,copy] [--sizes=64,128,256,512,1024]
 *     [--fields=workgroupSize] [--policies='[{"tileItems":2048},{"passes":1}]'] [--builtin] [--cross]
 *     [--cases=mixed,long] [--shrink=N] [--timeout-s=120] [--json=FILE] [--refused=REGEX] [--no-subgroups] [--verbose]
 * (Every override is applied over the algorithm's *PolicyFor(backend.capabilities), which runs too
 * ('built-in'). --sizes: each algorithm's workgroupSize at each size, with the fields its *PolicyFor
 * clamps to a smaller workgroup (reduce's chunk teams) clamped alike; and each other workgroup-size
 * field (top-k's rowRadixWorkgroupSize, and radixWideWorkgroupSize beside radixPick 'always',
 * without which no wide workgroup is built) at each size above its built-in value, one field at a
 * time; sizes above the backend's maxWorkgroupSize are skipped, --sizes= runs none. --fields=a,b:
 * only these fields, each at every size. --policies: more overrides, each run by every algorithm
 * whose policy has all its fields (segkit rejects unknown fields). --builtin: `builtinPolicies`
 * below too (other values of the fields that shape the kernels: items per invocation, load widths,
 * passes, digit widths, the selection's sort); --cross: each of those at each size as well.
 * --cases: substrings of case names. --shrink=N divides the long segments (and the many-segment
 * cases' segment counts) by N and keeps the sizes around the tiles: a quick run on a software
 * adapter. --timeout-s: a run that takes longer is a FAILURE and ends the soak (a hung device).
 * --no-subgroups: the backend without subgroup operations. --verbose: a line per refused run too.)
 *
 * Nearly all the time goes to compiling pipelines (each policy compiles the kernels again; a run
 * takes milliseconds), so the cases share key, value and parameter kinds where they can. H200
 * (2026-11-30, a fresh machine, __GL_SHADER_DISK_CACHE=0): the default run about 610 runs and 660
 * pipelines in 91 s; --sizes= --builtin about 600 runs and 455 pipelines in 56 s. Built from the
 * commit before ec5a30a (the radix scatter's registers), --algorithms=sort --sizes=1024
 * --fields=workgroupSize reports the silent zeros: 5 FAILs under workgroupSize=1024 (radix forced,
 * and the natural plans that took radix). Lavapipe compiles far slower (Mesa caches its shaders on
 * disk after a first run).
 *
 * A plan refused with a SegkitUsageError that says it cannot run (--refused=REGEX, default below:
 * "cannot run for these parameters", workgroup memory, a policy value past a limit) counts as
 * refused: a clear error, not a failure; the natural plan refused under the built-in policy is a
 * FAILURE. Any other error, or any mismatch, is a FAILURE: one line each (algorithm, policy,
 * variant, case, the first mismatching index and values), then per algorithm a table of policies
 * by variants with ok/refused/FAIL counts and the refusal messages (first 160 characters,
 * deduplicated). Exit code 1 when anything failed.
 *
 * Bundle (segkit from src/, so the cases and the bench share one module):
 *   node_modules/.bin/esbuild bench/webgpu-policy-soak.ts --bundle --platform=node --format=esm --target=node20 \
 *     --external:webgpu --alias:segkit=./src/index.ts \
 *     --banner:js="import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" \
 *     --outfile=dist/bench/webgpu-policy-soak.mjs
 * Locally on lavapipe (slow pipeline compiles: a subset, shrunk):
 *   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp node dist/bench/webgpu-policy-soak.mjs --sizes=256,512 --shrink=8 --algorithms=sort
 */
import { writeFileSync } from 'node:fs';
import {
  type Backend,
  type BackendCapabilities,
  type DeviceArray,
  type Env,
  type Requirements,
  DeviceBatchedCopy,
  SegkitUsageError,
  batchedCopyPolicyFor,
  batchedCopyVariants,
  env,
  p,
  scanPolicyFor,
  scanVariants,
  segmentedReducePolicyFor,
  segmentedReduceVariants,
  segmentedSortPolicyFor,
  segmentedSortVariants,
  topKPolicyFor,
  topKVariants,
  webgpuBackend,
} from 'segkit';
import { firstDifference } from '../src/testing.js';
import { untouchedBits } from '../test/conformance/common.js';
import { type CopyCase, destinationBefore, expectedDestination, layoutCase, sourceWords } from '../test/conformance/copy-cases.js';
import * as reduceCases from '../test/conformance/reduce-cases.js';
import * as scanCases from '../test/conformance/scan-cases.js';
import { type SortCaseOptions, buildSortCase, makeSortCase, runSortCase } from '../test/conformance/sort-cases.js';
import * as topkCases from '../test/conformance/topk-cases.js';
import { rng } from '../test/rng.js';
import { parseArgs, printTable } from './lib/cases.js';

type Policy = Record<string, unknown>;

const argv = parseArgs(process.argv.slice(2));
const algorithmIds = ['sort', 'topk', 'reduce', 'scan', 'copy'] as const;
type AlgorithmId = (typeof algorithmIds)[number];
const chosen = (argv.algorithms ?? algorithmIds.join(',')).split(',').filter(Boolean);
for (const id of chosen) if (!(algorithmIds as readonly string[]).includes(id)) throw new Error(`--algorithms: '${id}' is not one of ${algorithmIds.join(', ')}`);
const sizes = (argv.sizes ?? '64,128,256,512,1024').split(',').filter(Boolean).map(Number);
const fieldFilter = argv.fields?.split(',').filter(Boolean);
const userPolicies = argv.policies === undefined ? [] : (JSON.parse(argv.policies) as Policy[]);
if (!Array.isArray(userPolicies) || userPolicies.some((o) => typeof o !== 'object' || o === null || Array.isArray(o))) throw new Error('--policies: expected a JSON list of objects');
const builtin = argv.builtin !== undefined && argv.builtin !== '0' && argv.builtin !== 'false';
const cross = argv.cross !== undefined && argv.cross !== '0';
const caseFilter = argv.cases?.split(',').filter(Boolean);
const shrink = Math.max(1, Number(argv.shrink ?? 1));
const timeoutMs = 1000 * Number(argv['timeout-s'] ?? 120);
const verbose = argv.verbose !== undefined;
const refusedPattern = new RegExp(argv.refused ?? 'cannot run for these parameters|workgroup memory|needs .* bytes|exceeds|is not a power of two at most|is below');

/** A long segment's size, divided by --shrink (never below 1). */
const big = (n: number) => Math.max(1, Math.floor(n / shrink));
/** A segment count of a many-segment case, divided by --shrink (never below `least`). */
const many = (n: number, least = 8) => Math.max(least, Math.floor(n / shrink));
const randomSizes = (n: number, max: number, seed: number, min = 0) => {
  const random = rng(seed);
  return Array.from({ length: n }, () => min + Math.floor(random() * (max - min + 1)));
};
const alternating = (n: number) => Array.from({ length: n }, (_, i): 'ascending' | 'descending' => (i % 3 === 1 ? 'descending' : 'ascending'));
const directionsOf = (n: number) => Array.from({ length: n }, (_, i): 'max' | 'min' => (i % 3 === 1 ? 'min' : 'max'));

/**
 * Built-in overrides besides the workgroup sizes: the other values of the fields that shape each
 * algorithm's kernels (items per invocation, load widths, passes, digit widths, which sort a
 * selection takes). Values a backend's limits refuse come out as refused.
 */
const builtinPolicies: Record<AlgorithmId, Policy[]> = {
  sort: [{ radixLoads: 1 }, { radixLoads: 2 }, { tileItemsPerInvocation: 32 }, { tileItemsPerInvocation: 4 }, { tileLoadBatch: 16 }, { workgroupRadixItemsPerInvocation: 16 }, { workgroupRadixItemsPerInvocation: 1 }],
  topk: [{ selectionSortVariant: 'merge' }, { selectionSortVariant: 'radix' }, { radixPick: 'always' }, { radixPick: 'never' }, { radixFinalizeInFilter: 'always' }, { radixFinalizeInFilter: 'never' }, { radixBits: 8 }, { reduceLastChunkMerges: 'always' }, { reduceLastChunkMerges: 'never' }],
  reduce: [{ loadWords: 1 }, { lastChunkMerges: true }, { lastChunkMerges: false }, { chunkRounds: 4 }],
  scan: [{ passes: 1 }, { spineCarries: 'parallel' }, { loadWords: 1, storeWords: 1 }, { tilesPerStep: 4, scanTilesPerStep: 4 }],
  copy: [{ teamSize: 8 }, { chunkItems: 1024 }],
};

/** What one run of a case gave: the variant that ran and the first difference from the reference, if any. */
interface RunResult {
  readonly variant: string;
  readonly problem?: string | undefined;
}

/** A case built once (inputs uploaded, the reference computed) and run under many tunings. */
interface SoakCase {
  readonly name: string;
  readonly items: number;
  run(variant: string | undefined, policy: Policy): Promise<RunResult>;
  destroy(): void;
}

interface Algorithm {
  readonly id: AlgorithmId;
  readonly variants: readonly string[];
  /** The algorithm's *PolicyFor(backend.capabilities): what an override is applied over. */
  readonly base: object;
  /** The algorithm's *PolicyFor. */
  readonly policyFor: (capabilities: BackendCapabilities) => object;
  makeCases(): SoakCase[];
}

/** The first word where `got` and `want` differ (segkit/testing's `firstDifference`), and whether the output is all zero or untouched. */
function firstMismatch(got: Uint32Array, want: Uint32Array, what: string): string | undefined {
  const difference = firstDifference([
    { name: 'the reference', outputs: { [what]: want } },
    { name: 'webgpu', outputs: { [what]: got } },
  ]);
  if (difference === undefined) return undefined;
  const all = (w: number) => got.length > 0 && got.every((x) => x === w);
  const note = all(0) ? ' (the output is all zero)' : all(untouchedBits) ? ' (nothing was written)' : '';
  return `${difference.message}${note}`;
}

/** Replaces `built[field]` (an output, also `built.args[field]`) with a new array of `words`, so each run is seen writing everything. */
function renew(backend: Backend, built: { args: Record<string, unknown>; owned: DeviceArray[] }, field: string, words?: Uint32Array): void {
  const holder = built as unknown as Record<string, DeviceArray | undefined>;
  const old = holder[field];
  if (old === undefined) return;
  const fill = words ?? new Uint32Array(old.length).fill(untouchedBits);
  const fresh = backend.upload(old.dtype === 'f32' ? new Float32Array(fill.buffer.slice(0)) : old.dtype === 'i32' ? new Int32Array(fill.buffer.slice(0)) : new Uint32Array(fill));
  built.owned.splice(built.owned.indexOf(old), 1, fresh);
  old.destroy();
  holder[field] = fresh;
  built.args[field] = fresh;
}

const backend = await webgpuBackend({ powerPreference: 'high-performance', ...(argv['no-subgroups'] === undefined ? {} : { subgroups: false }) });
const caps = backend.capabilities;

/** Runs `run` to its end; then the plan is destroyed and the queue drained, so a deferred WebGPU error lands on this run. */
async function settle<T extends { plan: { variant: string; destroy(): void } }>(run: Promise<T>, compare: (result: T) => string | undefined): Promise<RunResult> {
  const result = await run;
  try {
    await backend.synchronize();
    return { variant: result.plan.variant, problem: compare(result) };
  } finally {
    result.plan.destroy();
  }
}

function sortAlgorithm(): Algorithm {
  const policyFor = segmentedSortPolicyFor;
  const base = policyFor(caps);
  const tile = base.tileItems;
  const sortCase = (o: SortCaseOptions): SoakCase => {
    const c = makeSortCase(o);
    const built = buildSortCase(backend, c);
    return {
      name: o.name,
      items: c.keys.length,
      run: (variant, policy) => {
        renew(backend, built, 'keysOut');
        renew(backend, built, 'valuesOut');
        return settle(
          runSortCase(backend, built, { variant: variant as never, policy: policy as Record<string, number> }),
          ({ keys, values }) => firstMismatch(keys, built.expected.keys, 'keys') ?? (values === undefined ? undefined : firstMismatch(values, built.expected.values, 'values')),
        );
      },
      destroy: () => built.owned.forEach((a) => a.destroy()),
    };
  };
  const mixed = [0, 1, 17, 255, 256, 257, 1000, 4095, 4096, 4097, big(20_000), big(70_000)];
  const edges = [tile - 1, tile, 0, tile + 1, 2 * tile + 1, 5];
  const segments = many(96);
  return {
    id: 'sort',
    variants: segmentedSortVariants,
    base,
    policyFor,
    makeCases: () => [
      // Every variant's kernels: single-tile for the short ones, the rest past the tile.
      () => sortCase({ name: 'mixed f32 special, indices', keyType: 'f32', flavour: 'special', sizes: mixed, orders: alternating(mixed.length), values: 'indices-u32', seed: 3 }),
      () => sortCase({ name: 'tile edges i32 ties, payload', keyType: 'i32', flavour: 'ties', sizes: edges, orders: alternating(edges.length), values: 'payload', seed: 5 }),
      // Many segments past the tile: workgroup-radix's natural ground.
      () => sortCase({ name: `${segments} segments u32, keys only`, keyType: 'u32', sizes: randomSizes(segments, Math.floor(1.5 * tile), 7), orders: 'descending', values: 'none', seed: 9 }),
      // One long segment: radix over many tiles (the first case's key and value types and order kind: its pipelines).
      () => sortCase({ name: 'one long f32, indices', keyType: 'f32', sizes: [big(100_000)], orders: ['descending'], values: 'indices-u32', seed: 11 }),
    ].map((make) => make()),
  };
}

function topkAlgorithm(): Algorithm {
  const policyFor = topKPolicyFor;
  const base = policyFor(caps);
  const tile = base.tileItems;
  const topkCase = (o: topkCases.CaseOptions, unsorted = false): SoakCase => {
    const c = topkCases.makeCase(o);
    const built = topkCases.buildCase(backend, c);
    const requirements: Partial<Requirements> | undefined = unsorted ? { outputOrdering: 'unsorted' } : undefined;
    return {
      name: `${o.name}${unsorted ? ', unsorted' : ''}`,
      items: c.keys.length,
      run: (variant, policy) => {
        renew(backend, built, 'keysOut');
        renew(backend, built, 'valuesOut');
        return settle(topkCases.runCase(backend, built, { variant: variant as never, policy: policy as never, requirements }), ({ keys, values }) => {
          if (unsorted) {
            const problems = topkCases.topKViolations(c, built, keys, values, { ties: 'index', order: 'any' });
            return problems.length === 0 ? undefined : `${problems.length} violations, first: ${problems[0]}`;
          }
          const n = c.sizes.length * built.kMax;
          return firstMismatch(keys.subarray(0, n), built.expected.keys.subarray(0, n), 'keys') ?? (values === undefined ? undefined : firstMismatch(values.subarray(0, n), built.expected.values.subarray(0, n), 'values'));
        });
      },
      destroy: () => built.owned.forEach((a) => a.destroy()),
    };
  };
  // f32 keys, i32 indices and directions per segment throughout (one specialization of each kernel: the
  // soak's time goes to compiling pipelines), but for one payload case, one unsorted one and k past the tile.
  const smallSizes = [...randomSizes(many(40), 300, 3), tile - 1, tile, tile + 1, 20, big(60_000), 0];
  // Rows within the tile: single-tile's ground (kMax past reduce's 8).
  const k40 = [...randomSizes(12, 900, 5), tile - 1, tile, 0];
  const k256 = [big(30_000), 8000, 3000, 257, 0];
  const k2048 = [big(40_000), 6000, 2100, 5];
  const pastTile = [3 * tile, tile + 200, 50];
  return {
    id: 'topk',
    variants: topKVariants,
    base,
    policyFor,
    makeCases: () =>
      [
        // Small k: reduce (rows of up to 32 keys an invocation each, long rows split into chunks); every variant forced on each case.
        () => topkCase({ name: 'k=5 f32 ties', flavour: 'ties', sizes: smallSizes, k: 5, directions: directionsOf(smallSizes.length), seed: 11 }),
        () => topkCase({ name: 'k=40 f32 special', flavour: 'special', sizes: k40, k: 40, directions: directionsOf(k40.length), seed: 13 }),
        // k around 256 and 2048 (radix-select, row-radix), sorted and not.
        () => topkCase({ name: 'k=256 f32 payload', sizes: k256, k: 256, directions: directionsOf(k256.length), values: 'payload', seed: 31 }),
        () => topkCase({ name: 'k=2048 f32 ties', flavour: 'ties', sizes: k2048, k: 2048, directions: directionsOf(k2048.length), seed: 43 }, true),
        // Sorted output past the tile: the selection goes through the sort's kernels.
        () => topkCase({ name: `k=${tile + 100} f32 special, sorted past the tile`, flavour: 'special', sizes: pastTile, k: tile + 100, directions: directionsOf(pastTile.length), seed: 47 }),
      ].map((make) => make()),
  };
}

function reduceAlgorithm(): Algorithm {
  const policyFor = segmentedReducePolicyFor;
  const base = policyFor(caps);
  const reduceCase = (o: reduceCases.CaseOptions): SoakCase => {
    const c = reduceCases.makeCase(o);
    const built = reduceCases.buildCase(backend, c);
    const n = c.sizes.length;
    return {
      name: o.name,
      items: c.values.length,
      run: (variant, policy) => {
        reduceCases.freshOutputs(backend, built);
        return settle(
          reduceCases.runCase(backend, built, { variant: variant as never, policy: policy as never }),
          ({ values, indices }) => firstMismatch(values.subarray(0, n), built.expected.values, 'values') ?? (indices === undefined ? undefined : firstMismatch(indices.subarray(0, n), built.expected.indices, 'indices')),
        );
      },
      destroy: () => built.owned.forEach((a) => a.destroy()),
    };
  };
  // Sizes around the subgroup, workgroup and chunk boundaries (reduce.suite.ts), and short ones for 'thread'.
  const boundary = [0, 1, 31, 32, 33, 0, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 0, 8191, 8192, 8193, 16385];
  const short = [0, 1, 2, 3, 5, 8, 15, 16, 0, 7, 16, 1];
  const initial = (n: number, seed: number) => randomSizes(n, 2000, seed).map((x, i) => (i % 7 === 3 ? -Infinity : (x - 1000) / 8));
  const long = [big(120_000), big(40_000), 3, 0, 33_000];
  const extremes = [big(100_000), big(50_000), 9000];
  return {
    id: 'reduce',
    variants: segmentedReduceVariants,
    base,
    policyFor,
    makeCases: () =>
      [
        () => reduceCase({ name: 'boundaries f32 special, every op', flavour: 'special', sizes: boundary, ops: reduceCases.cycleOps(boundary.length), initial: initial(boundary.length, 3), seed: 5 }),
        () => reduceCase({ name: 'short i32 wrap, every op', valueType: 'i32', flavour: 'wrap', sizes: short, ops: reduceCases.cycleOps(short.length), initial: 7, seed: 7 }),
        () => reduceCase({ name: 'long u32, every op', valueType: 'u32', sizes: long, ops: reduceCases.cycleOps(long.length), indices: 'u32', seed: 9 }),
        // Plans of sums alone and of extremes alone take other chunk teams and merges.
        () => reduceCase({ name: 'long f32 sums', sizes: [big(150_000), 70_000], ops: 'sum', indices: 'none', seed: 11 }),
        () => reduceCase({ name: 'long f32 extremes', flavour: 'ties', sizes: extremes, ops: ['argMax', 'min', 'argMin'], opOptions: ['argMax', 'min', 'argMin'], seed: 13 }),
      ].map((make) => make()),
  };
}

function scanAlgorithm(): Algorithm {
  const policyFor = scanPolicyFor;
  const base = policyFor(caps);
  const scanCase = (o: scanCases.CaseOptions): SoakCase => {
    const c = scanCases.makeCase(o);
    const built = scanCases.buildCase(backend, c);
    return {
      name: o.name,
      items: c.values.length,
      run: (variant, policy) => {
        renew(backend, built, 'valuesOut');
        return settle(scanCases.runCase(backend, built, { variant: variant as never, policy: policy as never }), ({ out }) => firstMismatch(out, built.expected, 'values'));
      },
      destroy: () => built.owned.forEach((a) => a.destroy()),
    };
  };
  // Every boundary of the canonical order (scan.suite.ts): lanes, warps, groups, workgroups, tiles.
  const boundary = [0, 1, 2, 7, 8, 9, 31, 32, 33, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 6143, 6144, 6145];
  const modes = ['inclusive', 'exclusive', 'exclusive', 'inclusive'] as const;
  const cycle = <T>(values: readonly T[], n: number) => Array.from({ length: n }, (_, i) => values[i % values.length]!);
  const long = [big(100_000), big(20_000), 5, 0, 4097];
  const short = randomSizes(many(60), 16, 5);
  return {
    id: 'scan',
    variants: scanVariants,
    base,
    policyFor,
    makeCases: () =>
      [
        () => scanCase({ name: 'boundaries f32 special, every op and mode', flavour: 'special', sizes: boundary, ops: cycle(['sum', 'min', 'max'], boundary.length), modes: cycle(modes, boundary.length), initial: true, seed: 3 }),
        () => scanCase({ name: 'short i32 wrap', valueType: 'i32', flavour: 'wrap', sizes: short, modes: cycle(modes, short.length), seed: 7 }),
        () => scanCase({ name: 'one long f32 sum', sizes: [big(150_000)], seed: 9 }),
        () => scanCase({ name: 'long u32, every op and mode', valueType: 'u32', sizes: long, ops: cycle(['sum', 'max', 'min'], long.length), modes: cycle(modes, long.length), initial: true, seed: 11 }),
      ].map((make) => make()),
  };
}

function copyAlgorithm(): Algorithm {
  const policyFor = batchedCopyPolicyFor;
  const base = policyFor(caps);
  const copyCase = (c: CopyCase): SoakCase => {
    const source = backend.upload(sourceWords(c.sourceLength, c.sizes.length + 1));
    const expected = expectedDestination(c);
    const built = { args: {} as Record<string, unknown>, owned: [source] as DeviceArray[], destination: backend.upload(destinationBefore(c)) as DeviceArray };
    built.owned.push(built.destination);
    built.args.destination = built.destination;
    return {
      name: c.name,
      items: c.sizes.reduce((a, b) => a + b, 0),
      async run(variant, policy) {
        renew(backend, built, 'destination', destinationBefore(c));
        const args = { source, destination: built.destination, sizes: p.perSegment(c.sizes), sourceOffsets: p.perSegment(c.sourceOffsets), destinationOffsets: p.perSegment(c.destinationOffsets), numBuffers: p.uniform(c.sizes.length) };
        const environment: Env = env({ backend, tuning: { ...(variant === undefined ? {} : { variant }), policy } });
        const plan = (DeviceBatchedCopy.plan as unknown as (a: unknown, e: Env) => { variant: string; tempStorageBytes: number; run(t?: DeviceArray<'u8'>): Promise<void>; checked(): Promise<void>; destroy(): void })(args, environment);
        const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
        const work = async () => {
          try {
            await plan.run(temp);
            await plan.checked();
            const out = await backend.download(built.destination);
            return { plan, words: new Uint32Array(out.buffer, out.byteOffset, out.length) };
          } finally {
            temp?.destroy();
          }
        };
        return settle(work(), ({ words }) => firstMismatch(words, expected, 'destination'));
      },
      destroy: () => built.owned.forEach((a) => a.destroy()),
    };
  };
  const boundary = [0, 1, 31, 32, 33, 0, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097];
  return {
    id: 'copy',
    variants: batchedCopyVariants,
    base,
    policyFor,
    makeCases: () => [copyCase(layoutCase('boundaries', boundary, 1)), copyCase(layoutCase('long', [big(100_000), big(20_000), 3, 0, 5000], 2)), copyCase(layoutCase('many', randomSizes(many(300), 300, 7), 3))],
  };
}

/** Values a size field is set beside: radix-select's wide workgroups exist only where filter pass 0's pick is built. */
const companions: Record<string, Policy> = { radixWideWorkgroupSize: { radixPick: 'always' } };

const makers: Record<AlgorithmId, () => Algorithm> = { sort: sortAlgorithm, topk: topkAlgorithm, reduce: reduceAlgorithm, scan: scanAlgorithm, copy: copyAlgorithm };

const sizeField = /^workgroupSize$|WorkgroupSize$/;

/**
 * The fields besides `workgroupSize` that the algorithm's *PolicyFor clamps to a smaller workgroup
 * (reduce's chunk teams): a backend whose largest workgroup is `size` gets them so, and a
 * workgroupSize override alone would leave them past it, a policy segkit refuses. Other
 * workgroup-size fields are left alone (they have overrides of their own).
 */
function clampedBeside(algorithm: Algorithm, size: number): Policy {
  const base = algorithm.base as Record<string, unknown>;
  const smaller = algorithm.policyFor({ ...caps, maxWorkgroupSize: size }) as Record<string, unknown>;
  const out: Policy = {};
  for (const [field, value] of Object.entries(smaller)) {
    const was = base[field];
    if (!sizeField.test(field) && typeof value === 'number' && typeof was === 'number' && was > size && value <= size) out[field] = value;
  }
  return out;
}

/**
 * The overrides an algorithm runs under: the built-in policy; `workgroupSize` at each size (with
 * `clampedBeside`); each other workgroup-size field at each size above its built-in value (larger
 * workgroups are where a driver runs out of registers), or at every size when --fields names it;
 * then the other overrides.
 */
function policiesOf(algorithm: Algorithm): { label: string; override: Policy }[] {
  const base = algorithm.base as Record<string, unknown>;
  const fields = Object.keys(base).filter((f) => sizeField.test(f) && (fieldFilter === undefined || fieldFilter.includes(f)));
  const usable = sizes.filter((s) => s <= caps.maxWorkgroupSize);
  const out: { label: string; override: Policy }[] = [{ label: 'built-in', override: {} }];
  const note = (beside: Policy) => (Object.keys(beside).length > 0 ? ` ${JSON.stringify(beside)}` : '');
  for (const field of fields) {
    for (const size of usable) {
      if (field !== 'workgroupSize' && fieldFilter === undefined && size <= (base[field] as number)) continue;
      const beside = { ...(companions[field] ?? {}), ...(field === 'workgroupSize' ? clampedBeside(algorithm, size) : {}) };
      out.push({ label: `${field}=${size}${note(beside)}`, override: { ...beside, [field]: size } });
    }
  }
  for (const extra of [...(builtin ? builtinPolicies[algorithm.id] : []), ...userPolicies]) {
    const unknown = Object.keys(extra).filter((f) => !(f in base));
    if (unknown.length > 0) {
      if (userPolicies.includes(extra)) console.log(`[soak] ${algorithm.id}: skipping ${JSON.stringify(extra)} (its policy has no ${unknown.join(', ')})`);
      continue;
    }
    out.push({ label: JSON.stringify(extra), override: extra });
    if (cross && 'workgroupSize' in base && !('workgroupSize' in extra)) {
      for (const size of usable) {
        const override = { ...clampedBeside(algorithm, size), ...extra, workgroupSize: size };
        out.push({ label: JSON.stringify(override), override });
      }
    }
  }
  const seen = new Set<string>();
  return out.filter((entry) => !seen.has(entry.label) && seen.add(entry.label));
}

type Status = 'ok' | 'refused' | 'fail';
interface Result {
  readonly algorithm: AlgorithmId;
  readonly policy: string;
  readonly override: Policy;
  /** The variant forced, or 'natural'. */
  readonly variant: string;
  /** The variant the plan ran. */
  readonly ran: string | undefined;
  readonly case: string;
  readonly status: Status;
  readonly message: string | undefined;
  readonly ms: number;
  /** Pipelines the run compiled (most of a soak's time). */
  readonly compiled: number;
}

class TimedOut extends Error {}
const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimedOut(`no result after ${ms / 1000} s (a hung device?)`)), ms)))]).finally(() => clearTimeout(timer));
};

const describeError = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
const isRefusal = (error: unknown) => error instanceof SegkitUsageError && refusedPattern.test(error.message);

const started = performance.now();
const info = 'adapterInfo' in backend ? (backend as { adapterInfo?: Record<string, string> }).adapterInfo : undefined;
console.log(`[soak] ${info ? `${info.description || info.device} (${info.vendor}, ${info.architecture})` : 'WebGPU'}; capabilities ${JSON.stringify(caps)}`);
const skippedSizes = sizes.filter((s) => s > caps.maxWorkgroupSize);
if (skippedSizes.length > 0) console.log(`[soak] skipping workgroup sizes ${skippedSizes.join(', ')}: above maxWorkgroupSize ${caps.maxWorkgroupSize}`);

const results: Result[] = [];
const basePolicies: Record<string, object> = {};
let aborted: string | undefined;
for (const id of chosen as AlgorithmId[]) {
  if (aborted !== undefined) break;
  const algorithm = makers[id]();
  basePolicies[id] = algorithm.base;
  const cases = algorithm.makeCases();
  const kept = cases.filter((c) => caseFilter === undefined || caseFilter.some((f) => c.name.includes(f)));
  for (const c of cases) if (!kept.includes(c)) c.destroy();
  const policies = policiesOf(algorithm);
  console.log(`\n[soak] ${id}: ${kept.length} cases (${kept.map((c) => `${c.name}: ${c.items} items`).join('; ')}) x ${policies.length} policies x ${algorithm.variants.length + 1} variants`);
  for (const { label, override } of policies) {
    if (aborted !== undefined) break;
    const t0 = performance.now();
    const compiled0 = backend.stats().kernelsCompiled;
    const counts = { ok: 0, refused: 0, fail: 0 };
    for (const variant of [undefined, ...algorithm.variants]) {
      if (aborted !== undefined) break;
      for (const c of kept) {
        const r0 = performance.now();
        const compiledBefore = backend.stats().kernelsCompiled;
        let status: Status;
        let ran: string | undefined;
        let message: string | undefined;
        try {
          const result = await withTimeout(c.run(variant, override), timeoutMs);
          ran = result.variant;
          status = result.problem === undefined ? 'ok' : 'fail';
          message = result.problem;
        } catch (error) {
          status = isRefusal(error) ? 'refused' : 'fail';
          message = describeError(error);
          if (error instanceof TimedOut) aborted = `${id} ${label} [${variant ?? 'natural'}] ${c.name}: ${message}`;
          else if (backend.lost) aborted = `the device was lost: ${message}`;
        }
        // The built-in policy's natural plan must run every case.
        if (status === 'refused' && variant === undefined && label === 'built-in') {
          status = 'fail';
          message = `the natural plan under the built-in policy was refused: ${message}`;
        }
        counts[status]++;
        const result: Result = { algorithm: id, policy: label, override, variant: variant ?? 'natural', ran, case: c.name, status, message, ms: Number((performance.now() - r0).toFixed(1)), compiled: backend.stats().kernelsCompiled - compiledBefore };
        results.push(result);
        if (status === 'fail') console.log(`FAIL ${id} ${label} [${result.variant}${ran !== undefined && ran !== variant ? ` -> ${ran}` : ''}] ${c.name}: ${message}`);
        else if (status === 'refused' && verbose) console.log(`refused ${id} ${label} [${result.variant}] ${c.name}: ${message}`);
        if (aborted !== undefined) break;
      }
    }
    console.log(`[soak] ${id} ${label}: ${counts.ok} ok, ${counts.refused} refused, ${counts.fail} FAIL (${((performance.now() - t0) / 1000).toFixed(1)} s, ${backend.stats().kernelsCompiled - compiled0} pipelines compiled)`);
  }
  if (aborted === undefined) for (const c of kept) c.destroy();
}

// Per algorithm: policies x variants (ok/refused/FAIL), then the refusals.
for (const id of chosen as AlgorithmId[]) {
  const mine = results.filter((r) => r.algorithm === id);
  if (mine.length === 0) continue;
  const variants = [...new Set(mine.map((r) => r.variant))];
  const policies = [...new Set(mine.map((r) => r.policy))];
  console.log(`\n${id}: ok/refused/FAIL per policy and variant ('natural': no variant forced)`);
  printTable(
    policies.map((policy) => {
      const row: Record<string, unknown> = { policy };
      for (const variant of variants) {
        const cell = mine.filter((r) => r.policy === policy && r.variant === variant);
        const n = (s: Status) => cell.filter((r) => r.status === s).length;
        row[variant] = cell.length === 0 ? '' : `${n('ok')}/${n('refused')}/${n('fail')}${n('fail') > 0 ? ' !' : ''}`;
      }
      return row;
    }),
    ['policy', ...variants],
  );
  const naturals = [...new Set(mine.filter((r) => r.variant === 'natural' && r.ran !== undefined).map((r) => r.ran))];
  if (naturals.length > 0) console.log(`natural plans ran: ${naturals.join(', ')}`);
  const refusals = new Map<string, { count: number; first: Result }>();
  for (const r of mine) {
    if (r.status !== 'refused') continue;
    const key = (r.message ?? '').slice(0, 160);
    const entry = refusals.get(key);
    if (entry === undefined) refusals.set(key, { count: 1, first: r });
    else entry.count++;
  }
  if (refusals.size > 0) {
    console.log(`refused (${refusals.size} distinct messages):`);
    for (const [message, { count, first }] of refusals) console.log(`  ${String(count).padStart(4)}x ${message}  [first: ${first.policy} ${first.variant}, ${first.case}]`);
  }
}

const total = (s: Status) => results.filter((r) => r.status === s).length;
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`\n[soak] ${results.length} runs: ${total('ok')} ok, ${total('refused')} refused, ${total('fail')} FAIL in ${seconds} s (${backend.stats().kernelsCompiled} pipelines compiled)${aborted === undefined ? '' : `; ABORTED: ${aborted}`}`);
if (argv.json !== undefined) {
  writeFileSync(
    argv.json,
    `${JSON.stringify({ date: new Date().toISOString(), adapter: info, capabilities: caps, argv, basePolicies, aborted, counts: { ok: total('ok'), refused: total('refused'), fail: total('fail') }, seconds: Number(seconds), results }, null, 1)}\n`,
  );
  console.log(`[soak] wrote ${argv.json}`);
}
// A hung device may never finish destroying: leave without waiting on it then.
if (aborted === undefined) backend.destroy();
process.exit(total('fail') > 0 || aborted !== undefined ? 1 : 0);
