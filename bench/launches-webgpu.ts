/*
 * GPU time of each launch of a segmented scan or reduce plan on WebGPU (Dawn), on the shapes of
 * bench/reduce-scan-webgpu.ts: where a plan's time goes, kernel by kernel.
 *
 * segkit records every launch of a call in one compute pass, and WebGPU timestamps only passes; so,
 * while a capture is on, this bench hands the executor a stand-in pass that records each dispatch in
 * a pass of its own with timestamps (the same pipeline, bind group and grid). Each launch's time is
 * its pass's span: one launch alone, as in the plan (Dawn puts the same barrier between two passes
 * as between two dispatches of one pass that share a buffer). Nothing in segkit changes.
 *
 *   node dist/bench/launches-webgpu.mjs [--out=DIR] [--runs=9] [--long=16777216] [--cases=moe,ragged,long]
 *     [--ops=cumsum,sum,max,argMax] [--scanConfigs='[{"label":"three","policy":{"spineWorkgroupMaxTiles":2048}}]']
 * Prints one JSON line per case, op and config: the launches' names, each one's median GPU ms, their
 * sum. --scanConfigs: scan tunings timed after the default one (a tuning the build rejects is skipped).
 */
/// <reference types="@webgpu/types" />
import { writeFileSync } from 'node:fs';
import { DeviceSegmentedReduce, DeviceSegmentedScan, p, env, webgpuBackend } from 'segkit';
import { benchDevice } from './lib/gpu-device.js';

const argv = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? '1'])) as Record<string, string>;
const runs = Number(argv.runs ?? 9);
const long = Number(argv.long ?? 16 * 1024 * 1024);
const caseFilter = argv.cases?.split(',');
const ops = (argv.ops ?? 'cumsum,sum,max,argMax').split(',');
const scanConfigs = [{ label: 'default', policy: {} }, ...(argv.scanConfigs ? (JSON.parse(argv.scanConfigs) as { label: string; policy: Record<string, number> }[]) : [])];
const median = (a: readonly number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

function fill(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return out;
}

const { device } = await benchDevice();
if (!device.features.has('timestamp-query')) throw new Error('launches-webgpu: the device has no timestamp-query');
const gpu = await webgpuBackend({ device });

/** At most this many dispatches per timed call. */
const maxDispatches = 32;
const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * maxDispatches });
const resolve = device.createBuffer({ size: 2 * maxDispatches * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const read = device.createBuffer({ size: 2 * maxDispatches * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const capture = { on: false, dispatches: 0 };
const proto = Object.getPrototypeOf(device.createCommandEncoder()) as GPUCommandEncoder;
const begin = proto.beginComputePass;
const finish = proto.finish;
proto.beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor) {
  if (!capture.on) return begin.call(this, desc);
  const encoder = this;
  let pipeline: GPUComputePipeline | undefined;
  const groups = new Map<number, GPUBindGroup | null>();
  const split = {
    label: '',
    setPipeline(x: GPUComputePipeline) {
      pipeline = x;
    },
    setBindGroup(index: number, group: GPUBindGroup | null) {
      groups.set(index, group);
    },
    dispatchWorkgroups(x: number, y = 1, z = 1) {
      const i = capture.dispatches++;
      if (i >= maxDispatches) throw new Error('launches-webgpu: too many dispatches in one call');
      const pass = begin.call(encoder, { timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
      pass.setPipeline(pipeline!);
      for (const [index, group] of groups) pass.setBindGroup(index, group);
      pass.dispatchWorkgroups(x, y, z);
      pass.end();
    },
    end() {},
    pushDebugGroup() {},
    popDebugGroup() {},
    insertDebugMarker() {},
  };
  return split as unknown as GPUComputePassEncoder;
};
proto.finish = function (this: GPUCommandEncoder, desc?: GPUCommandBufferDescriptor) {
  if (capture.on && capture.dispatches > 0) {
    this.resolveQuerySet(querySet, 0, 2 * capture.dispatches, resolve, 0);
    this.copyBufferToBuffer(resolve, 0, read, 0, 16 * capture.dispatches);
  }
  return finish.call(this, desc);
};

/** Median GPU ms of each dispatch of `call`. */
async function launchTimes(call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await call();
  await gpu.synchronize();
  const samples: number[][] = [];
  for (let r = 0; r < runs; r++) {
    Object.assign(capture, { on: true, dispatches: 0 });
    await call();
    capture.on = false;
    await gpu.synchronize();
    const n = capture.dispatches;
    await read.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(read.getMappedRange().slice(0, 16 * n));
    read.unmap();
    samples.push(Array.from({ length: n }, (_, i) => Number(t[2 * i + 1]! - t[2 * i]!) / 1e6));
  }
  return samples[0]!.map((_, i) => median(samples.map((s) => s[i]!)));
}

interface Shape { id: string; label: string; rows: number; stride: number; lengths: Uint32Array | undefined; data: Float32Array }
const shapes: Shape[] = [{ id: 'moe', label: 'MoE 65536x16', rows: 65536, stride: 16, lengths: undefined, data: fill(65536 * 16, 1) }];
{
  let state = 7;
  const lengths = Uint32Array.from({ length: 2048 }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return 1 + (state % 4096);
  });
  shapes.push({ id: 'ragged', label: 'ragged 2048 rows of 1..4096', rows: 2048, stride: 4096, lengths, data: fill(2048 * 4096, 2) });
}
shapes.push({ id: 'long', label: `one segment of ${long}`, rows: 1, stride: long, lengths: undefined, data: fill(long, 3) });

const results: Record<string, unknown>[] = [];
for (const shape of shapes.filter((x) => caseFilter === undefined || caseFilter.includes(x.id))) {
  const valuesIn = gpu.upload(shape.data);
  const scanOut = gpu.alloc('f32', shape.data.length);
  const valuesOut = gpu.alloc('f32', shape.rows);
  const indicesOut = gpu.alloc('i32', shape.rows);
  const segments = {
    segmentSizes: shape.lengths === undefined ? p.uniform(shape.stride) : p.perSegment(shape.lengths, { max: shape.stride }),
    ...(shape.lengths === undefined ? {} : { segmentStride: p.uniform(shape.stride) }),
    numSegments: p.uniform(shape.rows),
    valuesIn,
  };
  for (const op of ops) for (const config of op === 'cumsum' ? scanConfigs : [scanConfigs[0]!]) {
    let plan: ReturnType<typeof DeviceSegmentedScan.plan> | ReturnType<typeof DeviceSegmentedReduce.plan>;
    try {
      plan =
        op === 'cumsum'
          ? DeviceSegmentedScan.plan({ ...segments, valuesOut: scanOut, op: p.constantOption('sum'), mode: p.constantOption('inclusive') } as never, env({ backend: gpu, tuning: { policy: config.policy } as never }))
          : DeviceSegmentedReduce.plan({ ...segments, valuesOut, ...(op === 'argMax' ? { indicesOut } : {}), op: p.constantOption(op) } as never, env({ backend: gpu }));
    } catch (e) {
      console.log(JSON.stringify({ case: shape.label, op, config: config.label, skipped: String(e) }));
      continue;
    }
    const temp = plan.tempStorageBytes > 0 ? gpu.alloc('u8', plan.tempStorageBytes) : undefined;
    const ms = await launchTimes(() => plan.run(temp));
    const launches = plan.launches.map((l) => l.name);
    const row = { case: shape.label, op, config: config.label, variant: plan.variant, launches, launchGpuMs: ms.map((x) => +x.toFixed(4)), sumGpuMs: +ms.reduce((a, b) => a + b, 0).toFixed(4) };
    console.log(JSON.stringify(row));
    results.push(row);
    temp?.destroy();
    plan.destroy();
  }
  for (const a of [valuesIn, scanOut, valuesOut, indicesOut]) a.destroy();
}
if (argv.out) writeFileSync(`${argv.out}/launches-webgpu.json`, JSON.stringify(results, null, 1));
gpu.destroy();
device.destroy();
