import { vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineTopKWeightsConformance } from './conformance/topk-weights.suite.js';
import { webgpuAvailable } from './webgpu-adapter.js';

// Lavapipe compiles each pipeline through LLVM: the first case of a kind takes a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

// The routing-weights epilogue on WebGPU, bit for bit with the CPU's arithmetic.
if (await webgpuAvailable('the WebGPU routing-weights tests')) {
  defineTopKWeightsConformance('webgpu', () => webgpuBackend());
}
