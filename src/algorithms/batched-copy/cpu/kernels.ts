import type { KernelParams } from '../../../backends/cpu/segments.js';
import { StatusCode } from '../../../dispatch/problem.js';
import { bitmapWords, buffersPerTeamWorkgroup, checkSlotWords, noBuffer } from '../problem.js';
import type { CopyContext } from './context.js';

/*
 * The copy kernels on the CPU emulator, twins of webgpu/programs.ts: each moves whole buffers (or
 * its chunk's share of them) as runs of raw words, one `set` per run (context.ts, words.ts), so the
 * bits are those the WGSL's per-invocation loops move. Every kernel exits when the status says a
 * check failed, so a violating run writes nothing.
 */

type Params = KernelParams<CopyContext>;

/** 'team': workgroupSize / teamSize buffers per workgroup, each moved whole. */
export function runTeam(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed()) return;
  const perWorkgroup = buffersPerTeamWorkgroup(ctx.policy);
  const first = workgroupId * perWorkgroup;
  const end = Math.min(first + perWorkgroup, ctx.activeSegments());
  ctx.copyBuffers(first, end);
}

/** 'workgroup': one buffer per workgroup. */
export function runWorkgroup(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed() || workgroupId >= ctx.activeSegments()) return;
  ctx.copyBuffer(workgroupId, 0, Infinity);
}

/**
 * 'chunked': items [c * chunkItems, (c + 1) * chunkItems) of the concatenated buffers. The first
 * buffer is the last whose start is at most the chunk's start (a binary search over the prefix
 * offsets, or a division for a uniform size); the chunk then walks the buffers that start before its
 * end, moving its share of each in one run.
 */
export function runChunked(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed()) return;
  const n = ctx.activeSegments();
  if (n === 0) return;
  const chunk = ctx.policy.chunkItems;
  const chunkStart = workgroupId * chunk;
  const packed = ctx.startMode === 1;
  const total = packed ? ctx.concatStart(n) : Math.min(n * ctx.sizeOf(0), 4294967295);
  const chunkEnd = Math.min(chunkStart + chunk, total);
  if (chunkStart >= chunkEnd) return;
  let b: number;
  if (packed) {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (ctx.concatStart(mid) <= chunkStart) lo = mid;
      else hi = mid - 1;
    }
    b = lo;
  } else b = Math.floor(chunkStart / ctx.sizeOf(0));
  for (; b < n; b++) {
    const start = ctx.concatStart(b);
    if (start >= chunkEnd) break;
    ctx.copyBuffer(b, Math.max(start, chunkStart) - start, Math.min(start + ctx.sizeOf(b), chunkEnd) - start);
  }
}

const sat = (x: number) => Math.min(x, 4294967295);

/** 'check-clear': zeroes the bitmaps; no failing buffer yet. */
export function runCheckClear(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed()) return;
  const words = checkSlotWords(ctx.destinationLength);
  const wg = ctx.policy.workgroupSize;
  const base = ctx.checkSlot;
  const from = workgroupId * wg;
  ctx.tempU32.fill(0, base + from, base + Math.min(from + wg, words));
  if (workgroupId === 0) ctx.tempU32.fill(noBuffer, base, base + 2);
}

/** 'check-mark': each buffer's ranges against its arrays; each non-empty buffer's destination start marked. */
export function runCheckMark(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed()) return;
  const n = ctx.activeSegments();
  const wg = ctx.policy.workgroupSize;
  const words = ctx.tempU32;
  const base = ctx.checkSlot;
  const starts = base + 2;
  const shared = starts + bitmapWords(ctx.destinationLength);
  for (let i = workgroupId * wg; i < Math.min(n, (workgroupId + 1) * wg); i++) {
    const size = ctx.sizeOf(i);
    if (size === 0) continue;
    const d = ctx.destinationOffsetOf(i);
    if (sat(ctx.sourceOffsetOf(i) + size) > ctx.sourceLength || sat(d + size) > ctx.destinationLength) {
      words[base] = Math.min(words[base]!, i);
      continue;
    }
    const bit = 1 << (d & 31);
    const word = d >>> 5;
    if ((words[starts + word]! & bit) !== 0) words[shared + word] = (words[shared + word]! | bit) >>> 0;
    words[starts + word] = (words[starts + word]! | bit) >>> 0;
  }
}

/** Whether buffer i's destination range [a, b) holds another non-empty buffer's start (ranges.ts rule 2). */
function holdsAnotherStart(ctx: CopyContext, i: number): boolean {
  const words = ctx.tempU32;
  const starts = ctx.checkSlot + 2;
  const shared = starts + bitmapWords(ctx.destinationLength);
  const a = ctx.destinationOffsetOf(i);
  const b = a + ctx.sizeOf(i);
  if ((words[shared + (a >>> 5)]! & (1 << (a & 31))) !== 0) return true;
  // Bits a + 1 .. b - 1 of `starts`, word by word (the WGSL twin's loop).
  const lo = a + 1;
  const last = b - 1;
  for (let w = lo >>> 5; lo <= last && w <= last >>> 5; w++) {
    let mask = 0xffffffff;
    if (w === lo >>> 5) mask &= 0xffffffff << (lo & 31);
    if (w === last >>> 5 && (last & 31) !== 31) mask &= (1 << ((last & 31) + 1)) - 1;
    if ((words[starts + w]! & mask) !== 0) return true;
  }
  return false;
}

/** 'check-scan': one buffer per workgroup, after every range was found within its array. */
export function runCheckScan(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (ctx.failed()) return;
  const words = ctx.tempU32;
  const base = ctx.checkSlot;
  if (words[base] !== noBuffer || workgroupId >= ctx.activeSegments() || ctx.sizeOf(workgroupId) === 0) return;
  if (holdsAnotherStart(ctx, workgroupId)) words[base + 1] = Math.min(words[base + 1]!, workgroupId);
}

/** 'check-report' (grid 1): the lowest failing buffer into the status words. */
export function runCheckReport(workgroupId: number, _n: number, _shared: unknown, { ctx }: Params): void {
  if (workgroupId !== 0 || ctx.failed()) return;
  const status = ctx.status!;
  const words = ctx.tempU32;
  const past = words[ctx.checkSlot]!;
  const overlap = words[ctx.checkSlot + 1]!;
  if (past !== noBuffer) {
    const size = ctx.sizeOf(past);
    const s = ctx.sourceOffsetOf(past);
    const sourcePast = sat(s + size) > ctx.sourceLength;
    const start = sourcePast ? s : ctx.destinationOffsetOf(past);
    status.set([StatusCode.RangePastEnd, sourcePast ? ctx.sourceOffsetsParameter : ctx.destinationOffsetsParameter, past, sat(start + size), start, sourcePast ? ctx.sourceLength : ctx.destinationLength, 0, 0]);
    return;
  }
  if (overlap === noBuffer) return;
  const a = ctx.destinationOffsetOf(overlap);
  const b = a + ctx.sizeOf(overlap);
  const n = ctx.activeSegments();
  let other = noBuffer;
  for (let j = 0; j < n; j++) {
    if (j === overlap || ctx.sizeOf(j) === 0) continue;
    const c = ctx.destinationOffsetOf(j);
    if (c >= a && c < b) {
      other = j;
      break;
    }
  }
  const c = ctx.destinationOffsetOf(other);
  status.set([StatusCode.RangesOverlap, ctx.destinationOffsetsParameter, overlap, other, a, b, c, c + ctx.sizeOf(other)]);
}
