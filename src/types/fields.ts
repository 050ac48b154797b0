import type { IsAny } from 'type-fest';
import type { MissingField, UnknownField } from './messages.js';
import type { ErrorMessage } from './validate.js';

/**
 * `Value`'s fields with each one replaced where it is wrong: an unknown field by
 * `'(Error) unknown field ...'`, a known one by its entry in `Checked`. A key that is not a literal
 * (an index signature: `Record<string, X>`) says nothing about the fields and is left alone.
 */
type CheckEachField<Value, Known extends readonly string[], Checked> = {
  [Key in keyof Value]: string extends Key
    ? Value[Key]
    : Key extends Known[number]
      ? Key extends keyof Checked
        ? Checked[Key]
        : Value[Key]
      : ErrorMessage<UnknownField<Key & string, Known>>;
};

/**
 * Every field of `Known`, optional and of any type: the constraint of a type parameter that
 * {@link ValidateFields} checks. It names the fields for the editor's completions and rules nothing out,
 * so a mistake in one field never makes the compiler fall back to the constraint and blame the others.
 * (Constrain with `FieldsShape<Known> | object`: an object that shares no field with the shape would
 * fail a constraint of optional fields alone, the weak-type rule, and lose the message.)
 */
export type FieldsShape<Known extends readonly string[]> = { readonly [Key in Known[number]]?: unknown };

/**
 * `Value` itself when it has no field outside `Known`, every field in `Required`, and `Checked`
 * accepts every field; otherwise a type that `Value` is not assignable to, with the message in words
 * on each offending field only (correct fields keep their own type, so one mistake never reads as
 * several):
 *
 * - an unknown field gets the type `'(Error) unknown field 'segmentStrid' (did you mean 'segmentStride'?)'`;
 * - a missing required field is added with the type `'(Error) missing required field 'numSegments''`;
 * - a known field gets its entry in `Checked`: the field's own type when it is fine, else a message or
 *   the expected type.
 *
 * `Value` exactly `Shape` (the type parameter's constraint, see {@link FieldsShape}) means nothing was
 * inferred, as when the editor asks for completions: it passes, so every field is offered.
 *
 * Used as a parameter's whole type, `Validate<Arg>`: the compiler infers `Arg` from the true branch,
 * and a valid argument costs one comparison with itself. `Known` is a tuple: its order is the order
 * of the "did you mean" tie-break and of the list of fields in the message. `Value` may be a union
 * (`Partial<Requirements> | undefined`): each member is checked; `any` is left to the runtime check,
 * whose twin is `checkFields` (src/params/fields.ts).
 *
 * @example `ValidateFields<{ maxk: 8 }, ['maxK'], never, {}>` is `{ maxk: "(Error) unknown field 'maxk' (did you mean 'maxK'?)" }`.
 */
export type ValidateFields<Value, Known extends readonly string[], Required extends string, Checked> =
  IsAny<Value> extends true
    ? Value
    : Value extends object
      ? // The common case first, and cheaply: no unknown or missing field, every checked field as it is.
        [Exclude<keyof Value, Known[number]> | Exclude<Required, keyof Value>] extends [never]
        ? Value extends Checked
          ? Value
          : CheckEachField<Value, Known, Checked>
        : [Exclude<Required, keyof Value>] extends [never]
          ? Value extends CheckEachField<Value, Known, Checked>
            ? Value // only keys that are not literals (an index signature) were left over
            : CheckEachField<Value, Known, Checked>
          : // Written out rather than named, so the diagnostic prints the message, not an alias.
            CheckEachField<Value, Known, Checked> & { readonly [Key in Exclude<Required, keyof Value>]-?: ErrorMessage<MissingField<Key>> }
      : Value;

/**
 * The `Checked` argument of {@link ValidateFields} where each known field need only have the type
 * `Expected` gives it: the field's own type when it does, else the expected type (so the compiler
 * reports the mismatch on that field, in its own words). A field typed `unknown` or `any` (as in the
 * constraint's own shape, {@link FieldsShape}) is left to the runtime check.
 */
export type CheckTypes<Value, Expected> = {
  [Key in keyof Value & keyof Expected]: unknown extends Value[Key]
    ? Value[Key]
    : [Value[Key]] extends [Expected[Key]]
      ? Value[Key]
      : Expected[Key];
};
