/**
 * The DeviceSegmentedSort conformance suite on WebGPU in Node (Dawn; Mesa's lavapipe on machines
 * without a GPU), bit for bit with the reference and so with the CPU: the cases that cover every
 * kernel and specialization kind (lavapipe compiles each pipeline slowly).
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineSortConformance } from './conformance/sort.suite.js';
import { webgpuAvailable } from './webgpu-adapter.js';

vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

if (await webgpuAvailable('the WebGPU sort tests')) {
  defineSortConformance('webgpu', () => webgpuBackend(), { thorough: false });
}
