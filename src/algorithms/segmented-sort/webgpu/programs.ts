import type { ProgramBinding, WebGpuProgram } from '../../../backends/webgpu/program.js';
import { indexValueWgsl, orderedBitsWgsl } from '../../../backends/webgpu/numerics.js';
import { type TempAccess, readCount, segmentBindings, segmentPreamble, segmentUniforms } from '../../../backends/webgpu/segments.js';
import type { MergeLayout, SingleTileShape } from '../problem.js';
import type { SortKernelFacts } from './facts.js';
import { mergePassParts } from './merge.js';
import { type RadixDigitProgram, radixDigitProgram, radixProgramParts, radixUniforms } from './radix.js';
import { tileRadixParts } from './tile-radix.js';
import { workgroupRadixParts, workgroupRadixUniforms } from './workgroup-radix.js';

/*
 * The sort's WGSL programs, twins of cpu/kernels.ts launch for launch and slot for slot.
 *
 * Conventions: keys (and values) are bound as `array<u32>` (their bits) whatever their dtype;
 * `enterSegment` resolves the segment in one invocation and shares it with `workgroupUniformLoad`
 * (start, size, order mask, go), so every later branch on it is uniform.
 */

type Kernel = 'single-tile' | 'merge-blocks' | 'merge-pass' | 'radix-histogram' | 'radix-scan' | 'radix-scatter' | 'workgroup-radix';

interface Shape {
  readonly keys: boolean;
  readonly outputs: boolean;
  readonly temp: TempAccess;
  readonly variant: 'single-tile' | 'merge' | 'radix' | 'workgroup-radix';
}

const shapes: Record<Kernel, (facts: SortKernelFacts) => Shape> = {
  'single-tile': (facts) => ({ keys: true, outputs: true, temp: facts.startMode === 1 ? 'u32' : 'none', variant: 'single-tile' }),
  'merge-blocks': () => ({ keys: true, outputs: true, temp: 'u32', variant: 'merge' }),
  'merge-pass': () => ({ keys: false, outputs: true, temp: 'u32', variant: 'merge' }),
  'radix-histogram': () => ({ keys: true, outputs: false, temp: 'u32', variant: 'radix' }),
  'radix-scan': () => ({ keys: false, outputs: false, temp: 'u32', variant: 'radix' }),
  'radix-scatter': () => ({ keys: true, outputs: true, temp: 'u32', variant: 'radix' }),
  'workgroup-radix': () => ({ keys: true, outputs: true, temp: 'u32', variant: 'workgroup-radix' }),
};

function bindings(facts: SortKernelFacts, shape: Shape): ProgramBinding[] {
  const arrays: ProgramBinding[] = [];
  if (shape.keys) arrays.push({ name: 'keysIn', access: 'read', element: 'u32' });
  if (shape.outputs) {
    arrays.push({ name: 'keysOut', access: 'read_write', element: 'u32' });
    if (facts.valueMode === 'payload') arrays.push({ name: 'valuesIn', access: 'read', element: 'u32' });
    if (facts.valueMode !== 'none') arrays.push({ name: 'valuesOut', access: 'read_write', element: 'u32' });
  }
  return segmentBindings(facts, arrays, shape);
}

function uniforms(facts: SortKernelFacts, shape: Shape): string[] {
  const fields = ['capacity', ...segmentUniforms(facts, shape)];
  if (shape.variant === 'radix') fields.push(...radixUniforms(facts.valueMode !== 'none'));
  if (shape.variant === 'workgroup-radix') fields.push(...workgroupRadixUniforms(facts.valueMode !== 'none'));
  if (shape.variant === 'merge') fields.push('mergeTiles', 'launchPass', 'sortKeys0At', 'sortKeys1At', ...(facts.valueMode === 'none' ? [] : ['sortValues0At', 'sortValues1At']));
  return fields;
}

function orderMaskFn(facts: SortKernelFacts): string {
  const fact = facts.sources.order;
  const options = facts.orderOfOption.length > 0 ? facts.orderOfOption : [0];
  const maskOf = (o: number | undefined) => (o === 1 ? '0xffffffffu' : '0u');
  if (fact.kind === 'constant') return `fn orderMaskOf(i: u32) -> u32 { return ${maskOf(options[Math.min(fact.value, options.length - 1)])}; }`;
  const table = `array<u32, ${options.length}>(${options.map(maskOf).join(', ')})`;
  return `const orderMasks = ${table};
fn orderMaskOf(i: u32) -> u32 { return orderMasks[min(${readCount('order', fact, 'i')}, ${options.length - 1}u)]; }`;
}

/** Whether segment `size` belongs to this kernel's variant (the CPU twin's `SortContext.enter`). */
function branchExpr(facts: SortKernelFacts, shape: Shape): string {
  if (!(facts.hasSingleTile && (facts.hasRadix || facts.hasWorkgroupRadix || facts.hasMerge))) return 'true';
  return shape.variant === 'single-tile' ? `extent.y <= ${facts.tileItems}u` : `extent.y > ${facts.tileItems}u`;
}

function preamble(facts: SortKernelFacts, shape: Shape): string {
  const parts = [segmentPreamble(facts, shape), orderedBitsWgsl(facts.keyType), orderMaskFn(facts)];
  // A workgroup's place w holds segment w, or with the size order the w-th largest (segmentAt).
  const ordered = facts.sizeOrderLog !== undefined && (shape.variant === 'single-tile' || shape.variant === 'workgroup-radix');
  const place = ordered ? '\n  let i = segmentAt(w);' : '\n  let i = w;';
  if (shape.variant === 'single-tile') parts.push(`// (start, size, order mask) of the segment at place w for this kernel; size 0 when it has nothing to do for it.
fn enterSegment(w: u32) -> vec3<u32> {${place}
  if (!failed() && i < activeSegments()) {
    let extent = segmentExtent(i, u.capacity);
    if (${branchExpr(facts, shape)}) { return vec3<u32>(extent.x, min(extent.y, ${facts.singleTile.tile}u), orderMaskOf(i)); }
  }
  return vec3<u32>(0u, 0u, 0u);
}`);
  if (shape.outputs) {
    parts.push(indexValueWgsl(facts.valueType));
    const values = facts.valueMode === 'payload' ? '  valuesOut[start + at] = valuesIn[start + index];\n' : facts.valueMode === 'indices' ? '  valuesOut[start + at] = indexValue(index);\n' : '';
    if (shape.keys) parts.push(`fn writeItem(start: u32, at: u32, index: u32) {\n  keysOut[start + at] = keysIn[start + index];\n${values}}`);
    parts.push(`fn writeOut(start: u32, at: u32, bits: u32, value: u32) {\n  keysOut[start + at] = bits;${facts.valueMode === 'none' ? '' : '\n  valuesOut[start + at] = value;'}\n}`);
  }
  if (shape.variant === 'merge' && facts.valueMode !== 'none') {
    // The merge carries payloads, or segment-local indices as u32, to the outputs.
    parts.push(`fn finalValue(value: u32) -> u32 { return ${facts.valueMode === 'indices' ? 'indexValue(value)' : 'value'}; }`);
  }
  if (shape.variant !== 'single-tile') {
    const enter = { radix: 'radixSegment', 'workgroup-radix': 'enterWorkgroupRadix', merge: 'enterMerge' }[shape.variant];
    parts.push(`fn ${enter}(w: u32) -> vec4<u32> {${place}
  if (failed() || i >= activeSegments()) { return vec4<u32>(0u, 0u, 0u, 0u); }
  let extent = segmentExtent(i, u.capacity);
  if (!(${branchExpr(facts, shape)})) { return vec4<u32>(0u, 0u, 0u, 0u); }
  return vec4<u32>(extent.x, extent.y, orderMaskOf(i), 1u);
}
fn radixOrderedKey(bits: u32) -> u32 { return orderedBits(bits); }`);
    if (shape.keys) parts.push('fn sourceKey(start: u32, j: u32) -> u32 { return keysIn[start + j]; }');
    if (shape.outputs) {
      const value = facts.valueMode === 'payload' ? 'valuesIn[start + j]' : 'indexValue(j)';
      if (facts.valueMode !== 'none') parts.push(`fn sourceValue(start: u32, j: u32) -> u32 { return ${value}; }`);
    }
  }
  return parts.join('\n');
}

type ValueMode = SortKernelFacts['valueMode'];

/** What the single-tile program is specialized on; `blocks` for its blocks mode ('merge-blocks'). */
interface TileOptions {
  /** The tile layout (problem.ts `singleTileShape`, or `mergeLayout`'s blocks). */
  readonly shape: SingleTileShape;
  /** Loads in flight an invocation (policy.ts `tileLoadBatch`). */
  readonly batch: number;
  readonly valueMode: ValueMode;
  readonly blocks?: { readonly tile: number; readonly inPlace: boolean };
}

/**
 * 'merge-blocks', the block launch of 'merge' over any source of segments: single-tile's program in
 * its blocks mode. The caller's WGSL defines, as for the merge pass (merge.ts) and the radix programs
 * (radix.ts): `enterMerge(i) -> vec4<u32>` (start, size, order mask, go), `sourceKey(start, j)` and,
 * with payloads, `sourceValue(start, j)`, `orderedBits`, `writeOut`, `finalValue` with values; it binds
 * `temp` with the uniforms `mergeTiles`, `sortKeys0At` (and `sortValues0At`). `inPlace`: the source is
 * the outputs (top-k's selection), so a tile is gathered into workgroup memory before it is written.
 */
export function mergeBlocksParts(options: { readonly merge: MergeLayout; readonly batch: number; readonly valueMode: ValueMode; readonly inPlace: boolean }): { declarations: string; main: string } {
  return singleTile({ shape: options.merge.blocks, batch: options.batch, valueMode: options.valueMode, blocks: { tile: options.merge.tile, inPlace: options.inPlace } });
}

/** WGSL that compare-exchanges register entries m < n (keys `k`, indices `x`) so that m ranks first when `up`. */
function exchange(m: number, n: number, up: string): string {
  // Non-short-circuit | and &: no branch per exchange.
  const later = `((k${n} < k${m}) | ((k${n} == k${m}) & (x${n} < x${m})))`;
  const swap = up === 'true' ? later : up === 'false' ? `!${later}` : `${later} == ${up}`;
  return `    { let sw = ${swap}; let tk = k${m}; let tx = x${m}; k${m} = select(k${m}, k${n}, sw); x${m} = select(x${m}, x${n}, sw); k${n} = select(k${n}, tk, sw); x${n} = select(x${n}, tx, sw); }`;
}

/**
 * 'single-tile': a bitonic sort of (sort key, index) pairs, each workgroup `segmentsPerWorkgroup`
 * segments side by side in workgroup memory, `tile` items apart (problem.ts `singleTileShape`), and
 * each segment padded to p, the workgroup's largest size rounded up to a power of two (at least the
 * items per invocation), with pairs that rank after every item.
 *
 * Each invocation works on E = itemsPerInvocation entries in registers at a time: the entries whose
 * local indices differ only in L consecutive bits [lo, lo + L) are the ones the bitonic stages of
 * strides 2^lo .. 2^(lo+L-1) exchange among themselves, so one load, L stages in registers and one
 * store replace L barriers. The first step sorts each run of E entries (every merge size up to E);
 * each later merge size 2^k runs its strides in chunks of log2(E) bits from the bottom up, the top
 * chunk taking what is left (so it runs first). Entry a is stored at a + (a >> max(log2 E, 4)), so
 * the invocations of a subgroup hit distinct banks in most steps. Loads and writes are coalesced.
 */
function singleTile(options: TileOptions): { declarations: string; main: string } {
  const { tile, itemsPerInvocation: e, segmentsPerWorkgroup: segments } = options.shape;
  const { blocks, batch } = options;
  // The blocks mode reads its source through the adapter's sourceKey (the sort's input, or top-k's selection).
  const keyAt = (start: string, j: string) => (blocks === undefined ? `keysIn[${start} + ${j}]` : `sourceKey(${start}, ${j})`);
  const logE = Math.log2(e);
  const padShift = Math.max(logE, 4);
  const words = segments * tile + ((segments * tile) >> padShift);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const load = (count: number, address: (m: number) => string) =>
    range(count)
      .map((m) => `    let a${m} = entryAt(${address(m)});\n    let e${m} = entries[a${m}];\n    var k${m} = e${m}.x;\n    var x${m} = e${m}.y;`)
      .join('\n');
  const store = (count: number) => range(count).map((m) => `    entries[a${m}] = vec2<u32>(k${m}, x${m});`).join('\n');
  // A step of L levels: strides 2^(lo+L-1) down to 2^lo of merge size `size`; group g of a segment
  // holds the entries whose local indices differ only in bits [lo, lo + L).
  const step = (levels: number) => {
    const count = 1 << levels;
    const body: string[] = [];
    for (let level = levels - 1; level >= 0; level--) {
      for (const m of range(count)) if ((m & (1 << level)) === 0) body.push(exchange(m, m | (1 << level), 'up'));
    }
    return `fn tileStep${levels}(size: u32, lo: u32, logGroups: u32, groups: u32, lid: u32) {
  for (var g = lid; g < groups; g += WG) {
    let gl = g & ((1u << logGroups) - 1u);
    let local = ((gl >> lo) << (lo + ${levels}u)) | (gl & ((1u << lo) - 1u));
    let up = (local & size) == 0u;
    let base = (g >> logGroups) * ${tile}u + local;
${load(count, (m) => (m === 0 ? 'base' : `base + (${m}u << lo)`))}
${body.join('\n')}
${store(count)}
  }
}`;
  };
  // The first step: every merge size 2..E within each run of E entries (directions by index bits;
  // merge size E alternates by run, so a segment of E entries ends ascending).
  const first: string[] = [];
  for (let size = 2; size <= e; size *= 2) {
    for (let stride = size / 2; stride >= 1; stride /= 2) {
      for (const m of range(e)) if ((m & stride) === 0) first.push(exchange(m, m + stride, size === e ? 'up' : (m & size) === 0 ? 'true' : 'false'));
    }
  }
  const steps = range(logE).map((i) => step(i + 1));
  const dispatch = range(logE)
    .map((i) => `if (top == ${i + 1}u) { tileStep${i + 1}(size, lo, logPw - ${i + 1}u, total >> ${i + 1}u, lid); }`)
    .join(' else ');
  return {
    declarations: `
var<workgroup> entries: array<vec2<u32>, ${words}>;
var<workgroup> segmentStart: array<u32, ${segments}>;
var<workgroup> segmentSize: array<u32, ${segments}>;
var<workgroup> segmentMask: array<u32, ${segments}>;${blocks === undefined ? '' : blockDeclarations(options.valueMode, blocks.tile, segments)}
var<workgroup> largestSize: atomic<u32>;
var<workgroup> largest: u32;
fn entryAt(a: u32) -> u32 { return a + (a >> ${padShift}u); }
fn tileFirstStep(logGroups: u32, groups: u32, lid: u32) {
  for (var g = lid; g < groups; g += WG) {
    let gl = g & ((1u << logGroups) - 1u);
    let up = (gl & 1u) == 0u;
    let base = (g >> logGroups) * ${tile}u + gl * ${e}u;
${load(e, (m) => (m === 0 ? 'base' : `base + ${m}u`))}
${first.join('\n')}
${store(e)}
  }
}
${steps.join('\n')}`,
    main: `
  let first = workgroupIndex * ${segments}u;
  if (lid < ${segments}u) {
${blocks !== undefined ? `    let s = enterBlock(first + lid);
    segmentStart[lid] = s.start;
    segmentSize[lid] = s.size;
    segmentMask[lid] = s.mask;
    blockBase[lid] = s.base;
    blockOut[lid] = s.out;
    atomicMax(&largestSize, s.size);` : `    let s = enterSegment(first + lid);
    segmentStart[lid] = s.x;
    segmentSize[lid] = s.y;
    segmentMask[lid] = s.z;
    atomicMax(&largestSize, s.y);`}
  }
  workgroupBarrier();
  if (lid == 0u) { largest = atomicLoad(&largestSize); }
  let largestCount = workgroupUniformLoad(&largest);
  if (largestCount == 0u) { return; }
  var pw = ${e}u;
  while (pw < largestCount) { pw = pw << 1u; }
  let logPw = countTrailingZeros(pw);
  let total = ${segments}u << logPw;
${batch === 1 ? `  for (var j = lid; j < total; j += WG) {
    let q = j >> logPw;
    let jl = j & (pw - 1u);
    let a = entryAt(q * ${tile}u + jl);
    // Padding: after every item (the largest sort key, an index no item has).
    var entry = vec2<u32>(0xffffffffu, 0xffffffffu);
    if (jl < segmentSize[q]) { entry = vec2<u32>(orderedBits(${keyAt('segmentStart[q]', 'jl')}) ^ segmentMask[q], jl); }
    entries[a] = entry;
  }` : batchedLoad(tile, batch, keyAt)}
  workgroupBarrier();
  tileFirstStep(logPw - ${logE}u, total >> ${logE}u, lid);
  workgroupBarrier();
  for (var k = ${logE + 1}u; k <= logPw; k++) {
    let size = 1u << k;
    var lo = ((k - 1u) / ${logE}u) * ${logE}u;
    let top = k - lo;
    ${dispatch}
    workgroupBarrier();
    while (lo > 0u) {
      lo -= ${logE}u;
      tileStep${logE}(size, lo, logPw - ${logE}u, total >> ${logE}u, lid);
      workgroupBarrier();
    }
  }
${blocks?.inPlace === true ? inPlaceWrite(options.valueMode, tile) : batch === 1 ? `  for (var j = lid; j < total; j += WG) {
    let q = j >> logPw;
    let jl = j & (pw - 1u);
    if (jl < segmentSize[q]) { ${blocks !== undefined ? 'writeBlock(q' : 'writeItem(segmentStart[q]'}, jl, entries[entryAt(q * ${tile}u + jl)].y); }
  }` : batchedWrite(options.valueMode, tile, batch, blocks !== undefined)}`,
  };
}

/** Entry b of a batch: its place j in the workgroup, its segment q and place jl there, and whether it holds an item. */
function batchEntryWgsl(b: number): string {
  return `    let j${b} = batchStart + ${b}u * WG;
    let q${b} = j${b} >> logPw;
    let jl${b} = j${b} & (pw - 1u);
    let item${b} = j${b} < total && jl${b} < segmentSize[q${b}];`;
}

/**
 * Single-tile's load of the keys into workgroup memory, `batch` entries an invocation at a time
 * (policy.ts `tileLoadBatch`): every key of a batch is requested before the first is used, in named
 * registers (not an array indexed in a loop). Entry j of the workgroup is the same as the one-at-a-time loop's.
 */
function batchedLoad(tile: number, batch: number, keyAt: (start: string, j: string) => string): string {
  const range = Array.from({ length: batch }, (_, b) => b);
  return `  for (var batchStart = lid; batchStart < total; batchStart += ${batch}u * WG) {
${range
  .map(
    (b) => `${batchEntryWgsl(b)}
    var key${b} = 0u;
    if (item${b}) { key${b} = ${keyAt(`segmentStart[q${b}]`, `jl${b}`)}; }`,
  )
  .join('\n')}
${range
  .map(
    (b) => `    // Padding: after every item (the largest sort key, an index no item has).
    if (j${b} < total) { entries[entryAt(q${b} * ${tile}u + jl${b})] = select(vec2<u32>(0xffffffffu, 0xffffffffu), vec2<u32>(orderedBits(key${b}) ^ segmentMask[q${b}], jl${b}), item${b}); }`,
  )
  .join('\n')}
  }`;
}

/**
 * The blocks mode's workgroup arrays and functions ('merge-blocks': single-tile's program over the
 * tiles of the segments past a tile): block w is tile w % mergeTiles of segment w / mergeTiles, its
 * keys from `start`, its items' indices in the segment from `base`; it goes to buffer 0 as key bits
 * and values (indices as u32), or, when it is its segment's only tile, to the outputs.
 */
function blockDeclarations(valueMode: ValueMode, tile: number, segments: number): string {
  const value = valueMode === 'payload' ? 'sourceValue(start, index)' : valueMode === 'indices' ? 'blockBase[q] + index' : '0u';
  return `
var<workgroup> blockBase: array<u32, ${segments}>;
var<workgroup> blockOut: array<u32, ${segments}>;
struct Block { start: u32, size: u32, mask: u32, base: u32, out: u32 }
fn enterBlock(w: u32) -> Block {
  let e = enterMerge(w / u.mergeTiles);
  let base = (w % u.mergeTiles) * ${tile}u;
  if (e.w == 0u || base >= e.y) { return Block(0u, 0u, 0u, 0u, 0u); }
  return Block(e.x + base, min(e.y - base, ${tile}u), e.z, base, select(0u, 1u, e.y <= ${tile}u));
}
fn storeBlock(q: u32, at: u32, bits: u32, value: u32) {
  let start = segmentStart[q];
  if (blockOut[q] == 1u) {
    writeOut(start, at, bits, ${valueMode === 'none' ? '0u' : 'finalValue(value)'});
    return;
  }
  temp[u.sortKeys0At + start + at] = bits;${valueMode === 'none' ? '' : '\n  temp[u.sortValues0At + start + at] = value;'}
}
fn blockValue(q: u32, start: u32, index: u32) -> u32 { return ${value}; }
fn writeBlock(q: u32, at: u32, index: u32) {
  let start = segmentStart[q];
  storeBlock(q, at, sourceKey(start, index), blockValue(q, start, index));
}`;
}

/**
 * The blocks mode's writes where the source is the outputs (top-k's selection, sorted in place):
 * every item's key bits and value are gathered into workgroup memory (over its sort key and index)
 * before the first write, since a write may land on an item another invocation has yet to read.
 */
function inPlaceWrite(valueMode: ValueMode, tile: number): string {
  return `  for (var j = lid; j < total; j += WG) {
    let q = j >> logPw;
    let jl = j & (pw - 1u);
    if (jl < segmentSize[q]) {
      let a = entryAt(q * ${tile}u + jl);
      let index = entries[a].y;
      entries[a] = vec2<u32>(sourceKey(segmentStart[q], index), ${valueMode === 'none' ? '0u' : 'blockValue(q, segmentStart[q], index)'});
    }
  }
  workgroupBarrier();
  for (var j = lid; j < total; j += WG) {
    let q = j >> logPw;
    let jl = j & (pw - 1u);
    if (jl < segmentSize[q]) { let item = entries[entryAt(q * ${tile}u + jl)]; storeBlock(q, jl, item.x, item.y); }
  }`;
}

/** Single-tile's writes, `batch` an invocation at a time: every gather of a batch (the key's bits, a payload) is requested before the first write. */
function batchedWrite(valueMode: ValueMode, tile: number, batch: number, blocks: boolean): string {
  const range = Array.from({ length: batch }, (_, b) => b);
  const payload = valueMode === 'payload';
  const keyAt = (b: number) => (blocks ? `sourceKey(segmentStart[q${b}], index${b})` : `keysIn[segmentStart[q${b}] + index${b}]`);
  const valueAt = (b: number) => (blocks ? `sourceValue(segmentStart[q${b}], index${b})` : `valuesIn[segmentStart[q${b}] + index${b}]`);
  const indexValue = (b: number) => (blocks ? `blockBase[q${b}] + index${b}` : `indexValue(index${b})`);
  return `  for (var batchStart = lid; batchStart < total; batchStart += ${batch}u * WG) {
${range
  .map(
    (b) => `${batchEntryWgsl(b)}
    var index${b} = 0u;
    var bits${b} = 0u;${payload ? `\n    var value${b} = 0u;` : ''}
    if (item${b}) { index${b} = entries[entryAt(q${b} * ${tile}u + jl${b})].y; bits${b} = ${keyAt(b)};${payload ? ` value${b} = ${valueAt(b)};` : ''} }`,
  )
  .join('\n')}
${range
  .map((b) => `    if (item${b}) { ${blocks ? `storeBlock(q${b}` : `writeOut(segmentStart[q${b}]`}, jl${b}, bits${b}, ${payload ? `value${b}` : valueMode === 'indices' ? indexValue(b) : '0u'}); }`)
  .join('\n')}
  }`;
}

/**
 * Which of a radix histogram's or scatter's three programs a launch runs (radix.ts `split`), by its
 * digit (launch pass `group * 4 + digit`, problem.ts `radixLaunchPass`): 0 for digit 0 (it reads
 * the source; the scatter writes buffer 0), 2 for digit 2 (buffer 1; into buffer 0), 1 for digits 1
 * and 3 (buffer 0; into buffer 1 or the outputs); 0 for every other kernel. Digits 0 and 2 shared a
 * program that chose between the source and buffer 1 at each load, and digit 2's scatter then took
 * 0.367 ms of one 16M-key sort with indices where the others took 0.215-0.241 (H200,
 * bench/webgpu-launch-profile.ts, 2026-12-01; the same with random bit patterns as keys, without
 * values, or with the buffers' order in temporary storage reversed or 1 MiB apart): a program of
 * its own took it to 0.240, the whole sort from 1.264-1.267 to 1.145-1.148 ms
 * (bench/sort-webgpu.ts, two rounds; 1024x8192 radix forced 0.682 -> 0.636). The histogram's loads
 * chose among three places: with a program for each, its launches 0.043 / 0.052 / 0.052 / 0.053 ->
 * 0.033 / 0.035 / 0.035 / 0.036 and the sort 1.274 -> 1.080 ms (1024x8192 radix forced 0.689 ->
 * 0.605, 64x32768 0.213-0.214 -> 0.200-0.201). The merge passes read and write the same way and
 * gained nothing split by parity (H200, GPU ms, two rounds, 2026-11-29: 64x32768 0.203 -> 0.206,
 * 128x16384 0.170 -> 0.172, 1024x8192 0.490 -> 0.492), so they keep one program.
 */
export function digitProgram(launch: { readonly kernel: string; readonly pass: number }): RadixDigitProgram {
  if (launch.kernel !== 'radix-scatter' && launch.kernel !== 'radix-histogram') return 0;
  return radixDigitProgram(launch.pass);
}

/** The program of one of the sort's kernels for these facts (`digit`: its launch's, {@link digitProgram}). */
export function sortProgram(kernel: Kernel, facts: SortKernelFacts, name: string, digit: RadixDigitProgram = 0): WebGpuProgram {
  const shape = shapes[kernel](facts);
  // facts.singleTile, facts.merge and facts.tileLoadBatch are set wherever the plan has the launches that read them (facts.ts).
  const body: { declarations: string; main: string; bindings?: ProgramBinding[]; usesSubgroups?: boolean } = kernel === 'single-tile' ? (facts.tileRadix !== undefined ? tileRadixParts({ radix: facts.tileRadix, valueMode: facts.valueMode }) : singleTile({ shape: facts.singleTile, batch: facts.tileLoadBatch!, valueMode: facts.valueMode })) : kernel === 'merge-blocks' ? mergeBlocksParts({ merge: facts.merge!, batch: facts.tileLoadBatch!, valueMode: facts.valueMode, inPlace: false }) : kernel === 'merge-pass' ? mergePassParts({ hasValues: facts.valueMode !== 'none', workgroupSize: facts.workgroupSize, tileItems: facts.merge!.tile }) : kernel === 'workgroup-radix' ? workgroupRadixParts({ hasValues: facts.valueMode !== 'none', workgroupSize: facts.workgroupSize, itemsPerInvocation: facts.workgroupRadixItemsPerInvocation }) : radixProgramParts(kernel === 'radix-histogram' ? 'histogram' : kernel === 'radix-scan' ? 'scan' : 'scatter', {
          hasValues: facts.valueMode !== 'none',
          workgroupSize: facts.workgroupSize,
          rankItems: facts.tileItems,
          warpRank: facts.radixWarpRank,
          // Set wherever the plan has radix launches (facts.ts).
          loads: facts.radixLoads!,
          digit,
          scanInScatter: facts.radixScanInScatter,
        });
  return {
    name,
    cacheKey: `sort/${kernel}${digit === 0 ? '' : `/${digit}`}|${JSON.stringify(facts)}`,
    // The radix ranks may run on workgroups of their own size (tile-radix.ts `tileRadixFor`).
    workgroupSize: kernel === 'single-tile' && facts.tileRadix !== undefined ? facts.tileRadix.workgroupSize : facts.workgroupSize,
    uniforms: uniforms(facts, shape),
    // A radix kernel's split double buffer adds its own ranges of temporary storage (radix.ts `split`).
    bindings: [...bindings(facts, shape), ...(body.bindings ?? [])],
    preamble: preamble(facts, shape),
    declarations: body.declarations,
    main: body.main,
    usesSubgroups: body.usesSubgroups === true,
  };
}
