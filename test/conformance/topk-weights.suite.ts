/**
 * The routing-weights epilogue of top-k, written once and run on every backend: each backend's
 * weights are compared bit for bit with the host twin of the kernels' arithmetic (routing.ts, so
 * every backend gives the same bits), and within 1 ulp of a float64 reference of the formulas, over
 * random logits, ties, NaN and infinite logits, k = 1, k past the segment size (padding weights 0),
 * per-segment k on the device, both directions and every variant; bad input is refused naming the
 * parameter, outputs untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, type DeviceArray, type RoutingWeightsKind, type TopKVariant, DeviceBatchedTopK, SegkitUsageError, env, p, referenceTopK } from '../../src/index.js';
import { routingWeightsKinds, routingWeightsOfSegment } from '../../src/algorithms/batched-top-k/routing.js';
import { rowRadixMinParallelism } from '../../src/algorithms/batched-top-k/policy.js';
import { rng } from '../helpers.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => {
  f32[0] = x;
  return u32[0]!;
};
const valueOf = (bits: number) => {
  u32[0] = bits;
  return f32[0]!;
};

/** The float64 reference of one segment's weights (the formulas in IEEE double), as f32 bits; slots past `take` 0. */
export function referenceWeights(keys: readonly number[], kind: RoutingWeightsKind, scale: number, kMax: number): number[] {
  const out = new Array<number>(kMax).fill(0);
  if (keys.length === 0) return out;
  let terms: number[];
  if (kind === 'softmax') {
    const max = Math.max(...keys);
    terms = keys.map((x) => Math.exp(x - max));
  } else {
    terms = keys.map((x) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x))));
  }
  const sum = terms.reduce((a, b) => a + b, 0);
  terms.forEach((t, j) => {
    const w = Math.fround((t / sum) * scale);
    out[j] = Number.isNaN(w) ? 0x7fc00000 : Math.abs(w) < 2 ** -126 ? 0 : bitsOf(w);
  });
  return out;
}

/** Distance in ulps of two f32 results (NaN only matches NaN). */
function ulps(a: number, b: number): number {
  const nanA = (a & 0x7fffffff) > 0x7f800000;
  const nanB = (b & 0x7fffffff) > 0x7f800000;
  if (nanA || nanB) return nanA && nanB ? 0 : Infinity;
  if (a >>> 31 !== b >>> 31) return a === b || (a | b) === 0x80000000 ? 0 : Infinity;
  return Math.abs(a - b);
}

interface WeightsCase {
  readonly name: string;
  readonly keys: Float32Array;
  readonly sizes: readonly number[];
  /** Per segment (a host array, or on the device with `deviceK`), or one uniform value (then kMax must be it). */
  readonly k: number | readonly number[];
  readonly kMax: number;
  readonly kind: RoutingWeightsKind;
  readonly scale?: number;
  readonly direction?: 'max' | 'min';
  readonly deviceK?: boolean;
}

/** Defines the suite for one backend. `makeBackend` is called once; `destroy()` runs after. */
export function defineTopKWeightsConformance(backendName: string, makeBackend: () => Promise<Backend>): void {
  describe(`DeviceBatchedTopK routing weights on ${backendName}`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(() => backend?.destroy());

    /** Runs a case (forcing `variant` when given) and checks keys, bits against the host twin, and the float64 bound. */
    async function expectCase(c: WeightsCase, variant?: TopKVariant): Promise<TopKVariant> {
      const n = c.sizes.length;
      const owned: DeviceArray[] = [];
      const track = <A extends DeviceArray>(a: A) => (owned.push(a), a);
      try {
        const keysIn = track(backend.upload(c.keys));
        const keysOut = track(backend.alloc('f32', n * c.kMax));
        const valuesOut = track(backend.alloc('u32', n * c.kMax));
        const weightsOut = track(backend.upload(new Float32Array(n * c.kMax).fill(123)));
        const ks = typeof c.k === 'number' ? new Array<number>(n).fill(c.k) : [...c.k];
        const k =
          typeof c.k === 'number'
            ? p.uniform(c.k, { min: 1, max: c.kMax })
            : c.deviceK === true
              ? p.perSegment(track(backend.upload(Uint32Array.from(ks))), { min: 1, max: c.kMax })
              : p.perSegment(ks, { min: 1, max: c.kMax });
        const direction = c.direction ?? 'max';
        const plan = DeviceBatchedTopK.plan(
          {
            keysIn,
            keysOut,
            valuesOut,
            weightsOut,
            weights: { kind: c.kind, scale: c.scale },
            segmentSizes: p.perSegment([...c.sizes], { min: 0, max: Math.max(1, ...c.sizes) }),
            k,
            selectDirection: p.constantOption(direction),
            numSegments: p.uniform(n),
          },
          env({ backend, tuning: variant === undefined ? {} : { variant } }),
        );
        try {
          expect(plan.launches.at(-1)!.kernel).toBe('weights');
          await plan.run(plan.tempStorageBytes > 0 ? track(backend.alloc('u8', plan.tempStorageBytes)) : undefined);
        } finally {
          plan.destroy();
        }
        const keys = new Uint32Array((await backend.download(keysOut)).buffer);
        const weights = new Uint32Array((await backend.download(weightsOut)).buffer);
        const starts: number[] = [];
        c.sizes.reduce((at, size) => (starts.push(at), at + size), 0);
        const expectedKeys = referenceTopK({
          keyType: 'f32',
          keys: new Uint32Array(c.keys.buffer),
          segmentStarts: starts,
          segmentSizes: c.sizes,
          k: ks,
          directions: c.sizes.map(() => direction),
          kMax: c.kMax,
          withValues: false,
        }).keys;
        expect(keys, `${c.name}: keys (${plan.variant})`).toEqual(expectedKeys);
        const twin = new Uint32Array(n * c.kMax);
        const scale = c.scale ?? 1;
        for (let s = 0; s < n; s++) {
          const take = Math.min(ks[s]!, c.sizes[s]!, c.kMax);
          routingWeightsOfSegment(expectedKeys, twin, s * c.kMax, take, c.kMax, routingWeightsKinds.indexOf(c.kind), bitsOf(scale));
          const selected = Array.from(expectedKeys.subarray(s * c.kMax, s * c.kMax + take), valueOf);
          const reference = referenceWeights(selected, c.kind, scale, c.kMax);
          for (let j = 0; j < c.kMax; j++) {
            const got = weights[s * c.kMax + j]!;
            const distance = ulps(got, reference[j]!);
            // The message (every selected key) only when it fails: k past a tile makes it long.
            if (distance > 1) expect(distance, `${c.name} (${plan.variant}): segment ${s}, slot ${j}: ${valueOf(got)} vs float64 ${valueOf(reference[j]!)} (keys ${selected.join(', ')})`).toBeLessThanOrEqual(1);
          }
        }
        const first = weights.findIndex((w, i) => w !== twin[i]);
        expect(first, `${c.name} (${plan.variant}): first weight differing from the host twin at ${first}: ${weights[first]} vs ${twin[first]}`).toBe(-1);
        return plan.variant;
      } finally {
        for (const a of owned) a.destroy();
      }
    }

    const randomKeys = (count: number, spread: number, seed: number) => {
      const random = rng(seed);
      return Float32Array.from({ length: count }, () => (random() - 0.5) * spread);
    };

    for (const kind of routingWeightsKinds) {
      it(`${kind}: random logits over every variant, with a scale`, async () => {
        const sizes = [64, 300, 1, 0, 2000, 128];
        const keys = randomKeys(sizes.reduce((a, b) => a + b, 0), 20, 11);
        const c: WeightsCase = { name: `${kind} random`, keys, sizes, k: 8, kMax: 8, kind, scale: 2.5 };
        const seen = new Set<TopKVariant>();
        for (const variant of [undefined, 'reduce', 'single-tile', 'row-radix', 'radix-select'] as const) {
          if (variant === 'single-tile' && Math.max(...sizes) > 1024) continue;
          seen.add(await expectCase(c, variant));
        }
        expect([...seen].sort()).toEqual(['radix-select', 'reduce', 'row-radix']);
        await expectCase({ ...c, name: `${kind} random, single-tile`, sizes: [64, 300, 1, 0, 1000, 128], keys: randomKeys(1493, 20, 12) }, 'single-tile');
      });

      it(`${kind}: wide logits (weights near the f32 range's end), 'min' direction, large k`, async () => {
        const sizes = [50, 50, 50];
        await expectCase({ name: `${kind} wide`, keys: randomKeys(150, 250, 13), sizes, k: 40, kMax: 40, kind, scale: 1 });
        await expectCase({ name: `${kind} min`, keys: randomKeys(150, 30, 14), sizes, k: 5, kMax: 5, kind, direction: 'min', scale: 0.5 });
      });

      it(`${kind}: ties, k = 1, k past the size (padding 0), per-segment k on the device`, async () => {
        const keys = Float32Array.from([1, 1, 1, 1, 3, 3, 2, 2, 5, 0.25, 0.25, -0, 0, 7]);
        const sizes = [4, 4, 1, 2, 3];
        await expectCase({ name: `${kind} ties`, keys, sizes, k: 3, kMax: 3, kind });
        await expectCase({ name: `${kind} k=1`, keys, sizes, k: 1, kMax: 1, kind, scale: 2.5 });
        await expectCase({ name: `${kind} k past sizes`, keys, sizes, k: 6, kMax: 6, kind });
        await expectCase({ name: `${kind} per-segment k`, keys, sizes, k: [1, 4, 2, 1, 3], kMax: 4, kind, deviceK: true });
        await expectCase({ name: `${kind} per-segment host k`, keys, sizes, k: [2, 1, 1, 2, 3], kMax: 3, kind });
      });

      it(`${kind}: NaN, +Infinity and -Infinity logits`, async () => {
        const inf = Number.POSITIVE_INFINITY;
        const segments = [
          [Number.NaN, 1, 2], // NaN selected: NaN weights
          [inf, 1, 2], // softmax: NaN; sigmoid: 1 / (1 + s1 + s2)
          [-inf, 1, 2], // -inf gets 0
          [-inf, -inf, -inf], // softmax: NaN; sigmoid: every s is 0, NaN
          [inf, inf, 0], // softmax: NaN
          [-1e6, -1e6 - 64, 3], // far below: 0
          [-3e38, 3e38, 0],
        ];
        const keys = Float32Array.from(segments.flat());
        const sizes = segments.map((s) => s.length);
        await expectCase({ name: `${kind} specials`, keys, sizes, k: 3, kMax: 3, kind });
        await expectCase({ name: `${kind} specials, k=2`, keys, sizes, k: sizes.map(() => 2), kMax: 4, kind, scale: 3 });
      });

      it(`${kind}: sorted selections past a tile (the selection sort runs before the weights)`, async () => {
        const sizes = [5000, 3000, 0, 2100];
        const keys = randomKeys(10_100, 12, 15);
        const variant = await expectCase({ name: `${kind} past a tile`, keys, sizes, k: [4100, 2049, 1, 2100], kMax: 4100, kind, scale: 2.5 });
        // row-radix is natural where the backend has many workgroup slots; both variants run everywhere.
        const natural = backend.capabilities.parallelism >= rowRadixMinParallelism ? 'row-radix' : 'radix-select';
        const other = natural === 'row-radix' ? 'radix-select' : 'row-radix';
        expect(variant).toBe(natural);
        expect(await expectCase({ name: `${kind} past a tile, ${other}`, keys, sizes, k: [4100, 2049, 1, 2100], kMax: 4100, kind, scale: 2.5 }, other)).toBe(other);
        await expectCase({ name: `${kind} past a tile, min`, keys, sizes, k: 4100, kMax: 4100, kind, direction: 'min' });
      });
    }

    it('k = 1 gives exactly the scale; padding slots are +0; outputs of a softmax segment sum to the scale', async () => {
      const keys = randomKeys(40, 10, 21);
      const owned: DeviceArray[] = [];
      try {
        const keysIn = backend.upload(keys);
        const keysOut = backend.alloc('f32', 4 * 2);
        const weightsOut = backend.alloc('f32', 4 * 2);
        owned.push(keysIn, keysOut, weightsOut);
        for (const kind of routingWeightsKinds) {
          await DeviceBatchedTopK.select(
            { keysIn, keysOut, weightsOut, weights: { kind, scale: 2.5 }, segmentSizes: p.perSegment([10, 1, 0, 29], { min: 0, max: 29 }), k: p.perSegment([1, 1, 1, 1], { min: 1, max: 2 }), selectDirection: p.constantOption('max'), numSegments: p.uniform(4) },
            env({ backend }),
          );
          expect(Array.from(await backend.download(weightsOut)), kind).toEqual([2.5, 0, 2.5, 0, 0, 0, 2.5, 0]);
        }
      } finally {
        for (const a of owned) a.destroy();
      }
    });

    it('bad input is refused naming the parameter, outputs untouched', async () => {
      const owned: DeviceArray[] = [];
      try {
        const keysIn = backend.upload(randomKeys(32, 4, 31));
        const keysOut = backend.upload(new Float32Array(8).fill(7));
        const weightsOut = backend.upload(new Float32Array(8).fill(7));
        const shortWeights = backend.upload(new Float32Array(7).fill(7));
        const intKeys = backend.upload(new Int32Array(32));
        const u32Weights = backend.upload(new Uint32Array(8).fill(7));
        owned.push(keysIn, keysOut, weightsOut, shortWeights, intKeys, u32Weights);
        const base = { keysIn, keysOut, segmentSizes: p.constant(8), k: p.constant(2), selectDirection: p.constantOption('max'), numSegments: p.uniform(4) } as const;
        const cases: [object, string][] = [
          [{ ...base, weights: { kind: 'softmax' } }, 'weightsOut: required when weights is given'],
          [{ ...base, weightsOut }, "weightsOut: given without weights; say which weights to write, e.g. weights: { kind: 'softmax' }"],
          [{ ...base, weightsOut, weights: { kind: 'softmx' } }, "weights.kind: expected 'softmax' or 'sigmoid-renormalize'; got string softmx"],
          [{ ...base, weightsOut, weights: { kind: 'softmax', scal: 2 } }, "weights: unknown field 'scal' (did you mean 'scale'?)"],
          [{ ...base, weightsOut, weights: {} }, "weights: missing required field 'kind'"],
          [{ ...base, weightsOut, weights: 'softmax' }, "weights: expected { kind: 'softmax' or 'sigmoid-renormalize', scale?: number }; got string softmax"],
          [{ ...base, weightsOut, weights: { kind: 'softmax', scale: 0 } }, 'weights.scale: expected a positive finite f32, at least 2^-126 (the weights are multiplied by it); got number 0'],
          [{ ...base, weightsOut, weights: { kind: 'softmax', scale: 1e39 } }, 'weights.scale: expected a positive finite f32, at least 2^-126 (the weights are multiplied by it); got number 1e+39'],
          [{ ...base, weightsOut, weights: { kind: 'sigmoid-renormalize', scale: Number.NaN } }, 'weights.scale: expected a positive finite f32, at least 2^-126 (the weights are multiplied by it); got number NaN'],
          [{ ...base, keysIn: intKeys, keysOut: backend.upload(new Int32Array(8)), weightsOut, weights: { kind: 'softmax' } }, 'weights: routing weights need f32 keys; keysIn holds i32'],
          [{ ...base, weightsOut: shortWeights, weights: { kind: 'softmax' } }, 'weightsOut: needs numSegments * kMax = 4 * 2 = 8 elements (plan.outputLength); has 7'],
          [{ ...base, weightsOut: keysOut, weights: { kind: 'softmax' } }, 'keysIn, keysOut, valuesIn, valuesOut and weightsOut must be distinct arrays (top-k does not run in place)'],
        ];
        for (const [args, message] of cases) {
          const error = await DeviceBatchedTopK.select(args as never, env({ backend })).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, message).toBeInstanceOf(SegkitUsageError);
          expect((error as Error).message).toBe(message);
        }
        const dtypeError = await DeviceBatchedTopK.select({ ...base, weightsOut: u32Weights, weights: { kind: 'softmax' } } as never, env({ backend })).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(dtypeError).toBeInstanceOf(SegkitUsageError);
        expect((dtypeError as Error).message).toMatch(/^weightsOut: /);
        expect(Array.from(await backend.download(keysOut))).toEqual(new Array(8).fill(7));
        expect(Array.from(await backend.download(weightsOut))).toEqual(new Array(8).fill(7));
      } finally {
        for (const a of owned) a.destroy();
      }
    });
  });
}
