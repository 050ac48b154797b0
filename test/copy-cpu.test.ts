import { cpuBackend } from '../src/index.js';
import { defineCopyConformance } from './conformance/copy.suite.js';

defineCopyConformance('cpu', async () => cpuBackend({ workers: 0 }));
