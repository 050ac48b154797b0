/**
 * Thrown before any device work when a host-known parameter value or bound is out of range. Outputs
 * are untouched.
 *
 * @example
 * ```ts
 * try { plan.run(); } catch (e) { if (e instanceof SegkitRangeError) console.log(e.parameter, e.segment); }
 * ```
 */
export class SegkitRangeError extends RangeError {
  /** The parameter's name as written in the call, e.g. `k` or `segmentSizes`. */
  readonly parameter: string;
  /** The segment index for a per-segment value, else `undefined`. */
  readonly segment: number | undefined;
  /** The offending value (a number, an option, or `undefined` for a bounds-only problem). */
  readonly value: number | string | undefined;
  /** The bounds or option set the value was checked against. */
  readonly bounds: { readonly min: number; readonly max: number } | readonly string[] | undefined;

  constructor(
    parameter: string,
    detail: string,
    info: { segment?: number; value?: number | string; bounds?: { min: number; max: number } | readonly string[] } = {},
  ) {
    super(`${parameter}${info.segment === undefined ? '' : `[${info.segment}]`}: ${detail}`);
    this.name = 'SegkitRangeError';
    this.parameter = parameter;
    this.segment = info.segment;
    this.value = info.value;
    this.bounds = info.bounds;
  }
}

/**
 * A device-only parameter broke its bounds, found on the device under `guaranteeChecks: 'validate'`.
 * The violating run wrote nothing. Runs resolve when submitted, so this rejects the next
 * `backend.synchronize()` or `backend.download()` of the run's backend, or `plan.checked()`.
 *
 * @example
 * ```ts
 * await plan.run();                 // resolves: the check's result stays on the device
 * try { await backend.synchronize(); } catch (e) { if (e instanceof GuaranteeViolationError) console.log(e.parameter, e.segment, e.value); }
 * ```
 */
export class GuaranteeViolationError extends Error {
  /** The parameter's name. */
  readonly parameter: string;
  /** The first offending segment, or `undefined` for a uniform value or bound. */
  readonly segment: number | undefined;
  /** The offending value as read on the device. */
  readonly value: number;
  /** The bounds it broke. */
  readonly bounds: { readonly min: number; readonly max: number };

  constructor(parameter: string, detail: string, segment: number | undefined, value: number, bounds: { min: number; max: number }) {
    super(`${parameter}${segment === undefined ? '' : `[${segment}]`}: ${detail} (found on the device)`);
    this.name = 'GuaranteeViolationError';
    this.parameter = parameter;
    this.segment = segment;
    this.value = value;
    this.bounds = bounds;
  }
}

/**
 * Misuse of the API that no bound describes: a DeviceArray of another backend, used after
 * `destroy()`, of the wrong dtype or length, a missing temporary storage, an inapplicable forced
 * variant.
 */
export class SegkitUsageError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'SegkitUsageError';
  }
}
