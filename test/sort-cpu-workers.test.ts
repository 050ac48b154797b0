import { cpuBackend } from '../src/index.js';
import { defineSortConformance } from './conformance/sort.suite.js';

// The conformance suite with every launch of more than one workgroup split between the calling
// thread and a worker thread (parallelThreshold 0).
defineSortConformance('cpu, 1 worker, every launch parallel', async () => cpuBackend({ workers: 1, parallelThreshold: 0 }), { thorough: false });
