/**
 * A CPU profile of segkit's small calls on WebGPU: `plan.run` of a one-launch reduce and top-k, and
 * the MoE router with per-token k (on the device under 'validate' and 'trust', in a host array through
 * `plan.run` and `select`), each in a loop for --seconds, for `node --cpu-prof` (which native bindings,
 * which segkit functions, GC), then the same calls with every Dawn entry point replaced by a no-op:
 * segkit's own JavaScript per call.
 *
 *   node --cpu-prof --cpu-prof-dir=DIR dist/bench/webgpu-call-profile.mjs [--seconds=2]
 * (bench/gpu/run-all.sh SUITES=profile; bench/gpu/build.sh bundles it)
 */
/// <reference types="@webgpu/types" />
import { DeviceBatchedTopK, DeviceSegmentedReduce, env, p, webgpuBackend } from 'segkit';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? '1'])) as Record<string, string>;
const seconds = Number(argv.seconds ?? 2);
const backend = await webgpuBackend();
const values = backend.upload(Float32Array.from({ length: 1024 }, (_, i) => Math.sin(i)));
const out = backend.alloc('f32', 1024);
const indices = backend.alloc('i32', 1024);
const shape = { segmentSizes: p.uniform(16), numSegments: p.uniform(64) };
const plans = {
  reduce: DeviceSegmentedReduce.plan({ ...shape, valuesIn: values, valuesOut: out, op: p.constantOption('sum') } as never, env({ backend })),
  'top-k': DeviceBatchedTopK.plan({ ...shape, keysIn: values, keysOut: out, valuesOut: indices, k: p.uniform(2), selectDirection: p.constantOption('max') } as never, env({ backend })),
};

// The MoE router with per-token k (4096 tokens of 128 experts, k in 1..8): ks on the device under
// 'validate' and 'trust' (plan.run), and ks in a host array through the environment API (`select`).
const tokens = 4096;
const routerKeys = backend.upload(Float32Array.from({ length: tokens * 128 }, (_, i) => Math.sin(i * 0.37)));
const routerOut = backend.alloc('f32', tokens * 8);
const routerIndices = backend.alloc('i32', tokens * 8);
const hostKs = Array.from({ length: tokens }, (_, i) => 1 + (i % 8));
const deviceKs = backend.upload(Uint32Array.from(hostKs));
const router = (k: unknown) => ({ keysIn: routerKeys, keysOut: routerOut, valuesOut: routerIndices, segmentSizes: p.constant(128), k, selectDirection: p.constantOption('max'), numSegments: p.uniform(tokens) });
const deviceK = p.perSegment(deviceKs, { min: 1, max: 8 });
const routerPlans = {
  'router, device k, validate': DeviceBatchedTopK.plan(router(deviceK) as never, env({ backend })),
  'router, device k, trust': DeviceBatchedTopK.plan(router(deviceK) as never, env({ backend, requirements: { guaranteeChecks: 'trust' } })),
  'router, host k': DeviceBatchedTopK.plan(router(p.perSegment(hostKs, { min: 1, max: 8 })) as never, env({ backend })),
};
const hostKArgs = router(p.perSegment(hostKs, { min: 1, max: 8 }));
const hostKEnv = env({ backend });

async function loop(label: string, run: () => Promise<void>, sync: () => Promise<void>, ms: number): Promise<void> {
  let calls = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 200; i++) await run();
    await sync();
    calls += 200;
  }
  console.log(`${label.padEnd(40)} ${(((performance.now() - t0) * 1000) / calls).toFixed(2)} us per call (${calls} calls)`);
}
for (const [name, plan] of Object.entries(plans)) await loop(`${name}: plan.run`, () => plan.run(), () => backend.synchronize(), seconds * 1000);
const calls = (plan: { run(): Promise<void> }) => () => plan.run();
const routerCalls: Record<string, () => Promise<void>> = { ...Object.fromEntries(Object.entries(routerPlans).map(([name, plan]) => [`${name}: plan.run`, calls(plan)])), 'router, host k: select': () => DeviceBatchedTopK.select(hostKArgs as never, hostKEnv) };
for (const [name, call] of Object.entries(routerCalls)) await loop(name, call, () => backend.synchronize(), seconds * 1000);

// The same calls with Dawn's entry points as no-ops: segkit's JavaScript alone.
const device = backend.device as unknown as Record<string, unknown>;
const pass = { setPipeline() {}, setBindGroup() {}, dispatchWorkgroups() {}, end() {} };
const encoder = { beginComputePass: () => pass, copyBufferToBuffer() {}, finish: () => ({}) };
device.createCommandEncoder = () => encoder;
const queue = { submit() {}, writeBuffer() {}, onSubmittedWorkDone: () => Promise.resolve() };
Object.defineProperty(device, 'queue', { value: queue });
// The backend keeps the queue it read from the device when it was made.
(backend as unknown as Record<string, unknown>).queue = queue;
for (const [name, plan] of Object.entries(plans)) await loop(`${name}: plan.run, Dawn stubbed`, () => plan.run(), async () => {}, 1000);
for (const [name, call] of Object.entries(routerCalls)) await loop(`${name}, Dawn stubbed`, call, async () => {}, 1000);
process.exit(0);
