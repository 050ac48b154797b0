/**
 * Every algorithm's args type annotates a user's own args object, and `plan` accepts it (as
 * `TopKArgs` does, see topk-args-annotation.test-d.ts): the widened types leave the option sets and
 * bounds to the run-time checks, which use the same words. Literal args keep the compile-time checks.
 */
import { expectError, expectType } from 'tsd';
import {
  type BatchedCopyArgs,
  type BatchedCopyPlan,
  type DeviceArray,
  type ScanArgs,
  type ScanPlan,
  type SegmentedReduceArgs,
  type SegmentedReducePlan,
  type SegmentedSortArgs,
  type SegmentedSortPlan,
  DeviceBatchedCopy,
  DeviceSegmentedReduce,
  DeviceSegmentedScan,
  DeviceSegmentedSort,
  p,
} from 'segkit';

declare const valuesIn: DeviceArray<'f32'>;
declare const valuesOut: DeviceArray<'f32'>;
declare const indicesOut: DeviceArray<'u32'>;
declare const rows: number;
declare const op: 'sum' | 'max' | 'argMax';

const reduceArgs: SegmentedReduceArgs = {
  valuesIn,
  valuesOut,
  indicesOut,
  segmentSizes: p.uniform(rows, { min: 0, max: 4096 }),
  numSegments: p.uniform(rows),
  op: p.uniformOption(op, ['sum', 'max', 'argMax']),
};
expectType<SegmentedReducePlan>(DeviceSegmentedReduce.plan(reduceArgs));
// Without the annotation the same object literal keeps its option set, which the compiler checks.
expectError(DeviceSegmentedReduce.plan({ valuesIn, valuesOut, segmentSizes: p.constant(8), numSegments: p.constant(4), op: p.constantOption('product') }));

const scanArgs: ScanArgs = { valuesIn, valuesOut, segmentSizes: p.uniform(rows), numSegments: p.uniform(rows), op: p.constantOption('sum'), mode: p.uniformOption('inclusive', ['inclusive', 'exclusive']) };
expectType<ScanPlan>(DeviceSegmentedScan.plan(scanArgs));
expectError(DeviceSegmentedScan.plan({ valuesIn, valuesOut, segmentSizes: p.constant(8), numSegments: p.constant(4), op: p.constantOption('sum'), mode: p.constantOption('both') }));

const sortArgs: SegmentedSortArgs = { keysIn: valuesIn, keysOut: valuesOut, segmentSizes: p.uniform(rows), numSegments: p.uniform(rows), order: p.constantOption('ascending') };
expectType<SegmentedSortPlan>(DeviceSegmentedSort.plan(sortArgs));

const copyArgs: BatchedCopyArgs = {
  source: valuesIn,
  destination: valuesOut,
  sourceOffsets: p.perSegment([0, 64]),
  destinationOffsets: p.perSegment([0, 64]),
  sizes: p.uniform(64),
  numBuffers: p.uniform(2),
};
expectType<BatchedCopyPlan>(DeviceBatchedCopy.plan(copyArgs));
