import { testBackends } from '../src/testing.js';
import { defineTopKConformance } from './conformance/topk.suite.js';

// The CPU emulator on the calling thread, as segkit/testing enumerates it.
const [cpu] = (await testBackends({ only: ['cpu'] })).entries;
defineTopKConformance(cpu!.name, () => cpu!.create());
