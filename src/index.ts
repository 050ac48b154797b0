/**
 * segkit: typed parameters and guarantees for segmented and batched device algorithms, after CUB's
 * proposal (NVIDIA CCCL issue 7495), on a CPU emulator and on WebGPU.
 *
 * @packageDocumentation
 */

export { SegkitRangeError, GuaranteeViolationError, SegkitUsageError } from './errors.js';

export type {
  Backend,
  BackendCapabilities,
  BackendStats,
  DeviceArray,
  DType,
  DTypeOf,
  HostArrayOf,
  UploadableArray,
} from './backends/backend.js';
export { cpuBackend, type CpuBackend, type CpuBackendOptions } from './backends/cpu/cpu-backend.js';
export {
  webgpuBackend,
  isWebGpuBackend,
  WebGpuDeviceLostError,
  WebGpuError,
  type WebGpuBackend,
  type WebGpuBackendOptions,
} from './backends/webgpu/webgpu-backend.js';

export {
  p,
  params,
  type Bounds,
  type ConstantParam,
  type UniformParam,
  type PerSegmentParam,
  type ConstantOptionParam,
  type UniformOptionParam,
  type PerSegmentOptionParam,
  type GuaranteeParam,
  type NumericParam,
  type OptionParam,
  type InferBounds,
  type InferOptions,
} from './params/param.js';
export type { $min, $max, $options } from './params/tokens.js';
export type { NumericFacts, OptionFacts } from './params/resolve.js';

export { env, defaultRequirements, type Env, type EnvOptions, type Requirements, type Guarantees, type Tuning } from './env/env.js';

export type { ErrorMessage, ValidateConstant, ValidateValue } from './types/validate.js';

export type { Plan } from './dispatch/plan.js';
export type { Launch } from './dispatch/problem.js';
export type { VariantSelection, VariantVerdict } from './dispatch/variants.js';
export type { SegmentFacts } from './dispatch/geometry.js';
export type { BackendLimits } from './dispatch/limits.js';

export { DeviceBatchedTopK } from './algorithms/batched-top-k/api.js';
// The parameter kinds and numeric domains every algorithm's args share.
export type { NumericDomain, ScalarParam, SegmentDomains, SegmentParam } from './types/domains.js';
export type { TopKPlan, TopKFacts, TopKOutputLayout } from './algorithms/batched-top-k/plan.js';
export type {
  TopKArgs,
  TopKArgsShape,
  TopKKeysArgs,
  TopKPairsArgs,
  TopKDomains,
  TopKVariantsFor,
  ValidateTopKArgs,
  GuaranteesOf,
  RoutingWeights,
  RoutingWeightsKind,
  TopKOptions,
  TopKResult,
  ValidateTopKOptions,
  WeightsOf,
} from './algorithms/batched-top-k/args.js';
export {
  selectTopKVariant,
  topKPolicyFor,
  topKPolicyLimits,
  topKLimits,
  topKVariants,
  type TopKLimits,
  type TopKVariant,
  type TopKPolicy,
  type TopKSelection,
  type TopKSelectorFacts,
} from './algorithms/batched-top-k/policy.js';
export { referenceTopK, type ReferenceTopKInput } from './algorithms/batched-top-k/reference.js';
export type { KeyType, SelectDirection } from './algorithms/batched-top-k/keys.js';

export { DeviceSegmentedReduce } from './algorithms/segmented-reduce/api.js';
export type { SegmentedReducePlan, SegmentedReduceFacts } from './algorithms/segmented-reduce/plan.js';
export type {
  SegmentedReduceArgs,
  SegmentedReduceArgsShape,
  SegmentedReduceArgsShapeWithoutOp,
  SegmentedReduceArgsWithoutOp,
  SegmentedReduceDomains,
  SegmentedReduceVariantsFor,
  ValidateSegmentedReduceArgs,
} from './algorithms/segmented-reduce/args.js';
export {
  selectSegmentedReduceVariant,
  segmentedReducePolicyFor,
  segmentedReducePolicyLimits,
  segmentedReduceVariants,
  type SegmentedReduceVariant,
  type SegmentedReducePolicy,
  type SegmentedReduceSelection,
  type SegmentedReduceSelectorFacts,
} from './algorithms/segmented-reduce/policy.js';
export type { ReduceOp, ReduceValueType } from './algorithms/segmented-reduce/ops.js';
export {
  referenceSegmentedReduce,
  type ReferenceSegmentedReduceInput,
  type ReferenceSegmentedReduceOutput,
} from './algorithms/segmented-reduce/reference.js';

export { DeviceSegmentedScan } from './algorithms/segmented-scan/api.js';
export type { ScanPlan, ScanFacts } from './algorithms/segmented-scan/plan.js';
export type {
  ScanArgs,
  ScanArgsShape,
  ScanArgsShapeWithoutOpAndMode,
  ScanArgsWithoutOpAndMode,
  ScanDomains,
  ScanVariantsFor,
  ValidateScanArgs,
} from './algorithms/segmented-scan/args.js';
export {
  selectScanVariant,
  scanPolicyFor,
  scanPolicyLimits,
  scanVariants,
  type ScanVariant,
  type ScanPolicy,
  type ScanSelection,
  type ScanSelectorFacts,
} from './algorithms/segmented-scan/policy.js';
export { referenceScan, type ReferenceScanInput } from './algorithms/segmented-scan/reference.js';
export type { ScanOp, ScanMode, ScanValueType } from './algorithms/segmented-scan/order.js';

export { DeviceSegmentedSort } from './algorithms/segmented-sort/api.js';
export type { SegmentedSortPlan, SegmentedSortFacts } from './algorithms/segmented-sort/plan.js';
export type { SegmentedSortArgs, SegmentedSortArgsShape, SegmentedSortDomains, SegmentedSortVariantsFor, ValidateSegmentedSortArgs } from './algorithms/segmented-sort/args.js';
export {
  selectSegmentedSortVariant,
  segmentedSortPolicyFor,
  segmentedSortPolicyLimits,
  segmentedSortVariants,
  type SegmentedSortVariant,
  type SegmentedSortPolicy,
  type SegmentedSortSelection,
  type SegmentedSortSelectorFacts,
} from './algorithms/segmented-sort/policy.js';
export { referenceSegmentedSort, type ReferenceSegmentedSortInput } from './algorithms/segmented-sort/reference.js';
export type { SortOrder } from './algorithms/segmented-sort/keys.js';

export { DeviceBatchedCopy } from './algorithms/batched-copy/api.js';
export type { BatchedCopyPlan, BatchedCopyFacts } from './algorithms/batched-copy/plan.js';
export type { BatchedCopyArgs, BatchedCopyArgsShape, BatchedCopyDomains, BatchedCopyVariantsFor, ValidateBatchedCopyArgs } from './algorithms/batched-copy/args.js';
export {
  selectBatchedCopyVariant,
  batchedCopyPolicyFor,
  batchedCopyPolicyLimits,
  batchedCopyVariants,
  type BatchedCopyVariant,
  type BatchedCopyPolicy,
  type BatchedCopySelection,
  type BatchedCopySelectorFacts,
} from './algorithms/batched-copy/policy.js';
export { referenceBatchedCopy, type ReferenceBatchedCopyInput } from './algorithms/batched-copy/reference.js';
