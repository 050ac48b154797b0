/**
 * A wrapper generic over a literal (`<const K extends number>(k: K) => p.constant(k)`): the compiler
 * cannot check a type parameter inside the wrapper, so a bare `K` does not compile, and the message
 * it prints names the fix (the text is part of the parameter's type, `ValidateConstant<K, "...">`;
 * test/fixtures/compile-errors/generic-wrapper.ts pins the diagnostic). Typing the parameter with the
 * validator forwards the check to the wrapper's callers.
 */
import { expectError, expectType } from 'tsd';
import { type ConstantParam, type UniformParam, type ValidateConstant, type ValidateValue, DeviceBatchedTopK, type DeviceArray, p } from 'segkit';
import type { GenericNotChecked } from '../src/types/messages.js';

declare const someNumber: number;
declare const keysIn: DeviceArray<'f32'>;
declare const keysOut: DeviceArray<'f32'>;

// Forwarded: the literal is checked where the wrapper is called.
const constant = <const K extends number>(k: ValidateConstant<K>) => p.constant(k);
expectType<ConstantParam<8>>(constant(8));
expectError(constant(someNumber));
const boundedK = <const K extends number>(k: ValidateValue<K, 1, 8>) => p.uniform(k, { min: 1, max: 8 });
expectType<UniformParam<1, 8>>(boundedK(3));
expectType<UniformParam<1, 8>>(boundedK(someNumber));
expectError(boundedK(9));
// ...and the parameter is a literal again when it reaches top-k.
DeviceBatchedTopK.plan({ keysIn, keysOut, segmentSizes: constant(256), k: constant(2), selectDirection: p.constantOption('max'), numSegments: constant(4) });
expectError(DeviceBatchedTopK.plan({ keysIn, keysOut, segmentSizes: constant(256), k: constant(0), selectDirection: p.constantOption('max'), numSegments: constant(4) }));

// Bare: does not compile.
expectError(<const K extends number>(k: K) => p.constant(k));
expectError(<const K extends number>(k: K) => p.uniform(k, { min: 1, max: 8 }));

// The words the compiler prints for the bare form.
expectType<'p.constant cannot check a type parameter: declare your parameter as ValidateConstant<K>'>(
  null! as GenericNotChecked<'p.constant', 'ValidateConstant<K>'>,
);
expectType<'p.uniform cannot check a type parameter: declare your parameter as ValidateValue<K, Min, Max>'>(
  null! as GenericNotChecked<'p.uniform', 'ValidateValue<K, Min, Max>'>,
);
