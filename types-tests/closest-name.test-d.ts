/**
 * Mirror of `ClosestName` (src/types/closest-name.ts), the "did you mean" of the unknown-field
 * messages. test/fields.test.ts runs the same table through the runtime twin `closestName`, so both
 * sides give the same suggestion (keep the two tables equal).
 */
import { expectType } from 'tsd';
import type { IsEqual } from 'type-fest';
import type { ClosestName } from '../src/types/closest-name.js';

const topKFields = ['keysIn', 'keysOut', 'valuesIn', 'valuesOut', 'segmentSizes', 'segmentStride', 'k', 'selectDirection', 'numSegments', 'totalNumItems'] as const;
const requirementFields = ['outputOrdering', 'tieBreak', 'determinism', 'guaranteeChecks'] as const;
const guaranteeFields = ['maxSegmentSize', 'minSegmentSize', 'maxK', 'maxNumSegments', 'maxTotalNumItems'] as const;

/** The table of test/fields.test.ts (keep the two equal); `undefined`: no suggestion (`never`). */
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

type Cases = typeof closestNameCases;
/** `never` (no suggestion) reads as the table's `undefined`. */
type Suggested<Name extends string, Known extends readonly string[]> = [ClosestName<Name, Known>] extends [never] ? undefined : ClosestName<Name, Known>;
/** `true` when `ClosestName` gives the table's answer on every row, else the first row where it does not. */
type FirstMismatch<Rows> = Rows extends readonly [infer Row, ...infer Rest]
  ? Row extends readonly [infer Name extends string, infer Known extends readonly string[], infer Closest]
    ? IsEqual<Suggested<Name, Known>, Closest> extends true
      ? FirstMismatch<Rest>
      : Row
    : Row
  : true;
expectType<true>(null! as FirstMismatch<Cases>);
expectType<19>(null! as Cases['length']);

// A few by hand, and the inputs that are not one literal.
expectType<'segmentStride'>(null! as ClosestName<'segmentStrid', ['k', 'segmentStride']>);
expectType<'maxK'>(null! as ClosestName<'MAXK', ['maxK']>);
expectType<never>(null! as ClosestName<'kk', ['k']>);
expectType<never>(null! as ClosestName<string, ['k']>);
expectType<never>(null! as ClosestName<never, ['k']>);
expectType<'k'>(null! as ClosestName<'K', readonly ['k']>);
