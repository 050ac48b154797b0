/**
 * Every top-k variant forced on the CPU emulator, beside the policy's own choice, for one dense shape:
 * where the selector's GPU-measured bounds do not hold on the CPU (row-radix on few workgroup slots).
 * Median of 15 batches of 10 `plan.run`s after 20 warm-up calls, ms per call.
 *
 *   SHAPE=128x4096x64 node --import tsx bench/topk-cpu-variants.ts      (rows x columns x k)
 */
import { DeviceBatchedTopK, type TopKVariant, cpuBackend, env, p } from 'segkit';

const backend = cpuBackend();
const [rows, cols, k] = (process.env.SHAPE ?? '128x4096x64').split('x').map(Number) as [number, number, number];
const keysIn = backend.upload(new Float32Array(rows * cols).map(() => Math.random() * 2 - 1));
const keysOut = backend.alloc('f32', rows * k);
const valuesOut = backend.alloc('i32', rows * k);
const args = { keysIn, keysOut, valuesOut, segmentSizes: p.uniform(cols), k: p.uniform(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) };
const variants: (TopKVariant | undefined)[] = [undefined, 'single-tile', 'reduce', 'radix-select', 'row-radix'];
for (const variant of variants) {
  let plan;
  try {
    plan = DeviceBatchedTopK.plan(args as never, env({ backend, tuning: variant === undefined ? {} : { variant } }));
  } catch {
    console.log(`${variant}: n/a`);
    continue;
  }
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  for (let i = 0; i < 20; i++) await plan.run(temp);
  await backend.synchronize();
  const times: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) await plan.run(temp);
    await backend.synchronize();
    times.push((performance.now() - t0) / 10);
  }
  times.sort((a, b) => a - b);
  console.log(`${variant ?? `natural (${plan.variant})`}: ${times[7]!.toFixed(3)} ms`);
  plan.destroy();
  temp?.destroy();
}
backend.destroy();
