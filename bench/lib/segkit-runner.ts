/**
 * segkit's side of a benchmark case, on any backend: uploads the keys once, allocates the outputs,
 * and builds the args the way a user would write them for that workload:
 *
 * - dense shapes: segmentSizes/k/numSegments uniform (runtime values, natural bounds);
 * - attention: segmentSizes p.perSegment(sizes, { min: 16, max: 8192 }), segmentStride p.constant(8192),
 *   k p.constant(256), numSegments p.constant(512);
 * - MoE with per-token k: segmentSizes p.constant(128), k p.perSegment(ks, { min: 1, max: 8 }),
 *   numSegments p.uniform(4096); the same with the ks in a DeviceArray (uploaded once, untimed);
 * - ragged rows with device-only sizes: segmentSizes p.perSegment(sizesOnDevice, { min: 1, max:
 *   stride }), segmentStride p.constant(stride), k p.constant(kMax), numSegments p.constant(rows).
 *
 * `environment` decides `guaranteeChecks`: under 'validate' the device-only cases check the sizes
 * or ks on the device every call.
 */
import { type Backend, DeviceBatchedTopK, type DeviceArray, type Env, type TopKPlan, p } from 'segkit';
import type { Case } from './cases.js';
import { constantOf } from './constant.js';

export interface SegkitCase {
  readonly plan: TopKPlan;
  /** The environment API: plan + run with temporary storage from the environment. */
  select(): Promise<void>;
  /** The two-step API: the plan made once, run with caller-owned temporary storage (no re-planning). */
  run(): Promise<void>;
  readonly keysOut: DeviceArray<'f32'>;
  readonly valuesOut: DeviceArray<'i32'>;
  destroy(): void;
}

export function segkitCase(c: Case, backend: Backend, environment: Env): SegkitCase {
  const keysIn = backend.upload(c.data);
  const owned: DeviceArray[] = [];
  const keysOut = backend.alloc('f32', c.rows * c.kMax);
  const valuesOut = backend.alloc('i32', c.rows * c.kMax);
  let plan: TopKPlan;
  let select: () => Promise<void>;
  if (c.kind === 'attention') {
    if (c.stride !== 8192 || c.kMax !== 256 || c.rows !== 512) throw new Error('attention case: args below assume 512 rows, stride 8192, k 256');
    const args = {
      keysIn,
      keysOut,
      valuesOut,
      segmentSizes: p.perSegment(c.sizes!, { min: 16, max: 8192 }),
      segmentStride: p.constant(8192),
      k: p.constant(256),
      selectDirection: p.constantOption('max'),
      numSegments: p.constant(512),
    };
    plan = DeviceBatchedTopK.plan(args, environment);
    select = () => DeviceBatchedTopK.select(args, environment);
  } else if (c.kind === 'moe-per-token-k') {
    if (c.stride !== 128 || c.kMax !== 8) throw new Error('moe case: args below assume 128 experts, k in [1, 8]');
    const args = {
      keysIn,
      keysOut,
      valuesOut,
      segmentSizes: p.constant(128),
      k: p.perSegment(c.ks!, { min: 1, max: 8 }),
      selectDirection: p.constantOption('max'),
      numSegments: p.uniform(c.rows),
    };
    plan = DeviceBatchedTopK.plan(args, environment);
    select = () => DeviceBatchedTopK.select(args, environment);
  } else if (c.kind === 'moe-per-token-k-device') {
    const ks = backend.upload(Uint32Array.from(c.ks!));
    owned.push(ks);
    const args = {
      keysIn,
      keysOut,
      valuesOut,
      segmentSizes: constantOf(c.stride),
      k: p.perSegment(ks, { min: 1, max: c.kMax }),
      selectDirection: p.constantOption('max'),
      numSegments: p.uniform(c.rows),
    };
    plan = DeviceBatchedTopK.plan(args, environment);
    select = () => DeviceBatchedTopK.select(args, environment);
  } else if (c.kind === 'ragged-device') {
    const sizes = backend.upload(Uint32Array.from(c.sizes!));
    owned.push(sizes);
    const args = {
      keysIn,
      keysOut,
      valuesOut,
      segmentSizes: p.perSegment(sizes, { min: 1, max: c.stride }),
      segmentStride: constantOf(c.stride),
      k: constantOf(c.kMax),
      selectDirection: p.constantOption('max'),
      numSegments: constantOf(c.rows),
    };
    plan = DeviceBatchedTopK.plan(args, environment);
    select = () => DeviceBatchedTopK.select(args, environment);
  } else {
    const args = {
      keysIn,
      keysOut,
      valuesOut,
      segmentSizes: p.uniform(c.stride),
      k: p.uniform(c.kMax),
      selectDirection: p.constantOption('max'),
      numSegments: p.uniform(c.rows),
    };
    plan = DeviceBatchedTopK.plan(args, environment);
    select = () => DeviceBatchedTopK.select(args, environment);
  }
  const temp = plan.tempStorageBytes > 0 ? backend.alloc('u8', plan.tempStorageBytes) : undefined;
  return {
    plan,
    select,
    run: () => plan.run(temp),
    keysOut,
    valuesOut,
    destroy() {
      keysIn.destroy();
      keysOut.destroy();
      valuesOut.destroy();
      temp?.destroy();
      for (const a of owned) a.destroy();
    },
  };
}
