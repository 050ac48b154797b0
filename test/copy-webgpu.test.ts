/**
 * The DeviceBatchedCopy conformance suite on WebGPU in Node (Dawn; Mesa's lavapipe on machines
 * without a GPU), bit for bit with referenceBatchedCopy and so with the CPU.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineCopyConformance } from './conformance/copy.suite.js';
import { webgpuAvailable } from './webgpu-adapter.js';

// Lavapipe compiles each pipeline through LLVM (10-30 s on a busy machine).
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

if (await webgpuAvailable('the WebGPU batched-copy tests')) {
  defineCopyConformance('webgpu', () => webgpuBackend());
}
