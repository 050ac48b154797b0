import { describe, expect, it } from 'vitest';
import { SegkitRangeError, SegkitUsageError, cpuBackend, p } from '../src/index.js';
import { type NumericDomain, resolveNumeric, resolveOption } from '../src/params/resolve.js';
import { emptyBounds, emptyGuaranteeIntersection, notAnInteger, optionNotInSet, outsideRuntimeBounds, outsideStaticBounds, runtimeBoundsOutsideStatic } from '../src/types/messages.js';
import { thrown } from './helpers.js';

const backend = cpuBackend();
/** `k`'s domain in top-k: a positive 32-bit count. */
const kDomain: NumericDomain = { domain: { min: 1, max: 2 ** 32 - 1 }, integer: true };
/** A real-valued parameter with no domain limits (e.g. an initial value). */
const anyReal: NumericDomain = { domain: { min: -Infinity, max: Infinity }, integer: false };
const directions = ['max', 'min'] as const;

/** Asserts `error` is a SegkitRangeError with exactly these fields and message. */
function expectRangeError(
  error: unknown,
  expected: {
    message: string;
    parameter: string;
    segment?: number;
    value?: number | string;
    bounds?: { min: number; max: number } | readonly string[];
  },
): void {
  expect(error).toBeInstanceOf(SegkitRangeError);
  expect(error).toBeInstanceOf(RangeError);
  const e = error as SegkitRangeError;
  expect(e.name).toBe('SegkitRangeError');
  expect(e.message).toBe(expected.message);
  expect(e.parameter).toBe(expected.parameter);
  expect(e.segment).toBe(expected.segment);
  expect(e.value).toBe(expected.value);
  expect(e.bounds).toEqual(expected.bounds);
}

describe('resolveNumeric: facts', () => {
  it('constant: exact value, static bounds of one point', () => {
    const facts = resolveNumeric('k', p.constant(8), kDomain, backend);
    expect(facts).toMatchObject({ name: 'k', kind: 'constant', exact: 8, deviceOnly: false, staticBounds: { min: 8, max: 8 } });
  });

  it('uniform host value: exact value and runtime bounds; omitted bounds default to the domain', () => {
    expect(resolveNumeric('k', p.uniform(4, { min: 1, max: 8 }), kDomain, backend)).toMatchObject({
      kind: 'uniform',
      exact: 4,
      staticBounds: { min: 1, max: 8 },
      runtimeBounds: { min: 4, max: 4 },
      deviceOnly: false,
    });
    expect(resolveNumeric('k', p.uniform(4), kDomain, backend).staticBounds).toEqual({ min: 1, max: 2 ** 32 - 1 });
  });

  it('uniform device value: device-only, no exact value', () => {
    const value = backend.upload(new Uint32Array([4]));
    const facts = resolveNumeric('k', p.uniform(value, { min: 1, max: 8 }), kDomain, backend);
    expect(facts).toMatchObject({ kind: 'uniform', deviceOnly: true, exact: undefined, runtimeBounds: undefined });
    expect(facts.deviceValues).toBe(value);
  });

  it('per-segment host values: the observed range is the runtime bound', () => {
    const facts = resolveNumeric('segmentSizes', p.perSegment([600, 512, 1000], { min: 512, max: 4096 }), kDomain, backend);
    expect(facts).toMatchObject({ kind: 'perSegment', runtimeBounds: { min: 512, max: 1000 }, deviceOnly: false });
  });

  it('per-segment with device runtime bounds: device-only', () => {
    const bounds = backend.upload(new Uint32Array([512, 1024]));
    const facts = resolveNumeric('segmentSizes', p.perSegment(backend.alloc('u32', 4), { min: 512, max: 4096 }, bounds), kDomain, backend);
    expect(facts).toMatchObject({ kind: 'perSegment', deviceOnly: true });
    expect(facts.deviceBounds).toBe(bounds);
  });

  it('guarantee: bounds only, narrowed by the environment guarantee', () => {
    const facts = resolveNumeric('totalNumItems', p.guarantee({ max: 1 << 20 }), {
      ...kDomain,
      guarantees: [{ name: 'maxTotalNumItems', bounds: { min: -Infinity, max: 1000 } }],
    }, backend);
    expect(facts).toMatchObject({ kind: 'guarantee', staticBounds: { min: 1, max: 1000 }, exact: undefined });
  });
});

describe('resolveNumeric: runtime rules', () => {
  it('a host value outside its static bounds', () => {
    const error = thrown(() => resolveNumeric('k', p.uniform(16 as number, { min: 1, max: 8 }), kDomain, backend));
    expectRangeError(error, {
      message: `k: ${outsideStaticBounds(16, 1, 8)}`,
      parameter: 'k',
      value: 16,
      bounds: { min: 1, max: 8 },
    });
    expect((error as Error).message).toBe('k: 16 is outside the static bounds [1, 8]');
  });

  it('exact at the extremes: 4294967296 against [0, 4294967295], 2^53 - 1 against 2^53 - 2', () => {
    const wide: NumericDomain = { domain: { min: 0, max: Number.MAX_SAFE_INTEGER }, integer: true };
    expect(resolveNumeric('n', p.uniform(4294967295 as number, { min: 0, max: 4294967295 }), wide, backend).exact).toBe(4294967295);
    expectRangeError(thrown(() => resolveNumeric('n', p.uniform(4294967296 as number, { min: 0, max: 4294967295 }), wide, backend)), {
      message: 'n: 4294967296 is outside the static bounds [0, 4294967295]',
      parameter: 'n',
      value: 4294967296,
      bounds: { min: 0, max: 4294967295 },
    });
    expectRangeError(
      thrown(() => resolveNumeric('n', p.uniform(9007199254740991 as number, { min: 0, max: 9007199254740990 }), wide, backend)),
      {
        message: 'n: 9007199254740991 is outside the static bounds [0, 9007199254740990]',
        parameter: 'n',
        value: 9007199254740991,
        bounds: { min: 0, max: 9007199254740990 },
      },
    );
    expectRangeError(thrown(() => resolveNumeric('x', p.uniform(-3 as number, { min: -2, max: 8 }), anyReal, backend)), {
      message: 'x: -3 is outside the static bounds [-2, 8]',
      parameter: 'x',
      value: -3,
      bounds: { min: -2, max: 8 },
    });
  });

  it('min > max in a parameter’s bounds (uniform, per-segment, guarantee)', () => {
    for (const param of [
      p.uniform(1, { min: 8 as number, max: 1 }),
      p.perSegment([1], { min: 8 as number, max: 1 }),
      p.guarantee({ min: 8 as number, max: 1 }),
    ]) {
      expectRangeError(thrown(() => resolveNumeric('k', param, kDomain, backend)), {
        message: `k: ${emptyBounds(8, 1)}`,
        parameter: 'k',
        bounds: { min: 8, max: 1 },
      });
    }
    expect((thrown(() => resolveNumeric('k', p.guarantee({ min: 8 as number, max: 1 }), kDomain, backend)) as Error).message).toBe(
      'k: bounds [8, 1] are empty: min is greater than max',
    );
  });

  it('min > max in per-segment runtime bounds', () => {
    expectRangeError(
      thrown(() => resolveNumeric('segmentSizes', p.perSegment([600], { min: 512, max: 4096 }, { min: 1024, max: 600 }), kDomain, backend)),
      {
        message: `segmentSizes: ${emptyBounds(1024, 600)}`,
        parameter: 'segmentSizes',
        bounds: { min: 1024, max: 600 },
      },
    );
  });

  it('runtime bounds outside the static bounds', () => {
    const error = thrown(() =>
      resolveNumeric('segmentSizes', p.perSegment([600], { min: 512, max: 4096 }, { min: 512, max: 8192 }), kDomain, backend),
    );
    expectRangeError(error, {
      message: `segmentSizes: ${runtimeBoundsOutsideStatic(512, 8192, 512, 4096)}`,
      parameter: 'segmentSizes',
      bounds: { min: 512, max: 4096 },
    });
    expect((error as Error).message).toBe('segmentSizes: runtime bounds [512, 8192] are not within the static bounds [512, 4096]');
    // Below the static minimum too.
    expect((thrown(() => resolveNumeric('s', p.perSegment([600], { min: 512, max: 4096 }, { min: 1, max: 600 }), kDomain, backend)) as Error).message).toBe(
      's: runtime bounds [1, 600] are not within the static bounds [512, 4096]',
    );
  });

  it('a per-segment value outside its static bounds names the segment', () => {
    const error = thrown(() =>
      resolveNumeric('segmentSizes', p.perSegment([512, 600, 5000, 1], { min: 512, max: 4096 }), kDomain, backend),
    );
    expectRangeError(error, {
      message: `segmentSizes[2]: ${outsideStaticBounds(5000, 512, 4096)}`,
      parameter: 'segmentSizes',
      segment: 2,
      value: 5000,
      bounds: { min: 512, max: 4096 },
    });
    expect((error as Error).message).toBe('segmentSizes[2]: 5000 is outside the static bounds [512, 4096]');
  });

  it('a per-segment value outside its runtime bounds names the segment', () => {
    const error = thrown(() =>
      resolveNumeric('segmentSizes', p.perSegment(new Uint32Array([512, 700]), { min: 512, max: 4096 }, { min: 512, max: 600 }), kDomain, backend),
    );
    expectRangeError(error, {
      message: `segmentSizes[1]: ${outsideRuntimeBounds(700, 512, 600)}`,
      parameter: 'segmentSizes',
      segment: 1,
      value: 700,
      bounds: { min: 512, max: 600 },
    });
    expect((error as Error).message).toBe('segmentSizes[1]: 700 is outside the runtime bounds [512, 600]');
  });

  it('a non-integer where integers are required (uniform and per-segment)', () => {
    expectRangeError(thrown(() => resolveNumeric('k', p.uniform(2.5, { min: 1, max: 8 }), kDomain, backend)), {
      message: `k: ${notAnInteger(2.5)}`,
      parameter: 'k',
      value: 2.5,
      bounds: { min: 1, max: 8 },
    });
    expectRangeError(thrown(() => resolveNumeric('k', p.perSegment([1, 2, 3.25], { min: 1, max: 8 }), kDomain, backend)), {
      message: 'k[2]: 3.25 is not an integer',
      parameter: 'k',
      segment: 2,
      value: 3.25,
      bounds: { min: 1, max: 8 },
    });
    expectRangeError(thrown(() => resolveNumeric('k', p.constant(2.5), kDomain, backend)), {
      message: 'k: 2.5 is not an integer',
      parameter: 'k',
      value: 2.5,
      bounds: { min: 1, max: 2 ** 32 - 1 },
    });
    // Fractions are fine where the domain is real.
    expect(resolveNumeric('x', p.uniform(2.5, { min: 1, max: 8 }), anyReal, backend).exact).toBe(2.5);
  });

  it('NaN and non-numbers are not values', () => {
    expectRangeError(thrown(() => resolveNumeric('k', p.uniform(NaN, { min: 1, max: 8 }), kDomain, backend)), {
      message: 'k: expected a number, got number NaN',
      parameter: 'k',
      bounds: { min: 1, max: 8 },
    });
    expectRangeError(thrown(() => resolveNumeric('k', p.perSegment([1, '2' as unknown as number], { min: 1, max: 8 }), kDomain, backend)), {
      message: 'k[1]: expected a number, got string 2',
      parameter: 'k',
      segment: 1,
      bounds: { min: 1, max: 8 },
    });
  });

  it('a domain violation: a constant outside the algorithm’s domain reads as its compile-time twin', () => {
    const error = thrown(() => resolveNumeric('k', p.constant(0), kDomain, backend));
    expectRangeError(error, {
      message: `k: ${outsideStaticBounds(0, 1, 2 ** 32 - 1)}`,
      parameter: 'k',
      value: 0,
      bounds: { min: 1, max: 4294967295 },
    });
    expect((error as Error).message).toBe('k: 0 is outside the static bounds [1, 4294967295]');
  });

  it('a domain violation: bounds entirely outside the domain', () => {
    expectRangeError(thrown(() => resolveNumeric('k', p.uniform(-1 as number, { min: -5, max: 0 }), kDomain, backend)), {
      message: `k: ${emptyGuaranteeIntersection(-5, 0, 'domain', 1, 2 ** 32 - 1)}`,
      parameter: 'k',
      bounds: { min: -5, max: 0 },
    });
  });

  it('an empty intersection with an environment guarantee', () => {
    const spec: NumericDomain = { ...kDomain, guarantees: [{ name: 'maxSegmentSize', bounds: { min: -Infinity, max: 100 } }] };
    const error = thrown(() => resolveNumeric('segmentSizes', p.perSegment([600], { min: 512, max: 4096 }), spec, backend));
    expectRangeError(error, {
      message: `segmentSizes: ${emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', -Infinity, 100)}`,
      parameter: 'segmentSizes',
      bounds: { min: 512, max: 4096 },
    });
    expect((error as Error).message).toBe('segmentSizes: bounds [512, 4096] do not intersect the guarantee maxSegmentSize [-Infinity, 100]');
    // A constant against a guarantee.
    expect((thrown(() => resolveNumeric('k', p.constant(16), { ...kDomain, guarantees: [{ name: 'maxK', bounds: { min: -Infinity, max: 8 } }] }, backend)) as Error).message).toBe(
      'k: bounds [16, 16] do not intersect the guarantee maxK [-Infinity, 8]',
    );
  });

  it('a value within the parameter’s bounds but outside the guarantee is outside the intersected bounds', () => {
    const spec: NumericDomain = { ...kDomain, guarantees: [{ name: 'maxK', bounds: { min: -Infinity, max: 8 } }] };
    expect(resolveNumeric('k', p.uniform(4, { min: 1, max: 16 }), spec, backend).staticBounds).toEqual({ min: 1, max: 8 });
    expectRangeError(thrown(() => resolveNumeric('k', p.uniform(12, { min: 1, max: 16 }), spec, backend)), {
      message: 'k: 12 is outside the static bounds [1, 8]',
      parameter: 'k',
      value: 12,
      bounds: { min: 1, max: 8 },
    });
  });

  it('misuse that no bound describes is a SegkitUsageError', () => {
    const notAParam = thrown(() => resolveNumeric('k', 8 as never, kDomain, backend));
    expect(notAParam).toBeInstanceOf(SegkitUsageError);
    expect((notAParam as Error).message).toBe('k: expected a parameter made with p.constant, p.uniform, p.perSegment or p.guarantee; got number 8');
    // A parameter of the other family is named by its maker, not read as one of this family's.
    const option = thrown(() => resolveNumeric('k', p.constantOption('max') as never, kDomain, backend));
    expect(option).toBeInstanceOf(SegkitUsageError);
    expect((option as Error).message).toBe('k: expected a parameter made with p.constant, p.uniform, p.perSegment or p.guarantee; got a p.constantOption parameter');
    const numeric = thrown(() => resolveOption('op', p.perSegment([0, 1]) as never, ['max', 'min'], backend));
    expect(numeric).toBeInstanceOf(SegkitUsageError);
    expect((numeric as Error).message).toBe('op: expected a parameter made with p.constantOption, p.uniformOption or p.perSegmentOption; got a p.perSegment parameter');
    const long = thrown(() => resolveNumeric('k', p.uniform(backend.alloc('u32', 2)), kDomain, backend));
    expect(long).toBeInstanceOf(SegkitUsageError);
    expect((long as Error).message).toBe('k: a device-only uniform value must be a 1-element DeviceArray; got length 2');
    const bounds = thrown(() => resolveNumeric('s', p.perSegment([1], {}, backend.alloc('u32', 3)), kDomain, backend));
    expect(bounds).toBeInstanceOf(SegkitUsageError);
    expect((bounds as Error).message).toBe('s: device runtime bounds must be a 2-element DeviceArray [min, max]; got length 3');
    const values = thrown(() => resolveNumeric('s', p.perSegment(null as never), kDomain, backend));
    expect(values).toBeInstanceOf(SegkitUsageError);
    expect((values as Error).message).toBe('s: per-segment values must be an array or a DeviceArray; got null');
  });
});

describe('resolveOption', () => {
  it('facts of each kind', () => {
    expect(resolveOption('selectDirection', p.constantOption('max'), directions, backend)).toMatchObject({
      kind: 'constant',
      exact: 'max',
      occurring: ['max'],
      deviceOnly: false,
    });
    expect(resolveOption('selectDirection', p.uniformOption('min', directions), directions, backend)).toMatchObject({
      kind: 'uniform',
      exact: 'min',
      occurring: ['min'],
    });
    expect(resolveOption('selectDirection', p.perSegmentOption(['min', 'min'], directions), directions, backend)).toMatchObject({
      kind: 'perSegment',
      exact: 'min',
      occurring: ['min'],
    });
    expect(resolveOption('selectDirection', p.perSegmentOption(['min', 'max'], directions), directions, backend)).toMatchObject({
      exact: undefined,
      occurring: ['max', 'min'],
    });
    const device = backend.upload(new Uint32Array([0, 1]));
    expect(resolveOption('selectDirection', p.perSegmentOption(device, directions), directions, backend)).toMatchObject({
      deviceOnly: true,
      occurring: ['max', 'min'],
    });
  });

  it('a uniform option outside its set', () => {
    const error = thrown(() => resolveOption('selectDirection', p.uniformOption('median' as string, ['max', 'min']), directions, backend));
    expectRangeError(error, {
      message: `selectDirection: ${optionNotInSet('median', ['max', 'min'])}`,
      parameter: 'selectDirection',
      value: 'median',
      bounds: ['max', 'min'],
    });
    expect((error as Error).message).toBe("selectDirection: option 'median' is not one of the options ['max', 'min']");
  });

  it('a per-segment option outside its set names the segment', () => {
    const error = thrown(() =>
      resolveOption('selectDirection', p.perSegmentOption(['max', 'min', 'median'] as string[], ['max', 'min'] as string[]), directions, backend),
    );
    expectRangeError(error, {
      message: `selectDirection[2]: ${optionNotInSet('median', ['max', 'min'])}`,
      parameter: 'selectDirection',
      segment: 2,
      value: 'median',
      bounds: ['max', 'min'],
    });
  });

  it('a domain violation: an option set reaching outside what the algorithm supports', () => {
    const error = thrown(() => resolveOption('selectDirection', p.uniformOption('max', ['max', 'median']), directions as readonly string[], backend));
    expectRangeError(error, {
      message: `selectDirection: ${optionNotInSet('median', directions)}`,
      parameter: 'selectDirection',
      value: 'median',
      bounds: ['max', 'min'],
    });
    expect((error as Error).message).toBe("selectDirection: option 'median' is not one of the options ['max', 'min']");
  });

  it('a device option of the wrong length or dtype is a SegkitUsageError', () => {
    const long = thrown(() => resolveOption('dir', p.uniformOption(backend.alloc('u32', 2), directions), directions, backend));
    expect(long).toBeInstanceOf(SegkitUsageError);
    expect((long as Error).message).toBe('dir: a device-only uniform option must be a 1-element DeviceArray; got length 2');
    const f32 = thrown(() => resolveOption('dir', p.perSegmentOption(backend.alloc('f32', 2), directions), directions, backend));
    expect(f32).toBeInstanceOf(SegkitUsageError);
    expect((f32 as Error).message).toBe("dir: dtype 'f32' is not accepted here; expected 'u32' or 'i32'");
  });
});
