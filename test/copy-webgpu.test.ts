/**
 * The DeviceBatchedCopy conformance suite on WebGPU in Node (Dawn; Mesa's lavapipe on machines
 * without a GPU), bit for bit with referenceBatchedCopy and so with the CPU.
 *
 * No adapter: in CI (process.env.CI set) that is a failure; elsewhere the file is skipped and says why.
 */
import { describe, it, vi } from 'vitest';
import { webgpuBackend } from '../src/index.js';
import { defineCopyConformance } from './conformance/copy.suite.js';

// One lavapipe thread: its workers spin when the CPU is oversubscribed (see webgpu.test.ts).
process.env.LP_NUM_THREADS ??= '1';
// Lavapipe compiles each pipeline through LLVM (10-30 s on a busy machine).
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
  console.warn(`[segkit] skipping the WebGPU batched-copy tests: no WebGPU adapter (${missing}); see .ci/install-lavapipe.sh`);
  describe.skip('DeviceBatchedCopy on WebGPU', () => it('needs a WebGPU adapter', () => undefined));
} else {
  defineCopyConformance('webgpu', () => webgpuBackend());
}
