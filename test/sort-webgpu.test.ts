/**
 * The DeviceSegmentedSort conformance suite on WebGPU in Node (Dawn; Mesa's lavapipe on machines
 * without a GPU), bit for bit with the reference and so with the CPU: the cases that cover every
 * kernel and specialization kind (lavapipe compiles each pipeline slowly).
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { describe, it, vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineSortConformance } from './conformance/sort.suite.js';

process.env.LP_NUM_THREADS ??= '1';
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 });

async function probeAdapter(): Promise<string | undefined> {
  try {
    (await webgpuBackend()).destroy();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const missing = await probeAdapter();
if (missing !== undefined) {
  if (process.env.CI) throw new Error(`WebGPU tests cannot run in CI: ${missing}`);
  console.warn(`[segkit] skipping the WebGPU sort tests: no WebGPU adapter (${missing}); see .ci/install-lavapipe.sh`);
  describe.skip('DeviceSegmentedSort on WebGPU', () => it('needs a WebGPU adapter', () => undefined));
} else {
  defineSortConformance('webgpu', () => webgpuBackend(), { thorough: false });
}
