import type { WorkgroupMemory } from '../../../backends/cpu/kernel.js';
import { routingWeightsOfSegment } from '../routing.js';
import { Segment, type TopKKernelParams, resolveSegment } from './common.js';

/*
 * 'weights' (grid ceil(maxSegments / workgroupSize)): the routing-weights epilogue, one segment per
 * invocation, after the variant's last launch. It reads the segment's `take` selected keys from
 * keysOut and writes weightsOut (routing.ts holds the arithmetic, the WGSL twin's operation for
 * operation).
 */

const segmentOfInvocation = new Segment();

/** The 'weights' kernel: workgroup `workgroupId` covers segments [workgroupId * WG, (workgroupId + 1) * WG). */
export function runWeights(workgroupId: number, _numWorkgroups: number, _shared: WorkgroupMemory, params: TopKKernelParams): void {
  const ctx = params.ctx;
  const weightsOut = ctx.weightsOut;
  if (weightsOut === undefined) throw new Error('internal: a weights launch without weightsOut');
  if (ctx.failed()) return;
  const invocations = ctx.policy.workgroupSize;
  const first = workgroupId * invocations;
  const end = Math.min(first + invocations, ctx.activeSegments());
  const kMax = ctx.kMax;
  const seg = segmentOfInvocation;
  for (let segment = first; segment < end; segment++) {
    resolveSegment(ctx, segment, 0xffffffff, seg);
    routingWeightsOfSegment(ctx.keysOutBits, weightsOut, segment * kMax, seg.take, kMax, ctx.weightsKind, ctx.weightScaleBits);
  }
}
