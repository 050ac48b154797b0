import { cpuBackend } from '../src/index.js';
import { defineSortConformance } from './conformance/sort.suite.js';

defineSortConformance('cpu', async () => cpuBackend({ workers: 0 }));
