import { describe, expect, it } from 'vitest';
import { cpuBackend, defaultRequirements, env, p } from '../src/index.js';
import { backendForCall } from '../src/env/env.js';
import { thrown, expectUsageError } from './helpers.js';

describe('env: defaults', () => {
  it('fills every requirement with its default', () => {
    expect(defaultRequirements).toEqual({
      outputOrdering: 'sorted',
      tieBreak: 'prefer-smaller-index',
      determinism: 'run-to-run',
      guaranteeChecks: 'validate',
    });
    const e = env();
    expect(e.requirements).toEqual(defaultRequirements);
    expect(e.guarantees).toEqual({});
    expect(e.tuning).toEqual({});
  });

  it('remembers that no backend was given: a call then runs where its DeviceArrays are, else on one shared CPU backend', () => {
    const a = env();
    const b = env({ requirements: { outputOrdering: 'unsorted' } });
    expect(a.backend).toBeUndefined();
    expect(b.backend).toBeUndefined();
    const shared = backendForCall(a, {});
    expect(shared.name).toBe('cpu');
    expect(backendForCall(b, { k: p.constant(2) })).toBe(shared);
    const cpu = cpuBackend({ workers: 0 });
    const keys = cpu.upload(new Float32Array(4));
    expect(backendForCall(a, { keysIn: keys, k: p.constant(2) })).toBe(cpu);
    expect(backendForCall(env({ backend: shared }), { keysIn: keys })).toBe(shared);
    cpu.destroy();
  });

  it('keeps what is given and defaults the rest', () => {
    const cpu = cpuBackend();
    const e = env({
      backend: cpu,
      requirements: { outputOrdering: 'unsorted', guaranteeChecks: 'trust' },
      guarantees: { maxK: 8, maxSegmentSize: 4096 },
      tuning: { variant: 'reduce' },
    });
    expect(e.backend).toBe(cpu);
    expect(e.requirements).toEqual({
      outputOrdering: 'unsorted',
      tieBreak: 'prefer-smaller-index',
      determinism: 'run-to-run',
      guaranteeChecks: 'trust',
    });
    expect(e.guarantees).toEqual({ maxK: 8, maxSegmentSize: 4096 });
    expect(e.tuning).toEqual({ variant: 'reduce' });
  });

  it('is frozen, and does not alias the options', () => {
    const guarantees = { maxK: 8 };
    const e = env({ guarantees });
    expect(Object.isFrozen(e)).toBe(true);
    expect(Object.isFrozen(e.requirements)).toBe(true);
    expect(Object.isFrozen(e.guarantees)).toBe(true);
    guarantees.maxK = 16;
    expect(e.guarantees.maxK).toBe(8);
  });
});

describe('env: validation', () => {
  it('rejects a requirement value outside its options', () => {
    expectUsageError(
      thrown(() => env({ requirements: { outputOrdering: 'random' as 'sorted' } })),
      "env: requirements.outputOrdering is 'random'; expected 'sorted' or 'unsorted'",
    );
    expectUsageError(
      thrown(() => env({ requirements: { guaranteeChecks: 'sometimes' as 'trust' } })),
      "env: requirements.guaranteeChecks is 'sometimes'; expected 'validate' or 'trust'",
    );
    expectUsageError(
      thrown(() => env({ requirements: { tieBreak: undefined as unknown as 'any' } })),
      "env: requirements.tieBreak is 'undefined'; expected 'prefer-smaller-index' or 'any'",
    );
  });

  it('rejects an unknown field at every level, naming it and the closest known one (callers through any)', () => {
    const untyped = env as unknown as (options: unknown) => unknown;
    expectUsageError(thrown(() => untyped({ backnd: cpuBackend() })), "env: unknown field 'backnd' (did you mean 'backend'?)");
    expectUsageError(
      thrown(() => untyped({ requirements: { speed: 'fast' } })),
      "env.requirements: unknown field 'speed'; the fields are 'outputOrdering', 'tieBreak', 'determinism', 'guaranteeChecks'",
    );
    expectUsageError(
      thrown(() => untyped({ requirements: { outputOrder: 'unsorted' } })),
      "env.requirements: unknown field 'outputOrder' (did you mean 'outputOrdering'?)",
    );
    expectUsageError(
      thrown(() => untyped({ guarantees: { maxSegmentSizes: 8 } })),
      "env.guarantees: unknown field 'maxSegmentSizes' (did you mean 'maxSegmentSize'?)",
    );
    expectUsageError(thrown(() => untyped({ guarantees: { maxk: 8 } })), "env.guarantees: unknown field 'maxk' (did you mean 'maxK'?)");
    expectUsageError(thrown(() => untyped({ tuning: { varient: 'reduce' } })), "env.tuning: unknown field 'varient' (did you mean 'variant'?)");
    // A field given as undefined is still a field: the typo is reported, not read as absent.
    expectUsageError(thrown(() => untyped({ tunning: undefined })), "env: unknown field 'tunning' (did you mean 'tuning'?)");
  });

  it('rejects a guarantee that is not a number', () => {
    expectUsageError(thrown(() => env({ guarantees: { maxK: NaN } })), 'env: guarantees.maxK must be a number; got number NaN');
    expectUsageError(
      thrown(() => env({ guarantees: { maxK: '8' as unknown as number } })),
      'env: guarantees.maxK must be a number; got string 8',
    );
    expectUsageError(
      thrown(() => env({ guarantees: { maxK: null as unknown as number } })),
      'env: guarantees.maxK must be a number; got null',
    );
  });
});
