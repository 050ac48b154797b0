/// <reference types="@webgpu/types" />
import type { DeviceArray } from '../backend.js';
import { temporaryStorageBinding } from '../../dispatch/limits.js';
import { slotsOfKernel, validateForm } from '../../dispatch/plan.js';
import { boundsWords } from '../../dispatch/device-checks.js';
import { type Executor, type KernelTable, type Launch, type SegmentSource, type SegmentedRun, statusWords } from '../../dispatch/problem.js';
import { type WebGpuProgram, uniformBytes, uniformFields } from './program.js';
import { type ValidateFacts, segmentOffsetsProgram, validateFacts, validateProgram } from './prologue.js';
import { type SegmentKernelFacts, countOf, needsBlock } from './segments.js';
import { type CompiledProgram, type WebGpuRuntime, webgpuRuntime } from './webgpu-backend.js';

/*
 * Runs a segmented algorithm's plan on WebGPU: every launch in one command encoder, one compute pass
 * and one submit (WebGPU makes one dispatch's storage writes visible to the next within a pass),
 * with no read-back; when the plan validates, the status words are copied into the run's report
 * slot after the pass, and the plan reads them later (dispatch/status-reports.ts).
 *
 * Per run:
 * - pipelines: one per kernel and static facts, compiled lazily on first use and cached by the
 *   backend; the programs themselves are memoized here by the same key;
 * - per plan (keyed on SegmentedRun.cache): the resolved programs, pipelines, temporary-storage
 *   ranges and uniform regions, resolved on the first run; and the bind groups of the last few sets
 *   of bound buffers (uniform and block scratch, temp, arrays, status), reused when a run binds one
 *   of those sets again (alternating temporary storage or outputs; a new set costs one
 *   createBindGroup per launch);
 * - uniforms: each launch's values (host numbers: slot offsets, the pass, the algorithm's own, ...)
 *   in a 256-byte-aligned region of the backend's uniform buffer, written when a run's words differ
 *   from what the buffer holds (another plan ran in between, or other values) — kernel arguments,
 *   not uploads;
 * - the device block: word 0 is the status word 'validate' writes; after it, every device-only input
 *   the run reads (numSegments, sizes, the algorithm's parameters, bounds, checked arrays) is copied
 *   in on the device before the pass, so a kernel binds few storage buffers whatever the parameters
 *   (WebGPU guarantees only eight per stage);
 * - temporary storage: one binding per launch over the slots its kernel table entry names; slots
 *   are addressed by word offsets `<slot>At`.
 */

/** What an algorithm gives {@link webgpuExecutor}. */
export interface WebGpuAlgorithm<Run extends SegmentedRun, Facts extends SegmentKernelFacts> {
  /** The algorithm's kernel table (the temporary-storage slots each kernel binds). */
  readonly kernels: KernelTable<string, Run['problem'], Run['policy']>;
  /** The static facts of a run: what the WGSL is specialized on. */
  facts(run: Run, runtime: WebGpuRuntime): Facts;
  /** The program of one of the algorithm's own launches. */
  program(launch: Launch, run: Run, facts: Facts): WebGpuProgram;
  /**
   * The workgroups a launch runs here, where its program's workgroups differ from the plan's (default
   * `launch.grid`); its uniform `grid` is this count.
   */
  grid?(launch: Launch, run: Run, facts: Facts): number;
  /** What, beyond the facts, makes two launches of a kernel differ (memo key of their programs). */
  programKey?(launch: Launch, run: Run): string;
  /** The algorithm's own uniform values, shared by its launches. */
  uniforms(run: Run): Record<string, number>;
  /**
   * The uniform word of a uniform parameter (default: the value as a count); a parameter that is a
   * value of the run's data (an initial value, say) gives its bits in the run's dtype.
   */
  uniformWord?(name: string, value: number, run: Run): number;
}

const blockHeaderWords = 4;

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

function gatherBlock(run: SegmentedRun): DeviceBlock {
  const { problem } = run;
  const block = new DeviceBlock();
  const perSegment = problem.maxSegments;
  const add = (source: SegmentSource) => {
    if (source.kind === 'device') block.add(source.array, 1);
    else if (source.kind === 'perSegment') block.add(source.array, perSegment);
  };
  add(problem.numSegments);
  add(problem.segmentSizes);
  if (problem.layout.kind === 'strided') add(problem.layout.stride);
  for (const source of Object.values(problem.sources)) add(source);
  if (problem.segmentSizeDeviceBounds !== undefined) block.add(problem.segmentSizeDeviceBounds, 2);
  if (run.status !== undefined) {
    for (const check of run.checks) {
      block.add(check.array, check.kind === 'per-segment' ? perSegment : check.kind === 'scalar' ? 1 : 2);
      if (check.deviceBounds !== undefined) block.add(check.deviceBounds, 2);
    }
  }
  return block;
}

/** Uniform values of a run shared by its launches: the segments, the parameters, the checks. */
function runUniforms<Run extends SegmentedRun>(run: Run, block: DeviceBlock, algorithm: WebGpuAlgorithm<Run, SegmentKernelFacts>): Record<string, number> {
  const { problem } = run;
  const values: Record<string, number> = { maxSegments: problem.maxSegments, itemsLength: problem.itemsLength, ...algorithm.uniforms(run) };
  const source = (name: string, s: SegmentSource | undefined) => {
    if (s === undefined) return;
    if (s.kind === 'uniform') values[name] = algorithm.uniformWord?.(name, s.value, run) ?? countOf(s.value);
    else if (s.kind === 'device' || s.kind === 'perSegment') {
      const entry = block.at(s.array);
      values[`${name}At`] = entry.at;
      values[`${name}Len`] = entry.words;
    }
  };
  source('numSegments', problem.numSegments);
  source('segmentSize', problem.segmentSizes);
  source('stride', problem.layout.kind === 'strided' ? problem.layout.stride : undefined);
  for (const [name, s] of Object.entries(problem.sources)) source(name, s);
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
      const [lo, hi] = boundsWords(check.bounds, check.array.dtype);
      values[`check${i}Min`] = lo;
      values[`check${i}Max`] = hi;
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
  return values;
}

/**
 * The byte range of temporary storage a launch binds, and the slot offsets (words) within it, by
 * uniform name. Planning checked that it fits one binding on a backend with these capabilities.
 */
function tempBinding(run: SegmentedRun, slotNames: readonly string[], runtime: WebGpuRuntime, name: string, span = false): TempRange {
  const binding = temporaryStorageBinding(slotNames, run.layout, runtime.maxStorageBufferBindingSize, span) ?? { offset: 0, size: 4, slotWords: {} };
  if (binding.size > runtime.maxStorageBufferBindingSize || binding.offset % runtime.minStorageBufferOffsetAlignment !== 0) {
    throw new Error(`internal: ${name} binds ${binding.size} bytes of temporary storage at ${binding.offset}, which this device cannot bind (planning checks it)`);
  }
  const slots: Record<string, number> = {};
  for (const [slot, words] of Object.entries(binding.slotWords)) slots[`${slot}At`] = words;
  return { offset: binding.offset, size: binding.size, slots };
}

/** A range of temporary storage a launch binds, and its slots' word offsets by uniform name. */
interface TempRange {
  readonly offset: number;
  readonly size: number;
  readonly slots: Record<string, number>;
}

/**
 * The ranges of temporary storage a launch binds, by binding name: `temp` over the kernel's slots,
 * or, where the program binds ranges of its own (`ProgramBinding.tempSlots`), `temp` over the other
 * slots and each of those over its own, side by side.
 */
function tempRanges(run: SegmentedRun, program: WebGpuProgram, slotNames: readonly string[], runtime: WebGpuRuntime): Record<string, TempRange> {
  const own = program.bindings.filter((b) => b.tempSlots !== undefined);
  const ranges: Record<string, TempRange> = {};
  if (program.bindings.some((b) => b.name === 'temp')) {
    const apart = own.flatMap((b) => b.tempSlots!);
    ranges.temp = tempBinding(run, slotNames.filter((slot) => !apart.includes(slot)), runtime, program.name, own.length > 0);
  }
  for (const binding of own) ranges[binding.name] = tempBinding(run, binding.tempSlots!, runtime, program.name, true);
  const spans = Object.entries(ranges).sort(([, a], [, b]) => a.offset - b.offset);
  for (let i = 1; i < spans.length; i++) {
    const [before, a] = spans[i - 1]!;
    const [name, b] = spans[i]!;
    if (a.offset + a.size > b.offset) throw new Error(`internal: ${program.name} binds temporary storage '${before}' and '${name}' over the same bytes`);
  }
  return ranges;
}

/** A launch resolved once per plan: its program, pipeline, temporary-storage ranges and grid. */
interface PreparedLaunch {
  readonly launch: Launch;
  readonly program: WebGpuProgram;
  readonly compiled: CompiledProgram;
  /** The ranges of temporary storage it binds, by binding name. */
  readonly temp: Record<string, TempRange>;
  /** Word offsets of the slots of every range, by uniform name. */
  readonly slots: Record<string, number>;
  /** Its workgroups (the algorithm's `grid`, else the plan's). */
  readonly grid: number;
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
  readonly runLaunches: readonly Launch[];
  readonly usesBlock: boolean;
  readonly launches: readonly PreparedLaunch[];
  readonly uniformTotal: number;
  /** The launches' uniform words, refilled every run. */
  readonly uniformData: Uint32Array;
  /**
   * Bind groups by the buffers (and block size) they were made for, most recently used first: a
   * caller who alternates buffers (double-buffered outputs, a few temporary storages) reuses them.
   */
  readonly bindSets: { readonly key: readonly unknown[]; readonly groups: readonly GPUBindGroup[] }[];
}

/** Bind-group sets kept per plan. */
const bindSetsPerPlan = 4;

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Builds the WebGPU executor of an algorithm from its kernel table and programs. */
export function webgpuExecutor<Run extends SegmentedRun, Facts extends SegmentKernelFacts>(algorithm: WebGpuAlgorithm<Run, Facts>): Executor<Run> {
  /** Programs by kernel and facts; a pipeline's cache key is its program's. */
  const programs = new Map<string, WebGpuProgram>();
  /** Per plan (SegmentedRun.cache): programs, pipelines, uniform regions and bind groups. */
  const preparedRuns = new WeakMap<object, PreparedRun>();

  const slotsOf = (kernel: string): readonly string[] => slotsOfKernel(algorithm.kernels as KernelTable<string, never, never>, kernel);

  const programFor = (launch: Launch, run: Run, facts: Facts, factsKey: string): WebGpuProgram => {
    let validate: ValidateFacts | undefined;
    if (launch.kernel === 'validate') {
      const total = run.totalNumItems !== undefined;
      const form = validateForm(facts.sizes.kind === 'perSegment', facts.startMode === 2, total, run.problem.maxSegments);
      if (launch.grid !== form.grid) throw new Error(`internal: ${launch.name} has ${launch.grid} workgroups, not its ${form.spread ? 'spread' : 'ordered'} form's ${form.grid}`);
      validate = validateFacts(run.checks, total, form.spread, run.parameterNames);
    }
    const extra = validate === undefined ? (algorithm.programKey?.(launch, run) ?? '') : JSON.stringify(validate);
    const key = `${launch.kernel}|${extra}|${factsKey}`;
    let program = programs.get(key);
    if (program !== undefined) return program;
    if (validate !== undefined) program = validateProgram(facts, validate, launch.name);
    else if (launch.kernel === 'segment-offsets') program = segmentOffsetsProgram(facts, launch.name);
    else program = algorithm.program(launch, run, facts);
    programs.set(key, program);
    return program;
  };

  const prepare = (run: Run, runtime: WebGpuRuntime): PreparedRun => {
    const facts = algorithm.facts(run, runtime);
    const factsKey = JSON.stringify(facts);
    const alignment = Math.max(256, runtime.minUniformBufferOffsetAlignment);
    let uniformTotal = 0;
    // Launches of no workgroups (numSegments 0) get no program, uniforms or bind group: their
    // uniforms may name temporary storage the plan sized to nothing.
    const launches = run.launches.filter((launch) => launch.grid > 0).map((launch): PreparedLaunch => {
      const program = programFor(launch, run, facts, factsKey);
      const compiled = runtime.compile(program);
      const temp = tempRanges(run, program, slotsOf(launch.kernel), runtime);
      const slots = Object.assign({}, ...Object.values(temp).map((range) => range.slots)) as Record<string, number>;
      // Grids past maxComputeWorkgroupsPerDimension go 2D; kernels flatten the workgroup id.
      const grid = algorithm.grid?.(launch, run, facts) ?? launch.grid;
      const x = Math.min(grid, runtime.maxWorkgroupsPerDimension);
      const y = x === 0 ? 0 : Math.ceil(grid / x);
      if (y > runtime.maxWorkgroupsPerDimension) throw new Error(`internal: ${launch.name} has ${grid} workgroups, past this device's dispatch limit (planning checks it)`);
      const region = uniformTotal;
      const uniformSize = uniformBytes(program);
      uniformTotal += Math.ceil(uniformSize / alignment) * alignment;
      return { launch, program, compiled, temp, slots, grid, x, y, fields: uniformFields(program), region, uniformSize };
    });
    return { runtime, runLaunches: run.launches, usesBlock: needsBlock(facts), launches, uniformTotal, uniformData: new Uint32Array(Math.max(uniformTotal, 4) / 4), bindSets: [] };
  };

  return {
    execute(run: Run): void {
      const runtime = webgpuRuntime(run.backend);
      const device = runtime.device;

      // Programs, pipelines and uniform regions of every launch: once per plan (and runtime).
      let prepared = run.cache === undefined ? undefined : preparedRuns.get(run.cache);
      if (prepared === undefined || prepared.runtime !== runtime || prepared.runLaunches !== run.launches) {
        prepared = prepare(run, runtime);
        if (run.cache !== undefined) preparedRuns.set(run.cache, prepared);
      }
      const { launches } = prepared;
      const block = prepared.usesBlock ? gatherBlock(run) : undefined;

      // Uniform values go into the backend's scratch buffer (shared by every plan), which writes them
      // only when they are not what it holds already.
      const shared = runUniforms(run, block ?? new DeviceBlock(), algorithm as WebGpuAlgorithm<Run, SegmentKernelFacts>);
      const uniformData = prepared.uniformData;
      for (const { launch, grid, program, slots, fields, region } of launches) {
        const base = region / 4;
        for (let j = 0; j < fields.length; j++) {
          const field = fields[j]!;
          const value = field === 'grid' ? grid : field === 'launchPass' ? launch.pass : (slots[field] ?? shared[field]);
          if (value === undefined) throw new Error(`internal: no value for uniform '${field}' of ${program.name}`);
          uniformData[base + j] = value;
        }
      }
      const uniformBuffer = runtime.uniforms(uniformData, prepared);
      const blockBytes = block === undefined ? 0 : block.words * 4;
      const blockBuffer = block === undefined ? undefined : runtime.scratch('block', blockBytes);
      const tempBuffer = run.temp === undefined ? undefined : runtime.bufferOf(run.temp);
      const status = run.status === undefined ? undefined : runtime.bufferOf(run.status);
      const arrayBuffers = Object.entries(run.arrays).map(([name, array]) => [name, array === undefined ? undefined : runtime.bufferOf(array)] as const);

      // Bind groups: made only for bound buffers (and a block size) none of the recent runs had.
      const bindKey = [uniformBuffer, blockBuffer, blockBytes, tempBuffer, status, ...arrayBuffers.map(([, buffer]) => buffer)];
      const bindSets = prepared.bindSets;
      const hit = bindSets.findIndex((set) => sameKey(set.key, bindKey));
      let bindGroups: readonly GPUBindGroup[];
      if (hit >= 0) {
        const set = bindSets[hit]!;
        if (hit > 0) {
          bindSets.splice(hit, 1);
          bindSets.unshift(set);
        }
        bindGroups = set.groups;
      } else {
        const buffers: Record<string, GPUBufferBinding> = {};
        for (const [name, buffer] of arrayBuffers) if (buffer !== undefined) buffers[name] = { buffer };
        if (status !== undefined) buffers.status = { buffer: status, size: run.status!.length * 4 };
        if (blockBuffer !== undefined) buffers.block = { buffer: blockBuffer, size: blockBytes };
        bindGroups = launches.map(({ program, compiled, temp, region, uniformSize }) => {
          const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: uniformBuffer, offset: region, size: uniformSize } }];
          program.bindings.forEach((binding, j) => {
            let resource: GPUBufferBinding | undefined;
            const range = temp[binding.name];
            if (binding.name === 'temp' || binding.tempSlots !== undefined) {
              if (tempBuffer === undefined || range === undefined) throw new Error(`internal: ${program.name} binds temporary storage the plan has not`);
              resource = { buffer: tempBuffer, offset: range.offset, size: range.size };
            } else resource = buffers[binding.array ?? binding.name];
            if (resource === undefined) throw new Error(`internal: ${program.name} binds '${binding.name}', which this run has not`);
            entries.push({ binding: j + 1, resource });
          });
          return device.createBindGroup({ layout: compiled.layout, entries });
        });
        bindSets.unshift({ key: bindKey, groups: bindGroups });
        if (bindSets.length > bindSetsPerPlan) bindSets.pop();
      }

      const encoder = device.createCommandEncoder();
      if (block !== undefined) {
        for (const [array, entry] of block.copies()) {
          if (entry.words > 0) encoder.copyBufferToBuffer(runtime.bufferOf(array), 0, blockBuffer!, entry.at * 4, entry.words * 4);
        }
      }
      // Slots the launches meet in (counters, published flags) start at zero in every run.
      for (const slot of run.layout.slots) {
        if (slot.zeroed) encoder.clearBuffer(tempBuffer!, slot.offset, Math.ceil(slot.bytes / 4) * 4);
      }
      // No labels on the encoder and pass (a descriptor costs each call ~1-2 us in Dawn's Node binding);
      // the pipelines carry the kernels' names into Dawn's messages.
      const pass = encoder.beginComputePass();
      for (const launch of run.launches) runtime.countLaunch(launch.name);
      for (let i = 0; i < launches.length; i++) {
        const { compiled, x, y } = launches[i]!;
        pass.setPipeline(compiled.pipeline);
        pass.setBindGroup(0, bindGroups[i]!);
        pass.dispatchWorkgroups(x, y);
      }
      pass.end();
      const report = run.statusReport === undefined ? undefined : runtime.bufferOf(run.statusReport.array);
      if (report !== undefined && status !== undefined) encoder.copyBufferToBuffer(status, 0, report, run.statusReport!.word * 4, statusWords * 4);
      const commands = encoder.finish();
      // Everything the work uses stays referenced until it is done (bind groups remade later included).
      runtime.submit(commands, [bindGroups, launches, uniformBuffer, blockBuffer, tempBuffer, status, report, arrayBuffers]);
    },
  };
}
