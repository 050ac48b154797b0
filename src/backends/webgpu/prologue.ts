import { type DeviceCheck, StatusCode, sizeOrderClasses } from '../../dispatch/problem.js';
import { validateSegmentsPerWorkgroup } from '../../dispatch/plan.js';
import { inclusiveScanWgsl } from './blocks.js';
import type { WebGpuProgram } from './program.js';
import { type SegmentKernelFacts, type SegmentShape, segmentBindings, segmentPreamble, segmentUniforms } from './segments.js';

/*
 * The kernels every segmented algorithm may launch before its own, in WGSL: the twins of
 * cpu/prologue.ts.
 *
 * 'validate' checks every device-only value before anything is written and reports the first
 * violation in the status words — the CPU twin's order exactly (cpu/prologue.ts). Its ordered form
 * (grid 1) is described here; its spread form (grid ceil(maxSegments / 256), where starts need no
 * scan) at spreadValidate:
 * 1. scalar checks in `run.checks` order, a device `numSegments` against maxSegments, then the
 *    device-bounds checks in order (one invocation: there are few);
 * 2. segments in ascending order, the lowest failing segment winning, each through its per-segment
 *    checks in order (static bounds, then device bounds), its extent within the items, its size within
 *    the stride. The workgroup takes segments in chunks (each invocation a contiguous run, first
 *    failure of its run; the chunk's lowest failing segment by an atomic min); packed starts come from
 *    a saturating workgroup scan of the sizes, exact up to the first failing segment;
 * 3. the sum of the sizes within `totalNumItems`.
 *
 * Comparisons are those of the values as the CPU reads them: a check's element against the check's
 * bounds as words of its dtype (device-checks.ts `boundsWords`: u32, i32 or f32, exactly, NaN
 * outside); counts (numSegments) against integer bounds. Reported values are an element's bits, or a
 * computed number clamped to u32.
 * It writes the status word also to word 0 of the device block, where every later kernel tests it.
 */

const validateShape: SegmentShape = { temp: 'none', blockWritable: true, status: true };
const spreadValidateShape: SegmentShape = { temp: 'none', blockWritable: true, status: 'atomic' };

/** The status report; the spread form's status words are atomic (word 7 is its meeting point). */
function reportWgsl(spread: boolean): string {
  const set = (word: number, value: string) => (spread ? `atomicStore(&status[${word}], ${value});` : `status[${word}] = ${value};`);
  return `fn report(code: u32, parameter: u32, segment: u32, value: u32, lo: u32, hi: u32) {
  ${set(0, 'code')} ${set(1, 'parameter')} ${set(2, 'segment')} ${set(3, 'value')}
  ${set(4, 'lo')} ${set(5, 'hi')} ${set(6, '0u')} ${set(7, '0u')}
  block[0] = code;
}`;
}

/**
 * Segments one validate invocation checks per chunk, at most: 16 takes 4096 segments in one chunk of
 * a 256-wide workgroup (each chunk costs a scan and a few dependent loads; 4 chunks took ~10 us of
 * the H200's GPU time for 4096 per-token ks). Fewer segments are spread over every invocation
 * (`runLength`): 128 ragged rows checked by 8 invocations of 16 took their 16 checks one after
 * another.
 */
const validatePerInvocation = 16;
/**
 * The validate and segment-offsets workgroups' size: at least 256 whatever the algorithm's (every
 * WebGPU device runs 256). Their chunks run one after another, each a few dependent loads and a
 * scan, so a router's 32-wide workgroup took 32 chunks for 4096 segments (43 us of GPU time on the
 * H200, against 4 chunks at 256).
 */
const prologueWorkgroupSize = (facts: SegmentKernelFacts) => Math.max(facts.workgroupSize, 256);

/** The static part of one check: what the WGSL is specialized on. */
export interface CheckFact {
  readonly kind: DeviceCheck['kind'];
  readonly parameter: number;
  readonly dtype: 'u32' | 'i32' | 'f32';
  readonly boundsDtype: 'u32' | 'i32' | 'f32' | undefined;
}

/** The validate kernel's own facts. */
export interface ValidateFacts {
  readonly checks: readonly CheckFact[];
  readonly total: boolean;
  /** The spread form (dispatch/plan.ts validateForm): a segment per invocation, the last workgroup reports. */
  readonly spread: boolean;
  /** Parameter indices of the status words the kernel writes itself. */
  readonly segmentSizes: number;
  readonly numSegments: number;
  readonly totalNumItems: number;
}

function numeric(dtype: string): 'u32' | 'i32' | 'f32' {
  return dtype === 'f32' ? 'f32' : dtype === 'i32' ? 'i32' : 'u32';
}

/** The validate facts of a run's checks. */
export function validateFacts(checks: readonly DeviceCheck[], total: boolean, spread: boolean, parameterNames: readonly string[]): ValidateFacts {
  return {
    spread,
    segmentSizes: parameterNames.indexOf('segmentSizes'),
    numSegments: parameterNames.indexOf('numSegments'),
    totalNumItems: parameterNames.indexOf('totalNumItems'),
    checks: checks.map((check) => ({
      kind: check.kind,
      parameter: check.parameter,
      dtype: numeric(check.array.dtype),
      boundsDtype: check.kind === 'per-segment' && check.deviceBounds !== undefined ? numeric(check.deviceBounds.dtype) : undefined,
    })),
    total,
  };
}

/**
 * The segments each invocation takes per chunk: the fewest that cover `n` segments in one chunk, at
 * most PER (past WG * PER segments, chunks of PER each).
 */
const runLengthWgsl = `fn runLength(n: u32) -> u32 { return clamp((n + WG - 1u) / WG, 1u, PER); }`;

const cap = (dtype: string) => dtype.toUpperCase();

/** `a <= b` of two elements of the given dtypes (u32/i32; f32 bounds arrays never occur). */
function lessEqual(a: string, aType: string, b: string, bType: string): string {
  return `lessEqual(${a}, ${aType === 'i32'}, ${b}, ${bType === 'i32'})`;
}

/** The validate program. */
export function validateProgram(facts: SegmentKernelFacts, validate: ValidateFacts, name: string): WebGpuProgram {
  const workgroupSize = prologueWorkgroupSize(facts);
  const uniforms = segmentUniforms(facts, validateShape);
  validate.checks.forEach((check, i) => {
    uniforms.push(`check${i}At`, `check${i}Len`, `check${i}Min`, `check${i}Max`);
    if (check.boundsDtype !== undefined) uniforms.push(`check${i}BoundsAt`, `check${i}BoundsLen`);
  });
  if (validate.total) uniforms.push('totalMin', 'totalMax');
  const at = (i: number, index: string) => `blockWord(u.check${i}At, u.check${i}Len, ${index})`;

  const scalarChecks: string[] = [];
  validate.checks.forEach((check, i) => {
    if (check.kind !== 'scalar') return;
    scalarChecks.push(`  {
    let bits = ${at(i, '0u')};
    if (!valueWithin${cap(check.dtype)}(bits, u.check${i}Min, u.check${i}Max)) { report(${StatusCode.OutsideStatic}u, ${check.parameter}u, NONE, bits, u.check${i}Min, u.check${i}Max); return true; }
  }`);
  });
  if (facts.numSegments.kind === 'device') {
    scalarChecks.push(`  {
    let bits = blockWord(u.numSegmentsAt, u.numSegmentsLen, 0u);
    if (!within${cap(facts.numSegments.dtype)}(bits, 0u, u.maxSegments)) { report(${StatusCode.OutsideStatic}u, ${validate.numSegments}u, NONE, bits, 0u, u.maxSegments); return true; }
  }`);
  }
  validate.checks.forEach((check, i) => {
    if (check.kind !== 'device-bounds') return;
    const w = `valueWithin${cap(check.dtype)}`;
    scalarChecks.push(`  {
    let lo = ${at(i, '0u')};
    let hi = ${at(i, '1u')};
    if (!${w}(lo, u.check${i}Min, u.check${i}Max) || !${lessEqual('lo', check.dtype, 'hi', check.dtype)}) { report(${StatusCode.BadDeviceBounds}u, ${check.parameter}u, NONE, lo, u.check${i}Min, u.check${i}Max); return true; }
    if (!${w}(hi, u.check${i}Min, u.check${i}Max)) { report(${StatusCode.BadDeviceBounds}u, ${check.parameter}u, NONE, hi, u.check${i}Min, u.check${i}Max); return true; }
  }`);
  });

  const segmentChecks: string[] = [];
  validate.checks.forEach((check, i) => {
    if (check.kind !== 'per-segment') return;
    let device = '';
    if (check.boundsDtype !== undefined) {
      const b = check.boundsDtype;
      device = `
    let lo = blockWord(u.check${i}BoundsAt, u.check${i}BoundsLen, 0u);
    let hi = blockWord(u.check${i}BoundsAt, u.check${i}BoundsLen, 1u);
    if (!(${lessEqual('lo', b, 'bits', check.dtype)} && ${lessEqual('bits', check.dtype, 'hi', b)})) { return Failure(${StatusCode.OutsideDevice}u, ${check.parameter}u, bits, count${cap(b)}(lo), count${cap(b)}(hi)); }`;
    }
    segmentChecks.push(`  {
    let bits = ${at(i, 'i')};
    if (!valueWithin${cap(check.dtype)}(bits, u.check${i}Min, u.check${i}Max)) { return Failure(${StatusCode.OutsideStatic}u, ${check.parameter}u, bits, u.check${i}Min, u.check${i}Max); }${device}
  }`);
  });
  const strided = facts.startMode === 2;
  const startOf = strided ? 'mulSat(i, stride)' : facts.startMode === 0 ? 'mulSat(i, size)' : 'packedStart';

  const checksWgsl = `
const NONE: u32 = 0xffffffffu;
struct Failure { code: u32, parameter: u32, value: u32, lo: u32, hi: u32 }
var<workgroup> stop: u32;
var<workgroup> geometry: vec2<u32>;
var<workgroup> lowestFailure: atomic<u32>;
${reportWgsl(validate.spread)}
fn withinU32(bits: u32, lo: u32, hi: u32) -> bool { return bits >= lo && bits <= hi; }
// Bounds are never negative, so a negative value is below them.
fn withinI32(bits: u32, lo: u32, hi: u32) -> bool { return bits < 0x80000000u && bits >= lo && bits <= hi; }
// x >= lo iff floor(x) >= lo and x <= hi iff ceil(x) <= hi, for integer bounds; NaN is outside.
fn withinF32(bits: u32, lo: u32, hi: u32) -> bool {
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return false; }
  var down: f32;
  var up: f32;
  if ((bits & 0x7f800000u) == 0u && (bits & 0x7fffffu) != 0u) {
    // Subnormals (which a GPU may flush to zero): strictly between -1 and 1.
    let negative = (bits & 0x80000000u) != 0u;
    down = select(0.0, -1.0, negative);
    up = select(1.0, 0.0, negative);
  } else {
    let x = bitcast<f32>(bits);
    down = floor(x);
    up = ceil(x);
  }
  let aboveLo = down >= 4294967296.0 || (down >= 0.0 && u32(down) >= lo);
  let belowHi = up < 0.0 || (up < 4294967296.0 && u32(up) <= hi);
  return aboveLo && belowHi;
}
// A check's bounds are words of its array's dtype (device-checks.ts boundsWords): compare in that type.
fn valueWithinU32(bits: u32, lo: u32, hi: u32) -> bool { return bits >= lo && bits <= hi; }
fn valueWithinI32(bits: u32, lo: u32, hi: u32) -> bool { let v = bitcast<i32>(bits); return v >= bitcast<i32>(lo) && v <= bitcast<i32>(hi); }
// By ordered keys (-0 is +0), exactly, whatever the device does with subnormals; NaN is outside.
fn orderedF32Bits(bits: u32) -> u32 {
  if (bits == 0x80000000u) { return 0x80000000u; }
  if ((bits & 0x80000000u) != 0u) { return ~bits; }
  return bits | 0x80000000u;
}
fn valueWithinF32(bits: u32, lo: u32, hi: u32) -> bool {
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return false; }
  let k = orderedF32Bits(bits);
  return k >= orderedF32Bits(lo) && k <= orderedF32Bits(hi);
}
fn lessEqual(a: u32, aSigned: bool, b: u32, bSigned: bool) -> bool {
  let aNegative = aSigned && a >= 0x80000000u;
  let bNegative = bSigned && b >= 0x80000000u;
  if (aNegative != bNegative) { return aNegative; }
  if (aNegative) { return bitcast<i32>(a) <= bitcast<i32>(b); }
  return a <= b;
}
fn scalarChecks() -> bool {
${scalarChecks.join('\n')}
  return false;
}
fn checkSegment(i: u32, packedStart: u32, stride: u32) -> Failure {
${segmentChecks.join('\n')}
  let size = segmentSizeOf(i);
  let end = addSat(${startOf}, size);
  if (end > u.itemsLength) { return Failure(${StatusCode.PastItems}u, ${validate.segmentSizes}u, end, 0u, u.itemsLength); }
  ${strided ? `if (size > stride) { return Failure(${StatusCode.LargerThanStride}u, ${validate.segmentSizes}u, size, 0u, stride); }` : ''}
  return Failure(0u, 0u, 0u, 0u, 0u);
}`;
  const totalCheck = validate.total
    ? `if (carry < u.totalMin || carry > u.totalMax) { report(${StatusCode.TotalOutside}u, ${validate.totalNumItems}u, NONE, carry, u.totalMin, u.totalMax); return; }`
    : '';
  const shape: SegmentShape = validate.spread ? spreadValidateShape : validateShape;
  const { declarations, main } = validate.spread
    ? spreadValidate(checksWgsl, totalCheck, strided)
    : orderedValidate(checksWgsl, totalCheck, strided, workgroupSize);
  return {
    name,
    cacheKey: `validate|${JSON.stringify(validate)}|${JSON.stringify(facts)}`,
    workgroupSize: validate.spread ? validateSegmentsPerWorkgroup : workgroupSize,
    uniforms,
    bindings: segmentBindings(facts, [], shape),
    preamble: segmentPreamble(facts, shape),
    declarations,
    main,
  };
}

/**
 * The ordered form (grid 1): the workgroup walks the segments in chunks, each invocation a
 * contiguous run, packed starts from a saturating scan of the sizes.
 */
function orderedValidate(checksWgsl: string, totalCheck: string, strided: boolean, workgroupSize: number): { declarations: string; main: string } {
  const declarations = `${checksWgsl}
const PER: u32 = ${validatePerInvocation}u;
${runLengthWgsl}
var<workgroup> scan: array<u32, ${workgroupSize}>;
var<workgroup> winner: u32;
${inclusiveScanWgsl('inclusiveScanSat', 'addSat(a, b)')}`;
  const main = `
  if (lid == 0u) {
    var stopped = 0u;
    if (scalarChecks()) { stopped = 1u; }
    stop = stopped;
    geometry = vec2<u32>(activeSegments(), ${strided ? 'strideValue()' : '0u'});
  }
  if (workgroupUniformLoad(&stop) != 0u) { return; }
  let g = workgroupUniformLoad(&geometry);
  let n = g.x;
  let per = runLength(n);
  var carry = 0u;
  for (var base = 0u; base < n; base += WG * per) {
    if (lid == 0u) { atomicStore(&lowestFailure, NONE); }
    let first = base + lid * per;
    var sum = 0u;
    for (var j = 0u; j < per; j++) {
      if (first + j < n) { sum = addSat(sum, segmentSizeOf(first + j)); }
    }
    inclusiveScanSat(sum, lid);
    var start = carry;
    if (lid > 0u) { start = addSat(carry, scan[lid - 1u]); }
    var failure = Failure(0u, 0u, 0u, 0u, 0u);
    var failedSegment = NONE;
    // Every segment of the run is checked (no break at the first failure, the first one kept), so
    // the loads of the PER checks do not wait on one another's outcome and go out together.
    for (var j = 0u; j < per; j++) {
      let i = first + j;
      if (i < n) {
        let checked = checkSegment(i, start, g.y);
        if (checked.code != 0u && failedSegment == NONE) { failure = checked; failedSegment = i; }
        start = addSat(start, segmentSizeOf(i));
      }
    }
    if (failedSegment != NONE) { atomicMin(&lowestFailure, failedSegment); }
    workgroupBarrier();
    if (lid == 0u) { winner = atomicLoad(&lowestFailure); }
    let lowest = workgroupUniformLoad(&winner);
    if (lowest != NONE) {
      if (failedSegment == lowest) { report(failure.code, failure.parameter, lowest, failure.value, failure.lo, failure.hi); }
      return;
    }
    carry = addSat(carry, scan[WG - 1u]);
    workgroupBarrier();
  }
  if (lid == 0u) {
    ${totalCheck}
    report(0u, 0u, 0u, 0u, 0u, 0u);
  }`;
  return { declarations, main };
}

/**
 * The spread form (grid ceil(maxSegments / 256), segment starts from their index): invocation `lid`
 * of workgroup `w` checks segment w * 256 + lid. Workgroups meet in one atomic status word (word 7):
 * its low 16 bits count the workgroups done, its high 16 bits hold 0xffff minus the lowest workgroup
 * with a failing segment (0: none). Every workgroup adds itself once (one read-modify-write, so the
 * word's modification order alone says who is last: no ordering between different words is needed,
 * which WGSL does not give across workgroups). The last one runs the scalar checks, then, if some
 * workgroup failed, checks that workgroup's segments again (the inputs are unchanged) and reports the
 * lowest failing one — the ordered form's report exactly. Its report writes word 7 back to 0 for the
 * next call.
 */
function spreadValidate(checksWgsl: string, totalCheck: string, strided: boolean): { declarations: string; main: string } {
  const declarations = `${checksWgsl}
var<workgroup> verdict: vec2<u32>;
// The lowest failing segment of workgroup w's (NONE if none); every invocation returns it.
fn lowestFailingOf(w: u32, n: u32, stride: u32, lid: u32) -> u32 {
  if (lid == 0u) { atomicStore(&lowestFailure, NONE); }
  workgroupBarrier();
  let i = w * WG + lid;
  if (i < n && checkSegment(i, 0u, stride).code != 0u) { atomicMin(&lowestFailure, i); }
  workgroupBarrier();
  return atomicLoad(&lowestFailure);
}`;
  const main = `
  if (lid == 0u) { geometry = vec2<u32>(activeSegments(), ${strided ? 'strideValue()' : '0u'}); }
  let g = workgroupUniformLoad(&geometry);
  let failing = lowestFailingOf(workgroupIndex, g.x, g.y, lid);
  if (lid == 0u) {
    // The high half this workgroup contributes: 0xffff minus its index where it failed (at least 1), else 0.
    let mine = select(0u, 0xffffu - workgroupIndex, failing != NONE);
    var before: u32;
    if (mine == 0u) {
      before = atomicAdd(&status[7], 1u);
    } else {
      before = atomicLoad(&status[7]);
      loop {
        let next = (max(before >> 16u, mine) << 16u) | ((before & 0xffffu) + 1u);
        let swapped = atomicCompareExchangeWeak(&status[7], before, next);
        if (swapped.exchanged) { break; }
        before = swapped.old_value;
      }
    }
    let last = (before & 0xffffu) + 1u == u.grid;
    let top = max(before >> 16u, mine);
    verdict = vec2<u32>(select(0u, 1u, last), select(NONE, 0xffffu - top, top != 0u));
  }
  let v = workgroupUniformLoad(&verdict);
  if (v.x == 0u) { return; }
  if (lid == 0u) { stop = select(0u, 1u, scalarChecks()); }
  if (workgroupUniformLoad(&stop) != 0u) { return; }
  if (v.y != NONE) {
    let lowest = lowestFailingOf(v.y, g.x, g.y, lid);
    let i = v.y * WG + lid;
    if (i == lowest) {
      let failure = checkSegment(i, 0u, g.y);
      report(failure.code, failure.parameter, i, failure.value, failure.lo, failure.hi);
    }
    return;
  }
  if (lid == 0u) {
    ${totalCheck === '' ? '' : `let carry = mulSat(g.x, segmentSizeOf(0u)); // one size for every segment (validateForm)
    ${totalCheck}`}
    report(0u, 0u, 0u, 0u, 0u, 0u);
  }`;
  return { declarations, main };
}

/*
 * 'segment-offsets' (grid 1, packed layout with per-segment sizes): the exclusive scan of the sizes
 * into slot `offsets` (maxSegments + 1 words; entries from numSegments on hold the total). Sums
 * saturate at 2^32 - 1 (only under 'trust'), so starts stay past the items rather than wrapping.
 * One workgroup (at least 256 wide, as 'validate') walks the sizes in chunks of up to workgroupSize * 8: each invocation sums a contiguous
 * run, a workgroup scan gives the runs' starts, and each invocation writes its run.
 */

const offsetsShape: SegmentShape = { temp: 'u32' };
const offsetsPerInvocation = 8;

/*
 * With the size order (facts.sizeOrderLog, SegmentedProblem.sizeOrder; at most 65535 segments, so
 * that every count fits 16 bits): the segments' indices by size class, class 0 (the largest sizes)
 * first and by index within a class, after the starts. Each invocation counts its runs' classes in
 * eight 16-bit counters packed in a vec4<u32> as it sums the sizes; a workgroup scan of those gives
 * the classes' totals and so their first places. Where the sizes are one chunk of runs (at most
 * WG x 8), the same scan gives each run its places and the walk kept the run's classes; else a
 * second walk over the sizes scans each chunk's counts again. Each index goes to its class's next
 * place. The CPU twin is cpu/prologue.ts
 * `writeSizeOrder`.
 */
const sizeOrderWgsl = (log: number) => `
const SIZE_LOG: u32 = ${log}u;
var<workgroup> classScan: array<vec4<u32>, WG>;
// dispatch/problem.ts sizeOrderClass: 0 for the largest power of two's sizes, at most ${sizeOrderClasses - 1}.
fn sizeClass(size: u32) -> u32 {
  var bits = 0u;
  if (size > 1u) { bits = 32u - countLeadingZeros(size - 1u); }
  return min(${sizeOrderClasses - 1}u, SIZE_LOG - min(SIZE_LOG, bits));
}
// One of class c in the packed counters (class c in component c / 2, bits 16 * (c % 2)).
fn classOne(c: u32) -> vec4<u32> {
  var one = vec4<u32>(0u);
  one[c >> 1u] = 1u << ((c & 1u) * 16u);
  return one;
}
fn classCount(counts: vec4<u32>, c: u32) -> u32 { return (counts[c >> 1u] >> ((c & 1u) * 16u)) & 0xffffu; }
// A workgroup inclusive scan of packed counters (no 16-bit count passes 65535: no carries between them).
${inclusiveScanWgsl('scanClasses', 'a + b', { array: 'classScan', type: 'vec4<u32>' })}`;

/** The size order's walk after the starts (see sizeOrderWgsl): `mine` holds this invocation's class counts. */
const sizeOrderMain = `
  let mineBefore = scanClasses(mine, lid) - mine;
  let totals = classScan[WG - 1u];
  workgroupBarrier();
  // Each class's first place: the totals of the classes before it.
  var next = vec4<u32>(0u);
  var placed = 0u;
  for (var c = 0u; c < ${sizeOrderClasses}u; c++) {
    next += placed * classOne(c);
    placed += classCount(totals, c);
  }
  let orderAt = u.offsetsAt + u.maxSegments + 1u;
  if (n <= WG * per) {
    // One chunk: the scan above has this run's places, and the walk kept its classes (3 bits each).
    var at = next + mineBefore;
    for (var j = 0u; j < per; j++) {
      let i = lid * per + j;
      if (i < n) {
        let c = (runClasses >> (3u * j)) & 7u;
        temp[orderAt + classCount(at, c)] = i;
        at += classOne(c);
      }
    }
    return;
  }
  for (var base = 0u; base < n; base += WG * per) {
    let first = base + lid * per;
    var counts = vec4<u32>(0u);
    for (var j = 0u; j < per; j++) {
      if (first + j < n) { counts += classOne(sizeClass(segmentSizeOf(first + j))); }
    }
    var at = next + scanClasses(counts, lid) - counts;
    for (var j = 0u; j < per; j++) {
      let i = first + j;
      if (i < n) {
        let c = sizeClass(segmentSizeOf(i));
        temp[orderAt + classCount(at, c)] = i;
        at += classOne(c);
      }
    }
    next += classScan[WG - 1u];
    workgroupBarrier();
  }`;

/** The segment-offsets program for these facts. */
export function segmentOffsetsProgram(facts: SegmentKernelFacts, name: string): WebGpuProgram {
  const workgroupSize = prologueWorkgroupSize(facts);
  const ordered = facts.sizeOrderLog !== undefined;
  const declarations = `
const PER: u32 = ${offsetsPerInvocation}u;
${runLengthWgsl}
var<workgroup> scan: array<u32, ${workgroupSize}>;
${inclusiveScanWgsl('inclusiveScanSat', 'addSat(a, b)')}${ordered ? sizeOrderWgsl(facts.sizeOrderLog!) : ''}`;
  const main = `
  if (failed()) { return; }
  let n = activeSegments();
  let per = runLength(n);
  var carry = 0u;${ordered ? '\n  var mine = vec4<u32>(0u);\n  var runClasses = 0u;' : ''}
  for (var base = 0u; base < n; base += WG * per) {
    let first = base + lid * per;
    var sum = 0u;${ordered ? '\n    runClasses = 0u;' : ''}
    for (var j = 0u; j < per; j++) {
      if (first + j < n) {
        let size = segmentSizeOf(first + j);
        sum = addSat(sum, size);${ordered ? '\n        let c = sizeClass(size);\n        mine += classOne(c);\n        runClasses |= c << (3u * j);' : ''}
      }
    }
    inclusiveScanSat(sum, lid);
    var running = carry;
    if (lid > 0u) { running = addSat(carry, scan[lid - 1u]); }
    for (var j = 0u; j < per; j++) {
      let i = first + j;
      if (i < n) {
        temp[u.offsetsAt + i] = running;
        running = addSat(running, segmentSizeOf(i));
      }
    }
    carry = addSat(carry, scan[WG - 1u]);
    workgroupBarrier();
  }
  for (var i = n + lid; i <= u.maxSegments; i += WG) { temp[u.offsetsAt + i] = carry; }${ordered ? sizeOrderMain : ''}`;
  return {
    name,
    cacheKey: `segment-offsets|${JSON.stringify(facts)}`,
    workgroupSize,
    uniforms: segmentUniforms(facts, offsetsShape),
    bindings: segmentBindings(facts, [], offsetsShape),
    preamble: segmentPreamble(facts, offsetsShape),
    declarations,
    main,
  };
}
