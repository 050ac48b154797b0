/**
 * The "did you mean" of the unknown-field messages: the known name closest to a misspelled one, by
 * edit distance (Levenshtein), ignoring case. A type and a runtime function of the same name compute
 * the same answer, so the compile error and the `SegkitUsageError` suggest the same field.
 *
 * The rule, in words: one edit is allowed per three characters of the misspelled name, at most three
 * (`'kk'` suggests nothing, `'numSegment'` suggests `'numSegments'`, `'outputOrder'` suggests
 * `'outputOrdering'`); the fewest edits win, and among equals the first in the list.
 */

/** The edits allowed for a misspelled name: one per three characters, at most three (as a tuple length). */
type EditBudget<Name extends string> =
  AtLeast<Name, [0, 0, 0, 0, 0, 0, 0, 0, 0]> extends true
    ? [0, 0, 0]
    : AtLeast<Name, [0, 0, 0, 0, 0, 0]> extends true
      ? [0, 0]
      : AtLeast<Name, [0, 0, 0]> extends true
        ? [0]
        : [];

/** True when `Text` has at least as many characters as `Count` has elements. */
type AtLeast<Text extends string, Count extends readonly 0[]> = Count extends readonly [0, ...infer Rest extends readonly 0[]]
  ? Text extends `${string}${infer Tail}`
    ? AtLeast<Tail, Rest>
    : false
  : true;

/**
 * True when `A` becomes `B` with at most as many edits (insert, delete, replace one character) as
 * `Budget` has elements. Equal first characters are always matched: that never costs an edit
 * (`d(xA, xB) = d(A, B)`), so only mismatches branch, at most three ways per edit spent.
 */
type WithinEdits<A extends string, B extends string, Budget extends readonly 0[]> = A extends `${infer HeadA}${infer RestA}`
  ? B extends `${infer HeadB}${infer RestB}`
    ? HeadA extends HeadB
      ? WithinEdits<RestA, RestB, Budget>
      : Budget extends readonly [0, ...infer Less extends readonly 0[]]
        ? WithinEdits<RestA, RestB, Less> extends true
          ? true
          : WithinEdits<RestA, B, Less> extends true
            ? true
            : WithinEdits<A, RestB, Less>
        : false
    : AtLeast<A, [...Budget, 0]> extends true
      ? false
      : true
  : AtLeast<B, [...Budget, 0]> extends true
    ? false
    : true;

/** The first of `Known` within `Budget` edits of `Lower` (already lower case), else `never`. */
type FirstWithin<Lower extends string, Known extends readonly string[], Budget extends readonly 0[]> = Known extends readonly [
  infer First extends string,
  ...infer Rest extends readonly string[],
]
  ? WithinEdits<Lower, Lowercase<First>, Budget> extends true
    ? First
    : FirstWithin<Lower, Rest, Budget>
  : never;

/** Tries budgets 0, 1, ... up to `Budget`, so the fewest edits win. */
type ClosestWithin<Lower extends string, Known extends readonly string[], Budget extends readonly 0[], Tried extends readonly 0[] = []> =
  FirstWithin<Lower, Known, Tried> extends infer Found extends string
    ? [Found] extends [never]
      ? Tried['length'] extends Budget['length']
        ? never
        : ClosestWithin<Lower, Known, Budget, [...Tried, 0]>
      : Found
    : never;

/**
 * The member of `Known` closest to `Name` (see the module comment for the rule), or `never` when none
 * is close enough or `Name` is not a literal. `Known` is a tuple, so "first among equals" is defined.
 *
 * @example `ClosestName<'segmentStrid', ['k', 'segmentStride']>` is `'segmentStride'`.
 */
export type ClosestName<Name extends string, Known extends readonly string[]> = [Name] extends [never]
  ? never
  : string extends Name
    ? never
    : ClosestWithin<Lowercase<Name>, Known, EditBudget<Name>>;

/** Edit distance between two strings (insert, delete, replace one character). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const replace = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(replace, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Runtime twin of {@link ClosestName}: the member of `known` closest to `name`, or `undefined`.
 *
 * @example `closestName('segmentStrides', ['k', 'segmentStride'])` is `'segmentStride'`.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const budget = Math.min(3, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = budget + 1;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
