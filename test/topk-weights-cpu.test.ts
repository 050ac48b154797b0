import { testBackends } from '../src/testing.js';
import { defineTopKWeightsConformance } from './conformance/topk-weights.suite.js';

// The routing-weights epilogue on the CPU emulator, on the calling thread and with every launch of
// more than one workgroup split between threads (as segkit/testing enumerates them).
const backends = (await testBackends({ only: ['cpu', 'cpu-workers'] })).entries;
for (const entry of backends) {
  if (entry.skip === undefined) defineTopKWeightsConformance(entry.name, () => entry.create());
}
