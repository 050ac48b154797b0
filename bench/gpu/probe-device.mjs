// The Dawn device that the self-contained probes of bench/gpu/ (copy-kernel.mjs, argmax-probe.mjs,
// read-floor-probe.mjs) time on, with no repo code: exact timestamps where Dawn allows them, the
// high-performance adapter, and its largest storage buffers.
import { create, globals } from 'webgpu';

/** The value of `--name=value` on the command line (a string), or `def`. */
export function arg(name, def) {
  const a = process.argv.find((s) => s.startsWith(`--${name}=`));
  return a ? a.split('=')[1] : def;
}

/** A device with the features of `wanted` the adapter has (`features`: those). */
export async function probeDevice(wanted = ['timestamp-query']) {
  Object.assign(globalThis, globals);
  let gpu;
  try {
    gpu = create(['disable-dawn-features=timestamp_quantization']);
  } catch {
    gpu = create([]);
  }
  // If V8 collects the create() result, dawn.node crashes (use-after-free in
  // InstanceBase::ProcessEvents): keep it reachable for the whole run.
  (globalThis.__segkitProbeGpus ??= []).push(gpu);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no WebGPU adapter (check VK_DRIVER_FILES / VK_ICD_FILENAMES)');
  const features = wanted.filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
  });
  return { gpu, adapter, device, features };
}
