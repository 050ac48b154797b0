import { SegkitUsageError } from '../errors.js';

/*
 * What every policy selector answers: a verdict per variant (can it run, could it be picked), the
 * chosen variant and why. A forced variant (`tuning.variant`) beats the heuristic when it can run,
 * and is refused with the reason when it cannot; a policy value the kernels cannot run with is
 * refused by name. Each algorithm's selector computes its verdicts; this module turns them into the
 * selection the same way for all.
 */

/** Why a variant can or cannot run for given facts. */
export interface VariantVerdict<Variant extends string = string> {
  readonly variant: Variant;
  /** Applicable: it computes correct results for every value the bounds allow. */
  readonly applicable: boolean;
  /** Reachable: the selector could pick it for some values the bounds allow (on the host or on the device). */
  readonly reachable: boolean;
  readonly reason: string;
}

/** A policy selector's answer. */
export interface VariantSelection<Variant extends string = string, Policy = unknown> {
  readonly variant: Variant;
  readonly policy: Policy;
  readonly why: string;
  readonly verdicts: readonly VariantVerdict<Variant>[];
  /** Variants the run may take: the chosen one, plus any a device-side branch can take. */
  readonly reachable: readonly Variant[];
}

/**
 * The selection from verdicts: `natural` (the heuristic's pick) unless `forced` names another
 * variant, which must exist and be applicable.
 */
export function selectVariant<Variant extends string, Policy>(
  algorithm: string,
  verdicts: readonly VariantVerdict<Variant>[],
  natural: Variant,
  policy: Policy,
  forced: Variant | undefined,
): VariantSelection<Variant, Policy> {
  const reachable = verdicts.filter((v) => v.reachable).map((v) => v.variant);
  if (forced === undefined) return { variant: natural, policy, why: verdicts.find((v) => v.variant === natural)!.reason, verdicts, reachable };
  const verdict = verdicts.find((v) => v.variant === forced);
  if (verdict === undefined) {
    throw new SegkitUsageError(`tuning.variant: '${String(forced)}' is not a ${algorithm} variant; expected ${verdicts.map((v) => `'${v.variant}'`).join(', ')}`);
  }
  if (!verdict.applicable) throw new SegkitUsageError(`tuning.variant: '${verdict.variant}' cannot run for these parameters: ${verdict.reason}`);
  return { variant: verdict.variant, policy, why: `forced by tuning (${verdict.reason})`, verdicts, reachable };
}

/** Rejects policy values that are not positive integers, naming the first. */
/**
 * Workgroup slots (`capabilities.parallelism`) from which the built-in policies treat a backend as a
 * GPU: the CPU emulator (its slots are its threads) and software adapters such as Mesa's lavapipe
 * report fewer, and there fewer, longer workgroups and fewer launches win (each algorithm's
 * policy.ts has the measurements).
 */
export const gpuClassMinParallelism = 128;

/** Whether a backend has the workgroup slots of a GPU ({@link gpuClassMinParallelism}). */
export function gpuClass(capabilities: { readonly parallelism: number }): boolean {
  return capabilities.parallelism >= gpuClassMinParallelism;
}

export function checkPositiveIntegers(policy: object): void {
  for (const [name, value] of Object.entries(policy)) {
    if (typeof value === 'number' && (!Number.isInteger(value) || value < 1)) {
      throw new SegkitUsageError(`tuning.policy.${name}: ${value} is not a positive integer`);
    }
  }
}

/** Rejects names in a `tuning.policy` override that the algorithm's policy does not have. */
export function checkPolicyNames(overrides: object | undefined, policy: object): void {
  for (const name of Object.keys(overrides ?? {})) {
    if (!(name in policy)) {
      throw new SegkitUsageError(`tuning.policy.${name}: not a policy value of this algorithm; known: ${Object.keys(policy).join(', ')}`);
    }
  }
}
