/**
 * Radix-select's pass 0 tests whether a key reaches the sampled threshold T on its raw bits, through
 * two windows worked out from T once per workgroup (webgpu/radix-histogram.ts `reachWindowsWgsl`),
 * instead of ordering every key. The windows must say exactly what `orderedKey(x) >= T` says, for
 * every key type, both directions, every T: here on the device, for keys at every edge of the f32
 * order (both zeros, both infinities, NaNs of either sign and any payload, subnormals, the largest
 * finite values) and random ones, against thresholds at those keys' ordered keys, one either side,
 * and at the ends and joints of the ordered range.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reachWindowsWgsl } from '../src/algorithms/batched-top-k/webgpu/radix-histogram.js';
import { type KeyType, orderedKey, selectDirections } from '../src/algorithms/batched-top-k/keys.js';
import { orderedBitsWgsl } from '../src/backends/webgpu/numerics.js';
import { type WebGpuBackend, webgpuBackend } from '../src/index.js';
import { specialF32Bits } from './conformance/topk-cases.js';
import { rng } from './helpers.js';
import { describeOnWebGpu } from './webgpu-adapter.js';
import { runShader } from './webgpu-shader.js';

const describeReach = await describeOnWebGpu("radix-select's threshold windows");

const edges: Record<KeyType, number[]> = {
  f32: [
    ...specialF32Bits,
    0x7fffffff, 0xffffffff, 0x7f800002, 0xff800001, 0x807fffff, 0x007fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000, 0x7f000000, 0xff000000, 0x80000002,
  ],
  i32: [0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe, 0x40000000, 0xc0000000],
  u32: [0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe, 0x40000000, 0xc0000000],
};

function keysOf(keyType: KeyType): Uint32Array {
  const random = rng(keyType.length * 7919);
  const keys = [...edges[keyType]];
  for (let i = 0; i < 200; i++) keys.push(Math.floor(random() * 4294967296) >>> 0);
  return Uint32Array.from(keys);
}

/** Thresholds: every key's ordered key in either direction, one either side, and the joints of the order. */
function thresholdsOf(keys: Uint32Array, keyType: KeyType): Uint32Array {
  const t = new Set<number>([0, 1, 0x007ffffe, 0x007fffff, 0x00800000, 0x7ffffffe, 0x7fffffff, 0x80000000, 0x80000001, 0xff7fffff, 0xff800000, 0xff800001, 0xfffffffe, 0xffffffff]);
  for (const x of keys) {
    for (const direction of selectDirections) {
      const o = orderedKey(x, keyType, direction);
      for (const d of [-1, 0, 1]) t.add((o + d) >>> 0);
    }
  }
  return Uint32Array.from(t);
}

describeReach("radix-select's threshold windows", () => {
  let backend: WebGpuBackend;
  beforeAll(async () => {
    backend = await webgpuBackend();
  });
  afterAll(() => backend?.destroy());

  for (const keyType of ['f32', 'i32', 'u32'] as const) {
    it(`${keyType}: a key reaches T through the windows exactly when its ordered key is at least T`, async () => {
      const device = backend.device;
      const keys = keysOf(keyType);
      const thresholds = thresholdsOf(keys, keyType);
      const cases = thresholds.length * 2;
      const code = `${orderedBitsWgsl(keyType)}
${reachWindowsWgsl(keyType)}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> thresholds: array<u32>;
@group(0) @binding(2) var<storage, read_write> reached: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let c = id.x;
  if (c >= ${cases}u) { return; }
  let w = reachWindows(thresholds[c / 2u], c % 2u);
  for (var j = 0u; j < ${keys.length}u; j++) {
    let x = keys[j];
    let r = reaches(vec4<u32>(x), w);
    reached[c * ${keys.length}u + j] = select(0u, 1u, r.x) | select(0u, 2u, r.w);
  }
}`;
      const reached = await runShader(device, code, [keys, thresholds], cases * keys.length, Math.ceil(cases / 64));

      const wrong: string[] = [];
      for (let c = 0; c < cases; c++) {
        const t = thresholds[c >> 1]!;
        const direction = selectDirections[c & 1]!;
        keys.forEach((x, j) => {
          const expected = orderedKey(x, keyType, direction) >= t ? 3 : 0;
          if (reached[c * keys.length + j] !== expected && wrong.length < 20) {
            wrong.push(`key 0x${x.toString(16)} T 0x${t.toString(16)} ${direction}: ${reached[c * keys.length + j]} (expected ${expected})`);
          }
        });
      }
      expect(wrong).toEqual([]);
      expect(cases * keys.length).toBeGreaterThan(10_000);
    });
  }
});
