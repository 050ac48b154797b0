/// <reference types="@webgpu/types" />

/*
 * One small interface every WebGPU kernel implements, and the one function that turns it into WGSL
 * (as tfjs-backend-webgpu's `WebGPUProgram` and `makeShader`): enables -> uniforms struct ->
 * bindings -> the algorithm's shared WGSL (its preamble) -> the kernel's own code -> the entry point.
 *
 * Binding 0 is the uniform block (all fields u32; `grid` always comes first); storage buffers follow
 * from binding 1 in the order of `bindings`. Every kernel sees `workgroupIndex` (a 2D dispatch
 * flattened, for grids past maxComputeWorkgroupsPerDimension) and `lid` (local invocation index).
 */

/** A storage buffer a program binds. */
export interface ProgramBinding {
  /** WGSL name of the buffer. */
  readonly name: string;
  /** The run's array it binds, when not the one named `name` (a second view of the same buffer, e.g. as vec4<u32>). */
  readonly array?: string;
  readonly access: 'read' | 'read_write';
  /**
   * A range of temporary storage of its own, over these slots, bound beside `temp` (which then binds
   * the kernel's other slots alone; the two ranges must not overlap). A kernel that reads one half
   * of a double buffer while it writes the other binds them apart, so that the compiler knows its
   * loads never see its stores (on an H200 loads from a buffer the kernel also writes were slower).
   */
  readonly tempSlots?: readonly string[];
  /** Element type: words, atomic words, or four words (a vectorized view of a word buffer). */
  readonly element: 'u32' | 'atomic<u32>' | 'vec4<u32>';
}

/** A WebGPU compute kernel. */
export interface WebGpuProgram {
  /** The kernel's name, e.g. `topk/reduce[k<=8,f32,max]`, for messages. */
  readonly name: string;
  /** Identifies the generated WGSL: equal keys, equal source. The pipeline cache's key. */
  readonly cacheKey: string;
  /** Invocations per workgroup. */
  readonly workgroupSize: number;
  /** Uniform fields (u32), after the implicit `grid`. */
  readonly uniforms: readonly string[];
  /** Storage buffers, bound from binding 1 on. */
  readonly bindings: readonly ProgramBinding[];
  /** WGSL shared by the algorithm's kernels (ordered keys, segment resolution, ...). */
  readonly preamble: string;
  /** The kernel's own module-scope WGSL (workgroup variables, helpers). */
  readonly declarations: string;
  /** The body of the entry point; `workgroupIndex` and `lid` are in scope. Returns early past the grid. */
  readonly main: string;
  /**
   * Whether the shader uses subgroup builtins (`enable subgroups;`); `subgroupLane` and
   * `subgroupWidth` are then in scope in `main`.
   */
  readonly usesSubgroups?: boolean;
}

/** All uniform field names of a program, as laid out in its uniform block. */
export function uniformFields(program: WebGpuProgram): readonly string[] {
  return ['grid', ...program.uniforms];
}

/** Bytes of a program's uniform block (a multiple of 16, as WGSL's uniform layout wants). */
export function uniformBytes(program: WebGpuProgram): number {
  return Math.ceil((uniformFields(program).length * 4) / 16) * 16;
}

/** The WGSL of a program. */
export function makeShader(program: WebGpuProgram): string {
  const fields = uniformFields(program);
  const padding = uniformBytes(program) / 4 - fields.length;
  const struct = [
    'struct Uniforms {',
    ...fields.map((f) => `  ${f}: u32,`),
    ...Array.from({ length: padding }, (_, i) => `  _pad${i}: u32,`),
    '}',
  ].join('\n');
  const bindings = program.bindings
    .map((b, i) => `@group(0) @binding(${i + 1}) var<storage, ${b.access}> ${b.name}: array<${b.element}>;`)
    .join('\n');
  return [
    program.usesSubgroups ? 'enable subgroups;' : '',
    `// ${program.name}`,
    `const WG: u32 = ${program.workgroupSize}u;`,
    struct,
    '@group(0) @binding(0) var<uniform> u: Uniforms;',
    bindings,
    program.preamble,
    program.declarations,
    `@compute @workgroup_size(${program.workgroupSize})`,
    `fn main(@builtin(workgroup_id) workgroupId: vec3u, @builtin(num_workgroups) numWorkgroups: vec3u, @builtin(local_invocation_index) lid: u32${
      program.usesSubgroups ? ', @builtin(subgroup_invocation_id) subgroupLane: u32, @builtin(subgroup_size) subgroupWidth: u32' : ''
    }) {`,
    '  let workgroupIndex = workgroupId.x + workgroupId.y * numWorkgroups.x;',
    '  if (workgroupIndex >= u.grid) { return; }',
    program.main,
    '}',
    '',
  ].join('\n');
}

/** The bind group layout entries of a program. */
export function bindGroupLayoutEntries(program: WebGpuProgram): GPUBindGroupLayoutEntry[] {
  const compute = 4; // GPUShaderStage.COMPUTE
  return [
    { binding: 0, visibility: compute, buffer: { type: 'uniform', minBindingSize: uniformBytes(program) } },
    ...program.bindings.map((b, i) => ({
      binding: i + 1,
      visibility: compute,
      buffer: { type: b.access === 'read' ? ('read-only-storage' as const) : ('storage' as const) },
    })),
  ];
}
