import { describe, expect, it } from 'vitest';
import { closestName } from '../src/types/closest-name.js';
import { missingField, unknownField } from '../src/types/messages.js';
import { checkFields } from '../src/params/fields.js';
import { expectUsageError, thrown } from './helpers.js';

const topKFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems'] as const;
const requirementFields = ['outputOrdering', 'tieBreak', 'determinism', 'guaranteeChecks'] as const;
const guaranteeFields = ['maxSegmentSize', 'minSegmentSize', 'maxK', 'maxNumSegments', 'maxTotalNumItems'] as const;

/** The table of types-tests/closest-name.test-d.ts (keep the two equal); `undefined`: no suggestion. */
const closestNameCases = [
  // One edit per three characters of the misspelled name, at most three.
  ['segmentStrid', topKFields, 'segmentStride'],
  ['segmentStrides', topKFields, 'segmentStride'],
  ['numSegment', topKFields, 'numSegments'],
  ['keyIn', topKFields, 'keysIn'],
  ['valueOut', topKFields, 'valuesOut'],
  ['outputOrder', requirementFields, 'outputOrdering'],
  ['tiebreaks', requirementFields, 'tieBreak'],
  // Case is ignored: 'K' is 'k', 'maxk' is 'maxK'.
  ['K', topKFields, 'k'],
  ['maxk', guaranteeFields, 'maxK'],
  ['SEGMENTSIZES', topKFields, 'segmentSizes'],
  // The fewest edits win; among equals, the first in the list ('maxSegmentSize' before 'minSegmentSize').
  ['mxSegmentSize', guaranteeFields, 'maxSegmentSize'],
  ['m_nSegmentSize', guaranteeFields, 'minSegmentSize'],
  ['mSegmentSize', guaranteeFields, 'maxSegmentSize'],
  // Too far, or too short to guess from.
  ['kk', topKFields, undefined],
  ['x', topKFields, undefined],
  ['speed', requirementFields, undefined],
  ['outputOrderingMode', requirementFields, undefined],
  ['', topKFields, undefined],
  ['anything', [], undefined],
] as const;

// The runtime side of the unknown-field rule; types-tests/closest-name.test-d.ts and
// types-tests/fields.test-d.ts pin the compile-time side to the same answers.
describe('closestName', () => {
  it.each(closestNameCases)('%s among %j is %s', (name, known, expected) => {
    expect(closestName(name, known)).toBe(expected);
  });
});

describe('unknownField and missingField', () => {
  it('suggest the closest field, or list them all', () => {
    expect(unknownField('segmentStrid', ['k', 'segmentStride'])).toBe("unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
    expect(unknownField('foo', ['k', 'segmentStride'])).toBe("unknown field 'foo'; the fields are 'k', 'segmentStride'");
    expect(missingField('numSegments')).toBe("missing required field 'numSegments'");
  });
});

describe('checkFields', () => {
  const known = ['keysIn', 'segmentStride', 'numSegments'] as const;

  it('accepts known fields, absent optional ones and symbol keys', () => {
    expect(() => checkFields('args', { keysIn: 1, [Symbol('tag')]: 2 }, known, ['keysIn'])).not.toThrow();
  });

  it('names the first unknown field, with the closest known one', () => {
    expectUsageError(thrown(() => checkFields('args', { keysIn: 1, segmentStrid: 13 }, known)), "args: unknown field 'segmentStrid' (did you mean 'segmentStride'?)");
    expectUsageError(thrown(() => checkFields('args', { speed: 1 }, known)), "args: unknown field 'speed'; the fields are 'keysIn', 'segmentStride', 'numSegments'");
  });

  it('names a missing required field, and treats undefined as missing', () => {
    expectUsageError(thrown(() => checkFields('args', { keysIn: 1 }, known, ['keysIn', 'numSegments'])), "args: missing required field 'numSegments'");
    expectUsageError(thrown(() => checkFields('args', { keysIn: 1, numSegments: undefined }, known, ['numSegments'])), "args: missing required field 'numSegments'");
  });

  it('reports an unknown field before a missing one (the typo is usually the missing field)', () => {
    expectUsageError(thrown(() => checkFields('args', { numSegment: 3 }, known, ['numSegments'])), "args: unknown field 'numSegment' (did you mean 'numSegments'?)");
  });
});
