import { type ConstantParam, p } from 'segkit';

/**
 * `p.constant` of a number the bench chooses at run time: each case's shape is fixed for that case
 * (and each plan is made once per case), which the compiler cannot see in a table of cases, so
 * `p.constant`'s literal-only check is lifted here and nowhere else.
 */
export const constantOf = p.constant as unknown as (value: number) => ConstantParam;
