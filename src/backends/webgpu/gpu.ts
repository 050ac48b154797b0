/// <reference types="@webgpu/types" />
import { SegkitUsageError } from '../../errors.js';

/*
 * Where the `GPU` object comes from: `navigator.gpu` in browsers (and in any runtime that has one),
 * else the `webgpu` npm package (Dawn), an optional peer dependency loaded only here.
 *
 * Dawn's rule (found the hard way, see bench/gpu/): the object `create()` returns must stay reachable
 * for the life of the process. When it is garbage-collected Dawn crashes in its event processing
 * (a mutex assertion or SIGSEGV in InstanceBase::ProcessEvents), so every instance is parked on a
 * symbol-keyed global and never released.
 */

/** Where Debian/Ubuntu's Mesa puts lavapipe (software Vulkan), Dawn's adapter on GPU-less machines. */
const lavapipeIcd = '/usr/share/vulkan/icd.d/lvp_icd.json';

/** Every Dawn instance segkit created, kept reachable for the life of the process. */
const dawnInstancesKey = Symbol.for('segkit.webgpu.dawnInstances');

interface DawnModule {
  create(options: string[]): GPU;
  globals: Record<string, unknown>;
}

function keepAlive(gpu: GPU): void {
  const holder = globalThis as unknown as Record<symbol, GPU[] | undefined>;
  (holder[dawnInstancesKey] ??= []).push(gpu);
}

function browserGpu(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  return nav?.gpu ?? undefined;
}

/** Node's `process`, typed here so that segkit compiles without Node's type declarations. */
interface NodeProcess {
  versions?: { node?: string };
  env: Record<string, string | undefined>;
}

function nodeProcess(): NodeProcess | undefined {
  const proc = (globalThis as { process?: NodeProcess }).process;
  return typeof proc?.versions?.node === 'string' ? proc : undefined;
}

async function fileExists(path: string): Promise<boolean> {
  try {
    const specifier = 'node:fs';
    const fs = (await import(/* @vite-ignore */ specifier)) as { existsSync(path: string): boolean };
    return fs.existsSync(path);
  } catch {
    return false;
  }
}

let dawn: Promise<DawnModule> | undefined;

async function loadDawn(): Promise<DawnModule> {
  // A computed specifier keeps bundlers from trying to resolve the Node-only package.
  const specifier = 'webgpu';
  try {
    const module = (await import(/* @vite-ignore */ specifier)) as DawnModule;
    // Dawn's WebGPU constants (GPUBufferUsage, ...) as globals, as in a browser; never replace the host's.
    const host = globalThis as Record<string, unknown>;
    for (const [name, value] of Object.entries(module.globals)) if (host[name] === undefined) host[name] = value;
    return module;
  } catch (error) {
    throw new SegkitUsageError(
      `webgpuBackend: there is no navigator.gpu here, and the optional peer dependency 'webgpu' (Dawn for Node) could not be loaded: ${
        (error as Error).message
      }. Install it with \`npm install webgpu\`.`,
    );
  }
}

/** Options for finding an adapter. */
export interface AdapterRequest {
  powerPreference?: GPUPowerPreference | undefined;
}

const noAdapterHelp =
  "webgpuBackend: no WebGPU adapter is available. In Node, segkit runs WebGPU through the 'webgpu' package (Dawn), " +
  'which needs a Vulkan driver (on Linux) — on a machine without a GPU install Mesa\'s lavapipe (software Vulkan): ' +
  'run .ci/install-lavapipe.sh from the segkit repository, or `apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1` ' +
  '(Mesa 23 or newer; Dawn rejects older lavapipe), then run node with ' +
  `VK_ICD_FILENAMES=${lavapipeIcd}. In a browser, enable WebGPU (Chromium: --enable-unsafe-webgpu).`;

/**
 * An adapter: from `navigator.gpu` when there is one, else from Dawn. In Node, when no Vulkan driver
 * answers and Mesa's lavapipe is installed but not selected, it is tried as a fallback.
 */
export async function requestAdapter(request: AdapterRequest): Promise<GPUAdapter> {
  const options: GPURequestAdapterOptions = request.powerPreference ? { powerPreference: request.powerPreference } : {};
  const browser = browserGpu();
  if (browser !== undefined) {
    const adapter = await browser.requestAdapter(options);
    if (adapter === null) throw new SegkitUsageError(noAdapterHelp);
    return adapter;
  }
  const proc = nodeProcess();
  if (proc === undefined) throw new SegkitUsageError('webgpuBackend: this runtime has no navigator.gpu (WebGPU is not available)');
  const env = proc.env;
  // Mesa's drivers want a runtime dir; /tmp avoids a warning per process where none is set.
  env.XDG_RUNTIME_DIR ??= '/tmp';
  dawn ??= loadDawn();
  const module = await dawn;
  const gpu = module.create([]);
  keepAlive(gpu);
  let adapter = await gpu.requestAdapter(options);
  if (adapter === null && env.VK_ICD_FILENAMES === undefined && (await fileExists(lavapipeIcd))) {
    // The Vulkan loader reads VK_ICD_FILENAMES when an instance is created: a second instance sees it.
    env.VK_ICD_FILENAMES = lavapipeIcd;
    const fallback = module.create([]);
    keepAlive(fallback);
    adapter = await fallback.requestAdapter(options);
  }
  if (adapter === null) throw new SegkitUsageError(noAdapterHelp);
  return adapter;
}
