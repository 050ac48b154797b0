import { describe } from 'vitest';
import { cpuBackend } from '../src/index.js';
import { testBackends } from '../src/testing.js';
import { defineSelectionMergeConformance, defineTopKConformance } from './conformance/topk.suite.js';

// The CPU emulator on the calling thread, as segkit/testing enumerates it.
const [cpu] = (await testBackends({ only: ['cpu'] })).entries;
defineTopKConformance(cpu!.name, () => cpu!.create());

// The CPU emulator given an H200's capabilities (48 KiB of workgroup memory, 1024 workgroup slots)
// chooses as that GPU does: the merge selection sort past the tile, by its own policy.
describe('DeviceBatchedTopK on the CPU emulator given a GPU\'s capabilities', () => {
  const gpu = cpuBackend({ workers: 0, capabilities: { workgroupStorageBytes: 49152, maxWorkgroupSize: 1024, parallelism: 1024 } });
  defineSelectionMergeConformance(() => gpu);
});
