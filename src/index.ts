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

export type { ErrorMessage } from './types/validate.js';

export type { Plan } from './dispatch/plan.js';
export type { Launch } from './dispatch/problem.js';
export type { VariantSelection, VariantVerdict } from './dispatch/variants.js';
export type { SegmentFacts } from './dispatch/geometry.js';

export { DeviceBatchedTopK } from './algorithms/batched-top-k/api.js';
export type { TopKPlan, TopKFacts } from './algorithms/batched-top-k/plan.js';
export type {
  TopKArgs,
  TopKArgsShape,
  TopKArgsShapeWithoutDirection,
  TopKArgsWithoutDirection,
  TopKDomains,
  TopKVariantsFor,
  ValidateTopKArgs,
  GuaranteesOf,
  SegmentParam,
  ScalarParam,
} from './algorithms/batched-top-k/args.js';
export {
  selectTopKVariant,
  topKPolicyFor,
  topKPolicyLimits,
  topKVariants,
  type TopKVariant,
  type TopKPolicy,
  type TopKSelection,
  type TopKSelectorFacts,
} from './algorithms/batched-top-k/policy.js';
export { referenceTopK, type ReferenceTopKInput } from './algorithms/batched-top-k/reference.js';
export type { KeyType, SelectDirection } from './algorithms/batched-top-k/keys.js';
