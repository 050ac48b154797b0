// The Dawn device that the self-contained probes of bench/gpu/ (copy-kernel.mjs, argmax-probe.mjs,
// read-floor-probe.mjs; tile-radix-probe.mjs takes its helpers and a device of its own) time on, with no repo code: exact timestamps where Dawn allows them, the
// high-performance adapter, and its largest storage buffers.
import { create, globals } from 'webgpu';

/**
 * WGSL `fn name(bits: u32) -> u32`: an f32's bits as an unsigned key in the order of their values
 * without a branch (-0 with +0, every NaN above +Infinity), as segkit's kernels order them.
 */
export function orderedKeyWgsl(name) {
  return `fn ${name}(bits: u32) -> u32 {
  let flipped = bits ^ (bitcast<u32>(bitcast<i32>(bits) >> 31u) | 0x80000000u);
  let zeroed = select(flipped, 0x80000000u, bits == 0x80000000u);
  return select(zeroed, 0xffffffffu, (bits & 0x7fffffffu) > 0x7f800000u);
}`;
}

/** orderedKeyWgsl's key of an f32's bits, in JavaScript: the probes' references sort by it. */
export function orderedKeyOf(bits) {
  if ((bits & 0x7fffffff) > 0x7f800000) return 0xffffffff;
  if (bits === 0x80000000) return 0x80000000;
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

/** A compute pipeline ('auto' layout, entry point main) of `code`, or an error naming `what` and the WGSL's first error. */
export async function computePipeline(device, code, what) {
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  for (const m of info.messages) if (m.type === 'error') throw new Error(`${what} WGSL: ${m.message} (line ${m.lineNum})`);
  return device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
}

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

/**
 * A device whose subgroups all have one width from 8 to 32 (`width`), with the adapter's largest
 * workgroups and workgroup memory (the radix probes' tiles), its largest storage buffers and up to 10
 * of them a stage, and timestamp queries where the adapter has them.
 */
export async function subgroupProbeDevice() {
  Object.assign(globalThis, globals);
  const gpu = create(['disable-dawn-features=timestamp_quantization']);
  // If V8 collects the create() result, dawn.node crashes: keep it reachable for the whole run.
  (globalThis.__segkitProbeGpus ??= []).push(gpu);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no WebGPU adapter');
  const width = adapter.info.subgroupMinSize;
  if (!adapter.features.has('subgroups') || width !== adapter.info.subgroupMaxSize || width > 32 || width < 8) throw new Error(`needs subgroups of one width from 8 to 32 (adapter: ${adapter.info.subgroupMinSize}..${adapter.info.subgroupMaxSize})`);
  const features = ['subgroups', ...(adapter.features.has('timestamp-query') ? ['timestamp-query'] : [])];
  const limits = adapter.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: {
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: Math.max(8, Math.min(limits.maxStorageBuffersPerShaderStage, 10)),
    },
  });
  device.addEventListener('uncapturederror', (e) => console.error('WebGPU error:', e.error.message));
  return { adapter, device, features, width };
}

/**
 * WGSL of the radix probes' warp-level multisplit for item i, given \`d\` (its digit, every lane's
 * counting) with \`lane\`, \`lanesBelow\`, \`warp\`, \`warpCounts\` and \`ranks\` in scope: eight ballots of
 * the digit's bits give the lanes that share it; the lowest adds their count to the subgroup's (the
 * half d >> 7 of word warp * 128 + (d & 127)) and hands the count before it to the others.
 */
export function warpRankProbeWgsl(width) {
  const bit = (b) => `select(~b${b}, b${b}, (d & ${1 << b}u) != 0u)`;
  return `${Array.from({ length: 8 }, (_, b) => `let b${b} = subgroupBallot((d & ${1 << b}u) != 0u).x;`).join('\n    ')}
    let same = ${width === 32 ? '0xffffffffu' : `${2 ** width - 1}u`} & ${Array.from({ length: 8 }, (_, b) => bit(b)).join(' & ')};
    let leader = firstTrailingBit(same);
    let half = (d >> 7u) * 16u;
    var counted = 0u;
    if (lane == leader) { counted = atomicAdd(&warpCounts[warp * 128u + (d & 127u)], countOneBits(same) << half); }
    ranks[i] = ((subgroupShuffle(counted, leader) >> half) & 0xffffu) + countOneBits(same & lanesBelow);`;
}

/**
 * WGSL of the radix probes' digit places after the ranking's barrier: invocation q < 128 takes the
 * digits q and q + 128 (both 16-bit halves at once), turns each subgroup's counts into the digit's
 * keys in earlier subgroups, and, after a barrier, writes each digit's first place in the tile to
 * \`first[d]\` (an array of 256 words or more) from an exclusive scan of the pairs' totals (\`pairSums\`
 * holds the subgroups' sums). Ends before the barrier that publishes \`first\`.
 */
export function digitPlacesProbeWgsl(warps, width, first) {
  return `var pairTotal = 0u;
  if (lid < 128u) {
    ${Array.from({ length: warps }, (_, w) => `let w${w} = atomicLoad(&warpCounts[${w * 128}u + lid]);`).join('\n    ')}
    ${Array.from({ length: warps }, (_, w) => `atomicStore(&warpCounts[${w * 128}u + lid], pairTotal); pairTotal += w${w};`).join('\n    ')}
  }
  let pairBefore = subgroupExclusiveAdd(pairTotal);
  let pairSum = subgroupAdd(pairTotal);
  if (lane == 0u && warp < ${128 / width}u) { pairSums[warp] = pairSum; }
  workgroupBarrier();
  if (lid < 128u) {
    var before = pairBefore;
    var lows = 0u;
    for (var w = 0u; w < ${128 / width}u; w++) {
      let part = pairSums[w];
      if (w < warp) { before += part; }
      lows += part & 0xffffu;
    }
    ${first}[lid] = before & 0xffffu;
    ${first}[lid + 128u] = lows + (before >> 16u);
  }`;
}

/**
 * \`ms(record, before?)\`: the GPU milliseconds of one compute pass that \`record(pass)\` fills (the
 * pass's timestamps), or the submit's wall time where the device has no timestamp queries;
 * \`before(encoder)\` records commands ahead of the pass (outside its timestamps).
 */
export function timedPass(device, features) {
  const querySet = features.includes('timestamp-query') ? device.createQuerySet({ type: 'timestamp', count: 2 }) : undefined;
  const resolveBuffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const tsRead = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return async function ms(record, before = undefined) {
    const encoder = device.createCommandEncoder();
    before?.(encoder);
    const pass = encoder.beginComputePass(querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : undefined);
    record(pass);
    pass.end();
    if (querySet) {
      encoder.resolveQuerySet(querySet, 0, 2, resolveBuffer, 0);
      encoder.copyBufferToBuffer(resolveBuffer, 0, tsRead, 0, 16);
    }
    const t0 = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    if (!querySet) return performance.now() - t0;
    await tsRead.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(tsRead.getMappedRange().slice(0));
    tsRead.unmap();
    return Number(t[1] - t[0]) / 1e6;
  };
}

/**
 * `passUs(pipeline, bindGroup, groups, dispatches, before?)`: the GPU microseconds a dispatch of
 * `dispatches` in one compute pass takes (the pass's timestamps, divided), or the submit's wall time
 * where the device has no timestamp queries; `before(encoder)` records commands ahead of the pass
 * (outside its timestamps).
 */
export function passTimer(device, features) {
  const ms = timedPass(device, features);
  return async function passUs(pipeline, bindGroup, groups, dispatches, before = undefined) {
    const total = await ms((pass) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      for (let i = 0; i < dispatches; i++) pass.dispatchWorkgroups(groups);
    }, before);
    return (total * 1000) / dispatches;
  };
}

/**
 * One segment of `n` f32 values uniform in [-1, 1): `values` on the host, `input` a storage buffer
 * holding them, `output` a storage buffer of the same size, and `readBack` a mappable one to copy
 * either into.
 */
export function segmentBuffers(device, n) {
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) values[i] = Math.random() * 2 - 1;
  const input = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(input, 0, values);
  const output = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const readBack = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { values, input, output, readBack };
}

/** The first `bytes` bytes of `source`, copied through the mappable `readBack` (an ArrayBuffer of its own). */
export async function readBytes(device, source, readBack, bytes) {
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(source, 0, readBack, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await readBack.mapAsync(GPUMapMode.READ, 0, bytes);
  const copy = readBack.getMappedRange(0, bytes).slice(0);
  readBack.unmap();
  return copy;
}
