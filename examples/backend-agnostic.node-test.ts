/**
 * One test, every backend (node:test): the same as examples/backend-agnostic.test.ts, with Node's
 * own test runner. segkit/testing needs no runner: a skipped backend is `{ skip: reason }`, a
 * difference is a thrown BackendMismatchError.
 *
 * Run (after npm run build): node --import tsx --test examples/backend-agnostic.node-test.ts
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Backend } from 'segkit';
import { type RunContext, testBackends } from 'segkit/testing';
import { expectedExperts, makeLogits, routeTokens } from './routing.js';

const shape = { tokens: 300, experts: 64, topK: 2 };
const logits = makeLogits(shape);

async function routing(backend: Backend, run: RunContext) {
  const outputs = await routeTokens(backend, run.track(backend.upload(logits)), shape);
  run.track(outputs.logitsOut, outputs.expertsOut);
  return outputs;
}

const backends = await testBackends({ required: process.env.CI ? ['webgpu'] : [] });
// Destroying the backends stops worker threads and GPU devices, so the process can exit.
after(() => backends.destroy());

describe('MoE routing', () => {
  for (const entry of backends.entries) {
    it(`routes each token to its top ${shape.topK} experts on ${entry.name}`, { skip: entry.skip ?? false }, async () => {
      const { outputs } = await entry.run(routing);
      assert.deepEqual(Array.from(outputs.expertsOut), expectedExperts(logits, shape));
    });
  }

  it('gives the same bits on every backend', async () => {
    const comparison = await backends.assertSame(routing, { slotsPerSegment: shape.topK });
    assert.deepEqual(comparison.runs.map((r) => r.name), backends.available.map((e) => e.name));
  });
});
