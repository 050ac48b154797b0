/**
 * Stopgap entry for the bundle while dist/index.js does not export the WebGPU backend yet: segkit's
 * public API from dist, plus webgpuBackend and its top-k executor from dist's modules, registered the
 * way test/webgpu.test.ts does. bench/gpu/build.sh uses it only when dist/index.js lacks webgpuBackend.
 */
// @ts-nocheck -- dist/ is built output
export * from '../../dist/index.js';
export { webgpuBackend } from '../../dist/backends/webgpu/webgpu-backend.js';
import { registerTopKExecutor } from '../../dist/algorithms/batched-top-k/plan.js';
import { webgpuTopKExecutor } from '../../dist/algorithms/batched-top-k/webgpu/executor.js';
registerTopKExecutor('webgpu', webgpuTopKExecutor);
