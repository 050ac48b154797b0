import { cpuBackend } from '../src/index.js';
import { defineScanConformance } from './conformance/scan.suite.js';

defineScanConformance('cpu', async () => cpuBackend({ workers: 0 }));
