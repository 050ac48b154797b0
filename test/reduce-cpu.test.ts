import { cpuBackend } from '../src/index.js';
import { defineReduceConformance } from './conformance/reduce.suite.js';

defineReduceConformance('cpu', async () => cpuBackend({ workers: 0 }));
// The scalar loops that the WebAssembly SIMD loops replace where the runtime has them (and that remain
// where it has not).
defineReduceConformance('cpu, scalar loops', async () => cpuBackend({ workers: 0, simd: false }));
