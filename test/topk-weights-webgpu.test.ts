import { vi } from 'vitest';
import { testBackends } from '../src/testing.js';
import { defineTopKWeightsConformance } from './conformance/topk-weights.suite.js';

// One lavapipe thread, as in webgpu.test.ts (its threads spin on an oversubscribed CPU).
process.env.LP_NUM_THREADS ??= '1';
// Lavapipe compiles each pipeline through LLVM: the first case of a kind takes a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

// The routing-weights epilogue on WebGPU, bit for bit with the CPU's arithmetic.
const [webgpu] = (await testBackends({ only: ['webgpu'] })).entries;
if (webgpu!.skip !== undefined) {
  if (process.env.CI) throw new Error(`WebGPU tests cannot run in CI: ${webgpu!.skip}`);
  console.warn(`[segkit] skipping the WebGPU routing-weights tests: no WebGPU adapter (${webgpu!.skip}); see .ci/install-lavapipe.sh`);
} else {
  defineTopKWeightsConformance(webgpu!.name, () => webgpu!.create());
}
