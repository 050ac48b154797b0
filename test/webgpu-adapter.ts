/**
 * Whether this machine has a WebGPU adapter, asked once per test file as a user's test would ask
 * (segkit/testing creates a device and destroys it). Without one, CI (process.env.CI set) fails the
 * file, since CI installs lavapipe and must run these tests for real; elsewhere the file's tests are
 * skipped and the warning says why and how to get a driver.
 */
import { describe, it } from 'vitest';
import { testBackends } from '../src/testing.js';

// Lavapipe's worker threads spin when the CPU is oversubscribed (a 2-core CI box, parallel test files):
// measured 19 s vs 2.5 s for the same cases with two busy processes beside it. One thread is as fast
// for the small cases here. Set before Dawn loads the driver; an explicit setting wins.
process.env.LP_NUM_THREADS ??= '1';

/** Why WebGPU cannot run here, or undefined when it can. */
async function missingAdapter(): Promise<string | undefined> {
  const [webgpu] = (await testBackends({ only: ['webgpu'] })).entries;
  return webgpu!.skip;
}

/**
 * True when WebGPU runs here; else false after a warning naming `what` (the tests the file holds) and
 * a skipped placeholder test that says why — or, in CI, an error.
 */
export async function webgpuAvailable(what: string): Promise<boolean> {
  const missing = await missingAdapter();
  if (missing === undefined) return true;
  if (process.env.CI) throw new Error(`${what} cannot run in CI: ${missing}`);
  // The backend's message says what is missing and how to install a driver.
  console.warn(`[segkit] skipping ${what}: ${missing}`);
  describe.skip(what, () => it('needs a WebGPU adapter', () => undefined));
  return false;
}

/** `describe` when WebGPU runs here, else `describe.skip` (see {@link webgpuAvailable}). */
export async function describeOnWebGpu(what: string): Promise<typeof describe | typeof describe.skip> {
  return (await webgpuAvailable(what)) ? describe : describe.skip;
}
