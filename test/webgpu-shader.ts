/// <reference types="@webgpu/types" />
/**
 * Runs one WGSL compute shader on a device, as the tests that check a WGSL building block alone do:
 * `inputs` become read-only storage buffers at bindings 0, 1, ...; the binding after them is a
 * read_write buffer of `outputWords` u32 words, read back after `workgroups` workgroups (x) ran.
 */
export async function runShader(device: GPUDevice, code: string, inputs: readonly Uint32Array[], outputWords: number, workgroups: number): Promise<Uint32Array> {
  const module = device.createShaderModule({ code });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const buffer = (data: Uint32Array | number, usage: number) => {
    const bytes = typeof data === 'number' ? data * 4 : data.byteLength;
    const b = device.createBuffer({ size: Math.max(16, bytes), usage, mappedAtCreation: typeof data !== 'number' });
    if (typeof data !== 'number') {
      new Uint32Array(b.getMappedRange()).set(data);
      b.unmap();
    }
    return b;
  };
  const sources = inputs.map((data) => buffer(data, GPUBufferUsage.STORAGE));
  const out = buffer(outputWords, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const read = buffer(outputWords, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const encoder = device.createCommandEncoder();
  encodeDispatch(encoder, pipeline, bindingsOf(device, pipeline, [...sources, out]), workgroups);
  encoder.copyBufferToBuffer(out, 0, read, 0, outputWords * 4);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const words = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  for (const b of [...sources, out, read]) b.destroy();
  return words;
}

/** A bind group of `buffers` at bindings 0, 1, ... of the pipeline's group 0. */
export function bindingsOf(device: GPUDevice, pipeline: GPUComputePipeline, buffers: readonly GPUBuffer[]): GPUBindGroup {
  return device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: buffers.map((b, binding) => ({ binding, resource: { buffer: b } })) });
}

/** One compute pass with one dispatch of `workgroups` workgroups (x), on `encoder`. */
export function encodeDispatch(encoder: GPUCommandEncoder, pipeline: GPUComputePipeline, bindGroup: GPUBindGroup, workgroups: number): void {
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(workgroups);
  pass.end();
}
