/**
 * What a backend can run, as a function of its capabilities alone, checked when planning. Every
 * backend applies the same checks, so a CPU backend given a GPU's capabilities
 * (`cpuBackend({ capabilities: gpu.capabilities })`) refuses exactly what that GPU refuses, with the
 * same message, and a test on the CPU finds it.
 */
import { type BackendCapabilities, type DeviceArray, bytesPerElement } from '../backends/backend.js';
import { SegkitUsageError } from '../errors.js';
import type { NumericFacts, OptionFacts } from '../params/resolve.js';
import type { Launch } from './problem.js';
import { type TempStorageLayout, slotAlignment } from './temp-storage.js';

/** The limits every segmented algorithm shares on a backend. */
export interface BackendLimits {
  /**
   * Bytes one storage binding holds (`maxStorageBufferBytes`): each array a kernel reads or writes,
   * the part of temporary storage one kernel binds, and the per-segment inputs of one call.
   */
  readonly maxBindingBytes: number;
  /** Workgroups of one launch: `maxWorkgroupsPerDimension` in x, as many rows of those in y. */
  readonly maxWorkgroups: number;
}

/** The limits of a backend with `capabilities`. */
export function backendLimits(capabilities: BackendCapabilities): BackendLimits {
  return {
    maxBindingBytes: capabilities.maxStorageBufferBytes,
    maxWorkgroups: capabilities.maxWorkgroupsPerDimension * capabilities.maxWorkgroupsPerDimension,
  };
}

/** The part of temporary storage one kernel binds: byte offset and size, and its slots' word offsets within it. */
export interface TemporaryStorageBinding {
  readonly offset: number;
  readonly size: number;
  /** Word offset of each slot the kernel uses, relative to `offset`, by slot name. */
  readonly slotWords: Readonly<Record<string, number>>;
}

/**
 * The range of temporary storage a kernel using `slots` binds: all of it when it fits one binding
 * (unless `span`), else the span of the slots it uses (slots start on 256-byte boundaries, a valid
 * storage-binding offset). `span`: the span alone, for a kernel that binds two ranges of temporary
 * storage side by side (they must not overlap). Undefined when the kernel uses no slot of this layout.
 */
export function temporaryStorageBinding(slots: readonly string[], layout: TempStorageLayout, maxBindingBytes: number, span = false): TemporaryStorageBinding | undefined {
  const used = slots.filter((slot) => layout.has(slot)).map((slot) => layout.slot(slot));
  if (used.length === 0) return undefined;
  let offset = 0;
  let end = layout.totalBytes;
  if (span || end > maxBindingBytes) {
    offset = Math.min(...used.map((s) => s.offset));
    offset -= offset % slotAlignment;
    end = Math.max(...used.map((s) => s.offset + s.bytes));
  }
  const slotWords: Record<string, number> = {};
  for (const slot of used) slotWords[slot.name] = (slot.offset - offset) >>> 2;
  return { offset, size: Math.max(4, Math.ceil((end - offset) / 4) * 4), slotWords };
}

/** Words a parameter's per-segment or device-only values take on the device, by array (one read by several parameters counts once). */
function deviceInputWords(parameters: readonly (NumericFacts | OptionFacts | undefined)[], maxSegments: number): { words: number; names: string[] } {
  const words = new Map<object, number>();
  const names: string[] = [];
  const add = (name: string, values: object | undefined, count: number) => {
    if (values === undefined) return;
    words.set(values, Math.max(words.get(values) ?? 0, count));
    if (!names.includes(name)) names.push(name);
  };
  for (const f of parameters) {
    if (f === undefined) continue;
    const values = f.deviceValues ?? (f.kind === 'perSegment' ? f.hostValues : undefined);
    add(f.name, values, f.kind === 'perSegment' ? maxSegments : 1);
    if ('deviceBounds' in f) add(f.name, f.deviceBounds, 2);
  }
  // The kernels read them through one binding, after a 4-word header (a WebGPU stage is sure of
  // only 8 storage bindings).
  let total = 4;
  for (const w of words.values()) total += w;
  return { words: total, names };
}

/** What {@link checkLimits} reads of a plan. */
export interface PlanShape {
  /** The arrays kernels bind, by parameter name. */
  readonly arrays: Readonly<Record<string, DeviceArray | undefined>>;
  readonly launches: readonly Launch[];
  /** Temporary-storage slots a kernel binds. */
  slotsOf(kernel: string): readonly string[];
  readonly layout: TempStorageLayout;
  /** Every parameter of the call (segment parameters and the algorithm's own). */
  readonly parameters: readonly (NumericFacts | OptionFacts | undefined)[];
  readonly maxSegments: number;
}

/** Rejects, at planning and the same way on every backend, a plan that a backend with `capabilities` cannot run. */
export function checkLimits(capabilities: BackendCapabilities, plan: PlanShape): void {
  const limits = backendLimits(capabilities);
  for (const [name, array] of Object.entries(plan.arrays)) {
    if (array === undefined) continue;
    const bytes = array.length * bytesPerElement[array.dtype];
    if (bytes > limits.maxBindingBytes) {
      throw new SegkitUsageError(
        `${name}: ${array.length} elements (${bytes} bytes) exceed the ${limits.maxBindingBytes} bytes one storage binding of this backend holds (maxStorageBufferBytes); split the call into batches of segments`,
      );
    }
  }
  const inputs = deviceInputWords(plan.parameters, plan.maxSegments);
  if (inputs.words * 4 > limits.maxBindingBytes) {
    throw new SegkitUsageError(
      `${inputs.names.join(', ')}: per-segment and device-only values of one call take ${inputs.words * 4} bytes, read through one storage binding of at most ${limits.maxBindingBytes} bytes on this backend (maxStorageBufferBytes); split the call into batches of segments`,
    );
  }
  for (const launch of plan.launches) {
    if (launch.grid === 0) continue;
    if (launch.grid > limits.maxWorkgroups) {
      throw new SegkitUsageError(
        `${launch.name}: ${launch.grid} workgroups exceed this backend's dispatch limit of ${capabilities.maxWorkgroupsPerDimension}^2 (maxWorkgroupsPerDimension); split the call into batches of segments`,
      );
    }
    const temp = temporaryStorageBinding(plan.slotsOf(launch.kernel), plan.layout, limits.maxBindingBytes);
    if (temp !== undefined && temp.size > limits.maxBindingBytes) {
      throw new SegkitUsageError(
        `${launch.name}: needs ${temp.size} bytes of temporary storage in one binding; this backend binds at most ${limits.maxBindingBytes} bytes (maxStorageBufferBytes). Bound the total number of items (totalNumItems) or use smaller segments`,
      );
    }
  }
}
