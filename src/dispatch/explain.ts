import type { Requirements } from '../env/env.js';
import type { Bounds } from '../params/param.js';
import type { NumericFacts, OptionFacts } from '../params/resolve.js';
import type { Launch } from './problem.js';
import { type TempStorageLayout, describeLayout } from './temp-storage.js';
import type { VariantSelection } from './variants.js';

/*
 * `plan.explain()`: one text for every algorithm, in the same sections: what the call is, the facts
 * of each parameter, the requirements, the chosen variant and why, the policy, every variant's
 * verdict, the temporary-storage layout, the launches and how device-only values are checked.
 */

const bounds = (x: Bounds) => `[${x.min}, ${x.max}]`;

/** One line of facts for a numeric parameter. */
export function describeNumeric(f: NumericFacts): string {
  const parts = [`${f.kind}`];
  if (f.exact !== undefined) parts.push(`value ${f.exact}`);
  parts.push(`static bounds ${bounds(f.staticBounds)}`);
  if (f.runtimeBounds !== undefined && f.exact === undefined) parts.push(`host runtime bounds ${bounds(f.runtimeBounds)}`);
  if (f.deviceBounds !== undefined) parts.push('device-only runtime bounds');
  if (f.deviceValues !== undefined) parts.push('values device-only');
  return `${f.name}: ${parts.join(', ')}`;
}

/** One line of facts for a discrete parameter. */
export function describeOption(f: OptionFacts): string {
  const parts = [f.kind, `options [${f.options.join(', ')}]`];
  if (f.exact !== undefined) parts.push(`value ${f.exact}`);
  else if (!f.deviceOnly) parts.push(`occurring [${f.occurring.join(', ')}]`);
  if (f.deviceOnly) parts.push('values device-only');
  return `${f.name}: ${parts.join(', ')}`;
}

/** What an explanation is made of. */
export interface Explanation {
  /** The first line: the algorithm, the backend and the call's shape. */
  readonly summary: string;
  readonly parameters: readonly (NumericFacts | OptionFacts | undefined)[];
  readonly requirements: Requirements;
  /** What the requirements change in this plan. */
  readonly requirementNotes: readonly string[];
  readonly selection: VariantSelection<string, object>;
  /** Every variant of the algorithm, in the order to list them. */
  readonly variants: readonly string[];
  readonly layout: TempStorageLayout;
  readonly launches: readonly Launch[];
  readonly validates: boolean;
}

/** The text of `plan.explain()`. */
export function renderExplanation(e: Explanation): string {
  const { selection, requirements } = e;
  return [
    e.summary,
    'Facts:',
    ...e.parameters.filter((f) => f !== undefined).map((f) => `  ${'options' in f ? describeOption(f) : describeNumeric(f)}`),
    `  requirements: ${Object.entries(requirements).map(([k, v]) => `${k}=${v}`).join(', ')}`,
    ...e.requirementNotes.map((note) => `  ${note}`),
    `Chosen variant: ${selection.variant} (${selection.why})`,
    `Policy: ${Object.entries(selection.policy).map(([k, v]) => `${k}=${v}`).join(', ')}`,
    `Reachable variants: ${selection.reachable.join(', ')}`,
    'Variants:',
    ...e.variants.map((v) => {
      const verdict = selection.verdicts.find((x) => x.variant === v);
      return `  ${v}: ${verdict === undefined ? 'not considered' : `${verdict.reachable ? 'reachable' : 'pruned'} (${verdict.reason})`}`;
    }),
    'Temporary storage:',
    ...describeLayout(e.layout).map((l) => `  ${l}`),
    `Launches (${e.launches.length}):`,
    ...e.launches.map((l, i) => `  ${i + 1}. ${l.name} x${l.grid} workgroups: ${l.purpose}`),
    e.validates
      ? 'Checks: device-only values are validated on the device; one status word is read back.'
      : `Checks: ${requirements.guaranteeChecks === 'trust' ? 'trusted (no device check)' : 'all values host-known, checked on the host'}.`,
  ].join('\n');
}
