/*
 * Type tokens of the parameter kinds: symbol-keyed properties that exist only in types ("not
 * available at runtime", as TypeGPU's `$repr`). `InferBounds`/`InferOptions` read them.
 */

/** Phantom token: a parameter's static lower bound. */
export declare const $min: unique symbol;
/** Phantom token: a parameter's static upper bound. */
export declare const $max: unique symbol;
/** Phantom token: a discrete parameter's option set. */
export declare const $options: unique symbol;
