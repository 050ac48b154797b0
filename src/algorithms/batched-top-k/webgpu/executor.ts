/// <reference types="@webgpu/types" />
import type { DeviceArray } from '../../../backends/backend.js';
import { type WebGpuProgram, uniformBytes, uniformFields } from '../../../backends/webgpu/program.js';
import { type CompiledProgram, type WebGpuRuntime, webgpuRuntime } from '../../../backends/webgpu/webgpu-backend.js';
import { SegkitUsageError } from '../../../errors.js';
import { radixFilterTiles, radixTiles } from '../policy.js';
import type { TopKExecutor, TopKKernelId, TopKLaunch, TopKRun } from '../problem.js';
import { type TopKKernelFacts, countOf, directionOf, kernelFacts, needsBlock } from './facts.js';
import { radixFilterProgram } from './radix-filter.js';
import { radixFinalizeProgram } from './radix-finalize.js';
import { radixHistogramProgram } from './radix-histogram.js';
import { radixInitProgram } from './radix-init.js';
import { reduceMergeProgram, reduceProgram } from './reduce.js';
import { segmentOffsetsProgram } from './segment-offsets.js';
import { singleTileProgram } from './single-tile.js';
import { validateFacts, validateProgram } from './validate.js';

/*
 * Runs a top-k plan on WebGPU: every launch of the plan in one command encoder, one compute pass and
 * one submit (WebGPU makes one dispatch's storage writes visible to the next within a pass), with no
 * read-back; plan.ts reads the status word afterwards when it validates.
 *
 * Per run:
 * - pipelines: one per kernel and static facts (facts.ts), compiled lazily on first use and cached
 *   by the backend; the programs themselves are memoized here by the same key;
 * - per plan (keyed on TopKRun.cache): the resolved programs, pipelines, temporary-storage ranges
 *   and uniform regions, resolved on the first run; and the bind groups of the last run, reused
 *   while every bound buffer (uniform and block scratch, temp, keys, values, status) is the same;
 * - uniforms: each launch's values (host numbers: kMax, a uniform k, slot offsets, the pass, ...) in
 *   a 256-byte-aligned region of the backend's uniform buffer, written once per run — kernel
 *   arguments, not uploads;
 * - the device block: word 0 is the status word 'validate' writes; after it, every device-only input
 *   the run reads (numSegments, sizes, k, directions, bounds, checked arrays) is copied in on the
 *   device before the pass, so a kernel binds at most six storage buffers whatever the parameters
 *   (WebGPU guarantees only eight per stage);
 * - temporary storage: one binding; slots are addressed by word offsets.
 */

const blockHeaderWords = 4;

/** Temporary-storage slots each kernel reads or writes. */
const slotsOf: Record<TopKKernelId, readonly string[]> = {
  validate: [],
  'segment-offsets': ['offsets'],
  'single-tile': ['offsets'],
  reduce: ['offsets', 'partials'],
  'reduce-merge': ['offsets', 'partials'],
  'radix-init': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-histogram': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-fallback': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-filter': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
  'radix-finalize': ['offsets', 'segmentState', 'histogram', 'selected', 'candidates0', 'candidates1'],
};

const slotUniform: Record<string, string> = {
  offsets: 'offsetsAt',
  partials: 'partialsAt',
  segmentState: 'stateAt',
  histogram: 'histogramAt',
  selected: 'selectedAt',
  candidates0: 'candidates0At',
  candidates1: 'candidates1At',
};

/** Programs by kernel and facts; a pipeline's cache key is its program's. */
const programs = new Map<string, WebGpuProgram>();

function programFor(launch: TopKLaunch, run: TopKRun, facts: TopKKernelFacts, factsKey: string): WebGpuProgram {
  const multiChunk = launch.kernel === 'reduce' && run.launches.some((l) => l.kernel === 'reduce-merge');
  const validate = launch.kernel === 'validate' ? validateFacts(run.checks, run.totalNumItems !== undefined) : undefined;
  const key = `${launch.kernel}|${multiChunk}|${validate === undefined ? '' : JSON.stringify(validate)}|${factsKey}`;
  let program = programs.get(key);
  if (program !== undefined) return program;
  switch (launch.kernel) {
    case 'validate':
      program = validateProgram(facts, validate!, 'topk/validate');
      break;
    case 'segment-offsets':
      program = segmentOffsetsProgram(facts, launch.name);
      break;
    case 'single-tile':
      program = singleTileProgram(facts, launch.name);
      break;
    case 'reduce':
      program = reduceProgram(facts, launch.name, multiChunk);
      break;
    case 'reduce-merge':
      program = reduceMergeProgram(facts, launch.name);
      break;
    case 'radix-init':
      program = radixInitProgram(facts, launch.name);
      break;
    case 'radix-histogram':
      program = radixHistogramProgram(facts, launch.name);
      break;
    case 'radix-fallback':
      program = radixHistogramProgram(facts, launch.name, true);
      break;
    case 'radix-filter':
      program = radixFilterProgram(facts, launch.name);
      break;
    case 'radix-finalize':
      program = radixFinalizeProgram(facts, launch.name);
      break;
    default:
      throw new Error(`internal: no WebGPU kernel for '${String(launch.kernel)}'`);
  }
  programs.set(key, program);
  return program;
}

/** Device-only inputs gathered into the block: word offsets and lengths by array. */
class DeviceBlock {
  private readonly entries = new Map<DeviceArray, { at: number; words: number }>();
  private nextWord = blockHeaderWords;

  /** Reserves `words` words (at most the array's length) for `array`. */
  add(array: DeviceArray, words: number): void {
    const wanted = Math.min(array.length, Math.max(0, words));
    const entry = this.entries.get(array);
    if (entry !== undefined) {
      if (entry.words >= wanted) return;
      this.entries.delete(array);
    }
    this.entries.set(array, { at: this.nextWord, words: wanted });
    this.nextWord += wanted;
  }

  at(array: DeviceArray): { at: number; words: number } {
    const entry = this.entries.get(array);
    if (entry === undefined) throw new Error('internal: a device input is missing from the block');
    return entry;
  }

  get words(): number {
    return this.nextWord;
  }

  copies(): readonly [DeviceArray, { at: number; words: number }][] {
    return [...this.entries];
  }
}

function gatherBlock(run: TopKRun): DeviceBlock {
  const { problem } = run;
  const block = new DeviceBlock();
  const perSegment = problem.maxSegments;
  const add = (source: { kind: string; array?: DeviceArray }, perSegmentWords: number) => {
    if (source.kind === 'device') block.add(source.array!, 1);
    else if (source.kind === 'perSegment') block.add(source.array!, perSegmentWords);
  };
  add(problem.numSegments, 1);
  add(problem.segmentSizes, perSegment);
  if (problem.layout.kind === 'strided') add(problem.layout.stride, 1);
  add(problem.k, perSegment);
  add(problem.direction, perSegment);
  if (problem.segmentSizeDeviceBounds !== undefined) block.add(problem.segmentSizeDeviceBounds, 2);
  if (run.status !== undefined) {
    for (const check of run.checks) {
      block.add(check.array, check.kind === 'per-segment' ? perSegment : check.kind === 'scalar' ? 1 : 2);
      if (check.deviceBounds !== undefined) block.add(check.deviceBounds, 2);
    }
  }
  return block;
}

/** Uniform values of a run shared by its launches. */
function runUniforms(run: TopKRun, block: DeviceBlock): Record<string, number> {
  const { problem, policy } = run;
  const values: Record<string, number> = {
    kMax: problem.kMax,
    maxSegments: problem.maxSegments,
    keysLength: problem.keysLength,
    chunks: Math.max(1, Math.ceil(problem.maxSegmentSize / policy.reduceChunkItems)),
    tiles: radixTiles(policy, problem.maxSegmentSize),
    filterTiles: radixFilterTiles(policy, problem.maxSegmentSize, problem.maxSegments),
  };
  const source = (name: string, s: { kind: string; value?: number; array?: DeviceArray } | undefined) => {
    if (s === undefined) return;
    if (s.kind === 'uniform') values[name] = countOf(s.value!);
    else if (s.kind === 'device' || s.kind === 'perSegment') {
      const entry = block.at(s.array!);
      values[`${name}At`] = entry.at;
      values[`${name}Len`] = entry.words;
    }
  };
  source('numSegments', problem.numSegments);
  source('segmentSize', problem.segmentSizes);
  source('stride', problem.layout.kind === 'strided' ? problem.layout.stride : undefined);
  source('k', problem.k);
  if (problem.direction.kind === 'uniform') values.direction = directionOf(problem.directionOfOption, countOf(problem.direction.value));
  else source('direction', problem.direction);
  if (problem.segmentSizeDeviceBounds !== undefined) {
    const entry = block.at(problem.segmentSizeDeviceBounds);
    values.sizeBoundsAt = entry.at;
    values.sizeBoundsLen = entry.words;
  }
  if (run.status !== undefined) {
    run.checks.forEach((check, i) => {
      const entry = block.at(check.array);
      values[`check${i}At`] = entry.at;
      values[`check${i}Len`] = entry.words;
      values[`check${i}Min`] = countOf(check.bounds.min);
      values[`check${i}Max`] = countOf(check.bounds.max);
      if (check.deviceBounds !== undefined) {
        const bounds = block.at(check.deviceBounds);
        values[`check${i}BoundsAt`] = bounds.at;
        values[`check${i}BoundsLen`] = bounds.words;
      }
    });
    if (run.totalNumItems !== undefined) {
      values.totalMin = countOf(run.totalNumItems.min);
      values.totalMax = countOf(run.totalNumItems.max);
    }
  }
  if (run.layout.has('candidates0')) values.candidatesLen = run.layout.slot('candidates0').bytes >>> 2;
  return values;
}

/** The byte range of temporary storage a launch binds, and the slot offsets (words) within it. */
function tempBinding(run: TopKRun, kernel: TopKKernelId, runtime: WebGpuRuntime, name: string): { offset: number; size: number; slots: Record<string, number> } {
  const layout = run.layout;
  const used = slotsOf[kernel].filter((slot) => layout.has(slot)).map((slot) => layout.slot(slot));
  let offset = 0;
  let end = layout.totalBytes;
  if (end > runtime.maxStorageBufferBindingSize && used.length > 0) {
    offset = Math.min(...used.map((s) => s.offset));
    offset -= offset % runtime.minStorageBufferOffsetAlignment;
    end = Math.max(...used.map((s) => s.offset + s.bytes));
  }
  const size = Math.max(4, Math.ceil((end - offset) / 4) * 4);
  if (size > runtime.maxStorageBufferBindingSize) {
    throw new SegkitUsageError(
      `${name}: needs ${size} bytes of temporary storage in one binding; this device binds at most ${runtime.maxStorageBufferBindingSize} bytes (maxStorageBufferBindingSize). Bound the total number of items (totalNumItems) or use smaller segments`,
    );
  }
  const slots: Record<string, number> = {};
  for (const slot of used) slots[slotUniform[slot.name]!] = (slot.offset - offset) >>> 2;
  return { offset, size, slots };
}

function checkBindable(array: DeviceArray | undefined, what: string, runtime: WebGpuRuntime): void {
  if (array === undefined) return;
  const bytes = array.length * 4;
  if (bytes > runtime.maxStorageBufferBindingSize) {
    throw new SegkitUsageError(
      `${what}: ${array.length} elements (${bytes} bytes) exceed the ${runtime.maxStorageBufferBindingSize} bytes one storage binding of this device holds (maxStorageBufferBindingSize); split the call into batches of segments`,
    );
  }
}

/** A launch resolved once per plan: its program, pipeline, temporary-storage range and grid. */
interface PreparedLaunch {
  readonly launch: TopKLaunch;
  readonly program: WebGpuProgram;
  readonly compiled: CompiledProgram;
  readonly temp: { offset: number; size: number; slots: Record<string, number> } | undefined;
  readonly x: number;
  readonly y: number;
  readonly fields: readonly string[];
  /** Byte offset of the launch's uniform region. */
  readonly region: number;
  readonly uniformSize: number;
}

/** What a plan resolves once (per runtime), and the bind groups of its last buffers. */
interface PreparedRun {
  readonly runtime: WebGpuRuntime;
  readonly runLaunches: readonly TopKLaunch[];
  readonly usesBlock: boolean;
  readonly launches: readonly PreparedLaunch[];
  readonly uniformTotal: number;
  /** The buffers (and block size) the bind groups were made for; any change remakes them. */
  bindKey: readonly unknown[] | undefined;
  bindGroups: readonly GPUBindGroup[] | undefined;
}

/** Per plan (TopKRun.cache): programs, pipelines, uniform regions and bind groups. */
const preparedRuns = new WeakMap<object, PreparedRun>();

function prepare(run: TopKRun, runtime: WebGpuRuntime): PreparedRun {
  const facts = kernelFacts(run, runtime.subgroups);
  const factsKey = JSON.stringify(facts);
  const alignment = Math.max(256, runtime.minUniformBufferOffsetAlignment);
  let uniformTotal = 0;
  const launches = run.launches.map((launch): PreparedLaunch => {
    const program = programFor(launch, run, facts, factsKey);
    const compiled = runtime.compile(program);
    const temp = program.bindings.some((b) => b.name === 'temp') ? tempBinding(run, launch.kernel, runtime, launch.name) : undefined;
    // Grids past maxComputeWorkgroupsPerDimension go 2D; kernels flatten the workgroup id.
    const x = Math.min(launch.grid, runtime.maxWorkgroupsPerDimension);
    const y = x === 0 ? 0 : Math.ceil(launch.grid / x);
    if (y > runtime.maxWorkgroupsPerDimension) {
      throw new SegkitUsageError(`${launch.name}: ${launch.grid} workgroups exceed this device's dispatch limit of ${runtime.maxWorkgroupsPerDimension}^2`);
    }
    const region = uniformTotal;
    const uniformSize = uniformBytes(program);
    uniformTotal += Math.ceil(uniformSize / alignment) * alignment;
    return { launch, program, compiled, temp, x, y, fields: uniformFields(program), region, uniformSize };
  });
  return { runtime, runLaunches: run.launches, usesBlock: needsBlock(facts), launches, uniformTotal, bindKey: undefined, bindGroups: undefined };
}

function sameKey(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Runs top-k plans on the WebGPU backend: one encoder, one compute pass, one submit. */
export const webgpuTopKExecutor: TopKExecutor = {
  execute(run: TopKRun): void {
    const runtime = webgpuRuntime(run.backend);
    const device = runtime.device;
    checkBindable(run.keysIn, 'keysIn', runtime);
    checkBindable(run.keysOut, 'keysOut', runtime);
    checkBindable(run.valuesIn, 'valuesIn', runtime);
    checkBindable(run.valuesOut, 'valuesOut', runtime);

    // Programs, pipelines and uniform regions of every launch: once per plan (and runtime).
    let prepared = run.cache === undefined ? undefined : preparedRuns.get(run.cache);
    if (prepared === undefined || prepared.runtime !== runtime || prepared.runLaunches !== run.launches) {
      prepared = prepare(run, runtime);
      if (run.cache !== undefined) preparedRuns.set(run.cache, prepared);
    }
    const { launches } = prepared;
    const block = prepared.usesBlock ? gatherBlock(run) : undefined;

    // Uniform values are written every run (the scratch buffer is shared by every plan).
    const shared = runUniforms(run, block ?? new DeviceBlock());
    const uniformData = new Uint32Array(Math.max(prepared.uniformTotal, 4) / 4);
    for (const { launch, program, temp, fields, region } of launches) {
      const base = region / 4;
      const slots = temp?.slots;
      for (let j = 0; j < fields.length; j++) {
        const field = fields[j]!;
        const value = field === 'grid' ? launch.grid : field === 'radixPass' ? launch.pass : (slots?.[field] ?? shared[field]);
        if (value === undefined) throw new Error(`internal: no value for uniform '${field}' of ${program.name}`);
        uniformData[base + j] = value;
      }
    }
    const uniformBuffer = runtime.scratch('uniforms', uniformData.byteLength);
    const blockBytes = block === undefined ? 0 : block.words * 4;
    const blockBuffer = block === undefined ? undefined : runtime.scratch('block', blockBytes);
    const tempBuffer = run.temp === undefined ? undefined : runtime.bufferOf(run.temp);
    const keysIn = runtime.bufferOf(run.keysIn);
    const keysOut = runtime.bufferOf(run.keysOut);
    const valuesIn = run.valuesIn === undefined ? undefined : runtime.bufferOf(run.valuesIn);
    const valuesOut = run.valuesOut === undefined ? undefined : runtime.bufferOf(run.valuesOut);
    const status = run.status === undefined ? undefined : runtime.bufferOf(run.status);

    // Bind groups: remade only when a bound buffer (or the block's size) differs from the last run's.
    const bindKey = [uniformBuffer, blockBuffer, blockBytes, tempBuffer, keysIn, keysOut, valuesIn, valuesOut, status];
    let bindGroups = prepared.bindGroups;
    if (bindGroups === undefined || !sameKey(prepared.bindKey, bindKey)) {
      const buffers: Record<string, GPUBufferBinding> = { keysIn: { buffer: keysIn }, keysIn4: { buffer: keysIn }, keysOut: { buffer: keysOut } };
      if (valuesIn !== undefined) buffers.valuesIn = { buffer: valuesIn };
      if (valuesOut !== undefined) buffers.valuesOut = { buffer: valuesOut };
      if (status !== undefined) buffers.status = { buffer: status, size: 32 };
      if (blockBuffer !== undefined) buffers.block = { buffer: blockBuffer, size: blockBytes };
      bindGroups = launches.map(({ program, compiled, temp, region, uniformSize }) => {
        const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: uniformBuffer, offset: region, size: uniformSize } }];
        program.bindings.forEach((binding, j) => {
          let resource: GPUBufferBinding | undefined;
          if (binding.name === 'temp') {
            if (tempBuffer === undefined || temp === undefined) throw new Error(`internal: ${program.name} binds temporary storage the plan has not`);
            resource = { buffer: tempBuffer, offset: temp.offset, size: temp.size };
          } else resource = buffers[binding.name];
          if (resource === undefined) throw new Error(`internal: ${program.name} binds '${binding.name}', which this run has not`);
          entries.push({ binding: j + 1, resource });
        });
        return device.createBindGroup({ layout: compiled.layout, entries });
      });
      prepared.bindGroups = bindGroups;
      prepared.bindKey = bindKey;
    }

    device.queue.writeBuffer(uniformBuffer, 0, uniformData.buffer, 0, uniformData.byteLength);
    const encoder = device.createCommandEncoder({ label: 'segkit top-k' });
    if (block !== undefined) {
      for (const [array, entry] of block.copies()) {
        if (entry.words > 0) encoder.copyBufferToBuffer(runtime.bufferOf(array), 0, blockBuffer!, entry.at * 4, entry.words * 4);
      }
    }
    const pass = encoder.beginComputePass({ label: 'segkit top-k' });
    for (let i = 0; i < launches.length; i++) {
      const { launch, compiled, x, y } = launches[i]!;
      runtime.countLaunch(launch.name);
      if (launch.grid === 0) continue;
      pass.setPipeline(compiled.pipeline);
      pass.setBindGroup(0, bindGroups[i]!);
      pass.dispatchWorkgroups(x, y);
    }
    pass.end();
    const commands = encoder.finish();
    // Everything the work uses stays referenced until it is done (bind groups remade later included).
    runtime.submit(commands, [bindGroups, launches, uniformBuffer, blockBuffer, tempBuffer, keysIn, keysOut, valuesIn, valuesOut, status]);
  },
};
