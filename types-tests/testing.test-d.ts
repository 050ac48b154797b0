/**
 * The types of segkit/testing: backend names are a closed set, a run's outputs keep the names the
 * test function returned (DeviceArrays downloaded to their host array type), `track` returns its
 * argument's type, and undefined outputs (a keys-only call's values) are allowed.
 */
import { expectAssignable, expectError, expectNotAssignable, expectType } from 'tsd';
import type { Backend, DeviceArray } from 'segkit';
import {
  type BackendRun,
  type Comparison,
  type HostOutput,
  type OutputDifference,
  type RunContext,
  type TestBackend,
  type TestBackendName,
  type TestBackends,
  BackendMismatchError,
  firstDifference,
  testBackendNames,
  testBackends,
} from 'segkit/testing';

expectType<Promise<TestBackends>>(testBackends());
expectType<Promise<TestBackends>>(testBackends({ only: ['cpu', 'webgpu'], required: ['webgpu'], workers: 2 }));
expectError(testBackends({ only: ['cuda'] }));
expectError(testBackends({ required: ['metal'] }));
expectError(testBackends({ workers: '2' }));
expectType<readonly TestBackendName[]>(testBackendNames);
expectAssignable<TestBackendName>('cpu-workers');
expectNotAssignable<TestBackendName>('cpu workers');

declare const backends: TestBackends;
declare const entry: TestBackend;
expectType<string | undefined>(entry.skip);
expectType<Promise<Backend>>(entry.backend());
expectType<Promise<Backend>>(entry.create());

declare const keys: DeviceArray<'f32'>;
declare const maybeValues: DeviceArray<'u32'> | undefined;
const test = async (backend: Backend, run: RunContext) => {
  expectType<DeviceArray<'f32'>>(run.track(keys));
  expectType<DeviceArray<'f32'>>(run.track(keys, keys, keys));
  expectType<'cpu' | 'cpu-workers' | 'webgpu'>(run.name);
  return { keysOut: keys, valuesOut: maybeValues, reference: new Float32Array(backend.capabilities.parallelism) };
};

// Output names are kept; every output is a host array.
expectType<Promise<BackendRun<'keysOut' | 'valuesOut' | 'reference'>>>(entry.run(test));
expectType<Promise<BackendRun<'keysOut' | 'valuesOut' | 'reference'>[]>>(backends.run(test));
expectType<Promise<Comparison<'keysOut' | 'valuesOut' | 'reference'>>>(backends.compare(test, { slotsPerSegment: 8 }));
expectType<Promise<Comparison<'keysOut' | 'valuesOut' | 'reference'>>>(backends.assertSame(test, { slotsPerSegment: { keysOut: 8 } }));
declare const run: BackendRun<'keysOut'>;
expectType<HostOutput>(run.outputs.keysOut);
expectError(run.outputs.valuesOut);

// A test must return named arrays.
expectError(backends.run(async () => [keys]));
expectError(backends.run(async () => ({ keysOut: [1, 2, 3] })));
expectError(backends.compare(test, { slotsPerSegment: '8' }));

// Comparison of runs from anywhere.
expectType<OutputDifference | undefined>(firstDifference([run, { name: 'expected', outputs: { keysOut: new Float32Array(4) } }]));
declare const mismatch: BackendMismatchError;
expectAssignable<Error>(mismatch);
expectType<OutputDifference>(mismatch.difference);
expectType<number | undefined>(mismatch.difference.segment);
