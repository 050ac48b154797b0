/**
 * Mirror of `ValidateFields` (src/types/fields.ts): the generic check of an object's fields that
 * top-k's args and `env(...)` use, on literals, unions, `any`, `never`, index signatures and the
 * constraint's own shape. Its runtime twin `checkFields` is tested in test/fields.test.ts.
 */
import { expectType } from 'tsd';
import type { IsAny } from 'type-fest';
import type { CheckTypes, FieldsShape, ValidateFields } from '../src/types/fields.js';

type Known = ['maxK', 'maxSegmentSize'];
interface Expected {
  maxK?: number;
  maxSegmentSize?: number;
}
type Validate<Value, Required extends string = never> = ValidateFields<Value, Known, Required, CheckTypes<Value, Expected>>;

// Valid: the value itself, with its literal types.
expectType<{ maxK: 8 }>(null! as Validate<{ maxK: 8 }>);
expectType<{}>(null! as Validate<{}>);
// An unknown field: its type becomes the message; the others keep theirs.
expectType<{ maxK: 8; maxk: "(Error) unknown field 'maxk' (did you mean 'maxK'?)" }>(null! as Validate<{ maxK: 8; maxk: 4 }>);
// A known field of the wrong type: the expected type, so the compiler names the mismatch there.
expectType<{ maxK: number | undefined }>(null! as Validate<{ maxK: '8' }>);
// A missing required field is added with the message.
expectType<"(Error) missing required field 'maxK'">(null! as Validate<{ maxSegmentSize: 1 }, 'maxK'>['maxK']);
expectType<1>(null! as Validate<{ maxSegmentSize: 1 }, 'maxK'>['maxSegmentSize']);
// Unions are checked member by member; `undefined` (an optional part) passes.
expectType<{ maxK: 8 } | undefined>(null! as Validate<{ maxK: 8 } | undefined>);
expectType<{ maxK: 8 } | { maxSegmentSizes: "(Error) unknown field 'maxSegmentSizes' (did you mean 'maxSegmentSize'?)" }>(
  null! as Validate<{ maxK: 8 } | { maxSegmentSizes: 8 }>,
);
// `any` and `never` pass to the runtime check; an index signature names no field.
expectType<true>(null! as IsAny<Validate<any>>);
expectType<never>(null! as Validate<never>);
expectType<Record<string, number>>(null! as Validate<Record<string, number>>);
// The constraint's own shape (nothing inferred: the editor asking for completions) passes.
expectType<FieldsShape<Known>>(null! as Validate<FieldsShape<Known>>);
expectType<{ readonly maxK?: unknown; readonly maxSegmentSize?: unknown }>(null! as FieldsShape<Known>);
