import { cpuBackend } from '../src/index.js';
import { defineTopKConformance } from './conformance/topk.suite.js';

defineTopKConformance('cpu', async () => cpuBackend());
