/**
 * The code under test of examples/backend-agnostic.test.ts (vitest) and
 * examples/backend-agnostic.node-test.ts (node:test): MoE routing, written once against the
 * Backend interface, so it runs unchanged on the CPU emulator and on WebGPU.
 */
import { type Backend, type DeviceArray, DeviceBatchedTopK, env, p } from 'segkit';

/** The shape of a routing problem. */
export interface RoutingShape {
  tokens: number;
  experts: number;
  topK: number;
}

/**
 * Routes each token to its `topK` best experts: `expertsOut[t * topK + j]` is token t's j-th expert
 * (best first), `logitsOut` its logit. The caller owns (and destroys) the returned arrays.
 */
export async function routeTokens(backend: Backend, logits: DeviceArray<'f32'>, shape: RoutingShape) {
  const { tokens, experts, topK } = shape;
  const logitsOut = backend.alloc('f32', tokens * topK);
  const expertsOut = backend.alloc('u32', tokens * topK);
  await DeviceBatchedTopK.maxPairs(
    { keysIn: logits, keysOut: logitsOut, valuesOut: expertsOut, segmentSizes: p.uniform(experts), k: p.uniform(topK, { min: 1, max: 8 }), numSegments: p.uniform(tokens) },
    env({ backend }),
  );
  return { logitsOut, expertsOut };
}

/** Deterministic router logits with coarse values (many ties), for tests. */
export function makeLogits(shape: RoutingShape, seed = 7): Float32Array {
  const logits = new Float32Array(shape.tokens * shape.experts);
  let state = seed >>> 0;
  for (let i = 0; i < logits.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    logits[i] = Math.round(((state / 2 ** 32) * 8 - 4) * 16) / 16;
  }
  return logits;
}

/** What routing must give, by a plain sort: logits descending, ties to the smaller expert index. */
export function expectedExperts(logits: Float32Array, shape: RoutingShape): number[] {
  const out: number[] = [];
  for (let t = 0; t < shape.tokens; t++) {
    const row = logits.subarray(t * shape.experts, (t + 1) * shape.experts);
    const order = Array.from(row.keys()).sort((a, b) => row[b]! - row[a]! || a - b);
    out.push(...order.slice(0, shape.topK));
  }
  return out;
}
