import { describe, expect, it } from 'vitest';
import { emptyBounds, emptyGuaranteeIntersection, notALiteral, notAnInteger, optionNotInSet, outsideRuntimeBounds, outsideStaticBounds, runtimeBoundsOutsideStatic } from '../src/types/messages.js';

// The runtime side of the one message source; types-tests/messages.test-d.ts pins the type side to
// the same text.
describe('message functions', () => {
  it('outsideStaticBounds', () => {
    expect(outsideStaticBounds(16, 1, 8)).toBe('16 is outside the static bounds [1, 8]');
    expect(outsideStaticBounds(-3, -2, 4294967296)).toBe('-3 is outside the static bounds [-2, 4294967296]');
    expect(outsideStaticBounds(0, 1, Infinity)).toBe('0 is outside the static bounds [1, Infinity]');
    expect(outsideStaticBounds(16, -Infinity, 8)).toBe('16 is outside the static bounds [-Infinity, 8]');
    expect(outsideStaticBounds(9007199254740991, 0, 9007199254740990)).toBe(
      '9007199254740991 is outside the static bounds [0, 9007199254740990]',
    );
  });

  it('outsideRuntimeBounds', () => {
    expect(outsideRuntimeBounds(700, 512, 600)).toBe('700 is outside the runtime bounds [512, 600]');
  });

  it('emptyBounds', () => {
    expect(emptyBounds(8, 1)).toBe('bounds [8, 1] are empty: min is greater than max');
  });

  it('runtimeBoundsOutsideStatic', () => {
    expect(runtimeBoundsOutsideStatic(1, 9, 1, 8)).toBe('runtime bounds [1, 9] are not within the static bounds [1, 8]');
  });

  it('notALiteral', () => {
    expect(notALiteral('number')).toBe('p.constant needs a single literal number; got number');
    expect(notALiteral('a union')).toBe('p.constant needs a single literal number; got a union');
  });

  it('optionNotInSet joins the set as the type-level JoinOptions does', () => {
    expect(optionNotInSet('median', ['max', 'min'])).toBe("option 'median' is not one of the options ['max', 'min']");
    expect(optionNotInSet('x', ['a'])).toBe("option 'x' is not one of the options ['a']");
    expect(optionNotInSet('x', [])).toBe("option 'x' is not one of the options []");
  });

  it('emptyGuaranteeIntersection', () => {
    expect(emptyGuaranteeIntersection(512, 4096, 'maxSegmentSize', -Infinity, 100)).toBe(
      'bounds [512, 4096] do not intersect the guarantee maxSegmentSize [-Infinity, 100]',
    );
  });

  it('notAnInteger', () => {
    expect(notAnInteger(1.5)).toBe('1.5 is not an integer');
  });
});
