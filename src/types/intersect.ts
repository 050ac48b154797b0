import type { EmptyGuaranteeIntersection } from './messages.js';
import type { KnownGreater, MaxOf, MinOf } from './numeric.js';
import type { BoundText, ErrorMessage, IsEmptyBounds } from './validate.js';

/**
 * The intersection of a parameter's bounds `[Min, Max]` with a guarantee's `[GuaranteeMin, GuaranteeMax]`:
 * the larger lower bound and the smaller upper bound. A side that is not one integer literal
 * (`number`, a union, `any`) is unknown and yields to the other side; where both are unknown the side
 * stays `number`.
 *
 * @example `IntersectBounds<1, 4096, number, 1024>` is `{ min: 1; max: 1024 }`.
 */
export type IntersectBounds<Min extends number, Max extends number, GuaranteeMin extends number, GuaranteeMax extends number> = {
  min: MaxOf<Min, GuaranteeMin>;
  max: MinOf<Max, GuaranteeMax>;
};

/**
 * True when the intersection of `[Min, Max]` and `[GuaranteeMin, GuaranteeMax]` is known to be empty:
 * its lower bound and its upper bound are both literals and the lower is the greater. Exact for every
 * safe integer; unknown sides never make it empty (the runtime check covers them).
 */
export type IsEmptyIntersection<Min extends number, Max extends number, GuaranteeMin extends number, GuaranteeMax extends number> =
  KnownGreater<MaxOf<Min, GuaranteeMin>, MinOf<Max, GuaranteeMax>>;

/**
 * The intersected bounds `{ min, max }` when they can hold a value, else the message in words naming
 * the guarantee, with the same text as the runtime check (`emptyGuaranteeIntersection`). A side that
 * is not one integer literal prints as the open side of the domain (`-Infinity`, `Infinity`), as the
 * runtime check prints an omitted bound.
 *
 * Bounds that are empty by themselves (`Min > Max`) are returned as they are: their own message
 * (`EmptyBounds`) is reported where they are written.
 *
 * An algorithm validates a parameter against an environment guarantee with it, e.g. `segmentSizes`
 * with static bounds `[512, 4096]` against `maxSegmentSize: 100`:
 *
 * @example `ValidateIntersection<512, 4096, 'maxSegmentSize', number, 100>` is
 * `'(Error) bounds [512, 4096] do not intersect the guarantee maxSegmentSize [-Infinity, 100]'`.
 */
export type ValidateIntersection<
  Min extends number,
  Max extends number,
  Guarantee extends string,
  GuaranteeMin extends number,
  GuaranteeMax extends number,
> =
  IsEmptyBounds<Min, Max> extends true
    ? IntersectBounds<Min, Max, GuaranteeMin, GuaranteeMax>
    : IsEmptyIntersection<Min, Max, GuaranteeMin, GuaranteeMax> extends true
      ? ErrorMessage<
          EmptyGuaranteeIntersection<
            BoundText<Min, '-Infinity'>,
            BoundText<Max, 'Infinity'>,
            Guarantee,
            BoundText<GuaranteeMin, '-Infinity'>,
            BoundText<GuaranteeMax, 'Infinity'>
          >
        >
      : IntersectBounds<Min, Max, GuaranteeMin, GuaranteeMax>;
