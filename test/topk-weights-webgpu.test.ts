import { vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineTopKWeightsConformance } from './conformance/topk-weights.suite.js';
import { webgpuAvailable } from './webgpu-adapter.js';

// Lavapipe compiles a pipeline through LLVM at its first dispatch: a large kernel takes 10-15 s on a
// 2-core machine whose Mesa shader cache is cold, and a case that meets several new ones minutes.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

// The routing-weights epilogue on WebGPU, bit for bit with the CPU's arithmetic.
if (await webgpuAvailable('the WebGPU routing-weights tests')) {
  defineTopKWeightsConformance('webgpu', () => webgpuBackend());
}
