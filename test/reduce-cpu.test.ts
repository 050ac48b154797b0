import { cpuBackend } from '../src/index.js';
import { defineReduceConformance } from './conformance/reduce.suite.js';

defineReduceConformance('cpu', async () => cpuBackend({ workers: 0 }));
