/**
 * One test, every backend (vitest): MoE routing (examples/routing.ts) run on the CPU emulator, the
 * CPU emulator with worker threads, and WebGPU where this machine has an adapter (the test is
 * skipped otherwise, and its name says why); each checked against a plain sort, then all compared
 * bit for bit with segkit/testing.
 *
 * Run: npx vitest run examples/backend-agnostic.test.ts
 * The same test under node:test: examples/backend-agnostic.node-test.ts.
 */
import type { Backend } from 'segkit';
import { type RunContext, testBackends } from 'segkit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { expectedExperts, makeLogits, routeTokens } from './routing.js';

const shape = { tokens: 300, experts: 64, topK: 2 };
const logits = makeLogits(shape);

/** The test body, written once: what it returns is downloaded and compared. */
async function routing(backend: Backend, run: RunContext) {
  const outputs = await routeTokens(backend, run.track(backend.upload(logits)), shape);
  run.track(outputs.logitsOut, outputs.expertsOut);
  return outputs;
}

// In CI a missing WebGPU adapter fails the file instead of skipping.
const backends = await testBackends({ required: process.env.CI ? ['webgpu'] : [] });
afterAll(() => backends.destroy());

describe('MoE routing', () => {
  for (const entry of backends.entries) {
    it.skipIf(entry.skip !== undefined)(`routes each token to its top ${shape.topK} experts on ${entry.name}${entry.skip ? ` (skipped: ${entry.skip})` : ''}`, async () => {
      const { outputs } = await entry.run(routing);
      expect(Array.from(outputs.expertsOut)).toEqual(expectedExperts(logits, shape));
    });
  }

  it('gives the same bits on every backend', async () => {
    // Throws a BackendMismatchError naming the output, segment, slot, both values and both backends.
    const comparison = await backends.assertSame(routing, { slotsPerSegment: shape.topK });
    expect(comparison.runs.map((r) => r.name)).toEqual(backends.available.map((e) => e.name));
  });
});
